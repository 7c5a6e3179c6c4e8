//! `gpuledger render` on fixture repositories built as real git repos (commits, a branch, a tag),
//! with the real kustomize and the real Helm engine.

use std::collections::BTreeMap;

use super::support::{Repo, desired_gpus, gpuledger, render};

fn dgd(name: &str, decode: u64, prefill: u64, gpus: u64) -> String {
    format!(
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n  name: {name}\n  labels: {{tenant: chat}}\nspec:\n  services:\n    Frontend:\n      componentType: frontend\n    decode:\n      componentType: worker\n      subComponentType: decode\n      replicas: {decode}\n      resources: {{limits: {{gpu: \"{gpus}\"}}}}\n    prefill:\n      componentType: worker\n      subComponentType: prefill\n      replicas: {prefill}\n      resources: {{limits: {{gpu: \"{gpus}\"}}}}\n"
    )
}

pub(super) fn deployment(name: &str, replicas: u64, gpus: u64) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n      - name: main\n        image: vllm/vllm-openai:v0.9\n        resources:\n          limits: {{nvidia.com/gpu: \"{gpus}\"}}\n"
    )
}

const CHART: &str = "apiVersion: v2\nname: llm\nversion: 0.1.0\n";
const CHART_VALUES: &str = "replicas: 1\ngpus: 1\nname: llm\n";
const CHART_TEMPLATE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.name }}\n  labels:\n    app.kubernetes.io/instance: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n      - name: main\n        image: vllm\n        resources:\n          limits:\n            nvidia.com/gpu: {{ .Values.gpus | quote }}\n";

pub(super) fn add_chart(r: &Repo, dir: &str) {
    r.write(&format!("{dir}/Chart.yaml"), CHART)
        .write(&format!("{dir}/values.yaml"), CHART_VALUES)
        .write(&format!("{dir}/templates/deployment.yaml"), CHART_TEMPLATE);
}

pub(super) const URL: &str = "https://github.com/acme/gitops.git";

/// The paths of the apps a render report lists, in its order.
pub(super) fn app_paths(json: &serde_json::Value) -> Vec<&str> {
    json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect()
}

/// Bare kustomize overlays and a plain directory; history with a branch and a tag.
#[test]
fn kustomize_overlay_plain_dirs_and_refs() {
    let r = Repo::new();
    r.write("base/dgd.yaml", &dgd("llama", 2, 2, 8))
        .write("base/kustomization.yaml", "resources:\n- dgd.yaml\n")
        .write(
            "overlays/prod/kustomization.yaml",
            "resources:\n- ../../base\nnamespace: llm-prod\npatches:\n- target: {group: nvidia.com, kind: DynamoGraphDeployment, name: llama}\n  patch: |-\n    - op: replace\n      path: /spec/services/decode/replicas\n      value: 10\n",
        )
        .write("batch/train.yaml", &deployment("trainer", 2, 4).replace("name: trainer", "name: trainer\n  namespace: research"))
        .write("docs/notes.yaml", "just: some config\n")
        .commit("first");
    r.git(&["tag", "v1"]);
    r.write(
        "overlays/prod/kustomization.yaml",
        "resources:\n- ../../base\nnamespace: llm-prod\npatches:\n- target: {group: nvidia.com, kind: DynamoGraphDeployment, name: llama}\n  patch: |-\n    - op: replace\n      path: /spec/services/decode/replicas\n      value: 12\n",
    )
    .commit("scale decode to 12");
    r.git(&["checkout", "-q", "-b", "smaller"]);
    r.remove("batch/train.yaml").commit("drop the trainer");
    r.git(&["checkout", "-q", "main"]);
    // An uncommitted change in the working tree.
    r.write(
        "batch/train.yaml",
        &deployment("trainer", 3, 4)
            .replace("name: trainer", "name: trainer\n  namespace: research"),
    );

    let at = |args: &[&str]| {
        let (code, json, err) = render(r.path(), args);
        assert_eq!(code, 0, "{err}");
        desired_gpus(&json)
    };
    let want = |dgd: u64, trainer: Option<u64>| {
        let mut m = BTreeMap::from([("llm-prod/DynamoGraphDeployment/llama".to_string(), dgd)]);
        if let Some(t) = trainer {
            m.insert("research/Deployment/trainer".to_string(), t);
        }
        m
    };
    assert_eq!(at(&["--ref", "v1"]), want(10 * 8 + 2 * 8, Some(8)));
    assert_eq!(at(&["--ref", "main"]), want(12 * 8 + 2 * 8, Some(8)));
    assert_eq!(at(&["--ref", "smaller"]), want(12 * 8 + 2 * 8, None));
    let sha = r.git(&["rev-parse", "HEAD~1"]);
    assert_eq!(at(&["--ref", sha.trim()]), want(10 * 8 + 2 * 8, Some(8)));
    assert_eq!(
        at(&[]),
        want(12 * 8 + 2 * 8, Some(12)),
        "the working tree includes uncommitted changes"
    );

    let (_, json, _) = render(r.path(), &["--ref", "v1"]);
    let w = &json["desired"]["workloads"][0];
    assert_eq!(w["shape"], "decode 10×8 + prefill 2×8 = 96");
    assert_eq!(
        w["source"], "base/dgd.yaml:4",
        "kustomize output keeps the manifest's file and line"
    );
    assert_eq!(w["tenant"], "chat");
    assert_eq!(w["app"], "overlays/prod");
    // The base is part of the overlay, not a root of its own.
    let apps: Vec<&str> = json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(apps, ["batch", "overlays/prod"]);
    // An unknown ref is an error naming it.
    let out = super::support::gpuledger(r.path())
        .args(["render", "--repo", ".", "--ref", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"nope\""));
}

/// Argo CD Applications of each source type, multi-source `$values`, and files no app renders.
#[test]
fn argo_applications_of_each_source_type() {
    let r = Repo::new();
    let app = |name: &str, source: &str, ns: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {ns}\n{source}"
        )
    };
    r.write(
        "argocd/apps.yaml",
        &[
            app("plain", &format!("  source:\n    repoURL: {URL}\n    path: workloads/plain\n    targetRevision: HEAD\n    directory: {{recurse: true}}\n"), "serving"),
            app("kustom", &format!("  source:\n    repoURL: {URL}\n    path: workloads/kustom\n    kustomize:\n      namePrefix: team-\n      replicas:\n      - {{name: llama, count: 3}}\n"), "kust-ns"),
            app("charted", &format!("  source:\n    repoURL: {URL}\n    path: charts/llm\n    helm:\n      releaseName: rel\n      valueFiles: [values-prod.yaml]\n      parameters:\n      - {{name: name, value: chat-llm}}\n"), "helm-ns"),
            app("multi", &format!("  sources:\n  - repoURL: {URL}\n    path: charts/llm\n    helm:\n      valueFiles: [$values/envs/big.yaml]\n      valuesObject: {{name: big-llm}}\n  - repoURL: {URL}\n    ref: values\n"), "multi-ns"),
            app("elsewhere", "  source:\n    repoURL: https://github.com/other/repo\n    path: x\n", "x"),
            app("remote-chart", "  source:\n    repoURL: https://charts.example.com\n    chart: vllm\n    targetRevision: 1.0.0\n", "x"),
        ]
        .join("---\n"),
    )
    .write("workloads/plain/a.yaml", &deployment("plain-a", 2, 1))
    .write("workloads/plain/sub/b.yaml", &deployment("plain-b", 1, 2).replace("name: plain-b", "name: plain-b\n  namespace: own-ns"))
    .write("workloads/kustom/kustomization.yaml", "resources: [deploy.yaml]\n")
    .write("workloads/kustom/deploy.yaml", &deployment("llama", 1, 8))
    .write("envs/big.yaml", "replicas: 4\ngpus: 8\n")
    .write("stray/forgotten.yaml", &deployment("forgotten", 1, 8));
    add_chart(&r, "charts/llm");
    r.write("charts/llm/values-prod.yaml", "replicas: 2\ngpus: 2\n")
        .commit("apps");
    r.git(&["remote", "add", "origin", "git@github.com:acme/gitops.git"]);

    // No test reaches the network: the remote chart stays unknown, and says so.
    let (code, json, err) = render(r.path(), &["--offline"]);
    // Two apps are not rendered (another repository, a remote chart offline): unknown, exit 2.
    assert_eq!(code, 2, "{err}");
    let got = desired_gpus(&json);
    let want: BTreeMap<String, u64> = [
        ("serving/Deployment/plain-a", 2),
        ("own-ns/Deployment/plain-b", 2),
        ("kust-ns/Deployment/team-llama", 24),
        ("helm-ns/Deployment/chat-llm", 4),
        ("multi-ns/Deployment/big-llm", 32),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(got, want);
    let d = &json["desired"];
    let status: BTreeMap<String, String> = d["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(status["elsewhere"], "not-rendered");
    assert_eq!(status["remote-chart"], "not-rendered");
    assert_eq!(d["gpus_declared"], serde_json::Value::Null);
    assert!(
        d["unknown"]["gpus_declared"]
            .as_str()
            .unwrap()
            .starts_with("2 of 6 apps not rendered"),
        "{}",
        d["unknown"]
    );
    assert_eq!(status["charted"], "rendered");
    let reason = d["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "elsewhere")
        .unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("github.com/other/repo") && reason.contains("github.com/acme/gitops"),
        "{reason}"
    );
    assert_eq!(
        d["not_deployed"],
        serde_json::json!(["stray/forgotten.yaml"])
    );
    // Helm output names its template.
    let charted = d["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "chat-llm")
        .unwrap();
    assert_eq!(charted["source"], "charts/llm/templates/deployment.yaml");
    assert_eq!(charted["app"], "charted");
}

/// ApplicationSets: list, git directories, git files (both template syntaxes); other generators are
/// listed as not rendered.
#[test]
fn applicationsets() {
    let r = Repo::new();
    r.write(
        "appsets.yaml",
        &format!(
            r#"apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {{name: by-list}}
spec:
  generators:
  - list:
      elements:
      - {{team: alpha, dir: teams/alpha}}
  template:
    metadata: {{name: "{{{{team}}}}-app"}}
    spec:
      source: {{repoURL: "{URL}", path: "{{{{dir}}}}"}}
      destination: {{namespace: "{{{{team}}}}"}}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {{name: by-dir}}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: "{URL}"
      revision: HEAD
      directories:
      - path: models/*
      - path: models/skip
        exclude: true
  template:
    metadata: {{name: "{{{{.path.basename}}}}"}}
    spec:
      source: {{repoURL: "{URL}", path: "{{{{.path.path}}}}"}}
      destination: {{namespace: "models-{{{{.path.basename}}}}"}}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {{name: by-file}}
spec:
  generators:
  - git:
      repoURL: "{URL}"
      files:
      - path: clusters/*/config.json
  template:
    metadata: {{name: "cluster-{{{{cluster.name}}}}"}}
    spec:
      source: {{repoURL: "{URL}", path: "{{{{path}}}}/workloads"}}
      destination: {{namespace: "{{{{cluster.namespace}}}}"}}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {{name: by-cluster}}
spec:
  generators:
  - clusters: {{}}
  template:
    metadata: {{name: x}}
    spec:
      source: {{repoURL: "{URL}", path: x}}
"#
        ),
    )
    .write("teams/alpha/d.yaml", &deployment("alpha", 1, 1))
    .write("models/llama/d.yaml", &deployment("llama", 2, 8))
    .write("models/qwen/d.yaml", &deployment("qwen", 1, 4))
    .write("models/skip/d.yaml", &deployment("skipped", 1, 8))
    .write(
        "clusters/east/config.json",
        r#"{"cluster": {"name": "east", "namespace": "east-ns"}}"#,
    )
    .write(
        "clusters/east/workloads/d.yaml",
        &deployment("east-job", 3, 2),
    )
    .commit("appsets");

    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    // The clusters generator needs the cluster: that ApplicationSet is unknown, exit 2.
    assert_eq!(code, 2, "{err}");
    let want: BTreeMap<String, u64> = [
        ("alpha/Deployment/alpha", 1),
        ("models-llama/Deployment/llama", 16),
        ("models-qwen/Deployment/qwen", 4),
        ("east-ns/Deployment/east-job", 6),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(desired_gpus(&json), want);
    let apps = json["desired"]["apps"].as_array().unwrap();
    let cluster = apps.iter().find(|a| a["name"] == "by-cluster").unwrap();
    assert_eq!(cluster["status"], "not-rendered");
    assert!(
        cluster["error"]
            .as_str()
            .unwrap()
            .contains("clusters generator")
    );
    let kinds: Vec<&str> = apps.iter().map(|a| a["kind"].as_str().unwrap()).collect();
    assert!(
        kinds.contains(&"ApplicationSet/git") && kinds.contains(&"ApplicationSet/list"),
        "{kinds:?}"
    );
}

/// Flux Kustomization (targetNamespace, postBuild substitution, a directory without a
/// kustomization) and HelmRelease (local chart, valuesFiles, values, valuesFrom unresolved).
#[test]
fn flux_kustomization_and_helmrelease() {
    let r = Repo::new();
    r.write(
        "clusters/prod/flux.yaml",
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: "ssh://git@github.com/acme/gitops", ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: models, namespace: flux-system}
spec:
  path: ./apps/models
  sourceRef: {kind: GitRepository, name: flux-system}
  targetNamespace: inference
  postBuild:
    substitute: {decode_replicas: "6"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: llm, namespace: flux-system}
spec:
  targetNamespace: serving
  chart:
    spec:
      chart: ./charts/llm
      sourceRef: {kind: GitRepository, name: flux-system}
      valuesFiles: [./charts/llm/values-prod.yaml]
  values: {gpus: 4}
  valuesFrom:
  - {kind: ConfigMap, name: llm-values}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: from-repo, namespace: flux-system}
spec:
  chart:
    spec:
      chart: vllm
      sourceRef: {kind: HelmRepository, name: vllm}
"#,
    )
    .write(
        "apps/models/graph.yaml",
        &dgd("llama", 1, 1, 8).replace(
            "replicas: 1\n      resources: {limits: {gpu: \"8\"}}\n    prefill",
            "replicas: ${decode_replicas}\n      resources: {limits: {gpu: \"8\"}}\n    prefill",
        ),
    )
    .write(
        "apps/models/extra/batch.yaml",
        &deployment("batch", 1, 2).replace("name: batch", "name: batch\n  namespace: ignored"),
    );
    add_chart(&r, "charts/llm");
    r.write("charts/llm/values-prod.yaml", "replicas: 3\ngpus: 1\n")
        .commit("flux");

    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    // One HelmRelease's HelmRepository is not in the repository: that app is unknown, exit 2.
    assert_eq!(code, 2, "{err}");
    let want: BTreeMap<String, u64> = [
        ("inference/DynamoGraphDeployment/llama", 6 * 8 + 8),
        ("inference/Deployment/batch", 2),
        ("serving/Deployment/llm", 12),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(desired_gpus(&json), want);
    let apps = json["desired"]["apps"].as_array().unwrap();
    let llm = apps.iter().find(|a| a["name"] == "llm").unwrap();
    assert!(
        llm["notes"][0].as_str().unwrap().contains("valuesFrom"),
        "{llm}"
    );
    let from_repo = apps.iter().find(|a| a["name"] == "from-repo").unwrap();
    assert_eq!(from_repo["status"], "not-rendered");
    assert!(
        from_repo["error"]
            .as_str()
            .unwrap()
            .contains("HelmRepository")
    );
}

/// Without apps: a chart root is rendered with its values, plain files beside it too.
#[test]
fn chart_roots_and_plain_directories_without_apps() {
    let r = Repo::new();
    add_chart(&r, "charts/llm");
    r.write("plain/d.yaml", &deployment("plain", 2, 2))
        .commit("charts");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let want: BTreeMap<String, u64> = [
        ("default/Deployment/llm", 1),
        ("default/Deployment/plain", 4),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(desired_gpus(&json), want);
}

/// Broken YAML in one app: its error names file and line, the others still render, exit 2.
#[test]
fn one_broken_app_does_not_stop_the_others() {
    let r = Repo::new();
    r.write("good/d.yaml", &deployment("good", 1, 8))
        .write("bad/d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  replicas: [oops\n")
        .commit("mixed");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("failed to render") && err.contains("bad"),
        "{err}"
    );
    assert_eq!(desired_gpus(&json)["default/Deployment/good"], 8);
    let bad = json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "bad")
        .unwrap();
    assert_eq!(bad["status"], "error");
    assert!(
        bad["error"].as_str().unwrap().starts_with("bad/d.yaml:"),
        "{bad}"
    );
    // The failure leads the human report, and the total it says is only what rendered.
    let out = gpuledger(r.path())
        .args(["render", "--repo", ".", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    let after_title = md.split("\n\n").nth(1).unwrap_or_default();
    assert!(
        after_title.starts_with(
            "> [!CAUTION]\n> **GPUs declared: unknown — 1 of 2 apps not rendered: directory bad"
        ),
        "{md}"
    );
    assert!(
        md.contains("**8** GPUs declared by 1 GPU workload in the apps that rendered (1 of 2); the rest is unknown"),
        "{md}"
    );
}

/// Kustomize exec plugins and KRM functions are never executed; `../` escapes and escaping
/// symlinks are refused.
#[test]
fn rendering_runs_no_code_and_stays_inside_the_repository() {
    let r = Repo::new();
    let marker = r.path().join("PWNED");
    let script = format!(
        "#!/bin/sh\ntouch {}\necho 'apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x}}'\n",
        marker.display()
    );
    r.write("evil/plugin.sh", &script);
    std::process::Command::new("chmod")
        .args(["+x", &r.path().join("evil/plugin.sh").display().to_string()])
        .status()
        .unwrap();
    r.write(
        "evil/kustomization.yaml",
        "resources: [d.yaml]\ngenerators: [gen.yaml]\ntransformers: [fn.yaml]\n",
    )
    .write(
        "evil/gen.yaml",
        "apiVersion: example.com/v1\nkind: Pwn\nmetadata:\n  name: gen\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./plugin.sh\n",
    )
    .write(
        "evil/fn.yaml",
        "apiVersion: example.com/v1\nkind: Pwn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: evil/pwn\n",
    )
    .write("evil/d.yaml", &deployment("evil", 1, 1))
    .write("escape/kustomization.yaml", "resources:\n- ../../outside.yaml\n")
    .write("ok/d.yaml", &deployment("ok", 1, 1));
    std::os::unix::fs::symlink("/etc/passwd", r.path().join("ok/link.yaml")).unwrap();
    r.commit("hostile");

    for args in [&[][..], &["--ref", "HEAD"][..]] {
        let (code, json, err) = render(r.path(), args);
        assert!(!marker.exists(), "the exec plugin ran");
        assert_eq!(code, 2, "{err}");
        let apps = json["desired"]["apps"].as_array().unwrap();
        let status = |n: &str| {
            apps.iter()
                .find(|a| a["name"] == n)
                .unwrap_or_else(|| panic!("{n} in {apps:?}"))["status"]
                .clone()
        };
        assert_eq!(status("evil"), "error");
        assert_eq!(status("escape"), "error");
        assert_eq!(desired_gpus(&json)["default/Deployment/ok"], 1);
        let problems = json["desired"]["problems"].to_string();
        assert!(
            problems.contains("ok/link.yaml") && problems.contains("outside the repository"),
            "{problems}"
        );
    }
}

/// A values file outside the repository is refused; two apps rendering the same object are reported.
#[test]
fn values_outside_the_repository_and_duplicate_objects() {
    let r = Repo::new();
    let app = |name: &str, spec: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}}}\nspec:\n  destination: {{namespace: ml}}\n{spec}"
        )
    };
    r.write(
        "apps.yaml",
        &[
            app("sneaky", &format!("  source:\n    repoURL: {URL}\n    path: charts/llm\n    helm:\n      valueFiles: [../../../../etc/passwd]\n")),
            app("one", &format!("  source:\n    repoURL: {URL}\n    path: shared\n")),
            app("two", &format!("  source:\n    repoURL: {URL}\n    path: shared\n")),
        ]
        .join("---\n"),
    )
    .write("shared/d.yaml", &deployment("shared", 1, 2));
    add_chart(&r, "charts/llm");
    r.commit("apps");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 2, "{err}");
    let apps = json["desired"]["apps"].as_array().unwrap();
    let sneaky = apps.iter().find(|a| a["name"] == "sneaky").unwrap();
    assert_eq!(sneaky["status"], "error");
    assert!(
        sneaky["error"]
            .as_str()
            .unwrap()
            .contains("outside the repository"),
        "{sneaky}"
    );
    assert_eq!(
        json["desired"]["duplicates"],
        serde_json::json!([{"object": "ml/Deployment/shared", "apps": ["one", "two"]}])
    );
}

