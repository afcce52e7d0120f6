//! Converts rtnetlink dumps into the plan's normalised values (`Route`,
//! `Rule`, `IfAddr`), keeping every attribute the plan does not model as
//! `extra` so that it shows up as a difference. Pure: tests feed it
//! fabricated messages.

use super::container::{PolicyRule, RuleAction as Act, Selector};
use super::routes::{Family, IfAddr, Route, RouteKind, Rule, Scope, DEAD_END};
use crate::jail::net::Ipv4Net;
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteFlag, RouteMessage, RouteScope, RouteType};
use netlink_packet_route::rule::{RuleAction, RuleAttribute, RuleFlag, RuleMessage};
use netlink_packet_route::AddressFamily;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

/// Interface index → name.
pub(crate) type LinkNames = BTreeMap<u32, String>;

fn link_name(names: &LinkNames, index: u32) -> String {
    names.get(&index).cloned().unwrap_or_else(|| format!("if{index}"))
}

/// An IPv4 route message, normalised; `None` for other families.
pub(crate) fn route_v4(msg: &RouteMessage, names: &LinkNames) -> Option<Route> {
    if msg.header.address_family != AddressFamily::Inet {
        return None;
    }
    let h = &msg.header;
    let mut dst = Ipv4Addr::UNSPECIFIED;
    let mut r = Route {
        table: u32::from(h.table),
        dst: Ipv4Net::default_route(),
        kind: route_kind(h.kind),
        gateway: None,
        dev: None,
        scope: route_scope(h.scope),
        src: None,
        metric: 0,
        extra: Vec::new(),
    };
    for attr in &msg.attributes {
        match attr {
            RouteAttribute::Destination(RouteAddress::Inet(a)) => dst = *a,
            RouteAttribute::Gateway(RouteAddress::Inet(g)) => r.gateway = Some(*g),
            RouteAttribute::PrefSource(RouteAddress::Inet(s)) => r.src = Some(*s),
            RouteAttribute::Oif(i) => r.dev = Some(link_name(names, *i)),
            RouteAttribute::Table(t) => r.table = *t,
            RouteAttribute::Priority(p) => r.metric = *p,
            RouteAttribute::CacheInfo(_) => {}
            other => r.extra.push(format!("{other:?}")),
        }
    }
    match Ipv4Net::new(dst, h.destination_prefix_length) {
        Some(net) => r.dst = net,
        None => r.extra.push(format!("bad prefix length {}", h.destination_prefix_length)),
    }
    let into_dead_end = r.dev.as_deref() == Some(DEAD_END);
    r.extra.splice(0..0, header_extras(msg, into_dead_end));
    Some(r)
}

/// Header fields the plan never uses (a source prefix, a TOS, flags). A
/// route into the dead end is `linkdown`: the tap has no reader, so no
/// carrier (that is the point); that flag alone is expected there.
fn header_extras(msg: &RouteMessage, into_dead_end: bool) -> Vec<String> {
    let h = &msg.header;
    let mut extra = Vec::new();
    if h.source_prefix_length != 0 {
        extra.push(format!("from /{}", h.source_prefix_length));
    }
    if h.tos != 0 {
        extra.push(format!("tos {}", h.tos));
    }
    let flags: Vec<&RouteFlag> = h.flags.iter().filter(|f| !(into_dead_end && **f == RouteFlag::Linkdown)).collect();
    if !flags.is_empty() {
        extra.push(format!("flags {flags:?}"));
    }
    extra
}

fn route_kind(k: RouteType) -> RouteKind {
    match k {
        RouteType::Unicast => RouteKind::Unicast,
        RouteType::Local => RouteKind::Local,
        RouteType::Broadcast => RouteKind::Broadcast,
        RouteType::BlackHole => RouteKind::Blackhole,
        RouteType::Unreachable => RouteKind::Unreachable,
        other => RouteKind::Other(u8::from(other)),
    }
}

fn route_scope(s: RouteScope) -> Scope {
    match s {
        RouteScope::Universe => Scope::Universe,
        RouteScope::Link => Scope::Link,
        RouteScope::Host => Scope::Host,
        other => Scope::Other(u8::from(other)),
    }
}

/// The `RouteType` and `RouteScope` a planned route is installed with.
pub(crate) fn route_type_of(kind: &RouteKind) -> RouteType {
    match kind {
        RouteKind::Unicast => RouteType::Unicast,
        RouteKind::Local => RouteType::Local,
        RouteKind::Broadcast => RouteType::Broadcast,
        RouteKind::Blackhole => RouteType::BlackHole,
        RouteKind::Unreachable => RouteType::Unreachable,
        RouteKind::Other(n) => RouteType::from(*n),
    }
}

