//! Well-known labels that name a workload's root when the owners are missing from the input.

pub const DYNAMO_GRAPH: &str = "nvidia.com/dynamo-graph-deployment-name";
pub const DYNAMO_COMPONENT: &str = "nvidia.com/dynamo-component";
pub const DYNAMO_COMPONENT_TYPE: &str = "nvidia.com/dynamo-component-type";
pub const DYNAMO_SUB_COMPONENT_TYPE: &str = "nvidia.com/dynamo-sub-component-type";
pub const LWS_NAME: &str = "leaderworkerset.sigs.k8s.io/name";
pub const KSERVE_ISVC: &str = "serving.kserve.io/inferenceservice";
pub const LLMD_ROLE: &str = "llm-d.ai/role";
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
