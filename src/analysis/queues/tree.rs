//! Kueue's quota tree for GPUs: ClusterQueues as leaves, Cohorts (explicit, or implicit where a
//! queue names one that has no object) as inner nodes, and per flavor what each node may still
//! take (`available`) and could ever take (`potential`).
//!
//! The arithmetic is Kueue's, `pkg/cache/scheduler/resource_node.go` at the commit of
//! `shared/corpus/queues/PROVENANCE.md`: a queue's subtree quota is its nominal quota; a cohort's
//! is its own nominal plus what each child lends (`subtree − local`); a node's local quota is what
//! it never lends (`subtree − lendingLimit` when that is set, else 0); usage bubbles up past the
//! local quota; `available` is the local room plus what the parent has, within the borrowing
//! limit; `potential` is the same with no usage. `BorrowingWith` (`clusterqueue_snapshot.go`):
//! a queue borrows when its usage and the request exceed its nominal quota.

use std::collections::{BTreeMap, HashMap};

use crate::queues::{Admission, Quota};

/// The deepest cohort tree read: Kueue's trees are a few levels deep; a chain deeper than this
/// (a repository can write one) is not a tree gpuledger computes, and its queues are unknown.
const MAX_DEPTH: usize = 64;

/// A node of the tree.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    is_queue: bool,
    parent: Option<usize>,
    children: Vec<usize>,
    /// GPU quota per flavor.
    quota: BTreeMap<String, Quota>,
    /// Per flavor: `SubtreeQuota` and the local quota (what it never lends), computed once.
    subtree: HashMap<String, i64>,
    local: HashMap<String, i64>,
}

/// GPUs used per (node, flavor); leaves are given, cohorts are derived.
pub type UsageMap = HashMap<(usize, String), i64>;

/// The tree of one input's queues and cohorts.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    nodes: Vec<Node>,
    queues: HashMap<String, usize>,
    cohorts: HashMap<String, usize>,
    /// Leaves first, then cohorts from the bottom up: the order usage bubbles in.
    order: Vec<usize>,
    /// Nodes in a cycle, or deeper than [`MAX_DEPTH`]: their subtrees are not computed.
    broken: Vec<bool>,
    flavors: Vec<String>,
}

impl Tree {
    pub fn new(a: &Admission) -> Tree {
        let mut t = Tree::default();
        let node = |name: &str, is_queue: bool, quota: BTreeMap<String, Quota>| Node {
            name: name.to_string(),
            is_queue,
            parent: None,
            children: Vec::new(),
            quota,
            subtree: HashMap::new(),
            local: HashMap::new(),
        };
        for q in &a.cluster_queues {
            let quota = q
                .flavors
                .iter()
                .map(|f| (f.flavor.clone(), f.quota))
                .collect();
            t.queues.insert(q.name.clone(), t.nodes.len());
            t.nodes.push(node(&q.name, true, quota));
        }
        let cohort = |t: &mut Tree, name: &str| -> usize {
            if let Some(&i) = t.cohorts.get(name) {
                return i;
            }
            let quota = a
                .cohort(name)
                .map(|c| {
                    c.flavors
                        .iter()
                        .map(|f| (f.flavor.clone(), f.quota))
                        .collect()
                })
                .unwrap_or_default();
            let i = t.nodes.len();
            t.nodes.push(node(name, false, quota));
            t.cohorts.insert(name.to_string(), i);
            i
        };
        for c in &a.cohorts {
            cohort(&mut t, &c.name);
        }
        let mut links = Vec::new();
        for q in &a.cluster_queues {
            if let (Some(c), Some(&i)) = (&q.cohort, t.queues.get(&q.name)) {
                links.push((i, cohort(&mut t, c)));
            }
        }
        for c in &a.cohorts {
            if let Some(parent) = &c.parent {
                let p = cohort(&mut t, parent);
                if let Some(&i) = t.cohorts.get(&c.name) {
                    links.push((i, p));
                }
            }
        }
        for (child, parent) in links {
            if let Some(n) = t.nodes.get_mut(child) {
                n.parent = Some(parent);
            }
            if let Some(n) = t.nodes.get_mut(parent) {
                n.children.push(child);
            }
        }
        let depths: Vec<Option<usize>> = (0..t.nodes.len()).map(|i| t.depth(i)).collect();
        t.broken = depths.iter().map(Option::is_none).collect();
        // Bottom-up: deepest first.
        let mut by_depth: Vec<(usize, usize)> = depths
            .iter()
            .enumerate()
            .map(|(i, d)| (d.unwrap_or(0), i))
            .collect();
        by_depth.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        t.order = by_depth.into_iter().map(|(_, i)| i).collect();
        let mut flavors: Vec<String> = t
            .nodes
            .iter()
            .flat_map(|n| n.quota.keys().cloned())
            .collect();
        flavors.sort();
        flavors.dedup();
        t.flavors = flavors;
        t.compute_quotas();
        t
    }