/// Hostile YAML — an alias bomb, deep nesting, invalid UTF-8, a 50 MB document — gives a bounded,
/// clear error per file (or, for the big honest document, a result), never a panic.
#[test]
fn hostile_yaml_is_refused_clearly() {
    let r = Repo::new();
    let mut bomb = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        bomb.push_str(&format!("  a{i}: &a{i} [{refs}]\n"));
    }
    let deep = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: deep}}\ndata: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let mut big = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n");
    let value = "x".repeat(100);
    for i in 0..480_000 {
        big.push_str(&format!("  k{i}: \"{value}\"\n"));
    }
    r.write("bomb/c.yaml", &bomb)
        .write("deep/c.yaml", &deep)
        .write("big/c.yaml", &big)
        .write("good/d.yaml", &deployment("good", 1, 1));
    std::fs::create_dir_all(r.path().join("utf8")).unwrap();
    std::fs::write(
        r.path().join("utf8/c.yaml"),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \xff\xfe}\n",
    )
    .unwrap();
    r.commit("hostile");
    let (code, json, err) = render(r.path(), &["--ref", "main"]);
    assert_eq!(code, 2, "{err}");
    let apps = json["desired"]["apps"].as_array().unwrap();
    let error = |n: &str| {
        apps.iter().find(|a| a["name"] == n).unwrap()["error"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        error("bomb").contains("bomb/c.yaml:") && error("bomb").contains("alias bomb"),
        "{}",
        error("bomb")
    );
    assert!(error("deep").contains("deep/c.yaml:"), "{}", error("deep"));
    assert!(
        error("utf8").contains("not valid UTF-8"),
        "{}",
        error("utf8")
    );
    assert_eq!(
        apps.iter().find(|a| a["name"] == "big").unwrap()["status"],
        "rendered"
    );
    assert_eq!(desired_gpus(&json)["default/Deployment/good"], 1);
}

