//! Whether each watched resource's figures are current, for `gpuledger serve`
//! (`gpuledger_exporter_resource_synced`, `gpuledger_exporter_resource_age_seconds`), and the one
//! log line an operator reads when that changes. A resource is synced while its last list
//! succeeded and its watch has run without error since, confirmed by a list, a watch the server
//! accepted, an event or a bookmark within [`FRESH`]. When it is not, the state says why:
//! failing (the API server cannot be reached, a timeout, a 5xx: the last figures are kept but
//! stale), refused (401/403: its figures are unknown) or gone (404: the kind is not served, none
//! exist). The lines are gpuledger's own (`pods: forbidden (403): its figures are unknown`), with
//! `cluster`, `resource` and `event` fields for `--log-format json`, one per change of state, and
//! at most [`BURST`] a [`WINDOW`] per resource: a watch cut every second does not flood the log,
//! and the next line that is printed counts the changes that were not.

use std::time::{Duration, Instant};

/// Past this without a confirmation (a list, an accepted watch, an event, a bookmark), a resource
/// is not synced: kube-apiserver sends a bookmark about every minute and ends a watch within 5.
pub const FRESH: Duration = Duration::from_secs(300);
/// Log lines per resource in a [`WINDOW`]; changes past them are counted, not printed.
const BURST: u32 = 4;
const WINDOW: Duration = Duration::from_secs(60);

/// Why a resource is, or is not, current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sync {
    /// Not listed yet.
    Starting,
    Synced,
    /// Its list or watch failed (unreachable, a timeout, a 5xx): the last figures are kept, stale.
    /// The text is the short cause (`connection refused`, `500`).
    Failing(String),
    /// 401 or 403: its figures are unknown.
    Refused(u16),
    /// 404 on the list (a CRD removed): none exist.
    Gone,
}

impl Sync {
    /// The `event` field of its log line.
    fn event(&self) -> &'static str {
        match self {
            Sync::Starting => "starting",
            Sync::Synced => "synced",
            Sync::Failing(_) => "failing",
            Sync::Refused(_) => "refused",
            Sync::Gone => "gone",
        }
    }
}

/// One resource's state, kept in the store beside its objects.
#[derive(Debug)]
pub struct Health {
    state: Sync,
    /// The last confirmation that its objects are current.
    confirmed: Option<Instant>,
    /// The start of the current log window and the lines printed in it.
    window: (Instant, u32),
    /// Changes not printed since the last line.
    unlogged: u32,
    /// The state the last printed line told, when a later change was not printed.
    told: Sync,
}

impl Default for Health {
    fn default() -> Health {
        Health {
            state: Sync::Starting,
            confirmed: None,
            window: (Instant::now(), 0),
            unlogged: 0,
            told: Sync::Starting,
        }
    }
}

/// A resource's sync state as the exporter's series show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSync {
    /// The resource's label (`pods`, `jobs.batch`).
    pub resource: String,
    pub synced: bool,
    /// Since its objects were last confirmed current; `None` before the first list.
    pub age: Option<Duration>,
}

impl Health {
    /// Its objects are current now (a list, an accepted watch, an event, a bookmark).
    pub fn confirm(&mut self) {
        self.confirmed = Some(Instant::now());
    }

    /// Synced, and confirmed within `fresh` ([`FRESH`], or longer for a resource only listed
    /// every poll).
    pub fn synced(&self, fresh: Duration) -> bool {
        matches!(self.state, Sync::Synced | Sync::Gone)
            && self.confirmed.is_some_and(|c| c.elapsed() < fresh)
    }

    pub fn age(&self) -> Option<Duration> {
        self.confirmed.map(|c| c.elapsed())
    }

    /// Moves to `to`; a change is logged (`line`, after `{resource}: `) within the rate limit.
    /// Back to synced after anything but the first list logs "synced again".
    pub fn set(&mut self, to: Sync, cluster: &str, resource: &str, line: &str) {
        if matches!(to, Sync::Synced | Sync::Gone) {
            self.confirm();
        }
        if to == self.state {
            return;
        }
        let first = self.state == Sync::Starting;
        self.state = to;
        if first && self.state == Sync::Synced {
            self.told = Sync::Synced;
            return;
        }
        self.log(cluster, resource, line);
    }

