//! Input written by an attacker: text from a repository or a cluster never acts as a workflow
//! command on the Actions runner or as a terminal escape, and no secret gpuledger knows is printed
//! or written.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Output;

use super::support::{Repo, fixture, gpuledger};

/// The workflow commands the runner would execute from one stream, read as it reads them:
/// `::cmd::` at the start of a (left-trimmed) line, `##[cmd]` anywhere, nothing while stopped by
/// `::stop-commands::TOKEN` until `::TOKEN::`.
fn runner_commands(stream: &str) -> Vec<String> {
    let mut stopped: Option<String> = None;
    let mut found = Vec::new();
    for line in stream.lines() {
        let l = line.trim_start();
        if let Some(t) = &stopped {
            if l == format!("::{t}::") {
                stopped = None;
            }
            continue;
        }
        if let Some(t) = l.strip_prefix("::stop-commands::") {
            stopped = Some(t.to_string());
        } else if l.starts_with("::") || l.contains("##[") {
            found.push(line.to_string());
        }
    }
    found
}

fn streams(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn text_from_a_repository_never_acts_as_a_workflow_command() {
    let r = Repo::new();
    // A directory whose name holds a newline and a command; a kustomization in it that fails to
    // render; and a manifest whose names carry the legacy syntax.
    let evil = "apps/x\n::set-env name=NODE_OPTIONS::--require=/tmp/p.js";
    r.write(
        &format!("{evil}/kustomization.yaml"),
        "resources: [missing.yaml]\n##[set-output name=gpus;]0\n",
    )
    .write(
        "apps/y/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: a\n  namespace: \"##[add-path]/tmp/evil\"\n  labels: {tenant: \"::add-mask::x\"}\nspec:\n  template:\n    spec:\n      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n",
    )
    .commit("hostile");
    for format in ["table", "markdown", "json"] {
        let out = gpuledger(r.path())
            .args(["render", "--repo", ".", "--format", format])
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        assert!(
            stdout.contains("add-path"),
            "the hostile manifest is in the report: {stdout}"
        );
        assert_eq!(
            runner_commands(&stdout),
            Vec::<String>::new(),
            "{format}: {stdout}"
        );
        assert_eq!(
            runner_commands(&stderr),
            Vec::<String>::new(),
            "{format}: {stderr}"
        );
        if format == "json" {
            // The JSON stays exactly the report: parseable, with the names as they were.
            let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert!(j.to_string().contains("##[add-path]/tmp/evil"), "{j}");
        }
    }
    // Two runs never share a stop token.
    let token = |out: &Output| {
        let (stdout, _) = streams(out);
        stdout
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("::stop-commands::"))
            .map(str::to_string)
            .expect("quoted")
    };
    let run = || {
        gpuledger(r.path())
            .args(["render", "--repo", ".", "--format", "table"])
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap()
    };
    let (a, b) = (token(&run()), token(&run()));
    assert_ne!(a, b);
    assert_eq!(a.len(), "gpuledger-".len() + 32, "{a}");
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let r = Repo::new();
    r.write(
        "apps/y/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: \"a\\e]0;pwned\\a\\e[2J\"\n  namespace: ns\nspec:\n  template:\n    spec:\n      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n",
    )
    .write("apps/\x1b[2J\x1b]0;pwned\x07/kustomization.yaml", "resources: [missing.yaml]\n")
    .commit("escapes");
    for format in ["table", "markdown", "json"] {
        let out = gpuledger(r.path())
            .args(["render", "--repo", ".", "--format", format])
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        for (name, s) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(
                !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{format} {name}: {s:?}"
            );
        }
    }
}

