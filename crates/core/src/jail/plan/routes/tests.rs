use super::*;
use std::net::Ipv4Addr;

fn net(s: &str) -> Ipv4Net {
    s.parse().unwrap()
}

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

/// What pasta configures in a typical devcontainer: eth0 172.17.0.2/16,
/// gateway 172.17.0.1 (itself inside 172.16/12).
fn docker_observed() -> Observed {
    Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", ip("172.17.0.2"), 16)], gateway: ip("172.17.0.1") }
}

fn inputs() -> PlanInputs {
    PlanInputs {
        forwarder: ip("192.0.2.53"),
        allow_ip: vec![ip("10.1.2.3"), ip("192.168.1.50")],
        container: vec![net("172.17.0.0/16"), net("172.18.0.0/16")],
        dead_end: true,
    }
}

#[test]
fn the_whole_plan_for_a_docker_container() {
    let plan = net_plan(&docker_observed(), &inputs());
    let main: Vec<String> = plan.main.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        main,
        [
            // Without a gateway, sorted by destination.
            "table main Unicast 10.0.0.0/8 dev blocked scope Link",
            "table main Unicast 100.64.0.0/10 dev blocked scope Link",
            "table main Unicast 168.63.129.16/32 dev blocked scope Link",
            "table main Unicast 169.254.0.0/16 dev blocked scope Link",
            // The container's 172.17/16 and 172.18/16 are inside 172.16/12.
            "table main Unicast 172.16.0.0/12 dev blocked scope Link",
            "table main Unicast 172.17.0.1/32 dev eth0 scope Link",
            "table main Unicast 192.168.0.0/16 dev blocked scope Link",
            "table main Unicast 224.0.0.0/4 dev blocked scope Link metric 1",
            "table main Unicast 255.255.255.255/32 dev blocked scope Link",
            // Via the gateway, sorted by destination.
            "table main Unicast 0.0.0.0/0 via 172.17.0.1 dev eth0 scope Universe",
            "table main Unicast 10.1.2.3/32 via 172.17.0.1 dev eth0 scope Universe",
            "table main Unicast 192.0.2.53/32 via 172.17.0.1 dev eth0 scope Universe",
            "table main Unicast 192.168.1.50/32 via 172.17.0.1 dev eth0 scope Universe",
        ]
    );
    let local: Vec<String> = plan.local.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        local,
        [
            "table local Local 127.0.0.0/8 dev lo scope Host src 127.0.0.1",
            "table local Local 127.0.0.1/32 dev lo scope Host src 127.0.0.1",
            "table local Broadcast 127.255.255.255/32 dev lo scope Link src 127.0.0.1",
            "table local Local 172.17.0.2/32 dev eth0 scope Host src 172.17.0.2",
            "table local Broadcast 172.17.255.255/32 dev eth0 scope Link src 172.17.0.2",
        ]
    );
    let optional: Vec<String> = plan.local_optional.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        optional,
        ["table local Broadcast 127.0.0.0/32 dev lo scope Link src 127.0.0.1", "table local Broadcast 172.17.0.0/32 dev eth0 scope Link src 172.17.0.2",]
    );
    assert_eq!(plan.rules, default_rules());
    assert_eq!(plan.links, ["blocked", "eth0", "lo"]);
    assert_eq!(plan.addrs, [IfAddr::new("eth0", ip("172.17.0.2"), 16), IfAddr::new("lo", Ipv4Addr::LOCALHOST, 8)]);
}

/// `verify --weaken jail-dead-end`: the same destinations blocked by
/// blackhole routes (link-local unreachable), which fail a routed attempt
/// on the route, before the filter could count it.
#[test]
fn without_the_dead_end_the_blocks_are_blackholes() {
    let plan = net_plan(&docker_observed(), &PlanInputs { dead_end: false, ..inputs() });
    let blocks: Vec<String> = plan.main.iter().filter(|r| r.blocks()).map(|r| r.to_string()).collect();
    assert_eq!(
        blocks,
        [
            "table main Blackhole 10.0.0.0/8 scope Universe",
            "table main Blackhole 100.64.0.0/10 scope Universe",
            "table main Blackhole 168.63.129.16/32 scope Universe",
            "table main Unreachable 169.254.0.0/16 scope Universe",
            "table main Blackhole 172.16.0.0/12 scope Universe",
            "table main Blackhole 192.168.0.0/16 scope Universe",
            "table main Blackhole 224.0.0.0/4 scope Universe",
            "table main Blackhole 255.255.255.255/32 scope Universe",
        ]
    );
    let dead_end = net_plan(&docker_observed(), &inputs());
    let dsts = |p: &NetPlan| p.main.iter().filter(|r| r.blocks()).map(|r| r.dst).collect::<Vec<_>>();
    assert_eq!(dsts(&plan), dsts(&dead_end), "the same destinations either way");
    assert_eq!(plan.links, dead_end.links, "the dead end is made either way (verify sees it unused)");
}

