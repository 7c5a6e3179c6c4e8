//! What DRA devices are counted as and in: a device's kind ([`DeviceKind`]), the devices a claim
//! or a pod holds or asks for by currency ([`Devices`]), and how a pod or workload uses its claims
//! ([`ClaimUse`], [`ClaimSummary`], [`PodClaims`]). Plain data with checked arithmetic.

use std::collections::BTreeMap;

use crate::k8s::gpus::Gpus;
use crate::util::sum::{self, TooLarge};

/// What a device is, for counting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceKind {
    /// A whole GPU.
    Whole,
    /// A MIG slice, by profile when known.
    Mig(Option<String>),
    /// A ComputeDomain or IMEX channel: not a GPU.
    Channel,
    /// A device of any other class, counted apart.
    Other,
}

/// Devices one claim (or a pod's claims) holds or asks for, by currency.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Devices {
    /// Known for certain: whole GPUs and MIG slices by profile.
    pub gpus: Gpus,
    /// How many more it may take at most (a request with alternatives, before allocation): the
    /// range is `gpus ..= gpus + more`.
    pub more: Gpus,
    /// Devices of other classes by class name (a class shown with `(shared capacity)` or
    /// `(MIG, profile unknown)` when so), never GPUs.
    pub other: BTreeMap<String, u64>,
    /// Why the GPUs are not known exactly (then `gpus` is what is known, a lower bound).
    pub unknown: Vec<String>,
}

impl Devices {
    pub fn is_empty(&self) -> bool {
        self.gpus.is_zero()
            && self.more.is_zero()
            && self.other.is_empty()
            && self.unknown.is_empty()
    }

    /// `self += other`, checked.
    pub fn add(&mut self, other: &Devices) -> Result<(), TooLarge> {
        self.gpus.add(&other.gpus)?;
        self.more.add(&other.more)?;
        for (k, n) in &other.other {
            sum::add_to(self.other.entry(k.clone()).or_insert(0), *n)?;
        }
        self.note_all(&other.unknown);
        Ok(())
    }

    /// `self × n`, checked. Nothing times zero is known to be nothing.
    pub fn scaled(&self, n: u64) -> Result<Devices, TooLarge> {
        if n == 0 {
            return Ok(Devices::default());
        }
        Ok(Devices {
            gpus: self.gpus.scaled(n)?,
            more: self.more.scaled(n)?,
            other: self
                .other
                .iter()
                .map(|(k, v)| Ok((k.clone(), sum::mul(*v, n)?)))
                .collect::<Result<_, TooLarge>>()?,
            unknown: self.unknown.clone(),
        })
    }

    /// Adds a reason, once.
    pub fn note(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.unknown.contains(&why) {
            self.unknown.push(why);
        }
    }

    pub(super) fn note_all(&mut self, whys: &[String]) {
        for w in whys {
            self.note(w.clone());
        }
    }

    pub(super) fn count(&mut self, kind: &DeviceKind, class: &str, n: u64) -> Result<(), TooLarge> {
        match kind {
            DeviceKind::Whole => sum::add_to(&mut self.gpus.whole, n),
            DeviceKind::Mig(Some(p)) => sum::add_to(self.gpus.mig.entry(p.clone()).or_insert(0), n),
            DeviceKind::Mig(None) => self.count_other(format!("{class} (MIG, profile unknown)"), n),
            DeviceKind::Channel => Ok(()),
            DeviceKind::Other => self.count_other(class.to_string(), n),
        }
    }

    pub(super) fn count_other(&mut self, key: String, n: u64) -> Result<(), TooLarge> {
        sum::add_to(self.other.entry(key).or_insert(0), n)
    }
}

/// How a pod gets a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClaimHow {
    /// From a ResourceClaimTemplate: a claim per pod.
    Template,
    /// A standalone ResourceClaim shared by its consumers, counted once on the claim.
    Shared,
    /// The scheduler's claim for a pod's extended resources (its `nvidia.com/gpu` limit).
    ExtendedResource,
}

impl ClaimHow {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimHow::Template => "template",
            ClaimHow::Shared => "shared",
            ClaimHow::ExtendedResource => "extended-resource",
        }
    }
}

/// One claim as a pod (or a shared claim's workload) uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimUse {
    pub how: ClaimHow,
    /// The template (for a template claim) or the claim (shared, extended resource).
    pub name: String,
    /// Whether the claim is allocated: `None` when no claim object was read (the template's
    /// spec stands for it).
    pub allocated: Option<bool>,
    pub devices: Devices,
}

/// The claims of one kind and name that a workload's pods (or the workload itself) use: one row
/// for a template's claims however many pods it made them for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimSummary {
    pub how: ClaimHow,
    pub name: String,
    /// Claims counted (one per pod for a template).
    pub claims: u64,
    /// Of them, allocated.
    pub allocated: u64,
    pub devices: Devices,
}

impl ClaimSummary {
    /// Adds `u` to the summaries of its kind and name, keeping them sorted.
    pub fn add(list: &mut Vec<ClaimSummary>, u: &ClaimUse) -> Result<(), TooLarge> {
        let at = match list
            .binary_search_by(|s| (s.how, s.name.as_str()).cmp(&(u.how, u.name.as_str())))
        {
            Ok(i) => i,
            Err(i) => {
                list.insert(
                    i,
                    ClaimSummary {
                        how: u.how,
                        name: u.name.clone(),
                        claims: 0,
                        allocated: 0,
                        devices: Devices::default(),
                    },
                );
                i
            }
        };
        if let Some(s) = list.get_mut(at) {
            s.claims = sum::add(s.claims, 1)?;
            s.allocated = sum::add(s.allocated, u64::from(u.allocated == Some(true)))?;
            s.devices.add(&u.devices)?;
        }
        Ok(())
    }
}

/// The DRA side of one pod (or pod template).
#[derive(Debug, Clone, Default)]
pub struct PodClaims {
    /// The devices of the pod's own claims (made from templates).
    pub own: Devices,
    /// Its claims, for the report.
    pub claims: Vec<ClaimUse>,
    /// The shared ResourceClaims it uses, as indexes into the object list: counted on the claim.
    pub shared: Vec<usize>,
    /// The claim that serves its extended-resource limits through DRA, when one does (its name;
    /// empty when only the pod's status says one does).
    pub extended: Option<String>,
}
