//! kustomize `helmCharts:` rendered by gpuledger's own sandboxed helm (never kustomize
//! `--enable-helm`), with the kustomization's transformers applied to the chart's output; remote
//! charts fail with the reason. Real kustomize (kubectl kustomize) and the real Helm engine.

use std::collections::BTreeMap;

use super::render::{URL, add_chart, app_paths};
use super::support::{Repo, desired_gpus, render};

fn gpus(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// The app of `path` in a render report.
fn app<'a>(json: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == path)
        .unwrap_or_else(|| panic!("no app {path}: {json}"))
}

/// A kustomization over a vendored chart: inline values laid over the chart's values
/// (`valuesMerge: override`), an additional values file, then kustomize's namespace and a patch
/// that changes the GPU count act on the chart's output, as with `kustomize build --enable-helm`.
const LLM_KUSTOMIZATION: &str = "namespace: inference
helmCharts:
- name: llm
  releaseName: prod
  version: 0.1.0
  repo: https://charts.example.com
  valuesInline:
    replicas: 3
  additionalValuesFiles:
  - gpu-values.yaml
patches:
- target: {kind: Deployment, name: vllm}
  patch: |-
    - op: replace
      path: /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu
      value: \"4\"
";

#[test]
fn kustomize_inflates_a_local_chart_and_transforms_its_output() {
    let r = Repo::new();
    add_chart(&r, "apps/llm/charts/llm");
    r.write("apps/llm/kustomization.yaml", LLM_KUSTOMIZATION)
        .write("apps/llm/gpu-values.yaml", "gpus: 2\nname: vllm\n")
        .commit("llm through helmCharts");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    // 3 replicas (valuesInline) × 4 GPUs (the patch over gpu-values.yaml's 2), in the
    // kustomization's namespace; the chart is not also an app of its own with default values.
    assert_eq!(
        desired_gpus(&json),
        gpus(&[("inference/Deployment/vllm", 12)])
    );
    assert_eq!(app_paths(&json), ["apps/llm"]);
    let w = &json["desired"]["workloads"][0];
    // The object's source is its chart template; the annotation that carried it is gone.
    assert_eq!(
        w["source"], "apps/llm/charts/llm/templates/deployment.yaml",
        "{w}"
    );
    assert!(!w.to_string().contains("gpuledger.internal"), "{w}");

    // valuesMerge: merge lets the values file win over inline values; replace drops the file.
    r.write(
        "apps/llm/kustomization.yaml",
        &LLM_KUSTOMIZATION
            .replace(
                "  valuesInline:\n",
                "  valuesMerge: merge\n  valuesInline:\n",
            )
            .replace("    replicas: 3\n", "    replicas: 3\n    gpus: 6\n"),
    )
    .commit("merge");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    // values.yaml's replicas: 1 wins over inline 3; the patch still sets 4 GPUs.
    assert_eq!(
        desired_gpus(&json),
        gpus(&[("inference/Deployment/vllm", 4)])
    );
}

/// `helmGlobals.chartHome` and a `valuesFile` of the kustomization's own, reached through an overlay
/// that adds a name prefix; an Argo CD Application of the overlay renders the same.
#[test]
fn chart_home_values_file_and_an_overlay_above() {
    let r = Repo::new();
    add_chart(&r, "vendor/llm");
    r.write(
        "base/kustomization.yaml",
        "helmGlobals:\n  chartHome: ../vendor\nhelmCharts:\n- name: llm\n  valuesFile: values-base.yaml\n  namespace: serving\n",
    )
    .write("base/values-base.yaml", "replicas: 2\ngpus: 8\nname: big\n")
    .write(
        "overlays/prod/kustomization.yaml",
        "resources:\n- ../../base\nnamePrefix: prod-\nnamespace: prod\n",
    )
    .commit("chart home outside the kustomization");
    // kustomize's root-only load restrictor refuses files outside a kustomization's root; helm
    // reads the chart itself, so a chart home beside it renders, as with --enable-helm.
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&json),
        gpus(&[("prod/Deployment/prod-big", 16)])
    );
    assert_eq!(app_paths(&json), ["overlays/prod"]);

    r.write(
        "argo/app.yaml",
        &format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: llm\nspec:\n  source:\n    repoURL: {URL}\n    path: overlays/prod\n  destination:\n    namespace: elsewhere\n"
        ),
    )
    .commit("argo app");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&json),
        gpus(&[("prod/Deployment/prod-big", 16)])
    );

    // Without a valuesFile of its own, kustomize loads the chart's values.yaml through its loader,
    // and the root-only restrictor refuses it outside the kustomization's directory.
    r.write(
        "base/kustomization.yaml",
        "helmGlobals:\n  chartHome: ../vendor\nhelmCharts:\n- name: llm\n",
    )
    .commit("default values file outside the root");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 2, "{err}");
    let e = app(&json, "overlays/prod")["error"].as_str().unwrap();
    assert!(
        e.contains("helmCharts valuesFile ../vendor/llm/values.yaml: vendor/llm/values.yaml is not in or below base; kustomize's root-only load restrictor refuses it"),
        "{e}"
    );
}