/// `render.roots` and `render.exclude` in the repository's `.gpuledger.yaml` override discovery.
#[test]
fn configured_roots_and_excludes() {
    let r = Repo::new();
    r.write("a/d.yaml", &deployment("a", 1, 1))
        .write("b/d.yaml", &deployment("b", 1, 2))
        .write("b/examples/d.yaml", &deployment("example", 1, 8))
        .write("c/d.yaml", &deployment("c", 1, 4))
        .write(
            ".gpuledger.yaml",
            "render:\n  roots: [b]\n  exclude: [\"b/examples/**\"]\n",
        )
        .commit("roots");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("using config"), "{err}");
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([("default/Deployment/b".to_string(), 2)])
    );
    r.write(".gpuledger.yaml", "render:\n  exclude: [c]\n");
    let (_, json, _) = render(r.path(), &[]);
    let got: Vec<String> = desired_gpus(&json).into_keys().collect();
    assert_eq!(
        got,
        [
            "default/Deployment/a",
            "default/Deployment/b",
            "default/Deployment/example"
        ]
    );
}

/// Remote kustomize bases are refused before kustomize runs, and a planted `.gpuledger-home` with a
/// hostile git configuration is never the renderers' HOME.
#[test]
fn remote_bases_are_refused_and_home_is_not_the_repository() {
    let r = Repo::new();
    let marker = r.path().join("PWNED-BY-GIT");
    r.write(
        ".gpuledger-home/.gitconfig",
        &format!(
            "[core]\n\tsshCommand = \"sh -c 'touch {}' --\"\n",
            marker.display()
        ),
    )
    .write(
        "remote/kustomization.yaml",
        "resources:\n- ssh://git@example.invalid/org/repo//base?ref=main\n",
    )
    .write(
        "remote-https/kustomization.yaml",
        "resources:\n- https://example.invalid/org/repo//base?ref=v1\n",
    )
    .write("ok/d.yaml", &deployment("ok", 1, 1))
    .commit("remote");
    let (code, json, err) = render(r.path(), &["--ref", "HEAD"]);
    assert!(!marker.exists(), "a planted git config ran");
    assert_eq!(code, 2, "{err}");
    let apps = json["desired"]["apps"].as_array().unwrap();
    for name in ["remote", "remote-https"] {
        let a = apps.iter().find(|a| a["name"] == name).unwrap();
        assert_eq!(a["status"], "error");
        assert!(
            a["error"].as_str().unwrap().contains("remote resource"),
            "{a}"
        );
    }
    assert_eq!(desired_gpus(&json)["default/Deployment/ok"], 1);
}

