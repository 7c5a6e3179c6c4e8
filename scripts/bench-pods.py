#!/usr/bin/env python3
"""Writes a fleet dump shaped as `kubectl get nodes,pods -A -o json` prints it, for the inventory bench.

Independent of examples/synth-fleet (a second generator, so the bench does not only measure the
shapes one generator writes): lean, realistic pods (~1.7 KB of compact JSON each: a vLLM-style
container with env, ports, probes, volume mounts; tolerations, volumes, status conditions and
container statuses), one node per 20 pods (with the image list a kubelet reports), and every
object's keys in the order asked for:

  kubectl     keys sorted, as kubectl's JSON printer writes them (apiVersion, items, kind, metadata)
  kind-first  kind, apiVersion, metadata first, as the API server writes an object
  kind-last   kind and apiVersion after everything else, in every object and the list

  scripts/bench-pods.py --pods N --order kubectl|kind-first|kind-last [--indent] [--managed-fields]
      [--queues Q --workloads W [--admission-only]] OUT

With --queues and --workloads, the fleet is admission-managed too (issue 45's scale): two GPU
ResourceFlavors, a Kueue Cohort per 20 ClusterQueues, Q ClusterQueues (H100 then A100 quota, status
usage), a LocalQueue per queue, and W Workloads as Kueue writes them (a Job owner, a pod set whose
template is a trainer container, conditions, and for four in five an admission with its resource
usage; the rest wait for quota). With --admission-only, only those objects are written, separated
by commas: items to splice into another fleet's List (scripts/bench.sh adds them to synth-fleet's).
"""
import argparse
import json
import random


def pod(i, rng, nodes, managed):
    ns = f"team-{i % 37:02d}"
    app = f"llm-{i % 211:03d}"
    rs_hash = f"{(i % 211) * 7919 % 99991:05x}"[:5] + "b7c9"
    name = f"{app}-{rs_hash}-{rng.randrange(36**5):05x}"
    gpus = rng.choice([1, 1, 1, 2, 4, 8])
    node = nodes[i % len(nodes)]
    uid = "%08x-%04x-%04x-%04x-%012x" % tuple(rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
    meta = {
        "creationTimestamp": "2026-11-%02dT%02d:%02d:00Z" % (1 + i % 28, i % 24, i % 60),
        "generateName": f"{app}-{rs_hash}-",
        "labels": {"app": app, "pod-template-hash": rs_hash, "team": ns},
        "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8000"},
        "name": name,
        "namespace": ns,
        "ownerReferences": [{
            "apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
            "kind": "ReplicaSet", "name": f"{app}-{rs_hash}", "uid": uid[::-1],
        }],
        "resourceVersion": str(1000000 + i * 17),
        "uid": uid,
    }
    if managed:
        meta["managedFields"] = [{
            "apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager",
            "operation": "Update", "time": meta["creationTimestamp"],
            "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}},
                         "f:spec": {"f:containers": {f"k:{{\"name\":\"vllm\"}}": {".": {}, "f:image": {}}}}},
        }]
    phase = "Running" if i % 50 else "Pending"
    spec = {
        "containers": [{
            "args": ["--model", f"/models/{app}", "--tensor-parallel-size", str(gpus)],
            "env": [{"name": "HF_HOME", "value": "/cache"}, {"name": "VLLM_PORT", "value": "8000"}],
            "image": "vllm/vllm-openai:v0.6.3",
            "imagePullPolicy": "IfNotPresent",
            "name": "vllm",
            "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
            "readinessProbe": {"httpGet": {"path": "/health", "port": 8000, "scheme": "HTTP"}, "periodSeconds": 10},
            "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                          "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": str(gpus)}},
            "terminationMessagePath": "/dev/termination-log",
            "volumeMounts": [{"mountPath": "/cache", "name": "cache"}],
        }],
        "dnsPolicy": "ClusterFirst",
        "nodeName": node if phase == "Running" else None,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "tolerations": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}],
        "volumes": [{"emptyDir": {}, "name": "cache"}],
    }
    if spec["nodeName"] is None:
        del spec["nodeName"]
    status = {
        "conditions": [{"lastTransitionTime": meta["creationTimestamp"], "status": "True", "type": t}
                       for t in ("Initialized", "Ready", "PodScheduled")],
        "phase": phase,
        "qosClass": "Burstable",
    }
    if phase == "Running":
        status.update({
            "containerStatuses": [{"image": "vllm/vllm-openai:v0.6.3", "name": "vllm", "ready": True,
                                   "restartCount": 0, "started": True,
                                   "state": {"running": {"startedAt": meta["creationTimestamp"]}}}],
            "hostIP": "10.0.%d.%d" % (i % 250, i % 200), "podIP": "10.1.%d.%d" % (i % 250, i % 230),
        })
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def node(i):
    name = f"gpu-node-{i:05d}"
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "creationTimestamp": "2026-10-01T00:00:00Z",
            "labels": {"kubernetes.io/hostname": name, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                       "node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/zone": f"us-west-2{'abc'[i % 3]}"},
            "name": name, "resourceVersion": str(5000 + i), "uid": f"node-{i:032d}",
        },
        "spec": {"providerID": f"aws:///us-west-2a/i-{i:017x}",
                 "taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}]},
        "status": {
            "allocatable": {"cpu": "191450m", "memory": "2002931176Ki", "nvidia.com/gpu": "8", "pods": "100"},
            "capacity": {"cpu": "192", "memory": "2097152000Ki", "nvidia.com/gpu": "8", "pods": "100"},
            "conditions": [{"status": "False", "type": t} for t in ("MemoryPressure", "DiskPressure", "PIDPressure")]
                          + [{"status": "True", "type": "Ready"}],
            "images": [{"names": [f"registry.example.com/img-{j}@sha256:{j:064x}"], "sizeBytes": 10**9 + j} for j in range(6)],
            "nodeInfo": {"kubeletVersion": "v1.31.2", "containerRuntimeVersion": "containerd://1.7.22"},
        },
    }


