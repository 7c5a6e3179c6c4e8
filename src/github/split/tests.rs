//! The splitter's tests: structure kept (fences closed, `<details>` balanced — checked with
//! pulldown-cmark, an independent parser), budgets held, every line kept in order, and random
//! documents of every shape.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};

use super::*;
use crate::doc::{Block, Doc, Table, Text};

const NOTE: &str = "_Report truncated: the full report is in the job summary._";

/// Checks a part with an independent parser: every fenced code block ends with a closing fence,
/// and `<details>` openings and closings in HTML balance without going negative.
fn assert_well_formed(part: &str) {
    let mut depth = 0i64;
    for (event, range) in Parser::new_ext(part, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                let block = &part[range];
                let lines: Vec<&str> = block.lines().collect();
                let open = lines.first().map_or("", |l| l.trim_start());
                let ch = open.chars().next().unwrap_or(' ');
                let open_len = open.chars().take_while(|&c| c == ch).count();
                let last = lines
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(_, l)| !l.trim().is_empty());
                let closed = last.is_some_and(|(k, l)| {
                    let l = l.trim();
                    k > 0 && l.chars().all(|c| c == ch) && l.chars().count() >= open_len
                });
                assert!(closed, "fence left open:\n{block}\n--- in part ---\n{part}");
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let lower = html.to_ascii_lowercase();
                let mut rest = lower.as_str();
                while let Some(lt) = rest.find('<') {
                    rest = &rest[lt..];
                    if rest.starts_with("</details>") {
                        depth -= 1;
                        assert!(depth >= 0, "</details> before its opening in:\n{part}");
                    } else if rest.starts_with("<details")
                        && rest[8..]
                            .chars()
                            .next()
                            .is_none_or(|c| c == '>' || c.is_whitespace())
                    {
                        depth += 1;
                    }
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
    }
    assert_eq!(depth, 0, "unbalanced <details> in part:\n{part}");
}

fn assert_within(parts: &[String], max_chars: usize) {
    for part in parts {
        let chars = part.chars().count();
        assert!(chars <= max_chars, "{chars} chars > {max_chars}:\n{part}");
        assert!(part.len() <= MAX_BYTES, "{} bytes", part.len());
    }
}

/// Every non-blank line of the document appears in the parts, in order.
fn assert_in_order(doc: &Doc, parts: &[String]) {
    let text = doc.markdown();
    let joined = parts.join("\n");
    let mut out = joined.lines();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        assert!(out.any(|o| o == line), "{line:?} missing or out of order");
    }
}

fn check(doc: &Doc, max_chars: usize, max_parts: usize) -> Vec<String> {
    let parts = split(doc, max_chars, max_parts, NOTE);
    assert!(!parts.is_empty() && parts.len() <= max_parts.max(1));
    assert_within(&parts, max_chars);
    for part in &parts {
        assert_well_formed(part);
    }
    parts
}

fn fence(lines: Vec<String>) -> Block {
    Block::Fence {
        info: "diff".into(),
        lines,
    }
}

fn diff_lines(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let sign = if i % 2 == 0 { '-' } else { '+' };
            format!(
                "{sign}   spec.template.spec.containers[{i}].resources.limits.nvidia.com/gpu: {i}"
            )
        })
        .collect()
}

fn big_diff_doc() -> Doc {
    let mut d = Doc::new();
    d.heading(2, "Drift");
    d.paragraph("One workload changed.");
    d.push(Block::Details {
        summary: "Diff of ns/Deployment/big".into(),
        body: vec![fence(diff_lines(3_000))],
    });
    d.paragraph("After the diff.");
    d
}

fn rows_table(n: usize) -> Table {
    Table::new(&["workload", "tenant", ">GPUs"]).rows(0..n, |i| {
        vec![
            format!("ns/Deployment/w-{i}").into(),
            format!("team-{}", i % 7).into(),
            (i % 9).to_string().into(),
        ]
    })
}

#[test]
fn short_document_is_one_identical_part() {
    let mut d = Doc::new();
    d.heading(2, "Title");
    d.paragraph("Some text → é 😀");
    d.push(Block::Details {
        summary: "More".into(),
        body: vec![fence(vec!["+a".into()])],
    });
    assert_eq!(split(&d, 65_536, 3, NOTE), vec![d.markdown()]);
    assert_eq!(truncate(&d, 1_000, NOTE), d.markdown());
}

#[test]
fn empty_document_gives_one_empty_part() {
    assert_eq!(split(&Doc::new(), 1_000, 3, NOTE), vec![String::new()]);
    assert_eq!(split(&Doc::new(), 1_000, 0, NOTE), vec![String::new()]);
    assert_eq!(truncate(&Doc::new(), 1_000, NOTE), "");
}

