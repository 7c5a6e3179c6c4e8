//! The answers of the DCGM queries read as GPUs: each series' statistics over the window grouped by
//! the physical GPU (or MIG instance) they describe, judged sound or not, and the profiling metric
//! replaced by `DCGM_FI_DEV_GPU_UTIL` for a GPU whose profiling samples cannot be read.
//!
//! A GPU is one key — its cluster labels, node, device index, UUID and MIG instance — whatever
//! pods its series name: a pod replaced inside the window leaves two series of one GPU, and the
//! GPU is counted once, with the mean of all its samples (each series' average weighted by its
//! sample count) and each pod's part of it. Series that differ only in scrape labels (two jobs
//! scraping one exporter, an exporter restarted inside the window) fall into the same key and the
//! same pod, so they add samples, not GPUs.
//!
//! A series is sound when its average is finite and its lowest and highest samples are inside
//! 0..=1 (a hair of rounding allowed): one NaN or +Inf sample makes `avg_over_time` non-finite, and
//! a negative or above-100% sample is a broken exporter, not a number to clamp. A GPU with any
//! unsound series falls back to its `DCGM_FI_DEV_GPU_UTIL` series (not for a MIG instance, which
//! that metric does not describe); when those are unsound or absent too, the GPU is unknown.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    CLUSTER_LABELS, GPU_UTIL, GR_ENGINE_ACTIVE, GpuActivity, GpuId, Holder, STAT_LABEL, Sample,
    ScrapeJobs, UnsoundGpu, non_empty,
};

/// How far outside 0..=1 a sample may be before it is out of range (float rounding in exporters).
const SLACK: f64 = 1e-6;

/// The four statistics of one series; `None` where the answer had none.
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    avg: Option<f64>,
    count: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
}

/// Sorts `2` before `10`: numbers by value, then anything else by text.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
struct NaturalKey(Option<u64>, String);

impl NaturalKey {
    fn new(s: &str) -> NaturalKey {
        NaturalKey(s.parse().ok(), s.to_string())
    }
}

/// What makes one GPU (or MIG instance), in the order the read is sorted by.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
struct Key {
    scope: BTreeMap<String, String>,
    node: Option<String>,
    gpu: NaturalKey,
    uuid: Option<String>,
    mig_instance: Option<NaturalKey>,
    mig_profile: Option<String>,
}

impl Key {
    /// The physical GPU a MIG instance is part of.
    fn whole(&self) -> Key {
        Key {
            mig_instance: None,
            mig_profile: None,
            ..self.clone()
        }
    }

    fn id(&self) -> GpuId {
        GpuId {
            scope: self.scope.clone(),
            node: self.node.clone(),
            gpu: self.gpu.1.clone(),
            uuid: self.uuid.clone(),
            mig_profile: self.mig_profile.clone(),
            mig_instance: self.mig_instance.as_ref().map(|i| i.1.clone()),
        }
    }
}

/// A pod on a GPU: namespace, pod, container (all `None`: no pod).
type Pod = (Option<String>, Option<String>, Option<String>);

