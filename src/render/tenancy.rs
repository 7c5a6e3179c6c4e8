//! Where tenants came from, in one line: which namespaces took their tenant from the cluster's
//! Namespace labels, which from Git's Namespace objects, which from the tenancy rules alone — and,
//! where the cluster names another tenant than Git alone would, that it knows more.

use std::collections::BTreeMap;

use crate::doc::Text;
use crate::report::{ClusterOnlyTenant, TenantSource};
use crate::util::text::count;

/// Namespaces named in full before the rest are counted.
const NAMED: usize = 6;

/// `Tenants: from the cluster's labels for llm-prod, research; by the tenancy rules for batch.
/// The cluster knows more than Git for llm-prod (chat; Git alone: llm-prod).` `None` without
/// namespaces.
pub fn line(
    sources: &BTreeMap<String, TenantSource>,
    differ: &[ClusterOnlyTenant],
) -> Option<Text> {
    if sources.is_empty() {
        return None;
    }
    let names = |from: TenantSource| {
        let ns: Vec<&str> = sources
            .iter()
            .filter(|(_, s)| **s == from)
            .map(|(n, _)| n.as_str())
            .collect();
        let first: Vec<&str> = ns.iter().take(NAMED).copied().collect();
        match ns.len() {
            0 => None,
            n if n <= NAMED => Some(first.join(", ")),
            n => Some(format!("{} and {} more", first.join(", "), n - NAMED)),
        }
    };
    let parts: Vec<String> = [
        (TenantSource::Cluster, "from the cluster's Namespace labels"),
        (TenantSource::Git, "from Git's Namespace objects"),
        (TenantSource::Rules, "by the tenancy rules"),
    ]
    .into_iter()
    .filter_map(|(s, how)| names(s).map(|n| format!("{how} for {n}")))
    .collect();
    let mut text = format!("Tenants: {}.", parts.join("; "));
    if !differ.is_empty() {
        let named: Vec<String> = differ
            .iter()
            .map(|t| format!("{} ({}; Git alone: {})", t.namespace, t.cluster, t.git))
            .collect();
        text.push_str(&format!(
            " The cluster knows more than Git for {}: {}.",
            count(named.len() as u64, "namespace"),
            named.join(", ")
        ));
    }
    Some(Text::new().emph(text))
}
