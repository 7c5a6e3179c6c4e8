//! Remote sources rendered as the controllers render them, against real servers on 127.0.0.1: a
//! Helm repository (index and packaged charts served over HTTP), Distribution's registry with
//! charts pushed by the Helm engine, and git over smart HTTP through `git http-backend`. Each
//! scenario has an exact GPU total, and the same repository with `--offline` is unknown with the
//! reason. The fetch policy's refusals (a private address behind a redirect, a source host the
//! base does not use, an oversized archive, a slow server) have their own tests.

use std::path::Path;

use serde_json::Value;

use crate::remote_servers::{Registry, Route, Server, charts, publish_git};
use crate::support::{Repo, desired_gpus, fixture, render, with_renderers};

/// `.gpuledger.yaml` that lets fetching reach the test servers on loopback.
const LOOPBACK: &str = "render:\n  remote:\n    private_networks: [127.0.0.0/8]\n";

fn chart(name: &str) -> std::path::PathBuf {
    fixture(&format!("tests/fixtures/remote/charts/{name}"))
}

/// A Helm repository of llm 1.2.3, llm 2.0.0 and cache 0.3.1 at `<server>/charts`.
fn helm_repo(server: &Server, dir: &Path) {
    charts(
        &[&chart("llm-1"), &chart("llm-2"), &chart("cache")],
        dir,
        &[],
    );
    server.dir("/charts", dir);
}

fn app<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no app {name} in {:#}", r["desired"]["apps"]))
}

fn render_with_cache(repo: &Path, cache: &Path, extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["--cache-dir", cache.to_str().unwrap()];
    args.extend_from_slice(extra);
    render(repo, &args)
}

/// An Argo CD chart source: the range resolved against the index (^1 → 1.2.3, never 2.0.0), the
/// archive checked against the index's digest, the values file read from the chart; Flux
/// HelmReleases on a HelmRepository of the default type, by `chart.spec` (a range) and through a
/// HelmChart (`chartRef`); offline, the apps are unknown and say why.
#[test]
fn a_chart_from_a_helm_repository_renders_at_the_version_its_range_resolves_to() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    helm_repo(&server, &tmp.path().join("repo"));
    let repo = Repo::new();
    repo.write(".gpuledger.yaml", LOOPBACK).write(
        "apps/chat.yaml",
        &format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: chat\n  namespace: argocd\nspec:\n  destination:\n    namespace: research\n    server: https://kubernetes.default.svc\n  source:\n    repoURL: {}/charts\n    chart: llm\n    targetRevision: ^1\n    helm:\n      valueFiles: [values-large.yaml]\n",
            server.url()
        ),
    )
    .write(
        "flux/sources.yaml",
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: ml\nspec:\n  url: {}/charts\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: cache\n  namespace: ml\nspec:\n  chart: cache\n  version: 0.3.x\n  sourceRef:\n    kind: HelmRepository\n    name: charts\n",
            server.url()
        ),
    )
    .write(
        "flux/releases.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: train\n  namespace: ml\nspec:\n  chart:\n    spec:\n      chart: llm\n      version: '>=1.0.0 <3'\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: kv\n  namespace: ml\nspec:\n  chartRef:\n    kind: HelmChart\n    name: cache\n",
    );
    repo.commit("charts from a Helm repository");
    let cache = tmp.path().join("cache");
    let (code, r, stderr) = render_with_cache(repo.path(), &cache, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        desired_gpus(&r),
        [
            ("research/Deployment/chat".to_string(), 16),
            ("ml/Deployment/train".to_string(), 80),
            ("ml/StatefulSet/kv-cache".to_string(), 1),
        ]
        .into()
    );
    assert_eq!(r["desired"]["gpus_declared"], 97);
    assert_eq!(app(&r, "train")["fetched"][0]["version"], "2.0.0");
    assert_eq!(app(&r, "kv")["fetched"][0]["version"], "0.3.1");
    let fetched = &app(&r, "chat")["fetched"][0];
    assert_eq!(fetched["wanted"], "^1");
    assert_eq!(fetched["version"], "1.2.3");
    let archive = std::fs::read(tmp.path().join("repo/llm-1.2.3.tgz")).unwrap();
    assert_eq!(
        fetched["digest"],
        format!(
            "sha256:{}",
            gpuledger::desired::remote::store::sha256(&archive)
        )
    );
    // The archive is in the cache by its digest: a second run fetches the index only.
    let before = server.requests().len();
    let (code, r2, _) = render_with_cache(repo.path(), &cache, &[]);
    assert_eq!(
        (code, r2["desired"]["gpus_declared"].clone()),
        (0, 97.into())
    );
    let again: Vec<String> = server.requests()[before..].to_vec();
    assert!(
        !again.is_empty() && again.iter().all(|r| r == "GET /charts/index.yaml"),
        "{again:?}"
    );

    let (code, off, _) = render_with_cache(repo.path(), &cache, &["--offline"]);
    for name in ["chat", "train", "kv"] {
        let a = app(&off, name);
        assert_eq!(a["status"], "not-rendered");
        assert!(a["error"].as_str().unwrap().contains("--offline"), "{a:#}");
    }
    assert_eq!(off["desired"]["gpus_declared"], Value::Null);
    assert_eq!(code, 2, "unknown GPUs are not a clean result");
}

