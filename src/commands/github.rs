//! `gpuledger github comment` and `gpuledger github issue`: compute the check or the drift as the
//! other commands do, then deliver it where GitHub users decide — the step summary and outputs of
//! the Actions run, warnings on the manifests, and the sticky comment or the tracking issue.
//!
//! The order is deliberate: the report is written to the summary and the JSON file before GitHub is
//! called, so a refused or failing API call loses nothing. A 403 on the pull request (a fork's
//! read-only token) becomes a warning, not a failure; any other API failure is an error (exit 2).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use super::{Exit, Note, Outcome, check, deliver, drift};
use crate::cli::{CommentArgs, GithubArgs, IssueArgs};
use gpuledger::doc::{Block, Doc, Text};
use gpuledger::github::actions::{self, Annotation};
use gpuledger::github::api::Repo;
use gpuledger::github::client::{GitHub, GitHubError, Retry};
use gpuledger::github::comment;
use gpuledger::github::event::Runtime;
use gpuledger::github::issue::Now;
use gpuledger::github::marker::{self, Marker};
use gpuledger::github::split;
use gpuledger::github::sync;
use gpuledger::live::kube::Progress;
use gpuledger::render::{arrow, check_doc, drift_issue_doc, render_check, report_doc};
use gpuledger::report::CheckReport;
use gpuledger::util::date::Timestamp;

