use super::*;
use crate::jail::plan::routes::Scope;

fn net(s: &str) -> Ipv4Net {
    s.parse().unwrap()
}

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn rule(priority: u32, table: u32) -> PolicyRule {
    PolicyRule { priority, table, action: RuleAction::Lookup, to: None, selectors: vec![], invert: false, suppress_prefixlen: None }
}

fn builtin() -> Vec<PolicyRule> {
    vec![rule(0, TABLE_LOCAL), rule(32766, TABLE_MAIN), rule(32767, TABLE_DEFAULT)]
}

fn in_table(table: u32, r: Route) -> Route {
    Route { table, ..r }
}

fn local(kind: RouteKind, dst: &str, dev: &str, src: &str) -> Route {
    let scope = if kind == RouteKind::Local { Scope::Host } else { Scope::Link };
    Route { table: TABLE_LOCAL, dst: net(dst), kind, gateway: None, dev: Some(dev.into()), scope, src: Some(ip(src)), metric: 0, extra: vec![] }
}

/// The lab's "devcontainer": eth0 on 198.18.0.0/24, a VPN-like vpn0 with a
/// public subnet behind its gateway, a second table picked by a rule with
/// a selector, another address on lo.
fn lab() -> ContainerNet {
    let gw = ip("198.18.0.1");
    let vpn_gw = ip("10.200.0.1");
    let mut rules = builtin();
    rules.push(PolicyRule { selectors: vec![Selector::IpProto(6)], ..rule(100, 100) });
    ContainerNet {
        routes: vec![
            Route::via(Ipv4Net::default_route(), gw, "eth0"),
            Route::on_link(net("198.18.0.0/24"), "eth0"),
            Route::on_link(net("10.200.0.0/24"), "vpn0"),
            Route::via(net("203.0.113.0/24"), vpn_gw, "vpn0"),
            in_table(100, Route::via(net("198.19.7.0/24"), vpn_gw, "vpn0")),
            local(RouteKind::Local, "127.0.0.0/8", "lo", "127.0.0.1"),
            local(RouteKind::Local, "127.0.0.1/32", "lo", "127.0.0.1"),
            local(RouteKind::Broadcast, "127.255.255.255/32", "lo", "127.0.0.1"),
            local(RouteKind::Local, "198.18.0.2/32", "eth0", "198.18.0.2"),
            local(RouteKind::Broadcast, "198.18.0.255/32", "eth0", "198.18.0.2"),
            local(RouteKind::Local, "198.51.100.7/32", "lo", "198.51.100.7"),
            local(RouteKind::Local, "10.200.0.2/32", "vpn0", "10.200.0.2"),
        ],
        rules,
        addrs: vec![
            IfAddr::new("lo", Ipv4Addr::LOCALHOST, 8),
            IfAddr::new("lo", ip("198.51.100.7"), 32),
            IfAddr::new("eth0", ip("198.18.0.2"), 24),
            IfAddr::new("vpn0", ip("10.200.0.2"), 24),
        ],
    }
}

#[test]
fn every_route_of_every_table_and_every_address_but_the_default_route() {
    let got: Vec<(String, Source)> = destinations(&lab()).into_iter().map(|d| (d.net.to_string(), d.source)).collect();
    let want = [
        ("10.200.0.0/24", Source::Connected),
        ("10.200.0.2/32", Source::Address),
        ("198.18.0.0/24", Source::Connected),
        ("198.18.0.2/32", Source::Address),
        ("198.18.0.255/32", Source::Route),
        ("198.19.7.0/24", Source::Route),
        ("198.51.100.7/32", Source::Address),
        ("203.0.113.0/24", Source::Route),
    ];
    assert_eq!(got, want.map(|(n, s)| (n.to_string(), s)));
    let why: Vec<String> = destinations(&lab()).into_iter().map(|d| d.why).collect();
    assert!(why.contains(&"route table 100 Unicast 198.19.7.0/24 via 10.200.0.1 dev vpn0 scope Universe".to_string()), "{why:?}");
    assert!(why.contains(&"address 198.51.100.7/32 dev lo".to_string()), "{why:?}");
    // The narrower, old set: connected subnets only.
    let old: Vec<String> = connected_only(&destinations(&lab())).iter().map(|d| d.net.to_string()).collect();
    assert_eq!(old, ["10.200.0.0/24", "198.18.0.0/24"]);
}

