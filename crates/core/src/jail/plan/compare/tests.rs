use super::*;
use crate::jail::net::Ipv4Net;
use crate::jail::plan::routes::{net_plan, Family, Observed, PlanInputs, RouteKind, Scope};
use std::net::Ipv4Addr;

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn plan() -> NetPlan {
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", ip("198.18.0.2"), 24)], gateway: ip("198.18.0.1") };
    net_plan(&obs, &PlanInputs { forwarder: ip("192.0.2.53"), allow_ip: vec![ip("10.99.0.7")], container: vec![], dead_end: true })
}

/// The namespace exactly as planned (what the kernel reports after a
/// successful lock).
fn as_planned(plan: &NetPlan) -> Snapshot {
    Snapshot {
        links: plan.links.clone(),
        addrs: plan.addrs.clone(),
        addrs6: vec![],
        routes: plan.main.iter().chain(&plan.local).cloned().collect(),
        routes6: vec![],
        rules: plan.rules.clone(),
    }
}

fn strings(d: &[Difference]) -> Vec<String> {
    d.iter().map(|d| d.to_string()).collect()
}

#[test]
fn the_planned_namespace_has_no_difference() {
    let plan = plan();
    assert_eq!(compare(&plan, &as_planned(&plan)), []);
    // Read-back order does not matter.
    let mut snap = as_planned(&plan);
    snap.routes.reverse();
    snap.rules.reverse();
    assert_eq!(compare(&plan, &snap), []);
}

#[test]
fn kernel_dependent_local_entries_are_allowed_not_required() {
    let plan = plan();
    let mut snap = as_planned(&plan);
    snap.routes.extend(plan.local_optional.iter().cloned());
    assert_eq!(compare(&plan, &snap), []);
}

#[test]
fn a_route_pasta_copied_and_a_route_in_another_table_are_refused() {
    let plan = plan();
    let mut snap = as_planned(&plan);
    // A VPN route left in main, and a blackhole in table 100.
    snap.routes.push(Route::via("10.8.0.0/24".parse().unwrap(), ip("198.18.0.1"), "eth0"));
    let mut other = Route::blocked("203.0.113.0/24".parse().unwrap(), crate::jail::net::Block::Blackhole);
    other.table = 100;
    snap.routes.push(other);
    assert_eq!(
        strings(&compare(&plan, &snap)),
        [
            "unexpected route: table 100 Blackhole 203.0.113.0/24 scope Universe",
            "unexpected route: table main Unicast 10.8.0.0/24 via 198.18.0.1 dev eth0 scope Universe",
        ]
    );
}

#[test]
fn a_missing_block_is_refused() {
    let plan = plan();
    let mut snap = as_planned(&plan);
    snap.routes.retain(|r| r.dst != Ipv4Net::new(ip("169.254.0.0"), 16).unwrap());
    assert_eq!(strings(&compare(&plan, &snap)), ["missing route: table main Unicast 169.254.0.0/16 dev blocked scope Link"]);
}

#[test]
fn the_same_destination_with_other_attributes_is_two_differences() {
    let plan = plan();
    let mut snap = as_planned(&plan);
    let default = snap.routes.iter_mut().find(|r| r.dst.prefix() == 0).unwrap();
    default.metric = 100;
    default.extra.push("MultiPath([..])".into());
    let d = compare(&plan, &snap);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(matches!(&d[0], Difference::MissingRoute(r) if r.dst.prefix() == 0));
    assert!(matches!(&d[1], Difference::UnexpectedRoute(r) if r.metric == 100));
}

#[test]
fn a_changed_kind_or_scope_is_refused() {
    let plan = plan();
    let mut snap = as_planned(&plan);
    let ten = snap.routes.iter_mut().find(|r| r.dst == "10.0.0.0/8".parse().unwrap()).unwrap();
    ten.kind = RouteKind::Unicast;
    ten.scope = Scope::Link;
    ten.dev = Some("eth0".into());
    assert_eq!(compare(&plan, &snap).len(), 2);
}

#[test]
fn rules_addresses_links_and_ipv6_are_checked() {
    let plan = plan();
    let mut snap = as_planned(&plan);
    snap.rules.push(Rule::lookup(Family::V4, 100, 100));
    snap.rules.retain(|r| !(r.family == Family::V6 && r.priority == 0));
    snap.addrs.push(IfAddr::new("eth0", ip("10.0.0.9"), 32));
    snap.links.push("tun0".into());
    snap.addrs6.push("fe80::1/64 dev eth0".into());
    snap.routes6.push("Unicast fe80::/64 table 254".into());
    assert_eq!(
        strings(&compare(&plan, &snap)),
        [
            "missing rule: V6 rule 0: lookup 255",
            "unexpected rule: V4 rule 100: lookup 100",
            "unexpected address: 10.0.0.9/32 dev eth0",
            "unexpected interface: tun0",
            "IPv6 address present (IPv6 must be off): fe80::1/64 dev eth0",
            "IPv6 route present (IPv6 must be off): Unicast fe80::/64 table 254",
        ]
    );
}

#[test]
fn a_rule_with_a_selector_is_not_the_default_rule() {
    let plan = plan();
    let mut snap = as_planned(&plan);
    let main = snap.rules.iter_mut().find(|r| r.family == Family::V4 && r.priority == 32766).unwrap();
    main.extra.push("FwMark(1)".into());
    assert_eq!(compare(&plan, &snap).len(), 2);
}
