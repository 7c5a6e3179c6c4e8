//! What rendering may fetch, decided before any byte leaves the machine.
//!
//! A pull request is untrusted, and rendering it must not become a way to reach what the CI runner
//! can reach. So a fetch starts only at a source host the trusted side already uses (the base ref's
//! sources, or the ref being rendered when there is no base) or that `render.remote.allow` in the
//! base's configuration lists; every address a host resolves to (and every IP literal, at every
//! redirect hop) is checked: link-local addresses and the cloud metadata endpoints
//! (169.254.0.0/16, fe80::/10, fd00:ec2::254) are refused always, loopback and private ranges
//! unless `render.remote.private_networks` names them. Credentials come from environment variables
//! and Helm's registry configuration, each bound to the one host it is configured for, and are
//! registered with [`crate::util::redact`] so no message quotes them. `--offline` refuses every
//! fetch.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use super::error::Refusal;

/// Bytes of an index or manifest list, at most (Flux's `internal/helm/helm.go` caps an index at
/// 50 MiB).
pub const MAX_INDEX_BYTES: u64 = 50 * 1024 * 1024;
/// Bytes of a chart archive, at most (Flux: 10 MiB).
pub const MAX_CHART_BYTES: u64 = 10 * 1024 * 1024;
/// Bytes of a remote manifest, git pack or artifact, at most.
pub const MAX_ARTIFACT_BYTES: u64 = 100 * 1024 * 1024;
/// Redirects followed from one request.
pub const MAX_REDIRECTS: usize = 5;

/// An address range (`10.0.0.0/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    pub fn parse(s: &str) -> Option<Cidr> {
        let (a, p) = match s.trim().split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s.trim(), None),
        };
        let addr: IpAddr = a.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max)?,
            None => max,
        };
        Some(Cidr { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(a) & mask == u32::from(b) & mask
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(a) & mask == u128::from(b) & mask
            }
            _ => false,
        }
    }
}

/// An IPv4 address written as IPv6 (`::ffff:169.254.169.254`) is that IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// What kind of address a fetch would reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    Public,
    /// Loopback, RFC 1918, CGNAT, unique-local: refused unless allowed.
    Private,
    /// Link-local and metadata endpoints, unspecified, multicast, broadcast: refused always.
    Forbidden,
}

pub fn classify(ip: IpAddr) -> AddressClass {
    match canonical(ip) {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let o = ip.octets();
    if ip.is_link_local() || ip.is_unspecified() || ip.is_multicast() || ip.is_broadcast() {
        return AddressClass::Forbidden;
    }
    // 0.0.0.0/8 reaches this host on Linux.
    if o[0] == 0 {
        return AddressClass::Forbidden;
    }
    let cgnat = o[0] == 100 && (64..128).contains(&o[1]);
    // 198.18.0.0/15 (benchmarking) and 192.0.0.0/24 (protocol assignments) are not the internet.
    let special = (o[0] == 198 && (o[1] & 0xfe) == 18) || (o[0] == 192 && o[1] == 0 && o[2] == 0);
    if ip.is_loopback() || ip.is_private() || cgnat || special {
        return AddressClass::Private;
    }
    AddressClass::Public
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    let s = ip.segments();
    // fd00:ec2::254 is AWS's metadata endpoint over IPv6: link-local in spirit, refused always.
    let metadata = ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);
    let link_local = (s[0] & 0xffc0) == 0xfe80;
    if metadata || link_local || ip.is_unspecified() || ip.is_multicast() {
        return AddressClass::Forbidden;
    }
    let unique_local = (s[0] & 0xfe00) == 0xfc00;
    // 64:ff9b::/96 NAT64 reaches IPv4 space the host chose; treat it as private.
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b;
    if ip.is_loopback() || unique_local || nat64 {
        return AddressClass::Private;
    }
    AddressClass::Public
}

/// A credential bound to one host.
#[derive(Clone)]
pub struct Credential {
    /// `host` or `host:port`, lower case.
    pub host: String,
    pub auth: Auth,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credential({}, ***)", self.host)
    }
}

#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    Basic { username: String, password: String },
    Bearer(String),
}

/// Which source hosts may be fetched from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Sources {
    /// The ref being rendered is trusted (render, drift, a check's base): its own sources.
    #[default]
    Own,
    /// A check's head: only the hosts the base used (and `render.remote.allow`).
    Fixed(BTreeSet<String>),
}