/// The series of one metric's answer by GPU, each with its pod and statistics (divided by
/// `per_unit`, so that they are ratios: 100 for a percentage).
fn by_gpu(samples: &[Sample], per_unit: f64) -> BTreeMap<Key, Vec<(Pod, Stats)>> {
    let mut series: BTreeMap<BTreeMap<String, String>, Stats> = BTreeMap::new();
    for s in samples {
        let mut labels = s.metric.clone();
        let Some(stat) = labels.remove(STAT_LABEL) else {
            continue;
        };
        let value = s.value.1.trim().parse::<f64>().ok();
        let entry = series.entry(labels).or_default();
        match stat.as_str() {
            "avg" => entry.avg = value.map(|v| v / per_unit),
            "count" => entry.count = value,
            "min" => entry.min = value.map(|v| v / per_unit),
            "max" => entry.max = value.map(|v| v / per_unit),
            _ => {}
        }
    }
    let jobs = ScrapeJobs::of(series.keys());
    let mut out: BTreeMap<Key, Vec<(Pod, Stats)>> = BTreeMap::new();
    for (m, stats) in &series {
        let uuid = non_empty(m, "UUID");
        let gpu = non_empty(m, "gpu")
            .or_else(|| uuid.clone())
            .unwrap_or_default();
        let pod = (
            jobs.workload_label(m, "namespace"),
            jobs.workload_label(m, "pod"),
            jobs.workload_label(m, "container"),
        );
        // Only a plain (unrenamed) label can name the exporter itself; then none of the three is
        // the workload's.
        let exporter =
            pod.1.as_deref().is_some_and(is_exporter_pod) && non_empty(m, "exported_pod").is_none();
        let pod = if exporter { (None, None, None) } else { pod };
        let key = Key {
            scope: CLUSTER_LABELS
                .iter()
                .filter_map(|l| non_empty(m, l).map(|v| (l.to_string(), v)))
                .collect(),
            node: non_empty(m, "Hostname").or_else(|| non_empty(m, "hostname")),
            gpu: NaturalKey::new(&gpu),
            uuid,
            mig_instance: non_empty(m, "GPU_I_ID").map(|i| NaturalKey::new(&i)),
            mig_profile: non_empty(m, "GPU_I_PROFILE"),
        };
        out.entry(key).or_default().push((pod, *stats));
    }
    out
}

/// The DCGM exporter's own pod (GPU operator `nvidia-dcgm-exporter-…`, Helm chart `dcgm-exporter-…`)
/// under a plain `pod` label is the scrape target, never a workload.
fn is_exporter_pod(pod: &str) -> bool {
    pod.contains("dcgm-exporter")
}

/// One GPU's series judged: its activity and holders, or what is wrong with them.
enum Judged {
    Sound {
        activity: f64,
        holders: Vec<Holder>,
        metric: &'static str,
    },
    Unsound(String),
}

/// Why one series is not activity, or `None` when it is.
fn problem(s: &Stats) -> Option<String> {
    let (Some(avg), Some(count), Some(min), Some(max)) = (s.avg, s.count, s.min, s.max) else {
        return Some("a series without all of its statistics".into());
    };
    let pct = |v: f64| format!("{:.0}%", v * 100.0);
    if !avg.is_finite() || !min.is_finite() || !max.is_finite() {
        Some("NaN or ±Inf samples".into())
    } else if !(count.is_finite() && count >= 1.0) {
        Some("no samples".into())
    } else if min < -SLACK {
        Some(format!("samples below 0% (lowest {})", pct(min)))
    } else if max > 1.0 + SLACK {
        Some(format!("samples above 100% (highest {})", pct(max)))
    } else {
        None
    }
}

fn judge(parts: &[(Pod, Stats)], metric: &'static str) -> Judged {
    let problems: BTreeSet<String> = parts.iter().filter_map(|(_, s)| problem(s)).collect();
    if !problems.is_empty() {
        return Judged::Unsound(problems.into_iter().collect::<Vec<_>>().join(", "));
    }
    // Every statistic is present and finite here.
    let weight = |s: &Stats| s.count.unwrap_or(0.0);
    let sum = |s: &Stats| s.avg.unwrap_or(0.0) * weight(s);
    let samples: f64 = parts.iter().map(|(_, s)| weight(s)).sum();
    let mut by_pod: BTreeMap<&Pod, (f64, f64)> = BTreeMap::new();
    for (pod, s) in parts {
        let e = by_pod.entry(pod).or_default();
        e.0 += sum(s);
        e.1 += weight(s);
    }
    let share = |x: f64| if samples > 0.0 { x / samples } else { 0.0 };
    let mut holders: Vec<Holder> = by_pod
        .into_iter()
        .map(|(pod, (sum, n))| Holder {
            namespace: pod.0.clone(),
            pod: pod.1.clone(),
            container: pod.2.clone(),
            activity: share(sum).clamp(0.0, 1.0),
            samples: n,
        })
        .collect();
    holders.sort_by(|a, b| {
        b.activity
            .total_cmp(&a.activity)
            .then(b.samples.total_cmp(&a.samples))
            .then_with(|| (&a.namespace, &a.pod).cmp(&(&b.namespace, &b.pod)))
    });
    let total: f64 = parts.iter().map(|(_, s)| sum(s)).sum();
    Judged::Sound {
        activity: share(total).clamp(0.0, 1.0),
        holders,
        metric,
    }
}

