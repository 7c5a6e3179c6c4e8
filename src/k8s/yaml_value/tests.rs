//! The YAML fast path against serde-saphyr: every input read both ways gives the same objects,
//! notes and errors, and the fast path takes what it should and leaves the rest.

use super::*;
use crate::k8s::yaml::{Fast, read_yaml_with};
use crate::k8s::yaml_list::{Listed, read_list};

/// Everything a read returns, as text: objects (all their fields), the list's annotations, the
/// notes, or the error with its line. With the list path, an answer of `None` reads the input
/// again without it, as `super::super::read` does.
fn read_with(text: &str, fast: Fast, whole_max: usize) -> String {
    let mut session = Session::new();
    let mut r = read_yaml_with(
        text.as_bytes(),
        "t.yaml",
        None,
        &mut session,
        fast,
        whole_max,
    );
    if matches!(r, Ok(None)) {
        session = Session::new();
        r = read_yaml_with(
            text.as_bytes(),
            "t.yaml",
            None,
            &mut session,
            Fast::Documents,
            whole_max,
        );
    }
    let out = match r {
        Ok(found) => format!("{found:?}"),
        Err(super::super::document::ReadError::Input(e)) => format!("error {e:?}"),
        Err(super::super::document::ReadError::Io(e)) => format!("io {e:?}"),
    };
    format!("{out}\nnotes {:?}", session.take_trimmed())
}

/// The input read by serde-saphyr alone, with the fast path, and with every document of more
/// than 64 bytes taken as too large to hold (the list path, or serde-saphyr streaming).
fn read_both(text: &str) -> (String, String) {
    let slow = read_with(text, Fast::Off, 1 << 20);
    let small = read_with(text, Fast::Lists, 64);
    assert_eq!(
        small, slow,
        "the list path and serde-saphyr differ on:\n{text}"
    );
    (read_with(text, Fast::Lists, 1 << 20), slow)
}

fn same(text: &str) {
    let (fast, slow) = read_both(text);
    assert_eq!(fast, slow, "fast path and serde-saphyr differ on:\n{text}");
}

/// The document is in the fast path's subset, and read as serde-saphyr reads it.
fn taken(text: &str) {
    let mut session = Session::new();
    assert!(
        read_document(text, &mut session, 0).is_some(),
        "the fast path should take:\n{text}"
    );
    same(text);
}

/// The document is left to serde-saphyr (whose result stands).
fn left(text: &str) {
    let mut session = Session::new();
    assert!(
        read_document(text, &mut session, 0).is_none(),
        "the fast path should leave to serde-saphyr:\n{text}"
    );
    same(text);
}

const POD: &str = r#"---
# a pod as kubectl writes it
apiVersion: v1
kind: Pod
metadata:
  annotations:
    prometheus.io/port: "9090"
    note: 'it''s here'
  labels:
    app: web
  name: web-0
  namespace: team-a
  ownerReferences:
  - apiVersion: apps/v1
    controller: true
    kind: ReplicaSet
    name: web-7d9
    uid: 1b2c
  managedFields:
  - fieldsV1:
      "f:metadata":
        "k:{\"uid\":\"69c7\"}": {}
      "f:spec": {}
spec:
  containers:
  - args:
    - --port
    - "8000"
    image: nginx:1.25   # pinned
    name: main
    resources:
      limits:
        nvidia.com/gpu: 2
        memory: 4Gi
      requests:
        cpu: "4"
  nodeName: ip-10-16-1-75
  priority: 0
  tolerations: []
status:
  hostIP: 10.16.1.75
  phase: Running
  conditions:
  - lastProbeTime: null
    status: "True"
    type: Ready
...
"#;

