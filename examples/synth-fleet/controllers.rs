//! Building the controllers in front of the pods: Deployments and their ReplicaSets,
//! StatefulSets, Jobs, Services, Ingresses, and Dynamo graphs with their component deployments.

use serde_json::{Value, json};

use crate::catalog::*;
use crate::objects::*;
use crate::plan::*;
use crate::rng::*;

pub(crate) fn counts(w: &Workload) -> (usize, usize) {
    let ready = w
        .pods
        .iter()
        .filter(|(_, ph)| *ph == Phase::Running)
        .count();
    (w.pods.len(), ready)
}

pub(crate) fn controller_meta(
    g: &mut Gen,
    p: &Plan,
    w: &Workload,
    name: &str,
    labels: Value,
    owner_ref: Option<Value>,
) -> Value {
    let mut m = json!({
        "annotations": {"meta.helm.sh/release-name": w.name, "meta.helm.sh/release-namespace": p.namespaces[w.ns].name},
        "creationTimestamp": ts(w.created),
        "generation": 1 + g.rng.below(6),
        "labels": labels,
        "name": name,
        "namespace": p.namespaces[w.ns].name,
        "resourceVersion": g.rv(),
        "uid": "",
    });
    if let Some(o) = owner_ref {
        m["ownerReferences"] = o;
    }
    m
}

pub(crate) fn deployment_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let (replicas, ready) = counts(w);
    let owner_ref = w
        .dynamo
        .as_ref()
        .map(|d| owner(DYNAMO_API, "DynamoComponentDeployment", &w.name, &d.dcd_uid));
    let mut meta = controller_meta(g, p, w, &w.name, template_labels(p, w), owner_ref);
    meta["uid"] = json!(w.uid);
    meta["annotations"]["deployment.kubernetes.io/revision"] =
        json!(if w.old_rs.is_some() { "2" } else { "1" });
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "progressDeadlineSeconds": 600,
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector_labels(w)},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
            "template": template(p, w, json!({})),
        },
        "status": {
            "availableReplicas": ready,
            "conditions": [
                {"lastTransitionTime": ts(w.created + 60), "lastUpdateTime": ts(w.created + 60), "message": format!("ReplicaSet \"{}-{}\" has successfully progressed.", w.name, w.hash), "reason": "NewReplicaSetAvailable", "status": "True", "type": "Progressing"},
                {"lastTransitionTime": ts(w.created + 60), "lastUpdateTime": ts(w.created + 60), "message": "Deployment has minimum availability.", "reason": "MinimumReplicasAvailable", "status": if ready * 4 >= replicas * 3 { "True" } else { "False" }, "type": "Available"},
            ],
            "observedGeneration": 1,
            "readyReplicas": ready,
            "replicas": replicas,
            "updatedReplicas": replicas,
        },
    })
}

pub(crate) fn replicaset_obj(
    g: &mut Gen,
    p: &Plan,
    w: &Workload,
    hash: &str,
    uid: &str,
    live: bool,
) -> Value {
    let (replicas, ready) = if live { counts(w) } else { (0, 0) };
    let name = format!("{}-{hash}", w.name);
    let extra = json!({"pod-template-hash": hash});
    let labels = merged(&template_labels(p, w), extra.clone());
    let mut meta = controller_meta(
        g,
        p,
        w,
        &name,
        labels,
        Some(owner("apps/v1", "Deployment", &w.name, &w.uid)),
    );
    meta["uid"] = json!(uid);
    meta["annotations"]["deployment.kubernetes.io/desired-replicas"] =
        json!(counts(w).0.to_string());
    meta["annotations"]["deployment.kubernetes.io/revision"] =
        json!(if live && w.old_rs.is_some() { "2" } else { "1" });
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": merged(&selector_labels(w), extra.clone())},
            "template": template(p, w, extra),
        },
        "status": {
            "availableReplicas": ready,
            "fullyLabeledReplicas": replicas,
            "observedGeneration": 1,
            "readyReplicas": ready,
            "replicas": replicas,
        },
    })
}

