//! The Prometheus series gpuledger exports and later reads back: `gpuledger serve` writes them
//! (`crate::render::prometheus`) and `gpuledger trend` queries them (`crate::pipeline::trend`), so
//! their names, labels and label values are one set of constants beside both — a rename on one
//! side is a rename on the other.

/// Whole GPUs per tenant, labelled [`TENANT`] and [`STATE`].
pub const TENANT_GPUS: &str = "gpuledger_tenant_gpus";
/// Whole GPUs per product line, labelled [`PRODUCT_LINE`] and [`STATE`].
pub const PRODUCT_LINE_GPUS: &str = "gpuledger_product_line_gpus";

/// The tenant's name.
pub const TENANT: &str = "tenant";
/// The product line's name ([`NO_PRODUCT_LINE`] for workloads without one).
pub const PRODUCT_LINE: &str = "product_line";
/// Which GPUs a sample counts: [`REQUESTED`], `pending`, `declared` or [`USED`].
pub const STATE: &str = "state";
/// Bound pods' GPUs.
pub const REQUESTED: &str = "requested";
/// GPUs busy per DCGM.
pub const USED: &str = "used";

/// The name a product line is shown and exported under when a workload has none: Kubernetes label
/// values cannot hold parentheses, so no real product line can take this name.
pub const NO_PRODUCT_LINE: &str = "(none)";

/// `sum by (tenant) (gpuledger_tenant_gpus{state="requested"})`: a family's GPUs in `state`,
/// summed by `by`.
pub fn sum_by(family: &str, by: &str, state: &str) -> String {
    format!("sum by ({by}) ({family}{{{STATE}=\"{state}\"}})")
}