#[test]
fn kubectl_style_documents_are_taken_and_read_alike() {
    taken(POD);
    // A list with its items' kinds and a typed list whose items name none.
    taken(
        "apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    gpuledger.io/cluster: c1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n    labels:\n      nvidia.com/gpu.product: NVIDIA-H100\n  status:\n    allocatable:\n      nvidia.com/gpu: \"8\"\n",
    );
    taken(
        "items:\n  - metadata:\n      name: a\n      namespace: x\n    spec:\n      replicas: 3\napiVersion: apps/v1\nkind: DeploymentList\n",
    );
    // A sequence of objects, a generated name, an escape, an empty document.
    taken(
        "- apiVersion: batch/v1\n  kind: Job\n  metadata:\n    generateName: \"train-\\u00e9-\"\n  spec:\n    parallelism: 4\n    suspend: false\n",
    );
    taken("# nothing here\n");
    // Lines of objects count from the stream's start, across documents.
    same(&format!("{POD}---\n{POD}"));
}

#[test]
fn what_the_subset_does_not_cover_is_left_to_serde_saphyr() {
    let meta = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    for extra in [
        "  labels: &l {a: b}\n",
        "  labels: {a: b}\n",
        "  labels: !!map {}\n",
        "  annotations:\n    a: |\n      text\n",
        "  annotations:\n    a: >-\n      text\n",
        "  annotations:\n    a: two\n      lines\n",
        "  annotations:\n    a: \"two\n      lines\"\n",
        "  annotations:\n    a: b: c\n",
        "  annotations:\n    ? a\n    : b\n",
        "  annotations:\n    a: x\n    a: y\n",
        "  annotations:\n    a: 'x'\n    \"a\": y\n",
        "  annotations:\n\ta: b\n",
        "  annotations:\n    a: caf\u{e9}\n",
        "  annotations:\n    a: \"\\x41\"\n",
        "  annotations:\n     a: b\n    c: d\n",
        "  annotations:\n    a: [b]\n",
        "  annotations:\n    yes: b\n",
        "  annotations:\n    1: b\n",
        "  annotations:\n    <<: {a: b}\n",
        "  labels:\n    a:\n",
        "data:\n  - - a\n",
        "data: *x\n",
        "data:\n  a: -\n",
    ] {
        left(&format!("{meta}{extra}"));
    }
    left(&format!("%YAML 1.2\n---\n{meta}"));
    left(&format!("--- {{a: 1}}\n{meta}"));
    left(&meta.replace('\n', "\r\n"));
    left("just a scalar\n");
    // Values the typed bodies refuse, or that serde-saphyr types by rules not copied: its error,
    // or its reading, stands.
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: ";
    for replicas in ["three", "\"3\"", "0x10", "1e3", "-1", "~"] {
        let text = format!("{deploy}{replicas}\n");
        let mut session = Session::new();
        if read_document(&text, &mut session, 0).is_some() {
            same(&text);
        } else {
            left(&text);
        }
    }
}

/// A large `List` as kubectl writes it is read an item at a time; any other list, or an item the
/// fast path does not take, is read again by serde-saphyr, with the same result.
#[test]
fn kubectl_lists_are_read_an_item_at_a_time() {
    let item = |name: &str| {
        format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: {name}\n    namespace: ml\n  spec:\n    nodeName: n1\n    containers:\n    - name: main\n      resources:\n        limits:\n          nvidia.com/gpu: \"1\"\n"
        )
    };
    let list = |items: &str, kind: &str| {
        format!(
            "apiVersion: v1\nitems:\n{items}kind: {kind}\nmetadata:\n  annotations:\n    gpuledger.io/cluster: c1\n  resourceVersion: \"\"\n"
        )
    };
    let kubectl = list(&format!("{}# between\n\n{}", item("a"), item("b")), "List");
    let mut session = Session::new();
    let Listed::Read {
        objects,
        annotations,
    } = read_list(kubectl.as_bytes(), 3, &mut session).unwrap()
    else {
        panic!("the list path should take:\n{kubectl}");
    };
    assert_eq!(objects.len(), 2);
    // `name: b` is the document's 20th line; the document starts after the stream's third.
    assert_eq!(objects[1].source.line, Some(3 + 20));
    assert!(format!("{annotations:?}").contains("c1"), "{annotations:?}");
    same(&kubectl);
    same(&format!("# fleet\n---\n{kubectl}---\n{kubectl}"));
    // Taken again by serde-saphyr: a typed list whose items name no kind, an item outside the
    // subset, items indented under their key, an item that fails.
    for again in [
        list(
            &item("a").replace("- apiVersion: v1\n  kind: Pod\n  metadata", "- metadata"),
            "PodList",
        ),
        list(&format!("{}- {{a: 1}}\n", item("a")), "List"),
        list(&item("a"), "List").replace("items:\n- ", "items:\n  - "),
        list(&item("a").replace("name: main", "name: [main]"), "List"),
        list(
            &item("a").replace("kind: Pod", "kind: Pod\n  kind: Pod"),
            "List",
        ),
    ] {
        let mut session = Session::new();
        assert!(
            matches!(
                read_list(again.as_bytes(), 0, &mut session).unwrap(),
                Listed::Again
            ),
            "the list path should leave:\n{again}"
        );
        same(&again);
    }
}

