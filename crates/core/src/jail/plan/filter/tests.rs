use super::*;
use crate::jail::plan::routes::{net_plan, IfAddr, Observed, PlanInputs};
use std::net::Ipv4Addr;

fn net(s: &str) -> Ipv4Net {
    s.parse().unwrap()
}

const REPORT: Shape = Shape { report: true, allowlist: false };
const ALLOWLIST: Shape = Shape { report: true, allowlist: true };

fn lab_plan() -> NetPlan {
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", Ipv4Addr::new(198, 18, 0, 2), 24)], gateway: Ipv4Addr::new(198, 18, 0, 1) };
    let inputs = PlanInputs {
        forwarder: Ipv4Addr::new(192, 0, 2, 53),
        allow_ip: vec![Ipv4Addr::new(10, 99, 0, 7)],
        container: vec![net("198.18.0.0/24"), net("172.17.0.0/16")],
        dead_end: true,
    };
    net_plan(&obs, &inputs)
}

#[test]
fn the_filter_accepts_what_the_routes_send_out_and_rejects_what_they_block() {
    let plan = filter_plan(&lab_plan(), REPORT);
    let got: Vec<String> = plan.rules.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [
            "meta oifname \"lo\" accept",
            "ip daddr 192.0.2.53 udp dport 53 accept",
            "ip daddr 192.0.2.53 tcp dport 53 accept",
            "ip daddr 10.99.0.7 accept",
            "ip daddr 198.18.0.1 accept",
            "ip daddr 192.0.2.53 goto refused",
            "ip daddr @blocked goto refused",
        ]
    );
    let refused: Vec<String> = plan.refused.iter().map(ToString::to_string).collect();
    assert_eq!(refused, ["add @seen { ip daddr . meta l4proto . th dport counter }", "reject with icmp type admin-prohibited"]);
    let a = |s: &str| s.parse::<Ipv4Addr>().unwrap();
    assert_eq!(
        plan.blocked,
        [
            (a("10.0.0.0"), a("10.255.255.255")),
            (a("100.64.0.0"), a("100.127.255.255")),
            (a("168.63.129.16"), a("168.63.129.16")),
            (a("169.254.0.0"), a("169.254.255.255")),
            (a("172.16.0.0"), a("172.31.255.255")),
            (a("192.168.0.0"), a("192.168.255.255")),
            (a("198.18.0.0"), a("198.18.0.255")),
            (a("224.0.0.0"), a("239.255.255.255")),
            (a("255.255.255.255"), a("255.255.255.255")),
        ]
    );
}

#[test]
fn every_blocked_route_is_in_the_set_and_accepts_come_first() {
    let net = lab_plan();
    let plan = filter_plan(&net, REPORT);
    let first_reject = plan.rules.iter().position(|r| r.verdict != Verdict::Accept).unwrap();
    assert!(plan.rules[first_reject..].iter().all(|r| r.verdict == Verdict::Refuse), "nothing is dropped silently");
    let last = plan.rules.last().unwrap();
    assert_eq!((&last.what, &last.verdict), (&Match::DestinationIn(BLOCKED_SET.into()), &Verdict::Refuse));
    assert_eq!(plan.refused.last().map(|r| &r.verdict), Some(&Verdict::Reject), "whatever is recorded is rejected");
    let inside = |ip: Ipv4Addr| plan.blocked.iter().any(|(a, b)| *a <= ip && ip <= *b);
    for r in net.main.iter().filter(|r| matches!(r.kind, RouteKind::Blackhole | RouteKind::Unreachable)) {
        assert!(inside(r.dst.network()) && inside(r.dst.broadcast()), "{r} is not in the set");
    }
}

#[test]
fn ranges_join_what_touches_and_keep_the_end_of_the_address_space() {
    let n = |s: &str| s.parse::<Ipv4Net>().unwrap();
    let a = |s: &str| s.parse::<Ipv4Addr>().unwrap();
    let got = ranges(&[
        n("203.0.113.0/25"),
        n("203.0.113.128/25"),
        n("203.0.113.7/32"),
        n("198.51.100.7/32"),
        n("255.255.255.255/32"),
        n("240.0.0.0/5"),
        n("248.0.0.0/6"),
        n("252.0.0.0/6"),
    ]);
    assert_eq!(got, [(a("198.51.100.7"), a("198.51.100.7")), (a("203.0.113.0"), a("203.0.113.255")), (a("240.0.0.0"), a("255.255.255.255"))]);
    let els = elements(&blocked_set(), &got);
    let keys: Vec<(String, bool)> = els.iter().map(|e| (Ipv4Addr::from(<[u8; 4]>::try_from(e.key.as_slice()).unwrap()).to_string(), e.end)).collect();
    // The last range runs to the end: no end element.
    assert_eq!(
        keys,
        [("198.51.100.7", false), ("198.51.100.8", true), ("203.0.113.0", false), ("203.0.114.0", true), ("240.0.0.0", false)].map(|(k, e)| (k.to_string(), e))
    );
    let state = Ruleset { elements: els, ..Ruleset::default() };
    assert_eq!(ranges_of(&state), got);
}

