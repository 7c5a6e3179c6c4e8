//! Argo CD sources decided as Argo CD decides them: which tool renders a source (explicit field,
//! else kustomization before Chart.yaml), `helm.valuesObject` over `helm.values`, directory
//! include/exclude in Argo CD's glob dialect, and the sources only Argo CD's repo server can render
//! (config-management plugins, jsonnet) listed as not rendered with the reason.

use std::collections::BTreeMap;

use super::render::{URL, add_chart, deployment};
use super::support::{Repo, desired_gpus, render};

fn app(name: &str, source: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  destination:\n    namespace: {name}\n  source:\n    repoURL: {URL}\n{source}"
    )
}

fn gpus(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// name → (status, reason) of every app in a render report.
fn apps(json: &serde_json::Value) -> BTreeMap<String, (String, String)> {
    json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                (
                    a["status"].as_str().unwrap().to_string(),
                    a["error"].as_str().unwrap_or_default().to_string(),
                ),
            )
        })
        .collect()
}

/// A config-management plugin source and a directory of jsonnet are not rendered, and say why;
/// `.libsonnet` files alone, or jsonnet excluded by the source's pattern, render as manifests.
#[test]
fn plugin_and_jsonnet_sources_say_why_they_are_not_rendered() {
    let r = Repo::new();
    r.write(
        "argocd/apps.yaml",
        &[
            app(
                "vault",
                "    path: workloads/plain\n    plugin:\n      name: argocd-vault-plugin\n",
            ),
            app("discovered", "    path: workloads/plain\n    plugin: {}\n"),
            app("jsonnet", "    path: workloads/jsonnet\n"),
            app(
                "jsonnet-opts",
                "    path: workloads/jsonnet-deep\n    directory:\n      recurse: true\n      jsonnet:\n        tlas: [{name: gpus, value: '8'}]\n",
            ),
            app(
                "libsonnet-only",
                "    path: workloads/lib\n    directory: {jsonnet: {libs: [vendor]}}\n",
            ),
            app(
                "jsonnet-excluded",
                "    path: workloads/jsonnet\n    directory: {exclude: '*.jsonnet'}\n",
            ),
        ]
        .join("---\n"),
    )
    .write("workloads/plain/d.yaml", &deployment("plain", 1, 2))
    .write("workloads/jsonnet/d.yaml", &deployment("beside", 1, 1))
    .write("workloads/jsonnet/main.jsonnet", "{ apiVersion: 'v1', kind: 'ConfigMap' }\n")
    .write("workloads/jsonnet-deep/a/x.jsonnet", "{}\n")
    .write("workloads/jsonnet-deep/b/y.jsonnet", "{}\n")
    .write("workloads/lib/d.yaml", &deployment("lib", 2, 2))
    .write("workloads/lib/util.libsonnet", "{}\n")
    .commit("sources only Argo CD renders");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    // Four sources only Argo CD's repo server renders: their GPUs are unknown, exit 2.
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        desired_gpus(&json),
        gpus(&[
            ("libsonnet-only/Deployment/lib", 4),
            ("jsonnet-excluded/Deployment/beside", 1)
        ])
    );
    let a = apps(&json);
    let not_rendered = |name: &str, reason: &str| {
        let (status, why) = &a[name];
        assert_eq!(status, "not-rendered", "{name}: {why}");
        assert!(why.contains(reason), "{name}: {why}");
    };
    not_rendered(
        "vault",
        "config-management plugin argocd-vault-plugin runs in Argo CD's repo server; gpuledger does not run it",
    );
    not_rendered(
        "discovered",
        "config-management plugin (the one Argo CD discovers",
    );
    not_rendered(
        "jsonnet",
        "Argo CD evaluates workloads/jsonnet/main.jsonnet with jsonnet; gpuledger does not evaluate jsonnet",
    );
    not_rendered(
        "jsonnet-opts",
        "Argo CD evaluates workloads/jsonnet-deep/a/x.jsonnet and 1 more with jsonnet",
    );
}

