//! The sticky pull-request comment: turn a report into comment bodies that fit GitHub's limit, and
//! decide — from the comments already on the pull request — what to create, edit, hide or delete.
//!
//! Deciding is pure ([`plan`]) so every rule is tested without a server:
//! - only comments whose first line is our marker with exactly our scope are ours (the caller
//!   also keeps only those written by the bot's own login, so nobody can forge one);
//! - a run for a commit that is no longer the pull request's head posts nothing; without that
//!   knowledge, a run never overwrites a posting for a commit with a later `valid-at`;
//! - the newest posting (its parts share a posting id) is the one to compare with: when its report
//!   digest equals ours nothing new is posted — for a new head its marker and footer are refreshed
//!   in place, silently;
//! - `update` edits the parts in place (adding or deleting parts when their number changed),
//!   `new` adds a new posting, `hide-and-new` and `delete-and-new` add one and then minimize or
//!   delete the earlier ones — in that order, so the pull request always shows a report.

use super::marker::{self, Marker};
use super::split;
use crate::doc::Doc;

/// GitHub's limit is 65,536 characters; stay clear of it.
pub const BODY_CHARS: usize = 60_000;

/// What to do with the earlier comment when the report changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The comment bodies for a report: `markdown` split to fit [`BODY_CHARS`] (past `max_parts` the
/// last part ends with `overflow_note`), each part led by the marker — numbered when there are
/// several, all carrying the report's digest — and the last one closed by `footer`.
pub fn bodies(
    doc: &Doc,
    footer: &str,
    marker: &Marker,
    max_parts: usize,
    overflow_note: &str,
) -> Vec<String> {
    let mut marker = marker.clone();
    // A digest the caller set already (one that leaves out what changes with every run) stands;
    // links point at the head commit, so the digest is of what the report says.
    if marker.report.is_none() {
        marker.report = Some(marker::digest([doc.unlinked().markdown().as_str()]));
    }
    // Room for the marker line, a "part 2 of 4" heading and the footer.
    let overhead = marker.render().chars().count() + footer.chars().count() + 80;
    let parts = split::split(doc, BODY_CHARS - overhead, max_parts.max(1), overflow_note);
    let n = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let mut m = marker.clone();
            let last = if i + 1 == n { footer } else { "" };
            if n > 1 {
                m.part = Some((i + 1, n));
                format!(
                    "{}\n**gpuledger report, part {} of {n}**\n\n{part}{last}",
                    m.render(),
                    i + 1
                )
            } else {
                format!("{}\n{part}{last}", m.render())
            }
        })
        .collect()
}

