//! ApplicationSets as render units: the `list` and `git` generators run offline against the tree,
//! their parameters fill the template (`{{param}}`, or `{{.param}}` with goTemplate), and each
//! generated Application is read as [`super::argo`] reads one. Generators that need the cluster or
//! an API (clusters, SCM providers, pull requests, plugins, matrix/merge) are skipped with the
//! reason.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::argo::{ArgoApp, argo_units};
use super::source::{AppRef, Context, SkipReason, SourceOutcome, Why, defined_at, spec};
use crate::k8s::object::Object;
use crate::util::glob::{Glob, GlobError};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct AppSetSpec {
    go_template: bool,
    generators: Vec<Map<String, Value>>,
    template: Value,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GitGenerator {
    #[serde(rename = "repoURL")]
    repo_url: String,
    directories: Vec<DirPattern>,
    files: Vec<DirPattern>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct DirPattern {
    path: String,
    exclude: bool,
}

type Params = BTreeMap<String, Value>;

fn path_params(path: &str, into: &mut Params) {
    let basename = path.rsplit('/').next().unwrap_or(path).to_string();
    let normalized: String = basename
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    into.insert("path".into(), json!(path));
    into.insert("path.path".into(), json!(path));
    into.insert("path.basename".into(), json!(basename));
    into.insert("path.basenameNormalized".into(), json!(normalized));
    for (i, seg) in path.split('/').enumerate() {
        into.insert(format!("path[{i}]"), json!(seg));
        into.insert(format!("path.segments[{i}]"), json!(seg));
    }
}

fn flatten(prefix: &str, v: &Value, into: &mut Params) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, into);
            }
            if !prefix.is_empty() {
                into.insert(prefix.to_string(), v.clone());
            }
        }
        _ => {
            into.insert(prefix.to_string(), v.clone());
        }
    }
}

/// A generator's `directories` or `files` entries, compiled once; a refused pattern refuses the
/// generator.
fn compile(patterns: &[DirPattern]) -> Result<Vec<(Glob, bool)>, SkipReason> {
    patterns
        .iter()
        .map(|p| Glob::new(&p.path).map(|g| (g, p.exclude)))
        .collect::<Result<_, GlobError>>()
        .map_err(|e| SkipReason::new(Why::Refused, format!("git generator: {e}")))
}

fn generate(ctx: &Context<'_>, kind: &str, g: &Value) -> Result<Vec<Params>, SkipReason> {
    match kind {
        "list" => {
            let elements = g
                .get("elements")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(elements
                .iter()
                .map(|e| {
                    let mut p = Params::new();
                    flatten("", e, &mut p);
                    p
                })
                .collect())
        }
        "git" => {
            let git: GitGenerator = serde_json::from_value(g.clone())
                .map_err(|e| SkipReason::from_message(format!("git generator: {e}")))?;
            if !ctx.is_this_repo(&git.repo_url) {
                return Err(ctx.not_this_repo(&git.repo_url));
            }
            let directories = compile(&git.directories)?;
            let files = compile(&git.files)?;
            let mut out = Vec::new();
            if !directories.is_empty() {
                let mut dirs: Vec<String> = ctx
                    .tree
                    .files
                    .keys()
                    .filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_string()))
                    .flat_map(|d| {
                        let parts: Vec<&str> = d.split('/').collect();
                        (1..=parts.len())
                            .filter_map(move |i| parts.get(..i).map(|p| p.join("/")))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                dirs.sort();
                dirs.dedup();
                for d in dirs {
                    if d.split('/').any(|s| s.starts_with('.')) {
                        continue;
                    }
                    // Any exclude wins over every include, as in argo-cd
                    // `applicationset/generators/git.go` (`filterApps`).
                    let included = directories
                        .iter()
                        .any(|(g, exclude)| !exclude && g.is_match(&d));
                    let excluded = directories
                        .iter()
                        .any(|(g, exclude)| *exclude && g.is_match(&d));
                    if included && !excluded {
                        let mut p = Params::new();
                        path_params(&d, &mut p);
                        out.push(p);
                    }
                }
            }
            for (pat, _) in &files {
                for f in ctx.tree.files.keys().filter(|f| pat.is_match(f)) {
                    let bytes = ctx
                        .tree
                        .read(f)
                        .map_err(|e| SkipReason::from_message(e.to_string()))?;
                    let text = String::from_utf8_lossy(bytes);
                    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
                        .map_err(|e| SkipReason::from_message(format!("{f}: {e}")))?;
                    for doc in docs {
                        let mut p = Params::new();
                        flatten("", &doc, &mut p);
                        let dir = f.rsplit_once('/').map_or("", |(d, _)| d);
                        path_params(dir, &mut p);
                        p.insert(
                            "path.filename".into(),
                            json!(f.rsplit('/').next().unwrap_or(f)),
                        );
                        out.push(p);
                    }
                }
            }
            Ok(out)
        }
        other => Err(SkipReason::new(
            Why::NeedsCluster,
            format!(
                "the {other} generator needs the cluster (secrets, composition or an API) and is not rendered offline"
            ),
        )),
    }
}

/// Replaces `{{ key }}` (and `{{ .key }}` with goTemplate) in every string of `template`.
fn substitute(template: &Value, params: &Params, go: bool) -> Result<Value, TemplateError> {
    Ok(match template {
        Value::String(s) => Value::String(substitute_str(s, params, go)?),
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|v| substitute(v, params, go))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Ok((substitute_str(k, params, go)?, substitute(v, params, go)?)))
                .collect::<Result<_, TemplateError>>()?,
        ),
        v => v.clone(),
    })
}

