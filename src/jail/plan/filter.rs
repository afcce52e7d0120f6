//! The jail's second layer: an nf_tables filter on the jail's own output
//! path that rejects every blocked destination, whatever the socket asked
//! for. Pure values only: the plan (derived from the route plan, so the two
//! layers cannot disagree), its nf_tables form, and the read-back check.
//!
//! Why routes alone are not enough: a socket that names its outgoing
//! interface (SO_BINDTODEVICE, SO_BINDTOIFINDEX, IP_UNICAST_IF, an
//! IP_PKTINFO control message, IP_MULTICAST_IF) skips the route lookup's
//! blackholes — when no route matches and an interface is given, Linux
//! treats the destination as on-link and sends it out of that interface,
//! where pasta forwards it. Every packet the jail sends, however it was
//! routed, passes the IPv4 `output` hook, so the filter sits there.
//!
//! Layout (one table with one interval set and one base chain, policy
//! accept, rules in order):
//! 1. `meta oifname "lo" accept` — the jail's own loopback (relays, a
//!    session talking to itself) never leaves the namespace;
//! 2. `ip daddr FORWARDER udp dport 53 accept` and the same for TCP: DNS,
//!    which pasta answers itself;
//! 3. `ip daddr X/32 accept` for every other /32 the route plan sends out
//!    on purpose: the gateway, each allowIp;
//! 4. `ip daddr FORWARDER reject with icmp type admin-prohibited`: the
//!    forwarder is pasta's for DNS only; anything else sent to its address
//!    would go wherever the container routes it;
//! 5. `ip daddr @blocked reject with icmp type admin-prohibited`, the set
//!    holding every blocked prefix of the route plan (connected subnets
//!    with their broadcast addresses, the container's other routes and
//!    addresses, private ranges, link-local, multicast, the limited
//!    broadcast...) as disjoint intervals: one lookup per packet however
//!    many prefixes the container routes.
//!
//! Rejected, not dropped: a dropped SYN leaves `connect` waiting for the
//! caller's timeout, which agents read as a flaky network and retry. ICMP
//! "administratively prohibited" makes a TCP `connect` fail at once with
//! EHOSTUNREACH ("No route to host"), an answer pasta never gives (it
//! resets what it cannot connect), so `verify` can tell the jail's refusal
//! from a packet that left; a datagram's `sendto` fails at once with EPERM
//! (a reject also drops the packet). The answers are addressed to the jail
//! itself and leave through `lo`, which rule 1 accepts; none goes out. The
//! holder lifts the kernel's ICMP rate limit from them in the jail's
//! namespace (`lockdown::unlimit_rejects`).
//!
//! The session cannot change it: changing nf_tables needs CAP_NET_ADMIN
//! over the jail's network namespace, which only its owner (the jail's
//! user namespace, an ancestor of the session's) grants.

use super::routes::{NetPlan, RouteKind};
use crate::jail::net::Ipv4Net;
use std::collections::BTreeSet;
use std::fmt;
use std::net::Ipv4Addr;