/// An Argo kustomize source on a directory without a kustomization, next to files with shorter
/// paths: the generated kustomization lists only the unit's own files.
#[test]
fn argo_kustomize_options_on_a_plain_directory() {
    let r = Repo::new();
    r.write(
        "app.yaml",
        &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: pre}}\nspec:\n  destination: {{namespace: ml}}\n  source:\n    repoURL: {URL}\n    path: deploy/serving-long\n    kustomize: {{namePrefix: x-}}\n"),
    )
    .write("deploy/serving-long/d.yaml", &deployment("model", 2, 4))
    .write("a.yaml", &deployment("elsewhere", 1, 1))
    .commit("plain dir with kustomize options");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([("ml/Deployment/x-model".to_string(), 8)])
    );
}

/// A base that an app's overlay pulls in from outside the app's directory is deployed, not stray.
#[test]
fn bases_outside_the_app_path_are_deployed() {
    let r = Repo::new();
    r.write(
        "app.yaml",
        &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: prod}}\nspec:\n  destination: {{namespace: ml}}\n  source: {{repoURL: {URL}, path: overlays/prod}}\n"),
    )
    .write("base/d.yaml", &deployment("model", 1, 8))
    .write("base/kustomization.yaml", "resources: [d.yaml]\n")
    .write("overlays/prod/kustomization.yaml", "resources: [../../base]\n")
    .write("stray/x.yaml", &deployment("stray", 1, 1))
    .commit("overlay");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        json["desired"]["not_deployed"],
        serde_json::json!(["stray/x.yaml"])
    );
}

