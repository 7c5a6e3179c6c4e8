//! A fact's value: a path into the report's JSON, and the format it is written in.
//!
//! The path is the report's JSON as `--format json` prints it, so whatever a script can read a
//! document can state: `fleet.gpus.placeable`, `tenants[0].name`, and — since a tenant's position
//! changes as the fleet does — `tenants[name=chat].gpus_requested`. A list on its own is its number
//! of entries (`fleet.excluded_nodes`).
//!
//! Three answers, kept apart: a value; *unknown*, with why (a `null` figure, a tenant no longer in
//! the report, a section the report does not have this time), which never overwrites a document's
//! text; and an error for a path that names no field of the report at all, which is the document's
//! mistake and is reported at its line.

use serde_json::Value;

use crate::util::number::{Digits, percent};

/// Fields the report leaves out when they do not apply (`drift` without a repository, `clusters`
/// with one cluster, a workload's `cluster`): a path through one of them is unknown this time,
/// not wrong.
const SOMETIMES_ABSENT: [&str; 8] = [
    "drift",
    "clusters",
    "cluster",
    "provenance",
    "desired_at",
    "intent",
    "git",
    "live",
];

/// The formats a fact can be written in.
pub const FORMATS: [&str; 4] = ["plain", "int", "percent", "percent0"];

/// What a path says about a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    Value(Value),
    /// The field exists but its value is not known this time, with why.
    Unknown(String),
}

/// A marker the report cannot answer at all: a field, a format or a table it does not have. The
/// message says which, and what there is instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MarkerError(pub String);

/// The message itself, to match on or quote.
impl std::ops::Deref for MarkerError {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
    /// `[field=value]`: the first entry whose `field` is `value` (as text).
    Select(String, String),
}

/// `fleet.gpus.placeable`, `tenants[0].name`, `tenants[name=chat].gpus_requested`.
fn parse(path: &str) -> Result<Vec<Step>, MarkerError> {
    let bad = |why: &str| {
        Err(MarkerError(format!(
            "{path:?} is not a field path ({why}); e.g. fleet.gpus.placeable or tenants[name=chat].gpus_requested"
        )))
    };
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (
                part.get(..i).unwrap_or_default(),
                part.get(i..).unwrap_or_default(),
            ),
            None => (part, ""),
        };
        if key.is_empty() && (steps.is_empty() || rest.is_empty()) {
            return bad("an empty name");
        }
        if !key.is_empty() {
            if !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return bad("a name is letters, digits, _ and -");
            }
            steps.push(Step::Key(key.to_string()));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let Some((inner, after)) = r.split_once(']') else {
                return bad("an unclosed [");
            };
            rest = after;
            match inner.split_once('=') {
                Some((f, v)) if !f.is_empty() => {
                    steps.push(Step::Select(f.to_string(), v.to_string()));
                }
                Some(_) => return bad("[field=value] needs a field"),
                None => match inner.parse::<usize>() {
                    Ok(i) => steps.push(Step::Index(i)),
                    Err(_) => return bad("[N] needs a number, or [field=value]"),
                },
            }
        }
        if !rest.is_empty() {
            return bad("text after ]");
        }
    }
    Ok(steps)
}