pub(crate) fn statefulset_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let (replicas, ready) = counts(w);
    let mut meta = controller_meta(g, p, w, &w.name, template_labels(p, w), None);
    meta["uid"] = json!(w.uid);
    let rev = format!("{}-{}", w.name, w.hash);
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "podManagementPolicy": "Parallel",
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector_labels(w)},
            "serviceName": w.name,
            "template": template(p, w, json!({})),
            "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
        },
        "status": {
            "availableReplicas": ready,
            "collisionCount": 0,
            "currentReplicas": replicas,
            "currentRevision": rev,
            "observedGeneration": 1,
            "readyReplicas": ready,
            "replicas": replicas,
            "updateRevision": rev,
            "updatedReplicas": replicas,
        },
    })
}

pub(crate) fn job_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let n = w.pods.len();
    let count = |ph: Phase| w.pods.iter().filter(|(_, x)| *x == ph).count();
    let (succeeded, failed) = (count(Phase::Succeeded), count(Phase::Failed));
    let active = n - succeeded - failed;
    let mut meta = controller_meta(g, p, w, &w.name, template_labels(p, w), None);
    meta["uid"] = json!(w.uid);
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "completions": n,
            "manualSelector": false,
            "parallelism": n,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": selector_labels(w)},
            "suspend": false,
            "template": template(p, w, json!({})),
        },
        "status": {
            "active": active,
            "failed": failed,
            "ready": count(Phase::Running),
            "startTime": ts(w.created + 5),
            "succeeded": succeeded,
            "terminating": 0,
            "uncountedTerminatedPods": {},
        },
    })
}

pub(crate) fn service_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let ns = &p.namespaces[w.ns].name;
    let selector = match &w.dynamo {
        Some(d) => json!({
            "nvidia.com/dynamo-component": d.service,
            "nvidia.com/dynamo-graph-deployment-name": p.graphs[d.graph].name,
        }),
        None => selector_labels(w),
    };
    g.svc_ips += 1;
    let ip = if w.svc == Svc::Headless {
        "None".to_string()
    } else {
        ipv4(0xAC14_0000 + g.svc_ips)
    };
    let mut port = json!({"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"});
    let mut spec = json!({
        "clusterIP": ip,
        "clusterIPs": [ip],
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "selector": selector,
        "sessionAffinity": "None",
        "type": "ClusterIP",
    });
    let mut annotations =
        json!({"meta.helm.sh/release-name": w.name, "meta.helm.sh/release-namespace": ns});
    let mut status = json!({"loadBalancer": {}});
    if w.svc == Svc::LoadBalancer {
        spec["type"] = json!("LoadBalancer");
        spec["allocateLoadBalancerNodePorts"] = json!(true);
        spec["externalTrafficPolicy"] = json!("Cluster");
        port["nodePort"] = json!(30000 + g.rng.below(2767));
        annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] =
            json!(if g.rng.chance(0.5) {
                "internet-facing"
            } else {
                "internal"
            });
        annotations["service.beta.kubernetes.io/aws-load-balancer-type"] = json!("external");
        status = json!({"loadBalancer": {"ingress": [{"hostname": format!("k8s-{}-{}.elb.us-west-2.amazonaws.com", g.rng.hex(10), g.rng.hex(10))}]}});
    }
    spec["ports"] = json!([port]);
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "annotations": annotations,
            "creationTimestamp": ts(w.created),
            "labels": template_labels(p, w),
            "name": w.name,
            "namespace": ns,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": spec,
        "status": status,
    })
}

pub(crate) fn ingress_obj(g: &mut Gen, p: &Plan, w: &Workload, public: bool) -> Value {
    let ns = &p.namespaces[w.ns].name;
    let scheme = if public {
        "internet-facing"
    } else {
        "internal"
    };
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "annotations": {
                "alb.ingress.kubernetes.io/group.name": ns,
                "alb.ingress.kubernetes.io/scheme": scheme,
                "alb.ingress.kubernetes.io/target-type": "ip",
            },
            "creationTimestamp": ts(w.created),
            "generation": 1,
            "labels": template_labels(p, w),
            "name": w.name,
            "namespace": ns,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": {
            "ingressClassName": "alb",
            "rules": [{
                "host": format!("{}.{ns}.example.com", w.name),
                "http": {"paths": [{
                    "backend": {"service": {"name": w.name, "port": {"name": "http"}}},
                    "path": "/",
                    "pathType": "Prefix",
                }]},
            }],
        },
        "status": {"loadBalancer": {"ingress": [{"hostname": format!("k8s-{}-{}.{}.elb.amazonaws.com", g.rng.hex(8), g.rng.hex(10), if public { "us-west-2" } else { "internal.us-west-2" })}]}},
    })
}