/// Flux and Argo CD charts in an OCI registry (Distribution's, charts pushed by the Helm engine):
/// an Argo CD source without a scheme, a Flux HelmRepository of type oci with a range, and an
/// OCIRepository with a semver ref behind a HelmRelease's chartRef.
#[test]
fn charts_in_an_oci_registry_render_for_argo_cd_and_flux() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().unwrap();
    let oci = format!("oci://{}/charts", reg.host);
    charts(
        &[&chart("llm-1"), &chart("llm-2")],
        tmp.path(),
        &[
            ("llm-1.2.3.tgz", oci.clone()),
            ("llm-2.0.0.tgz", oci.clone()),
        ],
    );
    let repo = Repo::new();
    repo.write(".gpuledger.yaml", LOOPBACK)
        .write(
            "argo/chat.yaml",
            &format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: chat\nspec:\n  destination:\n    namespace: research\n  source:\n    repoURL: {}/charts\n    chart: llm\n    targetRevision: 1.2.3\n",
                reg.host
            ),
        )
        .write(
            "flux/sources.yaml",
            &format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: ml\nspec:\n  type: oci\n  url: {oci}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: llm\n  namespace: ml\nspec:\n  url: {oci}/llm\n  ref:\n    semver: '>=2.0.0'\n  layerSelector:\n    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip\n    operation: copy\n"
            ),
        )
        .write(
            "flux/releases.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: batch\n  namespace: ml\nspec:\n  chart:\n    spec:\n      chart: llm\n      version: 1.x\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n  values:\n    replicas: 1\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: big\n  namespace: ml\nspec:\n  chartRef:\n    kind: OCIRepository\n    name: llm\n",
        );
    repo.commit("OCI charts");
    let (code, r, stderr) = render_with_cache(repo.path(), &tmp.path().join("cache"), &[]);
    assert_eq!(code, 0, "{stderr}\n{:#}", r["desired"]["apps"]);
    assert_eq!(
        desired_gpus(&r),
        [
            ("research/Deployment/chat".to_string(), 8),
            ("ml/Deployment/batch".to_string(), 4),
            ("ml/Deployment/big".to_string(), 80),
        ]
        .into()
    );
    assert_eq!(r["desired"]["gpus_declared"], 92);
    assert_eq!(app(&r, "big")["fetched"][0]["version"], "2.0.0");
    assert!(
        app(&r, "big")["fetched"][0]["digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    let (code, off, _) = render_with_cache(repo.path(), &tmp.path().join("cache"), &["--offline"]);
    assert_eq!(code, 2);
    assert_eq!(off["desired"]["gpus_declared"], Value::Null);
    let why = off["desired"]["unknown"]["gpus_declared"].as_str().unwrap();
    assert!(why.starts_with("3 of 3 apps not rendered"), "{why}");
    assert!(why.contains("--offline"), "{why}");
}

fn deployment(name: &str, replicas: u32, gpus: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n      - name: main\n        image: x\n        resources:\n          limits:\n            nvidia.com/gpu: {gpus}\n"
    )
}

