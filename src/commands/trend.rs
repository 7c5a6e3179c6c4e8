//! `gpuledger trend`: GPUs per tenant and product line over a window, read back from Prometheus —
//! gpuledger's own exported series when the Prometheus has them, else kube-state-metrics' pod
//! requests joined with its namespace labels and the tenancy rules. The output says which.

use anyhow::Context;
use tokio::runtime::Runtime;

use super::{Exit, Outcome, deliver};
use crate::cli::TrendArgs;
use gpuledger::analysis::trend::{
    NO_PRODUCT_LINE, Source, by_label, namespace_owners, regroup, trend, with_busy,
};
use gpuledger::input;
use gpuledger::live::range::Range;
use gpuledger::render::render_trend;
use gpuledger::render::trend::TrendReport;
use gpuledger::util::date::Timestamp;

const OWN_TENANTS: &str = "sum by (tenant) (gpuledger_tenant_gpus{state=\"requested\"})";
const OWN_BUSY: &str = "sum by (tenant) (gpuledger_tenant_gpus{state=\"used\"})";
const OWN_LINES: &str = "sum by (product_line) (gpuledger_product_line_gpus{state=\"requested\"})";
const KSM_REQUESTS: &str =
    "sum by (namespace) (kube_pod_container_resource_requests{resource=\"nvidia_com_gpu\"})";
const KSM_LABELS: &str = "kube_namespace_labels";

pub fn run(args: &TrendArgs, rt: &Runtime) -> anyhow::Result<Outcome> {
    args.output.not_prometheus("trend")?;
    let (cfg, cfg_path) = input::config(args.output.config.as_deref(), None)?;
    let now = args.now.unwrap_or_else(Timestamp::now).unix();
    let window = i64::try_from(args.window.as_secs()).context("the window is too long")?;
    let step = args.step.as_secs();
    anyhow::ensure!(
        step > 0 && step <= args.window.as_secs(),
        "--step must be shorter than --window"
    );
    let start = now - window;
    let token = std::env::var(&args.prometheus_token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .inspect(|t| gpuledger::util::redact::register(t));
    let prom = Range::new(
        &args.prometheus,
        token.as_deref(),
        std::time::Duration::from_secs(args.timeout.max(1)),
    )
    .map_err(anyhow::Error::msg)?;
    let base = prom.shown_url().to_string();
    let trend = rt.block_on(read(&prom, start, now, step, &cfg.tenancy));
    let trend = trend.map_err(anyhow::Error::msg)?;
    let mut sources = vec![base];
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(super::Note::ConfigUsed(p.display().to_string()));
    }
    let report = TrendReport {
        schema: gpuledger::report::SCHEMA,
        sources,
        trend,
    };
    let text = render_trend(&report, args.output.format, &args.output.style());
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    Ok(Outcome {
        stdout,
        commands: Vec::new(),
        notes,
        exit: Exit::Clean,
    })
}

/// The trend from `prom` over `[start, now]`: gpuledger's own series when there are any, else
/// kube-state-metrics'. Also the trend column of `inventory` and `drift`.
pub async fn read(
    prom: &Range,
    start: i64,
    now: i64,
    step: u64,
    tenancy: &gpuledger::config::Tenancy,
) -> Result<gpuledger::analysis::trend::Trend, gpuledger::live::range::RangeError> {
    let base = prom.shown_url().to_string();
    let own = prom.range(OWN_TENANTS, start, now, step).await?;
    if !own.is_empty() {
        let lines = prom.range(OWN_LINES, start, now, step).await?;
        let busy = prom.range(OWN_BUSY, start, now, step).await?;
        let mut t = trend(
            Source::Gpuledger,
            format!("gpuledger_tenant_gpus and gpuledger_product_line_gpus (requested) in {base}"),
            (start, now, step),
            &by_label(&own, "tenant", "(none)"),
            &by_label(&lines, "product_line", NO_PRODUCT_LINE),
        );
        with_busy(&mut t, Ok(&by_label(&busy, "tenant", "(none)")));
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
             (gpuledger_tenant_gpus has no samples there)"
        ),
        (start, now, step),
        &regroup(&namespaces, &owners, |o| o.0.as_str()),
        &regroup(&namespaces, &owners, |o| o.1.as_str()),
    );
    with_busy(
        &mut t,
        Err("kube-state-metrics has no GPU activity: busy GPUs come from gpuledger's own series (gpuledger serve with --prometheus, scraped by this Prometheus)".to_string()),
    );
    Ok(t)
}

/// The tenant table's trend column: with `--prometheus`, each tenant's change in GPUs per week
/// over `--trend-window`. A trend that cannot be read or is unknown leaves the column out and
/// says why in a note; it never fails the report.
pub fn column(
    report: &mut gpuledger::report::Report,
    live: &crate::cli::LiveArgs,
    tenancy: &gpuledger::config::Tenancy,
    now: Timestamp,
    rt: &Runtime,
    notes: &mut Vec<super::Note>,
) {
    let Some(spec) = live.metrics() else {
        return;
    };
    let (Ok(window), step) = (
        i64::try_from(live.trend_window.as_secs()),
        live.trend_step.as_secs(),
    ) else {
        return;
    };
    let now = now.unix();
    let read = Range::new(&spec.url, spec.token.as_deref(), spec.timeout)
        .and_then(|prom| rt.block_on(read(&prom, now - window, now, step.max(1), tenancy)));
    match read {
        Ok(t) => match &t.unknown {
            Some(why) => notes.push(super::Note::Say(format!("trend column unknown: {why}"))),
            None => {
                for row in &mut report.tenants {
                    row.gpus_per_week = t
                        .tenants
                        .iter()
                        .find(|x| x.name == row.name)
                        .and_then(|x| x.per_week);
                }
            }
        },
        Err(why) => notes.push(super::Note::Say(format!("trend column unknown: {why}"))),
    }
}