/// A manifest without a namespace lands in `default` (no app gives it another): its workload,
/// tenant and drift key are those of `namespace: default` written out — never a blank tenant.
#[test]
fn a_manifest_without_a_namespace_lands_in_default() {
    let without = Repo::new();
    without
        .write("d.yaml", &deployment("web", 2, 4))
        .commit("no namespace");
    let with = Repo::new();
    with.write(
        "d.yaml",
        &deployment("web", 2, 4).replace("  name: web\n", "  name: web\n  namespace: default\n"),
    )
    .commit("namespace: default");
    let (code, a, err) = render(without.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let (_, b, _) = render(with.path(), &[]);
    let w = &a["desired"]["workloads"][0];
    assert_eq!(
        (w["namespace"].as_str(), w["tenant"].as_str()),
        (Some("default"), Some("default"))
    );
    assert_eq!(a["desired"]["workloads"], b["desired"]["workloads"]);
    assert_eq!(a["desired"]["tenants"], b["desired"]["tenants"]);
}

/// Flux's generated kustomization for a path without one (fluxcd/pkg kustomize_generator.go): a
/// sub-directory with its own kustomization is one resource (what it lists, not every file in it),
/// and what `.sourceignore` (or source-controller's defaults, like `.gitlab-ci.yml`) leaves out of
/// the artifact is not there.
#[test]
fn flux_generates_a_kustomization_as_flux_does() {
    let r = Repo::new();
    r.write(
        "clusters/prod/flux.yaml",
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: "https://github.com/acme/gitops", ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  path: ./apps
  targetNamespace: ml
  sourceRef: {kind: GitRepository, name: flux-system}
"#,
    )
    .write("apps/a.yaml", &deployment("a", 1, 2))
    .write("apps/deeper/b.yaml", &deployment("b", 1, 1))
    .write(
        "apps/sub/kustomization.yaml",
        "resources: [d.yaml]\nnamePrefix: sub-\n",
    )
    .write("apps/sub/d.yaml", &deployment("d", 1, 4))
    .write("apps/sub/extra.yaml", &deployment("extra", 1, 8))
    .write("apps/ignored/x.yaml", &deployment("x", 1, 16))
    .write(
        "apps/.gitlab-ci.yml",
        "stages: [test]\ntest:\n  script: [make]\n",
    )
    .write(
        ".sourceignore",
        "# drafts stay out of the artifact\n/apps/ignored/\n",
    )
    .commit("flux apps");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    let want: BTreeMap<String, u64> = [
        ("ml/Deployment/a", 2),
        ("ml/Deployment/b", 1),
        ("ml/Deployment/sub-d", 4),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(desired_gpus(&json), want, "{json}");
}

/// A `kind: Component` kustomization is a fragment, never a root, even when nothing uses it; the
/// overlay that uses it renders it in.
#[test]
fn a_kustomize_component_is_never_a_root() {
    let r = Repo::new();
    r.write("base/kustomization.yaml", "resources: [d.yaml]\n")
        .write("base/d.yaml", &deployment("web", 2, 1))
        .write(
            "components/more-gpus/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: Deployment, name: web}\n  patch: |-\n    - op: replace\n      path: /spec/replicas\n      value: 3\n",
        )
        .write(
            "components/unused/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [x.yaml]\n",
        )
        .write("components/unused/x.yaml", &deployment("orphan", 1, 8))
        .write(
            "overlays/prod/kustomization.yaml",
            "resources: [../../base]\ncomponents: [../../components/more-gpus]\n",
        )
        .commit("components");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let apps = app_paths(&json);
    assert_eq!(apps, ["overlays/prod"], "{json}");
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([("default/Deployment/web".to_string(), 3)])
    );
}

/// An app's own `components` (Flux `spec.components`, Argo CD `kustomize.components`) are relative
/// to the app's path, as both controllers add them to that path's kustomization — the layout of
/// Flux home labs (`components: [../../../../components/...]` beside `path: ./kubernetes/apps/...`).
#[test]
fn an_apps_components_are_relative_to_its_path() {
    let url = "https://github.com/acme/gitops.git";
    let r = Repo::new();
    r.write("kubernetes/apps/ai/web/app/kustomization.yaml", "resources: [d.yaml]\n")
        .write("kubernetes/apps/ai/web/app/d.yaml", &deployment("web", 1, 2))
        .write(
            "kubernetes/components/scale/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: Deployment}\n  patch: |-\n    - op: replace\n      path: /spec/replicas\n      value: 3\n",
        )
        .write(
            "kubernetes/flux/web.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: web\n  namespace: flux-system\nspec:\n  path: ./kubernetes/apps/ai/web/app\n  components: [../../../../components/scale]\n  sourceRef: {kind: GitRepository, name: flux-system}\n  targetNamespace: flux\n",
        )
        .write(
            "argocd/web.yaml",
            &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  destination: {{namespace: argo}}\n  source:\n    repoURL: {url}\n    path: kubernetes/apps/ai/web/app\n    kustomize:\n      namespace: argo\n      components: [../../../../components/scale]\n"),
        )
        .commit("components beside the path");
    let (code, json, err) = render(r.path(), &["--repo-url", url]);
    assert_eq!(code, 0, "{err}\n{:#}", json["desired"]["apps"]);
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([
            ("argo/Deployment/web".to_string(), 6),
            ("flux/Deployment/web".to_string(), 6),
        ])
    );
}

