//! The render sandbox holds for every path a kustomization, chart, app or values file names
//! (issue 12, class 8), and Argo CD helm parameters reach helm as Argo CD passes them (class 9).
//!
//! Each repository here sits next to a directory *outside* it that holds real GPU manifests, the
//! way another checkout or a cache sits on a CI runner. Reaching it takes enough `../` to climb out
//! of the temporary copy gpuledger renders in, then the directory's absolute path.

use serde_json::Value;
use std::collections::BTreeMap;

use super::support::{Repo, desired_gpus, render};

const URL: &str = "https://github.com/acme/gitops.git";

fn deployment(name: &str, replicas: u64, gpus: u64) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n      - name: main\n        image: vllm/vllm-openai:v0.9\n        resources:\n          limits: {{nvidia.com/gpu: \"{gpus}\"}}\n"
    )
}

/// A directory outside any repository: a kustomization and a component that each add a 64-GPU
/// deployment, a patch and values that would zero the repository's own GPUs, and generator inputs.
struct Outside {
    dir: tempfile::TempDir,
}

impl Outside {
    fn new() -> Outside {
        let o = Outside {
            dir: tempfile::tempdir().unwrap(),
        };
        let w = |rel: &str, text: &str| {
            let p = o.dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("kust/kustomization.yaml", "resources: [gpu.yaml]\n");
        w("kust/gpu.yaml", &deployment("stolen", 1, 64));
        w(
            "component/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [gpu.yaml]\n",
        );
        w("component/gpu.yaml", &deployment("stolen", 1, 64));
        w(
            "patch.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: model}\nspec: {replicas: 0}\n",
        );
        w(
            "patch.json",
            "[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 0}]\n",
        );
        w("values.yaml", "gpus: 0\n");
        w("gpus.txt", "0");
        w("env", "A=1\n");
        w("config.yaml", "namePrefix: {}\n");
        o
    }

    /// `rel` inside the outside directory, written as a relative path that climbs out of wherever
    /// the repository is copied to.
    fn climb(&self, rel: &str) -> String {
        let abs = self.dir.path().join(rel);
        format!(
            "{}{}",
            "../".repeat(40),
            abs.display().to_string().trim_start_matches('/')
        )
    }

    fn abs(&self, rel: &str) -> String {
        self.dir.path().join(rel).display().to_string()
    }
}

/// Renders at the working tree and at the commit `HEAD` names, expecting the same outcome.
fn both(r: &Repo, extra: &[&str]) -> Vec<(String, i32, Value, String)> {
    let sha = r.git(&["rev-parse", "HEAD"]).trim().to_string();
    [vec![], vec!["--ref".to_string(), sha]]
        .into_iter()
        .map(|mut args| {
            args.extend(extra.iter().map(|s| s.to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, json, err) = render(r.path(), &args);
            let at = if args.is_empty() || args[0] != "--ref" {
                "working tree".to_string()
            } else {
                format!("--ref {}", args[1])
            };
            (at, code, json, err)
        })
        .collect()
}

fn app<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no app {name} in {}", json["desired"]["apps"]))
}

/// The app failed, before its renderer ran, naming `file` and the offending `field` entry.
fn refused(json: &Value, at: &str, name: &str, file: &str, field: &str) {
    let a = app(json, name);
    assert_eq!(a["status"], "error", "{at}: {a}");
    let e = a["error"].as_str().unwrap_or_default();
    assert!(
        e.contains(&format!("{file}: {field} entry")) && e.contains("leaves the repository"),
        "{at}: {name}: {e}"
    );
}

fn no_stolen_gpus(json: &Value, at: &str) {
    let got = desired_gpus(json);
    assert!(
        got.keys().all(|k| !k.contains("stolen")),
        "{at}: a manifest from outside the repository was rendered as desired state: {got:?}"
    );
}

/// Directories outside the repository, named by `resources`, `bases` and `components` (relative,
/// absolute, or through a symlink in the repository), are refused before kustomize runs.
#[test]
fn kustomize_directories_outside_the_repository_are_refused() {
    let o = Outside::new();
    let r = Repo::new();
    let k = |dir: &str, body: &str| {
        r.write(&format!("{dir}/kustomization.yaml"), body);
    };
    k("resources", &format!("resources:\n- {}\n", o.climb("kust")));
    k("absolute", &format!("resources:\n- {}\n", o.abs("kust")));
    k("bases", &format!("bases:\n- {}\n", o.climb("kust")));
    r.write("components/d.yaml", &deployment("model", 1, 1));
    k(
        "components",
        &format!(
            "resources: [d.yaml]\ncomponents:\n- {}\n",
            o.climb("component")
        ),
    );
    k("linked", "resources:\n- ext\n");
    std::os::unix::fs::symlink(o.dir.path().join("kust"), r.path().join("linked/ext")).unwrap();
    // A nested kustomization inside the repository that escapes is found through its parent.
    k("nested/overlay", "resources:\n- ../base\n");
    k(
        "nested/base",
        &format!("resources:\n- {}\n", o.climb("kust")),
    );
    r.write("ok/d.yaml", &deployment("ok", 1, 2));
    r.commit("escapes");

    for (at, code, json, err) in both(&r, &[]) {
        assert_eq!(code, 2, "{at}: {err}");
        no_stolen_gpus(&json, &at);
        refused(
            &json,
            &at,
            "resources",
            "resources/kustomization.yaml",
            "resources",
        );
        refused(
            &json,
            &at,
            "absolute",
            "absolute/kustomization.yaml",
            "resources",
        );
        refused(&json, &at, "bases", "bases/kustomization.yaml", "bases");
        refused(
            &json,
            &at,
            "components",
            "components/kustomization.yaml",
            "components",
        );
        refused(
            &json,
            &at,
            "linked",
            "linked/kustomization.yaml",
            "resources",
        );
        refused(
            &json,
            &at,
            "nested/overlay",
            "nested/base/kustomization.yaml",
            "resources",
        );
        assert_eq!(desired_gpus(&json)["default/Deployment/ok"], 2, "{at}");
    }
}

/// Files outside the repository named by patches, generators, CRDs, replacements, OpenAPI schemas,
/// configurations and transformer/generator/validator entries are refused before kustomize runs.
#[test]
fn kustomize_files_outside_the_repository_are_refused() {
    let o = Outside::new();
    let r = Repo::new();
    let rows: Vec<(&str, String, &str)> = vec![
        (
            "patches",
            format!("patches:\n- path: {}\n", o.climb("patch.yaml")),
            "patches",
        ),
        (
            "psm",
            format!("patchesStrategicMerge:\n- {}\n", o.climb("patch.yaml")),
            "patchesStrategicMerge",
        ),
        (
            "json6902",
            format!(
                "patchesJson6902:\n- target: {{group: apps, version: v1, kind: Deployment, name: model}}\n  path: {}\n",
                o.climb("patch.json")
            ),
            "patchesJson6902",
        ),
        (
            "cm-files",
            format!(
                "configMapGenerator:\n- name: c\n  files:\n  - key={}\n",
                o.climb("gpus.txt")
            ),
            "configMapGenerator",
        ),
        (
            "cm-envs",
            format!(
                "configMapGenerator:\n- name: c\n  envs:\n  - {}\n",
                o.climb("env")
            ),
            "configMapGenerator",
        ),
        (
            "secret-env",
            format!("secretGenerator:\n- name: s\n  env: {}\n", o.climb("env")),
            "secretGenerator",
        ),
        (
            "crds",
            format!("crds:\n- {}\n", o.climb("config.yaml")),
            "crds",
        ),
        (
            "replacements",
            format!("replacements:\n- path: {}\n", o.climb("config.yaml")),
            "replacements",
        ),
        (
            "openapi",
            format!("openapi:\n  path: {}\n", o.climb("config.yaml")),
            "openapi",
        ),
        (
            "configurations",
            format!("configurations:\n- {}\n", o.climb("config.yaml")),
            "configurations",
        ),
        (
            "transformers",
            format!("transformers:\n- {}\n", o.climb("config.yaml")),
            "transformers",
        ),
        (
            "generators",
            format!("generators:\n- {}\n", o.climb("kust")),
            "generators",
        ),
        (
            "validators",
            format!("validators:\n- {}\n", o.climb("config.yaml")),
            "validators",
        ),
        (
            "helm-values",
            format!(
                "helmCharts:\n- name: x\n  valuesFile: {}\n",
                o.climb("values.yaml")
            ),
            "helmCharts",
        ),
        (
            "helm-home",
            format!("helmGlobals:\n  chartHome: {}\n", o.climb("kust")),
            "helmGlobals",
        ),
    ];
    for (dir, body, _) in &rows {
        r.write(&format!("{dir}/d.yaml"), &deployment("model", 2, 4))
            .write(
                &format!("{dir}/kustomization.yaml"),
                &format!("resources: [d.yaml]\n{body}"),
            );
    }
    // A patch file reached through a symlink that leaves the repository.
    r.write("linked-patch/d.yaml", &deployment("model", 2, 4))
        .write(
            "linked-patch/kustomization.yaml",
            "resources: [d.yaml]\npatches:\n- path: p.yaml\n",
        );
    std::os::unix::fs::symlink(
        o.dir.path().join("patch.yaml"),
        r.path().join("linked-patch/p.yaml"),
    )
    .unwrap();
    r.write("ok/d.yaml", &deployment("ok", 1, 2))
        .commit("file escapes");

    for (at, code, json, err) in both(&r, &[]) {
        assert_eq!(code, 2, "{at}: {err}");
        for (dir, _, field) in &rows {
            refused(&json, &at, dir, &format!("{dir}/kustomization.yaml"), field);
        }
        refused(
            &json,
            &at,
            "linked-patch",
            "linked-patch/kustomization.yaml",
            "patches",
        );
        assert_eq!(desired_gpus(&json)["default/Deployment/ok"], 2, "{at}");
    }
}

/// A chart and a Helm app (Argo CD and Flux) whose GPU count comes from a value.
const CHART: &str = "apiVersion: v2\nname: g\nversion: 0.1.0\n";
const VALUES: &str = "replicas: 1\ngpus: 8\nzones: [a]\nimage: {tag: v0}\n";
const TEMPLATE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ mul .Values.replicas (len .Values.zones) }}\n  template:\n    spec:\n      containers:\n      - name: main\n        image: \"vllm:{{ .Values.image.tag }}\"\n        resources:\n          limits:\n            nvidia.com/gpu: {{ .Values.gpus | quote }}\n";

