use super::*;
use netlink_packet_route::address::AddressHeader;
use netlink_packet_route::route::{RouteHeader, RouteProtocol};
use netlink_packet_route::rule::RuleHeader;
use std::net::Ipv6Addr;

fn names() -> LinkNames {
    [(1, "lo".to_string()), (2, "eth0".to_string()), (3, "blocked".to_string())].into_iter().collect()
}

fn route_msg(kind: RouteType, scope: RouteScope, dst: [u8; 4], len: u8, attrs: Vec<RouteAttribute>) -> RouteMessage {
    let mut m = RouteMessage::default();
    m.header = RouteHeader {
        address_family: AddressFamily::Inet,
        destination_prefix_length: len,
        table: RouteHeader::RT_TABLE_MAIN,
        protocol: RouteProtocol::Static,
        scope,
        kind,
        ..RouteHeader::default()
    };
    m.attributes = attrs;
    if len > 0 {
        m.attributes.push(RouteAttribute::Destination(RouteAddress::Inet(Ipv4Addr::from(dst))));
    }
    m.attributes.push(RouteAttribute::Table(254));
    m
}

#[test]
fn a_blackhole_reads_back_as_planned() {
    let m = route_msg(RouteType::BlackHole, RouteScope::Universe, [10, 0, 0, 0], 8, vec![]);
    let r = route_v4(&m, &names()).unwrap();
    assert_eq!(r, Route::blocked("10.0.0.0/8".parse().unwrap(), crate::jail::net::Block::Blackhole));
}

/// The dead end has no carrier, so the kernel marks routes into it
/// `linkdown`: expected there, a difference anywhere else.
#[test]
fn a_route_into_the_dead_end_reads_back_as_planned_linkdown_and_all() {
    let mut m = route_msg(RouteType::Unicast, RouteScope::Link, [10, 0, 0, 0], 8, vec![RouteAttribute::Oif(3)]);
    m.header.flags = vec![RouteFlag::Linkdown];
    assert_eq!(route_v4(&m, &names()).unwrap(), Route::dead_end("10.0.0.0/8".parse().unwrap()));
    m.header.flags = vec![RouteFlag::Linkdown, RouteFlag::Onlink];
    assert_eq!(route_v4(&m, &names()).unwrap().extra, ["flags [Onlink]"]);
    let mut m = route_msg(RouteType::Unicast, RouteScope::Link, [10, 0, 0, 0], 8, vec![RouteAttribute::Oif(2)]);
    m.header.flags = vec![RouteFlag::Linkdown];
    assert_eq!(route_v4(&m, &names()).unwrap().extra, ["flags [Linkdown]"]);
}

#[test]
fn the_default_route_reads_back_as_planned() {
    let attrs = vec![RouteAttribute::Gateway(RouteAddress::Inet(Ipv4Addr::new(198, 18, 0, 1))), RouteAttribute::Oif(2)];
    let m = route_msg(RouteType::Unicast, RouteScope::Universe, [0; 4], 0, attrs);
    let r = route_v4(&m, &names()).unwrap();
    assert_eq!(r, Route::via(Ipv4Net::default_route(), Ipv4Addr::new(198, 18, 0, 1), "eth0"));
}

#[test]
fn unknown_attributes_and_header_fields_are_kept_as_extra() {
    let attrs = vec![RouteAttribute::Oif(9), RouteAttribute::Mark(7), RouteAttribute::Priority(5)];
    let mut m = route_msg(RouteType::Unicast, RouteScope::Link, [1, 2, 3, 0], 24, attrs);
    m.header.tos = 4;
    m.header.source_prefix_length = 8;
    let r = route_v4(&m, &names()).unwrap();
    assert_eq!(r.dev.as_deref(), Some("if9"));
    assert_eq!(r.metric, 5);
    assert_eq!(r.extra, ["from /8", "tos 4", "Mark(7)"]);
}

#[test]
fn ipv6_routes_are_not_ipv4_routes_but_are_described() {
    let mut m = RouteMessage::default();
    m.header.address_family = AddressFamily::Inet6;
    m.header.destination_prefix_length = 64;
    m.attributes.push(RouteAttribute::Destination(RouteAddress::Inet6("fe80::".parse().unwrap())));
    assert_eq!(route_v4(&m, &names()), None);
    assert!(describe_route(&m).contains("fe80::"), "{}", describe_route(&m));
}

#[test]
fn kind_and_scope_round_trip() {
    for kind in [RouteKind::Unicast, RouteKind::Local, RouteKind::Broadcast, RouteKind::Blackhole, RouteKind::Unreachable] {
        assert_eq!(route_kind(route_type_of(&kind)), kind);
    }
    for scope in [Scope::Universe, Scope::Link, Scope::Host] {
        assert_eq!(route_scope(route_scope_of(&scope)), scope);
    }
}

