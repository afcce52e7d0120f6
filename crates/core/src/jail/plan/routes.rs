//! The jail's network plan as a pure value: which routes, rules, addresses
//! and links the jail's namespace must hold once it is locked, computed
//! from what pasta configured (the interface, its addresses, the gateway)
//! and the launch inputs (forwarder, allowIp, the container's destinations
//! other than its default route: `container.rs`). Applying it is
//! `run/lockdown.rs`; checking it is `compare.rs`.

use crate::jail::net::{aggregate, blocked_ranges, Block, Ipv4Net};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv4Addr;

pub(crate) const TABLE_DEFAULT: u32 = 253;
pub(crate) const TABLE_MAIN: u32 = 254;
pub(crate) const TABLE_LOCAL: u32 = 255;
pub(crate) const LOOPBACK: &str = "lo";
/// The jail's dead end: a persistent tap device nothing reads, which the
/// holder makes beside the jail's interface. Every blocked destination is
/// routed to it: a routed attempt then passes the packet filter's output
/// hook like an interface-bound one, so it is rejected at once (ICMP
/// administratively prohibited: "No route to host") and counted for the
/// report; without the filter the tap would drop it (no reader, no
/// carrier), so the routes alone still lead nowhere.
pub(crate) const DEAD_END: &str = "blocked";
/// The metric of the multicast range's route into the dead end
/// (`Route::dead_end`).
pub(crate) const DEAD_END_MULTICAST_METRIC: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RouteKind {
    Unicast,
    Local,
    Broadcast,
    Blackhole,
    Unreachable,
    Other(u8),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Scope {
    Universe,
    Link,
    Host,
    Other(u8),
}

/// One IPv4 route, normalised so that a planned route and the kernel's
/// read-back of it compare equal.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Route {
    pub table: u32,
    pub dst: Ipv4Net,
    pub kind: RouteKind,
    pub gateway: Option<Ipv4Addr>,
    pub dev: Option<String>,
    pub scope: Scope,
    /// Preferred source (the kernel sets it on local/broadcast entries).
    pub src: Option<Ipv4Addr>,
    pub metric: u32,
    /// Anything else the kernel reported (read-back only; a plan never has
    /// any, so any extra attribute is a difference).
    pub extra: Vec<String>,
}

impl Route {
    fn new(table: u32, dst: Ipv4Net, kind: RouteKind, scope: Scope) -> Route {
        Route { table, dst, kind, gateway: None, dev: None, scope, src: None, metric: 0, extra: vec![] }
    }

    pub fn blocked(dst: Ipv4Net, block: Block) -> Route {
        let kind = match block {
            Block::Blackhole => RouteKind::Blackhole,
            Block::Unreachable => RouteKind::Unreachable,
        };
        Route::new(TABLE_MAIN, dst, kind, Scope::Universe)
    }

    /// `dst` routed into the dead end (`DEAD_END`). Multicast gets a
    /// metric of its own. Why: the kernel shares one route object (and its
    /// per-CPU cache of the last route it made) between routes with the
    /// same attributes, and a multicast send through the dead end leaves a
    /// cached route marked multicast there. A TCP connect through another
    /// range into the dead end, on the same CPU, got that route and failed
    /// with ENETUNREACH before any packet, so it was neither rejected by
    /// the filter nor counted. A distinct metric keeps multicast in a route
    /// object of its own.
    pub fn dead_end(dst: Ipv4Net) -> Route {
        let multicast = dst.prefix() >= 4 && dst.network().is_multicast();
        let metric = if multicast { DEAD_END_MULTICAST_METRIC } else { 0 };
        Route { metric, ..Route::on_link(dst, DEAD_END) }
    }

    /// Whether this main-table route blocks its destination: a blackhole,
    /// an unreachable route, or one into the dead end.
    pub fn blocks(&self) -> bool {
        match self.kind {
            RouteKind::Blackhole | RouteKind::Unreachable => true,
            RouteKind::Unicast => self.gateway.is_none() && self.dev.as_deref() == Some(DEAD_END),
            _ => false,
        }
    }

    pub fn on_link(dst: Ipv4Net, dev: &str) -> Route {
        Route { dev: Some(dev.to_string()), ..Route::new(TABLE_MAIN, dst, RouteKind::Unicast, Scope::Link) }
    }

    pub fn via(dst: Ipv4Net, gateway: Ipv4Addr, dev: &str) -> Route {
        Route { gateway: Some(gateway), dev: Some(dev.to_string()), ..Route::new(TABLE_MAIN, dst, RouteKind::Unicast, Scope::Universe) }
    }

    fn local_entry(kind: RouteKind, dst: Ipv4Net, dev: &str, src: Ipv4Addr, scope: Scope) -> Route {
        Route { dev: Some(dev.to_string()), src: Some(src), ..Route::new(TABLE_LOCAL, dst, kind, scope) }
    }

