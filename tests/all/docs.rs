//! `gpuledger docs`: documents whose counted facts regenerate, on the demo fleet. What is listed,
//! what is rewritten (only the marked spans, byte for byte elsewhere, CRLF included), and what is
//! refused (a malformed marker, an unknown field, a document that is not UTF-8) without touching
//! the document.

use std::path::Path;

use super::support::{gpuledger, root};

const DEMO: [&str; 4] = [
    "--snapshot",
    "fixtures/demo/cluster.yaml",
    "--config",
    "fixtures/demo/.gpuledger.yaml",
];

/// A capacity page with one current fact, two stale ones, one unknown and a stale table.
const CAPACITY: &str = "# GPU capacity\n\
\n\
The fleet has <!-- gpuledger:fact fleet.gpus.placeable int -->503<!-- /gpuledger:fact --> placeable\n\
GPUs, <!-- gpuledger:fact fleet.utilisation percent -->81.0%<!-- /gpuledger:fact --> of them requested;\n\
<!-- gpuledger:fact tenants[name=assistant].gpus_requested -->180<!-- /gpuledger:fact --> hold the assistant.\n\
Busy: <!-- gpuledger:fact fleet.gpus.used -->300<!-- /gpuledger:fact -->.\n\
\n\
<!-- gpuledger:table excluded-nodes -->\n\
| node | old |\n\
|---|---|\n\
| gpu-h100-007 | x |\n\
<!-- /gpuledger:table -->\n\
\n\
Quoted, not filled: `<!-- gpuledger:fact fleet.gpus.placeable -->1<!-- /gpuledger:fact -->`.\n";

fn docs(dir: &Path, args: &[&str]) -> std::process::Output {
    gpuledger(&root())
        .arg("docs")
        .args(args)
        .args(["--repo", dir.to_str().unwrap()])
        .args(DEMO)
        .output()
        .unwrap()
}

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8(out.stdout.clone()).unwrap(),
        String::from_utf8(out.stderr.clone()).unwrap(),
    )
}

#[test]
fn check_lists_each_stale_and_unknown_fact_at_its_line_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("capacity.md"), CAPACITY).unwrap();
    std::fs::write(dir.path().join("other.md"), "no markers here\n").unwrap();
    let out = docs(dir.path(), &["--check", "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let (md, _) = text(&out);
    insta::assert_snapshot!("docs_check_markdown", md);
    let out = docs(dir.path(), &["--check"]);
    assert_eq!(out.status.code(), Some(1));
    let (table, _) = text(&out);
    insta::assert_snapshot!("docs_check_table", table);
    // The check writes nothing.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("capacity.md")).unwrap(),
        CAPACITY
    );
    let out = gpuledger(&root())
        .args(["docs", "--check", "--repo", dir.path().to_str().unwrap()])
        .args(DEMO)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["schema"], "gpuledger.report/v1");
    let json = &json["docs"];
    assert_eq!(json["markers"], 5);
    assert_eq!(json["stale"][0]["file"], "capacity.md");
    assert_eq!(json["stale"][0]["line"], 4);
    assert_eq!(json["stale"][0]["old"], "81.0%");
    assert_eq!(json["stale"][0]["new"], "85.5%");
    assert_eq!(json["unknown"][0]["new"], serde_json::Value::Null);
}

#[test]
fn the_check_fits_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("capacity.md"), CAPACITY).unwrap();
    let out = gpuledger(&root())
        .args(["docs", "--check", "--repo", dir.path().to_str().unwrap()])
        .args(DEMO)
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let (table, _) = text(&out);
    for l in table.lines() {
        assert!(l.chars().count() <= 80, "wider than 80: {l:?}");
    }
    insta::assert_snapshot!("docs_check_table_80", table);
}