/// The pods of a GPU whose activity is not known.
fn named(parts: &[(Pod, Stats)]) -> Vec<Holder> {
    let pods: BTreeSet<&Pod> = parts.iter().map(|(p, _)| p).collect();
    pods.into_iter()
        .filter(|p| p.1.is_some())
        .map(|p| Holder {
            namespace: p.0.clone(),
            pod: p.1.clone(),
            container: p.2.clone(),
            activity: 0.0,
            samples: 0.0,
        })
        .collect()
}

/// The GPUs of both answers: the profiling metric where it is sound, else `DCGM_FI_DEV_GPU_UTIL`
/// for that GPU, else unknown. Sorted by cluster, node, GPU and MIG instance.
pub(super) fn merge(active: &[Sample], util: &[Sample]) -> (Vec<GpuActivity>, Vec<UnsoundGpu>) {
    let active = by_gpu(active, 1.0);
    let util = by_gpu(util, 100.0);
    // A GPU split into MIG instances: its whole-GPU utilisation describes none of them.
    let split: BTreeSet<Key> = active
        .keys()
        .filter(|k| k.mig_instance.is_some())
        .map(Key::whole)
        .collect();
    let mut gpus: Vec<(Key, GpuActivity)> = Vec::new();
    let mut unsound: Vec<(Key, UnsoundGpu)> = Vec::new();
    // The GPU from `metric`, or unknown with `why`.
    let mut take = |key: &Key, parts: &[(Pod, Stats)], read: Result<Judged, String>| match read {
        Ok(Judged::Sound {
            activity,
            holders,
            metric,
        }) => gpus.push((
            key.clone(),
            GpuActivity {
                id: key.id(),
                activity,
                holders,
                metric,
            },
        )),
        Ok(Judged::Unsound(why)) | Err(why) => unsound.push((
            key.clone(),
            UnsoundGpu {
                id: key.id(),
                holders: named(parts),
                reason: why,
            },
        )),
    };
    for (key, parts) in &active {
        let why = match judge(parts, GR_ENGINE_ACTIVE) {
            sound @ Judged::Sound { .. } => {
                take(key, parts, Ok(sound));
                continue;
            }
            Judged::Unsound(why) => format!("{GR_ENGINE_ACTIVE}: {why}"),
        };
        let read = match util.get(key) {
            _ if key.mig_instance.is_some() => Err(format!(
                "{why}; a MIG instance has no other activity metric"
            )),
            None => Err(format!("{why}; no {GPU_UTIL} series to fall back to")),
            Some(up) => match judge(up, GPU_UTIL) {
                Judged::Unsound(w) => Err(format!("{why}; {GPU_UTIL}: {w}")),
                sound => Ok(sound),
            },
        };
        take(key, parts, read);
    }
    for (key, parts) in &util {
        if active.contains_key(key) || split.contains(key) {
            continue;
        }
        let read = match judge(parts, GPU_UTIL) {
            Judged::Unsound(w) => Err(format!("{GPU_UTIL}: {w}")),
            sound => Ok(sound),
        };
        take(key, parts, read);
    }
    gpus.sort_by(|a, b| a.0.cmp(&b.0));
    unsound.sort_by(|a, b| a.0.cmp(&b.0));
    (
        gpus.into_iter().map(|(_, g)| g).collect(),
        unsound.into_iter().map(|(_, u)| u).collect(),
    )
}