pub fn comment(
    args: &CommentArgs,
    tokio: &tokio::runtime::Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<Outcome> {
    let rt = runtime()?;
    let (report, mut notes, exit) = check::compute(&args.check, &rt, tokio, progress)?;
    let c = &report.check;
    let repo = args.check.repo.as_path();
    let event_pr = rt.event.pull_request.as_ref();
    let pr = args.pr.or(event_pr.map(|p| p.number)).context(
        "no pull request: give --pr N, or run on a pull_request event (GITHUB_EVENT_PATH)",
    )?;
    let head = match (&args.head_sha, event_pr) {
        (Some(h), _) => h.clone(),
        (None, Some(p)) => p.head.sha.clone(),
        (None, None) => head_of(repo).context(
            "no head commit: give --head-sha, or run on a pull_request event (GITHUB_EVENT_PATH)",
        )?,
    };
    let slug = slug(&args.github, &rt)?;
    let scope = args.github.scope.as_str();

    let markdown = check_doc(&report);
    let footer = footer(scope, Some(&head), &rt);
    let report_path = write_json(&args.github, &rt, &report, &mut notes)?;
    let overflow = overflow_note(&rt);
    if let Some(p) = &rt.step_summary {
        actions::append_summary(p, &with_footer(&markdown, &footer), &overflow)
            .with_context(|| format!("cannot write the step summary {}", p.display()))?;
    }
    let unknown = || "unknown".to_string();
    if let Some(p) = &rt.output {
        let outputs = [
            (
                "drift",
                if c.live {
                    c.drift_introduced.len().to_string()
                } else {
                    unknown()
                },
            ),
            (
                "unmanaged_gpus",
                c.capacity
                    .as_ref()
                    .map_or_else(unknown, |x| x.unmanaged_live.to_string()),
            ),
            ("coverage", c.coverage_head.map_or_else(unknown, pct)),
            ("gpu_delta", c.gpu_delta.to_string()),
            ("report_path", path_text(report_path.as_deref())),
        ];
        actions::write_outputs(p, &outputs)
            .with_context(|| format!("cannot write the step outputs {}", p.display()))?;
    }

    let local_time = args.valid_at.or_else(|| commit_time(repo, &head));
    let mut ours = Marker::comment(scope, &head, local_time.unwrap_or_else(Timestamp::now));
    ours.posting = Some(posting_id(&rt));
    let max_parts = usize::from(args.max_comments);
    let no_change = c.gpu_delta == 0
        && c.tenants.iter().all(|t| t.delta == 0)
        && c.added.is_empty()
        && c.removed.is_empty()
        && c.reshaped.is_empty()
        && c.drift_introduced.is_empty();

    if args.github.dry_run {
        let bodies = comment::bodies(
            &markdown,
            &format!("\n{}", footer.markdown()),
            &ours,
            max_parts,
            &overflow,
        );
        say(
            &mut notes,
            format!(
                "dry run: {} comment(s) for {slug}#{pr}, scope {scope:?}; nothing was sent",
                bodies.len()
            ),
        );
        return Ok(Outcome {
            stdout: Some(bodies.join("\n\n")),
            notes,
            exit,
        });
    }

    let target = format!("{slug}#{pr}");
    let footer_md = footer.markdown();
    let job = sync::CommentJob {
        pr,
        author: &args.github.author,
        report: &markdown,
        footer: &footer_md,
        overflow: &overflow,
        max_parts,
        marker: ours,
        local_time: local_time.is_some(),
        behavior: args.behavior,
        skip_unchanged: args.skip_no_change && no_change,
    };
    let posted = with_client(&args.github, &rt, tokio, |gh| async move {
        sync::comment(
            &Repo {
                gh: &gh,
                slug: &slug,
            },
            job,
        )
        .await
    });
    let mut warnings = Vec::new();
    match posted {
        Ok(done) => notes.extend(done.into_iter().map(Note::Say)),
        Err(e) if e.is_forbidden() && rt.read_only_token() => {
            let why = format!(
                "cannot comment on {target}: {}, whose token is read-only; the report is in the job summary",
                if rt.from_fork() {
                    "this pull request comes from a fork"
                } else {
                    "Dependabot triggered this run"
                }
            );
            warnings.push(Annotation::at(None, "gpuledger".into(), why.clone()));
            say(&mut notes, format!("{why} ({e})"));
        }
        Err(e) => return Err(anyhow::Error::new(e).context(format!("posting to {target}"))),
    }
    let text = deliver(
        render_check(&report, args.check.output.format),
        args.check.output.output.as_deref(),
        &mut notes,
    )?
    .unwrap_or_default();
    let mut stdout = if rt.in_actions {
        // Text from the repository (render errors) must not act as workflow commands.
        quoted_for_actions(&text)
    } else {
        text
    };
    if rt.in_actions {
        warnings.extend(check_annotations(&report, &prefix(repo, &rt)));
        for l in actions::warnings(&warnings) {
            stdout.push_str(&l);
            stdout.push('\n');
        }
    }
    Ok(Outcome {
        stdout: Some(stdout),
        notes,
        exit,
    })
}

pub fn issue(
    args: &IssueArgs,
    tokio: &tokio::runtime::Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<Outcome> {
    let rt = runtime()?;
    let computed = drift::compute(
        &args.repo,
        &args.live,
        args.output.config.as_deref(),
        args.now,
        tokio,
        progress,
    )?;
    let complete = computed.complete();
    let drifting = computed.drifting;
    let drift::Computed {
        report, mut notes, ..
    } = computed;
    let d = report.drift.as_ref().context("drift was not computed")?;
    let slug = slug(&args.github, &rt)?;
    let scope = args.github.scope.as_str();
    let repo = args.repo.repo.as_deref().unwrap_or(Path::new("."));

    let markdown = drift_issue_doc(&report);
    let report_path = write_json(&args.github, &rt, &report, &mut notes)?;
    let overflow = overflow_note(&rt);
    if let Some(p) = &rt.step_summary {
        let full = with_footer(&report_doc(&report), &footer(scope, None, &rt));
        actions::append_summary(p, &full, &overflow)
            .with_context(|| format!("cannot write the step summary {}", p.display()))?;
    }
    let drifting_rows: Vec<(&str, &gpuledger::report::DriftRow)> = [
        ("unmanaged", &d.unmanaged),
        ("missing", &d.missing),
        ("changed", &d.changed),
    ]
    .into_iter()
    .flat_map(|(cat, rows)| rows.iter().map(move |r| (cat, r)))
    .collect();
    if let Some(p) = &rt.output {
        // Counts from a partial read would look known: they are unknown.
        let known = |v: String| if complete { v } else { "unknown".to_string() };
        let outputs = [
            ("drift", known(drifting_rows.len().to_string())),
            (
                "unmanaged_gpus",
                known(d.unmanaged.iter().map(|r| r.gpus).sum::<u64>().to_string()),
            ),
            (
                "coverage",
                known(d.coverage.map_or_else(|| "unknown".to_string(), pct)),
            ),
            ("report_path", path_text(report_path.as_deref())),
        ];
        actions::write_outputs(p, &outputs)
            .with_context(|| format!("cannot write the step outputs {}", p.display()))?;
    }
    let mut stdout = String::new();
    if rt.in_actions {
        let at = prefix(repo, &rt);
        let annotations: Vec<Annotation> = drifting_rows
            .iter()
            .filter(|(_, r)| r.git_source.is_some())
            .map(|(cat, r)| {
                Annotation::at(
                    r.git_source
                        .as_deref()
                        .map(|s| format!("{at}{s}"))
                        .as_deref(),
                    format!("GPU drift ({cat}): {}", r.id()),
                    arrow(r.git_shape.as_deref(), r.live_shape.as_deref()),
                )
            })
            .collect();
        for l in actions::warnings(&annotations) {
            let _ = writeln!(stdout, "{l}");
        }
    }
    if !complete {
        say(
            &mut notes,
            format!(
                "drift is not fully known, so the tracking issue for scope {scope:?} is left as it is"
            ),
        );
        return Ok(Outcome {
            stdout: Some(stdout),
            notes,
            exit: Exit::Error,
        });
    }

    let mut keys: Vec<String> = drifting_rows
        .iter()
        .map(|(cat, r)| {
            format!(
                "{cat} {}/{}/{}/{}",
                r.namespace, r.api_group, r.kind, r.name
            )
        })
        .collect();
    keys.sort();
    let mut ours = Marker::issue(scope, &marker::digest(keys.iter().map(String::as_str)));
    ours.report = Some(marker::digest([markdown.markdown().as_str()]));
    let head = ours.render();
    let footer = footer(scope, None, &rt);
    let body = format!(
        "{head}\n{}\n{}",
        split::truncate(
            &markdown,
            comment::BODY_CHARS - head.chars().count() - footer.markdown().chars().count() - 2,
            &overflow
        ),
        footer.markdown()
    );
    let now = Now {
        drifting,
        body,
        marker: ours,
        summary: d.summary.clone(),
    };
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("GPU drift: {scope}"));
    if args.github.dry_run {
        say(
            &mut notes,
            format!(
                "dry run: the tracking issue for scope {scope:?} in {slug} would {}; nothing was sent",
                if drifting {
                    "be opened or updated"
                } else {
                    "be closed if open"
                }
            ),
        );
        stdout.push_str(&now.body);
        return Ok(Outcome {
            stdout: Some(stdout),
            notes,
            exit: Exit::Clean,
        });
    }

    let job = sync::IssueJob {
        author: &args.github.author,
        label: &args.label,
        title: &title,
        now: &now,
    };
    let done = with_client(&args.github, &rt, tokio, |gh| async move {
        sync::issue(
            &Repo {
                gh: &gh,
                slug: &slug,
            },
            job,
        )
        .await
    })
    .map_err(|e| {
        anyhow::Error::new(e).context(format!(
            "keeping the drift issue in {}",
            args.github
                .github_repo
                .as_deref()
                .unwrap_or("the repository")
        ))
    })?;
    notes.extend(done.into_iter().map(Note::Say));
    if args.output.output.is_some() {
        let text = gpuledger::render::render(&report, args.output.format);
        deliver(text, args.output.output.as_deref(), &mut notes)?;
    }
    Ok(Outcome {
        stdout: Some(stdout),
        notes,
        exit: Exit::Clean,
    })
}

/// A note for standard error.
fn say(notes: &mut Vec<Note>, text: String) {
    notes.push(Note::Say(text));
}

fn runtime() -> anyhow::Result<Runtime> {
    Runtime::from_env(|k| std::env::var(k).ok()).map_err(anyhow::Error::msg)
}

/// Runs `work` with a client on the command's runtime. The token is read here and only handed to
/// the client.
fn with_client<T, F, Fut>(
    g: &GithubArgs,
    rt: &Runtime,
    tokio: &tokio::runtime::Runtime,
    work: F,
) -> Result<T, GitHubError>
where
    F: FnOnce(GitHub) -> Fut,
    Fut: std::future::Future<Output = Result<T, GitHubError>>,
{
    let setup = |message: String| GitHubError::Setup {
        api: g.api_url.clone(),
        message,
    };
    let token = std::env::var(&g.token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            setup(format!(
                "no token in ${}: set it (in Actions, `env: {}: ${{{{ github.token }}}}`), or name another variable with --token-env",
                g.token_env, g.token_env
            ))
        })?;
    // The runner's GraphQL URL belongs to the runner's API; another --api-url gets its own.
    let graphql = rt
        .graphql_url
        .as_deref()
        .filter(|_| rt.api_url.as_deref() == Some(g.api_url.as_str()));
    tokio.block_on(async {
        let gh = GitHub::new(&g.api_url, graphql, &token, Retry::default())?;
        work(gh).await
    })
}

