//! A GPU shape as people read it in tables: its roles (`decode 10×8 + prefill 10×8 = 160`), what
//! is unknown and why (a DRA claim that cannot be counted, a field that names GPUs without a
//! count), and the MIG slices and shared GPUs it holds besides whole GPUs — never hidden behind "no
//! whole GPUs". Used by the inventory's, drift's and render's workload rows.

use crate::workload::GpuShape;

/// A live workload's shape as the report shows it.
pub(crate) fn shape_text(shape: &GpuShape) -> String {
    // GPUs a DRA claim cannot count yet (`allocationMode: All`, a shared device) are unknown,
    // never "no GPUs": the row's `dra.uncounted` says why. Without a claim, the field that named
    // GPUs without a count says it.
    let why = if shape.devices.through_claims {
        "DRA: see uncounted".to_string()
    } else {
        shape.devices.unknown.join("; ")
    };
    // MIG slices and other devices are never whole GPUs, and never hidden behind "no whole GPUs".
    let others = others_text(&shape.devices.other);
    match (shape.roles.is_empty(), shape.devices.unknown.is_empty()) {
        (true, false) => format!("unknown GPUs ({why})"),
        (true, true) => others.unwrap_or_else(|| "no whole GPUs".to_string()),
        (false, false) => format!("{shape} + unknown GPUs ({why})"),
        (false, true) => match others {
            Some(o) => format!("{shape} + {o}"),
            None => shape.to_string(),
        },
    }
}

/// `16 MIG slices (8 × 1g.5gb, 4 × 2g.10gb, 4 × 3g.20gb)`, time-sliced GPUs (`6 shared GPUs
/// (nvidia.com/gpu.shared)`), then each other device by its DRA class (`2 × gpu.example.com`);
/// `None` when there is none.
fn others_text(other: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    const MIG: &str = "nvidia.com/mig-";
    let mig: Vec<(&str, u64)> = other
        .iter()
        .filter_map(|(k, n)| Some((k.strip_prefix(MIG)?, *n)))
        .collect();
    let mut parts = Vec::new();
    if !mig.is_empty() {
        let total = mig.iter().fold(0u64, |a, (_, n)| a.saturating_add(*n));
        let each: Vec<String> = mig.iter().map(|(p, n)| format!("{n} × {p}")).collect();
        parts.push(format!(
            "{} ({})",
            crate::util::text::count(total, "MIG slice"),
            each.join(", ")
        ));
    }
    for (k, n) in other.iter().filter(|(k, _)| !k.starts_with(MIG)) {
        parts.push(if k == crate::k8s::gpus::SHARED_GPU {
            format!("{} ({k})", crate::util::text::count(*n, "shared GPU"))
        } else {
            format!("{n} × {k}")
        });
    }
    (!parts.is_empty()).then(|| parts.join(" + "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    /// A GPU an unmodelled kind names without a count is unknown, said by the field that named
    /// it — not blamed on DRA, which it does not use.
    #[test]
    fn a_gpu_named_without_a_count_says_which_field() {
        let crd = "apiVersion: example.com/v1\nkind: Render\nmetadata: {name: r, namespace: ml}\nspec:\n  gpu: {type: nvidia.com/gpu, min: 1, max: 4}\n";
        let objs = read_str(crd, "t.yaml").unwrap();
        let shape = crate::workload::kinds::declared_shape(&objs[0])
            .unwrap()
            .unwrap();
        let text = shape_text(&shape);
        assert!(
            text.contains("unknown GPUs (spec.gpu names nvidia.com/gpu without a count"),
            "{text}"
        );
        assert!(!text.contains("DRA"), "{text}");
    }

    /// MIG slices and shared GPUs are named in a shape, never hidden behind "no whole GPUs".
    #[test]
    fn mig_slices_and_shared_gpus_are_named_in_the_shape() {
        let d = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ml}\nspec:\n  replicas: 4\n  template:\n    spec:\n      containers:\n      - {name: a, resources: {limits: {nvidia.com/mig-1g.10gb: 2, nvidia.com/mig-3g.40gb: 1, nvidia.com/gpu.shared: 1}}}\n";
        let objs = read_str(d, "t.yaml").unwrap();
        let shape = crate::workload::kinds::declared_shape(&objs[0])
            .unwrap()
            .unwrap();
        assert_eq!(
            shape_text(&shape),
            "12 MIG slices (8 × 1g.10gb, 4 × 3g.40gb) + 4 shared GPUs (nvidia.com/gpu.shared)"
        );
    }
}
