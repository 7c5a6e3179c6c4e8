//! The routing blast radius of a change (`check.routes[]`): each public route the change adds,
//! removes or alters, with what is behind it before and after — Services, workloads, GPUs, tenants.

use serde::{Deserialize, Serialize};

/// What a change does to one route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteChangeKind {
    /// Internal ↔ internet-facing: the route's load balancer (or Gateway) changes who can reach it.
    Exposure,
    /// A public route the base did not have.
    Added,
    /// A public route the head no longer has.
    Removed,
    /// The same object's route now answers at another host or path, with the same backends.
    Moved,
    /// The route now reaches other workloads (a backend or a Service selector changed).
    Rerouted,
    /// The load balancer, Gateway or listeners that carry it changed.
    Altered,
}

impl RouteChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RouteChangeKind::Exposure => "exposure",
            RouteChangeKind::Added => "added",
            RouteChangeKind::Removed => "removed",
            RouteChangeKind::Moved => "moved",
            RouteChangeKind::Rerouted => "rerouted",
            RouteChangeKind::Altered => "altered",
        }
    }
}

/// One route the change touches.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouteChange {
    pub change: RouteChangeKind,
    /// `Ingress`, `Service` (a `type: LoadBalancer` Service) or `HTTPRoute`.
    pub kind: String,
    /// The head's host (the base's for a removed route); a Service's `namespace/name`.
    pub host: String,
    /// The head's path (Ingress), match (HTTPRoute), or empty (Service).
    pub path: String,
    /// One line for a reviewer: `internal → internet-facing (ALB group shared)`.
    pub summary: String,
    /// The route at the base; `null` for an added route.
    pub before: Option<RouteSide>,
    /// The route at the head; `null` for a removed route.
    pub after: Option<RouteSide>,
    /// The workloads behind it before or after (`namespace/Kind/name`), sorted.
    pub backends: Vec<String>,
    /// Their tenants, sorted.
    pub tenants: Vec<String>,
    /// Who to call for those tenants (`tenancy.contacts`, else the namespaces' contact keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contacts: Vec<String>,
    /// Whole GPUs declared by the distinct workloads behind it before or after: the GPUs whose
    /// traffic the change moves.
    pub gpus: u64,
    /// What serves the route's base host and path in the live state today; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub today: Option<RouteToday>,
}

/// A route on one side of the change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouteSide {
    pub host: String,
    pub path: String,
    /// `internet-facing` or `internal`.
    pub exposure: String,
    /// Why it is public (empty when internal).
    pub public_because: String,
    /// What carries it: `ALB group shared`, `Ingress web/chat`, `Service web/api`, `Gateway infra/gw`.
    pub load_balancer: String,
    /// ALB `listen-ports`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listeners: Option<String>,
    /// The objects that declare it, as `namespace/name`.
    pub objects: Vec<String>,
    /// Backend Services, as `namespace/name`.
    pub services: Vec<String>,
    /// Workloads the Services select, as `namespace/Kind/name`.
    pub workloads: Vec<String>,
    pub tenants: Vec<String>,
    /// Whole GPUs declared by those workloads.
    pub gpus: u64,
}

/// What serves a route in the live state (the inventory's public routes).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouteToday {
    /// Whether the live state has the route as a public route at all.
    pub public: bool,
    pub workloads: Vec<String>,
    pub tenants: Vec<String>,
    /// Whole GPUs requested by the live workloads behind it.
    pub gpus: u64,
}