    /// Levels above node `i`; `None` in a cycle or deeper than [`MAX_DEPTH`].
    fn depth(&self, i: usize) -> Option<usize> {
        let mut at = i;
        for d in 0..=MAX_DEPTH {
            match self.nodes.get(at).and_then(|n| n.parent) {
                None => return Some(d),
                Some(p) if p == i => return None,
                Some(p) => at = p,
            }
        }
        None
    }

    /// `SubtreeQuota` and the local quota of every node, bottom up (`resource_node.go`): a queue's
    /// subtree is its nominal quota; a cohort's, its own plus what each child lends
    /// (`subtree − local`); a node's local quota is what it never lends (`subtree −
    /// lendingLimit` when that is set, else 0).
    fn compute_quotas(&mut self) {
        for &i in &self.order.clone() {
            for f in &self.flavors.clone() {
                let broken = self.broken.get(i).copied().unwrap_or(true);
                let q = self.quota(i, f);
                let own = to_i64(q.nominal);
                let subtree = if broken {
                    0
                } else if self.nodes.get(i).is_some_and(|n| n.is_queue) {
                    own
                } else {
                    let children = self
                        .nodes
                        .get(i)
                        .map(|n| n.children.clone())
                        .unwrap_or_default();
                    children.iter().fold(own, |acc, &c| {
                        acc.saturating_add(self.subtree(c, f).saturating_sub(self.local(c, f)))
                    })
                };
                let local = match q.lending_limit {
                    Some(l) => subtree.saturating_sub(to_i64(l)).max(0),
                    None => 0,
                };
                if let Some(n) = self.nodes.get_mut(i) {
                    n.subtree.insert(f.clone(), subtree);
                    n.local.insert(f.clone(), local);
                }
            }
        }
    }

    pub fn queue(&self, name: &str) -> Option<usize> {
        self.queues.get(name).copied()
    }

    /// Whether the queue's cohort chain is whole (no cycle, not too deep).
    pub fn sound(&self, queue: usize) -> bool {
        !self.broken.get(queue).copied().unwrap_or(true)
    }

    fn parent(&self, i: usize) -> Option<usize> {
        self.nodes.get(i).and_then(|n| n.parent)
    }

    /// The root of `i`'s tree (itself without a cohort).
    pub fn root(&self, i: usize) -> usize {
        let mut at = i;
        for _ in 0..=MAX_DEPTH {
            match self.parent(at) {
                Some(p) => at = p,
                None => break,
            }
        }
        at
    }

    pub fn name(&self, i: usize) -> &str {
        self.nodes.get(i).map_or("", |n| n.name.as_str())
    }

    fn quota(&self, i: usize, flavor: &str) -> Quota {
        self.nodes
            .get(i)
            .and_then(|n| n.quota.get(flavor))
            .copied()
            .unwrap_or_default()
    }

    pub fn nominal(&self, i: usize, flavor: &str) -> i64 {
        to_i64(self.quota(i, flavor).nominal)
    }

    /// `SubtreeQuota` (0 for a flavor the tree does not know).
    pub fn subtree(&self, i: usize, flavor: &str) -> i64 {
        self.nodes
            .get(i)
            .and_then(|n| n.subtree.get(flavor))
            .copied()
            .unwrap_or(0)
    }

    /// `localQuota`: what the node never lends its parent.
    fn local(&self, i: usize, flavor: &str) -> i64 {
        self.nodes
            .get(i)
            .and_then(|n| n.local.get(flavor))
            .copied()
            .unwrap_or(0)
    }

