//! `trend`: GPUs per tenant and product line over a window, read back from Prometheus —
//! gpuledger's own exported series when the Prometheus has them ([`crate::report::series`]),
//! else kube-state-metrics' pod requests joined with its namespace labels and the tenancy rules.
//! The report says which. [`column`] is the tenant table's trend column of the other reports.
//!
//! The runway needs the free placeable GPUs now. With a live source (`--snapshot`,
//! `--kubeconfig`, `--context`) they are the live state's, counted as the inventory counts them;
//! without one, the latest `gpuledger_fleet_free_placeable_gpus` in the same Prometheus (what
//! `gpuledger serve` exports, summed over clusters) when the history is gpuledger's own; else the
//! runway is unknown, with why. `trend` never reads a cluster it was not pointed at.

use std::path::PathBuf;
use std::time::Duration;

use super::fleet::Signals;
use super::input::{self, LiveSpec, MetricsSpec, TrendSpec};
use super::{Context, Error, Note, Outcome, Result, Run};
use crate::analysis::trend::{
    NO_PRODUCT_LINE, by_label, namespace_owners, regroup, trend, with_busy, with_runway,
};
use crate::config::Tenancy;
use crate::live::range::{Range, RangeError};
use crate::report::series::{self, PRODUCT_LINE, PRODUCT_LINE_GPUS, TENANT, TENANT_GPUS};
use crate::report::trend::{Source, Trend, TrendReport};
use crate::report::{Column, Kind, Known, Report, SCHEMA};
use crate::util::date::Timestamp;

const KSM_REQUESTS: &str =
    "sum by (namespace) (kube_pod_container_resource_requests{resource=\"nvidia_com_gpu\"})";
const KSM_LABELS: &str = "kube_namespace_labels";

/// What `trend` reads.
#[derive(Debug, Clone)]
pub struct TrendJob {
    /// The Prometheus base URL.
    pub prometheus: String,
    pub token: Option<String>,
    pub window: Duration,
    pub step: Duration,
    pub timeout: Duration,
    pub config: Option<PathBuf>,
    pub now: Option<Timestamp>,
    /// The live state the runway's free placeable GPUs are counted in; without it they are read
    /// from gpuledger's own series, when the history is.
    pub live: Option<LiveSpec>,
}

/// The series `gpuledger serve` exports the free placeable GPUs as.
const FREE_SERIES: &str = "gpuledger_fleet_free_placeable_gpus";

pub fn run(job: &TrendJob, cx: &Context<'_>) -> Result<Run<TrendReport>> {
    let mut notes: Vec<Note> = Vec::new();
    let (cfg, cfg_path) = super::input::config(job.config.as_deref(), None)?;
    let cfg_path = cfg_path.map(|p| p.display().to_string());
    if let Some(p) = &cfg_path {
        notes.push(Note::ConfigUsed(p.clone()));
    }
    let now = job.now.unwrap_or_else(Timestamp::now).unix();
    let window = i64::try_from(job.window.as_secs())
        .map_err(|_| Error::Usage("the window is too long".into()))?;
    let step = job.step.as_secs();
    if step == 0 || step > job.window.as_secs() {
        return Err(Error::Usage("--step must be shorter than --window".into()));
    }
    let prom = Range::new(&job.prometheus, job.token.as_deref(), job.timeout)
        .map_err(|e| Error::Prometheus(e.to_string()))?;
    let mut trend = cx
        .rt
        .block_on(read(&prom, now - window, now, step, &cfg.tenancy))
        .map_err(|e| Error::Prometheus(e.to_string()))?;
    let mut sources = vec![prom.shown_url().to_string()];
    let free = match &job.live {
        Some(spec) => {
            let live = cx.rt.block_on(input::live(spec, &cx.progress))?;
            let (part, live_sources) = live.single("trend")?;
            sources.extend(live_sources);
            free_in_live(&part, &cfg)?
        }
        None if trend.source == Source::Gpuledger => {
            cx.rt.block_on(free_in_series(&prom, now, trend.start))
        }
        None => Known::Unknown(
            "kube-state-metrics does not export the free placeable GPUs: give the live state \
             (--snapshot, --kubeconfig or --context), or scrape gpuledger serve into this Prometheus"
                .to_string(),
        ),
    };
    if let Known::Unknown(why) = &free {
        notes.push(Note::Say(format!("runway unknown: {why}")));
    }
    with_runway(&mut trend, free);
    sources.extend(cfg_path);
    Ok(Run {
        report: TrendReport {
            schema: SCHEMA,
            kind: Kind::Trend,
            sources,
            trend,
        },
        notes,
        outcome: Outcome::Clean,
    })
}