/// Why a generated Application's template cannot be filled in offline: reported as the reason the
/// Application is not rendered.
#[derive(Debug, thiserror::Error)]
enum TemplateError {
    #[error("unclosed {{{{ in template string {text:?}")]
    Unclosed { text: String },
    /// A goTemplate expression that is more than `.param`.
    #[error("template expression {{{{{expr}}}}} is not supported offline (only {{{{.param}}}})")]
    GoExpression { expr: String },
    /// A pipeline or function call.
    #[error("template expression {{{{{expr}}}}} is not supported offline (only plain parameters)")]
    Expression { expr: String },
    #[error("template parameter {key:?} is not produced by the generator")]
    NoParameter { key: String },
}

fn substitute_str(s: &str, params: &Params, go: bool) -> Result<String, TemplateError> {
    let mut out = String::new();
    let mut rest = s;
    while let Some((before, after)) = rest.split_once("{{") {
        out.push_str(before);
        let (expr, next) = after
            .split_once("}}")
            .ok_or_else(|| TemplateError::Unclosed {
                text: s.to_string(),
            })?;
        let expr = expr.trim();
        let key = if go {
            expr.strip_prefix('.')
                .ok_or_else(|| TemplateError::GoExpression {
                    expr: expr.to_string(),
                })?
        } else {
            expr
        };
        if key.contains(' ') || key.contains('|') {
            return Err(TemplateError::Expression {
                expr: expr.to_string(),
            });
        }
        let v = params.get(key).ok_or_else(|| TemplateError::NoParameter {
            key: key.to_string(),
        })?;
        match v {
            Value::String(s) => out.push_str(s),
            v => out.push_str(&v.to_string()),
        }
        rest = next;
    }
    out.push_str(rest);
    Ok(out)
}

/// Render units for an ApplicationSet: the outcomes of each generated Application, or why a
/// generator or a generated Application is not rendered.
pub fn appset_units(ctx: &Context<'_>, o: &Object) -> Vec<SourceOutcome> {
    let at = defined_at(o);
    let name = o.meta.name.clone();
    let print = super::source::fingerprint(o);
    let owner = |kind: &str, app: &str| AppRef {
        app: app.to_string(),
        app_kind: format!("ApplicationSet/{kind}"),
        defined_at: at.clone(),
        fingerprint: print,
    };
    let s: AppSetSpec = match spec(o) {
        Ok(s) => s,
        Err(e) => return vec![owner("?", &name).skip(e)],
    };
    let mut out = Vec::new();
    for g in &s.generators {
        let Some((kind, body)) = g.iter().find(|(k, _)| k.as_str() != "selector") else {
            continue;
        };
        let params = match generate(ctx, kind, body) {
            Ok(p) => p,
            Err(e) => {
                out.push(owner(kind, &name).skip(e));
                continue;
            }
        };
        for p in params {
            let app = match substitute(&s.template, &p, s.go_template) {
                Ok(v) => v,
                Err(e) => {
                    out.push(
                        owner(kind, &name).skip(SkipReason::new(Why::Unsupported, e.to_string())),
                    );
                    continue;
                }
            };
            let app_name = app
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .unwrap_or(&name)
                .to_string();
            let spec: ArgoApp =
                match serde_json::from_value(app.get("spec").cloned().unwrap_or(Value::Null)) {
                    Ok(s) => s,
                    Err(e) => {
                        out.push(owner(kind, &name).skip(SkipReason::from_message(format!(
                            "generated Application {app_name}: {e}"
                        ))));
                        continue;
                    }
                };
            out.extend(argo_units(ctx, &owner(kind, &app_name), &spec));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_substitution_both_syntaxes() {
        let mut p = Params::new();
        path_params("apps/llama", &mut p);
        let t = json!({"metadata": {"name": "{{path.basename}}-app"}, "spec": {"source": {"path": "{{path}}"}}});
        let v = substitute(&t, &p, false).unwrap();
        assert_eq!(v["metadata"]["name"], "llama-app");
        let t = json!({"metadata": {"name": "{{ .path.basename }}"}});
        assert_eq!(
            substitute(&t, &p, true).unwrap()["metadata"]["name"],
            "llama"
        );
        assert!(substitute(&json!("{{ .path.basename | upper }}"), &p, true).is_err());
        assert!(substitute(&json!("{{missing}}"), &p, false).is_err());
    }

    /// The reasons an Application is not generated, word for word as the report shows them.
    #[test]
    fn template_errors_say_what_is_not_supported() {
        let p = Params::new();
        let says = |t: &str, go: bool| substitute_str(t, &p, go).unwrap_err().to_string();
        assert_eq!(
            says("a-{{path", false),
            r#"unclosed {{ in template string "a-{{path""#
        );
        assert_eq!(
            says("{{ path }}", true),
            "template expression {{path}} is not supported offline (only {{.param}})"
        );
        assert_eq!(
            says("{{ .path | upper }}", true),
            "template expression {{.path | upper}} is not supported offline (only plain parameters)"
        );
        assert_eq!(
            says("{{path}}", false),
            r#"template parameter "path" is not produced by the generator"#
        );
    }
}
