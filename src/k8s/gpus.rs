//! GPU resources: which extended resources are GPUs, and counts of them.
//!
//! Whole GPUs (`nvidia.com/gpu`), MIG slices (`nvidia.com/mig-<profile>`) and time-sliced shared GPUs
//! (`nvidia.com/gpu.shared`) are different currencies: a MIG slice is not a GPU and a shared replica is
//! a quarter or an eighth of one. They are counted side by side in [`Gpus`] and never added together.
//! While parsing, every resource map keeps only its GPU entries, each validated as a whole number; the
//! other resources (cpu, memory, …) are skipped without being parsed, which keeps pods lean.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::quantity::Quantity;
use crate::util::sum::{self, TooLarge};

pub const GPU: &str = "nvidia.com/gpu";
pub const SHARED_GPU: &str = "nvidia.com/gpu.shared";
pub const MIG_PREFIX: &str = "nvidia.com/mig-";
/// The GPU model GFD labels a node with (`NVIDIA-H100-80GB-HBM3`).
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";

/// One GPU-like extended resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum GpuResource {
    Whole,
    Shared,
    /// A share of a GPU KAI Scheduler gives a pod by annotation (`gpu-fraction`, `gpu-memory`),
    /// with no `nvidia.com/gpu` request at all: counted in shares (devices), never as whole GPUs.
    Fraction,
    /// A MIG profile such as `1g.10gb` (from `nvidia.com/mig-1g.10gb`).
    Mig(String),
}

impl GpuResource {
    pub fn classify(name: &str) -> Option<GpuResource> {
        match name {
            GPU => Some(GpuResource::Whole),
            SHARED_GPU => Some(GpuResource::Shared),
            _ => name
                .strip_prefix(MIG_PREFIX)
                .filter(|p| !p.is_empty())
                .map(|p| GpuResource::Mig(p.to_string())),
        }
    }
}

impl fmt::Display for GpuResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuResource::Whole => f.write_str(GPU),
            GpuResource::Shared => f.write_str(SHARED_GPU),
            GpuResource::Fraction => f.write_str(FRACTION),
            GpuResource::Mig(p) => write!(f, "{MIG_PREFIX}{p}"),
        }
    }
}

/// Counts of each GPU currency. Arithmetic is per currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Gpus {
    pub whole: u64,
    pub shared: u64,
    /// KAI GPU shares (devices a `gpu-fraction` or `gpu-memory` pod shares).
    #[serde(skip_serializing_if = "is_zero")]
    pub fraction: u64,
    /// Of `fraction`, the GPUs the `gpu-fraction` shares add up to, in hundredths (KAI counts a
    /// share to 0.01 of a GPU).
    #[serde(skip_serializing_if = "is_zero")]
    pub fraction_centi: u64,
    /// Of `fraction`, the shares given by memory (`gpu-memory`): their part of a GPU depends on
    /// the node's GPUs, so not known before they are placed.
    #[serde(skip_serializing_if = "is_zero")]
    pub fraction_memory: u64,
    /// MIG slices by profile.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub mig: BTreeMap<String, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The name the KAI GPU-share line goes by (the pod annotation that asks for one).
pub const FRACTION: &str = "gpu-fraction";

impl Gpus {
    pub fn whole(n: u64) -> Gpus {
        Gpus {
            whole: n,
            ..Gpus::default()
        }
    }

    pub fn is_zero(&self) -> bool {
        self.whole == 0
            && self.shared == 0
            && self.fraction == 0
            && self.mig.values().all(|&n| n == 0)
    }

    pub fn get(&self, r: &GpuResource) -> u64 {
        match r {
            GpuResource::Whole => self.whole,
            GpuResource::Shared => self.shared,
            GpuResource::Fraction => self.fraction,
            GpuResource::Mig(p) => self.mig.get(p).copied().unwrap_or(0),
        }
    }

    fn slot(&mut self, r: &GpuResource) -> &mut u64 {
        match r {
            GpuResource::Whole => &mut self.whole,
            GpuResource::Shared => &mut self.shared,
            GpuResource::Fraction => &mut self.fraction,
            GpuResource::Mig(p) => self.mig.entry(p.clone()).or_insert(0),
        }
    }

    pub fn set(&mut self, r: &GpuResource, n: u64) {
        *self.slot(r) = n;
    }

    /// `self += other`, per currency, checked (`self` is unchanged on overflow).
    pub fn add(&mut self, other: &Gpus) -> Result<(), TooLarge> {
        if other.mig.is_empty() {
            // Whole GPUs and shares only (almost every pod): no map to copy.
            return self.add_counts(other);
        }
        let mut out = self.clone();
        out.add_counts(other)?;
        for (p, n) in &other.mig {
            sum::add_to(out.mig.entry(p.clone()).or_insert(0), *n)?;
        }
        *self = out;
        Ok(())
    }

    /// `self += other` for every count besides MIG, checked (`self` unchanged on overflow).
    fn add_counts(&mut self, other: &Gpus) -> Result<(), TooLarge> {
        let mut c = [
            self.whole,
            self.shared,
            self.fraction,
            self.fraction_centi,
            self.fraction_memory,
        ];
        let o = [
            other.whole,
            other.shared,
            other.fraction,
            other.fraction_centi,
            other.fraction_memory,
        ];
        for (a, b) in c.iter_mut().zip(o) {
            sum::add_to(a, b)?;
        }
        [
            self.whole,
            self.shared,
            self.fraction,
            self.fraction_centi,
            self.fraction_memory,
        ] = c;
        Ok(())
    }