/// The free placeable GPUs of a live read (and where they came from), or why they are unknown
/// (nodes or pods not read).
fn free_in_live(
    part: &input::LivePart,
    cfg: &crate::config::Config,
) -> Result<Known<(u64, String)>> {
    if let Some(m) = part
        .incomplete
        .iter()
        .find(|m| m.resource == "nodes" || m.resource == "pods")
    {
        return Ok(Known::Unknown(format!(
            "the free placeable GPUs are unknown: {} could not be read ({})",
            m.resource, m.reason
        )));
    }
    let unread = part.unread();
    if let Some(why) = unread.nodes.as_ref().or(unread.pods.as_ref()) {
        return Ok(Known::Unknown(format!(
            "the free placeable GPUs are unknown: {why}"
        )));
    }
    let report = crate::analysis::inventory::inventory(&part.objects, cfg, Vec::new())?;
    let from = part.provenance.first().map_or_else(
        || "the live state".to_string(),
        |p| format!("the live state ({})", p.name),
    );
    Ok(Known::Value((report.fleet.shortage.free_placeable, from)))
}

/// The latest free placeable GPUs gpuledger exported to `prom` in the window (summed over the
/// clusters it exports), or why there is none.
async fn free_in_series(prom: &Range, now: i64, start: i64) -> Known<(u64, String)> {
    let query = format!(
        "sum(last_over_time({FREE_SERIES}[{}s]))",
        (now - start).max(1)
    );
    let series = match prom.instant(&query, now).await {
        Ok(series) => series,
        Err(e) => return Known::Unknown(e.to_string()),
    };
    let value = series
        .first()
        .and_then(|s| s.samples.last())
        .map(|(_, v)| *v)
        .filter(|v| v.is_finite() && *v >= 0.0);
    match value {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(v) => Known::Value((
            v.round() as u64,
            format!("{FREE_SERIES} in {} (its latest sample)", prom.shown_url()),
        )),
        None => Known::Unknown(format!(
            "{FREE_SERIES} has no sample in the window: give the live state (--snapshot, --kubeconfig or --context)"
        )),
    }
}

/// The trend over the trend column's window ending `now`, or why it cannot be read.
fn trend_of(
    m: &MetricsSpec,
    t: TrendSpec,
    tenancy: &crate::config::Tenancy,
    now: Timestamp,
    cx: &Context<'_>,
) -> Known<Trend> {
    let Ok(window) = i64::try_from(t.window.as_secs()) else {
        return Known::Unknown("the window is too long".into());
    };
    let now = now.unix();
    let read = Range::new(&m.url, m.token.as_deref(), m.timeout).map(|prom| {
        cx.rt.block_on(read(
            &prom,
            now - window,
            now,
            t.step.as_secs().max(1),
            tenancy,
        ))
    });
    match read {
        Ok(Ok(trend)) => Known::Value(trend),
        Ok(Err(e)) => Known::Unknown(e.to_string()),
        Err(e) => Known::Unknown(e.to_string()),
    }
}