/// Flux 2.7's source-watcher: an `ArtifactGenerator` copies a directory of this repository (its
/// bootstrap `GitRepository`, not in Git) into an `ExternalArtifact`, and a Kustomization renders a
/// path of that artifact: it is that directory of the tree, rendered once.
#[test]
fn a_kustomization_of_an_external_artifact_renders_the_directory_it_copies() {
    let r = Repo::new();
    r.write(
        "deploy/inference/d.yaml",
        &deployment("server", 2, 4),
    )
    .write(
        "clusters/prod/apps.yaml",
        "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  sources:\n  - alias: repo\n    kind: GitRepository\n    name: flux-system\n  artifacts:\n  - name: inference\n    copy:\n    - from: '@repo/deploy/inference/**'\n      to: '@artifact/'\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: inference\n  namespace: flux-system\nspec:\n  path: ./\n  sourceRef:\n    kind: ExternalArtifact\n    name: inference\n  targetNamespace: serving\n",
    )
    .commit("an artifact generator");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}\n{:#}", json["desired"]["apps"]);
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([("serving/Deployment/server".to_string(), 8)])
    );
    let app = json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "inference")
        .unwrap();
    assert_eq!(app["path"], "deploy/inference", "{app:#}");
    assert_eq!(json["desired"]["duplicates"], serde_json::json!([]));
}

/// Two overlays of one base, with no app saying which the cluster applies: both render, their
/// objects are conflicts, and each says which `render.roots` would pick it.
#[test]
fn roots_that_cannot_be_told_apart_say_which_render_roots_would() {
    let r = Repo::new();
    r.write("base/kustomization.yaml", "resources: [d.yaml]\n")
        .write("base/d.yaml", &deployment("web", 1, 1))
        .write(
            "overlays/dev/kustomization.yaml",
            "resources: [../../base]\n",
        )
        .write(
            "overlays/prod/kustomization.yaml",
            "resources: [../../base]\nreplicas: [{name: web, count: 4}]\n",
        )
        .commit("two overlays");
    let (_, json, err) = render(r.path(), &[]);
    let apps = json["desired"]["apps"].as_array().unwrap();
    assert_eq!(app_paths(&json), ["overlays/dev", "overlays/prod"], "{err}");
    for (a, other) in apps.iter().zip(["overlays/prod", "overlays/dev"]) {
        let note = a["notes"][0].as_str().unwrap_or_default();
        assert!(
            note.contains(&format!("shares 1 object(s) with {other}"))
                && note.contains(&format!(
                    "`render.roots: [{}]`",
                    a["path"].as_str().unwrap()
                )),
            "{a:#}"
        );
    }
    // Named, the root renders alone and the note is gone.
    r.write(".gpuledger.yaml", "render:\n  roots: [overlays/prod]\n");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([("default/Deployment/web".to_string(), 4)])
    );
    assert_eq!(json["desired"]["apps"][0]["notes"], serde_json::json!([]));
}

/// When kustomize fails, the report gives kustomize's own error for the app's path — not the
/// wrapper gpuledger builds around it, nor kubectl's log prefix.
#[test]
fn a_kustomize_failure_reads_as_kustomize_own_error_for_the_app() {
    let r = Repo::new();
    r.write("app/kustomization.yaml", "resources: [missing.yaml]\n")
        .commit("a kustomization that lists a file it does not have");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 2, "{err}");
    let e = json["desired"]["apps"][0]["error"].as_str().unwrap();
    assert!(e.starts_with("kustomize build app: "), "{e}");
    assert!(e.contains("missing.yaml"), "{e}");
    for artefact in [".gpuledger-wrap", "run.go", "'../app'", "command failed"] {
        assert!(!e.contains(artefact), "{artefact} in {e}");
    }
}

/// Argo CD `helm.ignoreMissingValueFiles`: a value file that does not exist is dropped with it,
/// and without it the app fails, naming the file (argo-cd reposerver helmTemplate).
#[test]
fn argo_ignore_missing_value_files() {
    let r = Repo::new();
    let app = |name: &str, ignore: bool| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}\n  source:\n    repoURL: {URL}\n    path: charts/llm\n    helm:\n      valueFiles: [values-prod.yaml, values-{name}.yaml]\n      ignoreMissingValueFiles: {ignore}\n"
        )
    };
    r.write(
        "argocd/apps.yaml",
        &[app("lenient", true), app("strict", false)].join("---\n"),
    );
    add_chart(&r, "charts/llm");
    r.write("charts/llm/values-prod.yaml", "replicas: 2\ngpus: 4\n")
        .commit("apps");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(desired_gpus(&json)["lenient/Deployment/llm"], 8, "{json}");
    let strict = json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "strict")
        .unwrap();
    assert_eq!(strict["status"], "error", "{strict}");
    assert!(
        strict["error"]
            .as_str()
            .unwrap()
            .contains("value file values-strict.yaml does not exist"),
        "{strict}"
    );
}