pub(crate) fn route_scope_of(scope: &Scope) -> RouteScope {
    match scope {
        Scope::Universe => RouteScope::Universe,
        Scope::Link => RouteScope::Link,
        Scope::Host => RouteScope::Host,
        Scope::Other(n) => RouteScope::from(*n),
    }
}

/// Any IPv6 route, described for the difference list.
/// Whether `msg` is an IPv6 route the kernel itself keeps in a namespace
/// whose IPv6 is on but unaddressed (`lockdown::Ipv6::Unaddressed`): the
/// loopback's `::1` (local table, and its prefix route in the main table)
/// and the per-interface multicast route `ff00::/8` in the local table. No
/// other: any gateway, preferred source or other attribute but the
/// kernel's bookkeeping makes it a difference.
pub(crate) fn ipv6_kernel_default(msg: &RouteMessage, names: &LinkNames) -> bool {
    use std::net::Ipv6Addr;
    const LOCAL: u32 = 255;
    const MAIN: u32 = 254;
    let h = &msg.header;
    let mut dst = Ipv6Addr::UNSPECIFIED;
    let mut table = u32::from(h.table);
    let mut dev = None;
    for attr in &msg.attributes {
        match attr {
            RouteAttribute::Destination(RouteAddress::Inet6(a)) => dst = *a,
            RouteAttribute::Table(t) => table = *t,
            RouteAttribute::Oif(i) => dev = Some(link_name(names, *i)),
            RouteAttribute::Priority(_) | RouteAttribute::CacheInfo(_) | RouteAttribute::Preference(_) => {}
            _ => return false,
        }
    }
    let loopback = dev.as_deref() == Some("lo") && dst == Ipv6Addr::LOCALHOST && h.destination_prefix_length == 128;
    let multicast = dst == Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0) && h.destination_prefix_length == 8 && dev.is_some();
    h.address_family == AddressFamily::Inet6
        && match (h.kind, table) {
            (RouteType::Local, LOCAL) | (RouteType::Unicast, MAIN) => loopback,
            (RouteType::Multicast, LOCAL) => multicast,
            _ => false,
        }
}

/// The loopback's own IPv6 address, as `address` describes it: what a
/// namespace whose IPv6 is on but unaddressed holds.
pub(crate) const IPV6_LOOPBACK_ADDRESS: &str = "::1/128 dev lo";

pub(crate) fn describe_route(msg: &RouteMessage) -> String {
    let dst = msg.attributes.iter().find_map(|a| match a {
        RouteAttribute::Destination(d) => Some(format!("{d:?}")),
        _ => None,
    });
    format!(
        "{:?} {}/{} table {} {:?}",
        msg.header.kind,
        dst.unwrap_or_else(|| "default".into()),
        msg.header.destination_prefix_length,
        msg.header.table,
        msg.attributes
    )
}

/// A policy rule, normalised; everything but "lookup TABLE for all
/// traffic at PRIORITY" goes into `extra`.
pub(crate) fn rule(msg: &RuleMessage) -> Option<Rule> {
    let h = &msg.header;
    let family = match h.family {
        AddressFamily::Inet => Family::V4,
        AddressFamily::Inet6 => Family::V6,
        _ => return None,
    };
    let mut r = Rule { family, priority: 0, table: u32::from(h.table), extra: vec![] };
    if h.action != RuleAction::ToTable {
        r.extra.push(format!("action {:?}", h.action));
    }
    if h.dst_len != 0 || h.src_len != 0 || h.tos != 0 {
        r.extra.push(format!("selector dst/{} src/{} tos {}", h.dst_len, h.src_len, h.tos));
    }
    if !h.flags.is_empty() {
        r.extra.push(format!("flags {:?}", h.flags));
    }
    for attr in &msg.attributes {
        match attr {
            RuleAttribute::Priority(p) => r.priority = *p,
            RuleAttribute::Table(t) => r.table = *t,
            RuleAttribute::Protocol(_) => {}
            // The kernel reports "no suppression" as all ones.
            RuleAttribute::SuppressPrefixLen(u32::MAX) | RuleAttribute::SuppressIfGroup(u32::MAX) => {}
            other => r.extra.push(format!("{other:?}")),
        }
    }
    Some(r)
}