/// The tenant table's trend column: with a Prometheus, each tenant's change in GPUs per week over
/// the trend window. A trend that cannot be read or is unknown leaves the column out and says why
/// in a note; it never fails the report.
pub fn column(
    report: &mut Report,
    spec: &Signals,
    tenancy: &crate::config::Tenancy,
    now: Timestamp,
    cx: &Context<'_>,
    notes: &mut Vec<Note>,
) {
    let (Some(m), Some(t)) = (&spec.metrics, spec.trend) else {
        return;
    };
    const FIELD: &str = "tenants.gpus_per_week";
    let trend = match trend_of(m, t, tenancy, now, cx) {
        Known::Value(trend) => match &trend.unknown {
            Some(why) => Err(why.clone()),
            None => Ok(trend),
        },
        Known::Unknown(why) => Err(why),
    };
    match trend {
        Err(why) => {
            notes.push(Note::Say(format!("trend column unknown: {why}")));
            for row in &mut report.tenants {
                row.gpus_per_week = Column::Unknown;
            }
            report.fleet.unknown.set(FIELD, why);
        }
        Ok(trend) => {
            let mut without = Vec::new();
            for row in &mut report.tenants {
                let per_week = trend
                    .tenants
                    .iter()
                    .find(|x| x.name == row.name)
                    .and_then(|x| x.per_week);
                row.gpus_per_week = match per_week {
                    Some(v) => Column::Value(v),
                    None => {
                        without.push(row.name.clone());
                        Column::Unknown
                    }
                };
            }
            if !without.is_empty() {
                report.fleet.unknown.set(
                    FIELD,
                    format!("no history in the trend window for {}", without.join(", ")),
                );
            }
        }
    }
}

/// The trend from `prom` over `[start, now]`: gpuledger's own series when there are any, else
/// kube-state-metrics'.
pub async fn read(
    prom: &Range,
    start: i64,
    now: i64,
    step: u64,
    tenancy: &Tenancy,
) -> std::result::Result<Trend, RangeError> {
    let base = prom.shown_url().to_string();
    let own_tenants = series::sum_by(TENANT_GPUS, TENANT, series::REQUESTED);
    let own = prom.range(&own_tenants, start, now, step).await?;
    if !own.is_empty() {
        let own_lines = series::sum_by(PRODUCT_LINE_GPUS, PRODUCT_LINE, series::REQUESTED);
        let own_busy = series::sum_by(TENANT_GPUS, TENANT, series::USED);
        let lines = prom.range(&own_lines, start, now, step).await?;
        let busy = prom.range(&own_busy, start, now, step).await?;
        let mut t = trend(
            Source::Gpuledger,
            format!("{TENANT_GPUS} and {PRODUCT_LINE_GPUS} (requested) in {base}"),
            (start, now, step),
            &by_label(&own, TENANT, "(none)"),
            &by_label(&lines, PRODUCT_LINE, NO_PRODUCT_LINE),
        );
        with_busy(&mut t, Known::Value(&by_label(&busy, TENANT, "(none)")));
        return Ok(t);
    }
    let requests = prom.range(KSM_REQUESTS, start, now, step).await?;
    let namespaces = by_label(&requests, "namespace", "");
    let labels = prom.instant(KSM_LABELS, now).await?;
    let owners = namespace_owners(&labels, namespaces.keys().cloned(), tenancy);
    let mut t = trend(
        Source::KubeStateMetrics,
        format!(
            "kube_pod_container_resource_requests{{resource=\"nvidia_com_gpu\"}} by namespace (pending pods included), \
             tenants and product lines from kube_namespace_labels and the tenancy rules' namespace labels, in {base} \
             ({TENANT_GPUS} has no samples there)"
        ),
        (start, now, step),
        &regroup(&namespaces, &owners, |o| o.0.as_str()),
        &regroup(&namespaces, &owners, |o| o.1.as_str()),
    );
    with_busy(
        &mut t,
        Known::Unknown("kube-state-metrics has no GPU activity: busy GPUs come from gpuledger's own series (gpuledger serve with --prometheus, scraped by this Prometheus)".to_string()),
    );
    Ok(t)
}
