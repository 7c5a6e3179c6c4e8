//! The devices the DRA drivers publish, from the input's ResourceSlices: each by its
//! `(driver, pool, device)` triple, with the node it is on.
//!
//! A pool may span several slices. A driver that changes a pool bumps `generation` on all of
//! its slices, and a consumer uses only the slices of the highest generation, the pool being
//! complete once it has seen `resourceSliceCount` of them (`kubernetes/api`
//! `resource/v1/types.go`, `ResourcePool`). An incomplete pool is named, so capacity read from
//! it is known to be short.

use std::collections::{BTreeMap, HashMap};

use crate::k8s::dra::{SliceDevice, SliceSpec};
use crate::k8s::object::{Body, Object};

/// One published device.
#[derive(Debug, Clone, Copy)]
pub struct SlicedDevice<'a> {
    pub driver: &'a str,
    pub pool: &'a str,
    pub device: &'a SliceDevice,
    /// The node it is on: the slice's `nodeName`, or the device's own with per-device node
    /// selection; `None` for devices reachable from several nodes.
    pub node: Option<&'a str>,
}

/// The devices of the input's slices, at each pool's newest generation.
#[derive(Debug, Default)]
pub struct SliceDevices<'a> {
    /// Index into `list`.
    by_id: HashMap<(&'a str, &'a str, &'a str), usize>,
    /// In the order read.
    list: Vec<SlicedDevice<'a>>,
    /// Pools that have fewer slices than they say at their newest generation: `driver/pool`.
    pub incomplete: Vec<String>,
}

impl<'a> SliceDevices<'a> {
    pub fn new(objects: &'a [Object]) -> SliceDevices<'a> {
        let slices: Vec<&SliceSpec> = objects
            .iter()
            .filter_map(|o| match &o.body {
                Body::Slice(s) => Some(&**s),
                _ => None,
            })
            .collect();
        // The newest generation of each pool, and how many of its slices are in the input.
        let mut pools: BTreeMap<(&str, &str), (i64, i64, i64)> = BTreeMap::new();
        for s in &slices {
            let p = &s.pool;
            let e = pools
                .entry((s.driver.as_str(), p.name.as_str()))
                .or_insert((p.generation, 0, p.resource_slice_count));
            if p.generation > e.0 {
                *e = (p.generation, 0, p.resource_slice_count);
            }
            if p.generation == e.0 {
                e.1 += 1;
            }
        }
        let mut out = SliceDevices::default();
        for ((driver, pool), (_, seen, want)) in &pools {
            if seen < want {
                out.incomplete.push(format!("{driver}/{pool}"));
            }
        }
        for s in slices {
            let newest = pools
                .get(&(s.driver.as_str(), s.pool.name.as_str()))
                .is_some_and(|e| e.0 == s.pool.generation);
            if !newest {
                continue;
            }
            for d in &s.devices {
                let sliced = SlicedDevice {
                    driver: &s.driver,
                    pool: &s.pool.name,
                    device: d,
                    node: s.node_name.as_deref().or(d.node_name.as_deref()),
                };
                // Device names are unique within a pool: a repeat is the same device.
                let at = out.list.len();
                if let std::collections::hash_map::Entry::Vacant(e) =
                    out.by_id.entry((&s.driver, &s.pool.name, &d.name))
                {
                    e.insert(at);
                    out.list.push(sliced);
                }
            }
        }
        out
    }

    pub fn get(&self, driver: &str, pool: &str, device: &str) -> Option<&SlicedDevice<'a>> {
        let i = *self.by_id.get(&(driver, pool, device))?;
        self.list.get(i)
    }

    /// Every device, in the order read.
    pub fn iter(&self) -> impl Iterator<Item = &SlicedDevice<'a>> {
        self.list.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}
