//! `tenancy:` of `.gpuledger.yaml`: which labels name a workload's tenant and product line
//! (workload labels, then namespace labels, then a fallback), and who to call for each tenant. A
//! partial section keeps every default it does not override.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(from = "TenancyFile")]
pub struct Tenancy {
    pub tenant: Resolution,
    pub product_line: Resolution,
    /// Who to call, per tenant: `chat: "@team-chat"`. Wins over the namespaces' keys.
    pub contacts: std::collections::BTreeMap<String, String>,
    /// The namespace annotations or labels that name a tenant's contact, first match wins
    /// (annotation before label for each key).
    pub contact_keys: Vec<String>,
    /// At or above this utilisation (requested / placeable) the headline names the largest
    /// tenants and who to call.
    pub contacts_above: f64,
}

/// `tenancy.contact_keys` when not given: the project's own key, then the usual conventions.
pub const DEFAULT_CONTACT_KEYS: [&str; 3] = ["gpuledger.io/contact", "owner", "team"];
/// `tenancy.contacts_above` when not given.
pub const DEFAULT_CONTACTS_ABOVE: f64 = 0.9;

/// `tenancy:` as written: every field optional, so a partial section keeps each default it does not
/// override (giving `workload_labels` must not drop the namespace label lookup).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TenancyFile {
    tenant: ResolutionFile,
    product_line: ResolutionFile,
    contacts: std::collections::BTreeMap<String, String>,
    contact_keys: Option<Vec<String>>,
    contacts_above: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ResolutionFile {
    workload_labels: Option<Vec<String>>,
    namespace_labels: Option<Vec<String>>,
    fallback: Option<Fallback>,
}

impl ResolutionFile {
    fn over(self, d: Resolution) -> Resolution {
        Resolution {
            workload_labels: self.workload_labels.unwrap_or(d.workload_labels),
            namespace_labels: self.namespace_labels.unwrap_or(d.namespace_labels),
            fallback: self.fallback.or(d.fallback),
        }
    }
}

impl From<TenancyFile> for Tenancy {
    fn from(f: TenancyFile) -> Tenancy {
        let d = Tenancy::default();
        Tenancy {
            tenant: f.tenant.over(d.tenant),
            product_line: f.product_line.over(d.product_line),
            contacts: f.contacts,
            contact_keys: f.contact_keys.unwrap_or(d.contact_keys),
            contacts_above: f.contacts_above.unwrap_or(d.contacts_above),
        }
    }
}

impl Default for Tenancy {
    fn default() -> Self {
        Tenancy {
            tenant: Resolution {
                workload_labels: vec!["tenant".into()],
                namespace_labels: vec!["tenant".into()],
                fallback: Some(Fallback::Namespace),
            },
            product_line: Resolution {
                workload_labels: vec!["product-line".into()],
                namespace_labels: vec!["product-line".into()],
                fallback: Some(Fallback::None),
            },
            contacts: std::collections::BTreeMap::new(),
            contact_keys: DEFAULT_CONTACT_KEYS.map(String::from).to_vec(),
            contacts_above: DEFAULT_CONTACTS_ABOVE,
        }
    }
}

/// How one attribute (tenant, product line) is resolved: the first workload label that is set, then
/// the first namespace label, then the fallback.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    #[serde(default)]
    pub workload_labels: Vec<String>,
    #[serde(default)]
    pub namespace_labels: Vec<String>,
    /// Unset: the namespace name for tenants, nothing for product lines.
    #[serde(default)]
    pub fallback: Option<Fallback>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// The namespace name.
    Namespace,
    /// No value.
    None,
}