#[test]
fn routes_that_lead_nowhere_and_multipath_routes_count_too() {
    let mut n = lab();
    let bh = Route::blocked(net("192.0.2.0/24"), crate::jail::net::Block::Blackhole);
    let throw = Route { kind: RouteKind::Other(RTN_THROW), ..Route::blocked(net("198.18.128.0/17"), crate::jail::net::Block::Blackhole) };
    let multipath = Route { extra: vec!["MultiPath([..])".into()], ..Route::on_link(net("100.100.0.0/16"), "eth0") };
    let nexthop = Route { extra: vec!["Other(DefaultNla { kind: 30, .. })".into()], ..Route::on_link(net("198.18.64.0/18"), "eth0") };
    n.routes.extend([bh, in_table(7, throw), multipath, nexthop]);
    let got: Vec<String> = destinations(&n).into_iter().map(|d| format!("{} {:?}", d.net, d.source)).collect();
    for want in ["192.0.2.0/24 Route", "198.18.128.0/17 Route", "100.100.0.0/16 Route", "198.18.64.0/18 Route"] {
        assert!(got.contains(&want.to_string()), "{want} in {got:?}");
    }
}

#[test]
fn a_rules_target_is_blocked_unless_it_goes_to_the_main_table() {
    let mut n = lab();
    n.rules.push(PolicyRule { to: Some(net("192.0.2.128/25")), ..rule(50, 200) });
    n.rules.push(PolicyRule { to: Some(net("192.0.2.0/26")), ..rule(51, TABLE_MAIN) });
    n.rules.push(PolicyRule { to: Some(net("192.0.2.64/26")), action: RuleAction::Refuse("prohibit".into()), ..rule(52, 0) });
    let d = destinations(&n);
    let find = |s: &str| d.iter().find(|d| d.net == net(s));
    assert_eq!(find("192.0.2.128/25").map(|d| (d.source, d.why.as_str())), Some((Source::Rule, "rule 50: to 192.0.2.128/25 lookup 200")));
    assert!(find("192.0.2.0/26").is_none());
    assert_eq!(find("192.0.2.64/26").map(|d| d.source), Some(Source::Rule));
}

#[test]
fn the_internet_of_a_plain_container_is_the_main_default_route() {
    let i = internet(&lab(), 1000);
    assert_eq!(i.route, Some((32766, Route::via(Ipv4Net::default_route(), ip("198.18.0.1"), "eth0"))));
    assert!(i.conditional.is_empty(), "a rule to a table without a default route sends nothing elsewhere: {i:?}");
    assert!(!i.unusual());
    assert_eq!(i.describe(), "default via 198.18.0.1 dev eth0 (table main, rule 32766)");
}

fn vpn_default(table: u32) -> Route {
    in_table(table, Route::via(Ipv4Net::default_route(), ip("10.200.0.1"), "vpn0"))
}

#[test]
fn a_table_ahead_of_main_with_a_default_route_is_the_internet() {
    let mut n = lab();
    n.routes.push(vpn_default(100));
    n.rules.retain(|r| r.priority != 100);
    n.rules.push(rule(100, 100));
    let i = internet(&n, 1000);
    assert_eq!(i.route, Some((100, vpn_default(100))));
    assert!(i.unusual());
    assert_eq!(
        i.describe(),
        "default via 10.200.0.1 dev vpn0 (table 100, rule 100), not through eth0 (the main table's default route, whose address and gateway the jail mirrors)"
    );
    // A default route is never blocked, whichever table holds it.
    assert!(destinations(&n).iter().all(|d| d.net.prefix() > 0));
}

