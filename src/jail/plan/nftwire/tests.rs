use super::*;
use crate::jail::plan::filter::{self, FilterRule, Match, Verdict};

fn sample() -> Vec<RuleState> {
    let rules = [
        FilterRule { what: Match::OutputInterface("lo".into()), verdict: Verdict::Accept },
        FilterRule { what: Match::Destination("198.18.0.1/32".parse().unwrap()), verdict: Verdict::Accept },
        FilterRule { what: Match::Destination("10.0.0.0/8".parse().unwrap()), verdict: Verdict::Drop },
        FilterRule { what: Match::DestinationIn(filter::BLOCKED_SET.into()), verdict: Verdict::Reject },
    ];
    rules.iter().map(|r| RuleState { family: 2, table: filter::TABLE.into(), chain: filter::CHAIN.into(), exprs: r.exprs() }).collect()
}

/// The batch's object messages have the same layout as the kernel's dump
/// replies, so decoding the batch must give back exactly what went in.
#[test]
fn a_batch_decodes_back_to_its_objects() {
    let rules = sample();
    let (bytes, n) = create_batch(&filter::table(), Some(&filter::chain()), &rules, 7);
    assert_eq!(n, 2 + rules.len() as u32);
    let replies = parse_replies(&bytes).unwrap();
    let mut want = vec![Reply::Unknown { kind: 0x10 }, Reply::Table(filter::table()), Reply::Chain(filter::chain())];
    want.extend(rules.into_iter().map(Reply::Rule));
    want.push(Reply::Unknown { kind: 0x11 });
    assert_eq!(replies, want);
}

