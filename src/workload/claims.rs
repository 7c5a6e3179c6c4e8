//! GPUs through Dynamic Resource Allocation: what a claim holds or asks for, and what a pod gets
//! through its claims.
//!
//! A pod's devices are the devices of the claims in its `spec.resourceClaims` (a container only
//! picks among them, and a claim is allocated whether a container names it or not;
//! `core/v1/types.go`). A ResourceClaimTemplate gives each pod a claim of its own, so its devices
//! are the pod's. A standalone ResourceClaim is one allocation however many pods share it: it is
//! counted once, on the claim (which is then a workload of its own, with its consumers named),
//! never on the pods. The claim the scheduler makes for a pod's extended resources (annotated
//! [`EXTENDED_RESOURCE_CLAIM`]) serves the pod's `nvidia.com/gpu` limit, which the device-plugin
//! rule already counts: it only says where that figure came from.
//!
//! What a claim holds, by the rules of `kubernetes/api` `resource/v1/types.go`:
//!
//! | request | devices |
//! |---|---|
//! | `exactly` (v1, v1beta2) or the fields on the request (v1beta1) | `count`, default 1 |
//! | `allocationMode: All` | every matching device of a node: unknown until allocated |
//! | `firstAvailable` | one alternative: a range (least … most) until allocated |
//! | `adminAccess: true` | nothing (monitoring access, ignores other claims' allocations) |
//! | `capacity.requests` (consumable capacity) | a share of a device that other claims may share: its whole GPUs unknown |
//!
//! An allocated claim (`status.allocation.devices.results[]`, one entry per device) holds exactly
//! its devices, each read from the ResourceSlice that publishes it when that is in the input.
//! Device classes map to currencies ([`DeviceKind`]): whole GPUs (`gpu.nvidia.com`, passthrough
//! `vfio.gpu.nvidia.com`, a class with `extendedResourceName: nvidia.com/gpu` or whose selector
//! picks `gpu.nvidia.com` devices of type `gpu`), MIG slices by profile (`mig.nvidia.com`, the
//! profile from the request's or class's selector, or the allocated device's `profile`
//! attribute), ComputeDomain and IMEX channels (not GPUs, not counted), and any other class,
//! counted apart by class name and never mixed into whole GPUs (kubernetes-sigs/dra-driver-nvidia-gpu
//! `deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml`).

use std::collections::{HashMap, HashSet};

use crate::k8s::dra::{
    AllocationResult, ClaimBody, ClaimSpec, DeviceClassSpec, DeviceSelector,
    EXTENDED_RESOURCE_CLAIM, ExactRequest, POD_CLAIM_NAME, SliceDevice,
};
use crate::k8s::gpus::{GpuResource, Gpus};
use crate::k8s::object::{Body, Kind, Object};
use crate::k8s::types::{PodSpec, PodStatus};
use crate::util::sum::TooLarge;

mod devices;
mod slices;

pub use devices::{ClaimHow, ClaimSummary, ClaimUse, DeviceKind, Devices, PodClaims};
pub use slices::{SliceDevices, SlicedDevice};

/// The NVIDIA DRA driver's whole-GPU class and driver name.
pub const GPU_CLASS: &str = "gpu.nvidia.com";
/// Its MIG class.
pub const MIG_CLASS: &str = "mig.nvidia.com";
/// Its passthrough class: a whole GPU given to a virtual machine.
pub const VFIO_CLASS: &str = "vfio.gpu.nvidia.com";
/// The driver that publishes GPUs, MIG devices and passthrough GPUs.
pub const GPU_DRIVER: &str = "gpu.nvidia.com";
/// The driver that publishes ComputeDomain channels and daemons.
pub const COMPUTE_DOMAIN_DRIVER: &str = "compute-domain.nvidia.com";
/// Classes of channels (multi-node NVLink through IMEX), never GPUs.
const CHANNEL_CLASSES: [&str; 3] = [
    "compute-domain-default-channel.nvidia.com",
    "compute-domain-daemon.nvidia.com",
    "imex.nvidia.com",
];