def queue_objects(queues, rng):
    out = []
    for f, model in (("h100", "NVIDIA-H100-80GB-HBM3"), ("a100", "NVIDIA-A100-SXM4-80GB")):
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                    "metadata": {"name": f, "uid": f"rf-{f}", "resourceVersion": "100"},
                    "spec": {"nodeLabels": {"nvidia.com/gpu.product": model}}})
    for c in range(max(1, queues // 20)):
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
                    "metadata": {"name": f"cohort-{c:03d}", "uid": f"co-{c}", "resourceVersion": "101"}, "spec": {}})
    for q in range(queues):
        used = rng.choice([8, 16, 24, 32])
        out.append({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": f"cq-{q:05d}", "uid": f"cq-{q}", "resourceVersion": str(200 + q),
                         "creationTimestamp": "2026-10-01T00:00:00Z", "finalizers": ["kueue.x-k8s.io/resource-in-use"]},
            "spec": {
                "cohortName": f"cohort-{q // 20:03d}", "namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority",
                               "borrowWithinCohort": {"policy": "Never"}},
                "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
                "stopPolicy": "None",
                "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [
                    {"name": f, "resources": [{"name": "cpu", "nominalQuota": "512"},
                                              {"name": "memory", "nominalQuota": "4Ti"},
                                              {"name": "nvidia.com/gpu", "nominalQuota": n, "borrowingLimit": b}]}
                    for f, n, b in (("h100", 32, 16), ("a100", 16, 0))]}],
            },
            "status": {
                "admittedWorkloads": 4, "pendingWorkloads": 1, "reservingWorkloads": 4,
                "conditions": [{"type": "Active", "status": "True", "reason": "Ready", "message": "Can admit new workloads",
                                "lastTransitionTime": "2026-10-01T00:00:05Z", "observedGeneration": 1}],
                "flavorsReservation": [{"name": "h100", "resources": [{"name": "cpu", "total": "64", "borrowed": "0"},
                                                                      {"name": "nvidia.com/gpu", "total": str(used), "borrowed": str(max(0, used - 32))}]}],
                "flavorsUsage": [{"name": "h100", "resources": [{"name": "cpu", "total": "64", "borrowed": "0"},
                                                                {"name": "nvidia.com/gpu", "total": str(used), "borrowed": str(max(0, used - 32))}]}],
            },
        })
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                    "metadata": {"name": "batch", "namespace": f"team-{q:05d}", "uid": f"lq-{q}", "resourceVersion": str(300 + q)},
                    "spec": {"clusterQueue": f"cq-{q:05d}", "stopPolicy": "None"},
                    "status": {"admittedWorkloads": 4, "pendingWorkloads": 1, "reservingWorkloads": 4}})
    return out


