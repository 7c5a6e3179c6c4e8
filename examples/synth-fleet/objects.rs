//! Building the objects of the cluster itself from the plan: namespaces, nodes, pod templates
//! and pods.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::catalog::*;
use crate::plan::*;
use crate::rng::*;

pub(crate) struct Gen {
    pub(crate) rng: Rng,
    pub(crate) rv: u64,
    pub(crate) pod_ips: u32,
    pub(crate) svc_ips: u32,
}

impl Gen {
    pub(crate) fn rv(&mut self) -> String {
        self.rv += 1 + self.rng.below(40) as u64;
        self.rv.to_string()
    }
}

pub(crate) fn namespace_obj(g: &mut Gen, ns: &Namespace) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "creationTimestamp": ts(NOW - 300 * DAY + g.rng.range(0, 100 * DAY)),
            "labels": {
                "kubernetes.io/metadata.name": ns.name,
                "product-line": ns.product_line,
                "tenant": ns.tenant,
            },
            "name": ns.name,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

pub(crate) fn node_obj(g: &mut Gen, n: &Node) -> Value {
    let (product, instance, gpu_mem, cpu, mem_ki, _) = GPU_PRODUCTS[n.product];
    let cpu_only = n.state == NodeState::CpuOnly;
    let (instance, cpu, mem_ki) = if cpu_only {
        ("m7i.16xlarge", 64, 263_112_704u64)
    } else {
        (instance, cpu, mem_ki)
    };
    let mut labels = json!({
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": instance,
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": if cpu_only { "system" } else { "gpu" },
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": n.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": "us-west-2",
        "topology.kubernetes.io/zone": n.zone,
    });
    let mut taints = Vec::new();
    let mut capacity = json!({
        "cpu": cpu.to_string(),
        "ephemeral-storage": "3905109820Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{mem_ki}Ki"),
        "pods": "250",
    });
    let mut allocatable = json!({
        "cpu": format!("{}m", cpu * 1000 - 550),
        "ephemeral-storage": "3598855137853",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{}Ki", mem_ki - 7_602_176),
        "pods": "250",
    });
    if !cpu_only {
        labels["nvidia.com/gpu.count"] = json!("8");
        labels["nvidia.com/gpu.product"] = json!(product);
        labels["nvidia.com/gpu.memory"] = json!(gpu_mem.to_string());
        labels["nvidia.com/gpu.present"] = json!("true");
        labels["nvidia.com/cuda.driver.major"] = json!("570");
        taints.push(json!({"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}));
        capacity["nvidia.com/gpu"] = json!("8");
        allocatable["nvidia.com/gpu"] = json!(n.alloc.to_string());
        capacity["vpc.amazonaws.com/efa"] = json!("32");
        allocatable["vpc.amazonaws.com/efa"] = json!("32");
    }
    let t = ts(n.created);
    let recent = ts(NOW - g.rng.range(60, 3600));
    let mut ready = json!({
        "lastHeartbeatTime": recent,
        "lastTransitionTime": t,
        "message": "kubelet is posting ready status",
        "reason": "KubeletReady",
        "status": "True",
        "type": "Ready",
    });
    let mut spec = json!({
        "providerID": format!("aws:///{}/i-0{}", n.zone, g.rng.hex(16)),
    });
    match n.state {
        NodeState::Cordoned => {
            spec["unschedulable"] = json!(true);
            taints.push(json!({"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": recent}));
        }
        NodeState::Tainted => {
            taints.push(json!({"effect": "NoExecute", "key": "maintenance.example.com/drain", "value": "gpu-xid-79", "timeAdded": recent}));
        }
        NodeState::NotReady => {
            ready = json!({
                "lastHeartbeatTime": ts(NOW - 3 * 3600),
                "lastTransitionTime": ts(NOW - 3 * 3600 + 40),
                "message": "Kubelet stopped posting node status.",
                "reason": "NodeStatusUnknown",
                "status": "Unknown",
                "type": "Ready",
            });
            taints.push(json!({"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": recent}));
            taints.push(json!({"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": recent}));
        }
        _ => {}
    }
    if !taints.is_empty() {
        spec["taints"] = Value::Array(taints);
    }
    let pressure = |ty: &str, reason: &str, msg: &str| {
        json!({
            "lastHeartbeatTime": recent,
            "lastTransitionTime": t,
            "message": msg,
            "reason": reason,
            "status": "False",
            "type": ty,
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": n.ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": t,
            "labels": labels,
            "name": n.name,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": n.ip, "type": "InternalIP"},
                {"address": n.name, "type": "InternalDNS"},
                {"address": n.name, "type": "Hostname"},
            ],
            "allocatable": allocatable,
            "capacity": capacity,
            "conditions": [
                pressure("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                pressure("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                pressure("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ready,
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": g.rng.uid(),
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.1.134-150.224.amzn2023.x86_64",
                "kubeProxyVersion": "",
                "kubeletVersion": "v1.33.1-eks-1234567",
                "machineID": g.rng.hex(32),
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.7.20250527",
                "systemUUID": g.rng.uid(),
            },
        },
    })
}

/// Labels shared by a workload's template and pods (without per-pod labels).
pub(crate) fn template_labels(p: &Plan, w: &Workload) -> Value {
    let ns = &p.namespaces[w.ns];
    let mut l = json!({
        "app.kubernetes.io/component": w.component,
        "app.kubernetes.io/instance": w.name,
        "app.kubernetes.io/name": w.app,
        "app.kubernetes.io/part-of": ns.product_line,
        "team": ns.tenant,
    });
    match w.kind {
        Kind::Job => {
            l["batch.kubernetes.io/controller-uid"] = json!(w.uid);
            l["batch.kubernetes.io/job-name"] = json!(w.name);
            l["controller-uid"] = json!(w.uid);
            l["job-name"] = json!(w.name);
        }
        Kind::Deployment | Kind::StatefulSet | Kind::BarePod => {}
    }
    if let Some(d) = &w.dynamo {
        let graph = &p.graphs[d.graph].name;
        l["nvidia.com/dynamo-component"] = json!(d.service);
        l["nvidia.com/dynamo-component-type"] = json!(d.component_type);
        l["nvidia.com/dynamo-graph-deployment-name"] = json!(graph);
        l["nvidia.com/dynamo-namespace"] = json!(format!("{}-{graph}", ns.name));
        l["nvidia.com/selector"] = json!(w.name);
        if let Some(s) = d.sub_type {
            l["nvidia.com/dynamo-sub-component-type"] = json!(s);
        }
    }
    l
}

pub(crate) fn selector_labels(w: &Workload) -> Value {
    match w.kind {
        Kind::Job => json!({"batch.kubernetes.io/controller-uid": w.uid}),
        _ if w.dynamo.is_some() => json!({"nvidia.com/selector": w.name}),
        _ => json!({"app.kubernetes.io/instance": w.name}),
    }
}

pub(crate) fn resources(w: &Workload) -> Value {
    let mut requests = json!({
        "cpu": w.cpu.to_string(),
        "memory": format!("{}Gi", w.mem_gi),
    });
    let mut limits = json!({"memory": format!("{}Gi", w.mem_gi)});
    if w.gpus > 0 {
        limits["cpu"] = json!(w.cpu.to_string());
        limits["nvidia.com/gpu"] = json!(w.gpus.to_string());
        requests["nvidia.com/gpu"] = json!(w.gpus.to_string());
    }
    json!({"limits": limits, "requests": requests})
}

/// The pod template spec shared by a controller and its pods.
pub(crate) fn template_spec(p: &Plan, w: &Workload) -> Value {
    let ns = &p.namespaces[w.ns];
    let env = json!([
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
        {"name": "HF_HOME", "value": "/models/hf"},
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel-collector.observability.svc:4317"},
        {"name": "NCCL_DEBUG", "value": "WARN"},
    ]);
    let mut container = json!({
        "args": w.args,
        "env": env,
        "image": w.image,
        "imagePullPolicy": "IfNotPresent",
        "name": "main",
        "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
        "resources": resources(w),
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {"mountPath": "/dev/shm", "name": "dshm"},
            {"mountPath": "/models", "name": "models", "readOnly": true},
        ],
    });
    if !w.command.is_empty() {
        container["command"] = json!(w.command);
    }
    json!({
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": if w.kind == Kind::Job { "Never" } else { "Always" },
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": format!("{}-workloads", ns.tenant),
        "serviceAccountName": format!("{}-workloads", ns.tenant),
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
        ],
        "volumes": [
            {"emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}, "name": "dshm"},
            {"name": "models", "persistentVolumeClaim": {"claimName": format!("{}-models", ns.tenant), "readOnly": true}},
        ],
    })
}

pub(crate) fn template(p: &Plan, w: &Workload, extra_labels: Value) -> Value {
    json!({
        "metadata": {
            "annotations": {"prometheus.io/port": "9090", "prometheus.io/scrape": "true"},
            "labels": merged(&template_labels(p, w), extra_labels),
        },
        "spec": template_spec(p, w),
    })
}

pub(crate) fn managed_fields(
    manager: &str,
    time: &str,
    labels: &Value,
    owner_uid: Option<&str>,
) -> Value {
    let mut f_labels = json!({".": {}});
    if let Some(l) = labels.as_object() {
        for k in l.keys() {
            f_labels[format!("f:{k}")] = json!({});
        }
    }
    let mut f_meta = json!({"f:labels": f_labels});
    if let Some(uid) = owner_uid {
        f_meta["f:generateName"] = json!({});
        f_meta["f:ownerReferences"] = json!({".": {}, (format!("k:{{\"uid\":\"{uid}\"}}")): {}});
    }
    json!([{
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": f_meta,
            "f:spec": {
                "f:containers": {
                    "k:{\"name\":\"main\"}": {".": {}, "f:args": {}, "f:env": {}, "f:image": {}, "f:name": {}, "f:resources": {}},
                },
                "f:tolerations": {},
            },
        },
        "manager": manager,
        "operation": "Update",
        "time": time,
    }])
}

pub(crate) fn pod_obj(
    g: &mut Gen,
    p: &Plan,
    w: &Workload,
    i: usize,
    used: &mut HashSet<String>,
) -> Value {
    let (node, phase) = w.pods[i];
    let ns = &p.namespaces[w.ns].name;
    let mut unique = |g: &mut Gen, n: usize| loop {
        let s = g.rng.suffix(n);
        if used.insert(s.clone()) {
            break s;
        }
    };
    let (name, generate, owner_ref, extra) = match w.kind {
        Kind::Deployment => {
            let rs = format!("{}-{}", w.name, w.hash);
            let sfx = unique(g, 5);
            (
                format!("{rs}-{sfx}"),
                Some(format!("{rs}-")),
                Some(owner("apps/v1", "ReplicaSet", &rs, &w.rs_uid)),
                json!({"pod-template-hash": w.hash}),
            )
        }
        Kind::StatefulSet => (
            format!("{}-{i}", w.name),
            Some(format!("{}-", w.name)),
            Some(owner("apps/v1", "StatefulSet", &w.name, &w.uid)),
            json!({
                "apps.kubernetes.io/pod-index": i.to_string(),
                "controller-revision-hash": format!("{}-{}", w.name, w.hash),
                "statefulset.kubernetes.io/pod-name": format!("{}-{i}", w.name),
            }),
        ),
        Kind::Job => {
            let sfx = unique(g, 5);
            (
                format!("{}-{sfx}", w.name),
                Some(format!("{}-", w.name)),
                Some(owner("batch/v1", "Job", &w.name, &w.uid)),
                json!({}),
            )
        }
        Kind::BarePod => (w.name.clone(), None, None, json!({})),
    };
    let labels = merged(&template_labels(p, w), extra);
    let created = w.created + g.rng.range(0, (NOW - w.created) / 2);
    let started = created + g.rng.range(2, 30);
    let owner_uid = owner_ref
        .as_ref()
        .map(|o| o[0]["uid"].as_str().unwrap_or("").to_string());
    let mut meta = json!({
        "annotations": {"prometheus.io/port": "9090", "prometheus.io/scrape": "true"},
        "creationTimestamp": ts(created),
        "labels": labels,
        "managedFields": managed_fields("kube-controller-manager", &ts(created), &labels, owner_uid.as_deref()),
        "name": name,
        "namespace": ns,
        "resourceVersion": g.rv(),
        "uid": g.rng.uid(),
    });
    if let Some(gn) = generate {
        meta["generateName"] = json!(gn);
    }
    if let Some(o) = owner_ref {
        meta["ownerReferences"] = o;
    }
    let mut spec = template_spec(p, w);
    spec["tolerations"].as_array_mut().expect("tolerations").extend([
        json!({"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}),
        json!({"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}),
    ]);
    spec["enableServiceLinks"] = json!(true);
    spec["preemptionPolicy"] = json!("PreemptLowerPriority");
    spec["priority"] = json!(0);
    let qos = if w.gpus > 0 {
        "Guaranteed"
    } else {
        "Burstable"
    };
    let status = match node {
        None => json!({
            "conditions": [{
                "lastProbeTime": null,
                "lastTransitionTime": ts(created),
                "message": format!("0/{} nodes are available: {} Insufficient nvidia.com/gpu. preemption: 0/{} nodes are available: {} No preemption victims found for incoming pod.", p.nodes.len(), p.nodes.len(), p.nodes.len(), p.nodes.len()),
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }],
            "phase": "Pending",
            "qosClass": qos,
        }),
        Some(j) => {
            let n = &p.nodes[j];
            spec["nodeName"] = json!(n.name);
            g.pod_ips += 1;
            let ip = ipv4(0x6440_0000 + g.pod_ips);
            let (ready, cond_reason, state, phase_s) = match phase {
                Phase::Running => (
                    true,
                    None,
                    json!({"running": {"startedAt": ts(started + 5)}}),
                    "Running",
                ),
                Phase::Succeeded => (
                    false,
                    Some("PodCompleted"),
                    json!({"terminated": {
                    "containerID": format!("containerd://{}", g.rng.hex(64)),
                    "exitCode": 0, "finishedAt": ts(started + 3600), "reason": "Completed", "startedAt": ts(started + 5)}}),
                    "Succeeded",
                ),
                _ => (
                    false,
                    Some("PodFailed"),
                    json!({"terminated": {
                    "containerID": format!("containerd://{}", g.rng.hex(64)),
                    "exitCode": 1, "finishedAt": ts(started + 600), "reason": "Error", "startedAt": ts(started + 5)}}),
                    "Failed",
                ),
            };
            let cond = |ty: &str, ok: bool| {
                let mut c = json!({
                    "lastProbeTime": null,
                    "lastTransitionTime": ts(started + 20),
                    "status": if ok { "True" } else { "False" },
                    "type": ty,
                });
                if let (false, Some(r)) = (ok, cond_reason) {
                    c["reason"] = json!(r);
                }
                c
            };
            json!({
                "conditions": [
                    cond("Initialized", true),
                    cond("Ready", ready),
                    cond("ContainersReady", ready),
                    cond("PodScheduled", true),
                ],
                "containerStatuses": [{
                    "containerID": format!("containerd://{}", g.rng.hex(64)),
                    "image": w.image,
                    "imageID": format!("{}@sha256:{}", w.image.split(':').next().unwrap_or(w.image), g.rng.hex(64)),
                    "lastState": {},
                    "name": "main",
                    "ready": ready,
                    "restartCount": if g.rng.chance(0.1) { g.rng.below(5) } else { 0 },
                    "started": ready,
                    "state": state,
                }],
                "hostIP": n.ip,
                "hostIPs": [{"ip": n.ip}],
                "phase": phase_s,
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "qosClass": qos,
                "startTime": ts(started),
            })
        }
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": status,
    })
}