/// `--ref` in a blobless clone (`git clone --filter=blob:none`, what CI checkouts often are): the
/// blobs the ref needs and the clone lacks are fetched through git, once; when they cannot be, the
/// error names the file and says it is a partial clone.
#[test]
fn a_ref_in_a_blobless_clone_fetches_its_blobs_or_says_why() {
    let origin = Repo::new();
    origin
        .write("d.yaml", &deployment("web", 1, 1))
        .commit("main");
    origin.git(&["checkout", "-q", "-b", "feature"]);
    origin
        .write("d.yaml", &deployment("web", 2, 4))
        .write("more/e.yaml", &deployment("extra", 1, 2))
        .commit("feature");
    origin.git(&["checkout", "-q", "main"]);
    origin.git(&["config", "uploadpack.allowFilter", "true"]);
    origin.git(&["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let url = format!("file://{}", origin.path().display());
    let clone = |dir: &std::path::Path| {
        let out = std::process::Command::new("git")
            .args([
                "clone",
                "-q",
                "--filter=blob:none",
                "--branch",
                "main",
                &url,
            ])
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    let tmp = tempfile::tempdir().unwrap();
    let ci = tmp.path().join("ci");
    clone(&ci);
    let (code, json, err) = render(&ci, &["--ref", "origin/feature"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([
            ("default/Deployment/extra".to_string(), 2),
            ("default/Deployment/web".to_string(), 8)
        ])
    );
    // The remote is gone: the missing blob is named, with what to do.
    let offline = tmp.path().join("offline");
    clone(&offline);
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&offline)
            .args(args)
            .output()
            .unwrap()
    };
    git(&["remote", "set-url", "origin", "/nonexistent/gitops"]);
    let out = gpuledger(&offline)
        .args(["render", "--repo", ".", "--ref", "origin/feature"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not in this partial clone") && err.contains("d.yaml"),
        "{err}"
    );
}

/// A file a kustomization reads — a patch, or a resource outside its directory — is part of that
/// kustomization, never an app of its own: the patch that sets replicas and GPUs is not a second
/// workload. (kustomize's root-only load restrictor then refuses the overlay, which says so.)
#[test]
fn patch_files_and_shared_resources_are_never_apps() {
    let r = Repo::new();
    r.write("base/kustomization.yaml", "resources: [d.yaml]\n")
        .write("base/d.yaml", &deployment("web", 1, 1))
        .write(
            "patches/gpus.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n  template:\n    spec:\n      containers:\n      - name: main\n        resources:\n          limits: {nvidia.com/gpu: \"8\"}\n",
        )
        .write("shared/extra.yaml", &deployment("extra", 1, 2))
        .write(
            "overlays/prod/kustomization.yaml",
            "resources: [../../base, ../../shared/extra.yaml]\npatches:\n- path: ../../patches/gpus.yaml\n",
        )
        .commit("an overlay with a patch file and a shared resource");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 2, "{err}");
    let apps = app_paths(&json);
    assert_eq!(apps, ["overlays/prod"], "{json}");
    assert!(desired_gpus(&json).is_empty(), "{json}");
    let e = json["desired"]["apps"][0]["error"].as_str().unwrap();
    assert!(
        e.starts_with("kustomize build overlays/prod: ") && e.contains("security"),
        "{e}"
    );
}

/// Flux builds with no load restriction inside the repository (fluxcd/pkg SecureBuild), so a Flux
/// Kustomization's overlay may read a patch beside its directory — the same layout that plain
/// kustomize (and Argo CD's default) refuses.
#[test]
fn flux_overlays_may_read_patches_beside_them() {
    let r = Repo::new();
    r.write(
        "clusters/prod/flux.yaml",
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: "https://github.com/acme/gitops", ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: serving, namespace: flux-system}
spec:
  path: ./overlays/prod
  targetNamespace: ml
  sourceRef: {kind: GitRepository, name: flux-system}
"#,
    )
    .write("base/kustomization.yaml", "resources: [d.yaml]\n")
    .write("base/d.yaml", &deployment("web", 1, 1))
    .write(
        "patches/gpus.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n  template:\n    spec:\n      containers:\n      - name: main\n        resources:\n          limits: {nvidia.com/gpu: \"8\"}\n",
    )
    .write(
        "overlays/prod/kustomization.yaml",
        "resources: [../../base]\npatches:\n- path: ../../patches/gpus.yaml\n",
    )
    .commit("a Flux overlay with a patch beside it");
    let (code, json, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&json),
        BTreeMap::from([("ml/Deployment/web".to_string(), 32)])
    );
}

/// Renders `repo` as JSON with kustomize batching on or off; the report, and the debug lines that
/// say how many kustomize builds ran together.
fn render_batched(repo: &std::path::Path, batch: bool) -> (serde_json::Value, Vec<String>, String) {
    let out = gpuledger(repo)
        .args(["render", "--repo", ".", "--format", "json"])
        .env("GPULEDGER_LOG", "gpuledger::desired=debug")
        .env("GPULEDGER_KUSTOMIZE_BATCH", if batch { "1" } else { "0" })
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let together = err
        .lines()
        .filter(|l| l.contains("built together"))
        .map(str::to_string)
        .collect();
    (json, together, err)
}

/// Kustomize apps built together in one process give every app exactly what it gets built alone:
/// the same objects, sources and lines, and each broken app its own error. Apps sharing a base
/// never share a build, a build where two apps declare the same object is halved until it builds,
/// and an app that renames objects builds alone.
#[test]
fn kustomize_apps_built_together_are_the_apps_built_alone() {
    let r = Repo::new();
    for (i, app) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        r.write(
            &format!("apps/{app}/kustomization.yaml"),
            "resources: [deploy.yaml]\nnamespace: team\n",
        )
        .write(
            &format!("apps/{app}/deploy.yaml"),
            &format!("# app {app}\n{}", deployment(app, 1, i as u64 + 1)),
        );
    }
    // Two apps over one base: never in one build (the base's origin would name both).
    r.write(
        "base/kustomization.yaml",
        "resources: [svc.yaml, gpu.yaml]\n",
    )
    .write(
        "base/svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{port: 80}]}\n",
    )
    .write("base/gpu.yaml", &deployment("shared", 1, 2));
    for app in ["g", "h"] {
        r.write(
            &format!("apps/{app}/kustomization.yaml"),
            &format!("resources: [../../base]\nnamespace: {app}\n"),
        );
    }
    // Two apps declaring the same object: their common build fails, each builds on its own.
    for app in ["i", "j"] {
        r.write(
            &format!("apps/{app}/kustomization.yaml"),
            "resources: [ns.yaml, deploy.yaml]\n",
        )
        .write(
            &format!("apps/{app}/ns.yaml"),
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: shared}\n",
        )
        .write(
            &format!("apps/{app}/deploy.yaml"),
            &deployment(&format!("w-{app}"), 1, 1),
        );
    }
    // Renames: built alone. A broken app: its own error, nobody else's.
    r.write(
        "apps/k/kustomization.yaml",
        "resources: [deploy.yaml]\nnamePrefix: k-\nnamespace: team\n",
    )
    .write("apps/k/deploy.yaml", &deployment("k", 1, 3))
    .write(
        "apps/l/kustomization.yaml",
        "resources: [deploy.yaml, missing.yaml]\n",
    )
    .write("apps/l/deploy.yaml", &deployment("l", 1, 5))
    .commit("apps");

    let (together, builds, err) = render_batched(r.path(), true);
    let (alone, none, _) = render_batched(r.path(), false);
    assert!(none.is_empty(), "{none:?}");
    assert!(!builds.is_empty(), "no apps were built together: {err}");
    assert_eq!(together, alone, "built together and alone differ");

    let gpus = desired_gpus(&together);
    for (i, app) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        assert_eq!(
            gpus[&format!("team/Deployment/{app}")],
            i as u64 + 1,
            "{gpus:?}"
        );
    }
    assert_eq!(gpus["team/Deployment/k-k"], 3);
    assert_eq!(gpus["g/Deployment/shared"], 2);
    assert_eq!(gpus["h/Deployment/shared"], 2);
    assert_eq!(gpus["default/Deployment/w-i"], 1);
    assert_eq!(gpus["default/Deployment/w-j"], 1);
    let status: BTreeMap<&str, (&str, &str)> = together["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap(),
                (
                    a["status"].as_str().unwrap(),
                    a["error"].as_str().unwrap_or_default(),
                ),
            )
        })
        .collect();
    let (s, e) = status["apps/l"];
    assert_eq!(s, "error");
    assert!(e.contains("missing.yaml"), "{e}");
    for (path, (s, e)) in &status {
        assert!(*path == "apps/l" || *s == "rendered", "{path}: {s} {e}");
    }
    // Each workload keeps the file and line kustomize's origin annotation leads to.
    let text = together.to_string();
    assert!(text.contains("\"apps/c/deploy.yaml:5\""), "{text}");
    assert!(text.contains("\"base/gpu.yaml:4\""), "{text}");
}

