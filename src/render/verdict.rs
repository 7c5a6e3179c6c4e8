//! The one sentence a check opens with, so that a reviewer can decide from it: what the change
//! does to the GPUs, for whom, whether it fits the fleet, the serving headroom at the head's shape
//! of the serving workloads it reshapes, and which public routes it moves.
//! Everything in it is in the report; the JSON's `check.summary` stays the terse form.

use crate::report::{Check, DeltaRow, ModelFit};

/// Tenants named in the sentence before the rest are counted.
const NAMED: usize = 3;

fn for_whom(tenants: &[DeltaRow]) -> String {
    let moved: Vec<&DeltaRow> = tenants.iter().filter(|t| t.delta != 0).collect();
    if moved.is_empty() {
        return String::new();
    }
    let mut named: Vec<String> = moved
        .iter()
        .take(NAMED)
        .map(|t| format!("{} {:+}", t.name, t.delta))
        .collect();
    if moved.len() > NAMED {
        named.push(format!("{} more tenants", moved.len() - NAMED));
    }
    format!(" for {}", named.join(", "))
}

/// The change's GPUs in words. A side where an app did not render shows its GPUs as a floor
/// (`≥0`): the sentence never states a total the report does not know.
fn what(c: &Check) -> String {
    let side = |n: u64, floor: bool| {
        if floor {
            format!("≥{n}")
        } else {
            n.to_string()
        }
    };
    let (base, head) = (
        side(c.gpus_base, c.gpus_base_floor),
        side(c.gpus_head, c.gpus_head_floor),
    );
    match c.gpu_delta {
        None => format!(
            "GPU delta unknown: {} ({} → {} of what rendered)",
            c.delta_unknown
                .as_deref()
                .unwrap_or("an app did not render"),
            c.gpus_base,
            c.gpus_head
        ),
        Some(0) if c.gpus_base_floor || c.gpus_head_floor => format!(
            "Changes no declared GPU of what rendered ({base} → {head}: an app it leaves alone did not render)"
        ),
        Some(0) => format!("Keeps the declared GPUs at {head} ({base} → {head})"),
        Some(d) if d > 0 => format!("Adds {d} GPUs ({base} → {head})"),
        Some(d) => format!("Frees {} GPUs ({base} → {head})", d.unsigned_abs()),
    }
}

fn fit(c: &Check) -> String {
    let gated = c.gates.iter().any(|g| g.name == "capacity");
    match (&c.capacity, &c.capacity_unknown) {
        (Some(cap), _) if cap.fits => format!(
            "fits ({} of {} placeable GPUs after it, {} spare)",
            cap.projected,
            cap.placeable,
            cap.placeable - cap.projected
        ),
        (Some(cap), _) if cap.worse() && cap.projected <= cap.placeable => {
            // The fleet has room; a GPU model the change is pinned to has not.
            let over: Vec<String> = cap.models_over().map(ModelFit::phrase).collect();
            format!(
                "{} ({}{})",
                if gated {
                    "does NOT fit"
                } else {
                    "does not fit"
                },
                over.join("; "),
                if gated {
                    ""
                } else {
                    "; the capacity gate is not enabled"
                }
            )
        }
        (Some(cap), _) if cap.worse() => format!(
            "{} ({} of {} placeable GPUs needed, {} more than before{})",
            if gated {
                "does NOT fit"
            } else {
                "does not fit"
            },
            cap.projected,
            cap.placeable,
            cap.projected - cap.base_projected,
            if gated {
                ""
            } else {
                "; the capacity gate is not enabled"
            }
        ),
        (Some(cap), _) => format!(
            "does not make the fit worse (the fleet needs {} of {} placeable GPUs)",
            cap.projected, cap.placeable
        ),
        (None, _) if !c.live => "was not checked against the fleet (no live state)".into(),
        (None, why) => format!("fit unknown ({})", why.as_deref().unwrap_or("not computed")),
    }
}

/// `Adds 16 GPUs (150 → 166) for llm-prod +16, research +16, parked -16; does not fit (…);
/// changes no public route.`
pub fn sentence(c: &Check) -> String {
    let routes = super::routes::phrase(&c.routes, c.unknown.get("routes").map(String::as_str));
    let drift = match c.drift_introduced.as_deref() {
        Some([]) | None => String::new(),
        Some(ids) => format!(
            "; introduces drift in {}",
            crate::util::text::count(crate::util::sum::count(ids.len()), "workload")
        ),
    };
    let headroom =
        super::headroom::change_phrase(&c.headroom).map_or_else(String::new, |h| format!("; {h}"));
    // A queue decides before the nodes do: where work joins a queue, its verdict comes first and
    // the fleet's fit is said to be the nodes'.
    let queues = super::queues::change_phrase(&c.admission, &c.quota);
    let fit = match &queues {
        Some(_) => format!("nodes: {}", fit(c)),
        None => fit(c),
    };
    let queues = queues.map_or_else(String::new, |q| format!("; {q}"));
    format!(
        "{}{}{queues}; {fit}{drift}{headroom}; {}.",
        what(c),
        for_whom(&c.tenants),
        routes
    )
}
