//! Following the controllers from the roots down, cluster by cluster: app-of-apps by chart and by
//! kustomize overlay, a Flux repository with two clusters and a HelmRelease patched per cluster,
//! apps that no root applies, cycles; and drift and the check per cluster. Real git, kustomize and
//! Helm engine; GPU totals checked exactly.

use std::collections::BTreeMap;

use serde_json::Value;

use super::support::{Repo, desired_gpus, render, with_renderers};

const URL: &str = "https://github.com/acme/gitops.git";

const CHART: &str = "apiVersion: v2\nname: llm\nversion: 0.1.0\n";
const CHART_VALUES: &str = "replicas: 1\ngpus: 1\n";
const CHART_TEMPLATE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n      - name: main\n        image: vllm\n        resources:\n          limits:\n            nvidia.com/gpu: {{ .Values.gpus | quote }}\n";

fn add_chart(r: &Repo, dir: &str) {
    r.write(&format!("{dir}/Chart.yaml"), CHART)
        .write(&format!("{dir}/values.yaml"), CHART_VALUES)
        .write(&format!("{dir}/templates/deployment.yaml"), CHART_TEMPLATE);
}

fn gpus(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn app<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no app {name}: {:#}", j["desired"]["apps"]))
}

/// An Argo CD app-of-apps whose chart renders the Applications from a list in its values: the
/// children exist only in the root's output, and are rendered from it.
#[test]
fn argo_app_of_apps_by_chart() {
    let r = Repo::new();
    r.write(
        "bootstrap/root.yaml",
        &format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: root, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n  source:\n    repoURL: {URL}\n    path: charts/apps\n    helm:\n      valuesObject:\n        apps:\n        - {{name: llama, replicas: 2, gpus: 4}}\n        - {{name: mistral, replicas: 3, gpus: 1}}\n"
        ),
    )
    .write("charts/apps/Chart.yaml", "apiVersion: v2\nname: apps\nversion: 0.1.0\n")
    .write("charts/apps/values.yaml", "apps: []\n")
    .write(
        "charts/apps/templates/apps.yaml",
        &format!(
            "{{{{- range .Values.apps }}}}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{{{ .name }}}}\n  namespace: argocd\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: serving}}\n  source:\n    repoURL: {URL}\n    path: charts/llm\n    helm:\n      parameters:\n      - {{name: replicas, value: \"{{{{ .replicas }}}}\"}}\n      - {{name: gpus, value: \"{{{{ .gpus }}}}\"}}\n{{{{- end }}}}\n"
        ),
    );
    add_chart(&r, "charts/llm");
    r.commit("app of apps by chart");
    let (code, j, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        desired_gpus(&j),
        gpus(&[
            ("serving/Deployment/llama", 8),
            ("serving/Deployment/mistral", 3)
        ])
    );
    assert_eq!(j["desired"]["gpus_declared"], 11);
    assert_eq!(app(&j, "llama")["applied_by"], "Application/root");
    assert!(app(&j, "root")["applied_by"].is_null());
}

