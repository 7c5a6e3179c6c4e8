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

/// A node of the tree.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    is_queue: bool,
    parent: Option<usize>,
    /// GPU quota per flavor.
    quota: BTreeMap<String, Quota>,
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
    /// Cohorts whose parents lead back to them: their subtrees are not computed.
    broken: Vec<bool>,
}

impl Tree {
    pub fn new(a: &Admission) -> Tree {
        let mut t = Tree::default();
        for q in &a.cluster_queues {
            let i = t.nodes.len();
            t.nodes.push(Node {
                name: q.name.clone(),
                is_queue: true,
                parent: None,
                quota: q
                    .flavors
                    .iter()
                    .map(|f| (f.flavor.clone(), f.quota))
                    .collect(),
            });
            t.queues.insert(q.name.clone(), i);
        }
        let cohort = |t: &mut Tree, name: &str| -> usize {
            if let Some(&i) = t.cohorts.get(name) {
                return i;
            }
            let i = t.nodes.len();
            t.nodes.push(Node {
                name: name.to_string(),
                is_queue: false,
                parent: None,
                quota: a
                    .cohort(name)
                    .map(|c| {
                        c.flavors
                            .iter()
                            .map(|f| (f.flavor.clone(), f.quota))
                            .collect()
                    })
                    .unwrap_or_default(),
            });
            t.cohorts.insert(name.to_string(), i);
            i
        };
        for c in &a.cohorts {
            cohort(&mut t, &c.name);
        }
        for q in &a.cluster_queues {
            if let Some(c) = &q.cohort {
                let p = cohort(&mut t, c);
                if let Some(n) = t.queues.get(&q.name).and_then(|&i| t.nodes.get_mut(i)) {
                    n.parent = Some(p);
                }
            }
        }
        for c in &a.cohorts {
            if let Some(parent) = &c.parent {
                let p = cohort(&mut t, parent);
                if let Some(n) = t.cohorts.get(&c.name).and_then(|&i| t.nodes.get_mut(i)) {
                    n.parent = Some(p);
                }
            }
        }
        let n = t.nodes.len();
        t.broken = (0..n).map(|i| t.in_cycle(i)).collect();
        // Bottom-up order: by depth, deepest first (a node's depth bounded by the node count).
        let mut by_depth: Vec<(usize, usize)> = (0..n).map(|i| (t.depth(i), i)).collect();
        by_depth.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        t.order = by_depth.into_iter().map(|(_, i)| i).collect();
        t
    }

    fn in_cycle(&self, i: usize) -> bool {
        let mut at = i;
        for _ in 0..=self.nodes.len() {
            match self.nodes.get(at).and_then(|n| n.parent) {
                Some(p) if p == i => return true,
                Some(p) => at = p,
                None => return false,
            }
        }
        true
    }

    fn depth(&self, i: usize) -> usize {
        let mut d = 0;
        let mut at = i;
        while let Some(p) = self.nodes.get(at).and_then(|n| n.parent) {
            d += 1;
            at = p;
            if d > self.nodes.len() {
                break;
            }
        }
        d
    }

    pub fn queue(&self, name: &str) -> Option<usize> {
        self.queues.get(name).copied()
    }

    /// Whether the queue's cohort chain is whole (no cycle above it).
    pub fn sound(&self, queue: usize) -> bool {
        let mut at = Some(queue);
        while let Some(i) = at {
            if self.broken.get(i).copied().unwrap_or(true) {
                return false;
            }
            at = self.nodes.get(i).and_then(|n| n.parent);
        }
        true
    }

    /// The root of `i`'s tree (itself without a cohort).
    pub fn root(&self, i: usize) -> usize {
        let mut at = i;
        let mut steps = 0;
        while let Some(p) = self.nodes.get(at).and_then(|n| n.parent) {
            at = p;
            steps += 1;
            if steps > self.nodes.len() {
                break;
            }
        }
        at
    }

