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

/// The resource an object was listed as (`pods`, `ingresses.networking.k8s.io`).
pub(super) fn resource_of(o: &Object) -> Option<&'static str> {
    use crate::k8s::object::Kind;
    Some(match o.typed_kind() {
        Kind::Node => "nodes",
        Kind::Pod => "pods",
        Kind::Service => "services",
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
    }
}
