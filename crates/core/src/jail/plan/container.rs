//! What the container reaches other than through its default route, and
//! what it treats as "the internet". Pure values: the container's routes,
//! policy rules and addresses as its kernel reported them (`ContainerNet`,
//! read by `host.rs`) in; the destinations the jail blocks and the
//! description of its internet out.
//!
//! Why: pasta opens every connection of the session *in the container's
//! network*, where the container's routing applies. A VPN's subnet routed
//! through another gateway, a peering, a second routing table picked by a
//! policy rule, another address of the container itself (a Kubernetes
//! service address on `kube-ipvs0`, an extra network) would all be reached
//! through pasta. So "the internet" is only what the container reaches
//! through a default route; every other destination it routes joins the
//! blocked set:
//! 1. every route of every table (whatever its type: unicast with or
//!    without a gateway, multipath, a nexthop object, local, broadcast,
//!    anycast, and the blackhole/unreachable/prohibit/throw kinds that lead
//!    nowhere — blocking those costs nothing), whether a rule names the
//!    table now or not (a rule can appear later; a VRF's l3mdev rule names
//!    no table), but default routes (0.0.0.0/0: blocking one would block
//!    everything; it is the internet of whatever traffic reaches it);
//! 2. the `to` prefix of every policy rule that steers it anywhere but the
//!    main table;
//! 3. every address of every interface, and its subnet.
//!
//! The jail's own loopback range (127.0.0.0/8) is left out: the session's
//! 127.x is its own, pasta never sees it.

use super::routes::{IfAddr, Route, RouteKind, TABLE_DEFAULT, TABLE_LOCAL, TABLE_MAIN};
use crate::jail::net::Ipv4Net;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv4Addr;

/// The container's IPv4 network as its kernel reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerNet {
    /// Every IPv4 route of every table.
    pub routes: Vec<Route>,
    /// Every IPv4 policy rule.
    pub rules: Vec<PolicyRule>,
    /// Every IPv4 address of every interface.
    pub addrs: Vec<IfAddr>,
}

/// What a policy rule does with the traffic it selects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RuleAction {
    Lookup,
    Goto(u32),
    Nop,
    /// blackhole, unreachable or prohibit.
    Refuse(String),
}

/// A rule's selector other than `to`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Selector {
    From(Ipv4Net),
    Iif(String),
    Oif(String),
    FwMark {
        mark: u32,
        mask: u32,
    },
    UidRange {
        start: u32,
        end: u32,
    },
    IpProto(u8),
    SourcePorts(u16, u16),
    DestinationPorts(u16, u16),
    Tos(u8),
    L3mdev,
    /// Anything else the kernel reported (kept so it counts).
    Other(String),
}

/// One IPv4 policy rule, as the derivation needs it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PolicyRule {
    pub priority: u32,
    pub table: u32,
    pub action: RuleAction,
    /// The rule applies only to these destinations.
    pub to: Option<Ipv4Net>,
    pub selectors: Vec<Selector>,
    /// `not`: the rule applies where its selectors do not match.
    pub invert: bool,
    /// Lookup results with a prefix this long or shorter are ignored.
    pub suppress_prefixlen: Option<u32>,
}

impl PolicyRule {
    /// A rule of every fresh namespace (`0: lookup local`, `32766: lookup
    /// main`, `32767: lookup default`).
    fn is_builtin(&self) -> bool {
        let plain = self.action == RuleAction::Lookup && self.to.is_none() && self.selectors.is_empty() && !self.invert && self.suppress_prefixlen.is_none();
        plain && matches!((self.priority, self.table), (0, TABLE_LOCAL) | (32766, TABLE_MAIN) | (32767, TABLE_DEFAULT))
    }
}

impl fmt::Display for PolicyRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule {}:", self.priority)?;
        if self.invert {
            write!(f, " not")?;
        }
        if let Some(to) = self.to {
            write!(f, " to {to}")?;
        }
        for s in &self.selectors {
            match s {
                Selector::From(n) => write!(f, " from {n}")?,
                Selector::Iif(d) => write!(f, " iif {d}")?,
                Selector::Oif(d) => write!(f, " oif {d}")?,
                Selector::FwMark { mark, mask } => write!(f, " fwmark {mark:#x}/{mask:#x}")?,
                Selector::UidRange { start, end } => write!(f, " uidrange {start}-{end}")?,
                Selector::IpProto(p) => write!(f, " ipproto {p}")?,
                Selector::SourcePorts(a, b) => write!(f, " sport {a}-{b}")?,
                Selector::DestinationPorts(a, b) => write!(f, " dport {a}-{b}")?,
                Selector::Tos(t) => write!(f, " tos {t:#x}")?,
                Selector::L3mdev => write!(f, " l3mdev")?,
                Selector::Other(o) => write!(f, " {o}")?,
            }
        }
        match &self.action {
            RuleAction::Lookup => write!(f, " lookup {}", table_name(self.table))?,
            RuleAction::Goto(p) => write!(f, " goto {p}")?,
            RuleAction::Nop => write!(f, " nop")?,
            RuleAction::Refuse(how) => write!(f, " {how}")?,
        }
        if let Some(n) = self.suppress_prefixlen {
            write!(f, " suppress_prefixlength {n}")?;
        }
        Ok(())
    }
}