/// Multicast into the dead end must not share the kernel's route object
/// with the unicast ranges (see `Route::dead_end`): only it has a metric.
#[test]
fn multicast_has_a_dead_end_route_of_its_own() {
    let plan = net_plan(&docker_observed(), &inputs());
    let into_dead_end: Vec<&Route> = plan.main.iter().filter(|r| r.dev.as_deref() == Some(DEAD_END)).collect();
    let with_metric: Vec<String> = into_dead_end.iter().filter(|r| r.metric != 0).map(|r| r.dst.to_string()).collect();
    assert_eq!(with_metric, ["224.0.0.0/4"]);
    assert_eq!(Route::dead_end(net("239.255.255.250/32")).metric, DEAD_END_MULTICAST_METRIC);
    assert_eq!(Route::dead_end(net("192.0.0.0/2")).metric, 0, "wider than multicast: the /4 route serves multicast");
}

#[test]
fn only_routes_into_the_dead_end_block_among_unicast_routes() {
    assert!(Route::dead_end(net("10.0.0.0/8")).blocks());
    assert!(!Route::on_link(net("10.0.0.0/8"), "eth0").blocks());
    assert!(!Route::via(net("10.0.0.0/8"), ip("198.18.0.1"), DEAD_END).blocks());
    assert!(Route::blocked(net("10.0.0.0/8"), crate::jail::net::Block::Unreachable).blocks());
}

#[test]
fn install_order_puts_the_gateway_route_before_routes_through_it() {
    let plan = net_plan(&docker_observed(), &inputs());
    let first_via = plan.main.iter().position(Route::needs_gateway).unwrap();
    let gw = plan.main.iter().position(|r| r.dst == Ipv4Net::host(ip("172.17.0.1"))).unwrap();
    assert!(gw < first_via);
    assert!(plan.main[first_via..].iter().all(Route::needs_gateway));
}

#[test]
fn every_blocked_range_and_connected_subnet_is_in_the_plan() {
    let plan = net_plan(&docker_observed(), &inputs());
    for (range, _) in blocked_ranges() {
        assert!(plan.main.iter().any(|r| r.dst == range && r.gateway.is_none() && r.dev.as_deref() == Some(DEAD_END)), "{range}");
    }
    for c in inputs().container {
        let blocked = |r: &Route| r.blocks() && r.dst.covers(&c);
        assert!(plan.main.iter().any(blocked), "{c}");
    }
}

#[test]
fn a_specific_allow_or_gateway_wins_over_a_block_of_the_same_prefix() {
    // Azure wireserver allowed explicitly; a link-local gateway (as some
    // Kubernetes CNIs use); a /32 connected "subnet" equal to the gateway.
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", ip("10.0.0.5"), 32)], gateway: ip("169.254.1.1") };
    let inputs = PlanInputs { forwarder: ip("192.0.2.53"), allow_ip: vec![ip("168.63.129.16")], container: vec![net("169.254.1.1/32")], dead_end: true };
    let plan = net_plan(&obs, &inputs);
    let find = |d: &str| plan.main.iter().filter(|r| r.dst == net(d)).collect::<Vec<_>>();
    assert_eq!(find("168.63.129.16/32"), [&Route::via(net("168.63.129.16/32"), ip("169.254.1.1"), "eth0")]);
    assert_eq!(find("169.254.1.1/32"), [&Route::on_link(net("169.254.1.1/32"), "eth0")]);
    assert_eq!(find("169.254.0.0/16"), [&Route::dead_end(net("169.254.0.0/16"))]);
    // A /32 address has no connected subnet to block.
    assert!(find("10.0.0.5/32").is_empty());
    // Destinations are unique (the kernel refuses duplicates).
    let mut dsts: Vec<_> = plan.main.iter().map(|r| r.dst).collect();
    dsts.dedup();
    assert_eq!(dsts.len(), plan.main.len());
}

