//! What, where and when, said the same way at the top of every report: the title names the scope
//! (the cluster), and one line under it names the commits compared and when the live state was
//! read — with a warning above it when that state is older than `snapshot.stale_after`.
//!
//! A reader who sees a comment days later, or a table pasted into a chat, must be able to tell which
//! cluster it describes, which change it judged and how fresh the cluster's state was, without the
//! command line that made it. The figures come from [`Provenance`]; nothing here reads a clock.

use crate::doc::{Alert, Block, Doc, Text};
use crate::report::{GitProvenance, LiveProvenance, LiveSourceKind, Provenance};

/// What leads a report with its verdicts, right under the title: a warning per stale live source
/// (`Live state read 3 days ago … — stale past 24h`).
pub fn warnings(p: Option<&Provenance>) -> Option<Block> {
    let p = p?;
    let lines: Vec<Text> = p
        .live
        .iter()
        .filter(|l| l.stale)
        .map(|l| stale(l, p.scope.as_deref()))
        .collect();
    (!lines.is_empty()).then_some(Block::Alert {
        kind: Alert::Warning,
        lines,
    })
}

/// What follows the headline: the line `Cluster gpu-east · base abc1234 "Fix x" → head def5678
/// "Add y" · live state read 2026-12-02 06:00 UTC (12 minutes before this report) from snapshot
/// fleet.json`, when there is something to say.
pub fn block(p: Option<&Provenance>) -> Option<Block> {
    line(p?).map(|t| Block::Paragraph(Text::new().emph(t)))
}

/// A report's opening in reading order: the warnings, the headline, then where and when.
pub fn lead(d: &mut Doc, p: Option<&Provenance>, headline: Block) {
    if let Some(w) = warnings(p) {
        d.push(w);
    }
    d.push(headline);
    if let Some(b) = block(p) {
        d.push(b);
    }
}

/// The "what, where, when" line; `None` when there is nothing to say.
pub fn line(p: &Provenance) -> Option<Text> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(s) = &p.scope {
        parts.push(format!("Cluster {s}"));
    }
    if let Some(g) = git(&p.git) {
        parts.push(g);
    }
    parts.extend(p.live.iter().map(live));
    let mut text = parts.join(" · ");
    if text.is_empty() {
        return None;
    }
    if let Some(first) = text.get(..1).filter(|f| f.chars().all(char::is_lowercase)) {
        text = first.to_uppercase() + text.get(1..).unwrap_or_default();
    }
    Some(Text::new().plain(text))
}

/// `base X → head Y`, or `Git X` for a single side.
fn git(sides: &[GitProvenance]) -> Option<String> {
    let side = |name: &str| sides.iter().find(|g| g.side == name);
    match (side("base"), side("head")) {
        (Some(b), Some(h)) => Some(format!("base {} → head {}", b.describe, h.describe)),
        _ => sides.first().map(|g| format!("Git {}", g.describe)),
    }
}

/// `snapshot fleet.json` (the file's name, not the path it was given by) or `cluster gpu-east`.
fn from(l: &LiveProvenance) -> String {
    match l.source {
        LiveSourceKind::Snapshot => {
            let file = std::path::Path::new(&l.name)
                .file_name()
                .map_or_else(|| l.name.clone(), |f| f.to_string_lossy().into_owned());
            format!("snapshot {file}")
        }
        LiveSourceKind::Cluster => match (&l.context, &l.server) {
            (Some(c), Some(s)) => format!("context {c} ({s})"),
            _ => format!("cluster {}", l.name),
        },
    }
}

fn live(l: &LiveProvenance) -> String {
    match (l.read_at, l.age_seconds) {
        (Some(at), Some(age)) => format!(
            "live state read {} ({}) from {}",
            at.human(),
            relative(age),
            from(l)
        ),
        (Some(at), None) => format!("live state read {} from {}", at.human(), from(l)),
        (None, _) => format!(
            "live state from {}, read time unknown ({})",
            from(l),
            l.read_at_unknown.as_deref().unwrap_or("not recorded")
        ),
    }
}

/// `Live state read 3 days ago (2026-11-29 06:00 UTC) from snapshot fleet.json of gpu-east — stale
/// past 24h`.
fn stale(l: &LiveProvenance, scope: Option<&str>) -> Text {
    let of = l
        .context
        .as_deref()
        .or(scope)
        .map(|c| format!(" of {c}"))
        .unwrap_or_default();
    let (ago, at) = match (l.age_seconds, l.read_at) {
        (Some(a), Some(t)) => (span(a.unsigned_abs()), t.human()),
        _ => (String::from("long"), String::from("unknown")),
    };
    Text::new()
        .plain(format!(
            "Live state read {ago} ago ({at}) from {}{of} — ",
            from(l)
        ))
        .strong(format!("stale past {}", l.stale_after))
}

