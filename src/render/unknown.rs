//! How a report's unknown figures read: a cell says `unknown` where the report's `unknown` maps
//! (or its incomplete inputs) name the figure, and the reasons read as one line each, naming the
//! figures each leaves unknown ([`crate::analysis::unread`] fills the maps).

use crate::doc::Text;
use crate::report::{Report, Unknown};

/// One line per reason, naming the figures (but `gpus.used`, said beside its tier) it leaves
/// unknown.
pub fn unknown_lines(unknown: &Unknown) -> Vec<Text> {
    let mut by_reason: Vec<(&String, Vec<&str>)> = Vec::new();
    for (field, why) in unknown.iter().filter(|(k, _)| k.as_str() != "gpus.used") {
        match by_reason.iter_mut().find(|(w, _)| *w == why) {
            Some((_, fields)) => fields.push(field),
            None => by_reason.push((why, vec![field])),
        }
    }
    by_reason
        .into_iter()
        .map(|(why, fields)| {
            let mut t = Text::new();
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    t = t.plain(", ");
                }
                t = t.code(*field);
            }
            let verb = if fields.len() == 1 { "is" } else { "are" };
            t.plain(format!(" {verb} unknown: {why}"))
        })
        .collect()
}

/// Whether the figures that need `resource` (`pods`, `nodes`) are unknown: the input did not hold
/// it, or it could not be listed ([`crate::analysis::unread`]).
pub fn missing(r: &Report, resource: &str) -> bool {
    let figure = if resource == "pods" {
        "gpus.requested"
    } else {
        "gpus.placeable"
    };
    r.fleet.unknown.contains_key(figure) || r.incomplete.iter().any(|m| m.resource == resource)
}

/// A fleet figure, or `unknown` when the fleet's unknown map names it.
pub fn fleet_figure(r: &Report, path: &str, n: u64) -> String {
    if r.fleet.unknown.contains_key(path) {
        "unknown".into()
    } else {
        n.to_string()
    }
}

/// `n` routes, or `unknown` when no route kind was read.
pub fn routes(r: &Report, path: &str, n: u64) -> String {
    if r.fleet.unknown.contains_key("public_routes") || r.unknown.contains_key(path) {
        "unknown".into()
    } else {
        n.to_string()
    }
}