/// A kustomize root whose resources are a git base (over smart HTTP, `git http-backend` behind
/// the test server) at a tag, and a plain HTTPS-style manifest URL: both fetched by gpuledger,
/// kustomize fetching nothing; offline, the root is unknown and says why.
#[test]
fn a_kustomize_root_with_a_git_base_and_a_remote_manifest() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Repo::new();
    upstream
        .write("deploy/kustomization.yaml", "resources: [serving.yaml]\n")
        .write("deploy/serving.yaml", &deployment("upstream-serving", 2, 4))
        .commit("v1");
    upstream.git(&["tag", "v1"]);
    upstream
        .write("deploy/serving.yaml", &deployment("upstream-serving", 9, 9))
        .commit("after v1");
    publish_git(upstream.path(), &tmp.path().join("git"), "upstream.git");
    server.route("/git", Route::Git(tmp.path().join("git")));
    server.route(
        "/releases/v2/job.yaml",
        Route::Bytes(deployment("released-job", 1, 8).into_bytes()),
    );
    let repo = Repo::new();
    repo.write(".gpuledger.yaml", LOOPBACK).write(
        "apps/platform/kustomization.yaml",
        &format!(
            "namespace: platform\nresources:\n- {u}/git/upstream.git//deploy?ref=v1\n- {u}/releases/v2/job.yaml\n- local.yaml\n",
            u = server.url()
        ),
    )
    .write("apps/platform/local.yaml", &deployment("local", 1, 1))
    .commit("platform");
    let cache = tmp.path().join("cache");
    let (code, r, stderr) = render_with_cache(repo.path(), &cache, &[]);
    assert_eq!(code, 0, "{stderr}\n{:#}", r["desired"]["apps"]);
    assert_eq!(
        desired_gpus(&r),
        [
            ("platform/Deployment/upstream-serving".to_string(), 8),
            ("platform/Deployment/released-job".to_string(), 8),
            ("platform/Deployment/local".to_string(), 1),
        ]
        .into()
    );
    // The repository itself is untouched: the kustomization still names the URLs.
    let k = std::fs::read_to_string(repo.path().join("apps/platform/kustomization.yaml")).unwrap();
    assert!(k.contains("upstream.git//deploy?ref=v1"), "{k}");

    let (code, off, _) = render_with_cache(repo.path(), &cache, &["--offline"]);
    assert_eq!(code, 2);
    let a = app(&off, "apps/platform");
    assert_eq!(a["status"], "not-rendered", "{a:#}");
    assert!(a["error"].as_str().unwrap().contains("--offline"), "{a:#}");
    assert_eq!(off["desired"]["gpus_declared"], Value::Null);
}

/// Copies a chart fixture into a repository at `to`.
fn vendor(repo: &Repo, name: &str, to: &str) {
    let from = chart(name);
    for f in [
        "Chart.yaml",
        "values.yaml",
        "templates/deployment.yaml",
        "templates/statefulset.yaml",
    ] {
        if let Ok(text) = std::fs::read_to_string(from.join(f)) {
            repo.write(&format!("{to}/{f}"), &text);
        }
    }
}