    /// Installing this route needs the gateway route first.
    pub(crate) fn needs_gateway(&self) -> bool {
        self.gateway.is_some()
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = match self.table {
            TABLE_MAIN => "main".to_string(),
            TABLE_LOCAL => "local".to_string(),
            TABLE_DEFAULT => "default".to_string(),
            t => t.to_string(),
        };
        write!(f, "table {table} {:?} {}", self.kind, self.dst)?;
        if let Some(g) = self.gateway {
            write!(f, " via {g}")?;
        }
        if let Some(d) = &self.dev {
            write!(f, " dev {d}")?;
        }
        write!(f, " scope {:?}", self.scope)?;
        if let Some(s) = self.src {
            write!(f, " src {s}")?;
        }
        if self.metric != 0 {
            write!(f, " metric {}", self.metric)?;
        }
        for e in &self.extra {
            write!(f, " {e}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Family {
    V4,
    V6,
}

/// One policy-routing rule, normalised.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Rule {
    pub family: Family,
    pub priority: u32,
    pub table: u32,
    /// Anything but "lookup TABLE for all traffic" (selectors, marks,
    /// actions other than lookup).
    pub extra: Vec<String>,
}

impl Rule {
    pub fn lookup(family: Family, priority: u32, table: u32) -> Rule {
        Rule { family, priority, table, extra: vec![] }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} rule {}: lookup {}", self.family, self.priority, self.table)?;
        for e in &self.extra {
            write!(f, " {e}")?;
        }
        Ok(())
    }
}

/// An IPv4 address on an interface.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct IfAddr {
    pub dev: String,
    pub addr: Ipv4Addr,
    pub prefix: u8,
}

impl IfAddr {
    pub fn new(dev: &str, addr: Ipv4Addr, prefix: u8) -> IfAddr {
        IfAddr { dev: dev.to_string(), addr, prefix }
    }

    pub fn subnet(&self) -> Option<Ipv4Net> {
        Ipv4Net::new(self.addr, self.prefix)
    }
}

impl fmt::Display for IfAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} dev {}", self.addr, self.prefix, self.dev)
    }
}

/// Everything read back from the jail's namespace (the input of both
/// `observe` and `compare`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Link names.
    pub links: Vec<String>,
    pub addrs: Vec<IfAddr>,
    /// IPv6 addresses, described (the plan expects none).
    pub(crate) addrs6: Vec<String>,
    /// IPv4 routes of every table.
    pub routes: Vec<Route>,
    /// IPv6 routes of every table, described (the plan expects none).
    pub(crate) routes6: Vec<String>,
    pub rules: Vec<Rule>,
}

/// What pasta configured, as observed before the lock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    pub dev: String,
    pub addrs: Vec<IfAddr>,
    pub gateway: Ipv4Addr,
}

/// Why the namespace pasta configured cannot be planned for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObserveError {
    /// No interface besides loopback, or more than one.
    Interfaces(Vec<String>),
    /// The interface has no IPv4 address.
    NoAddress(String),
    /// No default route through a gateway on the interface.
    NoGateway,
}

/// The launch inputs of the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanInputs {
    pub forwarder: Ipv4Addr,
    pub allow_ip: Vec<Ipv4Addr>,
    /// What the container reaches other than through its default route
    /// (`container::destinations`): blocked in the jail.
    pub container: Vec<Ipv4Net>,
    /// Blocked destinations lead into the dead end (`DEAD_END`), so the
    /// filter rejects and counts routed attempts too. Always true from the
    /// launch plan; `verify --weaken jail-dead-end` switches it off
    /// (blackhole and unreachable routes: a routed attempt fails on the
    /// route, uncounted).
    pub dead_end: bool,
}

/// The whole expected state of the locked namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetPlan {
    /// The DNS forwarder (its /32 is routed out; the filter lets only DNS
    /// through to it).
    pub forwarder: Ipv4Addr,
    /// The main table, in install order: routes without a gateway first,
    /// then those via the gateway; each group sorted by destination.
    pub main: Vec<Route>,
    /// Local-table entries the kernel derives from the addresses.
    pub local: Vec<Route>,
    /// Local-table entries some kernel versions add and others do not
    /// (the broadcast route of a network address); allowed, not required.
    pub(crate) local_optional: Vec<Route>,
    pub rules: Vec<Rule>,
    pub addrs: Vec<IfAddr>,
    pub links: Vec<String>,
}

/// Reads the interface, its addresses and the gateway off the namespace
/// pasta configured.
pub fn observe(snap: &Snapshot) -> Result<Observed, ObserveError> {
    let others: Vec<&String> = snap.links.iter().filter(|l| l.as_str() != LOOPBACK && l.as_str() != DEAD_END).collect();
    let [dev] = others.as_slice() else {
        return Err(ObserveError::Interfaces(others.into_iter().cloned().collect()));
    };
    let mut addrs: Vec<IfAddr> = snap.addrs.iter().filter(|a| &a.dev == *dev).cloned().collect();
    addrs.sort();
    if addrs.is_empty() {
        return Err(ObserveError::NoAddress(dev.to_string()));
    }
    let gateway = snap
        .routes
        .iter()
        .filter(|r| r.table == TABLE_MAIN && r.kind == RouteKind::Unicast)
        .filter(|r| r.dst.prefix() == 0 && r.dev.as_deref() == Some(dev.as_str()))
        .min_by_key(|r| r.metric)
        .and_then(|r| r.gateway)
        .ok_or(ObserveError::NoGateway)?;
    Ok(Observed { dev: dev.to_string(), addrs, gateway })
}