def workload(i, queues, rng):
    q = i % max(1, queues)
    ns = f"team-{q:05d}"
    job = f"train-{i:06d}"
    uid = "%08x-%04x-%04x-%04x-%012x" % tuple(rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
    gpus = rng.choice([1, 2, 4, 8])
    count = rng.choice([1, 1, 2, 4])
    created = "2026-11-%02dT%02d:%02d:00Z" % (1 + i % 28, i % 24, i % 60)
    admitted = i % 5 != 0
    template = {"metadata": {"labels": {"batch.kubernetes.io/job-name": job, "kueue.x-k8s.io/queue-name": "batch"}},
                "spec": {"containers": [{
                    "args": ["--config", "/etc/train.yaml"], "env": [{"name": "NCCL_DEBUG", "value": "WARN"}],
                    "image": "registry.example.com/trainer:2026.11", "imagePullPolicy": "IfNotPresent", "name": "trainer",
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                                  "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": str(gpus)}},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                    "dnsPolicy": "ClusterFirst", "restartPolicy": "Never", "schedulerName": "default-scheduler",
                    "securityContext": {}, "terminationGracePeriodSeconds": 30}}
    status = {"conditions": [], "resourceRequests": []}
    if admitted:
        status["conditions"] = [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
             "message": f"Quota reserved in ClusterQueue cq-{q:05d}", "lastTransitionTime": created, "observedGeneration": 1},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted",
             "lastTransitionTime": created, "observedGeneration": 1},
            {"type": "PodsReady", "status": "True", "reason": "PodsReady", "message": "All pods reached readiness",
             "lastTransitionTime": created, "observedGeneration": 1}]
        status["admission"] = {"clusterQueue": f"cq-{q:05d}", "podSetAssignments": [{
            "name": "main", "count": count, "flavors": {"cpu": "h100", "memory": "h100", "nvidia.com/gpu": "h100"},
            "resourceUsage": {"cpu": str(8 * count), "memory": f"{64 * count}Gi", "nvidia.com/gpu": str(gpus * count)}}]}
    else:
        status["conditions"] = [{"type": "QuotaReserved", "status": "False", "reason": "WaitingForQuota",
                                 "message": f"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, {gpus * count} more needed",
                                 "lastTransitionTime": created, "observedGeneration": 1}]
        status["resourceRequests"] = [{"name": "main", "resources": {"cpu": str(8 * count), "memory": f"{64 * count}Gi", "nvidia.com/gpu": str(gpus * count)}}]
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {
        "creationTimestamp": created, "finalizers": ["kueue.x-k8s.io/resource-in-use"], "generation": 1,
        "labels": {"kueue.x-k8s.io/job-uid": uid}, "name": f"job-{job}-{i % 99991:05x}", "namespace": ns,
        "ownerReferences": [{"apiVersion": "batch/v1", "blockOwnerDeletion": True, "controller": True,
                             "kind": "Job", "name": job, "uid": uid}],
        "resourceVersion": str(2000000 + i), "uid": uid[::-1]},
        "spec": {"active": True, "podSets": [{"count": count, "name": "main", "template": template}],
                 "priority": 0, "priorityClassSource": "", "queueName": "batch"},
        "status": status}


def order(o, how):
    if isinstance(o, list):
        return [order(x, how) for x in o]
    if not isinstance(o, dict):
        return o
    keys = sorted(o)
    if how == "kind-first":
        keys = [k for k in ("kind", "apiVersion", "metadata") if k in o] + [k for k in keys if k not in ("kind", "apiVersion", "metadata")]
    elif how == "kind-last":
        keys = [k for k in keys if k not in ("kind", "apiVersion")] + [k for k in ("kind", "apiVersion") if k in o]
    return {k: order(o[k], how) for k in keys}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, required=True)
    ap.add_argument("--order", choices=["kubectl", "kind-first", "kind-last"], default="kubectl")
    ap.add_argument("--indent", action="store_true")
    ap.add_argument("--managed-fields", action="store_true")
    ap.add_argument("--queues", type=int, default=0)
    ap.add_argument("--workloads", type=int, default=0)
    ap.add_argument("--admission-only", action="store_true",
                    help="write only the admission objects, separated by commas: items to splice "
                         "into another fleet's List")
    ap.add_argument("output")
    a = ap.parse_args()
    rng = random.Random(36)
    names = [f"gpu-node-{i:05d}" for i in range(max(1, a.pods // 20))]
    with open(a.output, "w") as out:
        out.write('{"apiVersion":"v1","items":[' if a.order != "kind-last" else '{"items":[')
        sep = ",\n" if a.indent else ","
        first = True
        objs = [node(i) for i in range(len(names))]
        qrng = random.Random(45)
        admission = queue_objects(a.queues, qrng) if a.queues else []
        admission += [workload(i, a.queues, qrng) for i in range(a.workloads)]
        if a.admission_only:
            out.seek(0)
            out.truncate()
            out.write(sep.join(json.dumps(order(o, a.order), indent=4 if a.indent else None,
                                          separators=None if a.indent else (",", ":"))
                               for o in admission))
            return
        for o in objs + [pod(i, rng, names, a.managed_fields) for i in range(a.pods)] + admission:
            text = json.dumps(order(o, a.order), indent=4 if a.indent else None,
                              separators=None if a.indent else (",", ":"))
            out.write(("" if first else sep) + text)
            first = False
        tail = '],"kind":"List","metadata":{"resourceVersion":""}}' if a.order != "kind-last" else '],"metadata":{"resourceVersion":""},"kind":"List","apiVersion":"v1"}'
        out.write(tail + "\n")


if __name__ == "__main__":
    main()
