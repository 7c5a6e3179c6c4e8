//! Randomness and small helpers: a seeded splitmix64 (the same seed gives the same fleet),
//! timestamps, addresses and the JSON fragments many objects share.

use serde_json::{Value, json};

/// splitmix64: tiny, fast, deterministic.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    pub(crate) fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    pub(crate) fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A random (version 4 shaped) UUID.
    pub(crate) fn uid(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }

    /// Random name suffix from the alphabet Kubernetes uses for generated names.
    pub(crate) fn suffix(&mut self, n: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n)
            .map(|_| ALPHABET[self.below(ALPHABET.len())] as char)
            .collect()
    }

    pub(crate) fn hex(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 16);
        while s.len() < n {
            s.push_str(&format!("{:016x}", self.next_u64()));
        }
        s.truncate(n);
        s
    }
}

/// 2025-06-01T00:00:00Z, the snapshot's "now".
pub(crate) const NOW: i64 = 1_748_736_000;
pub(crate) const DAY: i64 = 86_400;

/// RFC 3339 UTC timestamp from Unix seconds (civil-from-days, no date crate).
pub(crate) fn ts(t: i64) -> String {
    let (days, secs) = (t.div_euclid(DAY), t.rem_euclid(DAY));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

pub(crate) fn ipv4(n: u32) -> String {
    format!(
        "{}.{}.{}.{}",
        n >> 24,
        (n >> 16) & 255,
        (n >> 8) & 255,
        n & 255
    )
}

pub(crate) fn owner(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!([{
        "apiVersion": api_version,
        "blockOwnerDeletion": true,
        "controller": true,
        "kind": kind,
        "name": name,
        "uid": uid,
    }])
}

/// Merges the entries of `extra` (an object) into `base` (an object).
pub(crate) fn merged(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Some(o), Value::Object(e)) = (out.as_object_mut(), extra) {
        o.extend(e);
    }
    out
}
