use super::*;

/// An answer to `q` (built by `query`): its header with QR, RA and
/// `rcode`, the question, then `records` (already encoded).
fn answer(q: &[u8], rcode: u8, records: &[Vec<u8>]) -> Vec<u8> {
    let query = parse_query(q).unwrap();
    let mut m = q[..query.question_end].to_vec();
    m[2] |= QR;
    m[3] = 0x80 | rcode;
    m[6..8].copy_from_slice(&(records.len() as u16).to_be_bytes());
    m[10..12].copy_from_slice(&[0, 0]);
    for r in records {
        m.extend_from_slice(r);
    }
    m
}

fn wire_name(name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in name.split('.').filter(|l| !l.is_empty()) {
        v.push(l.len() as u8);
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

fn rr(owner: &[u8], rtype: u16, ttl: u32, data: &[u8]) -> Vec<u8> {
    let mut r = owner.to_vec();
    r.extend_from_slice(&rtype.to_be_bytes());
    r.extend_from_slice(&CLASS_IN.to_be_bytes());
    r.extend_from_slice(&ttl.to_be_bytes());
    r.extend_from_slice(&(data.len() as u16).to_be_bytes());
    r.extend_from_slice(data);
    r
}

/// A pointer to the question's name (at offset 12).
const QNAME: [u8; 2] = [0xc0, 12];

#[test]
fn a_query_names_its_question() {
    let q = query(0x1234, "Api.GitHub.com.", TYPE_A, true);
    let got = parse_query(&q).unwrap();
    assert_eq!(got.id, 0x1234);
    assert_eq!(got.question, Question { name: "api.github.com".into(), plain: true, qtype: TYPE_A, qclass: CLASS_IN });
    assert!(got.edns);
    assert!(!parse_query(&query(1, "x.org", TYPE_A, false)).unwrap().edns);
}

#[test]
fn the_cname_chain_is_followed_and_other_records_ignored() {
    let q = query(7, "www.example.org", TYPE_A, false);
    let cdn = wire_name("edge.cdn.net");
    let records = [
        rr(&QNAME, TYPE_CNAME, 300, &cdn),
        rr(&cdn, TYPE_A, 60, &[203, 0, 113, 5]),
        rr(&cdn, TYPE_A, 30, &[203, 0, 113, 6]),
        // A record for another name: not the question's.
        rr(&wire_name("evil.example"), TYPE_A, 60, &[198, 51, 100, 1]),
        // An AAAA: not IPv4.
        rr(&cdn, 28, 60, &[0; 16]),
    ];
    let a = parse_answer(&answer(&q, 0, &records), &parse_query(&q).unwrap()).unwrap();
    assert_eq!(a.addrs, [Resolved { addr: Ipv4Addr::new(203, 0, 113, 5), ttl: 60 }, Resolved { addr: Ipv4Addr::new(203, 0, 113, 6), ttl: 30 }]);
    assert_eq!((a.rcode, a.truncated), (0, false));
}

#[test]
fn a_cname_loop_ends() {
    let q = query(7, "a.loop", TYPE_A, false);
    let b = wire_name("b.loop");
    let records = [rr(&QNAME, TYPE_CNAME, 1, &b), rr(&b, TYPE_CNAME, 1, &wire_name("a.loop")), rr(&b, TYPE_A, 1, &[192, 0, 2, 1])];
    let a = parse_answer(&answer(&q, 0, &records), &parse_query(&q).unwrap()).unwrap();
    // b's address once per visit, at most MAX_CHAIN steps.
    assert!(!a.addrs.is_empty() && a.addrs.len() <= MAX_CHAIN);
}

#[test]
fn an_answer_to_another_question_or_id_is_refused() {
    let q = query(7, "a.example", TYPE_A, false);
    let other = query(7, "b.example", TYPE_A, false);
    assert_eq!(parse_answer(&answer(&other, 0, &[]), &parse_query(&q).unwrap()), Err(Malformed::OtherQuestion));
    let mut m = answer(&q, 0, &[]);
    m[1] ^= 1;
    assert_eq!(parse_answer(&m, &parse_query(&q).unwrap()), Err(Malformed::OtherQuestion));
    assert_eq!(parse_answer(&q, &parse_query(&q).unwrap()), Err(Malformed::NotAnAnswer));
    assert_eq!(parse_query(&answer(&q, 0, &[])), Err(Malformed::NotAQuery));
}

#[test]
fn odd_names_are_not_plain() {
    // A label holding a dot: "x" under the label "github.com", which
    // must not read as x.github.com.
    let mut q = query(1, "x", TYPE_A, false);
    let at = 12 + 2;
    let mut tail = vec![10];
    tail.extend_from_slice(b"github.com");
    q.splice(at..at, tail);
    let got = parse_query(&q).unwrap();
    assert_eq!(got.question.name, "x.github\\046com");
    assert!(!got.question.plain);
}

#[test]
fn pointers_must_point_back() {
    let mut q = query(1, "a", TYPE_A, false);
    // The name is a pointer to itself.
    q[12] = 0xc0;
    q[13] = 12;
    assert_eq!(parse_query(&q), Err(Malformed::BadName));
    // Names longer than 255 bytes.
    let long = ["abcdefghij"; 30].join(".");
    assert_eq!(parse_query(&query(1, &long, TYPE_A, false)), Err(Malformed::BadName));
}

#[test]
fn the_refusal_is_nxdomain_with_an_extended_error() {
    let q = query(0xbeef, "evil.example", TYPE_A, true);
    let parsed = parse_query(&q).unwrap();
    let r = refusal(&q, &parsed);
    assert_eq!(&r[..2], &[0xbe, 0xef]);
    assert_eq!(r[2] & QR, QR);
    assert_eq!(r[2] & 0x01, 0x01, "RD as asked");
    assert_eq!(r[3] & 0x0f, 3);
    assert_eq!(extended_error(&r), Some((EDE_BLOCKED, REFUSAL_TEXT.to_string())));
    // Its question is the query's, so a resolver accepts it as the answer.
    let a = parse_answer(&r, &parsed).unwrap();
    assert_eq!((a.rcode, a.addrs.len()), (3, 0));
    // Without EDNS, no OPT record.
    let q = query(1, "evil.example", TYPE_A, false);
    let r = refusal(&q, &parse_query(&q).unwrap());
    assert_eq!(&r[6..12], &[0, 0, 0, 0, 0, 0]);
    assert_eq!(extended_error(&r), None);
}

#[test]
fn counts_that_do_not_fit_are_not_believed() {
    let q = query(7, "a.example", TYPE_A, false);
    let mut m = answer(&q, 0, &[rr(&QNAME, TYPE_A, 5, &[192, 0, 2, 9])]);
    m[6..8].copy_from_slice(&0xffffu16.to_be_bytes());
    let a = parse_answer(&m, &parse_query(&q).unwrap()).unwrap();
    assert!(a.addrs.is_empty());
    // A record whose data runs past the end.
    let mut m = answer(&q, 0, &[rr(&QNAME, TYPE_A, 5, &[192, 0, 2, 9])]);
    let n = m.len();
    m[n - 6..n - 4].copy_from_slice(&100u16.to_be_bytes());
    assert!(parse_answer(&m, &parse_query(&q).unwrap()).unwrap().addrs.is_empty());
}

/// Random bytes, and random corruptions of real messages: never a panic.
#[test]
fn hostile_bytes_never_panic() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let q = query(7, "www.example.org", TYPE_A, true);
    let cdn = wire_name("edge.cdn.net");
    let good = answer(&q, 0, &[rr(&QNAME, TYPE_CNAME, 300, &cdn), rr(&cdn, TYPE_A, 60, &[203, 0, 113, 5])]);
    let parsed = parse_query(&q).unwrap();
    for round in 0..20_000 {
        let mut m = if round % 2 == 0 { good.clone() } else { (0..next() % 600).map(|_| next() as u8).collect() };
        for _ in 0..(next() % 6) {
            if !m.is_empty() {
                let i = (next() as usize) % m.len();
                m[i] = next() as u8;
            }
        }
        if next() % 4 == 0 {
            m.truncate((next() as usize) % (m.len() + 1));
        }
        let _ = parse_query(&m);
        let _ = parse_answer(&m, &parsed);
        let _ = extended_error(&m);
        if let Ok(pq) = parse_query(&m) {
            let _ = refusal(&m, &pq);
        }
    }
}
