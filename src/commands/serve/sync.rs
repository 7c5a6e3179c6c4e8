//! The exporter's per-resource series: whether each watched resource is synced
//! (`gpuledger_exporter_resource_synced`) and how long since its objects were last confirmed
//! current (`gpuledger_exporter_resource_age_seconds`), read from the stores at scrape time. A
//! report is complete only while every resource is synced: the last good report, served while a
//! resource is failing, says `gpuledger_report_complete 0` ([`served_report`]), so figures kept
//! through an outage are never taken for current ones.

use gpuledger::live::kube::{ResourceSync, Watched};
use gpuledger::render::prometheus::Family;

/// The two families, and whether every resource is synced.
pub(super) fn families(watched: &[Watched]) -> (Family, Family, bool) {
    let mut synced = Family::gauge(
        "gpuledger_exporter_resource_synced",
        "1 while the resource's last list succeeded and its watch has run without error since (a list, an event or a bookmark within 5 minutes); 0 while its figures are stale (the API server cannot be reached, a 5xx) or unknown (forbidden). A kind that is not served (404) is synced: none exist.",
    );
    let mut age = Family::gauge(
        "gpuledger_exporter_resource_age_seconds",
        "Seconds since the resource's objects were last confirmed current (a list, an accepted watch, an event or a bookmark); it grows while the resource is not synced.",
    );
    let mut all = true;
    // Several clusters: each resource's series says which one.
    let several = watched.len() > 1;
    for w in watched {
        for ResourceSync {
            resource,
            synced: ok,
            age: seconds,
        } in w.sync()
        {
            all &= ok;
            let mut labels: Vec<(&'static str, &str)> = vec![("resource", &resource)];
            if several {
                labels.insert(0, ("watched_cluster", w.name()));
            }
            synced.sample(&labels, if ok { 1.0 } else { 0.0 });
            age.sample(&labels, seconds.map(|d| d.as_secs_f64().floor()));
        }
    }
    (synced, age, all)
}

/// The report's exposition as served: unchanged while every resource is synced, else with
/// `gpuledger_report_complete` 0 (the figures may be stale).
pub(super) fn served_report(report: &str, all_synced: bool) -> std::borrow::Cow<'_, str> {
    if all_synced {
        return report.into();
    }
    let mut out = String::with_capacity(report.len());
    for line in report.split_inclusive('\n') {
        let series = line.split([' ', '{']).next().unwrap_or_default();
        match line.trim_end().rsplit_once(' ') {
            Some((head, "1")) if series == "gpuledger_report_complete" => {
                out.push_str(head);
                out.push_str(" 0\n");
            }
            _ => out.push_str(line),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_report_is_served_incomplete() {
        let text = "# HELP gpuledger_report_complete x\ngpuledger_report_complete{cluster=\"a\"} 1\ngpuledger_report_complete_other 1\n";
        assert_eq!(served_report(text, true), text);
        assert_eq!(
            served_report(text, false),
            "# HELP gpuledger_report_complete x\ngpuledger_report_complete{cluster=\"a\"} 0\ngpuledger_report_complete_other 1\n"
        );
    }
}