/// The DRA objects of an input, indexed once: classes, templates, claims (by name, and the ones
/// made for a pod), the channel templates of ComputeDomains, and the devices the slices publish.
#[derive(Default)]
pub struct Dra<'a> {
    objects: &'a [Object],
    classes: HashMap<&'a str, &'a DeviceClassSpec>,
    templates: HashMap<(&'a str, &'a str), &'a ClaimSpec>,
    claims: HashMap<(&'a str, &'a str), usize>,
    /// Claims made for a pod: (pod uid, the pod's claim name) → claim.
    generated: HashMap<(&'a str, &'a str), usize>,
    /// Pods (by uid) whose extended resources a claim serves, with the claim's name.
    extended: HashMap<&'a str, &'a str>,
    /// Templates a ComputeDomain makes for its channels (namespace, name).
    channel_templates: HashSet<(&'a str, String)>,
    pub slices: SliceDevices<'a>,
}

/// A namespace as `kubectl apply` places it: none is `default`.
pub fn placed(ns: &str) -> &str {
    if ns.is_empty() { "default" } else { ns }
}

impl<'a> Dra<'a> {
    pub fn new(objects: &'a [Object]) -> Dra<'a> {
        let mut d = Dra {
            objects,
            slices: SliceDevices::new(objects),
            ..Dra::default()
        };
        for (i, o) in objects.iter().enumerate() {
            let ns = placed(o.namespace());
            match &o.body {
                Body::DeviceClass(c) => {
                    d.classes.insert(&o.meta.name, c);
                }
                Body::ClaimTemplate(t) => {
                    d.templates.insert((ns, &o.meta.name), &t.spec);
                }
                Body::Claim(_) => {
                    d.claims.insert((ns, &o.meta.name), i);
                    let pod = o
                        .meta
                        .owner_references
                        .iter()
                        .find(|r| r.kind == "Pod" && r.controller == Some(true));
                    if let Some(pod) = pod.filter(|p| !p.uid.is_empty()) {
                        if o.meta.annotations.get(EXTENDED_RESOURCE_CLAIM).is_some() {
                            d.extended.insert(&pod.uid, &o.meta.name);
                        } else if let Some(n) = o.meta.annotations.get(POD_CLAIM_NAME) {
                            d.generated.insert((&pod.uid, n.as_str()), i);
                        }
                    }
                }
                Body::Raw(spec)
                    if o.kind == "ComputeDomain" && o.group() == "resource.nvidia.com" =>
                {
                    // kubernetes-sigs/dra-driver-nvidia-gpu: `spec.channel.resourceClaimTemplate.name`,
                    // the template the controller creates for the domain's channels.
                    if let Some(t) = spec
                        .pointer("/channel/resourceClaimTemplate/name")
                        .and_then(serde_json::Value::as_str)
                    {
                        d.channel_templates.insert((ns, t.to_string()));
                    }
                }
                _ => {}
            }
        }
        d
    }

    /// What `class` (with a request's `selectors`) counts as.
    pub fn classify(&self, class: &str, selectors: &[DeviceSelector]) -> DeviceKind {
        let kind = match class {
            GPU_CLASS | VFIO_CLASS => DeviceKind::Whole,
            MIG_CLASS => DeviceKind::Mig(None),
            c if CHANNEL_CLASSES.contains(&c) => DeviceKind::Channel,
            _ => self
                .classes
                .get(class)
                .map_or(DeviceKind::Other, |c| class_kind(c)),
        };
        match kind {
            DeviceKind::Mig(None) => DeviceKind::Mig(cel_value(selectors, ".profile")),
            k => k,
        }
    }

    /// What one exact request asks for, before allocation. `what` names the claim or template.
    fn exact(&self, e: &ExactRequest, request: &str, what: &str) -> Result<Devices, TooLarge> {
        let mut d = Devices::default();
        // Admin access is monitoring access: it allocates no device away from anyone.
        if e.admin_access == Some(true) {
            return Ok(d);
        }
        let class = e.device_class_name.as_str();
        let kind = self.classify(class, &e.selectors);
        if kind == DeviceKind::Channel {
            return Ok(d);
        }
        let n = match e.allocation_mode.as_deref().unwrap_or("ExactCount") {
            "ExactCount" => e.count.unwrap_or(1),
            "All" => {
                d.note(format!(
                    "{what}: request {request} takes every matching {class} device of a node (allocationMode All), unknown until it is allocated"
                ));
                return Ok(d);
            }
            mode => {
                d.note(format!(
                    "{what}: request {request} has allocationMode {mode}, which gpuledger does not know"
                ));
                return Ok(d);
            }
        };
        let shares = e.capacity.as_ref().filter(|c| !c.requests.is_empty());
        if let (Some(c), false) = (shares, kind == DeviceKind::Other) {
            let amounts: Vec<String> = c
                .requests
                .iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => format!("{k} {s}"),
                    v => format!("{k} {v}"),
                })
                .collect();
            d.count_other(format!("{class} (shared capacity)"), n)?;
            d.note(format!(
                "{what}: request {request} takes a share ({}) of a {class} device that other claims may share, so its whole GPUs are unknown",
                amounts.join(", ")
            ));
            return Ok(d);
        }
        d.count(&kind, class, n)?;
        Ok(d)
    }

    /// What a claim spec asks for, before allocation (the offline rule).
    pub fn spec(&self, spec: &ClaimSpec, what: &str) -> Result<Devices, TooLarge> {
        let mut total = Devices::default();
        for r in &spec.devices.requests {
            let d = match r.exact() {
                Some(e) => self.exact(&e, &r.name, what)?,
                None => self.alternatives(&r.first_available, &r.name, what)?,
            };
            total.add(&d)?;
        }
        Ok(total)
    }

    /// A request with alternatives allocates one of them: at least the least of them per
    /// currency, at most the most.
    fn alternatives(
        &self,
        subs: &[ExactRequest],
        request: &str,
        what: &str,
    ) -> Result<Devices, TooLarge> {
        let each: Vec<Devices> = subs
            .iter()
            .map(|s| self.exact(s, &format!("{request}/{}", s.name), what))
            .collect::<Result<_, _>>()?;
        let Some(first) = each.first() else {
            return Ok(Devices::default());
        };
        let (mut least, mut most) = (first.gpus.clone(), first.gpus.clone());
        let mut out = Devices::default();
        for d in &each {
            least = least_of(&least, &d.gpus);
            most.max_with(&d.gpus);
            out.note_all(&d.unknown);
        }
        // Other devices: the least any alternative takes.
        for k in first.other.keys() {
            let n = each
                .iter()
                .map(|d| d.other.get(k).copied().unwrap_or(0))
                .min()
                .unwrap_or(0);
            if n > 0 {
                out.other.insert(k.clone(), n);
            }
        }
        out.more = most.minus(&least);
        out.gpus = least;
        Ok(out)
    }

    /// What an allocated claim holds: one device per result, admin access holding none.
    fn allocated(
        &self,
        spec: &ClaimSpec,
        results: &[AllocationResult],
        what: &str,
    ) -> Result<Devices, TooLarge> {
        let mut d = Devices::default();
        for r in results.iter().filter(|r| r.admin_access != Some(true)) {
            let device = self.slices.get(&r.driver, &r.pool, &r.device);
            let (kind, class) = self.result_kind(spec, r, device.map(|s| s.device));
            if kind == DeviceKind::Channel {
                continue;
            }
            let shared = r.share_id.is_some()
                || device.is_some_and(|s| s.device.allow_multiple_allocations == Some(true));
            if shared && kind != DeviceKind::Other {
                d.count_other(format!("{class} (shared capacity)"), 1)?;
                d.note(format!(
                    "{what}: device {}/{}/{} is shared with other claims (consumable capacity), so its whole GPUs are unknown",
                    r.driver, r.pool, r.device
                ));
                continue;
            }
            d.count(&kind, &class, 1)?;
        }
        Ok(d)
    }

    /// What an allocated device is: by the slice that publishes it, else by the class of the
    /// request (or subrequest, `<request>/<sub>`) it was allocated for.
    fn result_kind(
        &self,
        spec: &ClaimSpec,
        r: &AllocationResult,
        device: Option<&SliceDevice>,
    ) -> (DeviceKind, String) {
        let (main, sub) = match r.request.split_once('/') {
            Some((m, s)) => (m, Some(s)),
            None => (r.request.as_str(), None),
        };
        let req = spec.devices.requests.iter().find(|q| q.name == main);
        let exact = req.and_then(|q| match sub {
            Some(s) => q.first_available.iter().find(|x| x.name == s).cloned(),
            None => q.exact(),
        });
        let class = exact
            .as_ref()
            .map_or_else(|| r.driver.clone(), |e| e.device_class_name.clone());
        if r.driver == COMPUTE_DOMAIN_DRIVER {
            return (DeviceKind::Channel, class);
        }
        if let Some(dev) = device.filter(|_| r.driver == GPU_DRIVER) {
            let a = dev.attrs();
            match a.type_.as_deref() {
                Some("gpu" | "vfio") => return (DeviceKind::Whole, class),
                Some("mig") => return (DeviceKind::Mig(a.profile.clone()), class),
                _ => {}
            }
        }
        let kind = match &exact {
            Some(e) => self.classify(&e.device_class_name, &e.selectors),
            None => DeviceKind::Other,
        };
        (kind, class)
    }

    /// What a ResourceClaim holds (allocated) or asks for (not yet).
    pub fn claim(&self, o: &Object, c: &ClaimBody) -> Result<(Devices, bool), TooLarge> {
        let what = format!("ResourceClaim {}/{}", placed(o.namespace()), o.meta.name);
        match &c.status.allocation {
            Some(a) => Ok((self.allocated(&c.spec, &a.devices.results, &what)?, true)),
            None => Ok((self.spec(&c.spec, &what)?, false)),
        }
    }

    /// The claim object at `i`, if it is one.
    pub fn claim_at(&self, i: usize) -> Option<(&'a Object, &'a ClaimBody)> {
        let o = self.objects.get(i)?;
        match &o.body {
            Body::Claim(c) => Some((o, c)),
            _ => None,
        }
    }

    /// The DRA side of a pod in namespace `ns`. `live` is its status and uid (a pod read from a
    /// cluster or a dump); without it (a pod template) each template claim is its template's spec.
    pub fn pod(
        &self,
        ns: &str,
        spec: &PodSpec,
        live: Option<(&PodStatus, Option<&str>)>,
    ) -> Result<PodClaims, TooLarge> {
        let ns = placed(ns);
        let mut out = PodClaims::default();
        if let Some((status, uid)) = live {
            out.extended = status
                .extended_resource_claim_status
                .as_ref()
                .map(|s| s.resource_claim_name.clone())
                .or_else(|| {
                    uid.and_then(|u| self.extended.get(u))
                        .map(|n| n.to_string())
                });
        }
        for rc in &spec.resource_claims {
            if let Some(name) = &rc.resource_claim_name {
                match self.claims.get(&(ns, name.as_str())) {
                    Some(&i) => out.shared.push(i),
                    None => out.own.note(format!(
                        "ResourceClaim {ns}/{name} (used by the pod's claim {}) is not in the input",
                        rc.name
                    )),
                }
                continue;
            }
            let Some(template) = &rc.resource_claim_template_name else {
                continue;
            };
            // The claim made for this pod, when the pod is live.
            let made = live.and_then(|(status, uid)| {
                match status
                    .resource_claim_statuses
                    .iter()
                    .find(|s| s.name == rc.name)
                {
                    Some(s) => Some(
                        s.resource_claim_name
                            .as_deref()
                            .map(|n| self.claims.get(&(ns, n)).copied()),
                    ),
                    None => uid
                        .and_then(|u| self.generated.get(&(u, rc.name.as_str())))
                        .map(|&i| Some(Some(i))),
                }
            });
            let used = match made {
                // No claim was needed.
                Some(None) => continue,
                Some(Some(Some(i))) => match self.claim_at(i) {
                    Some((o, c)) => {
                        let (devices, allocated) = self.claim(o, c)?;
                        Some((devices, Some(allocated)))
                    }
                    None => None,
                },
                _ => None,
            };
            let (devices, allocated) = match used {
                Some(u) => u,
                None => (self.template(ns, template)?, None),
            };
            out.own.add(&devices)?;
            if !devices.is_empty() {
                out.claims.push(ClaimUse {
                    how: ClaimHow::Template,
                    name: template.clone(),
                    allocated,
                    devices,
                });
            }
        }
        Ok(out)
    }

    /// What a claim made from template `name` in `ns` asks for.
    fn template(&self, ns: &str, name: &str) -> Result<Devices, TooLarge> {
        if let Some(spec) = self.templates.get(&(ns, name)) {
            return self.spec(spec, &format!("ResourceClaimTemplate {ns}/{name}"));
        }
        let mut d = Devices::default();
        // A ComputeDomain's channel template, made by its controller: channels, not GPUs.
        if !self.channel_templates.contains(&(ns, name.to_string())) {
            d.note(format!(
                "ResourceClaimTemplate {ns}/{name} is not in the input"
            ));
        }
        Ok(d)
    }
}

