//! The terminal never cuts inside a word: drift, render and inventory of the demo fleet (with its
//! small GitOps repository) and of the drift fixture, laid out at 80 and 100 columns, against the
//! same reports laid out without a width limit. Every word of the narrow output must be a whole
//! word of the wide one, or a piece of one that ends or starts at a break the writer allows: after
//! a `/` (workload ids, paths), a `,`, or a `.` between two labels of a host or file name. A table
//! that cannot fit without a cut comes as records (`header: value · …`), which this reads too.

use std::collections::BTreeSet;

use super::support::{fixture, gpuledger, root};

const WIDTHS: [usize; 2] = [80, 100];

/// The command lines whose terminal output is checked.
fn commands() -> Vec<(&'static str, Vec<String>)> {
    let f = |p: &str| fixture(p).display().to_string();
    let demo = |cmd: &'static str, repo: bool| {
        let mut a = vec![
            cmd.to_string(),
            "--snapshot".into(),
            f("fixtures/demo/cluster.yaml"),
            "--config".into(),
            f("fixtures/demo/.gpuledger.yaml"),
        ];
        if repo {
            a.extend(["--repo".into(), f("fixtures/demo/repo")]);
        }
        a
    };
    let drift_fixture = |cmd: &'static str| {
        vec![
            cmd.to_string(),
            "--snapshot".into(),
            f("tests/fixtures/drift/cluster.yaml"),
            "--repo".into(),
            f("tests/fixtures/drift/repo"),
        ]
    };
    vec![
        ("demo inventory", demo("inventory", false)),
        ("demo inventory --by node", {
            let mut a = demo("inventory", false);
            a.extend(["--by".into(), "node".into()]);
            a
        }),
        ("demo drift", {
            let mut a = demo("drift", true);
            a.push("--no-fail".into());
            a
        }),
        (
            "demo render",
            vec![
                "render".into(),
                "--repo".into(),
                f("fixtures/demo/repo"),
                "--config".into(),
                f("fixtures/demo/.gpuledger.yaml"),
            ],
        ),
        ("drift fixture inventory", drift_fixture("inventory")),
        ("drift fixture drift", {
            let mut a = drift_fixture("drift");
            a.push("--no-fail".into());
            a
        }),
        (
            "drift fixture render",
            vec![
                "render".into(),
                "--repo".into(),
                f("tests/fixtures/drift/repo"),
            ],
        ),
    ]
}

fn run(args: &[String], columns: Option<usize>) -> String {
    let mut c = gpuledger(&root());
    c.args(args);
    if let Some(n) = columns {
        c.env("COLUMNS", n.to_string());
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "gpuledger {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A break the writer may make inside a word: after `/`, `,`, or a `.` followed by a letter.
fn may_break_after(word: &[char], i: usize) -> bool {
    match word.get(i) {
        Some('/' | ',') => true,
        Some('.') => word.get(i + 1).is_some_and(|c| c.is_alphabetic()),
        _ => false,
    }
}

/// The words of `narrow` that are neither whole words of `wide` nor pieces of one cut at an
/// allowed break (table rules, whose length follows the width, are not words).
fn cut_words(wide: &str, narrow: &str) -> Vec<String> {
    let whole: BTreeSet<&str> = wide.split_whitespace().collect();
    let words: Vec<Vec<char>> = whole.iter().map(|w| w.chars().collect()).collect();
    let mut cut = BTreeSet::new();
    for token in narrow.split_whitespace() {
        // A table too wide for the terminal comes as records, `header: value · header: value`:
        // the separator is not a word, and a header keeps its colon.
        let token = if whole.contains(token) {
            token
        } else {
            token.strip_suffix(':').unwrap_or(token)
        };
        if whole.contains(token) || token.chars().all(|c| c == '─') || token == "·" {
            continue;
        }
        let t: Vec<char> = token.chars().collect();
        let piece_of = |w: &Vec<char>| {
            (0..=w.len().saturating_sub(t.len())).any(|p| {
                w[p..].starts_with(&t)
                    && (p == 0 || may_break_after(w, p - 1))
                    && (p + t.len() == w.len() || may_break_after(w, p + t.len() - 1))
            })
        };
        if !words.iter().any(piece_of) {
            cut.insert(token.to_string());
        }
    }
    cut.into_iter().collect()
}

#[test]
fn the_checker_finds_the_cuts_the_issue_reported() {
    let wide = "DynamoGraphDeployment/llama api.chat.example.com enterprise-api.example.com 12.5%";
    assert!(cut_words(wide, "DynamoGraphDeployment/ llama api.chat. example.com").is_empty());
    assert_eq!(
        cut_words(wide, "DynamoGraphDe ployment/llama api.chat.exampl e.com"),
        [
            "DynamoGraphDe",
            "api.chat.exampl",
            "e.com",
            "ployment/llama"
        ]
    );
    assert_eq!(
        cut_words(wide, "enterprise- api.example.com 12. 5%"),
        ["12.", "5%", "api.example.com", "enterprise-"]
    );
}

#[test]
fn drift_render_and_inventory_cut_no_word_at_80_columns_and_wider() {
    for (name, args) in commands() {
        let wide = run(&args, None);
        for width in WIDTHS {
            let narrow = run(&args, Some(width));
            for l in narrow.lines() {
                assert!(
                    l.chars().count() <= width,
                    "{name} at {width} columns: a line of {} columns: {l:?}",
                    l.chars().count()
                );
            }
            let cut = cut_words(&wide, &narrow);
            assert!(
                cut.is_empty(),
                "{name} at {width} columns cuts words: {cut:?}\n{narrow}"
            );
        }
    }
}

#[test]
fn one_or_two_rows_past_a_terminal_limit_are_shown_not_counted() {
    let args: Vec<String> = [
        "inventory",
        "--snapshot",
        "fixtures/demo/cluster.yaml",
        "--config",
        "fixtures/demo/.gpuledger.yaml",
    ]
    .map(String::from)
    .to_vec();
    let out = run(&args, Some(80));
    for n in ["1", "2"] {
        assert!(!out.contains(&format!("… {n} more not shown")), "{out}");
    }
}
