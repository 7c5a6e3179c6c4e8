//! `metrics:`: how GPU activity is judged, and which of a shared Prometheus's series are this
//! fleet's.

use serde::{Deserialize, Serialize};

/// How GPU activity is judged.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// A GPU is busy when its average engine activity over the window is above this (0–1).
    pub busy_threshold: f64,
    /// PromQL label matchers that pick this cluster's DCGM series in a Prometheus that holds
    /// several clusters' (`cluster="prod-a"`, `k8s_cluster_name=~"prod-.*"`). Without it, the
    /// conventional cluster labels are read and the cluster whose node names are this fleet's is
    /// chosen, and the report says which.
    pub cluster_selector: Option<String>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            busy_threshold: 0.05,
            cluster_selector: None,
        }
    }
}

/// Checks that `s` is a list of PromQL label matchers and nothing else (`name op "value"`, comma
/// separated, op `=`, `!=`, `=~` or `!~`), so that it can go between the braces of a query without
/// changing what the query is. The error says what is wrong.
pub fn check_selector(s: &str) -> Result<(), String> {
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err("it is empty".into());
    }
    loop {
        let name_len = rest
            .char_indices()
            .find(|(i, c)| {
                !(c.is_ascii_alphabetic() || *c == '_' || (*i > 0 && c.is_ascii_digit()))
            })
            .map_or(rest.len(), |(i, _)| i);
        if name_len == 0 {
            return Err(format!(
                "expected a label name at `{rest}` (write matchers such as cluster=\"prod-a\")"
            ));
        }
        rest = rest.get(name_len..).unwrap_or_default().trim_start();
        let op = ["=~", "!~", "!=", "="]
            .into_iter()
            .find(|op| rest.starts_with(op))
            .ok_or_else(|| format!("expected =, !=, =~ or !~ at `{rest}`"))?;
        rest = rest.get(op.len()..).unwrap_or_default().trim_start();
        let quote = rest
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
            .ok_or_else(|| format!("expected a quoted value at `{rest}`"))?;
        let mut end = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices().skip(1) {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == quote {
                end = Some(i);
                break;
            }
        }
        let end = end.ok_or_else(|| format!("the value at `{rest}` has no closing {quote}"))?;
        rest = rest.get(end + 1..).unwrap_or_default().trim_start();
        if rest.is_empty() {
            return Ok(());
        }
        rest = rest
            .strip_prefix(',')
            .ok_or_else(|| format!("expected a comma at `{rest}`"))?
            .trim_start();
    }
}

#[cfg(test)]
mod tests {
    use super::check_selector;

    #[test]
    fn selectors() {
        for ok in [
            r#"cluster="prod-a""#,
            r#" cluster = "a" , region!~'eu-.*' "#,
            r#"k8s_cluster_name=~"prod-\"x\"""#,
        ] {
            assert_eq!(check_selector(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("prod-a", "expected =, !=, =~ or !~"),
            ("", "empty"),
            (r#"cluster="a"} or vector(1"#, "expected a comma"),
            (r#"cluster="a"#, "no closing"),
            ("cluster=a", "quoted value"),
            (r#"1x="a""#, "label name"),
            (r#"cluster="a","#, "label name"),
        ] {
            let e = check_selector(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