fn table_name(t: u32) -> String {
    match t {
        TABLE_MAIN => "main".into(),
        TABLE_LOCAL => "local".into(),
        TABLE_DEFAULT => "default".into(),
        t => t.to_string(),
    }
}

/// Where a blocked destination comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Source {
    /// A main-table unicast route without a gateway: a connected subnet.
    Connected,
    /// Any other route (another gateway, another table, the local table).
    Route,
    /// The `to` prefix of a policy rule.
    Rule,
    /// An address of the container (or its subnet).
    Address,
}

/// One destination of the container that the jail blocks, and why.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Destination {
    pub net: Ipv4Net,
    pub source: Source,
    /// The route, rule or address it comes from, as the kernel reported it.
    pub why: String,
}

/// The jail's own loopback: never the container's.
fn loopback(net: &Ipv4Net) -> bool {
    Ipv4Net::new(Ipv4Addr::new(127, 0, 0, 0), 8).is_some_and(|lo| lo.contains(net.network()) && net.prefix() >= 8)
}

/// Every destination the container reaches other than through a default
/// route (see the module comment), sorted by prefix; one entry per prefix
/// (the first reason, in `Source` order, wins).
pub fn destinations(net: &ContainerNet) -> Vec<Destination> {
    let mut by_net: BTreeMap<Ipv4Net, Destination> = BTreeMap::new();
    let mut add = |d: Destination| {
        if d.net.prefix() > 0 && !loopback(&d.net) {
            let slot = by_net.entry(d.net).or_insert_with(|| d.clone());
            if d.source < slot.source {
                *slot = d;
            }
        }
    };
    for a in &net.addrs {
        add(Destination { net: Ipv4Net::host(a.addr), source: Source::Address, why: format!("address {a}") });
        if let Some(subnet) = a.subnet().filter(|s| s.prefix() < 32) {
            add(Destination { net: subnet, source: Source::Address, why: format!("subnet of address {a}") });
        }
    }
    for r in &net.routes {
        let connected = r.table == TABLE_MAIN && r.kind == RouteKind::Unicast && r.gateway.is_none() && r.extra.is_empty();
        let source = match r.kind {
            _ if connected => Source::Connected,
            // The kernel's entry for an address of the container.
            RouteKind::Local if r.table == TABLE_LOCAL => Source::Address,
            _ => Source::Route,
        };
        add(Destination { net: r.dst, source, why: format!("route {r}") });
    }
    for rule in net.rules.iter().filter(|r| !r.is_builtin()) {
        let steers = !(rule.action == RuleAction::Lookup && rule.table == TABLE_MAIN) && rule.action != RuleAction::Nop;
        if let Some(to) = rule.to.filter(|_| steers) {
            add(Destination { net: to, source: Source::Rule, why: rule.to_string() });
        }
    }
    by_net.into_values().collect()
}

/// The old, narrower blocked set: the connected subnets only. Only the
/// weakened-plan tests use it (`verify --weaken jail-container-routes`),
/// to show the checks of the rest fail without it.
pub fn connected_only(all: &[Destination]) -> Vec<Destination> {
    all.iter().filter(|d| d.source == Source::Connected).cloned().collect()
}

/// The destinations cover the whole address space (a VPN's
/// redirect-gateway pair 0.0.0.0/1 + 128.0.0.0/1 does): nothing is left
/// for the default route, so the jail's sessions reach only allowIp.
pub fn covers_everything(all: &[Destination]) -> bool {
    let nets: Vec<Ipv4Net> = all.iter().map(|d| d.net).collect();
    super::filter::ranges(&nets) == [(Ipv4Addr::UNSPECIFIED, Ipv4Addr::BROADCAST)]
}

/// Whether a rule selects the traffic of pasta's sockets: locally made
/// (`iif lo`), unmarked, not bound to a device, owned by `uid`, of any
/// protocol, port and (container) source address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Selects {
    All,
    Some,
    None,
}

fn selects(rule: &PolicyRule, uid: u32) -> Selects {
    let mut verdict = Selects::All;
    for s in &rule.selectors {
        let this = match s {
            Selector::Iif(d) if d == "lo" => Selects::All,
            Selector::Iif(_) | Selector::Oif(_) | Selector::L3mdev => Selects::None,
            Selector::FwMark { mark, mask } => {
                if mark & mask == 0 {
                    Selects::All
                } else {
                    Selects::None
                }
            }
            Selector::UidRange { start, end } => {
                if (*start..=*end).contains(&uid) {
                    Selects::All
                } else {
                    Selects::None
                }
            }
            Selector::From(_) | Selector::IpProto(_) | Selector::SourcePorts(..) | Selector::DestinationPorts(..) | Selector::Tos(_) | Selector::Other(_) => {
                Selects::Some
            }
        };
        verdict = match (verdict, this) {
            (Selects::None, _) | (_, Selects::None) => Selects::None,
            (Selects::Some, _) | (_, Selects::Some) => Selects::Some,
            _ => Selects::All,
        };
    }
    if !rule.invert {
        return verdict;
    }
    match verdict {
        Selects::All => Selects::None,
        Selects::None => Selects::All,
        Selects::Some => Selects::Some,
    }
}