/// `NFPROTO_IPV4`: the table's family (IPv6 is off in the jail).
pub const FAMILY_IPV4: u8 = 2;
pub const TABLE: &str = "agent_sandbox";
pub const CHAIN: &str = "egress";
/// The set of blocked destinations.
pub const BLOCKED_SET: &str = "blocked";
/// `NF_INET_LOCAL_OUT`: every locally generated IPv4 packet.
const HOOK_OUTPUT: u32 = 3;
/// `NF_IP_PRI_FILTER`.
const PRIORITY_FILTER: i32 = 0;
const CHAIN_TYPE: &str = "filter";
const NF_DROP: i32 = 0;
const NF_ACCEPT: i32 = 1;
/// `NFT_REJECT_ICMP_UNREACH`: an ICMP destination-unreachable of a code.
pub const NFT_REJECT_ICMP_UNREACH: u32 = 0;
/// `ICMP_PKT_FILTERED`: communication administratively prohibited.
pub const ICMP_ADMIN_PROHIBITED: u8 = 13;
const NFT_META_OIFNAME: u32 = 7;
const NFT_META_L4PROTO: u32 = 16;
const NFT_PAYLOAD_NETWORK_HEADER: u32 = 1;
const NFT_PAYLOAD_TRANSPORT_HEADER: u32 = 2;
/// The destination address in an IPv4 header.
const IPV4_DADDR: (u32, u32) = (16, 4);
/// The destination port in a UDP or TCP header.
const L4_DPORT: (u32, u32) = (2, 2);
/// `NFT_REG_1`: the first 128-bit data register.
const REG_1: u32 = 1;
const NFT_CMP_EQ: u32 = 0;
const IFNAMSIZ: usize = 16;
pub const LOOPBACK: &str = "lo";
/// `NFT_SET_INTERVAL`: the set holds ranges.
pub const NFT_SET_INTERVAL: u32 = 0x4;
/// nft's data type `ipv4_addr` (how `nft list` prints the keys).
pub const TYPE_IPV4_ADDR: u32 = 7;
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;
pub const DNS_PORT: u16 = 53;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Accept,
    /// Only read back (another table's rule): the jail rejects.
    Drop,
    /// ICMP administratively prohibited.
    Reject,
}