/// A server that answers every request with 401 and a body that echoes what it was sent.
fn echoing_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 8192];
            let n = s.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).replace(['\r', '\n', '"'], " ");
            let body = format!("{{\"status\":\"error\",\"error\":\"denied: {request}\"}}");
            let _ = write!(
                s,
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

#[test]
fn secrets_echoed_back_by_a_server_are_never_printed_or_written() {
    const TOKEN: &str = "prom-secret-token-0123456789";
    let url = echoing_server();
    let with_password = url.replace("http://", "http://reader:hunter2-password@");
    for prometheus in [&url, &with_password] {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.md");
        let out = gpuledger(&fixture("."))
            .args(["inventory", "--snapshot", "fixtures/demo/cluster.yaml"])
            .args([
                "--config",
                "fixtures/demo/.gpuledger.yaml",
                "--format",
                "markdown",
            ])
            .args(["--prometheus", prometheus])
            .arg("--output")
            .arg(&report)
            .env("GPULEDGER_PROMETHEUS_TOKEN", TOKEN)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        let written = std::fs::read_to_string(&report).unwrap();
        if prometheus == &url {
            assert!(
                written.contains("Bearer \\*\\*\\*") || written.contains("Bearer ***"),
                "the server's answer, which echoes the token, is quoted: {written}"
            );
        }
        for secret in [TOKEN, "hunter2-password"] {
            for (what, s) in [
                ("stdout", &stdout),
                ("stderr", &stderr),
                ("report", &written),
            ] {
                assert!(!s.contains(secret), "{secret} in {what}: {s}");
            }
        }
    }
}

#[test]
fn kubeconfig_credentials_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("config");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: \"https://admin:kube-password-99@127.0.0.1:9\"}}]\nusers: [{name: u, user: {token: kube-token-abcdef123456}}]\n",
    )
    .unwrap();
    let out = gpuledger(dir.path())
        .args([
            "inventory",
            "--request-timeout",
            "2",
            "--timeout",
            "5",
            "--kubeconfig",
        ])
        .arg(&kubeconfig)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for secret in ["kube-password-99", "kube-token-abcdef123456"] {
        assert!(!stderr.contains(secret), "{stderr}");
        assert!(!stdout.contains(secret), "{stdout}");
    }
}

#[test]
fn messages_do_not_grow_with_the_input_they_quote() {
    let r = Repo::new();
    let huge = "a".repeat(200_000);
    r.write(
        "apps/x/kustomization.yaml",
        &format!("resources: [{huge}.yaml]\n"),
    )
    .commit("a huge missing resource");
    for format in ["table", "markdown", "json"] {
        let out = gpuledger(r.path())
            .args(["render", "--repo", ".", "--format", format])
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stdout.contains("more characters"),
            "{format}: the error is cut: {}",
            &stdout[..2000.min(stdout.len())]
        );
        assert!(
            stdout.len() + stderr.len() < 20_000,
            "{format}: {} bytes",
            stdout.len() + stderr.len()
        );
    }
}

#[test]
fn a_warning_that_quotes_data_never_becomes_a_workflow_command() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join("fleet.yaml");
    let long = "v".repeat(100);
    std::fs::write(
        &snapshot,
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: \"ns\\n::warning::from data\"\n  labels: {{\"x\\n::set-output name=drift::0\": {long}}}\n"
        ),
    )
    .unwrap();
    let out = gpuledger(dir.path())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(&snapshot)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(
        stderr.contains("set-output"),
        "the warning quotes the key: {stderr}"
    );
    assert_eq!(runner_commands(&stderr), Vec::<String>::new(), "{stderr}");
    assert_eq!(runner_commands(&stdout), Vec::<String>::new(), "{stdout}");
}

#[test]
fn usage_errors_echo_no_secret_and_no_command() {
    let out = gpuledger(&fixture("."))
        .args([
            "check",
            "--base",
            "main",
            "--fail-on",
            "x\n::error::injected",
        ])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_TOKEN", "ghs_usage_error_secret_99")
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("invalid value"), "{stderr}");
    assert_eq!(runner_commands(&stderr), Vec::<String>::new(), "{stderr}");
}

/// The block structure of a markdown text as pulldown-cmark reads it (GitHub's reading, give or
/// take): each block's start and end, and each piece of raw HTML — text left out.
fn structure(md: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Options, Parser};
    Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_GFM)
        .filter_map(|e| match e {
            Event::Start(t) => Some(format!("{t:?}").split([' ', '(', '{']).next()?.to_string()),
            Event::End(t) => Some(format!(
                "/{}",
                format!("{t:?}").split([' ', '(', '{']).next()?
            )),
            Event::Html(h) | Event::InlineHtml(h) => Some(format!("html {}", h.trim())),
            _ => None,
        })
        .collect()
}

