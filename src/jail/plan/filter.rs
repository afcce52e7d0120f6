//! The jail's second layer: an nf_tables filter on the jail's own output
//! path that drops every blocked destination, whatever the socket asked
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
//! Layout (one table, one base chain, policy accept, rules in order):
//! 1. `meta oifname "lo" accept` — the jail's own loopback (relays, a
//!    session talking to itself) never leaves the namespace;
//! 2. `ip daddr X/32 accept` for every /32 the route plan sends out on
//!    purpose: the gateway, the DNS forwarder, each allowIp;
//! 3. `ip daddr NET drop` for every blocked prefix of the route plan
//!    (connected subnets with their broadcast addresses, private ranges,
//!    link-local, multicast, the limited broadcast...).
//!
//! The session cannot change it: changing nf_tables needs CAP_NET_ADMIN
//! over the jail's network namespace, which only its owner (the jail's
//! user namespace, an ancestor of the session's) grants.

use super::routes::{NetPlan, RouteKind};
use crate::jail::net::Ipv4Net;
use std::collections::BTreeSet;
use std::fmt;

/// `NFPROTO_IPV4`: the table's family (IPv6 is off in the jail).
pub const FAMILY_IPV4: u8 = 2;
pub const TABLE: &str = "agent_sandbox";
pub const CHAIN: &str = "egress";
/// `NF_INET_LOCAL_OUT`: every locally generated IPv4 packet.
const HOOK_OUTPUT: u32 = 3;
/// `NF_IP_PRI_FILTER`.
const PRIORITY_FILTER: i32 = 0;
const CHAIN_TYPE: &str = "filter";
const NF_DROP: i32 = 0;
const NF_ACCEPT: i32 = 1;
const NFT_META_OIFNAME: u32 = 7;
const NFT_PAYLOAD_NETWORK_HEADER: u32 = 1;
/// The destination address in an IPv4 header.
const IPV4_DADDR: (u32, u32) = (16, 4);
/// `NFT_REG_1`: the first 128-bit data register.
const REG_1: u32 = 1;
const NFT_CMP_EQ: u32 = 0;
const IFNAMSIZ: usize = 16;
pub const LOOPBACK: &str = "lo";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Accept,
    Drop,
}

impl Verdict {
    fn code(self) -> i32 {
        match self {
            Verdict::Accept => NF_ACCEPT,
            Verdict::Drop => NF_DROP,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    OutputInterface(String),
    Destination(Ipv4Net),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterRule {
    pub what: Match,
    pub verdict: Verdict,
}

/// The filter's rules, in evaluation order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterPlan {
    pub rules: Vec<FilterRule>,
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
    /// An immediate verdict (accept, drop...).
    Verdict(i32),
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
    pub rules: Vec<RuleState>,
}

/// The filter for a route plan: what the plan routes out on purpose as a
/// /32 is accepted, what it blocks is dropped.
pub fn filter_plan(net: &NetPlan) -> FilterPlan {
    let mut accept = BTreeSet::new();
    let mut drop = BTreeSet::new();
    for r in &net.main {
        match r.kind {
            RouteKind::Blackhole | RouteKind::Unreachable => {
                drop.insert(r.dst);
            }
            RouteKind::Unicast if r.dst.prefix() == 32 => {
                accept.insert(r.dst);
            }
            _ => {}
        }
    }
    let rule = |what, verdict| FilterRule { what, verdict };
    let mut rules = vec![rule(Match::OutputInterface(LOOPBACK.into()), Verdict::Accept)];
    rules.extend(accept.into_iter().map(|n| rule(Match::Destination(n), Verdict::Accept)));
    rules.extend(drop.into_iter().map(|n| rule(Match::Destination(n), Verdict::Drop)));
    FilterPlan { rules }
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

impl FilterRule {
    /// The rule's expressions: load the field into register 1, compare,
    /// then the verdict.
    pub fn exprs(&self) -> Vec<Expr> {
        let mut v = match &self.what {
            Match::OutputInterface(name) => {
                let mut data = name.as_bytes().to_vec();
                data.resize(IFNAMSIZ, 0);
                vec![Expr::Meta { key: NFT_META_OIFNAME, dreg: REG_1 }, Expr::Cmp { sreg: REG_1, op: NFT_CMP_EQ, data }]
            }
            Match::Destination(net) => {
                let (offset, len) = IPV4_DADDR;
                let mut v = vec![Expr::Payload { base: NFT_PAYLOAD_NETWORK_HEADER, offset, len, dreg: REG_1 }];
                let mask = prefix_mask(net.prefix());
                if net.prefix() < 32 {
                    v.push(Expr::Bitwise { sreg: REG_1, dreg: REG_1, mask: mask.to_vec(), xor: vec![0; 4] });
                }
                v.push(Expr::Cmp { sreg: REG_1, op: NFT_CMP_EQ, data: net.network().octets().to_vec() });
                v
            }
        };
        v.push(Expr::Verdict(self.verdict.code()));
        v
    }

    /// The rule a read-back expression list encodes, if it is one the jail
    /// plans (for messages).
    fn from_exprs(exprs: &[Expr]) -> Option<FilterRule> {
        let verdict = match exprs.last()? {
            Expr::Verdict(NF_ACCEPT) => Verdict::Accept,
            Expr::Verdict(NF_DROP) => Verdict::Drop,
            _ => return None,
        };
        let body = &exprs[..exprs.len() - 1];
        let what = match body {
            [Expr::Meta { .. }, Expr::Cmp { data, .. }] => Match::OutputInterface(String::from_utf8_lossy(data).trim_end_matches('\0').to_string()),
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

fn prefix_mask(prefix: u8) -> [u8; 4] {
    let m = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix.min(32))) };
    m.to_be_bytes()
}

impl fmt::Display for FilterRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.what {
            Match::OutputInterface(n) => write!(f, "meta oifname \"{n}\"")?,
            Match::Destination(net) if net.prefix() == 32 => write!(f, "ip daddr {}", net.network())?,
            Match::Destination(net) => write!(f, "ip daddr {net}")?,
        }
        match self.verdict {
            Verdict::Accept => write!(f, " accept"),
            Verdict::Drop => write!(f, " drop"),
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
    Ruleset { tables: vec![table()], chains: vec![chain()], rules }
}

/// Every difference between the planned filter and the namespace's whole
/// nf_tables state (any other table, chain or rule, in any family, is a
/// difference: a table with a higher-priority accept could undo ours).
pub fn compare(plan: &FilterPlan, actual: &Ruleset) -> Vec<String> {
    let want = expected(plan);
    let mut diffs = Vec::new();
    let mut set = |want: Vec<String>, have: Vec<String>| {
        let (w, h): (BTreeSet<String>, BTreeSet<String>) = (want.into_iter().collect(), have.into_iter().collect());
        diffs.extend(w.difference(&h).map(|x| format!("missing {x}")));
        diffs.extend(h.difference(&w).map(|x| format!("unexpected {x}")));
    };
    set(want.tables.iter().map(ToString::to_string).collect(), actual.tables.iter().map(ToString::to_string).collect());
    set(want.chains.iter().map(ToString::to_string).collect(), actual.chains.iter().map(ToString::to_string).collect());
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

#[cfg(test)]
mod tests;