impl Verdict {
    /// The rule's last expression.
    fn expr(self) -> Expr {
        match self {
            Verdict::Accept => Expr::Verdict(NF_ACCEPT),
            Verdict::Drop => Expr::Verdict(NF_DROP),
            Verdict::Reject => Expr::Reject { kind: NFT_REJECT_ICMP_UNREACH, code: Some(ICMP_ADMIN_PROHIBITED) },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    OutputInterface(String),
    Destination(Ipv4Net),
    /// One address, protocol (TCP or UDP) and destination port.
    Service {
        addr: Ipv4Addr,
        proto: u8,
        port: u16,
    },
    /// The destination is in the named set.
    DestinationIn(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterRule {
    pub what: Match,
    pub verdict: Verdict,
}

/// The filter: its rules, in evaluation order, and the blocked set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterPlan {
    pub rules: Vec<FilterRule>,
    /// The blocked set's ranges (first, last address), sorted, disjoint
    /// and not adjacent (the kernel refuses overlapping ranges).
    pub blocked: Vec<(Ipv4Addr, Ipv4Addr)>,
}

/// One nf_tables expression, as planned and as read back. Anything the
/// jail does not plan is `Other` and never equals a planned expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Meta {
        key: u32,
        dreg: u32,
    },
    Payload {
        base: u32,
        offset: u32,
        len: u32,
        dreg: u32,
    },
    Bitwise {
        sreg: u32,
        dreg: u32,
        mask: Vec<u8>,
        xor: Vec<u8>,
    },
    Cmp {
        sreg: u32,
        op: u32,
        data: Vec<u8>,
    },
    /// Whether the register's value is in a set (`flags` 1 inverts).
    Lookup {
        sreg: u32,
        set: String,
        flags: u32,
    },
    /// An immediate verdict (accept, drop...).
    Verdict(i32),
    /// A reject: its type (`NFT_REJECT_*`) and, for ICMP, its code.
    Reject {
        kind: u32,
        code: Option<u8>,
    },
    Other {
        name: String,
        attrs: Vec<u8>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TableState {
    pub family: u8,
    pub name: String,
    /// 0 = active (`NFT_TABLE_F_DORMANT` would switch every rule off).
    pub flags: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChainState {
    pub family: u8,
    pub table: String,
    pub name: String,
    /// (hook number, priority) of a base chain.
    pub hook: Option<(u32, i32)>,
    pub policy: Option<i32>,
    pub kind: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SetState {
    pub family: u8,
    pub table: String,
    pub name: String,
    pub flags: u32,
    pub key_type: u32,
    pub key_len: u32,
    /// What the jail does not plan (a map's data, timeouts, expressions).
    pub extra: Vec<String>,
}

/// One element of a set as nf_tables holds it: an interval set keeps a
/// start element for each range and an end element (the address after
/// its last) unless the range runs to the end of the address space.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ElementState {
    pub family: u8,
    pub table: String,
    pub set: String,
    pub key: Vec<u8>,
    pub end: bool,
    /// Anything else the kernel reported about the element.
    pub extra: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleState {
    pub family: u8,
    pub table: String,
    pub chain: String,
    pub exprs: Vec<Expr>,
}

/// Every nf_tables object of the namespace (rules in evaluation order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ruleset {
    pub tables: Vec<TableState>,
    pub chains: Vec<ChainState>,
    pub sets: Vec<SetState>,
    pub elements: Vec<ElementState>,
    pub rules: Vec<RuleState>,
}

/// The filter for a route plan: DNS to the forwarder and every other /32
/// the plan routes out on purpose are accepted, anything else to the
/// forwarder and everything the plan blocks is rejected.
pub fn filter_plan(net: &NetPlan) -> FilterPlan {
    let mut accept = BTreeSet::new();
    let mut drop = Vec::new();
    for r in &net.main {
        match r.kind {
            RouteKind::Blackhole | RouteKind::Unreachable => drop.push(r.dst),
            RouteKind::Unicast if r.dst.prefix() == 32 && r.dst.network() != net.forwarder => {
                accept.insert(r.dst);
            }
            _ => {}
        }
    }
    let rule = |what, verdict| FilterRule { what, verdict };
    let dns = |proto| rule(Match::Service { addr: net.forwarder, proto, port: DNS_PORT }, Verdict::Accept);
    let mut rules = vec![rule(Match::OutputInterface(LOOPBACK.into()), Verdict::Accept), dns(IPPROTO_UDP), dns(IPPROTO_TCP)];
    rules.extend(accept.into_iter().map(|n| rule(Match::Destination(n), Verdict::Accept)));
    rules.push(rule(Match::Destination(Ipv4Net::host(net.forwarder)), Verdict::Reject));
    rules.push(rule(Match::DestinationIn(BLOCKED_SET.into()), Verdict::Reject));
    FilterPlan { rules, blocked: ranges(&drop) }
}

/// The prefixes as disjoint, non-adjacent ranges, sorted.
pub fn ranges(nets: &[Ipv4Net]) -> Vec<(Ipv4Addr, Ipv4Addr)> {
    let mut spans: Vec<(u64, u64)> = nets.iter().map(|n| (u64::from(u32::from(n.network())), u64::from(u32::from(n.broadcast())))).collect();
    spans.sort();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (a, b) in spans {
        match out.last_mut() {
            Some((_, last)) if a <= *last + 1 => *last = (*last).max(b),
            _ => out.push((a, b)),
        }
    }
    out.into_iter().map(|(a, b)| (Ipv4Addr::from(a as u32), Ipv4Addr::from(b as u32))).collect()
}

pub fn table() -> TableState {
    TableState { family: FAMILY_IPV4, name: TABLE.into(), flags: 0 }
}

pub fn chain() -> ChainState {
    ChainState {
        family: FAMILY_IPV4,
        table: TABLE.into(),
        name: CHAIN.into(),
        hook: Some((HOOK_OUTPUT, PRIORITY_FILTER)),
        policy: Some(NF_ACCEPT),
        kind: Some(CHAIN_TYPE.into()),
    }
}

pub fn blocked_set() -> SetState {
    SetState {
        family: FAMILY_IPV4,
        table: TABLE.into(),
        name: BLOCKED_SET.into(),
        flags: NFT_SET_INTERVAL,
        key_type: TYPE_IPV4_ADDR,
        key_len: 4,
        extra: Vec::new(),
    }
}

/// The elements nf_tables keeps for `ranges` in the set `set`.
pub fn elements(set: &SetState, ranges: &[(Ipv4Addr, Ipv4Addr)]) -> Vec<ElementState> {
    let elem = |key: Ipv4Addr, end| ElementState {
        family: set.family,
        table: set.table.clone(),
        set: set.name.clone(),
        key: key.octets().to_vec(),
        end,
        extra: vec![],
    };
    let mut v = Vec::new();
    for (first, last) in ranges {
        v.push(elem(*first, false));
        if let Some(after) = u32::from(*last).checked_add(1) {
            v.push(elem(Ipv4Addr::from(after), true));
        }
    }
    v.sort();
    v
}

fn load_daddr() -> Expr {
    let (offset, len) = IPV4_DADDR;
    Expr::Payload { base: NFT_PAYLOAD_NETWORK_HEADER, offset, len, dreg: REG_1 }
}

fn cmp(data: Vec<u8>) -> Expr {
    Expr::Cmp { sreg: REG_1, op: NFT_CMP_EQ, data }
}

impl FilterRule {
    /// The rule's expressions: load a field into register 1, compare (or
    /// look it up in a set), and so on; the verdict last.
    pub fn exprs(&self) -> Vec<Expr> {
        let mut v = match &self.what {
            Match::OutputInterface(name) => {
                let mut data = name.as_bytes().to_vec();
                data.resize(IFNAMSIZ, 0);
                vec![Expr::Meta { key: NFT_META_OIFNAME, dreg: REG_1 }, cmp(data)]
            }
            Match::Destination(net) => {
                let mut v = vec![load_daddr()];
                if net.prefix() < 32 {
                    v.push(Expr::Bitwise { sreg: REG_1, dreg: REG_1, mask: prefix_mask(net.prefix()).to_vec(), xor: vec![0; 4] });
                }
                v.push(cmp(net.network().octets().to_vec()));
                v
            }
            Match::Service { addr, proto, port } => {
                let (offset, len) = L4_DPORT;
                let [meta, is] = l4proto(*proto);
                vec![
                    load_daddr(),
                    cmp(addr.octets().to_vec()),
                    meta,
                    is,
                    Expr::Payload { base: NFT_PAYLOAD_TRANSPORT_HEADER, offset, len, dreg: REG_1 },
                    cmp(port.to_be_bytes().to_vec()),
                ]
            }
            Match::DestinationIn(set) => vec![load_daddr(), Expr::Lookup { sreg: REG_1, set: set.clone(), flags: 0 }],
        };
        v.push(self.verdict.expr());
        v
    }

    /// The rule a read-back expression list encodes, if it is one the jail
    /// plans (for messages).
    fn from_exprs(exprs: &[Expr]) -> Option<FilterRule> {
        let verdict = [Verdict::Accept, Verdict::Drop, Verdict::Reject].into_iter().find(|v| exprs.last() == Some(&v.expr()))?;
        let body = &exprs[..exprs.len() - 1];
        let what = match body {
            [Expr::Meta { .. }, Expr::Cmp { data, .. }] => Match::OutputInterface(String::from_utf8_lossy(data).trim_end_matches('\0').to_string()),
            [Expr::Payload { .. }, Expr::Lookup { set, .. }] => Match::DestinationIn(set.clone()),
            [Expr::Payload { .. }, Expr::Cmp { data: a, .. }, Expr::Meta { .. }, Expr::Cmp { data: p, .. }, Expr::Payload { .. }, Expr::Cmp { data: port, .. }] =>
            {
                let addr: [u8; 4] = a.as_slice().try_into().ok()?;
                let port: [u8; 2] = port.as_slice().try_into().ok()?;
                Match::Service { addr: addr.into(), proto: *p.first()?, port: u16::from_be_bytes(port) }
            }
            [Expr::Payload { .. }, rest @ ..] => {
                let (mask, cmp) = match rest {
                    [Expr::Bitwise { mask, .. }, Expr::Cmp { data, .. }] => (mask.clone(), data),
                    [Expr::Cmp { data, .. }] => (vec![0xff; 4], data),
                    _ => return None,
                };
                let prefix = mask.iter().map(|b| b.count_ones()).sum::<u32>() as u8;
                let addr: [u8; 4] = cmp.as_slice().try_into().ok()?;
                Match::Destination(Ipv4Net::new(addr.into(), prefix)?)
            }
            _ => return None,
        };
        let rule = FilterRule { what, verdict };
        (rule.exprs() == exprs).then_some(rule)
    }
}

/// `meta l4proto PROTO`: the protocol into register 1, compared.
fn l4proto(proto: u8) -> [Expr; 2] {
    [Expr::Meta { key: NFT_META_L4PROTO, dreg: REG_1 }, cmp(vec![proto])]
}

fn prefix_mask(prefix: u8) -> [u8; 4] {
    let m = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix.min(32))) };
    m.to_be_bytes()
}

fn proto_name(p: u8) -> String {
    match p {
        IPPROTO_TCP => "tcp".into(),
        IPPROTO_UDP => "udp".into(),
        p => format!("l4proto {p}"),
    }
}

impl fmt::Display for FilterRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.what {
            Match::OutputInterface(n) => write!(f, "meta oifname \"{n}\"")?,
            Match::Destination(net) if net.prefix() == 32 => write!(f, "ip daddr {}", net.network())?,
            Match::Destination(net) => write!(f, "ip daddr {net}")?,
            Match::Service { addr, proto, port } => write!(f, "ip daddr {addr} {} dport {port}", proto_name(*proto))?,
            Match::DestinationIn(set) => write!(f, "ip daddr @{set}")?,
        }
        match self.verdict {
            Verdict::Accept => write!(f, " accept"),
            Verdict::Drop => write!(f, " drop"),
            Verdict::Reject => write!(f, " reject with icmp type admin-prohibited"),
        }
    }
}