    /// The queues under the same root as `queue` (itself included).
    pub fn cohort_queues(&self, queue: usize) -> Vec<usize> {
        let root = self.root(queue);
        self.queues
            .values()
            .copied()
            .filter(|&q| self.root(q) == root)
            .collect()
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

    fn children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.parent == Some(i))
            .map(|(c, _)| c)
    }

    /// `SubtreeQuota`: a queue's nominal; a cohort's own plus what each child lends.
    pub fn subtree(&self, i: usize, flavor: &str) -> i64 {
        if self.broken.get(i).copied().unwrap_or(true) {
            return 0;
        }
        let own = self.nominal(i, flavor);
        if self.nodes.get(i).is_some_and(|n| n.is_queue) {
            return own;
        }
        self.children(i)
            .map(|c| self.subtree(c, flavor) - self.local(c, flavor))
            .fold(own, i64::saturating_add)
    }

    /// `localQuota`: what the node never lends its parent.
    fn local(&self, i: usize, flavor: &str) -> i64 {
        match self.quota(i, flavor).lending_limit {
            Some(l) => (self.subtree(i, flavor) - to_i64(l)).max(0),
            None => 0,
        }
    }

    /// Every node's usage from the queues' (`leaf`: GPUs reserved per queue and flavor).
    pub fn usage(&self, leaf: &HashMap<(String, String), u64>) -> UsageMap {
        let mut u: UsageMap = HashMap::new();
        for ((queue, flavor), n) in leaf {
            if let Some(&i) = self.queues.get(queue) {
                *u.entry((i, flavor.clone())).or_default() += to_i64(*n);
            }
        }
        let flavors: Vec<String> = self.flavors();
        for &i in &self.order {
            if self.nodes.get(i).is_some_and(|n| n.is_queue) {
                continue;
            }
            for f in &flavors {
                let sum: i64 = self
                    .children(i)
                    .map(|c| {
                        (u.get(&(c, f.clone())).copied().unwrap_or(0) - self.local(c, f)).max(0)
                    })
                    .sum();
                if sum != 0 {
                    u.insert((i, f.clone()), sum);
                }
            }
        }
        u
    }

    /// Every flavor any node has quota in.
    pub fn flavors(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .nodes
            .iter()
            .flat_map(|n| n.quota.keys().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    fn used(u: &UsageMap, i: usize, flavor: &str) -> i64 {
        u.get(&(i, flavor.to_string())).copied().unwrap_or(0)
    }

    /// What node `i` may still take in `flavor` with usage `u` (never below 0).
    pub fn available(&self, i: usize, flavor: &str, u: &UsageMap) -> i64 {
        self.available_raw(i, flavor, u, 0).max(0)
    }

    fn available_raw(&self, i: usize, flavor: &str, u: &UsageMap, depth: usize) -> i64 {
        let usage = Self::used(u, i, flavor);
        let parent = self.nodes.get(i).and_then(|n| n.parent);
        match parent {
            _ if depth > self.nodes.len() => 0,
            None => self.subtree(i, flavor) - usage,
            Some(p) => {
                let local = self.local(i, flavor);
                let local_available = (local - usage).max(0);
                let from_parent = self.available_raw(p, flavor, u, depth + 1);
                let capped = match self.quota(i, flavor).borrowing_limit {
                    Some(b) => from_parent.min(
                        (self.subtree(i, flavor) - local) - (usage - local).max(0) + to_i64(b),
                    ),
                    None => from_parent,
                };
                local_available + capped
            }
        }
    }

    /// What node `i` could ever take in `flavor`, with no usage anywhere.
    pub fn potential(&self, i: usize, flavor: &str) -> i64 {
        self.potential_raw(i, flavor, 0)
    }

    fn potential_raw(&self, i: usize, flavor: &str, depth: usize) -> i64 {
        let parent = self.nodes.get(i).and_then(|n| n.parent);
        match parent {
            _ if depth > self.nodes.len() => 0,
            None => self.subtree(i, flavor),
            Some(p) => {
                let v = self.local(i, flavor) + self.potential_raw(p, flavor, depth + 1);
                match self.quota(i, flavor).borrowing_limit {
                    Some(b) => v.min(self.subtree(i, flavor) + to_i64(b)),
                    None => v,
                }
            }
        }
    }

    /// Whether node `i` is above its subtree quota in `flavor` (it borrows: its admitted work
    /// there may be reclaimed by the cohort).
    pub fn above_nominal(&self, i: usize, flavor: &str, u: &UsageMap) -> bool {
        Self::used(u, i, flavor) > self.subtree(i, flavor)
    }

    /// What the rest of the cohort of queue `i` could lend it now (its available beyond its own
    /// unused nominal quota).
    pub fn lendable(&self, i: usize, flavor: &str, u: &UsageMap) -> i64 {
        let own = (self.nominal(i, flavor) - Self::used(u, i, flavor)).max(0);
        (self.available(i, flavor, u) - own).max(0)
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX / 4)
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
        assert!(a.cohorts.iter().all(|c| !c.problems.is_empty()));
    }
}