#[test]
fn write_replaces_only_the_marked_spans_crlf_included_and_then_check_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let crlf = format!(
        "\u{feff}{}  trailing spaces  \r\nno newline at the end",
        CAPACITY.replace('\n', "\r\n")
    );
    let path = dir.path().join("capacity.md");
    std::fs::write(&path, &crlf).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let out = docs(dir.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = std::fs::read_to_string(&path).unwrap();

    // Outside the marked spans, the bytes are the original's: up to the table's opening marker
    // the document differs only in the two stale facts; from its closing marker on, not at all.
    let open = "<!-- gpuledger:table excluded-nodes -->";
    let head = &crlf[..crlf.find(open).unwrap() + open.len()];
    let tail = &crlf[crlf.find("<!-- /gpuledger:table -->").unwrap()..];
    let head = head
        .replace("-->81.0%<", "-->85.5%<")
        .replace("-->180<", "-->196<");
    assert!(written.starts_with(&head), "{written:?}");
    assert!(written.ends_with(tail), "{written:?}");
    assert!(written.starts_with('\u{feff}'));
    assert!(written.ends_with("  trailing spaces  \r\nno newline at the end"));
    assert!(
        !written.replace("\r\n", "").contains('\n'),
        "a bare LF was written"
    );
    assert!(written.contains("-->503<"));
    assert!(written.contains("-->85.5%<"));
    assert!(written.contains("-->196<"));
    // Unknown: the text is kept.
    assert!(written.contains("-->300<"));
    assert!(written.contains("| gpu-h100-044 | 8 | 0 | not-ready |"));
    // The quoted marker is text.
    assert!(
        written.contains("`<!-- gpuledger:fact fleet.gpus.placeable -->1<!-- /gpuledger:fact -->`")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["capacity.md"]);

    // Only the unknown is left, and it keeps --check failing: it cannot be confirmed.
    let out = docs(dir.path(), &["--check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let json = &json["docs"];
    assert_eq!(json["stale"], serde_json::json!([]));
    assert_eq!(json["unknown"][0]["marker"], "fleet.gpus.used");
    // Written again, nothing changes.
    let out = docs(dir.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
}

#[test]
fn bad_documents_are_errors_at_their_line_and_are_left_untouched() {
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "unclosed.md",
            b"a\n\nb <!-- gpuledger:fact fleet.gpus.placeable -->1\n",
            "unclosed.md:3:3: the gpuledger:fact marker is not closed",
        ),
        (
            "nested.md",
            b"<!-- gpuledger:table tenants -->\n<!-- gpuledger:fact fleet.gpus.placeable -->1<!-- /gpuledger:fact -->\n<!-- /gpuledger:table -->\n",
            "nested.md:2:1: a gpuledger:fact marker inside the gpuledger:table marker of line 1",
        ),
        (
            "unknown-field.md",
            b"x\n<!-- gpuledger:fact fleet.gpus.placable -->1<!-- /gpuledger:fact -->\n",
            "unknown-field.md:2: fleet.gpus.placable names no field of the report: fleet.gpus has no \"placable\"",
        ),
        (
            "latin1.md",
            b"caf\xe9 <!-- gpuledger:fact fleet.gpus.placeable -->1<!-- /gpuledger:fact -->\n",
            "latin1.md:1: is not UTF-8",
        ),
    ];
    for (name, bytes, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        // A good document beside it is still written.
        let good = dir.path().join("good.md");
        std::fs::write(&good, CAPACITY).unwrap();
        let out = docs(dir.path(), &["--write"]);
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
        let (stdout, stderr) = text(&out);
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(stdout.contains(says), "{name}: {stdout}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was touched");
        assert!(
            std::fs::read_to_string(&good)
                .unwrap()
                .contains("-->85.5%<")
        );
    }
}

#[test]
fn named_files_and_a_git_repository_without_its_ignored_files() {
    let repo = super::support::Repo::new();
    let p = repo.path();
    std::fs::create_dir_all(p.join("target")).unwrap();
    std::fs::create_dir_all(p.join("docs")).unwrap();
    std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
    let stale = "<!-- gpuledger:fact fleet.gpu_nodes -->1<!-- /gpuledger:fact -->\n";
    std::fs::write(p.join("target/copy.md"), stale).unwrap();
    std::fs::write(p.join("docs/fleet.markdown"), stale).unwrap();
    let out = docs(p, &["--check", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let json = &json["docs"];
    assert_eq!(json["documents"], 1, "{json}");
    assert_eq!(json["stale"][0]["file"], "docs/fleet.markdown");
    assert_eq!(json["stale"][0]["new"], "70");
    // A file named on the command line is read whatever git says of it.
    let out = gpuledger(&root())
        .args(["docs", "--write"])
        .arg(p.join("target/copy.md"))
        .args(DEMO)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(p.join("target/copy.md")).unwrap(),
        stale.replace(">1<", ">70<")
    );
    // Neither mode, or no document: a usage error.
    for args in [vec!["docs", "README.md"], vec!["docs", "--check"]] {
        let out = gpuledger(&root()).args(&args).args(DEMO).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// The README's demo figures and docs/documents.md's tenants table are marked facts: they are
/// checked against the demo fleet here, so they can never go stale (`scripts/readme-facts.sh`
/// rewrites them).
#[test]
fn the_readme_demo_figures_match_the_demo_fleet() {
    let out = gpuledger(&root())
        .args(["docs", "--check", "README.md", "docs/documents.md"])
        .args(DEMO)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let json = &json["docs"];
    assert!(
        json["markers"].as_u64().unwrap() >= 5,
        "the README marks its demo figures: {json}"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "README.md is stale; run scripts/readme-facts.sh: {json}"
    );
    // No fact opens a line, where markdown would take the line for HTML.
    assert!(json.get("warnings").is_none(), "{json}");
    // The marked table is a table to a markdown reader, not a paragraph beside the comments.
    let readme = std::fs::read_to_string(root().join("docs/documents.md")).unwrap();
    // The last one: the first is quoted in the example.
    let start = readme.rfind("<!-- gpuledger:table tenants -->").unwrap();
    let end = readme[start..].find("<!-- /gpuledger:table -->").unwrap() + start;
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let events: Vec<Event> = Parser::new_ext(
        &readme[start..end + "<!-- /gpuledger:table -->".len()],
        Options::ENABLE_TABLES,
    )
    .collect();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Start(Tag::Table(_)))),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Text(t) if t.as_ref() == "assistant")),
        "{events:?}"
    );
}