/// Markup a hostile name or text carries: a `<details>` closed and another opened, a comment, a
/// mention, a reference, a code span, a table breaker and a heading marker.
const HOSTILE: &str = "x</details><details><summary>y</summary> <!-- c --> @octo #1 `z` | w ## h";

/// The same markup in a name: Kubernetes names are at most 63 characters, and gpuledger keeps no
/// more of one (a longer one from OpenCost would then name another namespace).
const HOSTILE_NAME: &str = "x</details><details><summary>y</summary><!--c-->@o #1`z`|w";

/// The same markup as one path segment (no `/`): opening tags that a raw value would leave open.
const HOSTILE_SEGMENT: &str = "x<details><summary>y<b>z <!-- c --> @octo #1 `z` | w ## h";

/// Asserts that `attacked` (a report with hostile values) has the block structure of `plain` (the
/// same report with plain values in their place): the same blocks that hold others (every
/// `<details>`, table, heading, quote and list; rows and cells may differ), no HTML from a value,
/// and as many `<details>` closed as opened. `shown` is how the hostile text appears escaped.
fn assert_same_structure(what: &str, plain: &str, attacked: &str, shown: &str) {
    assert!(
        attacked.contains(shown),
        "{what}: no {shown:?} in\n{attacked}"
    );
    let outline = |md: &str| -> Vec<String> {
        structure(md)
            .into_iter()
            // The writer's own marker (a comment or issue body's first line) carries hashes of
            // the content.
            .map(|e| match e.strip_prefix("html <!-- gpuledger:") {
                Some(rest) => format!("marker {}", rest.split(' ').next().unwrap_or_default()),
                None => e,
            })
            .filter(|e| {
                e.starts_with("html ")
                    || e.starts_with("marker ")
                    || ["Heading", "Table", "CodeBlock", "BlockQuote", "List"]
                        .contains(&e.trim_start_matches('/'))
            })
            .collect()
    };
    let (a, b) = (outline(plain), outline(attacked));
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert_eq!(
        a,
        b,
        "{what}: first difference at {first:?}: {:?} / {:?}\n{attacked}",
        first.map(|i| &a[i.saturating_sub(3)..(i + 3).min(a.len())]),
        first.map(|i| &b[i.saturating_sub(3)..(i + 3).min(b.len())]),
    );
    let html: Vec<&String> = b.iter().filter(|e| e.starts_with("html")).collect();
    assert!(
        html.iter()
            .all(|h| !h.contains("<!--") && !h.contains("summary>y") && !h.contains("<b>")),
        "{what}: {html:?}"
    );
    assert_eq!(
        html.iter().filter(|e| e.contains("<details>")).count(),
        html.iter().filter(|e| e.contains("</details>")).count(),
        "{what}: {html:?}"
    );
}

/// What a command printed, which must be a report.
fn stdout(out: Output) -> String {
    let (stdout, stderr) = streams(&out);
    assert!(!stdout.is_empty(), "no report: {stderr}");
    stdout
}

