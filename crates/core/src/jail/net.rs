//! IPv4 prefixes (`Ipv4Net`) and the registry of address ranges the jail
//! blocks. Pure values only; nothing here touches the system.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// An IPv4 prefix whose host bits are zero (`10.0.0.0/8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ipv4Net {
    addr: Ipv4Addr,
    prefix: u8,
}

impl Ipv4Net {
    /// The prefix `addr/prefix` with the host bits cleared; `None` when
    /// `prefix > 32`.
    pub fn new(addr: Ipv4Addr, prefix: u8) -> Option<Ipv4Net> {
        (prefix <= 32).then(|| Ipv4Net { addr: Ipv4Addr::from(u32::from(addr) & mask(prefix)), prefix })
    }

    /// `addr/32`.
    pub fn host(addr: Ipv4Addr) -> Ipv4Net {
        Ipv4Net { addr, prefix: 32 }
    }

    /// `0.0.0.0/0`.
    pub fn default_route() -> Ipv4Net {
        Ipv4Net { addr: Ipv4Addr::UNSPECIFIED, prefix: 0 }
    }

    pub fn network(&self) -> Ipv4Addr {
        self.addr
    }

    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// The all-ones host address of the prefix.
    pub fn broadcast(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) | !mask(self.prefix))
    }

    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & mask(self.prefix) == u32::from(self.addr)
    }

    /// Every address of `other` is in this prefix.
    pub fn covers(&self, other: &Ipv4Net) -> bool {
        self.prefix <= other.prefix && self.contains(other.addr)
    }

    /// The prefix one bit shorter that holds this one and its sibling;
    /// never the default route (two /1 halves stay two: 0.0.0.0/0 is the
    /// jail's own way out, never a block).
    fn parent(&self) -> Option<Ipv4Net> {
        self.prefix.checked_sub(1).filter(|p| *p > 0).and_then(|p| Ipv4Net::new(self.addr, p))
    }
}

/// The fewest prefixes covering exactly the addresses of `nets` that
/// `keep` does not already cover: prefixes inside another (or inside one
/// of `keep`) go, two halves of a prefix become that prefix. Sorted.
pub(super) fn aggregate(nets: &[Ipv4Net], keep: &[Ipv4Net]) -> Vec<Ipv4Net> {
    let mut v: Vec<Ipv4Net> = nets.iter().copied().filter(|n| !keep.iter().any(|k| k.covers(n))).collect();
    loop {
        v.sort();
        v.dedup();
        // Sorted by (address, prefix): a prefix comes before what it covers.
        let mut kept: Vec<Ipv4Net> = Vec::with_capacity(v.len());
        for n in v {
            if !kept.last().is_some_and(|k| k.covers(&n)) {
                kept.push(n);
            }
        }
        let mut merged = false;
        let mut out: Vec<Ipv4Net> = Vec::with_capacity(kept.len());
        for n in kept {
            match (out.last(), n.parent()) {
                (Some(prev), Some(parent)) if prev.prefix == n.prefix && prev.parent() == Some(parent) && *prev != n => {
                    out.pop();
                    out.push(parent);
                    merged = true;
                }
                _ => out.push(n),
            }
        }
        v = out.into_iter().filter(|n| !keep.iter().any(|k| k.covers(n))).collect();
        if !merged {
            v.sort();
            return v;
        }
    }
}

/// The default IPv4 route in the text of `/proc/PID/net/route`: its
/// gateway (`0.0.0.0` for a route through a device alone), or `None` when
/// there is none. The kernel writes addresses as hexadecimal in network
/// byte order read as a host-order number.
pub fn default_route_in(proc_net_route: &str) -> Option<Ipv4Addr> {
    proc_net_route.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&"00000000")).then(|| f.get(2).and_then(|g| u32::from_str_radix(g, 16).ok())).flatten().map(|g| Ipv4Addr::from(u32::from_be(g)))
    })
}

fn mask(prefix: u8) -> u32 {
    match prefix {
        0 => 0,
        p => u32::MAX << (32 - u32::from(p.min(32))),
    }
}

impl fmt::Display for Ipv4Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl FromStr for Ipv4Net {
    type Err = String;

    /// Parses `a.b.c.d/p` (host bits must be zero) or a bare address (/32).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, p.parse::<u8>().map_err(|_| format!("bad prefix in {s:?}"))?),
            None => (s, 32),
        };
        let addr: Ipv4Addr = addr.parse().map_err(|_| format!("bad address in {s:?}"))?;
        let net = Ipv4Net::new(addr, prefix).ok_or_else(|| format!("prefix over 32 in {s:?}"))?;
        if net.addr != addr {
            return Err(format!("{s:?} has host bits set"));
        }
        Ok(net)
    }
}

/// How a blocked range answers: a blackhole drops silently (connect fails
/// at once with EINVAL), unreachable answers EHOSTUNREACH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    Blackhole,
    Unreachable,
}

