//! What keeps a paginated list honest, whatever the server sends: a page's `continue` token, its
//! `remainingItemCount` and its items are checked before the next page is asked for, so that a
//! list ends — complete, or stopped with the reason — and its memory stays bounded.
//!
//! A list with `limit` and `continue` is one consistent snapshot (the first page's
//! resourceVersion), so within it an item (by `metadata.uid`, else namespace and name) appears
//! once, a token never comes back, and every page but the last brings at least one new item (a
//! server may send fewer items than `limit` asks, never none), so the pages are no more than the
//! items announced by the first page's `remainingItemCount`, or the distinct items received,
//! allow. A server (or a proxy, or an aggregated API) that
//! breaks this would otherwise make gpuledger count an item twice (35 GPUs from 30 pods), or follow
//! a looping token until it runs out of memory. Duplicates are dropped and reported (the caller
//! lists once more, then reports the list incomplete); a repeated token, more pages than the items
//! allow, or more items than any cluster holds stops the list as incomplete.

use std::collections::HashSet;

use crate::k8s::object::Object;

/// More items than this in one resource's list is not a cluster: Kubernetes is tested up to
/// 150,000 pods per cluster (sig-scalability's thresholds,
/// kubernetes/community sig-scalability/configs-and-limits/thresholds.md).
pub(super) const MAX_ITEMS: u64 = 500_000;

/// What tells two items of a list apart: the uid, else kind, namespace and name.
pub(super) fn key(uid: Option<&str>, kind: &str, namespace: &str, name: &str) -> String {
    match uid.filter(|u| !u.is_empty()) {
        Some(uid) => format!("uid:{uid}"),
        None => format!("{kind}/{namespace}/{name}"),
    }
}

/// Why a list was stopped before the server said it was done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Stop {
    #[error(
        "the API server sent a continue token a second time (a loop): stopped after {pages} pages and {items} items; the list may miss items"
    )]
    TokenRepeated { pages: u64, items: u64 },
    #[error(
        "the API server announced {announced} items but kept sending pages: stopped after {pages} pages; the list may miss items"
    )]
    TooManyPages { announced: u64, pages: u64 },
    #[error(
        "the API server sent {pages} pages for {items} distinct items (pages without new items): stopped; the list may miss items"
    )]
    EmptyPages { pages: u64, items: u64 },
    #[error(
        "more than {MAX_ITEMS} items: stopped (Kubernetes is tested up to 150,000 pods per cluster)"
    )]
    TooManyItems,
}

/// The state of one list, page by page.
#[derive(Debug)]
pub(super) struct Pages {
    tokens: HashSet<String>,
    keys: HashSet<String>,
    pages: u64,
    /// Items of the whole list as the first page announced them.
    announced: Option<u64>,
    pub duplicates: u64,
}

impl Pages {
    pub fn new() -> Pages {
        Pages {
            tokens: HashSet::new(),
            keys: HashSet::new(),
            pages: 0,
            announced: None,
            duplicates: 0,
        }
    }

    /// Before a page's token is followed: a token seen before is a loop.
    pub fn follow(&mut self, token: &str) -> Result<(), Stop> {
        if self.tokens.insert(token.to_string()) {
            Ok(())
        } else {
            Err(Stop::TokenRepeated {
                pages: self.pages,
                items: self.unique(),
            })
        }
    }

    /// Whether the item with `key` ([`key`]) is seen for the first time in this list; a
    /// duplicate is counted.
    pub fn first_time(&mut self, key: String) -> bool {
        let new = self.keys.insert(key);
        if !new {
            self.duplicates += 1;
        }
        new
    }

