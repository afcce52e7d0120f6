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

/// The filter's whole first transaction (table, chain, the interval set,
/// its elements, the rules with the set lookup) decodes back to the
/// expected state, as the kernel's dumps will.
#[test]
fn a_batch_with_the_blocked_set_decodes_back() {
    let plan = filter::FilterPlan {
        rules: vec![FilterRule { what: Match::DestinationIn(filter::BLOCKED_SET.into()), verdict: Verdict::Refuse }],
        refused: vec![FilterRule { what: Match::Any, verdict: Verdict::Record }, FilterRule { what: Match::Any, verdict: Verdict::Reject }],
        blocked: vec![
            ("10.0.0.0".parse().unwrap(), "10.255.255.255".parse().unwrap()),
            ("255.255.255.255".parse().unwrap(), "255.255.255.255".parse().unwrap()),
        ],
        shape: filter::Shape { report: true, allowlist: true },
    };
    let want = filter::expected(&plan);
    let mut objs: Vec<Obj<'_>> = vec![Obj::Table(&want.tables[0])];
    objs.extend(want.sets.iter().map(Obj::Set));
    objs.push(Obj::Elements { set: &want.sets[0], elements: &want.elements, op: ElemOp::Add });
    objs.extend(want.chains.iter().map(Obj::Chain));
    objs.extend(want.rules.iter().map(Obj::Rule));
    let (bytes, n) = batch(&objs, 3);
    assert_eq!(n, 10);
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
    let (bytes, n) = batch(&[Obj::Elements { set: &want.sets[0], elements: &many, op: ElemOp::Remove }], 1);
    assert_eq!(n, 3);
    let kinds: Vec<u16> = parse_replies(&bytes).unwrap().iter().filter_map(|r| if let Reply::Unknown { kind } = r { Some(*kind) } else { None }).collect();
    assert_eq!(kinds, [0x10, 0xa0e, 0xa0e, 0xa0e, 0x11]);
}

/// The allowed set's elements carry their own lifetime; adding one that
/// may be there already asks for no exclusivity.
#[test]
fn elements_with_a_lifetime_round_trip() {
    let set = filter::allowed_set();
    let el = filter::ElementState { timeout_ms: Some(90_000), ..filter::ElementState::new(&set, vec![203, 0, 113, 5], false) };
    let (bytes, _) = batch(&[Obj::Elements { set: &set, elements: std::slice::from_ref(&el), op: ElemOp::Ensure }], 1);
    let got: Vec<_> = parse_replies(&bytes).unwrap().into_iter().filter_map(|r| if let Reply::Elements(e) = r { Some(e) } else { None }).collect();
    assert_eq!(got, [vec![el]]);
    let flags = u16::from_ne_bytes([bytes[20 + 6], bytes[20 + 7]]);
    assert_eq!(flags & 0x200, 0, "no NLM_F_EXCL");
    assert_ne!(flags & 0x400, 0, "NLM_F_CREATE");
}

/// A seen-set element as the kernel dumps it (uapi numbering: the
/// element's expression is attribute 7, its padding 8): key, lifetime,
/// what is left of it, and the counter.
#[test]
fn a_dumped_element_with_a_counter_decodes() {
    let mut counter = Vec::new();
    attr(&mut counter, 1, &strz("counter"));
    let mut data = Vec::new();
    attr(&mut data, 1, &180u64.to_be_bytes());
    attr(&mut data, 2, &3u64.to_be_bytes());
    nested(&mut counter, 2, &data);
    let mut key = Vec::new();
    attr(&mut key, NFTA_DATA_VALUE, &[10, 1, 2, 3, 6, 0, 0, 0, 0x15, 0x38, 0, 0]);
    let mut elem = Vec::new();
    nested(&mut elem, NFTA_SET_ELEM_KEY, &key);
    attr(&mut elem, NFTA_SET_ELEM_TIMEOUT, &604_800_000u64.to_be_bytes());
    attr(&mut elem, NFTA_SET_ELEM_EXPIRATION, &604_790_000u64.to_be_bytes());
    attr(&mut elem, 8, &[]);
    nested(&mut elem, 7, &counter);
    let got = set_element(2, "agent_sandbox", "seen", &elem).unwrap();
    assert_eq!((got.packets, got.timeout_ms, got.expires_ms, got.extra.len()), (Some(3), Some(604_800_000), Some(604_790_000), 0));
    let r = crate::jail::plan::report::refused_from(&[got]);
    assert_eq!((r[0].port, r[0].proto, r[0].count, r[0].age_ms), (5432, 6, 3, 10_000));
}