/// The plan (docs/jail.md, "The route plan"): everything the container
/// routes other than by its default route, the jail's connected subnet
/// and the fixed ranges into the dead end, then the gateway on-link, the
/// default route, the DNS forwarder and one /32 per allowIp via the
/// gateway.
pub fn net_plan(obs: &Observed, inputs: &PlanInputs) -> NetPlan {
    let mut main = main_table(obs, inputs);
    main.sort_by_key(|r| (r.needs_gateway(), r.dst));
    let mut addrs = obs.addrs.clone();
    addrs.push(loopback_addr());
    addrs.sort();
    let (local, local_optional) = local_table(&addrs);
    NetPlan {
        forwarder: inputs.forwarder,
        main,
        local,
        local_optional,
        rules: default_rules(),
        addrs,
        links: {
            let mut l = vec![LOOPBACK.to_string(), obs.dev.clone(), DEAD_END.to_string()];
            l.sort();
            l
        },
    }
}

/// Main-table routes keyed by destination: a later insert with the same
/// destination wins, so the order below is the precedence (an allowed /32,
/// the forwarder and the gateway override a block of the same /32).
/// The blocked prefixes: every fixed range, then the container's
/// destinations and the jail's connected subnets, aggregated (a prefix a
/// fixed range or another covers adds nothing; two halves are one prefix),
/// so that a container routing thousands of prefixes gets as few routes
/// as cover them.
fn main_table(obs: &Observed, inputs: &PlanInputs) -> Vec<Route> {
    let mut by_dst: BTreeMap<Ipv4Net, Route> = BTreeMap::new();
    let fixed = blocked_ranges();
    let fixed_nets: Vec<Ipv4Net> = fixed.iter().map(|(n, _)| *n).collect();
    let connected = obs.addrs.iter().filter_map(IfAddr::subnet).filter(|n| n.prefix() < 32);
    let others: Vec<Ipv4Net> = inputs.container.iter().copied().chain(connected).collect();
    let block = |net, how| if inputs.dead_end { Route::dead_end(net) } else { Route::blocked(net, how) };
    for net in aggregate(&others, &fixed_nets) {
        by_dst.insert(net, block(net, Block::Blackhole));
    }
    for (net, how) in fixed {
        by_dst.insert(net, block(net, how));
    }
    let gw = obs.gateway;
    let dev = obs.dev.as_str();
    for ip in &inputs.allow_ip {
        by_dst.insert(Ipv4Net::host(*ip), Route::via(Ipv4Net::host(*ip), gw, dev));
    }
    let fwd = Ipv4Net::host(inputs.forwarder);
    by_dst.insert(fwd, Route::via(fwd, gw, dev));
    by_dst.insert(Ipv4Net::default_route(), Route::via(Ipv4Net::default_route(), gw, dev));
    by_dst.insert(Ipv4Net::host(gw), Route::on_link(Ipv4Net::host(gw), dev));
    by_dst.into_values().collect()
}

fn loopback_addr() -> IfAddr {
    IfAddr::new(LOOPBACK, Ipv4Addr::LOCALHOST, 8)
}

/// The local table the kernel derives from the addresses: `local` for
/// each address (and the whole prefix on loopback), `broadcast` for the
/// all-ones address of prefixes shorter than /31.
fn local_table(addrs: &[IfAddr]) -> (Vec<Route>, Vec<Route>) {
    let mut required = Vec::new();
    let mut optional = Vec::new();
    for a in addrs {
        let Some(net) = a.subnet() else { continue };
        let entry = |kind, dst, scope| Route::local_entry(kind, dst, &a.dev, a.addr, scope);
        required.push(entry(RouteKind::Local, Ipv4Net::host(a.addr), Scope::Host));
        if a.dev == LOOPBACK && a.prefix < 32 {
            required.push(entry(RouteKind::Local, net, Scope::Host));
        }
        if a.prefix < 31 {
            required.push(entry(RouteKind::Broadcast, Ipv4Net::host(net.broadcast()), Scope::Link));
            optional.push(entry(RouteKind::Broadcast, Ipv4Net::host(net.network()), Scope::Link));
        }
    }
    required.sort();
    required.dedup();
    optional.sort();
    optional.dedup();
    (required, optional)
}

/// The rules every fresh network namespace has; the jail adds none.
pub(crate) fn default_rules() -> Vec<Rule> {
    let mut rules = vec![
        Rule::lookup(Family::V4, 0, TABLE_LOCAL),
        Rule::lookup(Family::V4, 32766, TABLE_MAIN),
        Rule::lookup(Family::V4, 32767, TABLE_DEFAULT),
        Rule::lookup(Family::V6, 0, TABLE_LOCAL),
        Rule::lookup(Family::V6, 32766, TABLE_MAIN),
    ];
    rules.sort();
    rules
}

#[cfg(test)]
mod tests;