    /// Every node's usage from the queues' (`leaf`: GPUs reserved per queue and flavor): usage
    /// bubbles up past each child's local quota.
    pub fn usage(&self, leaf: &HashMap<(String, String), u64>) -> UsageMap {
        let mut u: UsageMap = HashMap::new();
        for ((queue, flavor), n) in leaf {
            if let Some(&i) = self.queues.get(queue) {
                let e = u.entry((i, flavor.clone())).or_default();
                *e = e.saturating_add(to_i64(*n));
            }
        }
        for &i in &self.order {
            let Some(node) = self.nodes.get(i).filter(|n| !n.is_queue) else {
                continue;
            };
            for f in &self.flavors {
                let sum = node.children.iter().fold(0i64, |acc, &c| {
                    let used = u.get(&(c, f.clone())).copied().unwrap_or(0);
                    acc.saturating_add(used.saturating_sub(self.local(c, f)).max(0))
                });
                if sum != 0 {
                    u.insert((i, f.clone()), sum);
                }
            }
        }
        u
    }

    fn used(u: &UsageMap, i: usize, flavor: &str) -> i64 {
        u.get(&(i, flavor.to_string())).copied().unwrap_or(0)
    }

    /// What node `i` may still take in `flavor` with usage `u` (never below 0): from the root
    /// down, each node's local room plus what its parent has, within its borrowing limit.
    pub fn available(&self, i: usize, flavor: &str, u: &UsageMap) -> i64 {
        let mut path = vec![i];
        while let Some(p) = path.last().and_then(|&n| self.parent(n)) {
            if path.len() > MAX_DEPTH {
                return 0;
            }
            path.push(p);
        }
        let mut available = 0i64;
        for (k, &n) in path.iter().rev().enumerate() {
            let usage = Self::used(u, n, flavor);
            let subtree = self.subtree(n, flavor);
            if k == 0 {
                available = subtree.saturating_sub(usage);
                continue;
            }
            let local = self.local(n, flavor);
            let local_available = local.saturating_sub(usage).max(0);
            let capped = match self.quota(n, flavor).borrowing_limit {
                Some(b) => available.min(
                    subtree
                        .saturating_sub(local)
                        .saturating_sub(usage.saturating_sub(local).max(0))
                        .saturating_add(to_i64(b)),
                ),
                None => available,
            };
            available = local_available.saturating_add(capped);
        }
        available.max(0)
    }

    /// What node `i` could ever take in `flavor`, with no usage anywhere.
    pub fn potential(&self, i: usize, flavor: &str) -> i64 {
        let mut path = vec![i];
        while let Some(p) = path.last().and_then(|&n| self.parent(n)) {
            if path.len() > MAX_DEPTH {
                return 0;
            }
            path.push(p);
        }
        let mut potential = 0i64;
        for (k, &n) in path.iter().rev().enumerate() {
            if k == 0 {
                potential = self.subtree(n, flavor);
                continue;
            }
            let v = self.local(n, flavor).saturating_add(potential);
            potential = match self.quota(n, flavor).borrowing_limit {
                Some(b) => v.min(self.subtree(n, flavor).saturating_add(to_i64(b))),
                None => v,
            };
        }
        potential
    }

    /// Whether node `i` is above its subtree quota in `flavor` (it borrows: its admitted work
    /// there may be reclaimed by the cohort).
    pub fn above_nominal(&self, i: usize, flavor: &str, u: &UsageMap) -> bool {
        Self::used(u, i, flavor) > self.subtree(i, flavor)
    }

    /// What the rest of the cohort of queue `i` could lend it now (its available beyond its own
    /// unused nominal quota).
    pub fn lendable(&self, i: usize, flavor: &str, u: &UsageMap) -> i64 {
        let own = self
            .nominal(i, flavor)
            .saturating_sub(Self::used(u, i, flavor))
            .max(0);
        self.available(i, flavor, u).saturating_sub(own).max(0)
    }
}