impl fmt::Display for RuleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule in {} {}/{}: ", family_name(self.family), self.table, self.chain)?;
        match FilterRule::from_exprs(&self.exprs) {
            Some(r) => write!(f, "{r}"),
            None => write!(f, "{:?}", self.exprs),
        }
    }
}

impl fmt::Display for ChainState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chain {} {}/{}", family_name(self.family), self.table, self.name)?;
        if let Some((hook, prio)) = self.hook {
            write!(f, " hook {hook} priority {prio}")?;
        }
        if let Some(p) = self.policy {
            write!(f, " policy {}", if p == NF_ACCEPT { "accept".into() } else { p.to_string() })?;
        }
        if let Some(k) = &self.kind {
            write!(f, " type {k}")?;
        }
        Ok(())
    }
}

impl fmt::Display for TableState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "table {} {} flags {}", family_name(self.family), self.name, self.flags)
    }
}

impl fmt::Display for SetState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "set {} {}/{} flags {:#x} key type {} len {}", family_name(self.family), self.table, self.name, self.flags, self.key_type, self.key_len)?;
        for e in &self.extra {
            write!(f, " {e}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ElementState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = match <[u8; 4]>::try_from(self.key.as_slice()) {
            Ok(k) => Ipv4Addr::from(k).to_string(),
            Err(_) => format!("{:?}", self.key),
        };
        write!(f, "element of {} {}/{}: {key}{}", family_name(self.family), self.table, self.set, if self.end { " (end of a range)" } else { "" })?;
        for e in &self.extra {
            write!(f, " {e}")?;
        }
        Ok(())
    }
}