/// Which run posted a comment: the parts of one posting share it.
fn posting_id(rt: &Runtime) -> String {
    match (&rt.run_id, &rt.run_attempt) {
        (Some(id), Some(attempt)) => format!("{id}.{attempt}"),
        (Some(id), None) => id.clone(),
        _ => Timestamp::now().to_string(),
    }
}

/// `text` between `::stop-commands::` and its end token, so no line of it is taken as a workflow
/// command by the runner.
fn quoted_for_actions(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let token = format!(
        "gpuledger-{}",
        marker::digest([
            Timestamp::now().to_string().as_str(),
            std::process::id().to_string().as_str(),
            text
        ])
    );
    format!(
        "::stop-commands::{token}\n{text}{}::{token}::\n",
        if text.ends_with('\n') { "" } else { "\n" }
    )
}

/// `owner/name` from the flag or the runtime, checked so it cannot bend the API path.
fn slug(g: &GithubArgs, rt: &Runtime) -> anyhow::Result<String> {
    let s = g
        .github_repo
        .clone()
        .or_else(|| rt.repository.clone())
        .context(
            "which repository? give --github-repo OWNER/NAME (Actions sets GITHUB_REPOSITORY)",
        )?;
    let ok = s.split('/').count() == 2
        && s.split('/').all(|p| {
            !p.is_empty()
                && p != "."
                && p != ".."
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        });
    anyhow::ensure!(ok, "{s:?} is not a repository: expected OWNER/NAME");
    Ok(s)
}