/// A quantity of GPUs as the tree's signed arithmetic holds it (capped far below overflow).
fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX / 4).min(i64::MAX / 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    fn tree(yaml: &str) -> (Tree, Admission) {
        let objs = read_str(yaml, "q.yaml").unwrap();
        let a = Admission::read(&objs);
        (Tree::new(&a), a)
    }

    fn cq(name: &str, cohort: &str, quota: &str) -> String {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: {cohort}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{{name: nvidia.com/gpu, {quota}}}]\n---\n"
        )
    }

    fn leaf(entries: &[(&str, u64)]) -> HashMap<(String, String), u64> {
        entries
            .iter()
            .map(|(q, n)| ((q.to_string(), "h100".to_string()), *n))
            .collect()
    }

    #[test]
    fn a_flat_cohort_lends_what_its_queues_leave_unused() {
        let (t, _) = tree(
            &(cq("a", "pool", "nominalQuota: 8")
                + &cq("b", "pool", "nominalQuota: 8, borrowingLimit: 2")),
        );
        let a = t.queue("a").unwrap();
        let b = t.queue("b").unwrap();
        let u = t.usage(&leaf(&[("a", 4), ("b", 0)]));
        // The cohort holds 16, 4 used: a may take 12 (no limit), b 8 + 2 = 10 at most.
        assert_eq!(t.available(a, "h100", &u), 12);
        assert_eq!(t.available(b, "h100", &u), 10);
        assert_eq!(t.potential(a, "h100"), 16);
        assert_eq!(t.potential(b, "h100"), 10);
        assert_eq!(t.lendable(b, "h100", &u), 2);
    }

    #[test]
    fn a_lending_limit_keeps_part_of_the_quota_home() {
        let (t, _) = tree(
            &(cq("a", "pool", "nominalQuota: 8, lendingLimit: 2")
                + &cq("b", "pool", "nominalQuota: 4")),
        );
        let (a, b) = (t.queue("a").unwrap(), t.queue("b").unwrap());
        let u = t.usage(&leaf(&[]));
        // a lends only 2: b may reach 4 + 2.
        assert_eq!(t.potential(b, "h100"), 6);
        assert_eq!(t.available(b, "h100", &u), 6);
        // a keeps 6 at home and may borrow b's 4 as well.
        assert_eq!(t.available(a, "h100", &u), 12);
        // With a using 7 (1 above its local 6), the cohort has 6 − 1 left.
        let u = t.usage(&leaf(&[("a", 7)]));
        assert_eq!(t.available(b, "h100", &u), 5);
    }

    #[test]
    fn a_queue_without_cohort_has_its_nominal() {
        let (t, _) = tree(&cq("solo", "", "nominalQuota: 16"));
        let q = t.queue("solo").unwrap();
        let u = t.usage(&leaf(&[("solo", 16)]));
        assert_eq!(t.available(q, "h100", &u), 0);
        assert_eq!(t.potential(q, "h100"), 16);
    }

    #[test]
    fn a_hierarchical_cohort_adds_its_own_quota() {
        let cohort = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}\nspec:\n  parentName: org\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n---\n";
        let (t, _) = tree(
            &(cq("a", "research", "nominalQuota: 4") + &cq("b", "org", "nominalQuota: 4") + cohort),
        );
        let (a, b) = (t.queue("a").unwrap(), t.queue("b").unwrap());
        let u = t.usage(&leaf(&[]));
        // org holds research's 12 (8 + a's 4) and b's 4.
        assert_eq!(t.potential(a, "h100"), 16);
        assert_eq!(t.available(b, "h100", &u), 16);
    }

    #[test]
    fn a_cohort_cycle_breaks_its_queues() {
        let c = |n: &str, p: &str| {
            format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {n}}}\nspec: {{parentName: {p}}}\n---\n"
            )
        };
        let (t, a) = tree(&(cq("a", "cx", "nominalQuota: 4") + &c("cx", "cy") + &c("cy", "cx")));
        assert!(!t.sound(t.queue("a").unwrap()));
        assert!(a.cohorts.iter().all(|c| !c.reference_problems.is_empty()));
    }

    #[test]
    fn huge_quotas_and_deep_chains_neither_overflow_nor_recurse() {
        let big = "nominalQuota: \"18446744073709551615\"";
        let mut yaml = String::new();
        for i in 0..5 {
            yaml += &cq(&format!("q{i}"), "pool", &format!("{big}, lendingLimit: 1"));
        }
        let (t, _) = tree(&yaml);
        let q = t.queue("q0").unwrap();
        let u = t.usage(&leaf(&[]));
        assert!(t.potential(q, "h100") > 0);
        assert!(t.available(q, "h100", &u) > 0);
        // A chain of 200 cohorts: deeper than any tree Kueue builds; its queue is not computed.
        let mut yaml = cq("deep", "c0", "nominalQuota: 4");
        for i in 0..200 {
            yaml += &format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i}}}\nspec: {{parentName: c{}}}\n---\n",
                i + 1
            );
        }
        let (t, _) = tree(&yaml);
        assert!(!t.sound(t.queue("deep").unwrap()));
    }
}
