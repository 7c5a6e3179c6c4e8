//! The sticky pull-request comment: turn a report into comment bodies that fit GitHub's limit, and
//! decide — from the comments already on the pull request — what to create, edit, hide or delete.
//!
//! Deciding is pure ([`plan`]) so every rule is tested without a server:
//! - only comments whose first line is our marker with exactly our scope are ours;
//! - the newest posting (latest `valid-at`) is the one to compare with; a run for an older commit
//!   than it changes nothing;
//! - bodies equal apart from the marker line are not posted again;
//! - `update` edits the parts in place (adding or deleting parts when their number changed),
//!   `new` adds a new posting, `hide-and-new` and `delete-and-new` add one and then minimize or
//!   delete the earlier ones — in that order, so the pull request always shows a report.

use super::budget;
use super::marker::Marker;

/// GitHub's limit is 65,536 characters; stay clear of it.
pub const BODY_CHARS: usize = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Behavior {
    /// Edit the existing comment in place.
    Update,
    /// Post a new comment each time the report changes.
    New,
    /// Post a new comment and minimize the earlier one as outdated.
    HideAndNew,
    /// Post a new comment and delete the earlier one.
    DeleteAndNew,
}

/// A comment already on the pull request that carries one of our markers.
#[derive(Debug, Clone)]
pub struct Existing {
    pub id: u64,
    /// The GraphQL node id, to minimize it.
    pub node_id: String,
    pub body: String,
    pub marker: Marker,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Create { body: String },
    Update { id: u64, body: String },
    Minimize { id: u64, node_id: String },
    Delete { id: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Nothing to do, and why.
    Skip(String),
    Steps(Vec<Step>),
}

/// The comment bodies for `markdown`: each starts with the marker (numbered when there are several
/// parts) and fits [`BODY_CHARS`]; past `max_parts` the last ends with `overflow_note`.
pub fn bodies(
    markdown: &str,
    marker: &Marker,
    max_parts: usize,
    overflow_note: &str,
) -> Vec<String> {
    // Room for the marker line and a "part 2 of 4" heading.
    let overhead = marker.render().chars().count() + 80;
    let parts = budget::split(
        markdown,
        BODY_CHARS - overhead,
        max_parts.max(1),
        overflow_note,
    );
    let n = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let mut m = marker.clone();
            if n > 1 {
                m.part = Some((i + 1, n));
                format!(
                    "{}\n**gpuledger report, part {} of {n}**\n\n{part}",
                    m.render(),
                    i + 1
                )
            } else {
                format!("{}\n{part}", m.render())
            }
        })
        .collect()
}

/// The body without its marker line.
fn content(body: &str) -> &str {
    body.split_once('\n').map_or("", |(_, rest)| rest)
}

