//! `gpuledger github comment` and `gpuledger github issue`: compute the check or the drift as the
//! other commands do, then deliver it where GitHub users decide — the step summary and outputs of
//! the Actions run, warnings on the manifests, and the sticky comment or the tracking issue.
//!
//! The order is deliberate: the report is written to the summary and the JSON file before GitHub is
//! called, so a refused or failing API call loses nothing. A 403 on the pull request (a fork's
//! read-only token) becomes a warning, not a failure; any other API failure is an error (exit 2).
//!
//! `github comment --from-report FILE` posts a report that another run computed (a fork's pull
//! request, whose token cannot comment): the file is the JSON report a `github comment` wrote, and
//! it is checked (`gpuledger::github::relay`) before it takes the same way to the pull request.

use std::path::Path;

use anyhow::Context as _;

use super::{Done, Exit, check, deliver, fleet_spec, signals};
use crate::cli::change::{CommentArgs, GithubArgs, IssueArgs};
use gpuledger::github::actions::{self, Annotation};
use gpuledger::github::api::Repo;
use gpuledger::github::client::{GitHub, GitHubError, Retry};
use gpuledger::github::comment;
use gpuledger::github::event::Runtime;
use gpuledger::github::frame::{
    check_annotations, check_outputs, commit_of, commit_time, drift_annotations, drift_outputs,
    footer, head_of, issue_marker, links, no_change, overflow_note, posting_id, prefix, slug,
    with_footer, write_json,
};
use gpuledger::github::issue::Now;
use gpuledger::github::marker::{self, Marker};
use gpuledger::github::relay::{self, PullRef, Refused, Verdict, Written};
use gpuledger::github::split;
use gpuledger::github::sync;
use gpuledger::pipeline::{self, Context, Note, Outcome};
use gpuledger::render::{Links, check_doc, drift_issue_doc, render_check, report_doc};
use gpuledger::report::{CheckReport, Provenance};
use gpuledger::util::date::Timestamp;

pub fn comment(args: &CommentArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let tokio = cx.rt;
    if let Some(file) = &args.from_report {
        return comment_from_report(args, file, tokio);
    }
    let rt = runtime()?;
    let run = pipeline::check::run(&check::job(&args.check, args.github.named_scope()), cx)?;
    let (report, notes, exit) = (run.report, run.notes, run.outcome.into());
    let repo = args.check.repo.repo.as_deref().unwrap_or(Path::new("."));
    let event_pr = rt.event.pull_request.as_ref();
    let pr = args.pr.or(event_pr.map(|p| p.number)).context(
        "no pull request: give --pr N, or run on a pull_request event (GITHUB_EVENT_PATH)",
    )?;
    // The commit the check judged names the comment: its marker, footer and every blob link.
    // `--head REF` is that commit when given (the checkout may be another); a `--head-sha` or an
    // event that names a different commit would post one commit's verdict as another's.
    let judged = match &args.check.head {
        Some(r) => Some(
            commit_of(repo, Some(r))
                .with_context(|| format!("--head {r}: no such commit in {}", repo.display()))?,
        ),
        None => None,
    };
    let named = args
        .head_sha
        .clone()
        .or(event_pr.map(|p| p.head.sha.clone()));
    let head = match (judged, named) {
        (Some(j), Some(n)) if !j.starts_with(&n) && !n.starts_with(&j) => anyhow::bail!(
            "--head {} is commit {j}, but the pull request's head is {n}: the comment would \
             name a commit the check did not judge",
            args.check.head.as_deref().unwrap_or_default()
        ),
        (Some(j), _) => j,
        (None, Some(n)) => n,
        (None, None) => head_of(repo).context(
            "no head commit: give --head-sha, or run on a pull_request event (GITHUB_EVENT_PATH)",
        )?,
    };
    let slug = slug(args.github.github_repo.as_deref(), &rt)?;
    let local_time = args.valid_at.or_else(|| commit_time(repo, &head));
    let post = Post {
        rt,
        slug,
        pr,
        head,
        local_time,
        repo: Some(repo),
    };
    post_check(args, &post, report, notes, exit, tokio)
}

/// Where and as what a check report is posted.
struct Post<'a> {
    rt: Runtime,
    slug: String,
    pr: u64,
    head: String,
    /// The head commit's time, from the local clone.
    local_time: Option<Timestamp>,
    /// The checked-out repository: manifest links and annotations are relative to it. `None` for a
    /// relayed report, whose run had the checkout.
    repo: Option<&'a Path>,
}