fn add_chart(r: &Repo, dir: &str) {
    r.write(&format!("{dir}/Chart.yaml"), CHART)
        .write(&format!("{dir}/values.yaml"), VALUES)
        .write(&format!("{dir}/templates/deployment.yaml"), TEMPLATE);
}

fn argo_app(name: &str, path: &str, helm: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}}}\nspec:\n  destination: {{namespace: ml}}\n  source:\n    repoURL: {URL}\n    path: {path}\n    helm:\n{helm}"
    )
}

/// Helm value files (Argo CD `valueFiles`, `$ref` value files, Flux `valuesFiles`) and chart
/// dependencies that leave the repository, directly or through a symlink, are refused before helm
/// runs.
#[test]
fn helm_value_files_outside_the_repository_are_refused() {
    let o = Outside::new();
    let r = Repo::new();
    add_chart(&r, "charts/g");
    add_chart(&r, "charts/dep");
    r.write(
        "charts/dep/Chart.yaml",
        &format!(
            "{CHART}dependencies:\n- name: stolen\n  version: 0.1.0\n  repository: file://{}\n",
            o.climb("kust")
        ),
    );
    std::os::unix::fs::symlink(
        o.dir.path().join("values.yaml"),
        r.path().join("charts/g/values-linked.yaml"),
    )
    .unwrap();
    let apps = [
        argo_app(
            "argo-linked",
            "charts/g",
            "      valueFiles: [values-linked.yaml]\n",
        ),
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: argo-ref}}\nspec:\n  destination: {{namespace: ml}}\n  sources:\n  - repoURL: {URL}\n    path: charts/g\n    helm:\n      valueFiles: [$values/charts/g/values-linked.yaml]\n  - repoURL: {URL}\n    ref: values\n"
        ),
        argo_app("argo-dep", "charts/dep", "      releaseName: dep\n"),
        argo_app("argo-ok", "charts/g", "      releaseName: ok\n"),
    ];
    r.write("apps.yaml", &apps.join("---\n")).write(
        "flux.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: self, namespace: flux-system}\nspec: {url: \"https://github.com/acme/gitops\"}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: flux-linked, namespace: flux-system}\nspec:\n  chart:\n    spec:\n      chart: ./charts/g\n      sourceRef: {kind: GitRepository, name: self}\n      valuesFiles: [charts/g/values-linked.yaml]\n",
    )
    .commit("helm escapes");

    for (at, code, json, err) in both(&r, &["--repo-url", URL]) {
        assert_eq!(code, 2, "{at}: {err}");
        for name in ["argo-linked", "argo-ref", "flux-linked"] {
            let a = app(&json, name);
            assert_eq!(a["status"], "error", "{at}: {a}");
            let e = a["error"].as_str().unwrap_or_default();
            assert!(
                e.contains("values file charts/g/values-linked.yaml")
                    && e.contains("leaves the repository"),
                "{at}: {name}: {e}"
            );
        }
        let a = app(&json, "argo-dep");
        assert_eq!(a["status"], "error", "{at}: {a}");
        let e = a["error"].as_str().unwrap_or_default();
        assert!(
            e.contains("charts/dep/Chart.yaml: dependencies entry")
                && e.contains("leaves the repository"),
            "{at}: {e}"
        );
        assert_eq!(desired_gpus(&json)["ml/Deployment/ok"], 8, "{at}");
    }
}