#[test]
fn growing_the_set_replaces_covered_ranges_in_one_change() {
    let a = |s: &str| s.parse::<Ipv4Addr>().unwrap();
    let old = [(a("10.0.0.0"), a("10.255.255.255")), (a("203.0.113.7"), a("203.0.113.7")), (a("203.0.113.9"), a("203.0.113.9"))];
    let new = [(a("10.0.0.0"), a("10.255.255.255")), (a("198.19.9.0"), a("198.19.9.255")), (a("203.0.113.0"), a("203.0.113.255"))];
    let changes = set_changes(&old, &new);
    assert_eq!(changes.len(), 2);
    let show = |els: &[ElementState]| els.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(show(&changes[0].remove), Vec::<String>::new());
    assert_eq!(show(&changes[0].add), ["element of ip agent_sandbox/blocked: 198.19.9.0", "element of ip agent_sandbox/blocked: 198.19.10.0 (end of a range)"]);
    assert_eq!(
        show(&changes[1].remove),
        [
            "element of ip agent_sandbox/blocked: 203.0.113.7",
            "element of ip agent_sandbox/blocked: 203.0.113.8 (end of a range)",
            "element of ip agent_sandbox/blocked: 203.0.113.9",
            "element of ip agent_sandbox/blocked: 203.0.113.10 (end of a range)",
        ]
    );
    assert_eq!(
        show(&changes[1].add),
        ["element of ip agent_sandbox/blocked: 203.0.113.0", "element of ip agent_sandbox/blocked: 203.0.114.0 (end of a range)"]
    );
    assert_eq!(set_changes(&new, &new), []);
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
    let dns = FilterRule { what: Match::Service { addr: "192.0.2.53".parse().unwrap(), proto: IPPROTO_UDP, port: 53 }, verdict: Verdict::Accept };
    assert_eq!(
        dns.exprs(),
        vec![
            Expr::Payload { base: 1, offset: 16, len: 4, dreg: 1 },
            Expr::Cmp { sreg: 1, op: 0, data: vec![192, 0, 2, 53] },
            Expr::Meta { key: 16, dreg: 1 },
            Expr::Cmp { sreg: 1, op: 0, data: vec![17] },
            Expr::Payload { base: 2, offset: 2, len: 2, dreg: 1 },
            Expr::Cmp { sreg: 1, op: 0, data: vec![0, 53] },
            Expr::Verdict(1)
        ]
    );
    let set = FilterRule { what: Match::DestinationIn("blocked".into()), verdict: Verdict::Drop };
    assert_eq!(
        set.exprs(),
        vec![Expr::Payload { base: 1, offset: 16, len: 4, dreg: 1 }, Expr::Lookup { sreg: 1, set: "blocked".into(), flags: 0 }, Expr::Verdict(0)]
    );
    let icmp = FilterRule { what: Match::DestinationIn("blocked".into()), verdict: Verdict::Reject };
    assert_eq!(
        icmp.exprs(),
        vec![
            Expr::Payload { base: 1, offset: 16, len: 4, dreg: 1 },
            Expr::Lookup { sreg: 1, set: "blocked".into(), flags: 0 },
            Expr::Reject { kind: 0, code: Some(13) }
        ]
    );
    for r in [drop, host, lo, dns, set, icmp.clone()] {
        assert_eq!(FilterRule::from_exprs(&r.exprs()), Some(r));
    }
    // A reject of another kind or code is not a rule the jail plans.
    let mut reset = icmp.exprs();
    *reset.last_mut().unwrap() = Expr::Reject { kind: 1, code: None };
    assert_eq!(FilterRule::from_exprs(&reset), None);
    let mut port_unreachable = icmp.exprs();
    *port_unreachable.last_mut().unwrap() = Expr::Reject { kind: 0, code: Some(3) };
    assert_eq!(FilterRule::from_exprs(&port_unreachable), None);
}

#[test]
fn the_expected_state_compares_clean() {
    for shape in [REPORT, ALLOWLIST, Shape::default()] {
        let plan = filter_plan(&lab_plan(), shape);
        assert_eq!(compare(&plan, &expected(&plan)), Vec::<String>::new());
    }
}

