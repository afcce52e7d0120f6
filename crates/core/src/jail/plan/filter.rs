//! The jail's second layer: an nf_tables filter on the jail's own output
//! path that rejects every blocked destination, whatever the socket asked
//! for. Pure values only: the plan (derived from the route plan, so the two
//! layers cannot disagree), its nf_tables form, and the read-back check.
//!
//! Why routes alone are not enough: a socket that names its outgoing
//! interface (SO_BINDTODEVICE, SO_BINDTOIFINDEX, IP_UNICAST_IF, an
//! IP_PKTINFO control message, IP_MULTICAST_IF) skips the route lookup's
//! blocks — when no route on that interface matches, Linux treats the
//! destination as on-link and sends it out of that interface, where pasta
//! forwards it. Every packet the jail sends, however it was routed,
//! passes the IPv4 `output` hook, so the filter sits there. A plain
//! attempt is routed into the dead end (`routes::DEAD_END`) and passes the
//! same hook: the filter rejects and counts it like the others.
//!
//! Layout (one table; the base chain `egress`, policy accept, rules in
//! order; the regular chain `refused`; the interval set `blocked`):
//! 1. `meta oifname "lo" accept` — the jail's own loopback (relays, a
//!    session talking to itself, the jail's DNS forwarder) never leaves the
//!    namespace;
//! 2. `ip daddr FORWARDER udp dport 53 accept` and the same for TCP: DNS,
//!    which pasta answers itself (not with allowDomains: the session asks
//!    the jail's own forwarder, which asks the container's resolver from
//!    the container's network);
//! 3. `ip daddr X/32 accept` for every other /32 the route plan sends out
//!    on purpose: the gateway, each allowIp;
//! 4. `ip daddr FORWARDER goto refused`: the forwarder is pasta's for DNS
//!    only; anything else sent to its address would go wherever the
//!    container routes it;
//! 5. `ip daddr @blocked goto refused`, the set holding every blocked
//!    prefix of the route plan (connected subnets with their broadcast
//!    addresses, the container's other routes and addresses, private
//!    ranges, link-local, multicast, the limited broadcast...) as disjoint
//!    intervals: one lookup per packet however many prefixes the container
//!    routes;
//! 6. with allowDomains: `ip daddr @allowed accept` (what the forwarder
//!    resolved for an allowed name), `ct state established accept` (a
//!    connection begun while its address was allowed outlives the
//!    record), `goto refused` for everything else. After 5, so a name that
//!    resolves to an internal address opens nothing.
//!
//! `refused`: `add @seen { ip daddr . meta l4proto . th dport counter }`,
//! then the reject. `seen` is a dynamic set with a bounded size and a long
//! timeout: an element's counter is how often, what is left of its
//! timeout when it was first refused. Allowed traffic never reaches the
//! chain, so the report costs it nothing; a full set fails the `add`,
//! which only ends that rule: the next one rejects all the same.
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
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

mod rules;
mod state;

pub use rules::{FilterRule, Match, Verdict, ICMP_ADMIN_PROHIBITED, IPPROTO_TCP, IPPROTO_UDP, NFT_REJECT_ICMP_UNREACH, REFUSED_CHAIN};
use state::differ;
pub use state::{ChainState, ElementState, RuleState, Ruleset, SetState, TableState};

/// `NFPROTO_IPV4`: the table's family (IPv6 is off in the jail).
pub(crate) const FAMILY_IPV4: u8 = 2;
pub(crate) const TABLE: &str = "agent_sandbox";
pub(crate) const CHAIN: &str = "egress";
/// The set of blocked destinations.
pub(crate) const BLOCKED_SET: &str = "blocked";
/// What the filter refused: destination, protocol and port, a counter
/// each (the end-of-session report, `plan/report.rs`).
pub(crate) const SEEN_SET: &str = "seen";
/// allowDomains: the addresses the jail's DNS forwarder resolved for an
/// allowed name, each for its record's lifetime plus a grace.
pub(crate) const ALLOWED_SET: &str = "allowed";
/// `NF_INET_LOCAL_OUT`: every locally generated IPv4 packet.
const HOOK_OUTPUT: u32 = 3;
/// `NF_IP_PRI_FILTER`.
const PRIORITY_FILTER: i32 = 0;
const CHAIN_TYPE: &str = "filter";
pub(crate) const NF_ACCEPT: i32 = 1;
pub(crate) const LOOPBACK: &str = "lo";
/// `NFT_SET_INTERVAL`: the set holds ranges.
const NFT_SET_INTERVAL: u32 = 0x4;
/// `NFT_SET_TIMEOUT`: elements may expire.
const NFT_SET_TIMEOUT: u32 = 0x10;
/// `NFT_SET_EVAL`: the packet path may add elements (a dynamic set).
const NFT_SET_EVAL: u32 = 0x20;
/// nft's data type `ipv4_addr` (how `nft list` prints the keys).
const TYPE_IPV4_ADDR: u32 = 7;
/// nft's `ipv4_addr . inet_proto . inet_service` (each type shifted in by
/// 6 bits after the one before).
const TYPE_ADDR_PROTO_PORT: u32 = (((TYPE_IPV4_ADDR << 6) | 12) << 6) | 13;
pub(crate) const DNS_PORT: u16 = 53;
/// How many refused destinations the report can name: a flood cannot grow
/// the set (once full, what is refused is still rejected, not recorded).
pub(crate) const SEEN_SIZE: u32 = 512;
/// How long a refused destination stays in the set: what is left of it
/// dates the first attempt (a session longer than this forgets the
/// oldest).
pub(crate) const SEEN_TIMEOUT_MS: u64 = 7 * 24 * 3600 * 1000;
/// The most addresses allowed names can have resolved to at once.
pub(crate) const ALLOWED_SIZE: u32 = 16384;

