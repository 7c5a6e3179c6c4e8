//! A seeded mutation test over every reader of outside input: snapshot YAML and JSON (the same
//! reader takes kustomize and helm output), `.gpuledger.yaml`, GitHub comment markers and event
//! payloads, timestamps and quantities — in process for thousands of cases, and through the binary
//! for a few dozen. Each case is bounded in time; none may panic; a reader either reads or returns
//! an error that names its file; the binary exits 0 or 2 and its JSON parses.
//!
//! Deterministic (fixed seeds), so a failure reproduces. Every input that ever broke a reader stays
//! in [`REGRESSIONS`] under a name.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::time::Duration;

use gpuledger::analysis::inventory::inventory;
use gpuledger::config::Config;
use gpuledger::github::event::Runtime;
use gpuledger::github::marker::Marker;
use gpuledger::k8s::quantity::Quantity;
use gpuledger::k8s::read::read_str;
use gpuledger::render::{Format, Style, render};
use gpuledger::util::date::{Date, Timestamp};

use super::support::{fixture, gpuledger};

/// The longest one case may take, however hostile (a debug build on a loaded 2-core machine).
const CASE_LIMIT: Duration = Duration::from_secs(20);

/// Inputs that once crashed or hung a reader: (name, reader, input).
const REGRESSIONS: &[(&str, &str, &str)] = &[
    // Byte-index slicing of a timestamp with a multi-byte character (issue 12, class 1).
    ("multibyte-timestamp", "timestamp", "2026-11-30T09:1ž:44Z"),
    ("multibyte-date", "timestamp", "2026-1ž-30T09:12:44Z"),
    (
        "multibyte-valid-at",
        "marker",
        "<!-- gpuledger:comment scope=\"prod\" head=\"abc\" valid-at=\"2026-11-30Tžž:00:00Z\" -->",
    ),
    ("quantity-sign-only", "quantity", "-"),
    ("quantity-exponent-multibyte", "quantity", "1ež"),
    (
        "gpu-shape-overflow",
        "snapshot",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: n}\nspec:\n  replicas: 4611686018427387904\n  template:\n    spec:\n      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]\n",
    ),
    (
        "gpu-sum-overflow",
        "snapshot",
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {capacity: {nvidia.com/gpu: '18446744073709551615'}, allocatable: {nvidia.com/gpu: '18446744073709551615'}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\nstatus: {capacity: {nvidia.com/gpu: '18446744073709551615'}, allocatable: {nvidia.com/gpu: '18446744073709551615'}}\n",
    ),
    (
        "flow-mapping",
        "snapshot",
        "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: n}}\n",
    ),
    (
        "bom-json",
        "snapshot",
        "\u{FEFF}{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}",
    ),
    (
        "alias-bomb",
        "snapshot",
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
    ),
];

/// Tokens the mutator splices in: YAML and JSON structure, numbers at the edges, multi-byte and
/// control characters, and the keys gpuledger reads.
const DICTIONARY: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ": ",
    "- ",
    ",",
    "\"",
    "'",
    "\n",
    "\r\n",
    "\t",
    "---\n",
    "...\n",
    "&a ",
    "*a",
    "!!binary ",
    "!!str ",
    "? ",
    "|\n",
    ">-\n",
    "%YAML 1.2\n",
    "\u{FEFF}",
    "\0",
    "é",
    "ž",
    "日本",
    "\u{202E}",
    "\u{1b}[2J",
    "-1",
    "0",
    "1e308",
    "NaN",
    "0x10",
    "1.5",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775808",
    "4611686018427387904",
    "99999999999999999999999",
    "500m",
    "2Ki",
    "1E",
    "nvidia.com/gpu",
    "kind: List\nitems:\n",
    "replicas: ",
    "ownerReferences: [{kind: Job, name: x, uid: u}]",
    "uid: u",
    "null",
    "~",
    "true",
    "apiVersion: v1\n",
    "kind: Pod\n",
    "metadata:\n",
    "  name: ",
    "namespace: ",
];

/// xorshift64*: small, seeded, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One to four edits of `seed`, at character boundaries.
fn mutate(seed: &str, rng: &mut Rng) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(s.len() + 1);
        match rng.below(5) {
            0 => {
                let end = (at + rng.below(16)).min(s.len());
                s.drain(at..end);
            }
            1 => {
                let end = (at + rng.below(64)).min(s.len());
                let copy: Vec<char> = s[at..end].to_vec();
                let to = rng.below(s.len() + 1);
                s.splice(to..to, copy);
            }
            2 if at < s.len() => {
                // Replace one character by a neighbour in its line's alphabet.
                s[at] = char::from_u32(s[at] as u32 ^ (1 << rng.below(5))).unwrap_or('?');
            }
            _ => {
                let t = DICTIONARY[rng.below(DICTIONARY.len())];
                s.splice(at..at, t.chars());
            }
        }
    }
    s.into_iter().collect()
}

/// Runs `f` on its own thread: a panic or a case over [`CASE_LIMIT`] fails the test, naming the
/// reader and the input.
fn bounded(reader: &str, input: &str, f: impl FnOnce() -> Result<(), String> + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(CASE_LIMIT) {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(why))) => panic!("{reader}: {why}\ninput: {input:?}"),
        Ok(Err(_)) => panic!("{reader} panicked on input: {input:?}"),
        Err(_) => panic!("{reader} took over {CASE_LIMIT:?} on input: {input:?}"),
    }
}