/// Follows `path` through `report` (the report's JSON). `Err` when the path is malformed or names
/// no field of the report.
pub fn lookup(report: &Value, path: &str) -> Result<Lookup, MarkerError> {
    let steps = parse(path)?;
    let mut here = report;
    let mut walked = String::new();
    for step in &steps {
        match step {
            Step::Key(k) => {
                let Value::Object(map) = here else {
                    if here.is_null() {
                        return Ok(Lookup::Unknown(format!("{walked} is unknown")));
                    }
                    return Err(MarkerError(format!(
                        "{path}: {} is {}, not an object with fields",
                        display(&walked),
                        kind(here)
                    )));
                };
                match map.get(k) {
                    Some(v) => here = v,
                    None if SOMETIMES_ABSENT.contains(&k.as_str()) => {
                        return Ok(Lookup::Unknown(format!(
                            "the report has no {} this time{}",
                            join(&walked, k),
                            hint(k)
                        )));
                    }
                    None => {
                        let known: Vec<&str> = map.keys().map(String::as_str).collect();
                        return Err(MarkerError(format!(
                            "{path} names no field of the report: {} has no {k:?} (it has {})",
                            display(&walked),
                            known.join(", ")
                        )));
                    }
                }
                walked = join(&walked, k);
            }
            Step::Index(_) | Step::Select(..) => {
                let Value::Array(items) = here else {
                    return Err(MarkerError(format!(
                        "{path}: {} is {}, not a list",
                        display(&walked),
                        kind(here)
                    )));
                };
                let (found, label, missing) = match step {
                    Step::Select(f, v) => (
                        items
                            .iter()
                            .find(|x| x.get(f).is_some_and(|y| text(y) == *v)),
                        format!("{walked}[{f}={v}]"),
                        format!("no entry of {walked} has {f} = {v:?} in this report"),
                    ),
                    Step::Index(i) => (
                        items.get(*i),
                        format!("{walked}[{i}]"),
                        format!("{walked} has {} entries, not {}", items.len(), i + 1),
                    ),
                    Step::Key(_) => (None, String::new(), String::new()),
                };
                let Some(found) = found else {
                    return Ok(Lookup::Unknown(missing));
                };
                walked = label;
                here = found;
            }
        }
    }
    if here.is_null() {
        // A figure the report could not compute says why in `fleet.unknown`, under its path below
        // `fleet`.
        let why = path
            .strip_prefix("fleet.")
            .and_then(|p| report.get("fleet")?.get("unknown")?.get(p)?.as_str())
            .map_or_else(
                || format!("{path} is unknown in this report"),
                ToString::to_string,
            );
        return Ok(Lookup::Unknown(why));
    }
    Ok(Lookup::Value(here.clone()))
}

fn join(walked: &str, k: &str) -> String {
    if walked.is_empty() {
        k.to_string()
    } else {
        format!("{walked}.{k}")
    }
}

fn display(walked: &str) -> String {
    if walked.is_empty() {
        "the report".into()
    } else {
        walked.to_string()
    }
}