/// Issue 34, item 6: names from the cluster and texts from the configuration (acceptance reasons
/// and owners) carrying HTML, comments, headings, mentions and table breakers change no block of
/// the inventory, the drift report or the drift issue: the hostile run has exactly the block structure of the same
/// run with plain names.
#[test]
fn hostile_names_never_change_the_structure_of_a_report() {
    let fixture_text =
        std::fs::read_to_string(fixture("tests/fixtures/drift/cluster.yaml")).unwrap();
    let config =
        std::fs::read_to_string(fixture("tests/fixtures/drift/repo/.gpuledger.yaml")).unwrap();
    // The same namespace renamed twice: plainly, and with every kind of markup in the name; the
    // configuration's reasons and owners likewise.
    let named = |name: &str| {
        fixture_text
            .replace("name: llm-prod", &format!("name: \"{name}\""))
            .replace("namespace: llm-prod", &format!("namespace: \"{name}\""))
    };
    let configured = |text: &str| {
        config
            .replace("reason: ", &format!("reason: \"{text}\" # "))
            .replace("owner: \"@perf-team\"", &format!("owner: \"{text}\""))
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, text: &str, args: &[&str]| {
        let r = Repo::new();
        super::drift::copy_dir(&fixture("tests/fixtures/drift/repo"), r.path());
        r.write(".gpuledger.yaml", &configured(text));
        r.commit_at("gitops", "2026-11-30T09:00:00Z");
        let file = dir.path().join("cluster.yaml");
        std::fs::write(&file, named(name)).unwrap();
        stdout(
            gpuledger(r.path())
                .args(args)
                .args(["--now", "2026-11-30", "--snapshot"])
                .arg(&file)
                .output()
                .unwrap(),
        )
    };
    // What shows that the value reached the report: the name in both, and in the drift report the
    // configuration's texts (an expired rule's reason is quoted).
    for (args, shown) in [
        (
            &["inventory", "--format", "markdown"][..],
            "&lt;/details&gt;",
        ),
        (
            &["drift", "--repo", ".", "--format", "markdown"][..],
            "&lt;!-- c --&gt;",
        ),
        // The drift issue's body, as `github issue` would post it.
        (
            &[
                "github",
                "issue",
                "--scope",
                "s",
                "--dry-run",
                "--github-repo",
                "acme/gitops",
            ][..],
            "&lt;!-- c --&gt;",
        ),
    ] {
        assert_same_structure(
            &format!("{args:?}"),
            &run("x-plain", "plain text", args),
            &run(HOSTILE_NAME, HOSTILE, args),
            shown,
        );
    }
}

/// A repository whose directory, manifest names, namespace and tenant label carry markup, with a
/// kustomization whose error quotes its path: `main` has one plain app, `feature` adds these.
fn hostile_repo(name: &str, segment: &str) -> Repo {
    let r = Repo::new();
    r.write(
        "apps/plain/deploy.yaml",
        &super::render::deployment("plain", 1, 1)
            .replace("name: plain", "name: plain\n  namespace: serve"),
    )
    .commit("plain");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write(
        &format!("apps/{segment}/deploy.yaml"),
        &super::render::deployment("n", 2, 4).replace(
            "name: n\n",
            &format!(
                "name: \"{name}\"\n  namespace: \"{name}\"\n  labels: {{tenant: \"{name}\"}}\n  annotations: {{team: \"{name}\"}}\n"
            ),
        ),
    )
    .write(
        &format!("broken/{segment}/kustomization.yaml"),
        &format!("resources: [\"{segment}.yaml\"]\n"),
    )
    .commit("feature");
    r.git(&["checkout", "-q", "main"]);
    r
}

/// The pull-request comment (`check`) and `render`, from a repository whose paths, names, labels
/// and annotations carry markup.
#[test]
fn hostile_repository_text_never_changes_the_structure_of_check_or_render() {
    let (plain, attacked) = (
        hostile_repo("x-plain", "x-plain"),
        hostile_repo(HOSTILE_NAME, HOSTILE_SEGMENT),
    );
    let run = |r: &Repo, args: &[&str]| {
        stdout(
            gpuledger(r.path())
                .args(args)
                .args(["--format", "markdown"])
                .output()
                .unwrap(),
        )
    };
    for args in [
        &[
            "check",
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "feature",
            "--now",
            "2026-11-30",
        ][..],
        &["render", "--repo", ".", "--ref", "feature"][..],
    ] {
        let (p, a) = (run(&plain, args), run(&attacked, args));
        assert_same_structure(&format!("{args:?}"), &p, &a, "&lt;/details&gt;");
        assert_same_structure(&format!("{args:?}"), &p, &a, "&lt;summary&gt;y&lt;b&gt;");
    }
}

/// `headroom`, `plan` and `cost`, with a namespace (headroom, cost) or a job (plan) renamed plainly
/// and with markup.
#[test]
fn hostile_names_never_change_the_structure_of_headroom_plan_or_cost() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let read = |p: &str| std::fs::read_to_string(fixture(p)).unwrap();
    let headroom = |name: &str| {
        let cluster = write(
            "headroom.yaml",
            read("fixtures/headroom/cluster.yaml")
                .replace("namespace: serve", &format!("namespace: \"{name}\"")),
        );
        stdout(
            gpuledger(&fixture("."))
                .args(["headroom", "--format", "markdown", "--snapshot"])
                .arg(cluster)
                .arg("--repo")
                .arg(fixture("fixtures/headroom/repo"))
                .output()
                .unwrap(),
        )
    };
    let plan = |name: &str| {
        let seed = write(
            "seed.yaml",
            read("fixtures/plan/seed.yaml").replace("name: eval-a", &format!("name: \"{name}\"")),
        );
        stdout(
            gpuledger(&fixture("."))
                .args(["plan", "--jobs"])
                .arg(seed)
                .args(["--pool", "4", "--now", "2026-12-02T12:00:00Z"])
                .args(["--format", "markdown"])
                .output()
                .unwrap(),
        )
    };
    let cost = |name: &str| {
        let json_name = serde_json::to_string(name).unwrap();
        let renamed = |p: &str| {
            read(p).replace(
                "\"namespace\": \"eval\"",
                &format!("\"namespace\": {json_name}"),
            )
        };
        let oc = super::opencost_fake::OpenCost::start(&[(
            "/allocation",
            super::opencost_fake::Answer::ok(renamed(
                "tests/fixtures/opencost/allocation-gen2.json",
            )),
        )]);
        let cluster = write("cost.json", renamed("tests/fixtures/cost/cluster.json"));
        stdout(
            gpuledger(&fixture("."))
                .args(["cost", "--snapshot"])
                .arg(cluster)
                .args(["--opencost", &oc.url(), "--window", "1h"])
                .args(["--now", "2026-12-02T12:00:00Z", "--format", "markdown"])
                .output()
                .unwrap(),
        )
    };
    for (what, run) in [
        ("headroom", &headroom as &dyn Fn(&str) -> String),
        ("plan", &plan),
        ("cost", &cost),
    ] {
        assert_same_structure(
            what,
            &run("x-plain"),
            &run(HOSTILE_NAME),
            "&lt;/details&gt;",
        );
    }
}

