//! Cost from OpenCost: the allocation API (`GET /allocation`) over a window, and the inference
//! cost API (`GET /inferenceCost/total`) where the server has it.
//!
//! One allocation query per run, aggregated by `namespace,controllerKind,controller,pod` and
//! accumulated over the window, with `includeIdle=true` and `shareIdle=false`: gpuledger needs each
//! pod to find its workload (OpenCost's controller is the pod's immediate one, a StatefulSet where
//! gpuledger sees a LeaderWorkerSet), and the idle cost as its own `__idle__` entry so that the
//! report can spread it by a rule it states (OpenCost's HTTP API cannot share namespaces, so that
//! is done by the analysis too). The window is sent as an RFC 3339 pair, so that it is the same
//! window outcomes are counted over.
//!
//! OpenCost's wire format changed over time, and both generations are read: GPU request and usage
//! averages are top-level fields in older versions and only inside `gpuAllocation` in newer ones.
//! Label keys come Prometheus-sanitised (`gpuledger.io/tenant` → `gpuledger_io_tenant`); see
//! [`sanitize_label`]. A figure OpenCost could not compute arrives as `null`, the string `"NaN"`,
//! or (from some encoders) a bare `NaN` token that is not JSON: all three are read as unknown,
//! never as zero. A server error, an error body or a body that is not an allocation response is an
//! `Err` with the reason, so that the caller reports cost as unknown; the transport is
//! [`super::http`]'s, the same client Prometheus is read with.
//!
//! The read follows the data: [`read()`] asks the server (the transport is [`super::http`]'s) and
//! judges its status; [`wire`] turns the bodies of both API generations into [`types`]' plain
//! allocations and inference costs.

mod read;
mod types;
mod wire;

pub use read::read;
pub use types::{
    Allocation, AnswerError, CostData, Costs, Coverage, InferenceCost, OpenCostError,
    OpenCostSource, Window,
};
pub use wire::{
    AllocationAnswer, parse_allocations, parse_answer, parse_inference, sanitize_label, without_nan,
};

#[cfg(test)]
mod tests;
