//! The Dynamic Resource Allocation lines of the inventory: which part of each GPU figure came
//! through DRA (ResourceSlices, claims) and which through the device plugin, the claims each
//! workload holds, DRA devices of other classes, and — leading, as a warning — what could not be
//! counted. Nothing is added for a fleet without DRA objects, so its output is unchanged.

use crate::doc::{Alert, Block, Doc, Table, Text};
use crate::report::{Report, WorkloadRow};

/// The note beside a tier figure, with the part that came through DRA when the fleet has any
/// and the figure is known.
pub fn tier_note(r: &Report, tier: &str, note: String) -> String {
    let Some(d) = &r.fleet.dra else { return note };
    if r.fleet.unknown.contains_key(&format!("gpus.{tier}")) {
        return note;
    }
    let (from, whence) = match tier {
        "capacity" => (d.capacity_from_slices, "read from DRA ResourceSlices"),
        "allocatable" => (
            d.allocatable_from_slices,
            "published whole in DRA ResourceSlices",
        ),
        "placeable" => (
            d.placeable_from_slices,
            "on nodes read from DRA ResourceSlices",
        ),
        "requested" | "pending" => {
            let n = if tier == "requested" {
                d.requested_from_claims
            } else {
                d.pending_from_claims
            };
            (n, "through DRA claims, the rest through the device plugin")
        }
        _ => return note,
    };
    format!("{note}; {from} {whence}")
}

/// A warning naming the GPUs through DRA that could not be counted: the figures count the rest,
/// so a reader must not take them for the whole.
pub fn uncounted(r: &Report) -> Option<Block> {
    let d = r.fleet.dra.as_ref()?;
    if d.uncounted.is_empty() {
        return None;
    }
    let mut lines = vec![
        Text::new()
            .strong("Part of what DRA hands out could not be counted")
            .plain(" — the figures below count the rest:"),
    ];
    lines.extend(d.uncounted.iter().map(|u| Text::new().plain(u.as_str())));
    Some(Block::Alert {
        kind: Alert::Warning,
        lines,
    })
}