fn family_name(family: u8) -> String {
    match family {
        1 => "inet".into(),
        2 => "ip".into(),
        3 => "arp".into(),
        5 => "netdev".into(),
        7 => "bridge".into(),
        10 => "ip6".into(),
        f => format!("family-{f}"),
    }
}

/// The whole expected nf_tables state for `plan`.
pub fn expected(plan: &FilterPlan) -> Ruleset {
    let rules = plan.rules.iter().map(|r| RuleState { family: FAMILY_IPV4, table: TABLE.into(), chain: CHAIN.into(), exprs: r.exprs() }).collect();
    let set = blocked_set();
    Ruleset { tables: vec![table()], chains: vec![chain()], elements: elements(&set, &plan.blocked), sets: vec![set], rules }
}

/// Every difference between the planned filter and the namespace's whole
/// nf_tables state (any other table, chain, set, element or rule, in any
/// family, is a difference: a table with a higher-priority accept could
/// undo ours, a missing element would open a range).
pub fn compare(plan: &FilterPlan, actual: &Ruleset) -> Vec<String> {
    let want = expected(plan);
    let mut diffs = Vec::new();
    differ(&want.tables, &actual.tables, &mut diffs);
    differ(&want.chains, &actual.chains, &mut diffs);
    differ(&want.sets, &actual.sets, &mut diffs);
    differ(&want.elements, &actual.elements, &mut diffs);
    // Rules: the exact list in order (an accept moved ahead of a drop
    // would open a range).
    if want.rules != actual.rules {
        let show = |rules: &[RuleState]| rules.iter().map(ToString::to_string).collect::<Vec<_>>();
        let (w, h) = (show(&want.rules), show(&actual.rules));
        let first = w.iter().zip(&h).position(|(a, b)| a != b).unwrap_or(w.len().min(h.len()));
        diffs.push(format!(
            "filter rules differ from rule {} on: expected {}, found {}",
            first + 1,
            w.get(first).map_or("no more rules", String::as_str),
            h.get(first).map_or("no more rules", String::as_str),
        ));
    }
    diffs
}