/// Where a fetch may start: one per rendered ref (a check's base and head differ).
#[derive(Debug, Clone, Default)]
pub struct Gate {
    pub offline: bool,
    pub sources: Sources,
    /// `render.remote.allow`, lower case.
    pub allow: BTreeSet<String>,
}

/// The rules every connection is held to, the same for every ref of a run.
#[derive(Debug, Clone)]
pub struct Policy {
    pub private: Vec<Cidr>,
    pub credentials: Vec<Credential>,
    pub timeout: Duration,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            private: Vec::new(),
            credentials: Vec::new(),
            timeout: Duration::from_secs(60),
        }
    }
}

/// `host` or `host:port` of a URL's authority as policies compare them: lower case, the scheme's
/// default port left out.
pub fn authority(url: &url::Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    })
}

impl Gate {
    /// May a fetch start at a source on this host (an `authority`)?
    pub fn source(&self, host: &str) -> Result<(), Refusal> {
        if self.offline {
            return Err(Refusal::Offline);
        }
        match &self.sources {
            Sources::Own => Ok(()),
            Sources::Fixed(hosts) if hosts.contains(host) || self.allow.contains(host) => Ok(()),
            Sources::Fixed(_) => Err(Refusal::NewHost {
                host: host.to_string(),
            }),
        }
    }
}

impl Policy {
    /// May a connection go to this address? `host` names it in the refusal.
    pub fn address(&self, host: &str, ip: IpAddr) -> Result<(), Refusal> {
        match classify(ip) {
            AddressClass::Public => Ok(()),
            AddressClass::Private if self.private.iter().any(|c| c.contains(ip)) => Ok(()),
            AddressClass::Private => Err(Refusal::Private {
                host: host.to_string(),
                ip,
            }),
            AddressClass::Forbidden => Err(Refusal::Forbidden {
                host: host.to_string(),
                ip,
            }),
        }
    }

    /// The credential configured for exactly this host (an `authority`).
    pub fn credential(&self, host: &str) -> Option<&Auth> {
        self.credentials
            .iter()
            .find(|c| c.host == host)
            .map(|c| &c.auth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn addresses_are_classified() {
        for (a, class) in [
            ("169.254.169.254", AddressClass::Forbidden),
            ("::ffff:169.254.169.254", AddressClass::Forbidden),
            ("fd00:ec2::254", AddressClass::Forbidden),
            ("fe80::1", AddressClass::Forbidden),
            ("0.0.0.0", AddressClass::Forbidden),
            ("224.0.0.1", AddressClass::Forbidden),
            ("127.0.0.1", AddressClass::Private),
            ("10.1.2.3", AddressClass::Private),
            ("172.16.0.1", AddressClass::Private),
            ("192.168.1.1", AddressClass::Private),
            ("100.64.0.1", AddressClass::Private),
            ("::1", AddressClass::Private),
            ("fd12::1", AddressClass::Private),
            ("140.82.112.3", AddressClass::Public),
            ("2606:50c0:8000::153", AddressClass::Public),
        ] {
            assert_eq!(classify(ip(a)), class, "{a}");
        }
    }

    #[test]
    fn private_ranges_only_when_allowed_and_metadata_never() {
        let p = Policy {
            private: vec![
                Cidr::parse("127.0.0.0/8").unwrap(),
                Cidr::parse("0.0.0.0/0").unwrap(),
            ],
            ..Policy::default()
        };
        assert!(p.address("h", ip("127.0.0.2")).is_ok());
        assert!(p.address("h", ip("10.0.0.1")).is_ok());
        assert!(p.address("h", ip("169.254.169.254")).is_err());
        let strict = Policy::default();
        assert!(matches!(
            strict.address("h", ip("127.0.0.1")),
            Err(Refusal::Private { .. })
        ));
        assert!(Cidr::parse("10.0.0.0/33").is_none());
        assert!(
            Cidr::parse("10.0.0.0/8")
                .unwrap()
                .contains(ip("::ffff:10.9.9.9"))
        );
    }

    #[test]
    fn a_head_may_not_add_a_source_host() {
        let p = Gate {
            sources: Sources::Fixed(["charts.example.com".to_string()].into()),
            allow: ["ghcr.io".to_string()].into(),
            ..Gate::default()
        };
        assert!(p.source("charts.example.com").is_ok());
        assert!(p.source("ghcr.io").is_ok());
        assert!(matches!(
            p.source("evil.example.com"),
            Err(Refusal::NewHost { .. })
        ));
        let off = Gate {
            offline: true,
            ..Gate::default()
        };
        assert!(matches!(off.source("ghcr.io"), Err(Refusal::Offline)));
    }
}