/// `12 minutes before this report`, `3 days before this report`, `2 hours after this report`
/// (a clock ahead of the report's `--now`).
fn relative(age: i64) -> String {
    let n = span(age.unsigned_abs());
    if age < 0 {
        format!("{n} after this report's time")
    } else if age < 60 {
        "just before this report".to_string()
    } else {
        format!("{n} before this report")
    }
}

/// `1 minute`, `12 minutes`, `5 hours`, `3 days`: the largest whole unit, counted down.
fn span(secs: u64) -> String {
    let (n, unit) = match secs {
        s if s < 60 => (s, "second"),
        s if s < 3_600 => (s / 60, "minute"),
        s if s < 2 * 86_400 => (s / 3_600, "hour"),
        s => (s / 86_400, "day"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Age;
    use crate::render::page::title;
    use crate::util::date::Timestamp;

    /// The warnings and the line, as a report leads with them around its headline.
    fn lines(p: Option<&Provenance>) -> Doc {
        let mut d = Doc::new();
        d.blocks.extend(warnings(p));
        d.blocks.extend(block(p));
        d
    }

    fn snapshot(read_at: Option<&str>) -> LiveProvenance {
        LiveProvenance {
            source: LiveSourceKind::Snapshot,
            name: "/tmp/x/fleet.json".into(),
            context: Some("gpu-east".into()),
            server: Some("https://10.0.0.1:6443".into()),
            read_at: read_at.map(|t| Timestamp::parse(t).unwrap()),
            read_at_unknown: read_at
                .is_none()
                .then(|| "a kubectl dump carries no read time".into()),
            unknown: Default::default(),
            age_seconds: None,
            stale: false,
            stale_after: String::new(),
            gpuledger_version: None,
        }
    }

    fn side(side: &str, describe: &str) -> GitProvenance {
        GitProvenance {
            side: side.into(),
            git_ref: None,
            commit: None,
            subject: None,
            working_tree: false,
            describe: describe.into(),
        }
    }

    #[test]
    fn the_line_names_cluster_commits_and_read_time() {
        let now = Timestamp::parse("2026-12-02T06:12:00Z").unwrap();
        let p = Provenance::new(
            None,
            vec![snapshot(Some("2026-12-02T06:00:00Z"))],
            vec![
                side("base", "abc1234 \"Fix x\""),
                side("head", "def5678 \"Add y\""),
            ],
            now,
            Age(86_400),
        );
        assert_eq!(
            title("GPU impact of this change", Some(&p)),
            "GPU impact of this change · gpu-east"
        );
        let d = lines(Some(&p));
        assert_eq!(
            d.terminal().trim(),
            "Cluster gpu-east · base abc1234 \"Fix x\" → head def5678 \"Add y\" · live state read 2026-12-02 06:00 UTC (12 minutes before this report) from snapshot fleet.json"
        );
    }

    #[test]
    fn a_stale_snapshot_is_flagged_and_an_unknown_read_time_says_why() {
        let now = Timestamp::parse("2026-12-02T06:00:00Z").unwrap();
        let p = Provenance::new(
            None,
            vec![snapshot(Some("2026-11-29T06:00:00Z"))],
            vec![],
            now,
            Age(86_400),
        );
        assert!(p.live[0].stale);
        let text = lines(Some(&p)).terminal();
        assert!(
            text.contains("Live state read 3 days ago (2026-11-29 06:00 UTC) from snapshot fleet.json of gpu-east — stale past 24h"),
            "{text}"
        );
        let p = Provenance::new(None, vec![snapshot(None)], vec![], now, Age(86_400));
        assert!(!p.live[0].stale && p.live[0].age_seconds.is_none());
        let text = lines(Some(&p)).terminal();
        assert!(
            text.contains("read time unknown (a kubectl dump carries no read time)"),
            "{text}"
        );
        assert_eq!(title("GPU fleet inventory", None), "GPU fleet inventory");
    }

    #[test]
    fn spans_count_down_to_the_largest_unit() {
        assert_eq!(span(1), "1 second");
        assert_eq!(span(60), "1 minute");
        assert_eq!(span(3 * 3_600), "3 hours");
        assert_eq!(span(47 * 3_600), "47 hours");
        assert_eq!(span(3 * 86_400), "3 days");
        assert_eq!(relative(-7_200), "2 hours after this report's time");
    }
}
