//! The drift tracking issue: one issue per scope, found by label and exact marker through the
//! list API (never search, which lags and so breeds duplicates), and kept in step with the drift:
//! created when drift appears, its body refreshed when the report changes (with a short comment
//! when the set of drifting workloads changes), closed as completed when it is gone, reopened when
//! it returns — unless someone closed it as not planned and the drift is still the same.
//!
//! Two overlapping runs can both find no issue and both create one; the list API cannot prevent
//! that. So the rule is convergent instead: the lowest-numbered issue of a scope is the tracking
//! issue, and any other open one is closed as a duplicate pointing at it. Each run applies the rule
//! after creating, so whichever run finishes last leaves exactly one open issue.

use super::marker::Marker;

/// An issue carrying our marker (any state).
#[derive(Debug, Clone)]
pub struct Found {
    pub number: u64,
    pub open: bool,
    /// `completed`, `not_planned`, `reopened`, or none.
    pub state_reason: Option<String>,
    pub body: String,
    pub marker: Marker,
}

/// What this run knows about drift now.
#[derive(Debug, Clone)]
pub struct Now {
    /// Unaccepted drift exists.
    pub drifting: bool,
    /// The new body (marker first).
    pub body: String,
    pub marker: Marker,
    /// One line for comments: `3 unmanaged workloads hold 12 GPUs; 1 changed`.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Create { body: String },
    Edit { number: u64, body: String },
    Reopen { number: u64, body: String },
    Close { number: u64, body: String },
    CloseDuplicate { number: u64, of: u64 },
    Comment { number: u64, text: String },
}

impl Step {
    /// The issue the step acts on; `None` for a new one.
    pub fn number(&self) -> Option<u64> {
        match self {
            Step::Create { .. } => None,
            Step::Edit { number, .. }
            | Step::Reopen { number, .. }
            | Step::Close { number, .. }
            | Step::CloseDuplicate { number, .. }
            | Step::Comment { number, .. } => Some(*number),
        }
    }
}

pub fn plan(found: &[Found], now: &Now) -> Vec<Step> {
    let mut ours: Vec<&Found> = found
        .iter()
        .filter(|f| f.marker.same_thread(&now.marker))
        .collect();
    ours.sort_by_key(|f| f.number);
    let first = ours.first().map(|f| f.number);
    let mut steps: Vec<Step> = ours
        .iter()
        .skip(1)
        .filter(|f| f.open)
        .filter_map(|f| {
            first.map(|of| Step::CloseDuplicate {
                number: f.number,
                of,
            })
        })
        .collect();
    let Some(issue) = ours.first() else {
        if now.drifting {
            steps.push(Step::Create {
                body: now.body.clone(),
            });
        }
        return steps;
    };
    let n = issue.number;
    let changed_set = issue.marker.digest != now.marker.digest;
    match (now.drifting, issue.open) {
        (true, true) => {
            if issue.marker.report != now.marker.report {
                steps.push(Step::Edit {
                    number: n,
                    body: now.body.clone(),
                });
            }
            if changed_set {
                steps.push(Step::Comment {
                    number: n,
                    text: format!("The drift changed: {}.", now.summary),
                });
            }
        }
        (true, false) if issue.state_reason.as_deref() == Some("not_planned") && !changed_set => {}
        (true, false) => {
            steps.push(Step::Reopen {
                number: n,
                body: now.body.clone(),
            });
            steps.push(Step::Comment {
                number: n,
                text: format!("Drift is back: {}.", now.summary),
            });
        }
        (false, true) => {
            steps.push(Step::Comment {
                number: n,
                text: format!("No drift left ({}): closing.", now.summary),
            });
            steps.push(Step::Close {
                number: n,
                body: now.body.clone(),
            });
        }
        (false, false) => {}
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(drifting: bool, digest: &str, text: &str) -> Now {
        let mut marker = Marker::issue("prod", digest);
        marker.report = Some(crate::github::marker::digest([text]));
        Now {
            drifting,
            body: format!("{}\n{text}", marker.render()),
            marker,
            summary: "2 unmanaged".into(),
        }
    }

    fn found(number: u64, open: bool, n: &Now) -> Found {
        Found {
            number,
            open,
            state_reason: (!open).then(|| "completed".to_string()),
            body: n.body.clone(),
            marker: n.marker.clone(),
        }
    }

    #[test]
    fn lifecycle() {
        let drift = now(true, "aa", "drift a");
        assert_eq!(
            plan(&[], &drift),
            vec![Step::Create {
                body: drift.body.clone()
            }]
        );
        assert_eq!(plan(&[], &now(false, "00", "clean")), vec![]);
        // Same drift: nothing. Different set: edit and comment.
        assert_eq!(plan(&[found(3, true, &drift)], &drift), vec![]);
        let other = now(true, "bb", "drift b");
        let steps = plan(&[found(3, true, &drift)], &other);
        assert_eq!(
            steps[0],
            Step::Edit {
                number: 3,
                body: other.body.clone()
            }
        );
        assert!(
            matches!(&steps[1], Step::Comment { number: 3, text } if text.starts_with("The drift changed"))
        );
        // Gone: comment and close; closed and clean: nothing; back: reopen.
        let clean = now(false, "00", "clean");
        let steps = plan(&[found(3, true, &drift)], &clean);
        assert!(matches!(steps.last(), Some(Step::Close { number: 3, .. })));
        assert_eq!(plan(&[found(3, false, &clean)], &clean), vec![]);
        let steps = plan(&[found(3, false, &clean)], &drift);
        assert_eq!(
            steps[0],
            Step::Reopen {
                number: 3,
                body: drift.body.clone()
            }
        );
    }

    #[test]
    fn closed_as_not_planned_stays_closed_while_the_drift_is_the_same() {
        let drift = now(true, "aa", "drift a");
        let mut declined = found(3, false, &drift);
        declined.state_reason = Some("not_planned".into());
        assert_eq!(plan(std::slice::from_ref(&declined), &drift), vec![]);
        let other = now(true, "bb", "drift b");
        assert!(matches!(
            plan(&[declined], &other)[0],
            Step::Reopen { number: 3, .. }
        ));
    }

    #[test]
    fn duplicates_converge_on_the_lowest_number() {
        let drift = now(true, "aa", "drift a");
        let steps = plan(&[found(9, true, &drift), found(7, true, &drift)], &drift);
        assert_eq!(steps, vec![Step::CloseDuplicate { number: 9, of: 7 }]);
    }

    #[test]
    fn other_scopes_are_not_ours() {
        let drift = now(true, "aa", "x");
        let mut non_prod = found(2, true, &drift);
        non_prod.marker = Marker::issue("non-prod", "aa");
        assert_eq!(
            plan(&[non_prod], &drift),
            vec![Step::Create {
                body: drift.body.clone()
            }]
        );
    }
}