/// An app-of-apps through a kustomize overlay that patches the Applications of its base: the
/// child renders as patched, never from its raw file in the base.
#[test]
fn argo_app_of_apps_by_kustomize_overlay() {
    let r = Repo::new();
    r.write(
        "bootstrap/root.yaml",
        &format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: root, namespace: argocd}}\nspec:\n  destination: {{name: in-cluster, namespace: argocd}}\n  source: {{repoURL: {URL}, path: apps/overlays/prod}}\n"
        ),
    )
    .write("apps/base/kustomization.yaml", "resources: [llm.yaml]\n")
    .write(
        "apps/base/llm.yaml",
        &format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: llm, namespace: argocd}}\nspec:\n  destination: {{name: in-cluster, namespace: serving}}\n  source:\n    repoURL: {URL}\n    path: charts/llm\n    helm:\n      parameters: [{{name: replicas, value: \"1\"}}, {{name: gpus, value: \"2\"}}]\n"
        ),
    )
    .write(
        "apps/overlays/prod/kustomization.yaml",
        "resources: [../../base]\npatches:\n- target: {kind: Application, name: llm}\n  patch: |-\n    - op: replace\n      path: /spec/source/helm/parameters/0/value\n      value: \"5\"\n",
    );
    add_chart(&r, "charts/llm");
    r.commit("app of apps by overlay");
    let (code, j, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    // 5 replicas as the overlay says, not 1 as the base file says.
    assert_eq!(desired_gpus(&j), gpus(&[("serving/Deployment/llm", 10)]));
    assert_eq!(app(&j, "llm")["applied_by"], "Application/root");
    // One cluster (Argo CD's own), named as Argo CD names it.
    assert_eq!(j["desired"]["cluster"], "in-cluster");
}

/// A Flux repository as `flux bootstrap` lays it out, driving two clusters from one base
/// HelmRelease patched per cluster, plus a HelmRelease that nothing applies.
fn flux_two_clusters() -> Repo {
    let r = Repo::new();
    for (cluster, replicas) in [("production", 4), ("staging", 1)] {
        r.write(
            &format!("clusters/{cluster}/flux-system/gotk-sync.yaml"),
            &format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {{name: flux-system, namespace: flux-system}}\nspec: {{url: \"ssh://git@github.com/acme/gitops\", ref: {{branch: main}}}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: flux-system, namespace: flux-system}}\nspec:\n  path: ./clusters/{cluster}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
            ),
        )
        .write(
            &format!("clusters/{cluster}/flux-system/kustomization.yaml"),
            "resources: [gotk-sync.yaml]\n",
        )
        .write(
            &format!("clusters/{cluster}/apps.yaml"),
            &format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: apps, namespace: flux-system}}\nspec:\n  path: ./apps/{cluster}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
            ),
        )
        .write(
            &format!("apps/{cluster}/kustomization.yaml"),
            &format!(
                "resources: [../base/llm]\npatches:\n- target: {{kind: HelmRelease, name: llm}}\n  patch: |-\n    - op: replace\n      path: /spec/values/replicas\n      value: {replicas}\n"
            ),
        );
    }
    r.write("apps/base/llm/kustomization.yaml", "resources: [release.yaml]\n")
        .write(
            "apps/base/llm/release.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: llm, namespace: serving}\nspec:\n  chart:\n    spec:\n      chart: ./charts/llm\n      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n  values: {replicas: 1, gpus: 2}\n",
        )
        .write(
            "apps/unused/release.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: forgotten, namespace: serving}\nspec:\n  chart:\n    spec:\n      chart: ./charts/llm\n      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n  values: {replicas: 50, gpus: 8}\n",
        );
    add_chart(&r, "charts/llm");
    r.commit("flux, two clusters");
    r
}