/// An umbrella chart in the repository with a `file://` subchart and a dependency from a Helm
/// repository (one of them disabled by its condition, fetched all the same as Helm needs it),
/// rendered by an Argo CD Application as `helm dependency build` then `helm template` would.
#[test]
fn an_umbrella_chart_gets_its_file_and_remote_dependencies() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    helm_repo(&server, &tmp.path().join("repo"));
    let repo = Repo::new();
    vendor(&repo, "llm-1", "charts/llm");
    repo.write(".gpuledger.yaml", LOOPBACK)
        .write(
            "charts/platform/Chart.yaml",
            &format!(
                "apiVersion: v2\nname: platform\nversion: 0.1.0\ndependencies:\n- name: llm\n  version: 1.2.3\n  repository: file://../llm\n- name: cache\n  version: ^0.3\n  repository: {u}/charts\n- name: cache\n  alias: spare\n  version: ^0.3\n  repository: {u}/charts\n  condition: spare.enabled\n",
                u = server.url()
            ),
        )
        .write(
            "charts/platform/values.yaml",
            "llm:\n  gpus: 2\ncache:\n  gpus: 1\nspare:\n  enabled: false\n",
        )
        .write("charts/platform/templates/.keep.yaml", "")
        .write(
            "argocd/platform.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: platform\nspec:\n  destination:\n    namespace: platform\n  source:\n    repoURL: https://github.com/acme/gitops.git\n    path: charts/platform\n",
        )
        .commit("umbrella");
    let (code, r, stderr) = render_with_cache(
        repo.path(),
        &tmp.path().join("cache"),
        &["--repo-url", "https://github.com/acme/gitops.git"],
    );
    assert_eq!(code, 0, "{stderr}\n{:#}", r["desired"]["apps"]);
    assert_eq!(
        desired_gpus(&r),
        [
            ("platform/Deployment/platform".to_string(), 4),
            ("platform/StatefulSet/platform-cache".to_string(), 1),
        ]
        .into()
    );
    let fetched = &app(&r, "platform")["fetched"];
    assert_eq!(fetched[0]["what"], "dependency cache");
    assert_eq!(fetched[0]["version"], "0.3.1");
    // Nothing was written into the repository's chart.
    assert!(!repo.path().join("charts/platform/charts").exists());

    let (code, off, _) = render_with_cache(
        repo.path(),
        &tmp.path().join("cache"),
        &[
            "--repo-url",
            "https://github.com/acme/gitops.git",
            "--offline",
        ],
    );
    assert_eq!(code, 2);
    let a = app(&off, "platform");
    assert_eq!(a["status"], "not-rendered", "{a:#}");
    let why = a["error"].as_str().unwrap();
    assert!(
        why.contains("dependency cache") && why.contains("--offline"),
        "{why}"
    );
    assert_eq!(off["desired"]["gpus_declared"], Value::Null);
}

fn chart_app(name: &str, ns: &str, repo_url: &str, chart: &str, version: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  destination:\n    namespace: {ns}\n  source:\n    repoURL: {repo_url}\n    chart: {chart}\n    targetRevision: '{version}'\n"
    )
}

/// A source host may redirect, but not to an address the policy refuses: loopback is allowed
/// here for 127.0.0.1 only, and a redirect to 127.0.0.2 is refused before any connection.
#[test]
fn a_redirect_to_a_private_address_is_refused() {
    let server = Server::start();
    server.route(
        "/charts/index.yaml",
        Route::Redirect("http://127.0.0.2:9/index.yaml".into()),
    );
    let repo = Repo::new();
    repo.write(
        ".gpuledger.yaml",
        "render:\n  remote:\n    private_networks: [127.0.0.1/32]\n",
    )
    .write(
        "apps/chat.yaml",
        &chart_app(
            "chat",
            "research",
            &format!("{}/charts", server.url()),
            "llm",
            "1.2.3",
        ),
    )
    .commit("a chart behind a redirect");
    let tmp = tempfile::tempdir().unwrap();
    let (code, r, _) = render_with_cache(repo.path(), tmp.path(), &[]);
    assert_eq!(code, 2);
    let a = app(&r, "chat");
    assert_eq!(a["status"], "not-rendered", "{a:#}");
    assert!(
        a["error"]
            .as_str()
            .unwrap()
            .contains("127.0.0.2:9 is a private address: refused"),
        "{a:#}"
    );
    assert_eq!(server.requests(), ["GET /charts/index.yaml"]);
}