/// Argo CD helm `parameters` reach helm as Argo CD passes them: commas escaped (unless already
/// escaped, or the value is a `{…}` list), `forceString` as `--set-string`, `fileParameters` as
/// `--set-file` on files inside the repository.
#[test]
fn argo_helm_parameters_mean_what_argo_cd_means() {
    let o = Outside::new();
    let r = Repo::new();
    add_chart(&r, "charts/g");
    r.write("charts/g/gpus.txt", "2")
        .write("charts/g/odd,name.txt", "3")
        .write("files/gpus.txt", "1");
    std::os::unix::fs::symlink(
        o.dir.path().join("gpus.txt"),
        r.path().join("charts/g/linked.txt"),
    )
    .unwrap();
    let p = |name: &str, params: &str| argo_app(name, "charts/g", params);
    let apps = [
        p(
            "comma",
            "      parameters:\n      - {name: image.tag, value: \"v1,gpus=0\"}\n",
        ),
        p(
            "escaped",
            "      parameters:\n      - {name: image.tag, value: 'v1\\,gpus=0'}\n",
        ),
        p(
            "list",
            "      parameters:\n      - {name: zones, value: \"{a,b,c}\"}\n",
        ),
        p(
            "forced",
            "      parameters:\n      - {name: image.tag, value: \"2,replicas=9\", forceString: true}\n",
        ),
        p(
            "forced-number",
            "      parameters:\n      - {name: gpus, value: \"4\", forceString: true}\n",
        ),
        p(
            "last-wins",
            "      parameters:\n      - {name: gpus, value: \"6\"}\n      - {name: gpus, value: \"5\"}\n",
        ),
        p(
            "file",
            "      fileParameters:\n      - {name: gpus, path: gpus.txt}\n",
        ),
        p(
            "file-comma",
            "      fileParameters:\n      - {name: gpus, path: \"odd,name.txt\"}\n",
        ),
        p(
            "file-root",
            "      fileParameters:\n      - {name: gpus, path: /files/gpus.txt}\n",
        ),
        p(
            "file-outside",
            &format!(
                "      fileParameters:\n      - {{name: gpus, path: \"{}\"}}\n",
                o.climb("gpus.txt")
            ),
        ),
        p(
            "file-linked",
            "      fileParameters:\n      - {name: gpus, path: linked.txt}\n",
        ),
    ];
    r.write("apps.yaml", &apps.join("---\n"))
        .commit("parameters");

    for (at, code, json, err) in both(&r, &["--repo-url", URL]) {
        assert_eq!(code, 2, "{at}: {err}");
        let want: BTreeMap<String, u64> = [
            ("comma", 8),
            ("escaped", 8),
            ("list", 3 * 8),
            ("forced", 8),
            ("forced-number", 4),
            ("last-wins", 5),
            ("file", 2),
            ("file-comma", 3),
            ("file-root", 1),
        ]
        .into_iter()
        .map(|(k, v)| (format!("ml/Deployment/{k}"), v))
        .collect();
        assert_eq!(desired_gpus(&json), want, "{at}");
        for name in ["file-outside", "file-linked"] {
            let a = app(&json, name);
            assert_eq!(a["status"], "error", "{at}: {a}");
            let e = a["error"].as_str().unwrap_or_default();
            // The app reader refuses `../` as it does for value files; the sandbox, a symlink.
            assert!(
                e.contains("fileParameters entry gpus")
                    && (e.contains("leaves the repository")
                        || e.contains("points outside the repository")),
                "{at}: {name}: {e}"
            );
        }
    }
}