/// An IPv4 policy rule of the container, with its selectors kept apart
/// (`container::internet` weighs them); `None` for other families.
pub(crate) fn policy_rule(msg: &RuleMessage) -> Option<PolicyRule> {
    let h = &msg.header;
    if h.family != AddressFamily::Inet {
        return None;
    }
    let mut r = PolicyRule {
        priority: 0,
        table: u32::from(h.table),
        action: Act::Lookup,
        to: None,
        selectors: Vec::new(),
        invert: h.flags.contains(&RuleFlag::Invert),
        suppress_prefixlen: None,
    };
    r.action = match h.action {
        RuleAction::ToTable => Act::Lookup,
        RuleAction::Nop => Act::Nop,
        RuleAction::Goto => Act::Goto(0),
        RuleAction::Blackhole => Act::Refuse("blackhole".into()),
        RuleAction::Unreachable => Act::Refuse("unreachable".into()),
        RuleAction::Prohibit => Act::Refuse("prohibit".into()),
        other => Act::Refuse(format!("action {other:?}")),
    };
    if h.tos != 0 {
        r.selectors.push(Selector::Tos(h.tos));
    }
    for attr in &msg.attributes {
        match attr {
            RuleAttribute::Priority(p) => r.priority = *p,
            RuleAttribute::Table(t) => r.table = *t,
            RuleAttribute::Goto(p) => r.action = Act::Goto(*p),
            RuleAttribute::Destination(IpAddr::V4(a)) => r.to = Ipv4Net::new(*a, h.dst_len),
            RuleAttribute::Source(IpAddr::V4(a)) => r.selectors.extend(Ipv4Net::new(*a, h.src_len).map(Selector::From)),
            RuleAttribute::Iifname(d) => r.selectors.push(Selector::Iif(d.clone())),
            RuleAttribute::Oifname(d) => r.selectors.push(Selector::Oif(d.clone())),
            RuleAttribute::FwMark(m) => {
                let mask = msg.attributes.iter().find_map(|a| if let RuleAttribute::FwMask(m) = a { Some(*m) } else { None }).unwrap_or(u32::MAX);
                r.selectors.push(Selector::FwMark { mark: *m, mask });
            }
            RuleAttribute::FwMask(_) | RuleAttribute::Protocol(_) => {}
            RuleAttribute::UidRange(u) => r.selectors.push(Selector::UidRange { start: u.start, end: u.end }),
            RuleAttribute::IpProtocol(p) => r.selectors.push(Selector::IpProto(i32::from(*p) as u8)),
            RuleAttribute::SourcePortRange(p) => r.selectors.push(Selector::SourcePorts(p.start, p.end)),
            RuleAttribute::DestinationPortRange(p) => r.selectors.push(Selector::DestinationPorts(p.start, p.end)),
            RuleAttribute::L3MDev(true) => r.selectors.push(Selector::L3mdev),
            RuleAttribute::L3MDev(false) | RuleAttribute::SuppressIfGroup(u32::MAX) | RuleAttribute::SuppressPrefixLen(u32::MAX) => {}
            RuleAttribute::SuppressPrefixLen(n) => r.suppress_prefixlen = Some(*n),
            other => r.selectors.push(Selector::Other(format!("{other:?}"))),
        }
    }
    // A `to`/`from` the attributes did not carry is still a selector.
    if h.dst_len != 0 && r.to.is_none() {
        r.selectors.push(Selector::Other(format!("to /{}", h.dst_len)));
    }
    if h.src_len != 0 && !r.selectors.iter().any(|s| matches!(s, Selector::From(_))) {
        r.selectors.push(Selector::Other(format!("from /{}", h.src_len)));
    }
    Some(r)
}

/// An address: IPv4 as `IfAddr`, anything else described.
pub(crate) fn address(msg: &AddressMessage, names: &LinkNames) -> Result<IfAddr, String> {
    let dev = link_name(names, msg.header.index);
    let local = msg.attributes.iter().find_map(|a| match a {
        AddressAttribute::Local(ip) => Some(*ip),
        _ => None,
    });
    let addr = local.or_else(|| {
        msg.attributes.iter().find_map(|a| match a {
            AddressAttribute::Address(ip) => Some(*ip),
            _ => None,
        })
    });
    match addr {
        Some(IpAddr::V4(a)) => Ok(IfAddr { dev, addr: a, prefix: msg.header.prefix_len }),
        Some(IpAddr::V6(a)) => Err(format!("{a}/{} dev {dev}", msg.header.prefix_len)),
        None => Err(format!("address without IP on {dev}: {:?}", msg.attributes)),
    }
}

#[cfg(test)]
mod tests;