#[test]
fn flux_two_clusters_each_with_its_own_desired_state() {
    let r = flux_two_clusters();
    let (code, j, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    let d = &j["desired"];
    // Both clusters: the same HelmRelease twice, patched per cluster; the stray one not at all.
    assert_eq!(d["gpus_declared"], 4 * 2 + 2, "{:#}", d["apps"]);
    let clusters: Vec<(String, u64)> = d["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["gpus_declared"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        clusters,
        [("production".to_string(), 8), ("staging".to_string(), 2)]
    );
    // The chain: flux-system applies apps, apps applies llm.
    let llm: Vec<&Value> = d["apps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["name"] == "llm")
        .collect();
    assert_eq!(llm.len(), 2);
    assert!(llm.iter().all(|a| a["applied_by"] == "Kustomization/apps"));
    let forgotten = app(&j, "forgotten");
    assert_eq!(forgotten["status"], "not-applied", "{forgotten}");
    assert!(
        forgotten["error"]
            .as_str()
            .unwrap()
            .contains("not applied by any root")
    );
    // No conflicts: the same object in two clusters is two objects.
    assert_eq!(d["duplicates"], serde_json::json!([]));

    // One cluster.
    let (code, j, err) = render(r.path(), &["--repo-url", URL, "--cluster", "staging"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["desired"]["cluster"], "staging");
    assert_eq!(desired_gpus(&j), gpus(&[("serving/Deployment/llm", 2)]));

    // A cluster the repository does not drive is an error that names the ones it does.
    let (code, _, err) = with_renderers(
        r.path(),
        &[
            "render",
            "--repo",
            ".",
            "--repo-url",
            URL,
            "--cluster",
            "prod",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("drives production, staging only"), "{err}");
}

/// Drift compares a cluster only with its own desired state: which one comes from --cluster,
/// from the snapshot `clusters:` names, or is asked for.
#[test]
fn drift_compares_one_cluster_with_its_own_desired_state() {
    let r = flux_two_clusters();
    let live = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: llm, namespace: serving, uid: d1, labels: {helm.toolkit.fluxcd.io/name: llm, helm.toolkit.fluxcd.io/namespace: serving}}\n  spec:\n    replicas: 4\n    template:\n      spec:\n        containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"2\"}}}]\n";
    std::fs::write(r.path().join("prod.yaml"), live).unwrap();
    let drift = |extra: &[&str]| {
        let mut args = vec![
            "drift",
            "--repo",
            ".",
            "--repo-url",
            URL,
            "--snapshot",
            "prod.yaml",
            "--now",
            "2026-12-01",
        ];
        args.extend_from_slice(extra);
        with_renderers(r.path(), &args)
    };
    // Several clusters and no way to tell which one the snapshot is: asked, not guessed.
    let (code, _, err) = drift(&[]);
    assert_eq!(code, 2);
    assert!(err.contains("--cluster"), "{err}");
    // Production: 4 replicas in Git and live — in sync.
    let (code, j, err) = drift(&["--cluster", "production"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        j["drift"]["in_sync"].as_array().unwrap().len(),
        1,
        "{:#}",
        j["drift"]
    );
    // Staging says 1 replica: the same snapshot compared with staging has changed.
    let (code, j, _) = drift(&["--cluster", "staging"]);
    assert_eq!(code, 1);
    assert_eq!(j["drift"]["changed"].as_array().unwrap().len(), 1);
    // `clusters:` names the snapshot of production: picked without --cluster.
    r.write(
        ".gpuledger.yaml",
        "clusters:\n  production: {snapshot: prod.yaml}\n",
    );
    let (code, j, err) = drift(&[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["drift"]["in_sync"].as_array().unwrap().len(), 1);
}

/// The check keys workloads by cluster: a change to production's overlay changes production
/// only; an app that fails to render makes what it applies unknown, never removed.
#[test]
fn check_per_cluster_and_unknown_below_a_failed_app() {
    let r = flux_two_clusters();
    r.git(&["checkout", "-q", "-b", "feature"]);
    let k = std::fs::read_to_string(r.path().join("apps/production/kustomization.yaml")).unwrap();
    r.write(
        "apps/production/kustomization.yaml",
        &k.replace("value: 4", "value: 5"),
    )
    .commit("production: 5 replicas");
    let check = |head: &str| {
        with_renderers(
            r.path(),
            &[
                "check",
                "--repo",
                ".",
                "--base",
                "main",
                "--head",
                head,
                "--repo-url",
                URL,
                "--fail-on",
                "none",
            ],
        )
    };
    let (code, j, err) = check("feature");
    assert_eq!(code, 0, "{err}");
    let reshaped = j["check"]["reshaped"].as_array().unwrap();
    assert_eq!(reshaped.len(), 1, "{:#}", j["check"]);
    assert_eq!(reshaped[0]["cluster"], "production");
    assert_eq!(reshaped[0]["gpus_base"], 8);
    assert_eq!(reshaped[0]["gpus_head"], 10);
    assert!(j["check"]["added"].as_array().unwrap().is_empty());
    assert!(j["check"]["removed"].as_array().unwrap().is_empty());

    // Break staging's overlay: its llm is unknown, neither removed nor a fall in GPUs.
    r.git(&["checkout", "-q", "-b", "broken", "main"]);
    r.write(
        "apps/staging/kustomization.yaml",
        "resources: [../base/missing]\n",
    )
    .commit("break staging");
    let (_, j, err) = check("broken");
    assert!(
        j["check"]["removed"].as_array().unwrap().is_empty(),
        "{:#} {err}",
        j["check"]
    );
    assert!(
        j["check"]["render_errors"].to_string().contains("apps"),
        "{:#}",
        j["check"]
    );
}

/// Apps that apply each other with no root above them are a cycle, reported as one.
#[test]
fn a_cycle_of_apps_is_reported() {
    let r = Repo::new();
    let ks = |name: &str, path: &str| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: ./{path}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
        )
    };
    r.write(
        "repo.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: \"https://github.com/acme/gitops\"}\n",
    )
    .write("a/a.yaml", &ks("a", "b"))
    .write("b/b.yaml", &ks("b", "a"))
    .commit("cycle");
    let (_, j, err) = render(r.path(), &["--repo-url", URL]);
    let problems = j["desired"]["problems"].to_string();
    assert!(problems.contains("a cycle"), "{problems} {err}");
    assert!(
        problems.contains("Kustomization/a") && problems.contains("Kustomization/b"),
        "{problems}"
    );
}

/// Two apps applying one object in one cluster is a conflict with both sources named, and drift
/// says Git's side is ambiguous rather than silently picking one.
#[test]
fn one_object_from_two_apps_in_one_cluster_is_a_conflict() {
    let r = Repo::new();
    let application = |name: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\nspec:\n  destination: {{name: gpu-east, namespace: serving}}\n  source: {{repoURL: {URL}, path: {path}}}\n"
        )
    };
    let deployment = |replicas: u64| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: llm}}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]\n"
        )
    };
    r.write("argo/team-a.yaml", &application("team-a", "team-a"))
        .write("argo/team-b.yaml", &application("team-b", "team-b"))
        .write("team-a/llm.yaml", &deployment(2))
        .write("team-b/llm.yaml", &deployment(3))
        .write(
            "live.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm, namespace: serving, uid: u1}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"1\"}}}]\n",
        )
        .commit("two teams, one name");
    let (code, j, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    let dups = j["desired"]["duplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 1, "{dups:?}");
    assert_eq!(dups[0]["object"], "serving/Deployment/llm");
    assert_eq!(dups[0]["cluster"], "gpu-east");
    assert_eq!(dups[0]["apps"], serde_json::json!(["team-a", "team-b"]));
    let (_, j, err) = with_renderers(
        r.path(),
        &[
            "drift",
            "--repo",
            ".",
            "--repo-url",
            URL,
            "--snapshot",
            "live.yaml",
            "--now",
            "2026-12-01",
        ],
    );
    let rows: Vec<&Value> = ["in_sync", "changed"]
        .iter()
        .flat_map(|c| j["drift"][c].as_array().unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{:#} {err}", j["drift"]);
    // Compared with the app that declares more (Git's workloads are ordered by GPUs), and said.
    assert_eq!(
        rows[0]["ambiguous"],
        serde_json::json!(["Application team-b", "Application team-a"])
    );
    assert_eq!(rows[0]["app"], "team-b");
}

/// A platform layout: the Application lives in a kustomize base with a placeholder path, each
/// environment's overlay sets the real path through a patch file, and a bootstrap overlay per
/// environment is applied by a script. The patch files are no apps; the candidate roots are named
/// with the line that picks one; once picked, the Application renders with its overlay's path.
#[test]
fn argo_apps_composed_by_kustomize_overlays_and_a_root_applied_by_a_script() {
    let r = Repo::new();
    r.write(
        "components/apps/base/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [llm-app.yaml]\n",
    )
    .write(
        "components/apps/base/llm-app.yaml",
        &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: llm, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: serving}}\n  source: {{repoURL: {URL}, path: patch-me-see-overlays}}\n"),
    );
    for (env, replicas) in [("dev", 1), ("prod", 4)] {
        r.write(
            &format!("components/apps/overlays/{env}/kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../../base]\npatches:\n- path: patch-llm-app.yaml\n  target: {kind: Application, name: llm}\n",
        )
        .write(
            &format!("components/apps/overlays/{env}/patch-llm-app.yaml"),
            &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: llm}}\nspec:\n  source: {{path: workloads/{env}}}\n"),
        )
        .write(
            &format!("bootstrap/overlays/{env}/kustomization.yaml"),
            &format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../../../components/apps/overlays/{env}]\n"),
        )
        .write(
            &format!("workloads/{env}/deploy.yaml"),
            &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: llm, namespace: serving}}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers: [{{name: m, image: vllm, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n"),
        );
    }
    r.commit("apps composed by overlays");
    let (_, j, err) = render(r.path(), &["--repo-url", URL]);
    let names: Vec<(&str, &str)> = j["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap(),
                a["defined_at"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        names.iter().all(|(_, at)| !at.contains("patch-llm-app")),
        "a patch file read as an app: {names:?}"
    );
    let problems = j["desired"]["problems"].to_string();
    assert!(
        problems
            .contains("the apps in components/apps/base are a kustomize base that overlays patch")
            && problems.contains("render: {roots: [bootstrap/overlays/dev]}")
            && problems.contains("the candidates: bootstrap/overlays/dev, bootstrap/overlays/prod"),
        "{problems} {err}"
    );
    // The root named: the Application comes from the prod overlay, with its real path.
    r.write(
        ".gpuledger.yaml",
        "render:\n  roots: [bootstrap/overlays/prod]\n",
    )
    .commit("the root this cluster applies");
    let (code, j, err) = render(r.path(), &["--repo-url", URL]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        j["desired"]["gpus_declared"], 8,
        "{:#}",
        j["desired"]["apps"]
    );
    assert_eq!(app(&j, "llm")["path"], "workloads/prod");
}

/// Apps whose source is another repository: the reason is said once per URL, with the flag that
/// says so if that URL is this repository — not once per app.
#[test]
fn apps_of_another_repository_are_said_once_per_url() {
    let app = |name: &str, url: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: ml}}\n  source: {{repoURL: {url}, path: models/{name}}}\n"
        )
    };
    let team = "https://github.com/acme/team-models.git";
    let r = Repo::new();
    for n in ["a", "b", "c", "d"] {
        r.write(&format!("apps/{n}.yaml"), &app(n, team));
    }
    r.write(
        "apps/e.yaml",
        &app("e", "https://github.com/acme/other.git"),
    )
    .write("apps/f.yaml", &app("f", "patch-me-see-overlays"))
    .write("apps/g.yaml", &app("g", "patch-me-see-overlays"))
    .commit("apps of other repositories");
    let (_, j, err) = render(r.path(), &[]);
    let why = j["desired"]["unknown"]["gpus_declared"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.starts_with(&format!(
            "7 of 7 apps not rendered: 4 apps name {team}, which is not this repository (if it is, pass --repo-url {team}); 2 apps name \"patch-me-see-overlays\" as their repository, which is no URL (a placeholder an overlay patches?); Application e (source https://github.com/acme/other.git is not this repository"
        )),
        "{why} {err}"
    );
    assert!(!why.contains("and "), "{why}");
}
