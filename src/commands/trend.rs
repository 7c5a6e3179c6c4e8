//! `gpuledger trend`: GPUs per tenant and product line over a window, read back from Prometheus —
//! gpuledger's own exported series when the Prometheus has them, else kube-state-metrics' pod
//! requests joined with its namespace labels and the tenancy rules. The output says which.

use anyhow::Context;
use tokio::runtime::Runtime;

use super::{Exit, Outcome, deliver};
use crate::cli::TrendArgs;
use gpuledger::analysis::trend::{
    NO_PRODUCT_LINE, Source, by_label, namespace_owners, regroup, trend,
};
use gpuledger::input;
use gpuledger::live::range::Range;
use gpuledger::render::render_trend;
use gpuledger::render::trend::TrendReport;
use gpuledger::util::date::Timestamp;

const OWN_TENANTS: &str = "sum by (tenant) (gpuledger_tenant_gpus{state=\"requested\"})";
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
    let trend = rt.block_on(async {
        let own = prom.range(OWN_TENANTS, start, now, step).await?;
        if !own.is_empty() {
            let lines = prom.range(OWN_LINES, start, now, step).await?;
            return Ok::<_, String>(trend(
                Source::Gpuledger,
                format!("gpuledger_tenant_gpus and gpuledger_product_line_gpus (requested) in {base}"),
                (start, now, step),
                &by_label(&own, "tenant", "(none)"),
                &by_label(&lines, "product_line", NO_PRODUCT_LINE),
            ));
        }
        let requests = prom.range(KSM_REQUESTS, start, now, step).await?;
        let namespaces = by_label(&requests, "namespace", "");
        let labels = prom.instant(KSM_LABELS, now).await?;
        let owners = namespace_owners(&labels, namespaces.keys().cloned(), &cfg.tenancy);
        Ok(trend(
            Source::KubeStateMetrics,
            format!(
                "kube_pod_container_resource_requests{{resource=\"nvidia_com_gpu\"}} by namespace (pending pods included), \
                 tenants and product lines from kube_namespace_labels and the tenancy rules' namespace labels, in {base} \
                 (gpuledger_tenant_gpus has no samples there)"
            ),
            (start, now, step),
            &regroup(&namespaces, &owners, |o| o.0.as_str()),
            &regroup(&namespaces, &owners, |o| o.1.as_str()),
        ))
    });
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