    /// Prints the current state when a change to it was not printed and the window allows.
    pub fn catch_up(&mut self, cluster: &str, resource: &str) {
        if self.unlogged > 0 && self.told != self.state && self.state == Sync::Synced {
            self.roll();
            if self.window.1 < BURST {
                self.log(cluster, resource, "synced again");
            }
        }
    }

    /// Opens a new log window when the last one is over.
    fn roll(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.window.0) >= WINDOW {
            self.window = (now, 0);
        }
    }

    fn log(&mut self, cluster: &str, resource: &str, line: &str) {
        self.roll();
        if self.window.1 >= BURST {
            self.unlogged += 1;
            return;
        }
        self.window.1 += 1;
        let skipped = match std::mem::take(&mut self.unlogged) {
            0 => String::new(),
            n => format!(" ({n} earlier changes not logged)"),
        };
        self.told = self.state.clone();
        let event = self.state.event();
        if self.state == Sync::Synced {
            tracing::info!(%cluster, %resource, event, "{resource}: {line}{skipped}");
        } else {
            tracing::warn!(%cluster, %resource, event, "{resource}: {line}{skipped}");
        }
    }
}

/// A failure's short cause for a log line: the class of a connection failure (`connection
/// refused`, `timeout`), else the HTTP status the text quotes, else the text's first words.
pub fn short_cause(text: &str) -> String {
    use crate::util::net::Cause;
    match Cause::in_text(text) {
        Some(Cause::Refused) => return "connection refused".into(),
        Some(Cause::Timeout) => return "timeout".into(),
        Some(Cause::Dns) => return "DNS failure".into(),
        Some(Cause::Tls) => return "TLS mismatch".into(),
        None => {}
    }
    let status = text
        .split([' ', ':', '(', ')'])
        .filter_map(|w| w.parse::<u16>().ok())
        .find(|c| (400..600).contains(c));
    if let Some(c) = status {
        return c.to_string();
    }
    crate::util::text::line(text, 80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synced_needs_the_state_and_a_recent_confirmation() {
        let mut h = Health::default();
        assert!(!h.synced(FRESH));
        assert_eq!(h.age(), None);
        h.set(Sync::Synced, "c", "pods", "synced");
        assert!(h.synced(FRESH));
        h.set(Sync::Failing("500".into()), "c", "pods", "list failed");
        assert!(!h.synced(FRESH));
        assert!(h.age().is_some());
        h.set(Sync::Gone, "c", "pods", "gone");
        assert!(h.synced(FRESH), "a kind not served is known: none exist");
        h.confirmed = Instant::now().checked_sub(FRESH);
        h.state = Sync::Synced;
        assert!(!h.synced(FRESH), "nothing confirmed for 5 minutes");
    }

    #[test]
    fn changes_past_the_burst_are_counted_then_told() {
        let mut h = Health::default();
        h.set(Sync::Synced, "c", "pods", "synced");
        h.set(Sync::Refused(403), "c", "pods", "forbidden");
        for _ in 0..10 {
            h.set(Sync::Failing("timeout".into()), "c", "pods", "watch ended");
            h.set(Sync::Synced, "c", "pods", "synced again");
        }
        // Told: refused, failing, synced, failing; the other 17 changes counted.
        assert_eq!(h.window.1, BURST);
        assert_eq!(h.unlogged, 21 - BURST);
        assert_eq!(h.told, Sync::Failing("timeout".into()));
        // Nothing is told while the window is full.
        h.catch_up("c", "pods");
        assert_eq!(h.unlogged, 21 - BURST);
        // The window opens again: the current state is told, with the count.
        h.window.0 = Instant::now().checked_sub(WINDOW).unwrap();
        h.catch_up("c", "pods");
        assert_eq!(h.unlogged, 0);
        assert_eq!(h.told, Sync::Synced);
    }

    #[test]
    fn the_short_cause_names_the_class_or_the_status() {
        assert_eq!(
            short_cause("GET /api/v1/pods: connection refused: nothing listens"),
            "connection refused"
        );
        assert_eq!(short_cause("GET /api/v1/pods: 500 injected failure"), "500");
        assert_eq!(short_cause("403 forbidden"), "403");
        assert_eq!(
            short_cause("the watch fell silent"),
            "the watch fell silent"
        );
    }
}