/// Delivers a check report: step summary, outputs and report file, then the comment, then the
/// report on standard output and the annotations.
fn post_check(
    args: &CommentArgs,
    post: &Post,
    report: CheckReport,
    mut notes: Vec<Note>,
    exit: Exit,
    tokio: &tokio::runtime::Runtime,
) -> anyhow::Result<Done> {
    let Post {
        rt,
        slug,
        pr,
        head,
        local_time,
        repo,
    } = post;
    let (pr, local_time) = (*pr, *local_time);
    let c = &report.check;
    let scope = args.github.scope.as_str();
    let blob_links = match repo {
        Some(r) => links(rt, slug, head, r),
        None => links(rt, slug, head, Path::new("")),
    };
    let markdown = check_doc(&report, &blob_links);
    let footer = footer(scope, Some(head), rt);
    let written = Written {
        report: &report,
        pull_request: Some(PullRef {
            number: pr,
            head_sha: head.clone(),
        }),
    };
    let report_path = report_file(&args.github, rt, &written, &mut notes)?;
    let overflow = overflow_note(rt);
    if let Some(p) = &rt.step_summary {
        actions::append_summary(p, &with_footer(&markdown, &footer), &overflow)
            .with_context(|| format!("cannot write the step summary {}", p.display()))?;
    }
    if let Some(p) = &rt.output {
        actions::write_outputs(p, &check_outputs(c, report_path.as_deref()))
            .with_context(|| format!("cannot write the step outputs {}", p.display()))?;
    }

    let mut ours = Marker::comment(scope, head, local_time.unwrap_or_else(Timestamp::now));
    ours.posting = Some(posting_id(rt));
    // "The same report" leaves out the provenance line: its commits and read time change with every
    // push and every run, and a push that changes no GPUs must post nothing new.
    let mut bare = report.clone();
    bare.provenance = Provenance {
        scope: report.provenance.scope.clone(),
        ..Provenance::default()
    };
    // Nor do links, which point at the head: the digest is of what the report says.
    ours.report = Some(marker::digest([check_doc(&bare, &Links::default())
        .markdown()
        .as_str()]));
    let max_parts = usize::from(args.max_comments);
    let no_change = no_change(c);

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
        return Ok(Done {
            commands: Vec::new(),
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
        behavior: args.behavior.into(),
        skip_unchanged: args.skip_no_change && no_change,
    };
    let posted = with_client(&args.github, rt, tokio, |gh| async move {
        sync::comment(&Repo { gh: &gh, slug }, job).await
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
        render_check(
            &report,
            args.check.format.into(),
            &args.check.output.style(),
        ),
        args.check.output.output.as_deref(),
        &mut notes,
    )?
    .unwrap_or_default();
    // Under Actions the report is quoted so no line of it acts as a workflow command (src/output.rs);
    // the annotations are gpuledger's own commands, written after it.
    let mut commands = Vec::new();
    if rt.in_actions {
        // A relayed report's manifests are in the pull request's run, not in this one.
        if let Some(r) = repo {
            warnings.extend(check_annotations(&report, &prefix(r, rt)));
        }
        commands = actions::warnings(&warnings);
    }
    Ok(Done {
        commands,
        stdout: Some(text),
        notes,
        exit,
    })
}

/// `github comment --from-report FILE`: the report another run computed, posted once its claims
/// hold. It was gated where it was computed; here it only informs, so it exits 0 when posted.
fn comment_from_report(
    args: &CommentArgs,
    file: &Path,
    tokio: &tokio::runtime::Runtime,
) -> anyhow::Result<Done> {
    let rt = runtime()?;
    let refused = |e: Refused| anyhow::anyhow!("not posting {}: {e}", file.display());
    let relayed = relay::read(file).map_err(refused)?;
    let run = rt.event.workflow_run.as_ref();
    let pr = relay::check_claims(
        &relayed,
        run,
        args.pr,
        args.head_sha.as_deref(),
        &args.github.scope,
    )
    .map_err(refused)?;
    let slug = slug(args.github.github_repo.as_deref(), &rt)?;
    let mut notes = Vec::new();
    if !args.github.dry_run {
        let pull = with_client(&args.github, &rt, tokio, |gh| {
            let slug = slug.clone();
            async move {
                Repo {
                    gh: &gh,
                    slug: &slug,
                }
                .pull(pr)
                .await
            }
        })
        .map_err(|e| anyhow::Error::new(e).context(format!("reading pull request #{pr}")))?;
        if let Verdict::Moved(why) = relay::check_pull(&relayed, &pull, run).map_err(refused)? {
            say(&mut notes, format!("{why}: nothing posted"));
            return Ok(Done {
                commands: Vec::new(),
                stdout: Some(String::new()),
                notes,
                exit: Exit::Clean,
            });
        }
    }
    say(
        &mut notes,
        format!(
            "relaying {} for {slug}#{pr} at {}: its pull request and head commit match the run that made it",
            file.display(),
            relayed.claims.head_sha
        ),
    );
    let post = Post {
        rt,
        slug,
        pr,
        head: relayed.claims.head_sha.clone(),
        // The commit is not checked out here: its time comes from the API.
        local_time: args.valid_at,
        repo: None,
    };
    post_check(args, &post, relayed.report, notes, Exit::Clean, tokio)
}

pub fn issue(args: &IssueArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let tokio = cx.rt;
    let rt = runtime()?;
    let mut spec = fleet_spec(
        &args.live,
        signals(
            &args.live,
            &args.metrics,
            Some(&args.trend),
            Some(&args.cost),
        ),
        &args.clock,
        args.output.config(),
    );
    spec.repo = Some(args.repo.spec());
    spec.scope = args.github.named_scope();
    // Drift is what the issue is about, never a failure of the run that keeps it.
    let run = pipeline::drift::run(&spec, true, cx)?;
    let complete = run.outcome != Outcome::Incomplete;
    let (report, mut notes) = (run.report, run.notes);
    let d = report.drift.as_ref().context("drift was not computed")?;
    let drifting = d.drifting();
    let slug = slug(args.github.github_repo.as_deref(), &rt)?;
    let scope = args.github.scope.as_str();
    let repo = args.repo.at.repo.as_deref().unwrap_or(Path::new("."));

    let git_sha = commit_of(repo, args.repo.git_ref.as_deref());
    let blob = git_sha
        .as_deref()
        .map(|sha| links(&rt, &slug, sha, repo))
        .unwrap_or_default();
    // The repository's documents whose marked facts the live state contradicts, at the ref
    // drift was computed for (read, never run).
    let docs = pipeline::facts::status_of_repo(repo, args.repo.git_ref.as_deref(), &report)?;
    let markdown = drift_issue_doc(&report, &blob, Some(&docs));
    let report_path = report_file(&args.github, &rt, &report, &mut notes)?;
    let overflow = overflow_note(&rt);
    if let Some(p) = &rt.step_summary {
        let full = with_footer(&report_doc(&report), &footer(scope, None, &rt));
        actions::append_summary(p, &full, &overflow)
            .with_context(|| format!("cannot write the step summary {}", p.display()))?;
    }
    if let Some(p) = &rt.output {
        actions::write_outputs(p, &drift_outputs(d, complete, report_path.as_deref()))
            .with_context(|| format!("cannot write the step outputs {}", p.display()))?;
    }
    let mut stdout = String::new();
    let commands = if rt.in_actions {
        actions::warnings(&drift_annotations(d, &prefix(repo, &rt)))
    } else {
        Vec::new()
    };
    if !complete {
        say(
            &mut notes,
            format!(
                "drift is not fully known, so the tracking issue for scope {scope:?} is left as it is"
            ),
        );
        return Ok(Done {
            commands,
            stdout: Some(stdout),
            notes,
            exit: Exit::Error,
        });
    }

    let ours = issue_marker(scope, d, &markdown);
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
        return Ok(Done {
            commands,
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
        let text = gpuledger::render::render(&report, args.format.into(), &args.output.style());
        deliver(text, args.output.output.as_deref(), &mut notes)?;
    }
    Ok(Done {
        commands,
        stdout: Some(stdout),
        notes,
        exit: Exit::Clean,
    })
}

/// Writes the JSON report (where asked, or under `RUNNER_TEMP`) and says where.
fn report_file<T: serde::Serialize>(
    g: &GithubArgs,
    rt: &Runtime,
    report: &T,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let path = write_json(g.report_path.as_deref(), &g.scope, rt, report)?;
    if let Some(p) = &path {
        say(notes, format!("JSON report written to {}", p.display()));
    }
    Ok(path)
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
    gpuledger::util::redact::register(&token);
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
