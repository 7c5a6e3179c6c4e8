//! The Prometheus text exposition format (0.0.4) itself: metric families with their HELP and TYPE
//! lines, samples whose label values are escaped so that none can end its label or start a line,
//! numbers as the format writes them, and labels every sample carries (`serve`'s `cluster`). What
//! the families are is [`super::prometheus`]'s.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One metric family: HELP, TYPE, then its samples in the order they were added.
#[derive(Debug)]
pub struct Family {
    name: &'static str,
    help: &'static str,
    kind: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
    /// Where each label set's sample is: two rows with the same labels (two roles a graph names
    /// alike, one name in two API groups) add up to one sample, since a repeated series is an
    /// invalid exposition.
    index: BTreeMap<Vec<(&'static str, String)>, usize>,
}

impl Family {
    pub fn gauge(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            kind: "gauge",
            samples: Vec::new(),
            index: BTreeMap::new(),
        }
    }

    /// A counter; its name must end in `_total`.
    pub fn counter(name: &'static str, help: &'static str) -> Family {
        Family {
            kind: "counter",
            ..Family::gauge(name, help)
        }
    }

    /// Adds a sample; `None` (unknown) adds nothing.
    pub fn sample(
        &mut self,
        labels: &[(&'static str, &str)],
        value: impl Into<Option<f64>>,
    ) -> &mut Self {
        if let Some(v) = value.into() {
            let labels: Vec<_> = labels.iter().map(|(k, v)| (*k, (*v).to_string())).collect();
            match self
                .index
                .get(&labels)
                .and_then(|&i| self.samples.get_mut(i))
            {
                Some((_, sum)) => *sum += v,
                None => {
                    self.index.insert(labels.clone(), self.samples.len());
                    self.samples.push((labels, v));
                }
            }
        }
        self
    }
}

/// Families in the order they are written.
#[derive(Debug, Default)]
pub struct Exposition {
    families: Vec<Family>,
    /// Labels every sample carries, first (`cluster`).
    constant: Vec<(&'static str, String)>,
}

impl Exposition {
    /// Every sample carries `labels`, first, except where it has a label of that name with a value
    /// of its own (a row of `gpuledger_cluster_gpus` names its cluster); an empty value of its own
    /// (a workload of a one-cluster read, `cluster=""`) gives way to the constant one. A label
    /// whose value is empty is the same as no label to Prometheus, so it is left out.
    pub fn labelled(labels: Vec<(&'static str, String)>) -> Exposition {
        let constant = labels.into_iter().filter(|(_, v)| !v.is_empty()).collect();
        Exposition {
            families: Vec::new(),
            constant,
        }
    }

    pub fn push(&mut self, f: Family) {
        self.families.push(f);
    }

    /// The text. A family without samples is left out: its HELP alone would read as a value.
    pub fn finish(self) -> String {
        let mut s = String::new();
        for f in self.families.iter().filter(|f| !f.samples.is_empty()) {
            let _ = writeln!(s, "# HELP {} {}", f.name, escape_help(f.help));
            let _ = writeln!(s, "# TYPE {} {}", f.name, f.kind);
            for (own, v) in &f.samples {
                s.push_str(f.name);
                let has = |k: &str| own.iter().any(|(l, v)| *l == k && !v.is_empty());
                let constant = self.constant.iter().filter(|(k, _)| !has(k));
                let overridden = |k: &str| self.constant.iter().any(|(c, _)| *c == k);
                let labels: Vec<&(&str, String)> = constant
                    .chain(own.iter().filter(|(k, v)| !(v.is_empty() && overridden(k))))
                    .collect();
                if !labels.is_empty() {
                    s.push('{');
                    let parts: Vec<String> = labels
                        .iter()
                        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                        .collect();
                    s.push_str(&parts.join(","));
                    s.push('}');
                }
                let _ = writeln!(s, " {}", number(*v));
            }
        }
        s
    }
}

fn escape_help(s: &str) -> String {
    s.replace('\\', r"\\").replace('\n', r"\n")
}

/// Label values come from the cluster: backslash, quote and newline are escaped as the format
/// says, so no value can end its label or start a line of its own.
fn escape_label(s: &str) -> String {
    s.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

pub(crate) fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        // Rust writes whole floats without a fraction (`42`) and never in exponent form.
        format!("{v}")
    }
}
