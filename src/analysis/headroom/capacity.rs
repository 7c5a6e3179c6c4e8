//! The capacity a load test stands for, held against one configuration of a workload — the live
//! one (`gpuledger headroom`) or the head's of a change (`check`) — and the verdict of that
//! capacity against production's rate.
//!
//! A load test stands only for the configuration that was tested: when the file records a model,
//! a GPU type, GPUs per replica, a replica count or a serving setting (`max_num_seqs`) that
//! differs from the configuration it is held against, the load test is *stale* and the capacity
//! unknown with that reason, never scaled to fit. The one exception is a `headroom.scale` rule
//! with `scale: per-replica`: the capacity is then divided by the tested replicas and multiplied
//! by the configuration's, and the row says so. What the file does not record, or the
//! configuration does not say, is listed as unverified.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::{HeadroomConfig, Scale};
use crate::intent::LatencyBound;
use crate::live::loadtest::{self, LoadTests};
use crate::report::HeadroomVerdict;
use crate::workload::{Role, WorkloadId};

/// Which configuration a load test is held against: how the reasons name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The live workload, its pods and their nodes.
    Live,
    /// The head of a change: its manifests (the roles and the pod template).
    Head,
}

impl Side {
    /// `live 3`, `the head's 2`.
    fn name(self) -> &'static str {
        match self {
            Side::Live => "live",
            Side::Head => "the head's",
        }
    }

    /// Why the model cannot be checked.
    fn no_model(self) -> &'static str {
        match self {
            Side::Live => "model (the live model is not known)",
            Side::Head => "model (the head's model is not known)",
        }
    }

    /// Why the GPU type cannot be checked.
    fn no_gpu_type(self) -> &'static str {
        match self {
            Side::Live => "GPU type (its nodes have no GPU product label)",
            Side::Head => "GPU type (the head's pod template selects no GPU product)",
        }
    }

    fn setting_unset(self, k: &str) -> String {
        match self {
            Side::Live => format!("{k} (not set on the live pods: the engine's default)"),
            Side::Head => format!("{k} (not set in the head's pod template: the engine's default)"),
        }
    }

    fn setting_unread(self, k: &str) -> String {
        match self {
            Side::Live => format!("{k} (no live pods)"),
            Side::Head => format!("{k} (the head's pod template was not read)"),
        }
    }

    fn settings_disagree(self, k: &str, values: &str) -> String {
        match self {
            Side::Live => format!("{k} (the live pods disagree: {values})"),
            Side::Head => format!("{k} (the head's containers disagree: {values})"),
        }
    }

    /// `→ 3 live`, `→ 2 at the head`.
    fn replicas(self, n: u64) -> String {
        match self {
            Side::Live => format!("{n} live"),
            Side::Head => format!("{n} at the head"),
        }
    }
}

/// One configuration of a workload, as far as it is known: what a load test is held against.
#[derive(Debug, Clone, Copy)]
pub struct Configuration<'a> {
    pub side: Side,
    pub id: &'a WorkloadId,
    pub roles: &'a [Role],
    /// The model served, when known.
    pub model: Option<&'a str>,
    /// The GPU products under it; `None` or empty when not known.
    pub gpu_types: Option<&'a BTreeSet<String>>,
    /// The serving-setting flags of its GPU pods ([`loadtest::SETTINGS`]), each with every value
    /// seen (`""`: not set); `None` when no pod (or template) was read.
    pub settings: Option<&'a BTreeMap<String, BTreeSet<String>>>,
}

/// A load test held against a configuration: the tested capacity, or why it is unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Held {
    /// The format the file was read as.
    pub format: Option<String>,
    /// Requests per second at the objective; `None` when unknown (`unknown` says why).
    pub rps: Option<f64>,
    /// The run it came from (`rate 8 req/s (2 of 3 runs met it)`).
    pub run: Option<String>,
    /// How the capacity was scaled per replica (`headroom.scale`), when it was.
    pub scaled: Option<String>,
    /// What could not be checked against the configuration.
    pub unverified: Vec<String>,
    /// Why `rps` is unknown.
    pub unknown: Option<String>,
}