fn hint(k: &str) -> &'static str {
    match k {
        "drift" => " (drift needs the GitOps repository: docs --repo DIR --drift)",
        "clusters" => " (one row per cluster when several --context are read)",
        _ => "",
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A scalar as a selector compares it.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Checks a format name before anything is looked up.
pub fn check_format(format: &str) -> Result<(), MarkerError> {
    if FORMATS.contains(&format) {
        Ok(())
    } else {
        Err(MarkerError(format!(
            "unknown format {format:?}: one of {}",
            FORMATS.join(", ")
        )))
    }
}

/// `v` written in `format`: `plain` as the JSON says it (a list: its length), `int` with thousands
/// separators (`1,364`; a fraction is rounded), `percent` a fraction as `85.5%`, `percent0` as
/// `86%`. `Err` when the value is not one the format can write.
pub fn format(v: &Value, format: &str, path: &str) -> Result<String, MarkerError> {
    let number = |v: &Value| -> Result<f64, MarkerError> {
        match v {
            Value::Number(n) => n
                .as_f64()
                .ok_or_else(|| MarkerError(format!("{path}: {n} is out of range"))),
            Value::Array(a) => Ok(a.len() as f64),
            other => Err(MarkerError(format!(
                "{path} is {}, and format {format} writes numbers",
                kind(other)
            ))),
        }
    };
    match format {
        "plain" => match v {
            Value::String(s) => Ok(s.clone()),
            Value::Array(a) => Ok(a.len().to_string()),
            Value::Object(_) => Err(MarkerError(format!(
                "{path} is an object: name one of its fields ({path}.…)"
            ))),
            other => Ok(other.to_string()),
        },
        "int" => {
            if let Some(n) = v.as_u64() {
                return Ok(thousands(&n.to_string()));
            }
            if let Some(n) = v.as_i64() {
                return Ok(format!("-{}", thousands(&n.unsigned_abs().to_string())));
            }
            let f = number(v)?;
            let rounded = format!("{:.0}", f.abs());
            Ok(if f.round() < 0.0 {
                format!("-{}", thousands(&rounded))
            } else {
                thousands(&rounded)
            })
        }
        "percent" => Ok(percent(number(v)?, Digits::Tenth)),
        "percent0" => Ok(percent(number(v)?, Digits::Whole)),
        other => Err(MarkerError(format!(
            "unknown format {other:?}: one of {}",
            FORMATS.join(", ")
        ))),
    }
}

/// `1364` → `1,364`.
fn thousands(digits: &str) -> String {
    let n = digits.len();
    let mut out = String::with_capacity(n + n / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report() -> Value {
        json!({
            "fleet": {
                "gpus": {"placeable": 503, "used": null},
                "utilisation": 0.8549,
                "excluded_nodes": [{"node": "a"}, {"node": "b"}],
                "unknown": {"gpus.used": "no metrics source: give --prometheus"}
            },
            "tenants": [
                {"name": "chat", "gpus_requested": 196},
                {"name": "research", "gpus_requested": 24}
            ],
            "workloads": []
        })
    }

    fn value(path: &str) -> Value {
        match lookup(&report(), path).unwrap() {
            Lookup::Value(v) => v,
            other => panic!("{path}: {other:?}"),
        }
    }

    fn unknown(path: &str) -> String {
        match lookup(&report(), path).unwrap() {
            Lookup::Unknown(why) => why,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn paths_reach_fields_entries_and_entries_by_name() {
        assert_eq!(value("fleet.gpus.placeable"), json!(503));
        assert_eq!(value("tenants[1].name"), json!("research"));
        assert_eq!(value("tenants[name=research].gpus_requested"), json!(24));
        assert_eq!(
            value("fleet.excluded_nodes"),
            json!([{"node": "a"}, {"node": "b"}])
        );
    }

    #[test]
    fn unknown_is_said_with_why_and_a_wrong_path_is_an_error() {
        assert_eq!(
            unknown("fleet.gpus.used"),
            "no metrics source: give --prometheus"
        );
        assert!(
            unknown("tenants[name=ads].gpus_requested")
                .contains("no entry of tenants has name = \"ads\"")
        );
        assert!(unknown("tenants[5].name").contains("2 entries"));
        assert!(unknown("workloads[0].name").contains("0 entries"));
        assert!(unknown("drift.coverage").contains("--repo"));
        let e = lookup(&report(), "fleet.gpus.placable").unwrap_err();
        assert!(e.contains("has no \"placable\""), "{e}");
        assert!(e.contains("placeable"), "{e}");
        for bad in [
            "",
            "fleet..gpus",
            "tenants[x",
            "tenants[a]",
            "tenants[0]x",
            "fleet.gpus placeable",
            "[0]",
        ] {
            assert!(lookup(&report(), bad).is_err(), "{bad:?}");
        }
        assert!(
            lookup(&report(), "fleet.gpus.placeable.x")
                .unwrap_err()
                .contains("is a number")
        );
        assert!(
            lookup(&report(), "fleet[0]")
                .unwrap_err()
                .contains("not a list")
        );
    }

    #[test]
    fn formats() {
        let f = |v: Value, fmt: &str| format(&v, fmt, "p").unwrap();
        assert_eq!(f(json!(503), "plain"), "503");
        assert_eq!(f(json!("chat"), "plain"), "chat");
        assert_eq!(f(json!([1, 2, 3]), "plain"), "3");
        assert_eq!(f(json!(1364), "int"), "1,364");
        assert_eq!(f(json!(153555), "int"), "153,555");
        assert_eq!(f(json!(1234567), "int"), "1,234,567");
        assert_eq!(f(json!(999), "int"), "999");
        assert_eq!(f(json!(-1364), "int"), "-1,364");
        assert_eq!(f(json!(1363.6), "int"), "1,364");
        assert_eq!(f(json!(0.8549), "percent"), "85.5%");
        assert_eq!(f(json!(0.8549), "percent0"), "85%");
        assert_eq!(f(json!(1), "percent"), "100.0%");
        assert!(
            format(&json!("x"), "int", "p")
                .unwrap_err()
                .contains("is text")
        );
        assert!(format(&json!({}), "plain", "p").is_err());
        assert!(
            check_format("pct")
                .unwrap_err()
                .contains("plain, int, percent, percent0")
        );
    }
}