/// What a workload's shape cell adds about DRA: how many of its GPUs came through claims, the
/// most alternatives may take, its other devices, and whether part of it is uncounted.
pub fn shape_note(w: &WorkloadRow) -> Option<String> {
    let d = w.dra.as_ref()?;
    let mut parts = Vec::new();
    let held = d
        .gpus_from_claims
        .saturating_add(d.gpus_pending_from_claims);
    let through = if held > 0 {
        held
    } else {
        d.gpus_declared_from_claims
    };
    if through > 0 {
        parts.push(format!("{through} through DRA claims"));
    }
    if let Some(max) = d
        .gpus_declared_max
        .filter(|m| w.gpus_declared.is_some_and(|g| *m > g))
    {
        parts.push(format!("up to {max} with firstAvailable"));
    }
    for (class, n) in &d.other_devices {
        parts.push(format!("{n} {class}"));
    }
    if !d.uncounted.is_empty() {
        parts.push("part not counted: see DRA".into());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The DRA sections of the details: claims by workload, devices of other classes, and the nodes
/// whose GPUs were read from ResourceSlices.
pub fn sections(d: &mut Doc, r: &Report, fold: Option<usize>, id: impl Fn(&WorkloadRow) -> String) {
    let Some(f) = &r.fleet.dra else { return };
    let mut claims = Table::new(&[
        "workload",
        "claim",
        "how",
        ">claims",
        ">allocated",
        ">GPUs",
        "other devices",
    ]);
    for w in &r.workloads {
        let Some(x) = &w.dra else { continue };
        for c in &x.claims {
            let mut other: Vec<String> = c
                .mig
                .iter()
                .map(|(p, n)| format!("{n} MIG {p}"))
                .chain(c.other_devices.iter().map(|(k, n)| format!("{n} {k}")))
                .collect();
            if !c.uncounted.is_empty() {
                other.push("part not counted".into());
            }
            claims.row(vec![
                id(w).into(),
                c.name.as_str().into(),
                c.how.as_str().into(),
                c.claims.to_string().into(),
                c.allocated.to_string().into(),
                c.gpus.to_string().into(),
                other.join(", ").into(),
            ]);
        }
    }
    d.section(
        "GPUs through Dynamic Resource Allocation (by claim; a shared claim counted once)",
        claims,
        fold,
    );
    d.section(
        "DRA devices of other classes (not GPUs)",
        Table::new(&["class", ">requested", ">pending"]).rows(&f.other_devices, |o| {
            vec![
                o.class.as_str().into(),
                o.requested.to_string().into(),
                o.pending.to_string().into(),
            ]
        }),
        fold,
    );
    if !f.nodes_from_slices.is_empty() {
        d.paragraph(
            Text::new().plain(format!(
                "GPUs read from DRA ResourceSlices (no device-plugin capacity; distinct physical GPUs): {}.",
                f.nodes_from_slices.join(", ")
            )),
        );
    }
}

/// One gauge family of the DRA metrics: name, help and samples (labels, value). The Prometheus
/// writer turns them into its families, so this file does not depend on it.
pub struct Gauge {
    pub name: &'static str,
    pub help: &'static str,
    pub samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Gauge {
    fn new(name: &'static str, help: &'static str) -> Gauge {
        Gauge {
            name,
            help,
            samples: Vec::new(),
        }
    }

    fn sample(&mut self, labels: &[(&'static str, &str)], n: u64) -> &mut Gauge {
        // GPU counts are far below 2^53, where f64 stops being exact.
        #[allow(clippy::cast_precision_loss)]
        let v = n as f64;
        let labels = labels.iter().map(|(k, v)| (*k, (*v).to_string())).collect();
        self.samples.push((labels, v));
        self
    }
}

/// The DRA families: each tier by source, claims, other devices, and how many reasons leave part
/// of the DRA figures uncounted. None when the fleet has no DRA objects; a tier whose input was
/// not read has no sample.
pub fn metrics(r: &Report, no_pods: bool, no_nodes: bool) -> Vec<Gauge> {
    let Some(d) = &r.fleet.dra else {
        return Vec::new();
    };
    let g = &r.fleet.gpus;
    let mut by_source = Gauge::new(
        "gpuledger_fleet_gpus_by_source",
        "Whole GPUs by tier and source: dra (ResourceSlices, claims) or device-plugin; a tier's sources add up to gpuledger_fleet_gpus.",
    );
    for (tier, total, dra, unknown) in [
        ("capacity", g.capacity, d.capacity_from_slices, no_nodes),
        (
            "allocatable",
            g.allocatable,
            d.allocatable_from_slices,
            no_nodes,
        ),
        ("placeable", g.placeable, d.placeable_from_slices, no_nodes),
        ("requested", g.requested, d.requested_from_claims, no_pods),
        ("pending", g.pending, d.pending_from_claims, no_pods),
    ] {
        if unknown {
            continue;
        }
        by_source
            .sample(&[("tier", tier), ("source", "dra")], dra)
            .sample(
                &[("tier", tier), ("source", "device-plugin")],
                total.saturating_sub(dra),
            );
    }
    let mut claims = Gauge::new(
        "gpuledger_fleet_dra_claims",
        "DRA claims that hold or ask for devices (a template's one per pod, a shared claim once), by state.",
    );
    if !no_pods {
        claims
            .sample(&[("state", "allocated")], d.claims_allocated)
            .sample(
                &[("state", "not-allocated")],
                d.claims.saturating_sub(d.claims_allocated),
            );
    }
    let mut other = Gauge::new(
        "gpuledger_dra_other_devices",
        "DRA devices of classes that are not GPUs, by class and tier; never mixed into whole GPUs.",
    );
    for o in d.other_devices.iter().filter(|_| !no_pods) {
        other
            .sample(&[("class", &o.class), ("tier", "requested")], o.requested)
            .sample(&[("class", &o.class), ("tier", "pending")], o.pending);
    }
    let mut uncounted = Gauge::new(
        "gpuledger_fleet_dra_uncounted",
        "Reasons part of the GPUs through DRA could not be counted (allocationMode All before allocation, shared capacity, a claim or template not read); 0 when all were counted.",
    );
    uncounted.sample(&[], u64::try_from(d.uncounted.len()).unwrap_or(u64::MAX));
    vec![by_source, claims, other, uncounted]
}