#[test]
fn a_main_default_route_through_a_vpn_is_named_as_it_is() {
    let mut n = lab();
    n.routes.retain(|r| r.dst.prefix() > 0);
    n.routes.push(vpn_default(TABLE_MAIN));
    let i = internet(&n, 0);
    // pasta mirrors vpn0 then: nothing differs from what the jail copies.
    assert_eq!(i.not_first, None);
    assert_eq!(i.describe(), "default via 10.200.0.1 dev vpn0 (table main, rule 32766)");
}

#[test]
fn wireguard_full_tunnel_suppresses_main_and_sends_the_rest_to_its_table() {
    let mut n = lab();
    n.routes.push(in_table(51820, Route { gateway: None, ..vpn_default(51820) }));
    n.rules.push(PolicyRule { suppress_prefixlen: Some(0), ..rule(32764, TABLE_MAIN) });
    n.rules.push(PolicyRule { selectors: vec![Selector::FwMark { mark: 0xca6c, mask: u32::MAX }], invert: true, ..rule(32765, 51820) });
    let i = internet(&n, 1000);
    assert_eq!(i.route.as_ref().map(|(p, r)| (*p, r.table, r.dev.clone())), Some((32765, 51820, Some("vpn0".into()))));
}

#[test]
fn rules_that_select_some_or_none_of_the_jails_traffic() {
    let mut n = lab();
    n.routes.push(vpn_default(100));
    // ipproto tcp: some of it.
    let i = internet(&n, 1000);
    assert_eq!(i.route.as_ref().map(|r| r.0), Some(32766));
    assert_eq!(i.conditional, ["some traffic (rule 100: ipproto 6 lookup 100) goes by table 100 Unicast 0.0.0.0/0 via 10.200.0.1 dev vpn0 scope Universe"]);
    assert!(i.unusual());
    // A uid range: all of it for that uid, none for another.
    n.rules.retain(|r| r.priority != 100);
    n.rules.push(PolicyRule { selectors: vec![Selector::UidRange { start: 1000, end: 1000 }], ..rule(100, 100) });
    assert_eq!(internet(&n, 1000).route.map(|r| r.0), Some(100));
    assert_eq!(internet(&n, 0).route.map(|r| r.0), Some(32766));
    assert!(internet(&n, 0).conditional.is_empty());
    // A mark, an output interface: none of it; `iif lo`: all of it.
    for (sel, applies) in [
        (Selector::FwMark { mark: 1, mask: 1 }, false),
        (Selector::Oif("vpn0".into()), false),
        (Selector::Iif("lo".into()), true),
        (Selector::Iif("eth1".into()), false),
    ] {
        n.rules.retain(|r| r.priority != 100);
        n.rules.push(PolicyRule { selectors: vec![sel.clone()], ..rule(100, 100) });
        assert_eq!(internet(&n, 0).route.map(|r| r.0 == 100), Some(applies), "{sel:?}");
    }
}

#[test]
fn no_internet_is_said_so() {
    let mut n = lab();
    n.routes.retain(|r| r.dst.prefix() > 0);
    let i = internet(&n, 0);
    assert_eq!(i.route, None);
    assert_eq!(i.describe(), "nothing: the container has no default route");
    let mut n = lab();
    n.rules.push(PolicyRule { action: RuleAction::Refuse("unreachable".into()), ..rule(10, 0) });
    assert_eq!(internet(&n, 0).describe(), "nothing: rule 10: unreachable refuses it (unreachable)");
    // A throw default sends the lookup on.
    let mut n = lab();
    n.routes.push(in_table(100, Route { kind: RouteKind::Other(RTN_THROW), ..vpn_default(100) }));
    n.rules.retain(|r| r.priority != 100);
    n.rules.push(rule(100, 100));
    assert_eq!(internet(&n, 0).route.map(|r| r.0), Some(32766));
}

#[test]
fn a_redirect_gateway_pair_leaves_nothing_for_the_default_route() {
    let mut n = lab();
    for half in ["0.0.0.0/1", "128.0.0.0/1"] {
        n.routes.push(Route::via(net(half), ip("10.200.0.1"), "vpn0"));
    }
    assert!(covers_everything(&destinations(&n)));
    assert!(!covers_everything(&destinations(&lab())));
}