/// `check` reads the head's documents from git at the head ref and lists their stale facts;
/// `--fail-on stale-docs` fails on them, and fails closed without a live state.
#[test]
fn check_lists_the_heads_stale_facts_and_the_stale_docs_gate_fails_on_them() {
    let r = super::check::repo_with_feature_branch();
    r.git(&["checkout", "-q", "feature"]);
    r.write(
        "docs/capacity.md",
        "# Capacity\n\nWe have <!-- gpuledger:fact fleet.gpus.placeable -->112<!-- /gpuledger:fact --> GPUs,\nof which <!-- gpuledger:fact fleet.gpus.requested -->90<!-- /gpuledger:fact --> are requested; GitOps\ncovers <!-- gpuledger:fact drift.coverage percent0 -->50%<!-- /gpuledger:fact -->.\n",
    )
    .commit("a capacity page");
    // The working tree says otherwise; the check reads the head ref, not the working tree.
    r.write(
        "docs/capacity.md",
        "<!-- gpuledger:fact fleet.gpus.nope -->1<!-- /gpuledger:fact -->\n",
    );
    let snapshot = super::support::fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string();
    let run = |extra: &[&str]| {
        gpuledger(r.path())
            .args([
                "check", "--repo", ".", "--base", "main", "--head", "feature",
            ])
            .args(["--now", "2026-11-30"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[
        "--snapshot",
        &snapshot,
        "--fail-on",
        "stale-docs",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let docs = &j["check"]["docs"];
    assert_eq!(docs["markers"], 3, "{docs}");
    let stale: Vec<(String, u64, String, String)> = docs["stale"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["old"].as_str().unwrap().to_string(),
                f["new"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        stale[0],
        ("docs/capacity.md".into(), 4, "90".into(), "101".into())
    );
    // Drift against the head is there for the document too.
    assert_eq!(stale.len(), 2, "{stale:?}");
    assert_eq!(stale[1].1, 5);
    assert!(stale[1].3.ends_with('%'), "{stale:?}");
    let gate = &j["check"]["gates"][0];
    assert_eq!(
        (
            gate["name"].as_str(),
            gate["failed"].as_bool(),
            gate["unknown"].as_bool()
        ),
        (Some("stale-docs"), Some(true), Some(false))
    );
    assert!(
        gate["why"]
            .as_str()
            .unwrap()
            .contains("2 of 3 marked facts"),
        "{gate}"
    );

    // The comment lists them.
    let out = run(&["--snapshot", &snapshot, "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("### Documents"), "{md}");
    assert!(
        md.contains("| docs/capacity.md:4 | `fleet.gpus.requested` | 90 | 101 |"),
        "{md}"
    );

    // No live state: the gate cannot be evaluated, and fails.
    let out = run(&["--fail-on", "stale-docs", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &j["check"]["gates"][0];
    assert_eq!(
        (gate["failed"].as_bool(), gate["unknown"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(
        gate["why"]
            .as_str()
            .unwrap()
            .contains("needs the live state"),
        "{gate}"
    );
    assert!(j["check"].get("docs").is_none());
}

/// The drift issue lists the repository's stale facts after drift.
#[test]
fn the_drift_issue_lists_the_stale_facts() {
    let r = super::check::repo_with_feature_branch();
    r.write(
        "README.md",
        "Requested: <!-- gpuledger:fact fleet.gpus.requested -->90<!-- /gpuledger:fact -->.\n",
    )
    .commit("a readme");
    let snapshot = super::support::fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string();
    let out = gpuledger(r.path())
        .args(["github", "issue", "--repo", ".", "--snapshot", &snapshot])
        .args([
            "--github-repo",
            "acme/gitops",
            "--scope",
            "gpu-east",
            "--dry-run",
        ])
        .args(["--now", "2026-11-30"])
        .output()
        .unwrap();
    let body = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{body}");
    let docs = body.find("### Documents").expect(&body);
    let fleet = body.find("<summary>Fleet inventory").expect(&body);
    assert!(
        docs < fleet,
        "after drift, before the folded inventory: {body}"
    );
    assert!(
        body.contains("1 of 1 marked facts in 1 document is stale"),
        "{body}"
    );
    assert!(body.contains("README.md:1"), "{body}");
    assert!(body.contains("| 90 | 101 |"), "{body}");
}

/// A cluster read with pods forbidden: every count may be short, so no fact is confirmed or
/// rewritten, and the run is an error (exit 2), as `inventory` is.
#[test]
fn an_incomplete_read_rewrites_nothing() {
    use super::kube_emulator::{Emulator, EmulatorOptions};
    let emu = Emulator::start(EmulatorOptions {
        forbidden: vec!["pods".into()],
        ..EmulatorOptions::snapshot(super::support::fixture("fixtures/demo/cluster.yaml"))
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capacity.md");
    std::fs::write(&path, CAPACITY).unwrap();
    let out = gpuledger(&root())
        .args(["docs", "--write", "--repo", dir.path().to_str().unwrap()])
        .args(["--config", "fixtures/demo/.gpuledger.yaml", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let docs = &json["docs"];
    assert_eq!(docs["stale"], serde_json::json!([]), "{docs}");
    assert_eq!(docs["unknown"].as_array().unwrap().len(), 5, "{docs}");
    assert!(
        docs["unknown"][0]["unknown"]
            .as_str()
            .unwrap()
            .contains("the report is incomplete"),
        "{docs}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CAPACITY);
}

/// `--drift`: the documents' repository is the GitOps repository, and drift.* facts are filled
/// from drift against it; without the flag they are unknown.
#[test]
fn drift_facts_with_drift_and_unknown_without() {
    let dir = tempfile::tempdir().unwrap();
    super::drift::copy_dir(
        &super::support::fixture("tests/fixtures/drift/repo"),
        dir.path(),
    );
    let page = "GitOps covers <!-- gpuledger:fact drift.coverage percent0 -->0%<!-- /gpuledger:fact --> of requested GPUs.\n";
    std::fs::write(dir.path().join("CAPACITY.md"), page).unwrap();
    let snapshot = super::support::fixture("tests/fixtures/drift/cluster.yaml");
    let run = |extra: &[&str]| {
        gpuledger(&root())
            .args(["docs", "--repo", dir.path().to_str().unwrap(), "--snapshot"])
            .arg(&snapshot)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["--check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        json["docs"]["unknown"][0]["unknown"]
            .as_str()
            .unwrap()
            .contains("--drift"),
        "{json}"
    );
    let out = run(&["--write", "--drift"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("CAPACITY.md")).unwrap(),
        page.replace("-->0%<", "-->88%<")
    );
    assert_eq!(run(&["--check", "--drift"]).status.code(), Some(0));
}