/// What the jail treats as the internet: the default route the
/// container's policy rules lead pasta's traffic to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Internet {
    /// The default route, and the rule that leads to its table.
    pub route: Option<(u32, Route)>,
    /// Why there is none.
    pub none: Option<String>,
    /// Other ways some of that traffic may take instead: default routes of
    /// tables that rules with narrower selectors (a protocol, a port, a
    /// source) lead to, or rules that refuse some of it.
    pub conditional: Vec<String>,
    /// The interface of the main table's default route — whose address
    /// and gateway pasta gives the jail — when the internet leaves by
    /// another (a rule sends the default traffic to a VPN's table).
    pub(crate) not_first: Option<String>,
}

impl Internet {
    /// One line for `--print-plan`, doctor and the docs.
    pub fn describe(&self) -> String {
        let mut s = match (&self.route, &self.none) {
            (Some((prio, r)), _) => {
                let via = r.gateway.map(|g| format!(" via {g}")).unwrap_or_default();
                let dev = r.dev.as_ref().map(|d| format!(" dev {d}")).unwrap_or_default();
                format!("default{via}{dev} (table {}, rule {prio})", table_name(r.table))
            }
            (None, Some(why)) => format!("nothing: {why}"),
            (None, None) => "nothing".into(),
        };
        if let Some(first) = &self.not_first {
            s += &format!(", not through {first} (the main table's default route, whose address and gateway the jail mirrors)");
        }
        for c in &self.conditional {
            s += &format!("; {c}");
        }
        s
    }

    /// The default route is not the plain one: the main table's, chosen by
    /// the built-in rule, with no rule sending some traffic elsewhere.
    pub fn unusual(&self) -> bool {
        !self.conditional.is_empty() || self.not_first.is_some() || !matches!(&self.route, Some((32766, r)) if r.table == TABLE_MAIN)
    }
}

/// Evaluates the rules in priority order for a destination no specific
/// route covers, as pasta's sockets (owned by `uid`) would meet them.
pub fn internet(net: &ContainerNet, uid: u32) -> Internet {
    let mut i = internet_by_rules(net, uid);
    // pasta takes its template from the main table's default route.
    let template = default_route(net, TABLE_MAIN).and_then(|r| r.dev.clone());
    let dev = i.route.as_ref().and_then(|(_, r)| r.dev.clone());
    if let (Some(template), Some(dev)) = (template, dev) {
        if template != dev {
            i.not_first = Some(template);
        }
    }
    i
}

fn internet_by_rules(net: &ContainerNet, uid: u32) -> Internet {
    let mut rules: Vec<&PolicyRule> = net.rules.iter().collect();
    rules.sort_by_key(|r| r.priority);
    let mut conditional = Vec::new();
    for rule in rules {
        // A rule for some destinations only: those are blocked anyway.
        if rule.to.is_some() {
            continue;
        }
        let sel = selects(rule, uid);
        if sel == Selects::None {
            continue;
        }
        match &rule.action {
            RuleAction::Lookup => {
                let Some(default) = default_route(net, rule.table) else { continue };
                // Any suppress_prefixlength ignores a /0 result.
                if rule.suppress_prefixlen.is_some() {
                    continue;
                }
                if !matches!(default.kind, RouteKind::Unicast) {
                    let what = format!("{rule} finds {default}, which leads nowhere");
                    if sel == Selects::All {
                        return Internet { route: None, none: Some(what), conditional, not_first: None };
                    }
                    conditional.push(format!("for some traffic: {what}"));
                    continue;
                }
                if sel == Selects::All {
                    return Internet { route: Some((rule.priority, default.clone())), none: None, conditional, not_first: None };
                }
                conditional.push(format!("some traffic ({rule}) goes by {default}"));
            }
            RuleAction::Refuse(how) => {
                if sel == Selects::All {
                    return Internet { route: None, none: Some(format!("{rule} refuses it ({how})")), conditional, not_first: None };
                }
                conditional.push(format!("{rule} refuses some traffic"));
            }
            RuleAction::Goto(_) => conditional.push(format!("{rule} jumps over rules for some traffic")),
            RuleAction::Nop => {}
        }
    }
    Internet { route: None, none: Some("the container has no default route".into()), conditional, not_first: None }
}

/// The preferred default route of `table` (lowest metric).
/// A `throw` route sends the lookup on to the next rule.
fn default_route(net: &ContainerNet, table: u32) -> Option<&Route> {
    net.routes.iter().filter(|r| r.table == table && r.dst.prefix() == 0 && r.kind != RouteKind::Other(RTN_THROW)).min_by_key(|r| r.metric)
}

/// `RTN_THROW` (linux/rtnetlink.h).
const RTN_THROW: u8 = 9;

#[cfg(test)]
mod tests;
