//! The per-node view (`inventory --by node`) and the next step of a placement problem as blocks.
//!
//! The view leads with the fleet's free GPUs and the shortage, then per GPU model the free GPUs
//! and how they are split (`12×4 + 9×2`: twelve nodes with four free, nine with two), the next
//! step when pending pods fit nowhere, and, one table per GPU model, every GPU node with its
//! allocatable, requested and free GPUs. The next step ([`next_step`]) is also the inventory's, under its table of the pods
//! that fit nowhere.

use super::page;
use crate::doc::{Block, Doc, Table, Text};
use crate::report::{NodeRow, NodeView, PlacementStep, Report, Shortage};
use crate::util::text::count as count_of;

/// Nodes a sentence names before it says "and N more".
const NAMED_NODES: usize = 5;

/// The per-node view of `r`; `None` when the report has none.
pub fn nodes_doc(r: &Report) -> Option<Doc> {
    let view = r.nodes.as_ref()?;
    let f = &r.fleet;
    let mut d = Doc::new();
    d.heading(2, page::title("GPU nodes", r.provenance.as_ref()));
    if let Some(b) = page::banner(r) {
        d.push(b);
    }
    let placeable = view
        .nodes
        .iter()
        .filter(|n| n.placeable && n.allocatable > 0)
        .count();
    let headline = Text::new()
        .strong(f.shortage.free_placeable.to_string())
        .plain(" GPUs free on ")
        .plain(count_of(placeable as u64, "placeable GPU node"))
        .plain(format!(
            " of {}, at most {} on one; {} requested. {}.",
            f.gpu_nodes,
            f.shortage.largest_free_block,
            f.gpus.requested,
            capitalised(&f.shortage.summary)
        ));
    super::provenance::lead(&mut d, r.provenance.as_ref(), Block::Paragraph(headline));
    d.heading(3, "Free GPUs per GPU model");
    d.push(Block::Table(models(view)));
    d.push(Block::Small(Text::new().emph(
        "Free: allocatable minus requested on placeable nodes. Free blocks: nodes × free GPUs each, most free first (the first is the largest block).",
    )));
    if f.shortage.next_step.is_some() {
        d.heading(3, "Pending pods that fit on no placeable node");
        d.push(Block::Table(stuck(&f.shortage)));
        next_step(&mut d, &f.shortage, false);
    }
    // One table per GPU model: a node's model is its table's title.
    for m in &view.models {
        let rows: Vec<&NodeRow> = view.nodes.iter().filter(|n| n.model == m.model).collect();
        d.heading(
            3,
            format!("{} ({})", m.model, count_of(rows.len() as u64, "node")),
        );
        d.push(Block::Table(nodes(&rows)));
    }
    Some(d)
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn models(view: &NodeView) -> Table {
    Table::new(&[
        "GPU model",
        ">nodes",
        ">allocatable",
        ">requested",
        ">free",
        ">empty nodes",
        "free blocks",
    ])
    .rows(&view.models, |m| {
        vec![
            m.model.as_str().into(),
            m.nodes.to_string().into(),
            m.allocatable.to_string().into(),
            m.requested.to_string().into(),
            m.free.to_string().into(),
            m.empty_nodes.to_string().into(),
            blocks(m).into(),
        ]
    })
}

/// `12×4 + 9×2` (nodes × free GPUs each), `none` when nothing is free.
fn blocks(m: &crate::report::NodeModelRow) -> String {
    if m.free_blocks.is_empty() {
        return "none".into();
    }
    m.free_blocks
        .iter()
        .map(|b| format!("{}×{}", b.nodes, b.free))
        .collect::<Vec<_>>()
        .join(" + ")
}

fn nodes(rows: &[&NodeRow]) -> Table {
    Table::new(&[
        "node",
        ">allocatable",
        ">requested",
        ">free",
        ">GPU pods",
        "state",
    ])
    .rows(rows, |n| {
        vec![
            n.node.as_str().into(),
            n.allocatable.to_string().into(),
            n.requested.to_string().into(),
            n.free.to_string().into(),
            n.pods.to_string().into(),
            match (n.placeable && n.allocatable > 0, n.reasons.is_empty()) {
                (true, true) => "placeable".to_string(),
                (true, false) => format!("placeable; {}", n.reasons.join(", ")),
                (false, _) => n.reasons.join(", "),
            }
            .into(),
        ]
    })
}

fn stuck(s: &Shortage) -> Table {
    Table::new(&["pod", ">GPUs", "workload"]).rows(&s.unplaceable, |p| {
        vec![
            format!("{}/{}", p.namespace, p.name).into(),
            p.gpus.to_string().into(),
            p.workload.as_str().into(),
        ]
    })
}

/// `a, b, c, d, e and 3 more`
fn named(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(NAMED_NODES).map(String::as_str).collect();
    match names.len().saturating_sub(NAMED_NODES) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// What would let the pods that fit nowhere run: the nodes whose free GPUs they cannot use, the
/// nodes to drain to make room, and the empty nodes they need. Nothing when every pod fits.
/// `pointer` adds where every node's free GPUs are listed (the inventory's; the node view is it).
pub fn next_step(d: &mut Doc, s: &Shortage, pointer: bool) {
    let Some(step) = &s.next_step else { return };
    let mut items = Vec::new();
    if !step.fragmented.is_empty() {
        let names: Vec<String> = step
            .fragmented
            .iter()
            .map(|n| format!("{} ({} free)", n.node, n.free))
            .collect();
        let t = Text::new().strong("Fragmented").plain(format!(
            ": {} hold {} free GPUs in blocks too small for any of them: {}",
            count_of(step.fragmented.len() as u64, "placeable node"),
            step.fragmented_free,
            named(&names),
        ));
        items.push(if pointer {
            t.plain(" (")
                .code("gpuledger inventory --by node")
                .plain(" lists every node).")
        } else {
            t.plain(".")
        });
    }
    if let Some(x) = &step.drain {
        items.push(Text::new().strong("Make room").plain(format!(
            ": drain {} ({}); {} with {} GPUs move to other nodes' free GPUs, and {}.",
            count_of(x.nodes.len() as u64, "node"),
            named(&x.nodes),
            count_of(x.pods.len() as u64, "pod"),
            x.gpus,
            if step.too_large.is_empty() {
                "every pending pod fits"
            } else {
                "every pending pod that any node can hold fits"
            }
        )));
    }
    if let Some(t) = buy(step, s.unplaceable.len()) {
        items.push(t);
    }
    if !step.too_large.is_empty() {
        items.push(Text::new().strong("Too large").plain(format!(
            ": {} ask for more GPUs than any node has: {}.",
            count_of(step.too_large.len() as u64, "pod"),
            named(&step.too_large)
        )));
    }
    if items.is_empty() {
        return;
    }
    d.paragraph(Text::new().strong("Next step").plain(format!(
        " for the {} that fit on no node:",
        count_of(s.unplaceable.len() as u64, "pending pod")
    )));
    d.push(Block::List(items));
}

/// "5 empty nodes of 8 GPUs (NVIDIA-H100-80GB-HBM3) for 5 pods": what the stuck pods need, per
/// node size.
fn buy(step: &PlacementStep, stuck: usize) -> Option<Text> {
    if step.nodes_needed.is_empty() {
        return None;
    }
    let sizes: Vec<String> = step
        .nodes_needed
        .iter()
        .map(|n| {
            format!(
                "{} of {} GPUs ({}) for {}",
                count_of(n.nodes, "empty node"),
                n.gpus_per_node,
                n.model,
                count_of(n.pods, "pod")
            )
        })
        .collect();
    let all = step.nodes_needed.iter().map(|n| n.pods).sum::<u64>() == stuck as u64;
    Some(Text::new().strong("Or add capacity").plain(format!(
        ": {}{}.",
        sizes.join(", "),
        if all { "" } else { " (the others fit no node)" }
    )))
}