    /// Per-currency maximum, as the scheduler takes it for init containers.
    pub fn max_with(&mut self, other: &Gpus) {
        self.whole = self.whole.max(other.whole);
        self.shared = self.shared.max(other.shared);
        self.fraction = self.fraction.max(other.fraction);
        self.fraction_centi = self.fraction_centi.max(other.fraction_centi);
        self.fraction_memory = self.fraction_memory.max(other.fraction_memory);
        for (p, n) in &other.mig {
            let slot = self.mig.entry(p.clone()).or_insert(0);
            *slot = (*slot).max(*n);
        }
    }

    /// `self × factor`, per currency, checked.
    pub fn scaled(&self, factor: u64) -> Result<Gpus, TooLarge> {
        Ok(Gpus {
            whole: sum::mul(self.whole, factor)?,
            shared: sum::mul(self.shared, factor)?,
            fraction: sum::mul(self.fraction, factor)?,
            fraction_centi: sum::mul(self.fraction_centi, factor)?,
            fraction_memory: sum::mul(self.fraction_memory, factor)?,
            mig: self
                .mig
                .iter()
                .map(|(p, n)| Ok((p.clone(), sum::mul(*n, factor)?)))
                .collect::<Result<_, TooLarge>>()?,
        })
    }

    /// Saturating per-currency difference.
    pub fn minus(&self, other: &Gpus) -> Gpus {
        Gpus {
            whole: self.whole.saturating_sub(other.whole),
            shared: self.shared.saturating_sub(other.shared),
            fraction: self.fraction.saturating_sub(other.fraction),
            fraction_centi: self.fraction_centi.saturating_sub(other.fraction_centi),
            fraction_memory: self.fraction_memory.saturating_sub(other.fraction_memory),
            mig: self
                .mig
                .iter()
                .map(|(p, n)| {
                    (
                        p.clone(),
                        n.saturating_sub(other.mig.get(p).copied().unwrap_or(0)),
                    )
                })
                .collect(),
        }
    }
}

/// The GPU entries of one resource map (`requests`, `limits`, `capacity`, `overhead`, …), in the order
/// written. Keeping presence (not just the value) matters: a container's GPU request falls back to its
/// limit only when the request is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuList(pub Vec<(GpuResource, u64)>);

impl GpuList {
    pub fn get(&self, r: &GpuResource) -> Option<u64> {
        self.0.iter().find(|(k, _)| k == r).map(|&(_, n)| n)
    }

    pub fn to_gpus(&self) -> Gpus {
        let mut g = Gpus::default();
        for (r, n) in &self.0 {
            g.set(r, *n);
        }
        g
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for GpuList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = GpuList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of resource names to quantities")
            }
            fn visit_unit<E: de::Error>(self) -> Result<GpuList, E> {
                Ok(GpuList::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<GpuList, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match GpuResource::classify(&key) {
                        Some(r) => {
                            let n = map.next_value::<GpuCount>()?.0;
                            out.push((r, n));
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                // Kept per container of every pod: exactly its length (see `types::exact`).
                out.shrink_to_fit();
                Ok(GpuList(out))
            }
        }
        deserializer.deserialize_any(ListVisitor)
    }
}

/// A GPU quantity that must be a whole number. A fractional value is an input error at the parser's
/// position; the reader leads its message with the object and field it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuCount(pub u64);

impl<'de> Deserialize<'de> for GpuCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let q = Quantity::deserialize(deserializer)?;
        q.whole().map(GpuCount).ok_or_else(|| {
            de::Error::custom(format!(
                "GPU quantity {q} is not a whole number (extended resources such as nvidia.com/gpu must be non-negative integers)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_gpu_entries() {
        let l: GpuList = serde_json::from_str(
            r#"{"cpu":"500m","memory":"1Gi","nvidia.com/gpu":"8","nvidia.com/mig-1g.10gb":2,"nvidia.com/gpu.shared":"4","example.com/foo":"1"}"#,
        )
        .unwrap();
        let g = l.to_gpus();
        assert_eq!(g.whole, 8);
        assert_eq!(g.shared, 4);
        assert_eq!(g.mig.get("1g.10gb"), Some(&2));
        assert_eq!(l.0.len(), 3);
    }

    #[test]
    fn fractional_gpu_is_an_error() {
        let e = serde_json::from_str::<GpuList>(r#"{"nvidia.com/gpu": "0.5"}"#).unwrap_err();
        assert!(e.to_string().contains("not a whole number"), "{e}");
        // A fractional CPU is fine: it is not a GPU.
        assert!(serde_json::from_str::<GpuList>(r#"{"cpu": "0.5"}"#).is_ok());
    }

    #[test]
    fn arithmetic_is_per_currency() {
        let mut a = Gpus::whole(2);
        a.mig.insert("1g.10gb".into(), 3);
        let mut b = Gpus::whole(5);
        b.shared = 1;
        a.max_with(&b);
        assert_eq!((a.whole, a.shared, a.mig["1g.10gb"]), (5, 1, 3));
        a.add(&b).unwrap();
        assert_eq!((a.whole, a.shared), (10, 2));
        assert_eq!(a.scaled(2).unwrap().whole, 20);
        assert_eq!(a.scaled(u64::MAX), Err(TooLarge));
        assert_eq!(a.add(&Gpus::whole(u64::MAX)), Err(TooLarge));
        assert_eq!(a.whole, 10, "unchanged on overflow");
        assert_eq!(a.minus(&Gpus::whole(30)).whole, 0);
    }
}