/// Writes the JSON report where asked (or under `RUNNER_TEMP` in Actions) and returns the path.
fn write_json<T: serde::Serialize>(
    g: &GithubArgs,
    rt: &Runtime,
    report: &T,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Option<PathBuf>> {
    // One file per scope by default: a job may post for several clusters.
    let path = g.report_path.clone().or_else(|| {
        let scope: String = g
            .scope
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        rt.runner_temp
            .as_ref()
            .map(|t| t.join(format!("gpuledger-report-{scope}.json")))
    });
    let Some(p) = path else { return Ok(None) };
    let text = serde_json::to_string_pretty(report).context("cannot serialize the report")?;
    std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
    say(notes, format!("JSON report written to {}", p.display()));
    Ok(Some(p))
}

/// The small print under a report: version, scope, head, and the run with the full report.
fn footer(scope: &str, head: Option<&str>, rt: &Runtime) -> Doc {
    let mut t = Text::new()
        .plain(format!("gpuledger {} · scope ", env!("CARGO_PKG_VERSION")))
        .code(scope);
    if let Some(h) = head {
        t = t.plain(" · head ").code(h.get(..12).unwrap_or(h));
    }
    if let Some(url) = rt.run_url() {
        t = t.plain(" · ").link("run and full report", url);
    }
    Doc {
        blocks: vec![Block::Small(t)],
    }
}

/// The report with its footer as the last block.
fn with_footer(report: &Doc, footer: &Doc) -> Doc {
    let mut d = report.clone();
    d.extend(footer.clone());
    d
}

fn overflow_note(rt: &Runtime) -> String {
    let t = match rt.run_url() {
        Some(url) => Text::new().emph(
            Text::new()
                .plain("The report is longer than fits here: the full report is in the ")
                .link("job summary", url)
                .plain("."),
        ),
        None => Text::new().emph(
            "The report is longer than fits here: run gpuledger locally (or see the JSON report) for the full report.",
        ),
    };
    let mut d = Doc::new();
    d.paragraph(t);
    d.markdown().trim_end().to_string()
}

/// `88.1` (percent, one decimal) from a 0..1 share.
fn pct(share: f64) -> String {
    format!("{:.1}", share * 100.0)
}

fn path_text(p: Option<&Path>) -> String {
    p.map(|p| p.display().to_string()).unwrap_or_default()
}

/// The repository's path from the workspace root, for annotation file names (`gitops/`, or empty).
fn prefix(repo: &Path, rt: &Runtime) -> String {
    let Some(ws) = &rt.workspace else {
        return String::new();
    };
    let (Ok(repo), Ok(ws)) = (repo.canonicalize(), ws.canonicalize()) else {
        return String::new();
    };
    match repo.strip_prefix(&ws) {
        Ok(rel) if rel.as_os_str().is_empty() => String::new(),
        Ok(rel) => format!("{}/", rel.display()),
        Err(_) => String::new(),
    }
}

/// Warnings on the manifests of the workloads the change adds, removes or reshapes, and on those
/// whose drift it introduces.
fn check_annotations(report: &CheckReport, at: &str) -> Vec<Annotation> {
    let c = &report.check;
    let introduced: BTreeSet<&str> = c.drift_introduced.iter().map(String::as_str).collect();
    let mut annotated = BTreeSet::new();
    let mut out = Vec::new();
    for (what, rows) in [
        ("added", &c.added),
        ("removed", &c.removed),
        ("reshaped", &c.reshaped),
    ] {
        for r in rows {
            let id = r.id();
            out.push(Annotation::at(
                r.source.as_deref().map(|s| format!("{at}{s}")).as_deref(),
                format!(
                    "GPUs {what}{}: {id}",
                    if introduced.contains(id.as_str()) {
                        ", introduces drift"
                    } else {
                        ""
                    },
                ),
                format!(
                    "{} ({} → {} GPUs, tenant {})",
                    arrow(r.shape_base.as_deref(), r.shape_head.as_deref()),
                    r.gpus_base,
                    r.gpus_head,
                    r.tenant
                ),
            ));
            annotated.insert(id);
        }
    }
    for w in c
        .drift_introduced
        .iter()
        .filter(|w| !annotated.contains(*w))
    {
        out.push(Annotation::at(
            None,
            format!("GPU drift introduced: {w}"),
            "this change makes Git and the live state disagree about this workload".to_string(),
        ));
    }
    out
}

/// The repository's HEAD commit (outside Actions, when no --head-sha is given).
fn head_of(repo: &Path) -> Option<String> {
    let r = git2::Repository::discover(repo).ok()?;
    let id = r.head().ok()?.peel_to_commit().ok()?.id();
    Some(id.to_string())
}

/// When `sha` was committed, from the repository (present with `fetch-depth: 0`).
fn commit_time(repo: &Path, sha: &str) -> Option<Timestamp> {
    let r = git2::Repository::discover(repo).ok()?;
    let oid = git2::Oid::from_str(sha).ok()?;
    let commit = r.find_commit(oid).ok()?;
    Some(Timestamp::from_unix(commit.committer().when().seconds()))
}