#[test]
fn small_blocks_are_cut_only_between_them() {
    let mut d = Doc::new();
    for i in 0..200 {
        d.heading(3, format!("Item {i}"));
        d.paragraph("word ".repeat(i % 37 + 1).trim_end());
        d.push(Block::Details {
            summary: format!("More on {i}").into(),
            body: vec![Block::List(vec!["a".into(), "b".into()])],
        });
    }
    let parts = check(&d, 2_000, 100);
    assert!(parts.len() > 5, "{} parts", parts.len());
    for part in &parts {
        assert!(!part.contains("(continued)"), "cut inside a block:\n{part}");
    }
    // Cut only at blank lines between top-level blocks: nothing added, nothing lost.
    assert_eq!(parts.join("\n"), d.markdown());
}

#[test]
fn huge_diff_in_details_is_closed_and_reopened() {
    let d = big_diff_doc();
    let parts = check(&d, 10_000, 50);
    assert!(parts.len() > 5, "{} parts", parts.len());
    assert!(parts[0].starts_with("## Drift\n\nOne workload changed.\n\n<details>"));
    let reopened = "<details><summary>Diff of ns/Deployment/big (continued)</summary>\n\n```diff\n";
    let closed = "```\n\n</details>\n";
    for part in &parts[1..parts.len() - 1] {
        assert!(part.starts_with(reopened), "{part}");
        assert!(part.ends_with(closed), "{part}");
    }
    assert!(parts[parts.len() - 1].ends_with("After the diff.\n"));
    assert_in_order(&d, &parts);
}

#[test]
fn huge_table_repeats_its_header() {
    let header = "| workload | tenant | GPUs |\n|---|---|---:|\n";
    let mut d = Doc::new();
    d.paragraph("Intro.");
    d.push(Block::Table(rows_table(2_000)));
    d.paragraph("Outro.");
    let parts = check(&d, 5_000, 100);
    assert!(parts.len() > 10);
    assert!(parts[0].starts_with("Intro.\n\n| workload"));
    for part in &parts[1..] {
        if part.contains("| ns/Deployment/") {
            assert!(part.starts_with(header), "{part}");
            let table = Parser::new_ext(part, Options::ENABLE_TABLES)
                .any(|e| matches!(e, Event::Start(Tag::Table(_))));
            assert!(table, "not a table:\n{part}");
        }
    }
    assert_in_order(&d, &parts);
}

#[test]
fn table_in_details_repeats_its_header_after_reopening() {
    let header = "| workload | tenant | GPUs |\n|---|---|---:|\n";
    let mut d = Doc::new();
    d.push(Block::Details {
        summary: "In sync (2000)".into(),
        body: vec![Block::Table(rows_table(2_000))],
    });
    let parts = check(&d, 5_000, 100);
    let reopened = format!("<details><summary>In sync (2000) (continued)</summary>\n\n{header}");
    for part in &parts[1..] {
        assert!(part.starts_with(&reopened), "{part}");
    }
    for part in &parts[..parts.len() - 1] {
        assert!(part.ends_with(" |\n\n</details>\n"), "{part}");
    }
    assert_in_order(&d, &parts);
}

#[test]
fn overflow_gives_max_parts_ending_with_the_note() {
    let d = big_diff_doc();
    for max_parts in 1..=4 {
        let parts = check(&d, 10_000, max_parts);
        assert_eq!(parts.len(), max_parts);
        let last = &parts[max_parts - 1];
        assert!(
            last.ends_with(&format!("```\n\n</details>\n\n{NOTE}")),
            "{last}"
        );
        // Filled as far as it goes: the room left is less than one more diff line.
        assert!(
            last.chars().count() > 10_000 - 200,
            "{}",
            last.chars().count()
        );
    }
    let one = truncate(&d, 10_000, NOTE);
    assert_eq!(one, split(&d, 10_000, 1, NOTE)[0]);
    assert!(one.ends_with(NOTE) && one.chars().count() <= 10_000);
}

#[test]
fn a_group_is_never_left_right_after_its_opening() {
    let mut d = Doc::new();
    d.paragraph("x".repeat(900));
    d.push(Block::Details {
        summary: "Big".into(),
        body: vec![Block::Table(rows_table(300))],
    });
    let parts = check(&d, 1_000, 100);
    assert_eq!(parts[0], format!("{}\n", "x".repeat(900)));
    assert!(
        parts[1].starts_with("<details><summary>Big</summary>"),
        "{}",
        parts[1]
    );
}