/// The tool is Argo CD's choice: an explicit field wins over what the directory holds; without
/// one, a kustomization wins over a Chart.yaml beside it; two explicit fields are an error.
#[test]
fn the_source_type_is_decided_as_argo_cd_decides_it() {
    let r = Repo::new();
    // One directory that is a chart and a kustomization (over other manifests) at once, and a
    // kustomization rendered as a plain directory: each tool renders something else.
    add_chart(&r, "both");
    r.write("both/kustomization.yaml", "resources: [k/deploy.yaml]\n")
        .write("both/k/deploy.yaml", &deployment("by-kustomize", 1, 4))
        .write(
            "kdir/kustomization.yaml",
            "resources: [deploy.yaml]\nnamePrefix: kz-\n",
        )
        .write("kdir/deploy.yaml", &deployment("by-directory", 1, 2))
        .write(
            "argocd/apps.yaml",
            &[
                app("detected", "    path: both\n"),
                app("helm", "    path: both\n    helm: {releaseName: r}\n"),
                app("dir", "    path: kdir\n    directory: {}\n"),
                app("kust", "    path: both\n    kustomize: {namePrefix: k-}\n"),
                app("two", "    path: both\n    helm: {}\n    kustomize: {}\n"),
            ]
            .join("---\n"),
        )
        .commit("one directory, three tools");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        desired_gpus(&json),
        gpus(&[
            ("detected/Deployment/by-kustomize", 4),
            ("helm/Deployment/llm", 1),
            ("dir/Deployment/by-directory", 2),
            ("kust/Deployment/k-by-kustomize", 4),
        ])
    );
    let (status, why) = &apps(&json)["two"];
    assert_eq!(status, "error", "{why}");
    assert!(
        why.contains("multiple application sources defined: Kustomize,Helm"),
        "{why}"
    );
}

/// `helm.valuesObject` wins over `helm.values` (argo-cd `ApplicationSourceHelm.ValuesYAML`), and
/// inline values come after the value files, before parameters.
#[test]
fn values_object_wins_over_values() {
    let r = Repo::new();
    add_chart(&r, "charts/llm");
    r.write("charts/llm/values-prod.yaml", "replicas: 5\ngpus: 5\n")
        .write(
            "argocd/apps.yaml",
            &[
                app(
                    "both",
                    "    path: charts/llm\n    helm:\n      valueFiles: [values-prod.yaml]\n      values: |\n        replicas: 2\n        gpus: 2\n      valuesObject:\n        replicas: 3\n",
                ),
                app(
                    "values-only",
                    "    path: charts/llm\n    helm:\n      valueFiles: [values-prod.yaml]\n      values: |\n        replicas: 2\n      parameters:\n      - {name: gpus, value: '7'}\n",
                ),
            ]
            .join("---\n"),
        )
        .commit("values");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    // valuesObject alone is the inline values: replicas 3, gpus from the value file (5).
    assert_eq!(
        desired_gpus(&json),
        gpus(&[
            ("both/Deployment/llm", 15),
            ("values-only/Deployment/llm", 14)
        ])
    );
}

/// Directory include/exclude are matched as Argo CD matches them: against the path relative to the
/// source directory, with `*` crossing `/`.
#[test]
fn directory_include_and_exclude_match_as_argo_cd_does() {
    let r = Repo::new();
    r.write("w/a.yaml", &deployment("top-a", 1, 1))
        .write("w/sub/a.yaml", &deployment("sub-a", 1, 2))
        .write("w/sub/deep/b.yaml", &deployment("deep-b", 1, 4))
        .write(
            "argocd/apps.yaml",
            &[
                // `a.yaml` is only the top-level file; Argo CD never matches the bare name.
                app(
                    "name",
                    "    path: w\n    directory: {recurse: true, include: a.yaml}\n",
                ),
                // `sub/*` excludes everything below sub/, however deep.
                app(
                    "deep",
                    "    path: w\n    directory: {recurse: true, exclude: 'sub/*'}\n",
                ),
                // `*.yaml` includes every depth.
                app(
                    "all",
                    "    path: w\n    directory: {recurse: true, include: '*.yaml'}\n",
                ),
            ]
            .join("---\n"),
        )
        .commit("patterns");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&json),
        gpus(&[
            ("name/Deployment/top-a", 1),
            ("deep/Deployment/top-a", 1),
            ("all/Deployment/top-a", 1),
            ("all/Deployment/sub-a", 2),
            ("all/Deployment/deep-b", 4),
        ])
    );
}