/// What to do, given our comments already there (any order), our new bodies and their marker,
/// and the pull request's current head when known.
pub fn plan(
    existing: &[Existing],
    bodies: &[String],
    ours: &Marker,
    behavior: Behavior,
    pr_head: Option<&str>,
) -> Plan {
    let ours_head = ours.head.as_deref().unwrap_or_default();
    if let Some(h) = pr_head
        && h != ours_head
    {
        return Plan::Skip(format!(
            "the pull request's head is now {}, this run is for {}",
            short(h),
            short(ours_head)
        ));
    }
    let current_head = pr_head.is_some();
    let mut mine: Vec<&Existing> = existing
        .iter()
        .filter(|e| e.marker.same_thread(ours))
        .collect();
    mine.sort_by_key(|e| e.id);
    let creates = || bodies.iter().map(|b| Step::Create { body: b.clone() });

    let Some(newest) = mine.iter().max_by_key(|e| (e.marker.valid_at, e.id)) else {
        return Plan::Steps(creates().collect());
    };
    if let (Some(theirs), Some(now)) = (newest.marker.valid_at, ours.valid_at)
        && theirs > now
        && !current_head
    {
        return Plan::Skip(format!(
            "the comment for scope {:?} is for a newer commit ({} at {theirs}); this run's commit is from {now}",
            ours.scope,
            short(newest.marker.head.as_deref().unwrap_or("unknown")),
        ));
    }
    // The newest posting's parts, in order.
    let mut current: Vec<&Existing> = mine
        .iter()
        .copied()
        .filter(|e| {
            e.marker.posting == newest.marker.posting
                && e.marker.head == newest.marker.head
                && e.marker.valid_at == newest.marker.valid_at
        })
        .collect();
    current.sort_by_key(|e| (e.marker.part.map_or(1, |p| p.0), e.id));

    let same_report = newest.marker.report.is_some()
        && current.len() == bodies.len()
        && current.iter().zip(bodies).all(|(e, b)| {
            Marker::find(b).is_some_and(|m| m.report == e.marker.report && m.part == e.marker.part)
        });
    if same_report {
        if newest.marker.head.as_deref() == Some(ours_head) {
            return Plan::Skip(format!(
                "the comment for scope {:?} already says this",
                ours.scope
            ));
        }
        // Same report for a newer commit: refresh marker and footer in place, post nothing new.
        return Plan::Steps(
            current
                .iter()
                .zip(bodies)
                .map(|(e, b)| Step::Update {
                    id: e.id,
                    body: b.clone(),
                })
                .collect(),
        );
    }

    let steps = match behavior {
        Behavior::Update => {
            let mut steps = Vec::new();
            for (i, body) in bodies.iter().enumerate() {
                match current.get(i) {
                    Some(e) if e.body == *body => {}
                    Some(e) => steps.push(Step::Update {
                        id: e.id,
                        body: body.clone(),
                    }),
                    None => steps.push(Step::Create { body: body.clone() }),
                }
            }
            steps.extend(
                current
                    .iter()
                    .skip(bodies.len())
                    .map(|e| Step::Delete { id: e.id }),
            );
            steps
        }
        Behavior::New => creates().collect(),
        Behavior::HideAndNew => creates()
            .chain(current.iter().map(|e| Step::Minimize {
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

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::date::Timestamp;

    fn at(h: u32) -> Timestamp {
        Timestamp::parse(&format!("2026-11-30T{h:02}:00:00Z")).unwrap()
    }

    fn marker(scope: &str, head: &str, hour: u32) -> Marker {
        let mut m = Marker::comment(scope, head, at(hour));
        m.posting = Some(format!("run-{head}-{hour}"));
        m
    }

    fn existing(id: u64, body: &str) -> Existing {
        Existing {
            id,
            node_id: format!("IC_{id}"),
            body: body.to_string(),
            marker: Marker::find(body).unwrap(),
        }
    }

    fn para(text: &str) -> Doc {
        let mut d = Doc::new();
        d.paragraph(text);
        d
    }

    fn one(m: &Marker, text: &str) -> Vec<String> {
        bodies(
            &para(text),
            "\n<sub>footer</sub>\n",
            m,
            4,
            "see the job summary",
        )
    }

    fn plan_now(e: &[Existing], b: &[String], m: &Marker, how: Behavior) -> Plan {
        plan(e, b, m, how, m.head.as_deref())
    }

    #[test]
    fn first_run_creates() {
        let m = marker("prod", "a", 10);
        let b = one(&m, "report");
        assert_eq!(
            plan_now(&[], &b, &m, Behavior::Update),
            Plan::Steps(vec![Step::Create { body: b[0].clone() }])
        );
        assert!(b[0].starts_with("<!-- gpuledger:comment scope=\"prod\" head=\"a\""));
        assert!(b[0].ends_with("report\n\n<sub>footer</sub>\n"), "{}", b[0]);
    }

    #[test]
    fn second_run_updates_and_the_same_report_is_not_posted_again() {
        let old = marker("prod", "a", 10);
        let e = existing(5, &one(&old, "report v1")[0]);
        let new = marker("prod", "b", 11);
        let b = one(&new, "report v2");
        assert_eq!(
            plan_now(std::slice::from_ref(&e), &b, &new, Behavior::Update),
            Plan::Steps(vec![Step::Update {
                id: 5,
                body: b[0].clone()
            }])
        );
        // Same commit, same report, another run (another posting id and footer): nothing.
        let mut again = marker("prod", "a", 10);
        again.posting = Some("rerun".into());
        let same = bodies(&para("report v1"), "\n<sub>run 2</sub>\n", &again, 4, "n");
        assert!(matches!(
            plan_now(std::slice::from_ref(&e), &same, &again, Behavior::New),
            Plan::Skip(_)
        ));
        // A new commit with the same report: the marker is refreshed in place, even with `new`.
        let newer = marker("prod", "c", 12);
        let b = one(&newer, "report v1");
        assert_eq!(
            plan_now(&[e], &b, &newer, Behavior::New),
            Plan::Steps(vec![Step::Update {
                id: 5,
                body: b[0].clone()
            }])
        );
    }

    #[test]
    fn a_run_for_an_old_commit_posts_nothing() {
        let newer = existing(5, &one(&marker("prod", "b", 12), "new")[0]);
        let old = marker("prod", "a", 9);
        // The pull request has moved on.
        let p = plan(
            std::slice::from_ref(&newer),
            &one(&old, "old"),
            &old,
            Behavior::Update,
            Some("b"),
        );
        assert!(
            matches!(&p, Plan::Skip(why) if why.contains("head is now b")),
            "{p:?}"
        );
        // Without knowing the head, valid-at decides.
        let p = plan(
            std::slice::from_ref(&newer),
            &one(&old, "old"),
            &old,
            Behavior::Update,
            None,
        );
        assert!(
            matches!(&p, Plan::Skip(why) if why.contains("newer commit")),
            "{p:?}"
        );
        // A force-push back to an older commit: it is the head, so it posts.
        let p = plan(
            &[newer],
            &one(&old, "old"),
            &old,
            Behavior::Update,
            Some("a"),
        );
        assert!(
            matches!(&p, Plan::Steps(s) if matches!(s[0], Step::Update { id: 5, .. })),
            "{p:?}"
        );
    }

    #[test]
    fn scopes_are_separate() {
        let non_prod = existing(5, &one(&marker("non-prod", "a", 10), "x")[0]);
        let m = marker("prod", "a", 10);
        let b = one(&m, "x");
        assert_eq!(
            plan_now(&[non_prod], &b, &m, Behavior::Update),
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
            plan_now(std::slice::from_ref(&e), &b, &m, Behavior::New),
            Plan::Steps(vec![create.clone()])
        );
        assert_eq!(
            plan_now(std::slice::from_ref(&e), &b, &m, Behavior::HideAndNew),
            Plan::Steps(vec![
                create.clone(),
                Step::Minimize {
                    id: 5,
                    node_id: "IC_5".into()
                }
            ])
        );
        assert_eq!(
            plan_now(&[e], &b, &m, Behavior::DeleteAndNew),
            Plan::Steps(vec![create, Step::Delete { id: 5 }])
        );
    }

    #[test]
    fn two_postings_of_one_commit_compare_with_the_newest() {
        // `new` posted twice for commit a (the live state changed between runs).
        let mut first = marker("prod", "a", 10);
        first.posting = Some("1".into());
        let mut second = first.clone();
        second.posting = Some("2".into());
        let e = [
            existing(5, &one(&first, "v1")[0]),
            existing(6, &one(&second, "v2")[0]),
        ];
        let mut third = first.clone();
        third.posting = Some("3".into());
        let b = one(&third, "v2");
        assert!(matches!(
            plan_now(&e, &b, &third, Behavior::New),
            Plan::Skip(_)
        ));
        let b = one(&third, "v3");
        assert_eq!(
            plan_now(&e, &b, &third, Behavior::HideAndNew),
            Plan::Steps(vec![
                Step::Create { body: b[0].clone() },
                Step::Minimize {
                    id: 6,
                    node_id: "IC_6".into()
                }
            ])
        );
    }

    #[test]
    fn update_grows_and_shrinks_the_number_of_parts() {
        let old = marker("prod", "a", 10);
        let long: String = (0..4000)
            .map(|i| format!("| w{i} | tenant | 8 |\n"))
            .collect();
        let parts = one(&old, &format!("| w | t | g |\n|---|---|---:|\n{long}"));
        assert!(parts.len() > 1);
        assert!(parts[1].contains("part 2 of"));
        assert!(parts.iter().all(|p| p.chars().count() <= BODY_CHARS));
        assert!(parts.last().unwrap().ends_with("<sub>footer</sub>\n"));
        let existing_parts: Vec<Existing> = parts
            .iter()
            .enumerate()
            .map(|(i, b)| existing(10 + i as u64, b))
            .collect();
        let m = marker("prod", "b", 11);
        let short = one(&m, "short now");
        let Plan::Steps(steps) = plan_now(&existing_parts, &short, &m, Behavior::Update) else {
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