/// Which parts the filter has beyond the blocked set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Refused packets are counted in the `seen` set (the report).
    pub report: bool,
    /// allowDomains: only the `allowed` set's addresses (and connections
    /// begun to them), the gateway, DNS and allowIp leave.
    pub allowlist: bool,
}

/// The filter: its rules, in evaluation order, and the blocked set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterPlan {
    /// The base chain's.
    pub rules: Vec<FilterRule>,
    /// The chain every refusal goes to: record, then reject.
    pub refused: Vec<FilterRule>,
    /// The blocked set's ranges (first, last address), sorted, disjoint
    /// and not adjacent (the kernel refuses overlapping ranges).
    pub blocked: Vec<(Ipv4Addr, Ipv4Addr)>,
    pub shape: Shape,
}

/// One nf_tables expression, as planned and as read back. Anything the
/// jail does not plan is `Other` and never equals a planned expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    Meta {
        key: u32,
        dreg: u32,
    },
    /// A conntrack key (the connection's state).
    Ct {
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
    /// Adds the key starting at `sreg` to a set from the packet path
    /// (`timeout_ms` 0: the set's own), with a counter in the element.
    Dynset {
        set: String,
        op: u32,
        sreg: u32,
        timeout_ms: u64,
        counter: bool,
    },
    /// An immediate verdict (accept, drop...).
    Verdict(i32),
    /// An immediate `goto CHAIN`.
    Goto(String),
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

/// The filter for a route plan: DNS to the forwarder and every other /32
/// the plan routes out on purpose are accepted, anything else to the
/// forwarder and everything the plan blocks is refused. With the
/// allowlist, what is left is refused too unless the forwarder resolved
/// it for an allowed name (or a connection to it is under way): the
/// blocked set is looked up first, so an allowed name resolving to an
/// internal address opens nothing.
pub(crate) fn filter_plan(net: &NetPlan, shape: Shape) -> FilterPlan {
    let mut accept = BTreeSet::new();
    let mut drop = Vec::new();
    for r in &net.main {
        match r.kind {
            _ if r.blocks() => drop.push(r.dst),
            RouteKind::Unicast if r.dst.prefix() == 32 && r.dst.network() != net.forwarder => {
                accept.insert(r.dst);
            }
            _ => {}
        }
    }
    let rule = |what, verdict| FilterRule { what, verdict };
    let dns = |proto| rule(Match::Service { addr: net.forwarder, proto, port: DNS_PORT }, Verdict::Accept);
    let mut rules = vec![rule(Match::OutputInterface(LOOPBACK.into()), Verdict::Accept)];
    // With the allowlist the session's resolver is the jail's own
    // forwarder (on its loopback); pasta's is refused like anything else.
    if !shape.allowlist {
        rules.extend([dns(IPPROTO_UDP), dns(IPPROTO_TCP)]);
    }
    rules.extend(accept.into_iter().map(|n| rule(Match::Destination(n), Verdict::Accept)));
    rules.push(rule(Match::Destination(Ipv4Net::host(net.forwarder)), Verdict::Refuse));
    rules.push(rule(Match::DestinationIn(BLOCKED_SET.into()), Verdict::Refuse));
    if shape.allowlist {
        rules.push(rule(Match::DestinationIn(ALLOWED_SET.into()), Verdict::Accept));
        rules.push(rule(Match::Established, Verdict::Accept));
        rules.push(rule(Match::Any, Verdict::Refuse));
    }
    let mut refused = Vec::new();
    if shape.report {
        refused.push(rule(Match::Any, Verdict::Record));
    }
    refused.push(rule(Match::Any, Verdict::Reject));
    FilterPlan { rules, refused, blocked: ranges(&drop), shape }
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

fn refused_chain() -> ChainState {
    ChainState::regular(FAMILY_IPV4, TABLE, REFUSED_CHAIN)
}

fn set(name: &str, flags: u32, key_type: u32, key_len: u32) -> SetState {
    SetState { family: FAMILY_IPV4, table: TABLE.into(), name: name.into(), flags, key_type, key_len, timeout_ms: None, size: None, extra: Vec::new() }
}

pub(crate) fn blocked_set() -> SetState {
    set(BLOCKED_SET, NFT_SET_INTERVAL, TYPE_IPV4_ADDR, 4)
}

/// Keys: the address, the protocol and the port, each in a 32-bit
/// register of its own (12 bytes).
pub(crate) fn seen_set() -> SetState {
    SetState { timeout_ms: Some(SEEN_TIMEOUT_MS), size: Some(SEEN_SIZE), ..set(SEEN_SET, NFT_SET_TIMEOUT | NFT_SET_EVAL, TYPE_ADDR_PROTO_PORT, 12) }
}

/// Elements come from the forwarder, each with its own lifetime.
pub(crate) fn allowed_set() -> SetState {
    SetState { size: Some(ALLOWED_SIZE), ..set(ALLOWED_SET, NFT_SET_TIMEOUT, TYPE_IPV4_ADDR, 4) }
}

/// The elements nf_tables keeps for `ranges` in the set `set`.
pub fn elements(set: &SetState, ranges: &[(Ipv4Addr, Ipv4Addr)]) -> Vec<ElementState> {
    let mut v = Vec::new();
    for (first, last) in ranges {
        v.push(ElementState::new(set, first.octets().to_vec(), false));
        if let Some(after) = u32::from(*last).checked_add(1) {
            v.push(ElementState::new(set, Ipv4Addr::from(after).octets().to_vec(), true));
        }
    }
    v.sort();
    v
}

/// The whole expected nf_tables state for `plan`, in the order one
/// transaction creates it: the table, its sets, the blocked set's
/// elements, the chains (`refused` first: the base chain's rules name it)
/// and their rules. The dynamic sets start empty.
pub fn expected(plan: &FilterPlan) -> Ruleset {
    let rule = |chain: &str, r: &FilterRule| RuleState { family: FAMILY_IPV4, table: TABLE.into(), chain: chain.into(), exprs: r.exprs() };
    let mut rules: Vec<RuleState> = plan.refused.iter().map(|r| rule(REFUSED_CHAIN, r)).collect();
    rules.extend(plan.rules.iter().map(|r| rule(CHAIN, r)));
    let blocked = blocked_set();
    let elements = elements(&blocked, &plan.blocked);
    let mut sets = vec![blocked];
    sets.extend(plan.shape.report.then(seen_set));
    sets.extend(plan.shape.allowlist.then(allowed_set));
    Ruleset { tables: vec![table()], chains: vec![refused_chain(), chain()], sets, elements, rules }
}

/// Every difference between the planned filter and the namespace's whole
/// nf_tables state (any other table, chain, set, element or rule, in any
/// family, is a difference: a table with a higher-priority accept could
/// undo ours, a missing element would open a range). The elements of the
/// jail's dynamic sets are the session's traffic, not the plan: they are
/// left out (the sets themselves are compared).
pub fn compare(plan: &FilterPlan, actual: &Ruleset) -> Vec<String> {
    let want = expected(plan);
    let dynamic =
        |e: &&ElementState| e.family == FAMILY_IPV4 && e.table == TABLE && want.sets.iter().any(|s| s.name == e.set && s.flags & NFT_SET_TIMEOUT != 0);
    let have_elements: Vec<ElementState> = actual.elements.iter().filter(|e| !dynamic(e)).cloned().collect();
    let mut diffs = Vec::new();
    differ(&want.tables, &actual.tables, &mut diffs);
    differ(&want.chains, &actual.chains, &mut diffs);
    differ(&want.sets, &actual.sets, &mut diffs);
    differ(&want.elements, &have_elements, &mut diffs);
    // Rules: the exact list of each chain in order (an accept moved ahead
    // of a refusal would open a range).
    let by_chain = |rules: &[RuleState]| {
        let mut m: BTreeMap<(u8, String, String), Vec<String>> = BTreeMap::new();
        for r in rules {
            m.entry((r.family, r.table.clone(), r.chain.clone())).or_default().push(r.to_string());
        }
        m
    };
    let (w, h) = (by_chain(&want.rules), by_chain(&actual.rules));
    let chains: BTreeSet<&(u8, String, String)> = w.keys().chain(h.keys()).collect();
    let none = Vec::new();
    for c in chains {
        let (w, h) = (w.get(c).unwrap_or(&none), h.get(c).unwrap_or(&none));
        if w != h {
            let first = w.iter().zip(h).position(|(a, b)| a != b).unwrap_or(w.len().min(h.len()));
            diffs.push(format!(
                "filter rules differ from rule {} on: expected {}, found {}",
                first + 1,
                w.get(first).map_or("no more rules", String::as_str),
                h.get(first).map_or("no more rules", String::as_str),
            ));
        }
    }
    diffs
}

/// One change of the blocked set that must be applied in one transaction:
/// the elements of the ranges a new range covers go, the new range's come
/// (adding first would overlap them; removing alone would open them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SetChange {
    pub remove: Vec<ElementState>,
    pub add: Vec<ElementState>,
}

/// The changes that turn the blocked set holding `from` into one holding
/// `to`, which covers every range of `from` (the jail's set only grows).
pub(crate) fn set_changes(from: &[(Ipv4Addr, Ipv4Addr)], to: &[(Ipv4Addr, Ipv4Addr)]) -> Vec<SetChange> {
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
pub(crate) fn ranges_of(state: &Ruleset) -> Vec<(Ipv4Addr, Ipv4Addr)> {
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