/// The ranges every jail blocks (docs/jail.md, "The route plan"), besides what the container
/// routes other than by its default route (`plan/container.rs`).
/// The one registry of these literals: the route plan, the docs and the
/// tests all read it.
pub const BLOCKED_RANGES: &[(Ipv4Addr, u8, Block, &str)] = &[
    (Ipv4Addr::new(10, 0, 0, 0), 8, Block::Blackhole, "RFC 1918 private"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, Block::Blackhole, "RFC 1918 private"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, Block::Blackhole, "RFC 1918 private"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, Block::Blackhole, "RFC 6598 carrier-grade NAT"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, Block::Unreachable, "link-local, cloud metadata"),
    (Ipv4Addr::new(168, 63, 129, 16), 32, Block::Blackhole, "Azure wireserver"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, Block::Blackhole, "multicast (mDNS, SSDP: LAN discovery)"),
    (Ipv4Addr::new(255, 255, 255, 255), 32, Block::Blackhole, "limited broadcast"),
];

/// The blocked ranges as prefixes, in registry order.
pub fn blocked_ranges() -> Vec<(Ipv4Net, Block)> {
    BLOCKED_RANGES.iter().filter_map(|&(a, p, b, _)| Ipv4Net::new(a, p).map(|n| (n, b))).collect()
}

/// Addresses the jail's DNS forwarder may take, in order of preference
/// (documentation ranges: never routed on the internet). The first one
/// outside everything the container routes other than by its default route
/// and every allowed address is used.
pub const FORWARDER_CANDIDATES: &[Ipv4Addr] = &[Ipv4Addr::new(192, 0, 2, 53), Ipv4Addr::new(198, 51, 100, 53), Ipv4Addr::new(203, 0, 113, 53)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_route_is_read_from_proc_net_route() {
        let head = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";
        let via = format!("{head}eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\neth0\t00000000\t0102000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n");
        assert_eq!(default_route_in(&via), Some(Ipv4Addr::new(10, 0, 2, 1)));
        let device = format!("{head}tun0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n");
        assert_eq!(default_route_in(&device), Some(Ipv4Addr::UNSPECIFIED));
        let none = format!("{head}eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n");
        assert_eq!(default_route_in(&none), None);
        assert_eq!(default_route_in(""), None);
    }

    #[test]
    fn new_clears_host_bits_and_formats() {
        let n = Ipv4Net::new(Ipv4Addr::new(172, 17, 3, 4), 12).unwrap();
        assert_eq!(n.to_string(), "172.16.0.0/12");
        assert_eq!(n.broadcast(), Ipv4Addr::new(172, 31, 255, 255));
        assert!(n.contains(Ipv4Addr::new(172, 31, 0, 1)));
        assert!(!n.contains(Ipv4Addr::new(172, 32, 0, 1)));
        assert_eq!(Ipv4Net::new(Ipv4Addr::new(1, 2, 3, 4), 33), None);
        assert_eq!(Ipv4Net::default_route().to_string(), "0.0.0.0/0");
        assert!(Ipv4Net::default_route().contains(Ipv4Addr::new(8, 8, 8, 8)));
    }

    #[test]
    fn parse_round_trips_and_rejects_host_bits() {
        assert_eq!("10.0.0.0/8".parse::<Ipv4Net>().unwrap().to_string(), "10.0.0.0/8");
        assert_eq!("1.2.3.4".parse::<Ipv4Net>().unwrap().to_string(), "1.2.3.4/32");
        assert!("10.0.0.1/8".parse::<Ipv4Net>().is_err());
        assert!("10.0.0.0/40".parse::<Ipv4Net>().is_err());
    }

    #[test]
    fn aggregate_drops_covered_prefixes_and_joins_halves() {
        let n = |s: &str| s.parse::<Ipv4Net>().unwrap();
        let got = aggregate(
            &[n("10.8.0.0/24"), n("203.0.113.0/25"), n("203.0.113.128/25"), n("203.0.113.7/32"), n("198.51.100.7/32"), n("198.51.100.7/32")],
            &[n("10.0.0.0/8")],
        );
        assert_eq!(got, [n("198.51.100.7/32"), n("203.0.113.0/24")]);
        // Halves of halves, and a merge that lands on a kept prefix.
        let quarters = ["192.0.2.0/26", "192.0.2.64/26", "192.0.2.128/26", "192.0.2.192/26"].map(n);
        assert_eq!(aggregate(&quarters, &[]), [n("192.0.2.0/24")]);
        assert_eq!(aggregate(&[n("10.0.0.0/9"), n("10.128.0.0/9")], &[n("10.0.0.0/8")]), []);
        // A VPN's redirect-gateway halves stay halves: never a default route.
        assert_eq!(aggregate(&[n("0.0.0.0/1"), n("128.0.0.0/1")], &[]), [n("0.0.0.0/1"), n("128.0.0.0/1")]);
        assert!(n("0.0.0.0/0").covers(&n("1.2.3.4/32")) && !n("1.2.3.4/32").covers(&n("1.2.3.0/24")));
    }

    #[test]
    fn registry_is_valid() {
        assert_eq!(blocked_ranges().len(), BLOCKED_RANGES.len());
        for c in FORWARDER_CANDIDATES {
            assert!(blocked_ranges().iter().all(|(n, _)| !n.contains(*c)));
        }
    }
}
