//! `check`'s serving headroom at the head's shape: the load tests the head names, read from git's
//! objects at the head ref (the working tree when the head is the working tree) — never run, never
//! checked out — and production's rate from Prometheus, split by the live state's pods exactly as
//! `gpuledger headroom` does; then the `headroom` gate.

use std::path::Path;

use super::Context;
use super::fleet::{self, Signals};
use crate::analysis::headroom::{self, ProductionNow};
use crate::analysis::live::LiveFleet;
use crate::config::Config;
use crate::live::loadtest::{LoadTests, read_load_tests, read_load_tests_at};
use crate::report::{Desired, Gate, GateName, HeadroomChange, HeadroomVerdict};
use crate::util::sum::Overflow;

/// What headroom needs of the change and its surroundings.
pub struct Inputs<'a> {
    pub base: &'a Desired,
    pub head: &'a Desired,
    pub repo: &'a Path,
    /// The head ref; `None`: the head is the working tree.
    pub head_ref: Option<&'a str>,
    /// The live fleet, when a live state was given: whose pods production's series are split by.
    pub live: Option<&'a LiveFleet<'a>>,
    pub signals: &'a Signals,
    pub cfg: &'a Config,
}

/// Each reshaped serving workload's headroom at the head's shape (empty when the change reshapes
/// none).
pub fn rows(i: &Inputs<'_>, cx: &Context<'_>) -> Result<Vec<HeadroomChange>, Overflow> {
    let reshaped = headroom::reshaped(i.base, i.head);
    if reshaped.is_empty() {
        return Ok(Vec::new());
    }
    let paths = reshaped.iter().filter_map(|r| r.load_test());
    let load_tests: LoadTests = match i.head_ref {
        Some(rev) => read_load_tests_at(i.repo, rev, paths),
        None => read_load_tests(Some(i.repo), paths).0,
    };
    let live_section;
    let production: ProductionNow<'_> = match i.live {
        None => Err(
            "needs the live state (--snapshot, --kubeconfig or --context) to find the workload's pods in production's series"
                .into(),
        ),
        Some(fleet) => {
            let p = fleet::production(i.signals.metrics.as_ref(), cx);
            live_section =
                headroom::headroom(fleet, &LoadTests::new(), &p, &i.cfg.headroom)?;
            match &live_section.production_unknown {
                Some(why) => Err(why.clone()),
                None => Ok(&live_section),
            }
        }
    };
    Ok(headroom::at_head(
        &reshaped,
        &load_tests,
        &production,
        &i.cfg.headroom,
    ))
}

/// The `headroom` gate: fails when a reshaped serving workload's production p95 is above the
/// head's tested capacity or within `headroom.near_capacity` of it. An unknown headroom does not
/// fail it; the gate says which are unknown and why.
pub fn gate(rows: &[HeadroomChange]) -> Gate {
    let gate = |failed: bool, unknown: bool, why: String| Gate {
        name: GateName::Headroom.to_string(),
        failed,
        unknown,
        why,
    };
    if rows.is_empty() {
        return gate(
            false,
            false,
            "the change reshapes no serving workload".into(),
        );
    }
    let of = |v: &[HeadroomVerdict]| -> Vec<&str> {
        rows.iter()
            .filter(|r| v.contains(&r.verdict))
            .map(|r| r.summary.as_str())
            .collect()
    };
    let tight = of(&[HeadroomVerdict::Over, HeadroomVerdict::NearCapacity]);
    let fits = of(&[HeadroomVerdict::Fits]);
    let unknown = of(&[HeadroomVerdict::Unknown]);
    let mut parts = Vec::new();
    if !tight.is_empty() {
        parts.push(tight.join("; "));
    }
    if !fits.is_empty() {
        parts.push(format!(
            "{} fit{}",
            fits.len(),
            if fits.len() == 1 { "s" } else { "" }
        ));
    }
    if !unknown.is_empty() {
        parts.push(format!("unknown, not failed: {}", unknown.join("; ")));
    }
    gate(
        !tight.is_empty(),
        tight.is_empty() && fits.is_empty(),
        parts.join("; "),
    )
}
