//! Tenants and product lines: who a workload belongs to.
//!
//! Resolution is first match wins, each step configurable in `.gpuledger.yaml`: the workload's own
//! labels, then its namespace's labels, then a fallback (the namespace name for tenants, nothing for
//! product lines). The workload's labels are those of its root object, or of the topmost object found
//! when the root is missing from the input.
//!
//! Which Namespace objects lend their labels is decided once, by [`Resolver::of_run`]: the
//! cluster's when the live state holds the namespace, else the repository's, else none (the rules'
//! fallback). Every command resolves through it, so the same inputs give the same tenant.

use std::collections::{HashMap, HashSet};

use crate::config::{Fallback, Resolution, Tenancy};
use crate::k8s::object::{Kind, Object};
use crate::k8s::types::LabelMap;
pub use crate::report::TenantSource as Source;

/// Namespace labels, indexed once.
pub struct Resolver<'a> {
    cfg: &'a Tenancy,
    namespaces: HashMap<&'a str, &'a LabelMap>,
    annotations: HashMap<&'a str, &'a LabelMap>,
    /// The namespaces whose labels are the cluster's.
    from_cluster: HashSet<&'a str>,
}

impl<'a> Resolver<'a> {
    /// Namespace labels from `objects` alone (the live state's, or the repository's).
    pub fn new(cfg: &'a Tenancy, objects: &'a [Object]) -> Resolver<'a> {
        Resolver::of_run(cfg, objects, &[])
    }

    /// The one resolution of a run: a namespace's labels are the cluster's Namespace object when
    /// the live state (`live`) holds it, else the repository's (`git`), else none. Without a live
    /// state (`live` empty) the repository's objects decide alone.
    pub fn of_run(cfg: &'a Tenancy, live: &'a [Object], git: &'a [Object]) -> Resolver<'a> {
        let ns = |objs: &'a [Object]| objs.iter().filter(|o| o.typed_kind() == Kind::Namespace);
        let from_cluster: HashSet<&str> = ns(live).map(|o| o.meta.name.as_str()).collect();
        // Git's first, the cluster's over it.
        let chosen = || {
            ns(git)
                .filter(|o| !from_cluster.contains(o.meta.name.as_str()))
                .chain(ns(live))
        };
        let namespaces = chosen()
            .map(|o| (o.meta.name.as_str(), &o.meta.labels))
            .collect();
        let annotations = chosen()
            .map(|o| (o.meta.name.as_str(), &o.meta.annotations))
            .collect();
        Resolver {
            cfg,
            namespaces,
            annotations,
            from_cluster,
        }
    }

    /// Where `namespace`'s labels come from.
    pub fn source(&self, namespace: &str) -> Source {
        if self.from_cluster.contains(namespace) {
            Source::Cluster
        } else if self.namespaces.contains_key(namespace) {
            Source::Git
        } else {
            Source::Rules
        }
    }

    fn resolve(
        &self,
        r: &Resolution,
        default_fallback: Fallback,
        labels: &LabelMap,
        namespace: &str,
    ) -> Option<String> {
        let none = LabelMap::new();
        let ns_labels = self.namespaces.get(namespace).copied().unwrap_or(&none);
        let pick = |keys: &[String], l: &LabelMap| {
            keys.iter()
                .find_map(|k| l.get(k).filter(|v| !v.is_empty()).map(|v| v.to_string()))
        };
        pick(&r.workload_labels, labels)
            .or_else(|| pick(&r.namespace_labels, ns_labels))
            .or_else(|| match r.fallback.unwrap_or(default_fallback) {
                Fallback::Namespace => Some(namespace.to_string()),
                Fallback::None => None,
            })
    }

    /// The tenant; "(none)" only when the fallback is `none` and nothing matched.
    pub fn tenant(&self, labels: &LabelMap, namespace: &str) -> String {
        self.resolve(&self.cfg.tenant, Fallback::Namespace, labels, namespace)
            .unwrap_or_else(|| "(none)".to_string())
    }

    pub fn product_line(&self, labels: &LabelMap, namespace: &str) -> Option<String> {
        self.resolve(&self.cfg.product_line, Fallback::None, labels, namespace)
    }

    /// Who to call for `tenant`, whose workloads run in `namespaces`: the config's
    /// `tenancy.contacts` entry, else each namespace's first contact key (annotation, then
    /// label), all of them, sorted. Empty when none is known.
    pub fn contacts<'n>(
        &self,
        tenant: &str,
        namespaces: impl Iterator<Item = &'n str>,
    ) -> Vec<String> {
        if let Some(c) = self
            .cfg
            .contacts
            .get(tenant)
            .filter(|c| !c.trim().is_empty())
        {
            return vec![c.trim().to_string()];
        }
        let none = LabelMap::new();
        let mut found: Vec<String> = namespaces
            .filter_map(|ns| {
                let annotations = self.annotations.get(ns).copied().unwrap_or(&none);
                let labels = self.namespaces.get(ns).copied().unwrap_or(&none);
                self.cfg.contact_keys.iter().find_map(|k| {
                    annotations
                        .get(k)
                        .or_else(|| labels.get(k))
                        .map(|v| v.trim())
                        .filter(|v| !v.is_empty())
                        .map(str::to_string)
                })
            })
            .collect();
        found.sort();
        found.dedup();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::k8s::read::read_str;

    fn labels(pairs: &[(&str, &str)]) -> LabelMap {
        pairs.iter().copied().collect()
    }

    const NAMESPACES: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: {tenant: acme, product-line: search}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: scratch\n";

    #[test]
    fn workload_label_then_namespace_label_then_namespace_name() {
        let objs = read_str(NAMESPACES, "t").unwrap();
        let cfg = Config::default();
        let r = Resolver::new(&cfg.tenancy, &objs);
        assert_eq!(
            r.tenant(&labels(&[("tenant", "globex")]), "team-a"),
            "globex"
        );
        assert_eq!(r.tenant(&labels(&[]), "team-a"), "acme");
        assert_eq!(r.tenant(&labels(&[]), "scratch"), "scratch");
        assert_eq!(r.tenant(&labels(&[]), "not-in-snapshot"), "not-in-snapshot");
        assert_eq!(
            r.product_line(&labels(&[]), "team-a").as_deref(),
            Some("search")
        );
        assert_eq!(
            r.product_line(&labels(&[("product-line", "ads")]), "team-a")
                .as_deref(),
            Some("ads")
        );
        assert_eq!(r.product_line(&labels(&[]), "scratch"), None);
    }

    #[test]
    fn contacts_from_the_config_else_the_first_namespace_key_annotation_before_label() {
        let objs = read_str(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels: {team: team-a-label, owner: ignored}\n  annotations: {team: \"@team-a\"}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n  annotations: {gpuledger.io/contact: \"oncall@example.com\", owner: ignored}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: c\n  labels: {owner: bob}\n",
            "t",
        )
        .unwrap();
        let cfg = Config::parse("tenancy:\n  contacts: {chat: \"@team-chat\"}\n", "c").unwrap();
        let r = Resolver::new(&cfg.tenancy, &objs);
        // The first key in order wins: owner before team, and the annotation before the label.
        assert_eq!(r.contacts("x", ["a"].into_iter()), ["ignored"]);
        assert_eq!(
            r.contacts("x", ["b", "c"].into_iter()),
            ["bob", "oncall@example.com"]
        );
        assert_eq!(r.contacts("chat", ["c"].into_iter()), ["@team-chat"]);
        assert!(r.contacts("x", ["nowhere"].into_iter()).is_empty());
        let cfg = Config::parse("tenancy:\n  contact_keys: [team]\n", "c").unwrap();
        let r = Resolver::new(&cfg.tenancy, &objs);
        assert_eq!(r.contacts("x", ["a", "c"].into_iter()), ["@team-a"]);
    }

    #[test]
    fn the_cluster_s_namespace_wins_git_s_fills_in_the_rules_last() {
        let git = read_str(NAMESPACES, "git").unwrap();
        let live = read_str(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: scratch\n  labels: {tenant: initech}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
            "live",
        )
        .unwrap();
        let cfg = Config::default();
        let r = Resolver::of_run(&cfg.tenancy, &live, &git);
        // The cluster's team-a carries no tenant label: its name, not Git's acme.
        assert_eq!(r.tenant(&labels(&[]), "team-a"), "team-a");
        assert_eq!(r.tenant(&labels(&[]), "scratch"), "initech");
        assert_eq!(r.source("team-a"), Source::Cluster);
        assert_eq!(r.source("nowhere"), Source::Rules);
        let offline = Resolver::of_run(&cfg.tenancy, &[], &git);
        assert_eq!(offline.tenant(&labels(&[]), "team-a"), "acme");
        assert_eq!(offline.source("team-a"), Source::Git);
        // A namespace only Git has (the change creates it) keeps Git's labels with a live state.
        let git_only = read_str(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fresh\n  labels: {tenant: hooli}\n",
            "git",
        )
        .unwrap();
        let r = Resolver::of_run(&cfg.tenancy, &live, &git_only);
        assert_eq!(r.tenant(&labels(&[]), "fresh"), "hooli");
        assert_eq!(r.source("fresh"), Source::Git);
    }

    #[test]
    fn a_partial_section_keeps_the_attribute_default_fallback() {
        let objs = read_str(NAMESPACES, "t").unwrap();
        let cfg = Config::parse(
            "tenancy:\n  tenant: {workload_labels: [team]}\n  product_line: {workload_labels: [line]}\n",
            "c",
        )
        .unwrap();
        let r = Resolver::new(&cfg.tenancy, &objs);
        assert_eq!(r.tenant(&labels(&[]), "scratch"), "scratch");
        assert_eq!(r.product_line(&labels(&[]), "scratch"), None);
    }

    #[test]
    fn configured_keys_in_order_and_no_fallback() {
        let objs = read_str(NAMESPACES, "t").unwrap();
        let cfg = Config::parse(
            "tenancy:\n  tenant:\n    workload_labels: [team, owner]\n    namespace_labels: []\n    fallback: none\n",
            "c",
        )
        .unwrap();
        let r = Resolver::new(&cfg.tenancy, &objs);
        assert_eq!(
            r.tenant(&labels(&[("owner", "o"), ("team", "t")]), "team-a"),
            "t"
        );
        assert_eq!(r.tenant(&labels(&[("owner", "o")]), "team-a"), "o");
        assert_eq!(
            r.tenant(&labels(&[("tenant", "ignored")]), "team-a"),
            "(none)"
        );
    }
}
