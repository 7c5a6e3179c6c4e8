//! The routing blast radius of a check as blocks: one table of the public routes the change
//! touches, exposure flips first, each with what it reaches before and after, its GPUs and who to
//! call; and the phrase the check's opening sentence uses for them.

use crate::doc::{Block, Doc, Table, Text};
use crate::report::{RouteChange, RouteChangeKind};
use crate::util::text::count;

/// Backends named in a cell before the rest are counted.
const NAMED: usize = 3;

/// `chat.example.com/v1`, `api.example.com PathPrefix /v1`, or a Service's `namespace/name`.
fn at(host: &str, path: &str) -> String {
    if path.is_empty() {
        host.to_string()
    } else if path.starts_with('/') {
        format!("{host}{path}")
    } else {
        format!("{host} {path}")
    }
}

fn route(r: &RouteChange) -> String {
    format!("{} {}", r.kind, at(&r.host, &r.path))
}

/// Whether a flip exposes the route (internal → internet-facing).
fn exposes(r: &RouteChange) -> bool {
    r.after
        .as_ref()
        .is_some_and(|a| a.exposure == "internet-facing")
}

/// What the opening sentence says of routes: `changes no public route`, or how many change, how
/// many flip, and the GPUs behind the largest.
pub fn phrase(routes: &[RouteChange], unknown: Option<&str>) -> String {
    let unknown = unknown.map_or(String::new(), |_| {
        " (the routes of apps that did not render are unknown)".to_string()
    });
    match routes {
        [] => format!("changes no public route{unknown}"),
        [r] => format!(
            "{} {} in front of {}{unknown}",
            match r.change {
                RouteChangeKind::Exposure if exposes(r) => "exposes to the internet",
                RouteChangeKind::Exposure => "turns internal",
                RouteChangeKind::Added => "adds the public route",
                RouteChangeKind::Removed => "removes the public route",
                RouteChangeKind::Moved => "moves the public route",
                RouteChangeKind::Rerouted => "re-routes",
                RouteChangeKind::Altered => "changes the load balancer of",
            },
            r.before.as_ref().map_or_else(
                || route(r),
                |b| {
                    if r.change == RouteChangeKind::Moved {
                        format!(
                            "{} {} to {}",
                            r.kind,
                            at(&b.host, &b.path),
                            at(&r.host, &r.path)
                        )
                    } else {
                        route(r)
                    }
                }
            ),
            count(r.gpus, "GPU")
        ),
        many => {
            let flips = many
                .iter()
                .filter(|r| r.change == RouteChangeKind::Exposure)
                .collect::<Vec<_>>();
            let out = flips.iter().filter(|r| exposes(r)).count();
            let mut what = Vec::new();
            if out > 0 {
                what.push(format!("{out} exposed to the internet"));
            }
            if flips.len() > out {
                what.push(format!("{} turned internal", flips.len() - out));
            }
            let largest = many.iter().map(|r| r.gpus).max().unwrap_or(0);
            format!(
                "changes {} public routes{} — the largest in front of {}{unknown}",
                many.len(),
                if what.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", what.join(", "))
                },
                count(largest, "GPU")
            )
        }
    }
}

/// The table of routes, when the change touches any; and why routes are unknown, when they are.
pub fn section(d: &mut Doc, routes: &[RouteChange], unknown: Option<&str>) {
    if routes.is_empty() && unknown.is_none() {
        return;
    }
    d.heading(3, "Public routes");
    if let Some(why) = unknown {
        d.paragraph(
            Text::new()
                .strong("Routes unknown")
                .plain(format!(": {why}.")),
        );
    }
    if routes.is_empty() {
        return;
    }
    let today = routes.iter().any(|r| r.today.is_some());
    let mut headers = vec![
        "change",
        "route",
        "what changes",
        "behind it",
        ">GPUs",
        "tenants",
    ];
    if today {
        headers.push("today");
    }
    let table = Table::new(&headers).rows(routes.iter(), |r| {
        let change = if r.change == RouteChangeKind::Exposure {
            Text::new().strong(r.change.as_str())
        } else {
            Text::from(r.change.as_str())
        };
        let mut behind = r
            .backends
            .iter()
            .take(NAMED)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if r.backends.len() > NAMED {
            behind.push_str(&format!(" and {} more", r.backends.len() - NAMED));
        }
        if r.backends.is_empty() {
            behind = "no workload found".into();
        }
        let mut tenants = r.tenants.join(", ");
        if !r.contacts.is_empty() {
            tenants.push_str(&format!(" ({})", r.contacts.join(", ")));
        }
        let mut row = vec![
            change,
            route(r).into(),
            r.summary.as_str().into(),
            behind.into(),
            r.gpus.to_string().into(),
            tenants.into(),
        ];
        if today {
            row.push(
                match &r.today {
                    Some(t) if t.public => format!(
                        "serves {} ({})",
                        if t.workloads.is_empty() {
                            "no workload".to_string()
                        } else {
                            t.workloads.join(", ")
                        },
                        count(t.gpus, "GPU")
                    ),
                    Some(_) => "not public today".into(),
                    None => String::new(),
                }
                .into(),
            );
        }
        row
    });
    d.push(Block::Table(table));
}