/// Only the files a kustomize or helm app reads are written to disk for its renderer: plain YAML
/// is parsed in process, and an app's neighbours stay in memory.
#[test]
fn renderers_get_only_the_files_they_read_on_disk() {
    let r = Repo::new();
    r.write(
        "apps/a/kustomization.yaml",
        "resources: [d.yaml, ../../base]\n",
    )
    .write("apps/a/d.yaml", &deployment("a", 1, 2))
    .write("base/kustomization.yaml", "resources: [s.yaml]\n")
    .write(
        "base/s.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n",
    );
    for i in 0..20 {
        r.write(
            &format!("plain/p{i}/d.yaml"),
            &deployment(&format!("p{i}"), 1, 1),
        );
    }
    r.commit("one kustomize app, twenty plain ones");
    let (json, _, err) = render_batched(r.path(), true);
    let copied: usize = err
        .lines()
        .filter(|l| l.contains("copied to disk"))
        .filter_map(|l| {
            l.split("files=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert_eq!(copied, 4, "apps/a's two files and its base's two: {err}");
    assert_eq!(desired_gpus(&json)["default/Deployment/a"], 2);
    assert_eq!(desired_gpus(&json).len(), 21, "{json}");
}

/// Files read as the controllers read them: a directory with both a kustomization and a
/// Chart.yaml is one kustomize app, never two; a duplicated key's later value wins with a note
/// naming the line; a tool's configuration beside manifests is skipped with a note, never failing
/// the directory.
#[test]
fn files_are_read_as_the_controllers_read_them() {
    let r = Repo::new();
    r.write("both/kustomization.yaml", "resources: [d.yaml]\n")
        .write(
            "both/Chart.yaml",
            "apiVersion: v2\nname: both\nversion: 1.0.0\n",
        )
        .write("both/d.yaml", &deployment("both", 1, 2))
        .write(
            "plain/d.yaml",
            &deployment("twice", 2, 4).replace("  name: twice\n", "  name: first\n  name: twice\n"),
        )
        .write(
            "plain/audit-policy.yaml",
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
        )
        .commit("files");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let want: BTreeMap<String, u64> = [
        ("default/Deployment/both".to_string(), 2),
        ("default/Deployment/twice".to_string(), 8),
    ]
    .into();
    assert_eq!(desired_gpus(&json), want);
    let apps = json["desired"]["apps"].as_array().unwrap();
    assert_eq!(apps.len(), 2, "{apps:#?}");
    let notes = apps.iter().find(|a| a["name"] == "plain").unwrap()["notes"].to_string();
    assert!(
        notes.contains("plain/d.yaml:5: the key \\\"name\\\" is given twice"),
        "{notes}"
    );
    assert!(
        notes.contains("plain/audit-policy.yaml: Policy (audit.k8s.io/v1) with no metadata"),
        "{notes}"
    );
    assert!(!json.to_string().contains("DuplicateKeyPolicy"));
}

/// A CustomResourceDefinition of `props` properties whose schema carries, as a default, a pod
/// template asking for 8 GPUs (a schema is never demand), as controller-gen writes them.
fn large_crd(props: usize) -> String {
    let mut s = String::from(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: trainers.ml.example.com\nspec:\n  group: ml.example.com\n  names: {kind: Trainer, plural: trainers}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            default:\n              replicas: 4\n              template:\n                spec:\n                  containers:\n                  - {name: t, image: x, resources: {limits: {nvidia.com/gpu: 8}}}\n            properties:\n",
    );
    for i in 0..props {
        s.push_str(&format!(
            "              field{i:05}:\n                description: what field {i} configures, its defaults and its constraints, as the Go doc comment says\n                type: string\n"
        ));
    }
    s
}

/// A large CRD, in a kustomize base under an overlay and in a plain release bundle: each root
/// renders, counts the CRD among its objects and shares it with the other (the CRD keeps its
/// identity), and only the Deployments are GPU workloads.
#[test]
fn a_large_crd_is_an_object_and_never_demand() {
    let r = Repo::new();
    let crd = large_crd(3000);
    assert!(crd.len() > 400_000, "{}", crd.len());
    r.write("config/crd/trainers.yaml", &crd)
        .write(
            "config/crd/kustomization.yaml",
            "resources: [trainers.yaml]\n",
        )
        .write("config/manager/manager.yaml", &deployment("manager", 1, 2))
        .write(
            "config/manager/kustomization.yaml",
            "resources: [manager.yaml]\n",
        )
        .write(
            "config/overlays/prod/kustomization.yaml",
            "resources: [../../crd, ../../manager]\nnamespace: ml\n",
        )
        .write(
            "install/v1/bundle.yaml",
            &format!("{crd}---\n{}", deployment("bundled", 1, 1)),
        )
        .commit("a large CRD");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let apps: BTreeMap<&str, (&str, u64)> = json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap(),
                (
                    a["status"].as_str().unwrap(),
                    a["objects"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(
        apps,
        BTreeMap::from([
            ("config/overlays/prod", ("rendered", 2)),
            ("install/v1", ("rendered", 2)),
        ])
    );
    let want: BTreeMap<String, u64> = [
        ("ml/Deployment/manager", 2),
        ("default/Deployment/bundled", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(desired_gpus(&json), want);
    let shared: Vec<&str> = json["desired"]["duplicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["object"].as_str().unwrap())
        .collect();
    assert_eq!(
        shared,
        ["-/CustomResourceDefinition/trainers.ml.example.com"]
    );
}