/// `docs --check`, whose report quotes the document's file name and the stale values written in it.
#[test]
fn hostile_document_text_never_changes_the_structure_of_docs_check() {
    let page = "# GPU capacity\n\
        \n\
        The fleet has <!-- gpuledger:fact fleet.gpus.placeable int -->VALUE<!-- /gpuledger:fact --> placeable GPUs.\n";
    let run = |segment: &str, value: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(format!("cap-{segment}.md")),
            page.replace("VALUE", value),
        )
        .unwrap();
        let out = gpuledger(&fixture("."))
            .args(["docs", "--check", "--format", "markdown", "--repo"])
            .arg(dir.path())
            .args(["--snapshot", "fixtures/demo/cluster.yaml"])
            .args(["--config", "fixtures/demo/.gpuledger.yaml"])
            .output()
            .unwrap();
        stdout(out)
    };
    let value = "x</details><details><summary>y</summary> @octo #1 `z` | w ## h";
    let (plain, attacked) = (run("x-plain", "x-plain"), run(HOSTILE_SEGMENT, value));
    // The stale value, and the file's name.
    assert_same_structure("docs --check", &plain, &attacked, "&lt;/details&gt;");
    assert_same_structure(
        "docs --check",
        &plain,
        &attacked,
        "&lt;summary&gt;y&lt;b&gt;",
    );
}

/// `trend`, whose tenants and product lines come from the cluster's namespace labels as the real
/// Prometheus keeps them.
#[test]
fn hostile_labels_never_change_the_structure_of_trend() {
    use super::prometheus_harness::{Prometheus, Series};
    use super::trend::{ksm, ramp};
    let run = |name: &str| {
        let ramp = ramp(8.0);
        let prom = Prometheus::start(&[
            Series::cycling(
                "kube_pod_container_resource_requests",
                &ksm("chat-prod", "llm-0", "nvidia_com_gpu"),
                &ramp,
            ),
            Series::new(
                "kube_pod_container_resource_requests",
                &ksm("search", "idx-0", "nvidia_com_gpu"),
                8.0,
            ),
            Series::new(
                "kube_namespace_labels",
                &[
                    ("namespace", "chat-prod"),
                    ("label_tenant", name),
                    ("label_product_line", name),
                ],
                1.0,
            ),
        ]);
        stdout(
            gpuledger(&fixture("."))
                .args(["trend", "--prometheus", &prom.url()])
                .args(["--window", "40m", "--step", "10m", "--format", "markdown"])
                .output()
                .unwrap(),
        )
    };
    assert_same_structure(
        "trend",
        &run("x-plain"),
        &run(HOSTILE_NAME),
        "&lt;/details&gt;",
    );
}
