use super::*;
use crate::jail::plan::routes::{net_plan, IfAddr, Observed, PlanInputs};
use std::net::Ipv4Addr;

fn net(s: &str) -> Ipv4Net {
    s.parse().unwrap()
}

fn lab_plan() -> NetPlan {
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", Ipv4Addr::new(198, 18, 0, 2), 24)], gateway: Ipv4Addr::new(198, 18, 0, 1) };
    let inputs = PlanInputs {
        forwarder: Ipv4Addr::new(192, 0, 2, 53),
        allow_ip: vec![Ipv4Addr::new(10, 99, 0, 7)],
        outer_connected: vec![net("198.18.0.0/24"), net("172.17.0.0/16")],
    };
    net_plan(&obs, &inputs)
}

#[test]
fn the_filter_accepts_what_the_routes_send_out_and_drops_what_they_block() {
    let got: Vec<String> = filter_plan(&lab_plan()).rules.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [
            "meta oifname \"lo\" accept",
            "ip daddr 10.99.0.7 accept",
            "ip daddr 192.0.2.53 accept",
            "ip daddr 198.18.0.1 accept",
            "ip daddr 10.0.0.0/8 drop",
            "ip daddr 100.64.0.0/10 drop",
            "ip daddr 168.63.129.16 drop",
            "ip daddr 169.254.0.0/16 drop",
            "ip daddr 172.16.0.0/12 drop",
            "ip daddr 172.17.0.0/16 drop",
            "ip daddr 192.168.0.0/16 drop",
            "ip daddr 198.18.0.0/24 drop",
            "ip daddr 224.0.0.0/4 drop",
            "ip daddr 255.255.255.255 drop",
        ]
    );
}

#[test]
fn every_blocked_route_is_dropped_and_accepts_come_first() {
    let net = lab_plan();
    let plan = filter_plan(&net);
    let first_drop = plan.rules.iter().position(|r| r.verdict == Verdict::Drop).unwrap();
    assert!(plan.rules[first_drop..].iter().all(|r| r.verdict == Verdict::Drop));
    for r in net.main.iter().filter(|r| matches!(r.kind, RouteKind::Blackhole | RouteKind::Unreachable)) {
        let rule = FilterRule { what: Match::Destination(r.dst), verdict: Verdict::Drop };
        assert!(plan.rules.contains(&rule), "{r} is not dropped");
    }
}

#[test]
fn expressions_of_a_prefix_a_host_and_the_loopback() {
    let drop = FilterRule { what: Match::Destination(net("10.0.0.0/8")), verdict: Verdict::Drop };
    assert_eq!(
        drop.exprs(),
        vec![
            Expr::Payload { base: 1, offset: 16, len: 4, dreg: 1 },
            Expr::Bitwise { sreg: 1, dreg: 1, mask: vec![255, 0, 0, 0], xor: vec![0; 4] },
            Expr::Cmp { sreg: 1, op: 0, data: vec![10, 0, 0, 0] },
            Expr::Verdict(0),
        ]
    );
    let host = FilterRule { what: Match::Destination(net("198.18.0.1/32")), verdict: Verdict::Accept };
    assert_eq!(
        host.exprs(),
        vec![Expr::Payload { base: 1, offset: 16, len: 4, dreg: 1 }, Expr::Cmp { sreg: 1, op: 0, data: vec![198, 18, 0, 1] }, Expr::Verdict(1)]
    );
    let lo = FilterRule { what: Match::OutputInterface("lo".into()), verdict: Verdict::Accept };
    let mut name = b"lo".to_vec();
    name.resize(16, 0);
    assert_eq!(lo.exprs(), vec![Expr::Meta { key: 7, dreg: 1 }, Expr::Cmp { sreg: 1, op: 0, data: name }, Expr::Verdict(1)]);
    for r in [drop, host, lo] {
        assert_eq!(FilterRule::from_exprs(&r.exprs()), Some(r));
    }
}

#[test]
fn the_expected_state_compares_clean() {
    let plan = filter_plan(&lab_plan());
    assert_eq!(compare(&plan, &expected(&plan)), Vec::<String>::new());
}

#[test]
fn every_deviation_is_a_difference() {
    let plan = filter_plan(&lab_plan());
    let good = expected(&plan);
    let mut cases: Vec<(&str, Ruleset)> = Vec::new();
    let mut s = good.clone();
    s.tables[0].flags = 1; // dormant: every rule off
    cases.push(("dormant", s));
    let mut s = good.clone();
    s.tables.push(TableState { family: 1, name: "other".into(), flags: 0 });
    cases.push(("another table", s));
    let mut s = good.clone();
    s.chains[0].policy = Some(0);
    cases.push(("policy", s));
    let mut s = good.clone();
    s.chains[0].hook = Some((4, 0));
    cases.push(("hook", s));
    let mut s = good.clone();
    s.chains.push(ChainState { family: 2, table: TABLE.into(), name: "x".into(), hook: Some((3, -300)), policy: Some(1), kind: Some("filter".into()) });
    cases.push(("an earlier chain", s));
    let mut s = good.clone();
    s.rules.pop();
    cases.push(("a missing rule", s));
    let mut s = good.clone();
    s.rules.swap(3, 4);
    cases.push(("reordered rules", s));
    let mut s = good.clone();
    s.rules[4].exprs.insert(0, Expr::Other { name: "counter".into(), attrs: vec![] });
    cases.push(("an unknown expression", s));
    let mut s2 = good.clone();
    s2.rules.insert(
        1,
        RuleState {
            family: 2,
            table: TABLE.into(),
            chain: CHAIN.into(),
            exprs: FilterRule { what: Match::Destination(net("10.0.0.0/8")), verdict: Verdict::Accept }.exprs(),
        },
    );
    cases.push(("an extra accept", s2));
    for (what, state) in cases {
        let d = compare(&plan, &state);
        assert!(!d.is_empty(), "{what} went unnoticed");
    }
}

#[test]
fn differences_name_the_rules() {
    let plan = filter_plan(&lab_plan());
    let mut s = expected(&plan);
    s.rules.remove(4);
    let d = compare(&plan, &s);
    assert_eq!(d.len(), 1);
    assert!(d[0].contains("rule 5") && d[0].contains("ip daddr 10.0.0.0/8 drop"), "{d:?}");
}
