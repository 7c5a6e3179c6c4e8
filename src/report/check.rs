//! The check of a change: what base → head does to the GPUs per tenant, the workloads it adds,
//! removes or reshapes, the drift it resolves or introduces, whether it fits the fleet, and the gates.

use serde::{Deserialize, Serialize};

use super::desired::ClusterOnlyTenant;
use super::envelope::{Column, Kind, SchemaName, Unknown};
use super::provenance::Provenance;
use crate::workload::WorkloadId;

/// The report of `gpuledger check`: what a change to the GitOps repository does to the GPUs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckReport {
    /// [`SCHEMA`]; a relayed report (`github comment --from-report`) naming another is refused.
    #[serde(deserialize_with = "super::envelope::this_schema")]
    pub schema: SchemaName,
    /// Always [`Kind::Check`]; a relayed report of another kind is refused.
    #[serde(
        default = "super::envelope::kind_check",
        deserialize_with = "super::envelope::check_kind"
    )]
    pub kind: Kind,
    pub sources: Vec<String>,
    pub check: Check,
    /// The scope, the commits compared and when the live state was read.
    pub provenance: Provenance,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    /// `+32 GPUs (448 → 480); chat +32; 1 added, 0 removed, 1 reshaped; introduces no drift`
    pub summary: String,
    /// Why a figure of the check is `null`, by field (`gpu_delta`, `drift_introduced`, `capacity`,
    /// `coverage_head`, `tenants.gpus_per_week`). The older `delta_unknown`, `drift_unknown` and
    /// `capacity_unknown` say the same.
    #[serde(default)]
    pub unknown: Unknown,
    pub base_at: String,
    pub head_at: String,
    /// Declared GPUs of what rendered on each side.
    pub gpus_base: u64,
    pub gpus_head: u64,
    /// Whether an app of that side did not render, so that `gpus_base`/`gpus_head` are floors
    /// (`≥`), not totals — even where the change leaves that app alone and the delta is known.
    #[serde(default)]
    pub gpus_base_floor: bool,
    #[serde(default)]
    pub gpus_head_floor: bool,
    /// `null` when an app failed to render on either side ([`Check::delta_unknown`] says which).
    pub gpu_delta: Option<i64>,
    /// Why the delta is unknown: the apps that failed to render, where, and the error.
    pub delta_unknown: Option<String>,
    /// Per tenant and product line, largest change first.
    pub tenants: Vec<DeltaRow>,
    pub product_lines: Vec<DeltaRow>,
    pub added: Vec<ChangeRow>,
    pub removed: Vec<ChangeRow>,
    pub reshaped: Vec<ChangeRow>,
    /// Drift against the live state that the change resolves and introduces (with live state).
    /// `null` when drift could not be computed ([`Check::drift_unknown`] says why).
    pub drift_resolved: Option<Vec<String>>,
    pub drift_introduced: Option<Vec<String>>,
    /// Why drift is unknown: no live state given, or the live state is incomplete.
    pub drift_unknown: Option<String>,
    pub live: bool,
    /// The GitOps coverage of the live GPUs once the head is merged (`null` without live state).
    pub coverage_head: Option<f64>,
    /// Whether the cluster fits once the change syncs; `null` without live state (why:
    /// `capacity_unknown`).
    pub capacity: Option<CapacityFit>,
    /// Why capacity (and the tenant limits) could not be checked.
    pub capacity_unknown: Option<String>,
    pub tenant_limits: Vec<TenantLimit>,
    pub render_errors: Vec<String>,
    /// Intent lints on the workloads the change adds or reshapes.
    #[serde(default)]
    pub intent: Vec<IntentFinding>,
    /// Whether the batch work the change adds fits the cluster's batch pool by staggering (a
    /// plan's verdict), when the change adds batch work with a runtime and a live state is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stagger: Option<String>,
    /// The routing blast radius: every public route the change adds, removes or alters, traced
    /// to the workloads, GPUs and tenants behind it; exposure flips first. Absent when the change
    /// touches no public route; what did not render is `unknown["routes"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<super::routes::RouteChange>,
    /// Serving headroom at the head's shape: per serving workload the change reshapes, the
    /// capacity of the load test the head names against production's p95. Absent when the change
    /// reshapes no serving workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headroom: Vec<super::headroom::HeadroomChange>,
    /// Where the cluster names another tenant than the head's manifests alone would (with a live
    /// state, the cluster's Namespace labels decide).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tenancy: Vec<ClusterOnlyTenant>,
    /// Where each namespace of the head's workloads got its tenant from.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tenant_sources: std::collections::BTreeMap<String, super::desired::TenantSource>,
    /// Each workload the change adds or reshapes that joins an admission queue, judged against it
    /// (Kueue's flavor assigner, borrowing, preemption and queueing; KAI's quota and limit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admission: Vec<super::queues::AdmissionRow>,
    /// Each GPU quota the change moves, per queue and flavor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quota: Vec<super::queues::QuotaChange>,
    pub gates: Vec<Gate>,
    /// The marked facts of the head's markdown documents against the live state (`docs --check`
    /// for the change), when there is a live state and a document marks a fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<super::facts::DocsStatus>,
    /// Allocated → busy → valuable of the tenants the change moves (and their workloads), when
    /// cost inputs were given with a live state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valuable: Option<super::cost::Cost>,
    /// The configuration the check applied, and what the change does to it.
    pub config: ConfigReview,
}