/// An archive larger than Flux's 10 MiB chart limit is refused while it streams, and a server
/// that does not answer within `render.remote.timeout` is given up on.
#[test]
fn an_oversized_archive_and_a_slow_server_are_refused() {
    let server = Server::start();
    server
        .route(
            "/big/index.yaml",
            Route::Bytes(
                b"apiVersion: v1\nentries:\n  llm:\n  - {name: llm, version: 1.0.0, urls: [llm-1.0.0.tgz]}\n"
                    .to_vec(),
            ),
        )
        .route("/big/llm-1.0.0.tgz", Route::Endless(11 * 1024 * 1024))
        .route(
            "/slow/index.yaml",
            Route::Slow(std::time::Duration::from_secs(4), b"apiVersion: v1\n".to_vec()),
        );
    let repo = Repo::new();
    repo.write(
        ".gpuledger.yaml",
        "render:\n  remote:\n    private_networks: [127.0.0.0/8]\n    timeout: 1s\n",
    )
    .write(
        "apps/apps.yaml",
        &[
            chart_app("big", "a", &format!("{}/big", server.url()), "llm", "1.0.0"),
            chart_app(
                "slow",
                "b",
                &format!("{}/slow", server.url()),
                "llm",
                "1.0.0",
            ),
        ]
        .join("---\n"),
    )
    .commit("misbehaving servers");
    let tmp = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let (code, r, _) = render_with_cache(repo.path(), tmp.path(), &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
    assert_eq!(code, 2);
    let big = app(&r, "big")["error"].as_str().unwrap().to_string();
    assert!(big.contains("larger than 10485760 bytes: refused"), "{big}");
    let slow = app(&r, "slow")["error"].as_str().unwrap().to_string();
    assert!(slow.contains("no answer within 1s"), "{slow}");
    assert_eq!(r["desired"]["gpus_declared"], Value::Null);
}

/// A pull request cannot point rendering at a host of its choosing: the head fetches only from
/// the hosts the base's sources use. A new app on the base's Helm repository renders (+32 GPUs,
/// over the tenant's limit); one on a new host is unknown, names the host, is never fetched,
/// and fails the render-error gate.
#[test]
fn a_head_renders_from_the_bases_hosts_only() {
    let known = Server::start();
    let new_host = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    helm_repo(&known, &tmp.path().join("repo"));
    helm_repo(&new_host, &tmp.path().join("repo2"));
    let repo = Repo::new();
    repo.write(
        ".gpuledger.yaml",
        "render:\n  remote:\n    private_networks: [127.0.0.0/8]\nlimits:\n  tenants: {research: 8}\n",
    )
    .write(
        "apps/chat.yaml",
        &chart_app("chat", "serving", &format!("{}/charts", known.url()), "llm", "1.2.3"),
    )
    .commit("base");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write(
        "apps/train.yaml",
        &chart_app(
            "train",
            "research",
            &format!("{}/charts", known.url()),
            "llm",
            "2.0.0",
        )
        .replace(
            "targetRevision",
            "helm:\n      valuesObject: {replicas: 4}\n    targetRevision",
        ),
    )
    .commit("a training run");
    let check = |head: &str| {
        with_renderers(
            repo.path(),
            &[
                "check",
                "--repo",
                ".",
                "--base",
                "main",
                "--head",
                head,
                "--cache-dir",
                tmp.path().join("cache").to_str().unwrap(),
                "--fail-on",
                "render-error",
            ],
        )
    };
    let (code, r, stderr) = check("feature");
    assert_eq!(code, 0, "{stderr}");
    let c = &r["check"];
    assert_eq!(c["gpu_delta"], 32, "{c:#}");
    let research = c["tenant_limits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["tenant"] == "research")
        .unwrap();
    assert_eq!(
        (research["gpus_head"].clone(), research["over"].clone()),
        (32.into(), true.into())
    );

    repo.write(
        "apps/rogue.yaml",
        &chart_app(
            "rogue",
            "research",
            &format!("{}/charts", new_host.url()),
            "llm",
            "1.2.3",
        ),
    )
    .commit("a chart from elsewhere");
    let (code, r, stderr) = check("feature");
    assert_eq!(code, 1, "{stderr}");
    let c = &r["check"];
    assert_eq!(c["gpu_delta"], Value::Null, "{c:#}");
    let why = c["delta_unknown"].as_str().unwrap();
    assert!(
        why.contains("Application rogue is not rendered at the head")
            && why.contains(&format!("new source host {}", new_host.host())),
        "{why}"
    );
    let gate = &c["gates"][0];
    assert_eq!(
        (gate["name"].clone(), gate["failed"].clone()),
        ("render-error".into(), true.into())
    );
    assert!(new_host.requests().is_empty(), "{:?}", new_host.requests());
}

/// A flux-operator home lab, as such repositories are laid out: the FluxInstance comes from the
/// flux-instance chart (an OCI chart) in a HelmRelease, its `spec.sync` makes the `flux-system`
/// GitRepository and Kustomization that Git does not hold; the apps' Kustomizations name that
/// GitRepository, and their HelmReleases take OCI charts through OCIRepositories placed in the
/// Kustomization's target namespace. Every app is found once and renders; offline, the total is
/// unknown and says which apps.
#[test]
fn a_flux_operator_repository_renders_through_its_bootstrap_source() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().unwrap();
    let oci = format!("oci://{}/charts", reg.host);
    charts(
        &[&chart("llm-1"), &chart("flux-instance")],
        tmp.path(),
        &[
            ("llm-1.2.3.tgz", oci.clone()),
            ("flux-instance-0.9.0.tgz", oci.clone()),
        ],
    );
    let ks = |name: &str, path: &str, ns: &str| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 1h\n  path: {path}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  targetNamespace: {ns}\n"
        )
    };
    let oci_release = |name: &str, chart: &str, tag: &str, values: &str| {
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: {name}\nspec:\n  url: {oci}/{chart}\n  ref:\n    tag: {tag}\n  layerSelector:\n    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip\n    operation: copy\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\nspec:\n  chartRef:\n    kind: OCIRepository\n    name: {name}\n  values:\n{values}"
        )
    };
    let repo = Repo::new();
    repo.write(".gpuledger.yaml", LOOPBACK)
        .write(
            "kubernetes/flux/cluster/ks.yaml",
            &ks("cluster-apps", "./kubernetes/apps", "default")
                .replace("  targetNamespace: default\n", ""),
        )
        .write(
            "kubernetes/apps/flux-system/kustomization.yaml",
            "resources: [./flux-instance/ks.yaml]\n",
        )
        .write(
            "kubernetes/apps/flux-system/flux-instance/ks.yaml",
            &ks("flux-instance", "./kubernetes/apps/flux-system/flux-instance/app", "flux-system"),
        )
        .write(
            "kubernetes/apps/flux-system/flux-instance/app/kustomization.yaml",
            "resources: [./helmrelease.yaml]\n",
        )
        .write(
            "kubernetes/apps/flux-system/flux-instance/app/helmrelease.yaml",
            &oci_release(
                "flux-instance",
                "flux-instance",
                "0.9.0",
                "    instance:\n      sync:\n        kind: GitRepository\n        url: https://github.com/acme/home-ops\n        ref: refs/heads/main\n        path: kubernetes/flux/cluster\n",
            ),
        )
        .write(
            "kubernetes/apps/ai/kustomization.yaml",
            "resources: [./ollama/ks.yaml]\n",
        )
        .write(
            "kubernetes/apps/ai/ollama/ks.yaml",
            &ks("ollama", "./kubernetes/apps/ai/ollama/app", "ai"),
        )
        .write(
            "kubernetes/apps/ai/ollama/app/kustomization.yaml",
            "resources: [./helmrelease.yaml]\n",
        )
        .write(
            "kubernetes/apps/ai/ollama/app/helmrelease.yaml",
            &oci_release("ollama", "llm", "1.2.3", "    replicas: 1\n    gpus: 2\n"),
        )
        .commit("home-ops");
    repo.git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/acme/home-ops.git",
    ]);
    let cache = tmp.path().join("cache");
    let (code, r, stderr) = render_with_cache(repo.path(), &cache, &[]);
    assert_eq!(code, 0, "{stderr}\n{:#}", r["desired"]["apps"]);
    assert_eq!(
        desired_gpus(&r),
        [("ai/Deployment/ollama".to_string(), 2)].into()
    );
    assert_eq!(r["desired"]["gpus_declared"], 2);
    assert_eq!(r["desired"]["duplicates"], serde_json::json!([]));
    let cluster_apps = app(&r, "cluster-apps");
    assert_eq!(cluster_apps["status"], "rendered");
    assert!(
        cluster_apps["notes"][0]
            .as_str()
            .unwrap()
            .contains("GitRepository flux-system/flux-system is not in the repository"),
        "{cluster_apps:#}"
    );
    // The FluxInstance the chart renders syncs this repository: its Kustomization is followed.
    let sync = r["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "flux-system")
        .unwrap_or_else(|| panic!("{:#}", r["desired"]["apps"]));
    assert_eq!(sync["applied_by"], "HelmRelease/flux-instance");
    assert_eq!(sync["path"], "kubernetes/flux/cluster");

    let (code, off, _) = render_with_cache(repo.path(), &cache, &["--offline"]);
    assert_eq!(code, 2);
    assert_eq!(off["desired"]["gpus_declared"], Value::Null);
    let why = off["desired"]["unknown"]["gpus_declared"].as_str().unwrap();
    assert!(why.starts_with("2 of "), "{why}");
    assert!(
        why.contains("HelmRelease ollama") && why.contains("--offline"),
        "{why}"
    );
}