/// A chart that is not in the repository (a `repo:` URL or an OCI repository) is never pulled:
/// the app fails and says why, never "rendered, 0 objects"; other apps still render.
#[test]
fn a_remote_chart_is_not_fetched_and_says_so() {
    let r = Repo::new();
    add_chart(&r, "local/charts/llm");
    r.write("local/kustomization.yaml", "helmCharts:\n- name: llm\n")
        .write(
            "remote/kustomization.yaml",
            "helmCharts:\n- name: vllm-stack\n  repo: https://vllm-project.github.io/production-stack\n  version: 0.1.5\n",
        )
        .write(
            "oci/kustomization.yaml",
            "helmCharts:\n- name: kuberay-operator\n  repo: oci://ghcr.io/ray-project/charts\n",
        )
        .write("missing/kustomization.yaml", "helmCharts:\n- name: gone\n")
        .commit("remote charts");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(desired_gpus(&json), gpus(&[("default/Deployment/llm", 1)]));
    for (path, repo) in [
        ("remote", "https://vllm-project.github.io/production-stack"),
        ("oci", "oci://ghcr.io/ray-project/charts"),
    ] {
        let a = app(&json, path);
        assert_eq!(a["status"], "error", "{a}");
        let e = a["error"].as_str().unwrap();
        assert!(
            e.contains(&format!("remote chart from {repo} is not fetched offline"))
                && e.starts_with(&format!("{path}/kustomization.yaml: helmCharts chart ")),
            "{e}"
        );
    }
    let e = app(&json, "missing")["error"].as_str().unwrap();
    assert!(
        e.contains("no chart at missing/charts/gone and no repo to pull it from"),
        "{e}"
    );
}

/// The chart, its values and its home stay inside the repository: a chart name or values file
/// that climbs out is refused before helm runs.
#[test]
fn chart_paths_out_of_the_repository_are_refused() {
    let r = Repo::new();
    r.write(
        "apps/x/kustomization.yaml",
        "helmCharts:\n- name: ../../../../../../../../etc\n",
    )
    .write(
        "apps/y/kustomization.yaml",
        "helmCharts:\n- name: llm\n  additionalValuesFiles: [../../../../../../etc/passwd]\n",
    )
    .commit("escapes");
    add_chart(&r, "apps/y/charts/llm");
    r.commit("chart");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 2, "{err}");
    for path in ["apps/x", "apps/y"] {
        let e = app(&json, path)["error"].as_str().unwrap();
        assert!(
            e.contains("leaves the repository") && e.contains("refused"),
            "{e}"
        );
    }
}

/// Flux's kustomize-controller never inflates helmCharts: a Flux Kustomization that reaches one
/// fails and says so, as it fails in Flux, rather than counting a chart Flux would never apply.
#[test]
fn flux_does_not_inflate_helm_charts() {
    let r = Repo::new();
    add_chart(&r, "apps/llm/charts/llm");
    r.write("apps/llm/kustomization.yaml", "helmCharts:\n- name: llm\n")
        .write(
            "clusters/prod/flux.yaml",
            r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: "https://github.com/acme/gitops", ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: llm, namespace: flux-system}
spec:
  path: ./apps/llm
  sourceRef: {kind: GitRepository, name: flux-system}
"#,
        )
        .commit("helmCharts under Flux");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(desired_gpus(&json), gpus(&[]));
    let a = app(&json, "apps/llm");
    assert_eq!(a["status"], "error", "{a}");
    let e = a["error"].as_str().unwrap();
    assert!(
        e.starts_with("apps/llm/kustomization.yaml: helmCharts are not inflated by Flux's kustomize-controller"),
        "{e}"
    );
}

/// The deprecated `helmChartInflationGenerator` form is inflated too, as kustomize converts it to
/// `helmCharts` (its `chartHome` included), and its chart is not an app of its own.
#[test]
fn the_deprecated_generator_form_inflates_too() {
    let r = Repo::new();
    add_chart(&r, "legacy/vendor/llm");
    r.write(
        "legacy/kustomization.yaml",
        "namespace: legacy\nhelmChartInflationGenerator:\n- chartName: llm\n  chartHome: vendor\n  releaseName: old\n  valuesLocal: {replicas: 2}\n",
    )
    .commit("the old form");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(desired_gpus(&json), gpus(&[("legacy/Deployment/llm", 2)]));
    assert_eq!(app_paths(&json), ["legacy"]);
}
