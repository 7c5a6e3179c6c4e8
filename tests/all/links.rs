//! The newcomer's way in: the README stays an entry point (under 20 KB, one demo command, one test
//! command, its pictures present), every relative link of the README and of docs/ reaches a file
//! and, with a `#fragment`, a heading of it (as GitHub makes anchors), and every command's
//! `--help` names its docs/ page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::support::{gpuledger, root};

/// The markdown files whose links are checked: the README and every page of docs/.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces
/// as `-`; a repeated anchor gets `-1`, `-2`, ….
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut heading: Option<String> = None;
    for e in Parser::new_ext(markdown, Options::all()) {
        match e {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let text = heading.take().unwrap_or_default();
                let base: String = text
                    .to_lowercase()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                    .map(|c| if c == ' ' { '-' } else { c })
                    .collect();
                let mut anchor = base.clone();
                let mut n = 0;
                while out.contains(&anchor) {
                    n += 1;
                    anchor = format!("{base}-{n}");
                }
                out.insert(anchor);
            }
            _ => {}
        }
    }
    out
}

/// Every link and image destination of a markdown file, with the `src` of its HTML images.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in Parser::new_ext(markdown, Options::all()) {
        match e {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                out.push(dest_url.to_string());
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                let mut rest = h.as_ref();
                while let Some(i) = rest.find("src=\"") {
                    rest = &rest[i + 5..];
                    if let Some(end) = rest.find('"') {
                        out.push(rest[..end].to_string());
                        rest = &rest[end..];
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn relative(from: &Path, link: &str) -> PathBuf {
    from.parent().unwrap().join(link)
}

#[test]
fn every_relative_link_of_the_readme_and_docs_reaches_its_file_and_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, fragment) = match link.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                doc.clone()
            } else {
                relative(&doc, file)
            };
            let name = doc.strip_prefix(root()).unwrap().display().to_string();
            if !target.exists() {
                broken.push(format!("{name}: {link}: no such file"));
                continue;
            }
            if let Some(a) = fragment {
                let md = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&md).contains(a) {
                    broken.push(format!("{name}: {link}: no such heading"));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_anchors_are_githubs() {
    let a = anchors(
        "# Metrics for Prometheus: `--format prometheus` and `gpuledger serve`\n## Two commands\n## Two commands\n",
    );
    assert!(
        a.contains("metrics-for-prometheus---format-prometheus-and-gpuledger-serve"),
        "{a:?}"
    );
    assert!(
        a.contains("two-commands") && a.contains("two-commands-1"),
        "{a:?}"
    );
}

#[test]
fn the_readme_is_an_entry_point_with_one_demo_and_one_test_command_and_its_pictures() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(text.len() <= 20 * 1024, "README.md is {} bytes", text.len());
    // Commands are the lines of its code blocks.
    let mut code = Vec::new();
    let mut in_code = false;
    for e in Parser::new_ext(&text, Options::all()) {
        match e {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) if in_code => code.extend(t.lines().map(str::to_string)),
            _ => {}
        }
    }
    let count = |cmd: &str| code.iter().filter(|l| l.trim() == cmd).count();
    assert_eq!(count("scripts/demo.sh"), 1, "one demo command");
    assert_eq!(count("scripts/test.sh"), 1, "one test command");
    for picture in [
        "docs/images/pr-comment.png",
        "docs/images/inventory-terminal.png",
    ] {
        assert!(text.contains(picture), "{picture}");
        let bytes = std::fs::read(root().join(picture)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{picture} is a PNG");
    }
    // The manual's index lists every page of docs/.
    let index = std::fs::read_to_string(root().join("docs/README.md")).unwrap();
    let listed: BTreeSet<String> = links(&index).into_iter().collect();
    for doc in documents().iter().skip(1) {
        let name = doc.file_name().unwrap().to_str().unwrap();
        if name != "README.md" {
            assert!(listed.contains(name), "docs/README.md does not list {name}");
        }
    }
    // Headings of level one: the README has one, its title.
    let h1 = Parser::new_ext(&text, Options::all())
        .filter(|e| {
            matches!(
                e,
                Event::Start(Tag::Heading {
                    level: HeadingLevel::H1,
                    ..
                })
            )
        })
        .count();
    assert_eq!(h1, 1);
}

#[test]
fn every_command_help_names_its_docs_page() {
    let commands: [&[&str]; 14] = [
        &[],
        &["inventory"],
        &["render"],
        &["drift"],
        &["snapshot"],
        &["check"],
        &["plan"],
        &["docs"],
        &["cost"],
        &["headroom"],
        &["serve"],
        &["trend"],
        &["github", "comment"],
        &["github", "issue"],
    ];
    for args in commands {
        let out = gpuledger(&root())
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let guide = help
            .lines()
            .find_map(|l| l.strip_prefix("Guide: "))
            .unwrap_or_else(|| panic!("gpuledger {args:?} --help names no guide:\n{help}"));
        let pages: Vec<&str> = guide
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| w.starts_with("docs/"))
            .map(|w| w.trim_end_matches('.'))
            .collect();
        assert!(!pages.is_empty(), "{args:?}: {guide}");
        for p in pages {
            assert!(
                root().join(p).is_file(),
                "{args:?} --help names {p}, which does not exist"
            );
        }
    }
}