/// One reader on one input: it reads, or fails with an error naming the file. True when it read.
fn read(reader: &'static str, input: &str) -> bool {
    let text = input.to_string();
    let parsed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = parsed.clone();
    let ok = move || flag.store(true, std::sync::atomic::Ordering::Relaxed);
    bounded(reader, input, move || match reader {
        "snapshot" => match read_str(&text, "fuzz.yaml").and_then(gpuledger::workload::checked) {
            Ok(objects) => {
                // The reader has checked every object's numbers; what still overflows is a total,
                // and that is an error naming what was added up.
                let report = match inventory(&objects, &Config::default(), vec!["fuzz.yaml".into()])
                {
                    Ok(r) => r,
                    Err(e) if !e.to_string().is_empty() => return Ok(()),
                    Err(e) => return Err(format!("an unnamed overflow: {e:?}")),
                };
                let narrow = Style {
                    width: Some(40),
                    color: true,
                    all: true,
                };
                let json = render(&report, Format::Json, &narrow);
                serde_json::from_str::<serde_json::Value>(&json)
                    .map_err(|e| format!("the JSON report does not parse: {e}"))?;
                render(&report, Format::Markdown, &narrow);
                render(&report, Format::Table, &narrow);
                render(&report, Format::Table, &Style::default());
                ok();
                Ok(())
            }
            Err(e) if e.to_string().starts_with("fuzz.yaml") => Ok(()),
            Err(e) => Err(format!("the error does not name the file: {e}")),
        },
        "config" => match Config::parse(&text, "fuzz-config.yaml") {
            Ok(_) => {
                ok();
                Ok(())
            }
            Err(e) if e.to_string().starts_with("fuzz-config.yaml") => Ok(()),
            Err(e) => Err(format!("the error does not name the file: {e}")),
        },
        "marker" => {
            if let Some(m) = Marker::find(&text) {
                ok();
                // What parsed renders back to a marker that parses the same.
                let again = Marker::find(&m.render());
                if again.as_ref() != Some(&m) {
                    return Err(format!("{m:?} does not survive a round trip: {again:?}"));
                }
            }
            Ok(())
        }
        "event" => {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let path = dir.path().join("event.json");
            std::fs::write(&path, &text).map_err(|e| e.to_string())?;
            let p = path.display().to_string();
            let _ = Runtime::from_env(|k| match k {
                "GITHUB_ACTIONS" => Some("true".into()),
                "GITHUB_EVENT_NAME" => Some("pull_request".into()),
                "GITHUB_EVENT_PATH" => Some(p.clone()),
                _ => None,
            });
            Ok(())
        }
        "timestamp" => {
            let _ = Timestamp::parse(&text);
            let _ = Date::parse(&text);
            Ok(())
        }
        "quantity" => {
            let _ = Quantity::parse(&text);
            Ok(())
        }
        other => Err(format!("no reader {other}")),
    });
    parsed.load(std::sync::atomic::Ordering::Relaxed)
}

fn seed(rel: &str) -> String {
    std::fs::read_to_string(fixture(rel)).unwrap()
}

#[test]
fn regressions_stay_fixed() {
    for (name, reader, input) in REGRESSIONS {
        eprintln!("regression {name}");
        let _ = read(reader, input);
    }
}

#[test]
fn mutated_inputs_never_panic_or_hang() {
    let snapshots = [
        seed("tests/fixtures/drift/cluster.yaml"),
        seed("tests/fixtures/fractional-gpu.json"),
        seed("tests/fixtures/split-pods.json"),
        seed("tests/fixtures/fractional-gpu.yaml"),
    ];
    let configs = [
        seed("tests/fixtures/drift/repo/.gpuledger.yaml"),
        seed("fixtures/demo/.gpuledger.yaml"),
    ];
    let marker = Marker::comment(
        "prod",
        "9f1c2d7e4b5a69880c1d2e3f4a5b6c7d8e9f0a1b",
        Timestamp::parse("2026-11-30T09:12:44Z").unwrap(),
    )
    .render();
    let issue = Marker::issue("gpu-east", "43773720fce66e1c").render();
    let event = seed("tests/fixtures/github/pull_request.json");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let plan: [(&str, &[String], usize); 6] = [
        ("snapshot", &snapshots, 1200),
        ("config", &configs, 1500),
        ("marker", &[marker, issue], 3000),
        ("event", &[event], 400),
        (
            "timestamp",
            &["2026-11-30T17:05:00+01:00".to_string()],
            3000,
        ),
        ("quantity", &["1500m".to_string(), "2Ki".to_string()], 3000),
    ];
    for (reader, seeds, cases) in plan {
        let mut read_ok = 0;
        for i in 0..cases {
            let input = mutate(&seeds[i % seeds.len()], &mut rng);
            read_ok += usize::from(read(reader, &input));
        }
        // The mutations neither all break the input (then only the error path is tried) nor all
        // leave it intact.
        if ["snapshot", "config", "marker"].contains(&reader) {
            assert!(
                read_ok > 0 && read_ok < cases,
                "{reader}: {read_ok} of {cases} read"
            );
        }
    }
}

#[test]
fn the_binary_exits_0_or_2_and_names_the_file() {
    let seed = seed("tests/fixtures/drift/cluster.yaml");
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for i in 0..16 {
        let input = mutate(&seed, &mut rng);
        let path = dir.path().join(format!("case-{i}.yaml"));
        std::fs::write(&path, &input).unwrap();
        let out = gpuledger(dir.path())
            .args(["inventory", "--format", "json", "--snapshot"])
            .arg(&path)
            .timeout(CASE_LIMIT)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {
                serde_json::from_slice::<serde_json::Value>(&out.stdout)
                    .unwrap_or_else(|e| panic!("case {i}: JSON does not parse: {e}\n{input:?}"));
            }
            Some(2) => assert!(
                stderr.contains(&format!("case-{i}.yaml")),
                "case {i}: the error does not name the file: {stderr}\n{input:?}"
            ),
            other => panic!("case {i}: exit {other:?}: {stderr}\ninput: {input:?}"),
        }
    }
}