/// A check applies the base's `.gpuledger.yaml` (or the explicit `--config`), never the head's:
/// a change cannot relax its own gates. The head's changes to it are listed for a reviewer.
/// An intent lint on one workload the change adds or reshapes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntentFinding {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The manifest (file:line) to fix.
    pub source: Option<String>,
    /// `missing`, `unparsable`, `infeasible`, `contradiction`, `incomplete`.
    pub rule: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ConfigReview {
    /// The file the gates and accepted drift came from (`origin/main:.gpuledger.yaml`,
    /// `--config ci.yaml`), or `defaults`.
    pub applied: String,
    /// Whether `--config` named it (then the head's file is not compared).
    pub explicit: bool,
    /// How the head's configuration differs from the applied one, one sentence each.
    pub changes: Vec<String>,
    /// The head's configuration does not parse (it would break every run once merged).
    pub head_error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeltaRow {
    pub name: String,
    pub gpus_base: u64,
    pub gpus_head: u64,
    pub delta: i64,
    /// Who to call, for a tenant the change moves (`tenancy.contacts`, else the live
    /// namespaces' contact keys); empty when unknown or unmoved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contacts: Vec<String>,
    /// With a Prometheus, a tenant's change in GPUs per week over the trend window (`gpuledger
    /// trend`); absent without one, `null` when the trend is unknown (why:
    /// `check.unknown["tenants.gpus_per_week"]`).
    #[serde(default, skip_serializing_if = "Column::not_asked")]
    pub gpus_per_week: Column<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangeRow {
    /// The key the change was matched on; the fields below are its serialised form (read back,
    /// it is rebuilt from them by [`ChangeRow::rekey`]).
    #[serde(skip)]
    pub workload_id: WorkloadId,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    pub app: String,
    /// The cluster it is applied to, when the repository drives named clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub gpus_base: u64,
    pub gpus_head: u64,
    pub shape_base: Option<String>,
    pub shape_head: Option<String>,
    /// What the change does to the shape, role by role (reshaped only):
    /// `decode replicas 8 → 10, +16 GPUs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    pub source: Option<String>,
    /// The files under its app that the change touched, besides `source` (reshaped only): the
    /// overlay or values file a reviewer should read, when the manifest itself did not change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touched: Vec<String>,
}

impl ChangeRow {
    /// Rebuilds the key of a row read back from JSON, where it is not written: its display, the
    /// only use a read-back report has for it, leaves out the API group.
    pub fn rekey(&mut self) {
        self.workload_id = WorkloadId::new(&self.namespace, "", &self.kind, &self.name);
    }

    /// The same name [`DriftRow::id`] gives: the [`WorkloadId`]'s display.
    pub fn id(&self) -> String {
        self.workload_id.to_string()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityFit {
    pub placeable: u64,
    /// The cluster after the change syncs: what it holds now (requested + pending), with the
    /// workloads the change touches moved from their base shape to their head shape.
    pub projected: u64,
    /// What unmanaged live workloads hold (part of what the cluster holds now).
    pub unmanaged_live: u64,
    /// The whole fleet and every GPU model in `by_model` fit after the change syncs.
    pub fits: bool,
    /// Before the change: what the cluster holds now, requested + pending — the inventory's count.
    pub base_projected: u64,
    /// The whole fleet fits before the change.
    pub base_fits: bool,
    /// The live GPUs requested by bound pods now (`null` from a report without it).
    #[serde(default)]
    pub live_requested: Option<u64>,
    /// The live GPUs pending pods ask for now.
    #[serde(default)]
    pub live_pending: Option<u64>,
    /// The workloads the change moves, `ns/Kind/name held → after`.
    #[serde(default)]
    pub moved: Vec<String>,
    /// The GPU models the change touches, each judged against its own placeable GPUs: a workload
    /// whose pod templates name a model (`nvidia.com/gpu.product`) can only run there.
    #[serde(default)]
    pub by_model: Vec<ModelFit>,
}

/// One GPU model (or the models a workload may choose among) after the change syncs: every model
/// of the fleet, and each set of models a touched workload names.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelFit {
    /// `NVIDIA-H100-80GB-HBM3`, or the models joined with ` or ` when a workload names several.
    pub model: String,
    pub models: Vec<String>,
    /// The GPU nodes of these models that were read (0: no node has them).
    pub nodes: u64,
    /// The placeable GPUs of these models (0 when no node read has them: nothing pinned there can
    /// be placed).
    pub placeable: u64,
    /// What the cluster holds there now: requested on their nodes + pending pods that can only
    /// run there.
    pub now: u64,
    /// With the workloads the change touches that can only run there moved.
    pub after: u64,
    pub fits: bool,
    /// A workload the change touches can only run on these models (the others are listed with
    /// what the inventory counts on them, unmoved).
    pub touched: bool,
}

impl ModelFit {
    /// Over its placeable GPUs after the change, and by more than before.
    pub fn worse(&self) -> bool {
        !self.fits && self.after > self.now
    }

    /// `needs 24 NVIDIA-H100-80GB-HBM3 of 16 placeable, now 8`, `… of 0 placeable, now 0: no node
    /// read has that model` (it is said inside parentheses).
    pub fn phrase(&self) -> String {
        let none = if self.nodes == 0 {
            ": no node read has that model"
        } else {
            ""
        };
        format!(
            "needs {} {} of {} placeable, now {}{none}",
            self.after, self.model, self.placeable, self.now
        )
    }
}

impl CapacityFit {
    /// The change makes a fit worse: the whole fleet, or a GPU model it touches, is over its
    /// placeable GPUs after the change and by more than before.
    pub fn worse(&self) -> bool {
        (self.projected > self.placeable && self.projected > self.base_projected)
            || self.by_model.iter().any(ModelFit::worse)
    }

    /// The GPU models the change leaves over their placeable GPUs.
    pub fn models_over(&self) -> impl Iterator<Item = &ModelFit> {
        self.by_model.iter().filter(|m| !m.fits)
    }

    /// The check's summary clause: `; fits the fleet`, `; does NOT fit the placeable GPUs, and
    /// makes it worse (needs 24 NVIDIA-H100-80GB-HBM3 of 16 placeable, now 8)` — a verdict only
    /// where the capacity gate is enabled (`gated`), else a note.
    pub fn clause(&self, gated: bool) -> String {
        let models: Vec<String> = self.models_over().map(ModelFit::phrase).collect();
        let models = if models.is_empty() {
            String::new()
        } else {
            format!(" ({})", models.join("; "))
        };
        match (self.fits, self.worse(), gated) {
            (true, _, _) => "; fits the fleet".into(),
            (false, true, true) => {
                format!("; does NOT fit the placeable GPUs, and makes it worse{models}")
            }
            (false, false, true) if models.is_empty() => {
                "; the fleet is already over its placeable GPUs, not made worse".into()
            }
            (false, false, true) => {
                format!("; already over the placeable GPUs, not made worse{models}")
            }
            (false, _, false) => {
                format!("; over the placeable GPUs{models} (the capacity gate is not enabled)")
            }
        }
    }

    /// `117 of 112 placeable GPUs after this change, over by 5; before it 101 (101 requested + 0
    /// pending), 11 spare; this change needs 16 more` — the fit after and before, each labelled,
    /// then each GPU model the change touches (`; NVIDIA-H100-80GB-HBM3: needs 24 of 16 placeable
    /// (now 8), over by 8`).
    pub fn verdict(&self) -> String {
        let mut s = self.fleet_verdict();
        for m in self.by_model.iter().filter(|m| m.touched) {
            s.push_str(&format!(
                "; {}: needs {} of {} placeable (now {}), {}",
                m.model,
                m.after,
                m.placeable,
                m.now,
                match m.after.checked_sub(m.placeable) {
                    Some(0) | None => format!("fits with {} spare", m.placeable - m.after),
                    Some(over) if m.nodes == 0 => {
                        format!("over by {over}: no node read has that model")
                    }
                    Some(over) => format!("over by {over}"),
                }
            ));
        }
        s
    }

    fn fleet_verdict(&self) -> String {
        let change = match self.projected.cmp(&self.base_projected) {
            std::cmp::Ordering::Greater => {
                format!(
                    "this change needs {} more",
                    self.projected - self.base_projected
                )
            }
            std::cmp::Ordering::Less => {
                format!("this change frees {}", self.base_projected - self.projected)
            }
            std::cmp::Ordering::Equal => "this change needs no more".to_string(),
        };
        let fit = |need: u64| {
            if need <= self.placeable {
                format!("{} spare", self.placeable - need)
            } else {
                format!("over by {}", need - self.placeable)
            }
        };
        let now = match (self.live_requested, self.live_pending) {
            (Some(r), Some(p)) => format!(" ({r} requested + {p} pending)"),
            _ => String::new(),
        };
        format!(
            "{} of {} placeable GPUs after this change, {}; before it {}{now}, {}{}; {change}",
            self.projected,
            self.placeable,
            fit(self.projected),
            self.base_projected,
            if self.base_fits { "" } else { "already " },
            fit(self.base_projected),
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TenantLimit {
    pub tenant: String,
    pub limit: u64,
    pub gpus_head: u64,
    pub over: bool,
}

/// A gate `check` can be asked to fail on (`--fail-on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GateName {
    Capacity,
    DriftIntroduced,
    RenderError,
    Intent,
    StaleDocs,
    Headroom,
    Quota,
}

impl GateName {
    /// The name a gate has in the report and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            GateName::Capacity => "capacity",
            GateName::DriftIntroduced => "drift-introduced",
            GateName::RenderError => "render-error",
            GateName::Intent => "intent",
            GateName::StaleDocs => "stale-docs",
            GateName::Headroom => "headroom",
            GateName::Quota => "quota",
        }
    }
}

impl std::fmt::Display for GateName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gate {
    /// `capacity`, `drift-introduced`, `render-error`
    pub name: String,
    /// True when it failed, or could not be evaluated (then `unknown` is true too).
    pub failed: bool,
    /// The gate could not be evaluated: a missing or incomplete input. It fails closed, except
    /// `headroom`, which fails only on a known headroom (an unknown one is said in `why`).
    pub unknown: bool,
    pub why: String,
}