#[test]
fn a_connected_subnet_equal_to_a_private_range_is_blocked_once() {
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", ip("10.1.1.1"), 8)], gateway: ip("10.0.0.1") };
    let plan = net_plan(&obs, &PlanInputs { forwarder: ip("192.0.2.53"), allow_ip: vec![], container: vec![], dead_end: true });
    assert_eq!(plan.main.iter().filter(|r| r.dst == net("10.0.0.0/8")).count(), 1);
}

fn snapshot_with(routes: Vec<Route>, links: &[&str], addrs: Vec<IfAddr>) -> Snapshot {
    Snapshot { links: links.iter().map(|s| s.to_string()).collect(), addrs, routes, ..Snapshot::default() }
}

#[test]
fn observe_reads_interface_addresses_and_gateway() {
    let default = Route::via(Ipv4Net::default_route(), ip("172.17.0.1"), "eth0");
    let snap = snapshot_with(
        vec![default, Route::on_link(net("172.17.0.0/16"), "eth0")],
        &["blocked", "eth0", "lo"],
        vec![IfAddr::new("lo", Ipv4Addr::LOCALHOST, 8), IfAddr::new("eth0", ip("172.17.0.2"), 16)],
    );
    assert_eq!(observe(&snap), Ok(docker_observed()), "the dead end is not the jail's interface");
}

#[test]
fn observe_refuses_what_it_cannot_plan_for() {
    let addr = vec![IfAddr::new("eth0", ip("172.17.0.2"), 16)];
    let snap = snapshot_with(vec![], &["eth0", "lo"], addr.clone());
    assert_eq!(observe(&snap), Err(ObserveError::NoGateway));
    let snap = snapshot_with(vec![], &["lo"], vec![]);
    assert_eq!(observe(&snap), Err(ObserveError::Interfaces(vec![])));
    let snap = snapshot_with(vec![], &["eth0", "eth1", "lo"], addr);
    assert_eq!(observe(&snap), Err(ObserveError::Interfaces(vec!["eth0".into(), "eth1".into()])));
    let snap = snapshot_with(vec![], &["eth0", "lo"], vec![]);
    assert_eq!(observe(&snap), Err(ObserveError::NoAddress("eth0".into())));
}

#[test]
fn the_containers_other_routes_and_addresses_are_blocked_in_as_few_routes_as_cover_them() {
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", ip("198.18.0.2"), 24)], gateway: ip("198.18.0.1") };
    let container =
        ["198.18.0.0/24", "10.200.0.0/24", "203.0.113.0/25", "203.0.113.128/25", "198.19.7.0/24", "198.51.100.7/32", "198.18.0.255/32", "10.200.0.2/32"];
    let inputs = PlanInputs { forwarder: ip("192.0.2.53"), allow_ip: vec![ip("203.0.113.10")], container: container.map(net).to_vec(), dead_end: true };
    let plan = net_plan(&obs, &inputs);
    let blocked: Vec<String> = plan.main.iter().filter(|r| r.blocks()).map(|r| r.dst.to_string()).collect();
    assert_eq!(
        blocked,
        [
            "10.0.0.0/8",
            "100.64.0.0/10",
            "168.63.129.16/32",
            "169.254.0.0/16",
            "172.16.0.0/12",
            "192.168.0.0/16",
            "198.18.0.0/24",
            "198.19.7.0/24",
            "198.51.100.7/32",
            "203.0.113.0/24",
            "224.0.0.0/4",
            "255.255.255.255/32"
        ]
    );
    // An allowIp inside a blocked route is the user's choice: its /32 wins.
    assert!(plan.main.contains(&Route::via(net("203.0.113.10/32"), ip("198.18.0.1"), "eth0")));
    assert_eq!(plan.forwarder, ip("192.0.2.53"));
}

#[test]
fn a_redirect_gateway_pair_never_becomes_a_blocked_default_route() {
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", ip("198.18.0.2"), 24)], gateway: ip("198.18.0.1") };
    let inputs = PlanInputs { forwarder: ip("192.0.2.53"), allow_ip: vec![], container: vec![net("0.0.0.0/1"), net("128.0.0.0/1")], dead_end: true };
    let plan = net_plan(&obs, &inputs);
    assert!(plan.main.contains(&Route::dead_end(net("0.0.0.0/1"))));
    assert!(plan.main.contains(&Route::dead_end(net("128.0.0.0/1"))));
    assert!(plan.main.contains(&Route::via(Ipv4Net::default_route(), ip("198.18.0.1"), "eth0")));
}