/// Per currency, the lesser of `a` and `b` (a profile missing from either is zero).
fn least_of(a: &Gpus, b: &Gpus) -> Gpus {
    Gpus {
        whole: a.whole.min(b.whole),
        shared: a.shared.min(b.shared),
        fraction: a.fraction.min(b.fraction),
        fraction_centi: a.fraction_centi.min(b.fraction_centi),
        fraction_memory: a.fraction_memory.min(b.fraction_memory),
        mig: a
            .mig
            .iter()
            .filter_map(|(p, n)| Some((p.clone(), (*n).min(*b.mig.get(p)?))))
            .collect(),
    }
}

/// What a DeviceClass object counts as: by the extended resource it serves, else by what its
/// selector picks.
fn class_kind(c: &DeviceClassSpec) -> DeviceKind {
    match c
        .extended_resource_name
        .as_deref()
        .and_then(GpuResource::classify)
    {
        Some(GpuResource::Whole) => return DeviceKind::Whole,
        Some(GpuResource::Mig(p)) => return DeviceKind::Mig(Some(p)),
        _ => {}
    }
    match cel_value(&c.selectors, "device.driver").as_deref() {
        Some(GPU_DRIVER) => match cel_value(&c.selectors, ".type").as_deref() {
            Some("gpu" | "vfio") => DeviceKind::Whole,
            Some("mig") => DeviceKind::Mig(cel_value(&c.selectors, ".profile")),
            _ => DeviceKind::Other,
        },
        Some(COMPUTE_DOMAIN_DRIVER) => DeviceKind::Channel,
        _ => DeviceKind::Other,
    }
}

