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

  scripts/bench-pods.py --pods N --order kubectl|kind-first|kind-last [--indent] [--managed-fields] OUT
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
    ap.add_argument("output")
    a = ap.parse_args()
    rng = random.Random(36)
    names = [f"gpu-node-{i:05d}" for i in range(max(1, a.pods // 20))]
    with open(a.output, "w") as out:
        out.write('{"apiVersion":"v1","items":[' if a.order != "kind-last" else '{"items":[')
        sep = ",\n" if a.indent else ","
        first = True
        objs = [node(i) for i in range(len(names))]
        for o in objs + [pod(i, rng, names, a.managed_fields) for i in range(a.pods)]:
            text = json.dumps(order(o, a.order), indent=4 if a.indent else None,
                              separators=None if a.indent else (",", ":"))
            out.write(("" if first else sep) + text)
            first = False
        tail = '],"kind":"List","metadata":{"resourceVersion":""}}' if a.order != "kind-last" else '],"metadata":{"resourceVersion":""},"kind":"List","apiVersion":"v1"}'
        out.write(tail + "\n")


if __name__ == "__main__":
    main()
