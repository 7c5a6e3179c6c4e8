use super::*;
use crate::k8s::read::read_str;
use crate::live::prometheus::{GR_ENGINE_ACTIVE, Holder};
use crate::workload::owners;

fn id(node: &str, gpu: &str, cluster: Option<&str>, mig: Option<&str>) -> GpuId {
    GpuId {
        scope: cluster
            .map(|c| [("cluster".to_string(), c.to_string())].into())
            .unwrap_or_default(),
        node: Some(node.into()),
        gpu: gpu.into(),
        uuid: None,
        mig_profile: mig.map(str::to_string),
        mig_instance: mig.map(|_| "1".to_string()),
    }
}

fn holder(pod: Option<&str>, activity: f64) -> Holder {
    Holder {
        namespace: pod.map(|_| "ml".to_string()),
        pod: pod.map(str::to_string),
        container: None,
        activity,
        samples: 10.0,
    }
}

fn gpu(id: GpuId, holders: Vec<Holder>) -> GpuActivity {
    GpuActivity {
        activity: holders.iter().map(|h| h.activity).sum(),
        id,
        holders,
        metric: GR_ENGINE_ACTIVE,
    }
}

fn read(gpus: Vec<GpuActivity>) -> DcgmRead {
    DcgmRead {
        gpus,
        ..DcgmRead::default()
    }
}

const PODS: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec:\n  nodeName: n1\n  containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: ml}\nspec:\n  nodeName: n2\n  containers: [{resources: {limits: {nvidia.com/gpu: 1}}}]\n";