    /// A page of `items` arrived with its `remainingItemCount`; `more` is whether it asks to
    /// continue. `Err` stops the list.
    pub fn page(&mut self, items: u64, remaining: Option<u64>, more: bool) -> Result<(), Stop> {
        self.pages += 1;
        if self.pages == 1
            && let Some(r) = remaining
        {
            self.announced = Some(items.saturating_add(r));
        }
        if self.unique() > MAX_ITEMS {
            return Err(Stop::TooManyItems);
        }
        if !more {
            return Ok(());
        }
        // A page that asks for more is not the last: with this one, the list has at least one
        // more page than pages so far, and each but the last brings at least one new item.
        if let Some(announced) = self.announced
            && self.pages > announced
        {
            return Err(Stop::TooManyPages {
                announced,
                pages: self.pages,
            });
        }
        if self.pages > self.unique() {
            return Err(Stop::EmptyPages {
                pages: self.pages,
                items: self.unique(),
            });
        }
        Ok(())
    }

    /// Keeps the objects of a page seen for the first time (into `into`), then checks the page.
    pub fn objects(
        &mut self,
        page: Vec<Object>,
        remaining: Option<u64>,
        more: bool,
        into: &mut Vec<Object>,
    ) -> Result<(), Stop> {
        let n = crate::util::sum::count(page.len());
        for o in page {
            if self.first_time(key(
                o.meta.uid.as_deref(),
                &o.kind,
                o.namespace(),
                &o.meta.name,
            )) {
                into.push(o);
            }
        }
        self.page(n, remaining, more)
    }

    /// No page has been checked yet.
    pub fn is_first(&self) -> bool {
        self.pages == 0
    }

    fn unique(&self) -> u64 {
        crate::util::sum::count(self.keys.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    fn pods(names: &[&str]) -> Vec<Object> {
        let text: String = names
            .iter()
            .map(|n| {
                format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {n}, namespace: ml, uid: u-{n}}}\n---\n")
            })
            .collect();
        read_str(&text, "t").unwrap()
    }

    #[test]
    fn duplicates_are_dropped_and_counted() {
        let mut p = Pages::new();
        let mut out = Vec::new();
        p.objects(pods(&["a", "b"]), Some(2), true, &mut out)
            .unwrap();
        p.objects(pods(&["b", "c"]), Some(1), true, &mut out)
            .unwrap();
        p.objects(pods(&["d"]), None, false, &mut out).unwrap();
        let names: Vec<&str> = out.iter().map(|o| o.meta.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        assert_eq!(p.duplicates, 1);
    }

    #[test]
    fn a_token_seen_twice_is_a_loop() {
        let mut p = Pages::new();
        p.follow("t1").unwrap();
        p.follow("t2").unwrap();
        let e = p.follow("t1").unwrap_err();
        assert!(matches!(e, Stop::TokenRepeated { .. }), "{e}");
    }

    #[test]
    fn pages_are_bounded_by_what_the_first_announced() {
        // 3 items announced, one a page (a server may send fewer than `limit`): a fourth page
        // that asks for more is a server that does not stop.
        let mut p = Pages::new();
        let mut out = Vec::new();
        p.objects(pods(&["a"]), Some(2), true, &mut out).unwrap();
        p.objects(pods(&["b"]), Some(1), true, &mut out).unwrap();
        p.objects(pods(&["c"]), Some(0), true, &mut out).unwrap();
        let e = p.objects(pods(&["d"]), None, true, &mut out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the API server announced 3 items but kept sending pages: stopped after 4 pages; the list may miss items"
        );
        // Without an announcement, a page that brings nothing new and asks for more.
        let mut p = Pages::new();
        p.objects(pods(&["a"]), None, true, &mut out).unwrap();
        assert!(matches!(
            p.objects(pods(&["a"]), None, true, &mut out),
            Err(Stop::EmptyPages { pages: 2, items: 1 })
        ));
        // Short pages that each bring something are fine.
        let mut p = Pages::new();
        p.objects(pods(&["a"]), Some(9), true, &mut out).unwrap();
        p.objects(pods(&["b", "c"]), None, true, &mut out).unwrap();
        p.objects(pods(&["d"]), None, false, &mut out).unwrap();
    }
}