/// Scalars of every spelling in every typed position (a name, a label value, a count, an optional
/// boolean, a quantity, an ignored field), plain and quoted, read both ways.
#[test]
fn generated_scalars_read_as_serde_saphyr_reads_them() {
    let spellings = [
        "",
        "~",
        "null",
        "Null",
        "NULL",
        "true",
        "True",
        "FALSE",
        "yes",
        "No",
        "on",
        "y",
        "0",
        "-0",
        "007",
        "12",
        "-12",
        "+12",
        "1.5",
        ".5",
        "5.",
        "1e3",
        "1E-3",
        "0x1F",
        "0X1F",
        "0o7",
        "0b1",
        "1_000",
        "inf",
        ".inf",
        "-.inf",
        ".nan",
        "-.nan",
        "nan",
        "Infinity",
        "10.0.0.1",
        "1.2.3",
        "2025-01-01",
        "2025-01-01T00:00:00Z",
        "a:b",
        "-x",
        "--port",
        "a b",
        "a # c",
        "500m",
        "4Gi",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "123456789012345678",
        "1234567890123456789",
        "nvidia.com/gpu",
        "x'y",
        "x\"y",
    ];
    let mut taken_count = 0;
    for s in spellings {
        let quoted_s = format!("'{}'", s.replace('\'', "''"));
        for v in [s.to_string(), quoted_s] {
            let text = format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d-{n}\n  labels:\n    l: {v}\n  ownerReferences:\n  - name: o\n    kind: X\n    apiVersion: v1\n    uid: u\n    controller: {v}\nspec:\n  replicas: {v}\n  ignored: {v}\n  template:\n    spec:\n      containers:\n      - name: {v}\n        resources:\n          limits:\n            nvidia.com/gpu: {v}\n",
                n = s.len()
            );
            // Each position on its own, so one refusal does not hide the others.
            for (i, line) in text.lines().enumerate() {
                if !line.contains(&v) {
                    continue;
                }
                let one: String = text
                    .lines()
                    .enumerate()
                    .map(|(j, l)| {
                        if j == i || !l.contains(&v) {
                            format!("{l}\n")
                        } else {
                            format!("{}\"z\"\n", l.strip_suffix(v.as_str()).unwrap_or(l))
                        }
                    })
                    .collect();
                let one = one.replace("controller: \"z\"", "controller: true");
                let one = one.replace("replicas: \"z\"", "replicas: 1");
                let one = one.replace("gpu: \"z\"", "gpu: 1");
                let mut session = Session::new();
                if read_document(&one, &mut session, 0).is_some() {
                    taken_count += 1;
                }
                same(&one);
            }
        }
    }
    // Most positions of most spellings are the fast path's: the test reads both paths.
    assert!(taken_count > 200, "{taken_count}");
}

/// The YAML fixtures of the suite (and, when `GPULEDGER_YAML_CORPUS` names directories, separated
/// by `:`, every YAML file under them), read both ways.
#[test]
fn yaml_files_read_alike() {
    let mut dirs = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")];
    if let Ok(more) = std::env::var("GPULEDGER_YAML_CORPUS") {
        dirs.extend(more.split(':').map(std::path::PathBuf::from));
    }
    let mut files = 0;
    let mut stack = dirs;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let (fast, slow) = read_both(&text);
                assert_eq!(fast, slow, "{}", path.display());
                files += 1;
            }
        }
    }
    assert!(files >= 40, "{files} YAML files");
}