/// The capacity the load test at `path` stands for at configuration `c`.
pub fn held(
    path: Option<&str>,
    c: &Configuration<'_>,
    load_tests: &LoadTests,
    objective: &[LatencyBound],
    cfg: &HeadroomConfig,
) -> Held {
    let mut out = Held::default();
    let unknown = |mut out: Held, why: String| {
        out.unknown = Some(why);
        out
    };
    let Some(path) = path else {
        return unknown(out, "no load test".into());
    };
    let lt = match load_tests.get(path) {
        Some(Ok(lt)) => lt,
        Some(Err(e)) => return unknown(out, e.to_string()),
        None => return unknown(out, format!("load test {path} was not read (no --repo)")),
    };
    out.format = Some(lt.format.to_string());
    let cap = match loadtest::capacity(lt, objective, cfg.error_limit) {
        Ok(c) => c,
        Err(e) => return unknown(out, e.to_string()),
    };
    let side = c.side.name();
    // Staleness: each thing the file records must match the configuration.
    let t = &lt.tested;
    let mut stale = Vec::new();
    match (&t.model, c.model) {
        (Some(tm), Some(lm)) if !tm.eq_ignore_ascii_case(lm) => {
            stale.push(format!("tested model {tm}, {side} {lm}"))
        }
        (Some(_), None) => out.unverified.push(c.side.no_model().into()),
        (None, _) => out.unverified.push("model".into()),
        _ => {}
    }
    match (
        &t.gpu_type,
        c.gpu_types.map(|p| p.iter().collect::<Vec<_>>()).as_deref(),
    ) {
        (Some(tg), Some([lg])) if !tg.eq_ignore_ascii_case(lg) => {
            stale.push(format!("tested on {tg}, {side} on {lg}"))
        }
        (Some(_), Some([_])) => {}
        (Some(tg), Some(several)) if several.len() > 1 => stale.push(format!(
            "tested on {tg}, {side} on several GPU types ({})",
            several
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        (Some(_), _) => out.unverified.push(c.side.no_gpu_type().into()),
        (None, _) => out.unverified.push("GPU type".into()),
    }
    let single = match c.roles {
        [one] => Some(one),
        _ => None,
    };
    match (t.gpus_per_replica, single) {
        (Some(tg), Some(role)) if tg != role.gpus_per_replica => stale.push(format!(
            "tested with {tg} GPUs per replica, {side} {}",
            role.gpus_per_replica
        )),
        (Some(_), Some(_)) => {}
        (Some(_), None) => out
            .unverified
            .push("GPUs per replica (the workload has several roles)".into()),
        (None, _) => out.unverified.push("GPUs per replica".into()),
    }
    let id = c.id;
    let per_replica = cfg
        .scale
        .iter()
        .find(|s| s.matches.matches(&id.namespace, &id.kind, &id.name))
        .map(|s| s.scale)
        == Some(Scale::PerReplica);
    let mut rps = cap.rps;
    match (t.replicas, single.map(|s| s.replicas)) {
        (Some(tr), Some(lr)) if tr != lr => {
            if per_replica && tr > 0 {
                rps = cap.rps / tr as f64 * lr as f64;
                out.scaled = Some(format!(
                    "scaled per replica (headroom.scale): {} req/s at {tr} replicas → {}",
                    round(cap.rps),
                    c.side.replicas(lr)
                ));
            } else {
                stale.push(format!("tested at {tr} replicas, {side} {lr}"));
            }
        }
        (Some(_), Some(_)) => {}
        (Some(_), None) => out
            .unverified
            .push("replicas (the workload has several roles)".into()),
        (None, _) => out.unverified.push("replicas".into()),
    }
    for (k, tested) in &t.settings {
        let values: Vec<&String> = c
            .settings
            .and_then(|l| l.get(k))
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        match values.as_slice() {
            [v] if v.is_empty() => out.unverified.push(c.side.setting_unset(k)),
            [v] if same_setting(tested, v) => {}
            [v] => stale.push(format!("tested with {k} {tested}, {side} {v}")),
            [] => out.unverified.push(c.side.setting_unread(k)),
            several => out.unverified.push(
                c.side.settings_disagree(
                    k,
                    &several
                        .iter()
                        .map(|v| if v.is_empty() { "unset" } else { v.as_str() })
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            ),
        }
    }
    if !stale.is_empty() {
        return unknown(out, format!("stale load test: {}", stale.join("; ")));
    }
    out.rps = Some(rps);
    out.run = Some(format!(
        "{} ({} of {} runs met it)",
        cap.run, cap.runs_met, cap.runs
    ));
    out
}

/// Headroom = 1 − p95 / capacity, and its verdict: `over` when the p95 is above the capacity,
/// `near capacity` when headroom is below `near` or the peak is above the capacity, `fits`
/// otherwise. `None` when the capacity or the p95 is unknown, or the capacity is zero.
pub fn verdict(
    capacity: Option<f64>,
    p95: Option<f64>,
    peak: Option<f64>,
    near: f64,
) -> Option<(f64, HeadroomVerdict)> {
    let (cap, p95) = (capacity?, p95?);
    if cap <= 0.0 {
        return None;
    }
    let h = 1.0 - p95 / cap;
    let peak_over = peak.is_some_and(|p| p > cap);
    let v = if p95 > cap {
        HeadroomVerdict::Over
    } else if h < near || peak_over {
        HeadroomVerdict::NearCapacity
    } else {
        HeadroomVerdict::Fits
    };
    Some((h, v))
}

/// `256` and `256.0`, `True` and `true` are one setting.
fn same_setting(a: &str, b: &str) -> bool {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

/// `7.9`, `12`: at most two decimals, no trailing zeros.
pub fn round(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