#[test]
fn batch_framing() {
    let (bytes, n) = create_batch(&filter::table(), Some(&filter::chain()), &sample(), 7);
    // Walk the headers: lengths add up, sequence numbers count up from 7,
    // the edges carry the subsystem as resource id, objects ask for an ack.
    let mut off = 0;
    let mut seqs = Vec::new();
    let mut kinds = Vec::new();
    while off < bytes.len() {
        let len = u32::from_ne_bytes(bytes[off..off + 4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes([bytes[off + 4], bytes[off + 5]]);
        let flags = u16::from_ne_bytes([bytes[off + 6], bytes[off + 7]]);
        seqs.push(u32::from_ne_bytes(bytes[off + 8..off + 12].try_into().unwrap()));
        kinds.push(kind);
        let res_id = u16::from_be_bytes([bytes[off + 18], bytes[off + 19]]);
        if kind == 0x10 || kind == 0x11 {
            assert_eq!((flags, res_id), (1, 10));
        } else {
            assert_eq!(kind >> 8, 10, "nf_tables subsystem");
            assert_ne!(flags & 0x4, 0, "ack requested");
        }
        assert_eq!(len % 4, 0);
        off += len;
    }
    assert_eq!(off, bytes.len());
    assert_eq!(seqs, (7..=7 + n + 1).collect::<Vec<_>>());
    assert_eq!(kinds, [0x10, 0xa00, 0xa03, 0xa06, 0xa06, 0xa06, 0xa06, 0x11]);
}

#[test]
fn table_message_bytes() {
    let (bytes, _) = create_batch(&filter::table(), Some(&filter::chain()), &[], 1);
    let table = &bytes[20..20 + 20 + 20 + 8];
    let mut want = Vec::new();
    want.extend_from_slice(&48u32.to_ne_bytes());
    want.extend_from_slice(&0xa00u16.to_ne_bytes());
    want.extend_from_slice(&(0x1u16 | 0x4 | 0x400 | 0x200).to_ne_bytes());
    want.extend_from_slice(&2u32.to_ne_bytes());
    want.extend_from_slice(&0u32.to_ne_bytes());
    want.extend_from_slice(&[2, 0, 0, 0]);
    want.extend_from_slice(&18u16.to_ne_bytes());
    want.extend_from_slice(&1u16.to_ne_bytes());
    want.extend_from_slice(b"agent_sandbox\0\0\0");
    want.extend_from_slice(&8u16.to_ne_bytes());
    want.extend_from_slice(&2u16.to_ne_bytes());
    want.extend_from_slice(&0u32.to_be_bytes());
    assert_eq!(table, want.as_slice());
}

#[test]
fn acks_errors_and_done() {
    let mut buf = Vec::new();
    for (kind, seq, err) in [(2u16, 5u32, 0i32), (2, 6, -1), (3, 7, 0)] {
        buf.extend_from_slice(&20u32.to_ne_bytes());
        buf.extend_from_slice(&kind.to_ne_bytes());
        buf.extend_from_slice(&0u16.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes());
        buf.extend_from_slice(&err.to_ne_bytes());
    }
    assert_eq!(parse_replies(&buf).unwrap(), [Reply::Ack { seq: 5, error: 0 }, Reply::Ack { seq: 6, error: -1 }, Reply::Done { seq: 7 }]);
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    assert!(parse_replies(&[0xff; 16]).is_err());
    let (mut bytes, _) = create_batch(&filter::table(), Some(&filter::chain()), &sample(), 1);
    // Corrupt an attribute length inside the table message.
    bytes[20 + 20] = 0xff;
    assert!(parse_replies(&bytes).is_err());
    for cut in [1, 17, 25, 40] {
        let _ = parse_replies(&bytes[..bytes.len() - cut]);
    }
}

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
    attr(&mut v, 2, &strz("elsewhere"));
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

/// The filter's whole first transaction (table, chain, the interval set,
/// its elements, the rules with the set lookup) decodes back to the
/// expected state, as the kernel's dumps will.
#[test]
fn a_batch_with_the_blocked_set_decodes_back() {
    let plan = filter::FilterPlan {
        rules: vec![FilterRule { what: Match::DestinationIn(filter::BLOCKED_SET.into()), verdict: Verdict::Drop }],
        blocked: vec![
            ("10.0.0.0".parse().unwrap(), "10.255.255.255".parse().unwrap()),
            ("255.255.255.255".parse().unwrap(), "255.255.255.255".parse().unwrap()),
        ],
    };
    let want = filter::expected(&plan);
    let objs = [
        Obj::Table(&want.tables[0]),
        Obj::Chain(&want.chains[0]),
        Obj::Set(&want.sets[0]),
        Obj::Elements { set: &want.sets[0], elements: &want.elements, remove: false },
        Obj::Rule(&want.rules[0]),
    ];
    let (bytes, n) = batch(&objs, 3);
    assert_eq!(n, 5);
    let mut got = filter::Ruleset::default();
    for r in parse_replies(&bytes).unwrap() {
        match r {
            Reply::Table(t) => got.tables.push(t),
            Reply::Chain(c) => got.chains.push(c),
            Reply::Set(s) => got.sets.push(s),
            Reply::Elements(e) => got.elements.extend(e),
            Reply::Rule(r) => got.rules.push(r),
            _ => {}
        }
    }
    assert_eq!(got, want);
    assert_eq!(filter::compare(&plan, &got), Vec::<String>::new());
    // Removing elements is its own message type; many elements are split
    // into messages whose list attribute fits its 16-bit length.
    let many: Vec<_> = (0..2500u32).map(|i| filter::ElementState { key: (i * 4).to_be_bytes().to_vec(), ..want.elements[0].clone() }).collect();
    let (bytes, n) = batch(&[Obj::Elements { set: &want.sets[0], elements: &many, remove: true }], 1);
    assert_eq!(n, 3);
    let kinds: Vec<u16> = parse_replies(&bytes).unwrap().iter().filter_map(|r| if let Reply::Unknown { kind } = r { Some(*kind) } else { None }).collect();
    assert_eq!(kinds, [0x10, 0xa0e, 0xa0e, 0xa0e, 0x11]);
}
