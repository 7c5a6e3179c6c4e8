//! How `gpuledger serve` logs: gpuledger's own lines only, unless `--verbose` — kube-client's and
//! hyper's internal warnings (`eof in poll` during an outage, dozens a second) say nothing an
//! operator can act on, and the watch's own lines name the resource and what is done about it
//! (src/live/kube/health.rs). `--log-format json` writes one JSON object a line, with `level`,
//! `message` and the event's fields (`cluster`, `resource`, `event` for a resource's state), for a
//! pod's log collector; serve's other messages take the same shape (`event` `serve`).

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The filter when `GPULEDGER_LOG` does not give one: gpuledger's warnings and the watched
/// resources' state changes (some are good news: `synced again`), nothing from the libraries;
/// with `verbose`, their warnings and gpuledger's debug lines too.
pub fn default_filter(verbose: bool) -> &'static str {
    if verbose {
        "warn,gpuledger=debug"
    } else {
        "off,gpuledger=warn,gpuledger::live::kube::health=info"
    }
}

/// One JSON object for a message of serve's own.
pub fn json_line(level: &str, event: &str, message: &str) -> String {
    let mut o = Map::new();
    o.insert("level".into(), level.into());
    o.insert("event".into(), event.into());
    o.insert("message".into(), message.into());
    Value::Object(o).to_string()
}

/// Formats each event as one line, `WARN pods: forbidden (403): its figures are unknown`: the
/// level, a library's target (`WARN kube_client::client: eof in poll: …` with `--verbose`) and the
/// message, then the fields a resource's line does not already say.
pub struct TextLines;

impl<S, N> FormatEvent<S, N> for TextLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _cx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        let message = fields
            .0
            .remove("message")
            .map(|m| text(&m))
            .unwrap_or_default();
        let meta = event.metadata();
        write!(writer, "{} ", meta.level())?;
        // A library's line (with --verbose) says whose it is.
        if !meta.target().starts_with("gpuledger") {
            write!(writer, "{}: ", meta.target())?;
        }
        write!(writer, "{message}")?;
        for (k, v) in &fields.0 {
            if !["cluster", "resource", "event"].contains(&k.as_str()) {
                write!(writer, " {k}={}", text(v))?;
            }
        }
        writeln!(writer)
    }
}

/// Formats each event as one JSON object.
pub struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _cx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let mut fields = Fields(Map::new());
        fields
            .0
            .insert("level".into(), meta.level().as_str().to_lowercase().into());
        fields.0.insert("target".into(), meta.target().into());
        event.record(&mut fields);
        writeln!(writer, "{}", Value::Object(fields.0))
    }
}

struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
}