fn nodes(names: &[(&'static str, u64)]) -> BTreeMap<&'static str, u64> {
    names.iter().copied().collect()
}

#[test]
fn busy_equivalents_and_unattributed() {
    let objs = read_str(PODS, "t").unwrap();
    let w = owners::build(&objs).unwrap();
    let r = read(vec![
        gpu(id("n1", "0", None, None), vec![holder(Some("a"), 0.9)]),
        gpu(id("n1", "1", None, None), vec![holder(Some("a"), 0.04)]),
        gpu(id("n1", "2", None, None), vec![holder(None, 0.5)]),
        gpu(id("n1", "3", None, None), vec![holder(None, 0.0)]),
        gpu(id("n1", "4", None, None), vec![holder(Some("gone"), 0.7)]),
        gpu(
            id("n1", "5", None, Some("1g.10gb")),
            vec![holder(Some("a"), 0.3)],
        ),
        gpu(id("n2", "0", None, None), vec![holder(Some("b"), 0.0)]),
    ]);
    let gpu_nodes = nodes(&[("n1", 6), ("n2", 1)]);
    let a = attribute(&r, 0.05, &w.pods, &objs, &gpu_nodes).unwrap();
    let u = a.per_workload[&0];
    assert_eq!(u.busy, 1);
    assert!((u.equivalents - 0.94).abs() < 1e-9);
    assert_eq!(a.fleet.busy, 3, "busy whole GPUs, attributed or not");
    assert!((a.fleet.equivalents - 2.14).abs() < 1e-9);
    let un: Vec<&str> = a.unattributed.iter().map(|u| u.reason.as_str()).collect();
    assert_eq!(
        un,
        [
            "no pod on this GPU",
            "pod ml/gone is not a GPU pod of the fleet"
        ]
    );
    assert_eq!(a.mig_busy["1g.10gb"], 1);
    assert!(a.partial.is_empty() && a.no_metrics.is_empty(), "{a:?}");
    assert_eq!(a.scope, None);
}

#[test]
fn a_gpu_held_by_two_pods_counts_once_for_the_live_one() {
    let objs = read_str(PODS, "t").unwrap();
    let w = owners::build(&objs).unwrap();
    // The pod that left had the larger part; the busy GPU still goes to the pod of the fleet.
    let r = read(vec![gpu(
        id("n1", "0", None, None),
        vec![holder(Some("old"), 0.5), holder(Some("a"), 0.4)],
    )]);
    let gpu_nodes = nodes(&[("n1", 1)]);
    let a = attribute(&r, 0.05, &w.pods, &objs, &gpu_nodes).unwrap();
    assert_eq!(a.fleet.busy, 1);
    assert_eq!(a.per_workload[&0].busy, 1);
    assert!((a.per_workload[&0].equivalents - 0.4).abs() < 1e-9);
    assert!(a.unattributed.is_empty());
}

#[test]
fn clusters_are_chosen_by_node_names_or_not_at_all() {
    let r = read(vec![
        gpu(
            id("a-0", "0", Some("prod-a"), None),
            vec![holder(None, 0.9)],
        ),
        gpu(
            id("b-0", "0", Some("prod-b"), None),
            vec![holder(None, 0.9)],
        ),
    ]);
    let ours: BTreeSet<&str> = ["a-0"].into();
    let Scope {
        keep,
        statement: said,
    } = scope(&r, &ours).unwrap();
    assert_eq!(keep.unwrap()["cluster"], "prod-a");
    let said = said.unwrap();
    assert!(said.starts_with(r#"cluster="prod-a" (detected"#), "{said}");
    // Neither, or both: unknown, with what to set.
    for nodes in [BTreeSet::from(["x"]), BTreeSet::from(["a-0", "b-0"])] {
        let e = scope(&r, &nodes).unwrap_err();
        assert!(e.contains("metrics.cluster_selector"), "{e}");
        assert!(e.contains(r#"cluster="prod-b""#), "{e}");
    }
    // One cluster: kept whole, and named.
    let one = read(vec![gpu(id("a-0", "0", Some("prod-a"), None), vec![])]);
    let Scope {
        keep,
        statement: said,
    } = scope(&one, &BTreeSet::new()).unwrap();
    assert_eq!(keep, None);
    assert_eq!(
        said.as_deref(),
        Some(r#"one cluster in the DCGM series (cluster="prod-a")"#)
    );
    // A selector is stated.
    let sel = DcgmRead {
        selector: Some(r#"cluster="prod-a""#.into()),
        ..one
    };
    let said = scope(&sel, &BTreeSet::new()).unwrap().statement;
    assert!(
        said.unwrap()
            .starts_with(r#"metrics.cluster_selector {cluster="prod-a"}"#)
    );
}

#[test]
fn unknown_gpus_and_dark_nodes_are_unknown_not_idle() {
    let objs = read_str(PODS, "t").unwrap();
    let w = owners::build(&objs).unwrap();
    let mut r = read(vec![gpu(
        id("n1", "0", None, None),
        vec![holder(Some("a"), 0.9)],
    )]);
    r.unsound.push(UnsoundGpu {
        id: id("n1", "1", None, None),
        holders: vec![holder(Some("a"), 0.0)],
        reason: "NaN".into(),
    });
    r.warnings.push("store east timed out".into());
    let gpu_nodes = nodes(&[("n1", 2), ("n2", 8)]);
    let a = attribute(&r, 0.05, &w.pods, &objs, &gpu_nodes).unwrap();
    assert_eq!(a.fleet.busy, 1);
    let dark: Vec<(&str, u64)> = a
        .no_metrics
        .iter()
        .map(|n| (n.node.as_str(), n.gpus))
        .collect();
    assert_eq!(dark, [("n2", 8)]);
    // Pod a sits on the unknown GPU, pod b on the dark node.
    assert_eq!(a.unknown_workloads.len(), 2);
    assert_eq!(a.unknown_gpus.len(), 1);
    let partial = a.partial.join(" | ");
    assert!(partial.contains("1 GPU read NaN"), "{partial}");
    assert!(
        partial.contains("1 GPU node has no DCGM series in the window (n2): 8 GPUs unknown"),
        "{partial}"
    );
    assert!(partial.contains("store east timed out"), "{partial}");
    // Nothing readable at all: unknown, with the reasons.
    let none = DcgmRead { gpus: vec![], ..r };
    let e = attribute(&none, 0.05, &w.pods, &objs, &gpu_nodes).unwrap_err();
    assert!(e.starts_with("no readable DCGM activity"), "{e}");
}