/// The one string that CEL selectors compare `field` with (`….profile == '1g.5gb'`), when they
/// name exactly one; anything else (no comparison, several values, another operator) is `None`.
/// This reads the equality tests drivers' classes and the upstream examples write, not CEL.
pub fn cel_value(selectors: &[DeviceSelector], field: &str) -> Option<String> {
    let mut found: Option<String> = None;
    for s in selectors.iter().filter_map(|s| s.cel.as_ref()) {
        let e = s.expression.as_str();
        let mut at = 0;
        while let Some(i) = e.get(at..).and_then(|rest| rest.find(field)) {
            let start = at + i;
            at = start + field.len();
            // `.type` must not match `.typeName`: the field ends where an identifier does.
            let after = e.get(at..).unwrap_or_default();
            if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let Some(rest) = after.trim_start().strip_prefix("==") else {
                continue;
            };
            let rest = rest.trim_start();
            let Some(q) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
                continue;
            };
            let Some((value, _)) = rest.get(1..).and_then(|r| r.split_once(q)) else {
                continue;
            };
            match &found {
                Some(v) if v != value => return None,
                _ => found = Some(value.to_string()),
            }
        }
    }
    found
}

/// Whether `o` is a claim counted on its own: a ResourceClaim not made for a pod (by a template
/// or for its extended resources), which its consumers share.
pub fn is_shared_claim(o: &Object) -> bool {
    o.typed_kind() == Kind::ResourceClaim
        && !o
            .meta
            .owner_references
            .iter()
            .any(|r| r.kind == "Pod" && r.controller == Some(true))
}

#[cfg(test)]
mod tests;
