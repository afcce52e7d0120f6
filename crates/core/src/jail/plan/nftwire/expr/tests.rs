use super::super::{attr, be32, nested, strz};
use super::*;
use crate::jail::plan::filter::{self, Expr, FilterRule};

#[test]
fn unknown_expressions_and_attributes_stay_unknown() {
    // A bitwise that is a shift (op 1) is not the planned mask-and-xor.
    let mut d = Vec::new();
    attr(&mut d, NFTA_BITWISE_SREG, &be32(1));
    attr(&mut d, NFTA_BITWISE_DREG, &be32(1));
    attr(&mut d, NFTA_BITWISE_LEN, &be32(4));
    attr(&mut d, NFTA_BITWISE_OP, &be32(1));
    assert!(matches!(decode_expr("bitwise", &d).unwrap(), Expr::Other { .. }));
    // A jump is not a plain verdict.
    let mut v = Vec::new();
    attr(&mut v, NFTA_VERDICT_CODE, &be32((-3i32) as u32));
    attr(&mut v, NFTA_VERDICT_CHAIN, &strz("elsewhere"));
    let mut data = Vec::new();
    nested(&mut data, NFTA_DATA_VERDICT, &v);
    let mut imm = Vec::new();
    attr(&mut imm, NFTA_IMMEDIATE_DREG, &be32(0));
    nested(&mut imm, NFTA_IMMEDIATE_DATA, &data);
    assert!(matches!(decode_expr("immediate", &imm).unwrap(), Expr::Other { .. }));
    assert!(matches!(decode_expr("counter", &[]).unwrap(), Expr::Other { .. }));
    // The planned bitwise with the kernel's op attribute (0) decodes.
    let (_, planned) = expression(&Expr::Bitwise { sreg: 1, dreg: 1, mask: vec![255, 0, 0, 0], xor: vec![0; 4] });
    let mut with_op = planned.clone();
    attr(&mut with_op, NFTA_BITWISE_OP, &be32(0));
    assert_eq!(decode_expr("bitwise", &with_op).unwrap(), decode_expr("bitwise", &planned).unwrap());
}

/// Every expression the jail plans decodes back to itself, the new ones
/// (dynset with a counter, ct, goto) included.
#[test]
fn planned_expressions_round_trip() {
    let plan = filter::filter_plan(&lab_net(), filter::Shape { report: true, allowlist: true });
    let all: Vec<Expr> = plan.rules.iter().chain(&plan.refused).flat_map(FilterRule::exprs).collect();
    for e in &all {
        let (name, data) = expression(e);
        assert_eq!(&decode_expr(name, &data).unwrap(), e, "{name}");
    }
    for needed in ["dynset", "ct", "immediate", "reject", "lookup", "meta"] {
        assert!(all.iter().any(|e| expression(e).0 == needed), "{needed}");
    }
}

/// What the kernel reports for the rule `add @seen { ... counter }`: the
/// counter's template values and a timeout of 0 and flags 0 are not
/// differences; another flag or a second expression is.
#[test]
fn the_kernels_dynset_report_decodes() {
    let mut counter = Vec::new();
    attr(&mut counter, NFTA_EXPR_NAME, &strz("counter"));
    let mut cdata = Vec::new();
    attr(&mut cdata, 1, &0u64.to_be_bytes());
    attr(&mut cdata, 2, &0u64.to_be_bytes());
    nested(&mut counter, NFTA_EXPR_DATA, &cdata);
    let report = |flags: u32, extra: bool| {
        let mut d = Vec::new();
        attr(&mut d, NFTA_DYNSET_SREG_KEY, &be32(1));
        attr(&mut d, NFTA_DYNSET_OP, &be32(0));
        attr(&mut d, NFTA_DYNSET_SET_NAME, &strz("seen"));
        attr(&mut d, NFTA_DYNSET_PAD, &[]);
        attr(&mut d, NFTA_DYNSET_TIMEOUT, &0u64.to_be_bytes());
        nested(&mut d, NFTA_DYNSET_EXPR, &counter);
        attr(&mut d, NFTA_DYNSET_FLAGS, &be32(flags));
        if extra {
            let mut list = Vec::new();
            nested(&mut list, NFTA_LIST_ELEM, &counter);
            nested(&mut d, NFTA_DYNSET_EXPRESSIONS, &list);
        }
        decode_expr("dynset", &d).unwrap()
    };
    assert_eq!(report(0, false), Expr::Dynset { set: "seen".into(), op: 0, sreg: 1, timeout_ms: 0, counter: true });
    assert!(matches!(report(1, false), Expr::Other { .. }));
    assert!(matches!(report(0, true), Expr::Other { .. }));
}

fn lab_net() -> crate::jail::plan::routes::NetPlan {
    use crate::jail::plan::routes::{net_plan, IfAddr, Observed, PlanInputs};
    use std::net::Ipv4Addr;
    let obs = Observed { dev: "eth0".into(), addrs: vec![IfAddr::new("eth0", Ipv4Addr::new(198, 18, 0, 2), 24)], gateway: Ipv4Addr::new(198, 18, 0, 1) };
    net_plan(&obs, &PlanInputs { forwarder: Ipv4Addr::new(192, 0, 2, 53), allow_ip: vec![], container: vec![], dead_end: true })
}