/// What to do, given the comments already there (any order), our new bodies and their marker.
pub fn plan(existing: &[Existing], bodies: &[String], ours: &Marker, behavior: Behavior) -> Plan {
    let mut mine: Vec<&Existing> = existing
        .iter()
        .filter(|e| e.marker.same_thread(ours))
        .collect();
    mine.sort_by_key(|e| e.id);
    let creates = || bodies.iter().map(|b| Step::Create { body: b.clone() });

    // The newest posting: the latest valid-at (then the latest comment), with its other parts.
    let Some(newest) = mine.iter().max_by_key(|e| (e.marker.valid_at, e.id)) else {
        return Plan::Steps(creates().collect());
    };
    if let (Some(theirs), Some(now)) = (newest.marker.valid_at, ours.valid_at)
        && theirs > now
    {
        return Plan::Skip(format!(
            "the comment for scope {:?} is for a newer commit ({} at {theirs}); this run's commit is from {now}",
            ours.scope,
            newest.marker.head.as_deref().unwrap_or("unknown"),
        ));
    }
    let current: Vec<&Existing> = mine
        .iter()
        .copied()
        .filter(|e| {
            e.marker.head == newest.marker.head && e.marker.valid_at == newest.marker.valid_at
        })
        .collect();
    let mut current_sorted = current.clone();
    current_sorted.sort_by_key(|e| (e.marker.part.map_or(1, |p| p.0), e.id));
    let unchanged = current_sorted.len() == bodies.len()
        && current_sorted
            .iter()
            .zip(bodies)
            .all(|(e, b)| content(&e.body) == content(b));
    if unchanged {
        return Plan::Skip(format!(
            "the comment for scope {:?} already says this",
            ours.scope
        ));
    }

    let steps = match behavior {
        Behavior::Update => {
            let mut steps = Vec::new();
            for (i, body) in bodies.iter().enumerate() {
                match current_sorted.get(i) {
                    Some(e) if e.body == *body => {}
                    Some(e) => steps.push(Step::Update {
                        id: e.id,
                        body: body.clone(),
                    }),
                    None => steps.push(Step::Create { body: body.clone() }),
                }
            }
            steps.extend(
                current_sorted
                    .iter()
                    .skip(bodies.len())
                    .map(|e| Step::Delete { id: e.id }),
            );
            steps
        }
        Behavior::New => creates().collect(),
        Behavior::HideAndNew => creates()
            .chain(current_sorted.iter().map(|e| Step::Minimize {
                id: e.id,
                node_id: e.node_id.clone(),
            }))
            .collect(),
        Behavior::DeleteAndNew => creates()
            .chain(mine.iter().map(|e| Step::Delete { id: e.id }))
            .collect(),
    };
    Plan::Steps(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::date::Timestamp;

    fn at(h: u32) -> Timestamp {
        Timestamp::parse(&format!("2026-11-30T{h:02}:00:00Z")).unwrap()
    }

    fn marker(scope: &str, head: &str, hour: u32) -> Marker {
        Marker::comment(scope, head, at(hour))
    }

    fn existing(id: u64, body: &str) -> Existing {
        Existing {
            id,
            node_id: format!("IC_{id}"),
            body: body.to_string(),
            marker: Marker::find(body).unwrap(),
        }
    }

    fn one(m: &Marker, text: &str) -> Vec<String> {
        bodies(text, m, 4, "see the job summary")
    }

    #[test]
    fn first_run_creates() {
        let m = marker("prod", "a", 10);
        let b = one(&m, "report");
        assert_eq!(
            plan(&[], &b, &m, Behavior::Update),
            Plan::Steps(vec![Step::Create { body: b[0].clone() }])
        );
        assert!(b[0].starts_with("<!-- gpuledger:comment scope=\"prod\" head=\"a\""));
    }

    #[test]
    fn second_run_updates_and_identical_is_skipped() {
        let old = marker("prod", "a", 10);
        let e = existing(5, &one(&old, "report v1")[0]);
        let new = marker("prod", "b", 11);
        let b = one(&new, "report v2");
        assert_eq!(
            plan(std::slice::from_ref(&e), &b, &new, Behavior::Update),
            Plan::Steps(vec![Step::Update {
                id: 5,
                body: b[0].clone()
            }])
        );
        // Same content, later run of the same commit: nothing.
        let same = one(&marker("prod", "a", 10), "report v1");
        assert!(matches!(
            plan(&[e], &same, &old, Behavior::Update),
            Plan::Skip(_)
        ));
    }

    #[test]
    fn an_older_commit_never_overwrites_a_newer_comment() {
        let newer = existing(5, &one(&marker("prod", "b", 12), "new")[0]);
        let old = marker("prod", "a", 9);
        let p = plan(&[newer], &one(&old, "old"), &old, Behavior::Update);
        assert!(
            matches!(&p, Plan::Skip(why) if why.contains("newer commit")),
            "{p:?}"
        );
    }

    #[test]
    fn scopes_are_separate() {
        let non_prod = existing(5, &one(&marker("non-prod", "a", 10), "x")[0]);
        let m = marker("prod", "a", 10);
        let b = one(&m, "x");
        assert_eq!(
            plan(&[non_prod], &b, &m, Behavior::Update),
            Plan::Steps(vec![Step::Create { body: b[0].clone() }])
        );
    }

    #[test]
    fn behaviours() {
        let e = existing(5, &one(&marker("prod", "a", 10), "v1")[0]);
        let m = marker("prod", "b", 11);
        let b = one(&m, "v2");
        let create = Step::Create { body: b[0].clone() };
        assert_eq!(
            plan(std::slice::from_ref(&e), &b, &m, Behavior::New),
            Plan::Steps(vec![create.clone()])
        );
        assert_eq!(
            plan(std::slice::from_ref(&e), &b, &m, Behavior::HideAndNew),
            Plan::Steps(vec![
                create.clone(),
                Step::Minimize {
                    id: 5,
                    node_id: "IC_5".into()
                }
            ])
        );
        assert_eq!(
            plan(&[e], &b, &m, Behavior::DeleteAndNew),
            Plan::Steps(vec![create, Step::Delete { id: 5 }])
        );
    }

    #[test]
    fn update_grows_and_shrinks_the_number_of_parts() {
        let old = marker("prod", "a", 10);
        let long: String = (0..4000)
            .map(|i| format!("| w{i} | tenant | 8 |\n"))
            .collect();
        let parts = bodies(
            &format!("| w | t | g |\n|---|---|---:|\n{long}"),
            &old,
            4,
            "note",
        );
        assert!(parts.len() > 1);
        assert!(parts[1].contains("part 2 of"));
        let existing_parts: Vec<Existing> = parts
            .iter()
            .enumerate()
            .map(|(i, b)| existing(10 + i as u64, b))
            .collect();
        let m = marker("prod", "b", 11);
        let short = one(&m, "short now");
        let Plan::Steps(steps) = plan(&existing_parts, &short, &m, Behavior::Update) else {
            panic!()
        };
        assert_eq!(
            steps[0],
            Step::Update {
                id: 10,
                body: short[0].clone()
            }
        );
        assert_eq!(steps.len(), parts.len());
        assert!(steps[1..].iter().all(|s| matches!(s, Step::Delete { .. })));
    }
}