/// Argo CD's example apps: an app-of-apps chart whose parent Application was created by hand (it
/// is not in Git). The chart is found as a root, the Applications it renders are followed, and the
/// directories they render count once — never also as roots of their own, nor is the directory of
/// a config-management plugin's app (not rendered, and said so) a kustomize root.
#[test]
fn an_app_of_apps_chart_without_its_parent_is_followed_once() {
    let repo = Repo::new();
    let url = "https://github.com/acme/argocd-example-apps.git";
    repo.write("apps/Chart.yaml", "apiVersion: v2\nname: apps\nversion: 1.0.0\n")
        .write("apps/values.yaml", &format!("repoURL: {url}\n"))
        .write(
            "apps/templates/guestbook.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: guestbook\nspec:\n  destination:\n    namespace: guestbook\n  source:\n    repoURL: {{ .Values.repoURL }}\n    path: guestbook\n",
        )
        .write("guestbook/deployment.yaml", &deployment("guestbook-ui", 2, 1).replace("metadata:\n", "metadata:\n  namespace: guestbook\n"))
        .write(
            "apps/templates/kustomized-helm.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: kustomized-helm\nspec:\n  destination:\n    namespace: plugins\n  source:\n    repoURL: {{ .Values.repoURL }}\n    path: plugins/kustomized-helm\n    plugin:\n      name: kustomized-helm\n",
        )
        .write(
            "plugins/kustomized-helm/kustomization.yaml",
            "resources: [all.yaml]\n",
        )
        .write(
            "plugins/kustomized-helm/all.yaml",
            &deployment("rendered-by-the-plugin", 1, 4),
        )
        .commit("example apps");
    let (code, r, stderr) = render(repo.path(), &["--repo-url", url]);
    // The plugin's app is unknown: the total is too, and the run is incomplete.
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        desired_gpus(&r),
        [("guestbook/Deployment/guestbook-ui".to_string(), 2)].into()
    );
    assert_eq!(r["desired"]["gpus_declared"], Value::Null);
    assert_eq!(r["desired"]["gpus_declared_rendered"], 2);
    assert_eq!(r["desired"]["duplicates"], serde_json::json!([]));
    let names: Vec<&str> = r["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["apps", "guestbook", "kustomized-helm"]);
    let plugin = app(&r, "kustomized-helm");
    assert_eq!(plugin["status"], "not-rendered", "{plugin:#}");
}

