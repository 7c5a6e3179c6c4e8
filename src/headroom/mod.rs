//! Serving headroom: how much more a serving workload can take, from the only honest source of a
//! capacity figure, a load test at fixed model, hardware and settings.
//!
//! [`loadtest`] reads the result files serving teams already have (vLLM `bench serve`, AIPerf and
//! GenAI-Perf, GuideLLM) into one shape: what was tested (model, GPUs, replicas, settings, where
//! the format records them) and one [`loadtest::Run`] per offered load. [`loadtest::capacity`]
//! applies the rule: the tested capacity is the highest sustained request rate of a run that met
//! every bound of the latency objective and stayed within the error limit. A percentile the file
//! does not report is never interpolated from the ones it does: the capacity is then unknown with
//! that reason. What production asks for comes from Prometheus (`live::serving`); the join and the
//! verdict are `analysis::headroom`.

pub mod loadtest;
