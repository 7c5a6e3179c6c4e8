//! Load-test result files, read into one shape: the only honest source of a serving workload's
//! capacity, a load test at fixed model, hardware and settings.
//!
//! The read follows the data: [`repo`] resolves the paths the workloads' intents name
//! (`gpuledger.io/load-test`, or an `intent:` rule's `load-test`) inside the repository and reads
//! each once ([`at_ref`]: from git's objects at a change's head ref); [`file`] reads one file (or a directory as one sweep) and tells the formats apart by
//! their shape rather than their file name (people rename files); [`vllm`], [`aiperf`] and
//! [`guidellm`] read what each tool wrote into [`types`]' one shape: what was tested (model, GPUs,
//! replicas, settings, where the format records them) and one [`Run`] per offered load.
//! [`capacity`] then applies the tested-capacity rule: the highest sustained request rate of a run
//! that met every bound of the latency objective and stayed within the error limit. A percentile
//! the file does not report is never interpolated from the ones it does: the capacity is then
//! unknown with that reason.
//!
//! What was tested is read where the format records it: the model always; GPU type, GPUs per
//! replica, replicas and serving settings only where the file carries them. What a file does not
//! record cannot be checked against the live workload, and the report says so instead of assuming
//! it matches. What production asks for comes from Prometheus ([`super::serving`]); the join and
//! the verdict are `analysis::headroom`, which takes what is read here as plain data.

mod aiperf;
mod at_ref;
mod capacity;
mod fields;
mod file;
mod guidellm;
mod repo;
mod types;
mod vllm;

pub use at_ref::read_load_tests_at;
pub use capacity::{Capacity, NoCapacity, capacity};
pub use file::{parse, read};
pub use repo::{LoadTestError, LoadTests, read_load_tests};
pub use types::{Format, LoadTest, Offered, Run, SETTINGS, Tested};

#[cfg(test)]
mod tests;