/// With allowDomains: no DNS to pasta's forwarder (the session's resolver
/// is the jail's own, on its loopback); the blocked set before the
/// allowed one; flows begun to an allowed address go on; everything else
/// refused.
#[test]
fn the_allowlist_comes_after_the_blocked_set_and_refuses_the_rest() {
    let plan = filter_plan(&lab_plan(), ALLOWLIST);
    let got: Vec<String> = plan.rules.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [
            "meta oifname \"lo\" accept",
            "ip daddr 10.99.0.7 accept",
            "ip daddr 198.18.0.1 accept",
            "ip daddr 192.0.2.53 goto refused",
            "ip daddr @blocked goto refused",
            "ip daddr @allowed accept",
            "ct state established accept",
            "goto refused",
        ]
    );
    let want = expected(&plan);
    let sets: Vec<String> = want.sets.iter().map(ToString::to_string).collect();
    assert_eq!(
        sets,
        [
            "set ip agent_sandbox/blocked flags 0x4 key type 7 len 4",
            "set ip agent_sandbox/seen flags 0x30 key type 29453 len 12 timeout 604800000 ms size 512",
            "set ip agent_sandbox/allowed flags 0x10 key type 7 len 4 size 16384",
        ]
    );
    // Without the report, nothing is recorded; the reject stays.
    let quiet = filter_plan(&lab_plan(), Shape { report: false, allowlist: true });
    assert_eq!(quiet.refused, [FilterRule { what: Match::Any, verdict: Verdict::Reject }]);
    assert_eq!(expected(&quiet).sets.len(), 2);
}

/// The dynamic sets' elements are the session's traffic: a read-back with
/// some compares clean; an element of the blocked set still does not.
#[test]
fn the_dynamic_sets_elements_are_not_differences() {
    let plan = filter_plan(&lab_plan(), ALLOWLIST);
    let mut s = expected(&plan);
    let seen =
        ElementState { packets: Some(3), expires_ms: Some(1000), ..ElementState::new(&seen_set(), vec![10, 0, 0, 5, 6, 0, 0, 0, 0x15, 0x38, 0, 0], false) };
    let allowed = ElementState { timeout_ms: Some(60_000), ..ElementState::new(&allowed_set(), vec![203, 0, 113, 5], false) };
    s.elements.extend([seen, allowed]);
    assert_eq!(compare(&plan, &s), Vec::<String>::new());
    s.elements.push(ElementState::new(&blocked_set(), vec![8, 8, 8, 8], false));
    assert_eq!(compare(&plan, &s).len(), 1);
    // A dynamic set that lost its bound, or its timeout, is a difference.
    let mut s = expected(&plan);
    s.sets[1].size = None;
    assert_eq!(compare(&plan, &s).len(), 2);
}

#[test]
fn every_deviation_is_a_difference() {
    let plan = filter_plan(&lab_plan(), ALLOWLIST);
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
    let n = s.rules.len();
    s.rules.swap(n - 3, n - 4);
    cases.push(("the allowed set looked up before the blocked one", s));
    let mut s = good.clone();
    s.rules.remove(0);
    cases.push(("refusals no longer recorded", s));
    let mut s = good.clone();
    s.rules.remove(1);
    cases.push(("refusals recorded, not rejected", s));
    let mut s = good.clone();
    s.rules.pop();
    cases.push(("the rest accepted", s));
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
    let mut s = good.clone();
    s.sets.push(SetState { name: "other".into(), ..blocked_set() });
    cases.push(("another set", s));
    let mut s = good.clone();
    s.elements.pop();
    cases.push(("a missing element", s));
    let mut s = good.clone();
    s.elements.push(ElementState { key: vec![8, 8, 8, 8], end: true, ..s.elements[0].clone() });
    cases.push(("an extra end element (a range cut short)", s));
    for (what, state) in cases {
        let d = compare(&plan, &state);
        assert!(!d.is_empty(), "{what} went unnoticed");
    }
}

#[test]
fn differences_name_the_rules_and_elements() {
    let plan = filter_plan(&lab_plan(), REPORT);
    let mut s = expected(&plan);
    s.rules.remove(6);
    let d = compare(&plan, &s);
    assert_eq!(d.len(), 1);
    assert!(d[0].contains("rule 5") && d[0].contains("ip daddr 198.18.0.1 accept"), "{d:?}");
    // A range's end element gone: the range would run on to the next.
    let mut s = expected(&plan);
    s.elements.retain(|e| !(e.end && e.key == vec![11, 0, 0, 0]));
    assert_eq!(compare(&plan, &s), ["missing element of ip agent_sandbox/blocked: 11.0.0.0 (end of a range)"]);
    let mut s = expected(&plan);
    s.sets[0].flags = 0;
    assert_eq!(compare(&plan, &s).len(), 2, "{:?}", compare(&plan, &s));
    let mut s = expected(&plan);
    s.elements[0].extra.push("attribute 4 [0, 0, 0, 1]".into());
    assert_eq!(compare(&plan, &s).len(), 2);
}