#[test]
fn multibyte_characters_near_cut_points() {
    let mut d = Doc::new();
    d.paragraph("Intro → café 😀");
    d.push(Block::Details {
        summary: "Diff of ns/é/→".into(),
        body: vec![fence(
            (0..400)
                .map(|i| format!("+ {}{}", "→é😀".repeat(i % 13), "x".repeat(i % 5)))
                .collect(),
        )],
    });
    d.push(Block::Table(Table::new(&["a", "b"]).rows(0..300, |i| {
        vec!["é😀→".repeat(i % 7).into(), i.to_string().into()]
    })));
    for max_chars in [700, 1_013, 4_099] {
        let parts = check(&d, max_chars, 1_000);
        assert_in_order(&d, &parts);
    }
}

#[test]
fn lines_longer_than_the_budget_are_hard_cut() {
    let mut d = Doc::new();
    d.paragraph("q".repeat(5_000));
    d.push(Block::Details {
        summary: "Long".into(),
        body: vec![fence(vec!["j".repeat(5_000)])],
    });
    let parts = check(&d, 1_000, 100);
    let joined: String = parts.concat();
    assert_eq!(joined.matches('q').count(), 5_000);
    assert_eq!(joined.matches('j').count(), 5_000);
}

#[test]
fn nested_details_reopen_outer_then_inner() {
    let mut d = Doc::new();
    d.push(Block::Details {
        summary: "Outer".into(),
        body: vec![
            Block::Paragraph("before".into()),
            Block::Details {
                summary: "Inner".into(),
                body: vec![fence(diff_lines(500))],
            },
        ],
    });
    let parts = check(&d, 3_000, 100);
    assert!(parts.len() > 3);
    for part in &parts[1..] {
        assert!(
            part.starts_with(
                "<details><summary>Outer (continued)</summary>\n\n<details><summary>Inner (continued)</summary>\n\n```diff\n"
            ),
            "{part}"
        );
    }
    assert_in_order(&d, &parts);
}

#[test]
fn repository_text_cannot_break_structure() {
    let hostile = "</details>\n```\n<!-- x --> @team #1 | `a` <details>";
    let mut d = Doc::new();
    d.push(Block::Details {
        summary: hostile.into(),
        body: vec![
            Block::Table(Table::new(&["a"]).rows(0..400, |_| vec![Text::new().code(hostile)])),
            Block::Paragraph(hostile.into()),
        ],
    });
    for part in check(&d, 2_000, 100) {
        assert!(!part.contains("\n```\n<!--"), "{part}");
    }
}

#[test]
fn tiny_and_pathological_inputs_stay_within_budget() {
    let d = big_diff_doc();
    assert_eq!(split(&d, 0, 3, NOTE), vec![String::new()]);
    for max_chars in [1, 5, 50, 199] {
        for max_parts in [1, 3] {
            let parts = split(&d, max_chars, max_parts, NOTE);
            assert_eq!(parts.len(), max_parts);
            assert_within(&parts, max_chars);
        }
    }
    let mut deep = Block::Paragraph(Text::from("qqqq\n".repeat(2_000)));
    for _ in 0..500 {
        deep = Block::Details {
            summary: "level".into(),
            body: vec![deep],
        };
    }
    let deep = Doc { blocks: vec![deep] };
    let note = "n".repeat(5_000);
    for max_chars in [1_000, 3_000] {
        // Nesting too deep to reopen is cut plainly; its text all stays.
        let parts = split(&deep, max_chars, 1_000, &note);
        assert_within(&parts, max_chars);
        assert_eq!(parts.concat().matches('q').count(), 8_000);
        let parts = split(&deep, max_chars, 2, &note);
        assert_eq!(parts.len(), 2);
        assert_within(&parts, max_chars);
    }
}

/// xorshift64: deterministic documents without a new crate.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "gpu",
    "tenant",
    "→",
    "café",
    "😀",
    "ns/Deployment/train",
    "`code`",
    "**bold**",
    "A100",
    "naïve",
    "日本語",
    "é",
    "limits",
    "`<details>`",
    "</details>",
    "```",
    "|",
    "@team",
];

fn words(rng: &mut XorShift, n: usize) -> String {
    let words: Vec<&str> = (0..n).map(|_| WORDS[rng.below(WORDS.len())]).collect();
    words.join(" ")
}

fn text(rng: &mut XorShift, n: usize) -> Text {
    if rng.below(3) == 0 {
        Text::new().plain(words(rng, n)).code(words(rng, 2))
    } else {
        Text::from(words(rng, n))
    }
}

fn table(rng: &mut XorShift, rows: usize) -> Block {
    let mut t = Table::new(&["workload", "tenant", ">GPUs"]);
    for i in 0..rows {
        t.row(vec![text(rng, 2), text(rng, 1), i.to_string().into()]);
    }
    Block::Table(t)
}