/// The objects of `want` missing from `have` and those of `have` not
/// wanted, compared as values (a large set's thousands of elements are
/// formatted only when they differ).
fn differ<T: Ord + fmt::Display>(want: &[T], have: &[T], diffs: &mut Vec<String>) {
    let (w, h): (BTreeSet<&T>, BTreeSet<&T>) = (want.iter().collect(), have.iter().collect());
    diffs.extend(w.difference(&h).map(|x| format!("missing {x}")));
    diffs.extend(h.difference(&w).map(|x| format!("unexpected {x}")));
}

/// One change of the blocked set that must be applied in one transaction:
/// the elements of the ranges a new range covers go, the new range's come
/// (adding first would overlap them; removing alone would open them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetChange {
    pub remove: Vec<ElementState>,
    pub add: Vec<ElementState>,
}

/// The changes that turn the blocked set holding `from` into one holding
/// `to`, which covers every range of `from` (the jail's set only grows).
pub fn set_changes(from: &[(Ipv4Addr, Ipv4Addr)], to: &[(Ipv4Addr, Ipv4Addr)]) -> Vec<SetChange> {
    let set = blocked_set();
    let old: BTreeSet<_> = from.iter().copied().collect();
    to.iter()
        .filter(|r| !old.contains(r))
        .map(|&(a, b)| {
            let covered: Vec<_> = from.iter().copied().filter(|&(x, y)| x >= a && y <= b).collect();
            let (was, will): (BTreeSet<ElementState>, BTreeSet<ElementState>) =
                (elements(&set, &covered).into_iter().collect(), elements(&set, &[(a, b)]).into_iter().collect());
            SetChange { remove: was.difference(&will).cloned().collect(), add: will.difference(&was).cloned().collect() }
        })
        .collect()
}

/// The ranges the jail's blocked set holds in `state` (its start elements,
/// each up to the next end element or the end of the address space).
pub fn ranges_of(state: &Ruleset) -> Vec<(Ipv4Addr, Ipv4Addr)> {
    let mut elems: Vec<(u32, bool)> = state
        .elements
        .iter()
        .filter(|e| e.family == FAMILY_IPV4 && e.table == TABLE && e.set == BLOCKED_SET)
        .filter_map(|e| <[u8; 4]>::try_from(e.key.as_slice()).ok().map(|k| (u32::from_be_bytes(k), e.end)))
        .collect();
    elems.sort();
    let mut out = Vec::new();
    let mut open: Option<u32> = None;
    for (key, end) in elems {
        match (end, open) {
            (false, None) => open = Some(key),
            (true, Some(start)) if key > start => {
                out.push((Ipv4Addr::from(start), Ipv4Addr::from(key - 1)));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(start) = open {
        out.push((Ipv4Addr::from(start), Ipv4Addr::BROADCAST));
    }
    out
}

#[cfg(test)]
mod tests;
