//! Lists read at exactly their length: what a typed body keeps per object, by the million.

use serde::Deserialize;

/// A list kept at exactly its length. serde grows a vector as it reads (JSON and YAML say no length
/// ahead), and a vector's first push reserves four elements: a pod's one container, owner reference
/// or GPU limit held in room for four made half of what a 100,000-pod read kept. Lists an object
/// keeps are read with this (`#[serde(deserialize_with = "exact")]`); the rules of a list (and its
/// errors: "expected a sequence") are serde's.
pub fn exact<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    struct Exact<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Exact<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let Some(first) = seq.next_element()? else {
                return Ok(Vec::new());
            };
            // Room for what the input says is left (a JSON tree knows), else for the one read.
            let more = seq.size_hint().unwrap_or(0).min(1024);
            let mut out = Vec::with_capacity(more + 1);
            out.push(first);
            while let Some(x) = seq.next_element()? {
                out.push(x);
            }
            out.shrink_to_fit();
            Ok(out)
        }
    }
    d.deserialize_seq(Exact(std::marker::PhantomData))
}