fn rule_msg(attrs: Vec<RuleAttribute>) -> RuleMessage {
    let mut m = RuleMessage::default();
    m.header = RuleHeader { family: AddressFamily::Inet, table: 254, action: RuleAction::ToTable, ..RuleHeader::default() };
    m.attributes = attrs;
    m
}

#[test]
fn the_default_main_rule_reads_back_as_planned() {
    let m = rule_msg(vec![
        RuleAttribute::Table(254),
        RuleAttribute::Priority(32766),
        RuleAttribute::SuppressPrefixLen(u32::MAX),
        RuleAttribute::Protocol(RouteProtocol::Kernel),
    ]);
    assert_eq!(rule(&m), Some(Rule::lookup(Family::V4, 32766, 254)));
}

#[test]
fn a_rule_with_a_selector_or_another_action_has_extras() {
    let m = rule_msg(vec![RuleAttribute::Priority(100), RuleAttribute::FwMark(1)]);
    assert_eq!(rule(&m).unwrap().extra, ["FwMark(1)"]);
    let mut m = rule_msg(vec![]);
    m.header.action = RuleAction::Blackhole;
    m.header.src_len = 8;
    assert_eq!(rule(&m).unwrap().extra, ["action Blackhole", "selector dst/0 src/8 tos 0"]);
}

#[test]
fn addresses_split_by_family() {
    let mut m = AddressMessage::default();
    m.header = AddressHeader { family: AddressFamily::Inet, prefix_len: 24, index: 2, ..AddressHeader::default() };
    m.attributes.push(AddressAttribute::Address(IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2))));
    m.attributes.push(AddressAttribute::Local(IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2))));
    assert_eq!(address(&m, &names()), Ok(IfAddr::new("eth0", Ipv4Addr::new(198, 18, 0, 2), 24)));
    let mut m6 = AddressMessage::default();
    m6.header = AddressHeader { family: AddressFamily::Inet6, prefix_len: 64, index: 2, ..AddressHeader::default() };
    m6.attributes.push(AddressAttribute::Address(IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1))));
    assert_eq!(address(&m6, &names()), Err("fe80::1/64 dev eth0".to_string()));
}

fn route6(kind: RouteType, table: u32, dst: Ipv6Addr, len: u8, oif: u32, more: Vec<RouteAttribute>) -> RouteMessage {
    let mut m = RouteMessage::default();
    m.header.address_family = AddressFamily::Inet6;
    m.header.kind = kind;
    m.header.destination_prefix_length = len;
    m.attributes = vec![RouteAttribute::Table(table), RouteAttribute::Destination(RouteAddress::Inet6(dst)), RouteAttribute::Oif(oif)];
    m.attributes.extend(more);
    m
}

/// Where IPv6 stays on in the jail (a masked /proc), only the kernel's own
/// routes of an unaddressed namespace pass: the loopback's ::1 and the
/// per-interface multicast route. A route out, a gateway, another prefix or
/// table is a difference.
#[test]
fn only_the_kernels_own_ipv6_routes_are_defaults() {
    let lo = Ipv6Addr::LOCALHOST;
    let mcast = Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0);
    let bookkeeping = vec![RouteAttribute::Priority(256), RouteAttribute::Preference(netlink_packet_route::route::RoutePreference::Medium)];
    for ok in [
        route6(RouteType::Local, 255, lo, 128, 1, vec![]),
        route6(RouteType::Unicast, 254, lo, 128, 1, bookkeeping.clone()),
        route6(RouteType::Multicast, 255, mcast, 8, 2, bookkeeping.clone()),
    ] {
        assert!(ipv6_kernel_default(&ok, &names()), "{ok:?}");
    }
    let gw = RouteAttribute::Gateway(RouteAddress::Inet6("fe80::1".parse().unwrap()));
    for bad in [
        route6(RouteType::Unicast, 254, Ipv6Addr::UNSPECIFIED, 0, 2, vec![gw.clone()]),
        route6(RouteType::Unicast, 254, "fe80::".parse().unwrap(), 64, 2, vec![]),
        route6(RouteType::Local, 255, "fe80::1".parse().unwrap(), 128, 2, vec![]),
        route6(RouteType::Local, 255, lo, 128, 2, vec![]),
        route6(RouteType::Multicast, 254, mcast, 8, 2, vec![]),
        route6(RouteType::Multicast, 255, mcast, 8, 2, vec![gw]),
        route6(RouteType::Unicast, 100, lo, 128, 1, vec![]),
    ] {
        assert!(!ipv6_kernel_default(&bad, &names()), "{bad:?}");
    }
    // An IPv4 route is never one.
    assert!(!ipv6_kernel_default(&route_msg(RouteType::Local, RouteScope::Host, [127, 0, 0, 1], 32, vec![]), &names()));
}