/// The DGD / DCD `resources` block: GPUs as `gpu` in limits.
pub(crate) fn dynamo_resources(w: &Workload) -> Value {
    let mut limits = json!({"cpu": w.cpu.to_string(), "memory": format!("{}Gi", w.mem_gi)});
    if w.gpus > 0 {
        limits["gpu"] = json!(w.gpus.to_string());
    }
    json!({"limits": limits, "requests": {"cpu": w.cpu.to_string(), "memory": format!("{}Gi", w.mem_gi)}})
}

pub(crate) fn dynamo_service_spec(w: &Workload, d: &DynamoPart) -> Value {
    let mut s = json!({
        "componentType": d.component_type,
        "extraPodSpec": {"mainContainer": {"args": w.args, "command": w.command, "image": w.image}},
        "replicas": w.pods.len(),
        "resources": dynamo_resources(w),
    });
    if let Some(sub) = d.sub_type {
        s["subComponentType"] = json!(sub);
    }
    s
}

pub(crate) fn graph_obj(g: &mut Gen, p: &Plan, gr: &Graph) -> Value {
    let ns = &p.namespaces[gr.ns].name;
    let mut services = json!({});
    let mut status_services = json!({});
    for &i in &gr.parts {
        let w = &p.workloads[i];
        let d = w.dynamo.as_ref().expect("dynamo part");
        services[d.service] = dynamo_service_spec(w, d);
        let (replicas, ready) = counts(w);
        status_services[d.service] = json!({"componentKind": "Deployment", "gpusPerReplica": w.gpus, "readyReplicas": ready, "replicas": replicas});
    }
    json!({
        "apiVersion": DYNAMO_API,
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "annotations": {"argocd.argoproj.io/tracking-id": format!("{ns}:nvidia.com/DynamoGraphDeployment:{ns}/{}", gr.name)},
            "creationTimestamp": ts(gr.created),
            "generation": 1 + g.rng.below(5),
            "labels": {"app.kubernetes.io/instance": ns},
            "name": gr.name,
            "namespace": ns,
            "resourceVersion": g.rv(),
            "uid": gr.uid,
        },
        "spec": {
            "backendFramework": "vllm",
            "envs": [{"name": "HF_HOME", "value": "/models/hf"}, {"name": "MODEL", "value": gr.model}],
            "services": services,
        },
        "status": {
            "conditions": [{"lastTransitionTime": ts(gr.created + 600), "message": "All resources are ready", "reason": "all_resources_are_ready", "status": "True", "type": "Ready"}],
            "services": status_services,
            "state": "successful",
        },
    })
}

pub(crate) fn dcd_obj(g: &mut Gen, p: &Plan, w: &Workload, d: &DynamoPart) -> Value {
    let gr = &p.graphs[d.graph];
    let ns = &p.namespaces[w.ns].name;
    let dns = format!("{ns}-{}", gr.name);
    let mut labels = json!({
        "nvidia.com/dynamo-component": d.service,
        "nvidia.com/dynamo-component-type": d.component_type,
        "nvidia.com/dynamo-graph-deployment-name": gr.name,
        "nvidia.com/dynamo-namespace": dns,
    });
    let mut spec = dynamo_service_spec(w, d);
    spec["backendFramework"] = json!("vllm");
    spec["dynamoNamespace"] = json!(dns);
    spec["serviceName"] = json!(d.service);
    if let Some(sub) = d.sub_type {
        labels["nvidia.com/dynamo-sub-component-type"] = json!(sub);
    }
    json!({
        "apiVersion": DYNAMO_API,
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "creationTimestamp": ts(gr.created),
            "generation": 1 + g.rng.below(3),
            "labels": labels,
            "name": w.name,
            "namespace": ns,
            "ownerReferences": owner(DYNAMO_API, "DynamoGraphDeployment", &gr.name, &gr.uid),
            "resourceVersion": g.rv(),
            "uid": d.dcd_uid,
        },
        "spec": spec,
        "status": {
            "conditions": [{"lastTransitionTime": ts(gr.created + 600), "message": "component is ready", "reason": "ComponentReady", "status": "True", "type": "Available"}],
            "podSelector": {"nvidia.com/selector": w.name},
        },
    })
}
