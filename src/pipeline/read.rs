//! What a live source read: the resources a snapshot lists (or a dump's kinds), and what its
//! figures then cannot know ([`Unread`]): a `kubectl get pods` dump has no nodes, a dump without a
//! Service, Ingress, Gateway or HTTPRoute has no routes, a cluster read lacks what it was
//! forbidden to list.

use std::collections::BTreeSet;

use crate::analysis::live::Unread;
use crate::k8s::object::Object;

/// The route kinds, as resources.
pub(super) const ROUTE_RESOURCES: [&str; 4] = [
    "services",
    "ingresses.networking.k8s.io",
    "gateways.gateway.networking.k8s.io",
    "httproutes.gateway.networking.k8s.io",
];

/// The admission resources: queues (`KUEUE_QUEUES`, `KAI_QUEUES`) and what waits in them
/// (`KUEUE_WORKLOADS`, `KAI_POD_GROUPS`).
const KUEUE_QUEUES: [&str; 2] = ["clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io"];
pub(super) const KUEUE_WORKLOADS: &str = "workloads.kueue.x-k8s.io";
const KAI_QUEUES: &str = "queues.scheduling.run.ai";
pub(super) const KAI_POD_GROUPS: &str = "podgroups.scheduling.run.ai";
/// Not resources: a dump's object that names a Kueue or a KAI queue (a job's or pod's label), which
/// says admission is at work even where no queue object was dumped.
const NAMES_A_KUEUE_QUEUE: &str = "(an object naming a Kueue queue)";
const NAMES_A_KAI_QUEUE: &str = "(an object naming a KAI queue)";

/// The resources an object tells a dump read: the one it was listed as (`pods`,
/// `ingresses.networking.k8s.io`), and whether it names an admission queue.
pub(super) fn read_by(o: &Object) -> impl Iterator<Item = &'static str> {
    let kueue = o.meta.labels.contains_key(crate::queues::QUEUE_LABEL);
    let kai = o.meta.labels.contains_key(crate::queues::KAI_QUEUE_LABEL);
    resource_of(o)
        .into_iter()
        .chain(kueue.then_some(NAMES_A_KUEUE_QUEUE))
        .chain(kai.then_some(NAMES_A_KAI_QUEUE))
}

/// The resource an object was listed as (`pods`, `ingresses.networking.k8s.io`).
pub(super) fn resource_of(o: &Object) -> Option<&'static str> {
    use crate::k8s::object::Kind;
    Some(match o.typed_kind() {
        Kind::Node => "nodes",
        Kind::Pod => "pods",
        Kind::Service => "services",
        Kind::ClusterQueue => KUEUE_QUEUES[0],
        Kind::LocalQueue => KUEUE_QUEUES[1],
        Kind::KueueWorkload => KUEUE_WORKLOADS,
        Kind::KaiQueue => KAI_QUEUES,
        Kind::PodGroup => KAI_POD_GROUPS,
        Kind::Ingress => ROUTE_RESOURCES[1],
        _ => match (o.group(), o.kind.as_str()) {
            ("gateway.networking.k8s.io", "Gateway") => ROUTE_RESOURCES[2],
            ("gateway.networking.k8s.io", "HTTPRoute") => ROUTE_RESOURCES[3],
            _ => return None,
        },
    })
}

/// What snapshot files did not hold. A file gpuledger wrote lists the resources it read whole; a
/// plain kubectl dump read the kinds it holds, so a `kubectl get pods` dump has no nodes and a dump
/// without a Service, Ingress, Gateway or HTTPRoute has no routes.
pub(super) fn unread_in_files(files: &[(Option<Vec<String>>, BTreeSet<&'static str>)]) -> Unread {
    let mut read: BTreeSet<&str> = BTreeSet::new();
    let mut precise = true;
    for (listed, present) in files {
        match listed {
            Some(l) => read.extend(l.iter().map(String::as_str)),
            None => {
                precise = false;
                read.extend(present.iter().copied());
            }
        }
    }
    let dump = |what: &str, add: &str| {
        if precise {
            format!("the snapshot holds no {what}: they were not read")
        } else {
            format!("the input holds no {what} (a dump of other kinds: add them with {add})")
        }
    };
    let routes_read = if precise {
        read.contains(ROUTE_RESOURCES[0]) && read.contains(ROUTE_RESOURCES[1])
    } else {
        ROUTE_RESOURCES.iter().any(|r| read.contains(r))
    };
    Unread {
        nodes: (!read.contains("nodes")).then(|| dump("Node", "kubectl get nodes")),
        pods: (!read.contains("pods")).then(|| dump("Pod", "kubectl get pods -A")),
        routes: (!routes_read)
            .then(|| dump("Service or Ingress", "kubectl get services,ingresses -A")),
        queued: queued_unread(&read, precise),
    }
}

/// What waits for queue quota is unknown where queues exist (or objects name one) but what waits
/// in them was not read: Kueue Workloads, KAI PodGroups. Without any admission object or queue
/// name, there is no admission system: nothing is queued, known.
fn queued_unread(read: &BTreeSet<&str>, precise: bool) -> Option<String> {
    let kueue = KUEUE_QUEUES.iter().any(|r| read.contains(r)) || read.contains(NAMES_A_KUEUE_QUEUE);
    let kai = read.contains(KAI_QUEUES) || read.contains(NAMES_A_KAI_QUEUE);
    let (what, add) = if kueue && !read.contains(KUEUE_WORKLOADS) {
        ("Kueue Workload", "kubectl get workloads.kueue.x-k8s.io -A")
    } else if kai && !read.contains(KAI_POD_GROUPS) {
        ("KAI PodGroup", "kubectl get podgroups.scheduling.run.ai -A")
    } else {
        return None;
    };
    Some(if precise {
        format!("the snapshot holds queues but no {what}: what waits for quota was not read")
    } else {
        format!(
            "the input holds queues (or jobs naming one) but no {what}: what waits for quota was not read (add them with {add})"
        )
    })
}