fn random_fence(rng: &mut XorShift, lines: usize) -> Block {
    let mut out = Vec::new();
    for _ in 0..lines {
        match rng.below(10) {
            0 => out.push(String::new()),
            1 => out.push("```".into()),
            _ => {
                let sign = ["+ ", "- ", "  "][rng.below(3)];
                let n = rng.below(12) + 1;
                out.push(format!("{sign}{}", words(rng, n)));
            }
        }
    }
    Block::Fence {
        info: ["diff", "yaml", ""][rng.below(3)].into(),
        lines: out,
    }
}

fn random_doc(rng: &mut XorShift) -> Doc {
    let scale = [3_000, 30_000, 120_000, 300_000][rng.below(4)];
    let target = rng.below(scale) + 200;
    let mut d = Doc::new();
    let mut size = 0;
    while size < target {
        let block = match rng.below(8) {
            0 => Block::Heading {
                level: 2,
                text: text(rng, 4),
            },
            1 => {
                let n = rng.below(20) + 1;
                Block::Paragraph(text(rng, n))
            }
            2 => {
                let rows = rng.below(300) + 1;
                table(rng, rows)
            }
            3 => {
                let rows = rng.below(600) + 1;
                Block::Details {
                    summary: text(rng, 3),
                    body: vec![table(rng, rows)],
                }
            }
            4 => {
                let lines = rng.below(400) + 1;
                random_fence(rng, lines)
            }
            5 => {
                let lines = rng.below(1_500) + 1;
                Block::Details {
                    summary: text(rng, 3),
                    body: vec![random_fence(rng, lines)],
                }
            }
            6 => {
                let (rows, lines) = (rng.below(100) + 1, rng.below(800) + 1);
                Block::Details {
                    summary: text(rng, 3),
                    body: vec![
                        table(rng, rows),
                        Block::Details {
                            summary: text(rng, 2),
                            body: vec![random_fence(rng, lines)],
                        },
                    ],
                }
            }
            _ => {
                let items = rng.below(50) + 1;
                Block::List((0..items).map(|_| text(rng, 3)).collect())
            }
        };
        size += Doc {
            blocks: vec![block.clone()],
        }
        .markdown()
        .len();
        d.push(block);
    }
    d
}

#[test]
fn random_documents_keep_structure_and_budget() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut overflows = 0;
    for case in 0..200 {
        let doc = random_doc(&mut rng);
        let max_chars = 1_000 + rng.below(59_001);
        let max_parts = 1 + rng.below(6);
        let parts = split(&doc, max_chars, max_parts, NOTE);
        let context = format!("case {case}: {max_chars} chars, {max_parts} parts");
        assert!(!parts.is_empty() && parts.len() <= max_parts, "{context}");
        for part in &parts {
            assert!(part.chars().count() <= max_chars, "{context}");
            assert!(part.len() <= MAX_BYTES, "{context}");
            assert_well_formed(part);
        }
        if parts[parts.len() - 1].ends_with(NOTE) {
            overflows += 1;
            assert_eq!(parts.len(), max_parts, "{context}");
        } else {
            assert_in_order(&doc, &parts);
        }
    }
    // Both paths are exercised.
    assert!((20..180).contains(&overflows), "{overflows} overflows");
}

#[test]
fn drift_report_with_300_workloads() {
    let mut d = Doc::new();
    d.heading(2, "Drift against Git");
    d.paragraph(Text::new().strong("300 workloads changed, 412 GPUs differ from Git"));
    for i in 0..300 {
        d.push(Block::Details {
            summary: format!("ns/Kind/name-{i}").into(),
            body: vec![fence(
                (0..20)
                    .map(|j| {
                        let sign = [' ', '-', '+'][j % 3];
                        format!("{sign}     nvidia.com/gpu: {j}  # container trainer-{j}")
                    })
                    .collect(),
            )],
        });
    }
    assert!(d.markdown().chars().count() > 4 * 60_000);
    let parts = check(&d, 60_000, 4);
    assert_eq!(parts.len(), 4);
    assert!(parts[3].ends_with(NOTE));
    for part in &parts {
        // Each workload's block is small: cuts fall between them.
        assert!(!part.contains("(continued)"), "{part}");
    }
    assert!(parts[0].starts_with("## Drift against Git\n\n**300 workloads"));
    let one = check(&d, 60_000, 1);
    assert!(one[0].ends_with(&format!("</details>\n\n{NOTE}")));
    let all = check(&d, 60_000, 10);
    assert!(!all[all.len() - 1].ends_with(NOTE));
    assert_in_order(&d, &all);
    for i in 0..300 {
        let summary = format!("<summary>ns/Kind/name-{i}</summary>");
        let n: usize = all.iter().map(|p| p.matches(&summary).count()).sum();
        assert_eq!(n, 1);
    }
}