/// Helm checks values against a chart's `values.schema.json` and fetches the schema's remote
/// `$ref`s over HTTP: a chart in a pull request could point that at any address the runner
/// reaches. gpuledger renders without schema validation, so the chart renders and the address is
/// never asked.
#[test]
fn a_charts_schema_never_makes_helm_fetch() {
    let server = Server::start();
    server.route(
        "/schema.json",
        Route::Bytes(br#"{"type": "object"}"#.to_vec()),
    );
    let repo = Repo::new();
    vendor(&repo, "llm-1", "charts/llm");
    repo.write(
        "charts/llm/values.schema.json",
        &format!(r#"{{"$ref": "{}/schema.json"}}"#, server.url()),
    )
    .commit("a chart whose schema names a URL");
    let (code, r, stderr) = render(repo.path(), &[]);
    assert_eq!(code, 0, "{stderr}\n{:#}", r["desired"]["apps"]);
    assert_eq!(
        desired_gpus(&r),
        [("default/Deployment/llm".to_string(), 8)].into()
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

/// A credential goes to the host it is configured for and no other: the Helm repository's host
/// gets the token from the environment variable `render.remote.credentials` names, the host it
/// redirects to does not, and the token is printed nowhere.
#[test]
fn a_credential_goes_only_to_its_own_host() {
    let own = Server::start();
    let other = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    helm_repo(&other, &tmp.path().join("repo"));
    // Helm resolves the index's relative archive URLs against the repository's own URL: both
    // requests reach the credential's host, which sends them elsewhere.
    for f in ["index.yaml", "llm-1.2.3.tgz"] {
        own.route(
            &format!("/charts/{f}"),
            Route::Redirect(format!("{}/charts/{f}", other.url())),
        );
    }
    let repo = Repo::new();
    repo.write(
        ".gpuledger.yaml",
        &format!(
            "{LOOPBACK}    credentials:\n    - {{host: '{}', token_env: CHARTS_TOKEN}}\n",
            own.host()
        ),
    )
    .write(
        "apps/chat.yaml",
        &chart_app(
            "chat",
            "research",
            &format!("{}/charts", own.url()),
            "llm",
            "1.2.3",
        ),
    )
    .commit("a chart behind a login");
    let secret = "s3cret-chart-token";
    let venv = std::env::var("GPULEDGER_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| crate::support::root().join(".venv"));
    let out = crate::support::gpuledger(repo.path())
        .args(["render", "--repo", ".", "--format", "json", "--cache-dir"])
        .arg(tmp.path().join("cache"))
        .env("CHARTS_TOKEN", secret)
        .env(
            "GPULEDGER_HELM",
            crate::support::root().join("tests/support/helm"),
        )
        .env(
            "PATH",
            format!(
                "{}:{}",
                venv.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["desired"]["gpus_declared"], 8);
    assert_eq!(
        own.authorizations(),
        [
            format!("GET /charts/index.yaml: Bearer {secret}"),
            format!("GET /charts/llm-1.2.3.tgz: Bearer {secret}"),
        ]
    );
    assert!(
        other.authorizations().is_empty(),
        "{:?}",
        other.authorizations()
    );
    assert!(!other.requests().is_empty());
    assert!(!stdout.contains(secret) && !stderr.contains(secret));
}
