//! DNS messages as the jail's forwarder sees them (allowDomains): the
//! question of a query, the IPv4 addresses an answer gives for it (along
//! its CNAME chain), and the refusal the forwarder sends for a name that
//! is not allowed. Pure; RFC 1035's wire format (RFC 8914 for the
//! refusal's extended error).
//!
//! Hostile input: the session writes the queries, and an allowed
//! wildcard's authoritative server may write the answers. Every length is
//! checked against the message, a name has at most 255 bytes and 127
//! labels, compression pointers must point backwards (no loops) and a
//! CNAME chain is followed at most `MAX_CHAIN` steps. Nothing here
//! allocates more than the message's size allows.

use std::net::Ipv4Addr;

const HEADER: usize = 12;
pub const TYPE_A: u16 = 1;
const TYPE_CNAME: u16 = 5;
const TYPE_OPT: u16 = 41;
const CLASS_IN: u16 = 1;
/// RCODEs.
const NXDOMAIN: u8 = 3;
pub(crate) const SERVFAIL: u8 = 2;
/// The longest CNAME chain followed.
const MAX_CHAIN: usize = 16;
const MAX_NAME: usize = 255;
/// RFC 8914: EDNS option EDE, info code 15 "Blocked".
const OPT_EDE: u16 = 15;
const EDE_BLOCKED: u16 = 15;
/// What the refusal's extended error says (`dig` shows it).
pub const REFUSAL_TEXT: &str = "agent-sandbox: not in allowDomains";

/// Why a message is not one the forwarder handles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    Short,
    NotAQuery,
    NotAnAnswer,
    /// Not exactly one question, or an opcode other than QUERY.
    Unsupported,
    BadName,
    /// An answer whose question is not the query's.
    OtherQuestion,
}

/// A query's one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Lower case, dot-separated, no trailing dot ("" for the root);
    /// bytes outside letters, digits, `-` and `_` written `\DDD`.
    pub name: String,
    /// Whether every label is letters, digits, `-` and `_` only: only
    /// such a name can match allowDomains.
    pub plain: bool,
    pub qtype: u16,
    pub(crate) qclass: u16,
}

/// A query the forwarder may pass on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub id: u16,
    pub question: Question,
    /// Where the question ends (what a reply repeats).
    pub question_end: usize,
    /// The query carried an OPT record (EDNS): a refusal may too.
    pub(crate) edns: bool,
}

fn u16_at(m: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*m.get(i)?, *m.get(i + 1)?]))
}

fn u32_at(m: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_be_bytes(m.get(i..i + 4)?.try_into().ok()?))
}

/// A name at `start`: (its text, plain, the offset after it where it
/// sits). Pointers must point strictly backwards, so a chain of them ends.
fn name_at(m: &[u8], start: usize) -> Result<(String, bool, usize), Malformed> {
    let (mut out, mut plain, mut len) = (String::new(), true, 0usize);
    let (mut i, mut after, mut floor) = (start, None, start);
    loop {
        let b = *m.get(i).ok_or(Malformed::BadName)?;
        match b & 0xc0 {
            0xc0 => {
                let target = usize::from(u16_at(m, i).ok_or(Malformed::BadName)? & 0x3fff);
                if target >= floor {
                    return Err(Malformed::BadName);
                }
                after.get_or_insert(i + 2);
                floor = target;
                i = target;
            }
            0x00 if b == 0 => break,
            0x00 => {
                let label = m.get(i + 1..i + 1 + usize::from(b)).ok_or(Malformed::BadName)?;
                len += label.len() + 1;
                if len > MAX_NAME {
                    return Err(Malformed::BadName);
                }
                if !out.is_empty() {
                    out.push('.');
                }
                for &c in label {
                    let c = c.to_ascii_lowercase();
                    if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' {
                        out.push(char::from(c));
                    } else {
                        plain = false;
                        out.push_str(&format!("\\{c:03}"));
                    }
                }
                i += 1 + label.len();
            }
            _ => return Err(Malformed::BadName),
        }
    }
    Ok((out, plain, after.unwrap_or(i + 1)))
}

/// The header's flags byte 2: QR, opcode, AA, TC, RD.
const QR: u8 = 0x80;
const OPCODE: u8 = 0x78;
const TC: u8 = 0x02;

fn question_of(m: &[u8]) -> Result<(Question, usize), Malformed> {
    if m.len() < HEADER {
        return Err(Malformed::Short);
    }
    if m[2] & OPCODE != 0 || u16_at(m, 4) != Some(1) {
        return Err(Malformed::Unsupported);
    }
    let (name, plain, end) = name_at(m, HEADER)?;
    let qtype = u16_at(m, end).ok_or(Malformed::Short)?;
    let qclass = u16_at(m, end + 2).ok_or(Malformed::Short)?;
    Ok((Question { name, plain, qtype, qclass }, end + 4))
}

/// The query in `m`, if it is a standard query with one question.
pub fn parse_query(m: &[u8]) -> Result<Query, Malformed> {
    if m.len() >= HEADER && m[2] & QR != 0 {
        return Err(Malformed::NotAQuery);
    }
    let (question, question_end) = question_of(m)?;
    // An OPT record among the additional ones (skipped over, not kept).
    let edns = records(m, question_end, true).is_some_and(|rs| rs.iter().any(|r| r.rtype == TYPE_OPT));
    Ok(Query { id: u16_at(m, 0).ok_or(Malformed::Short)?, question, question_end, edns })
}

/// One resource record: owner, type, class, TTL and where its data is.
struct Record {
    owner: String,
    rtype: u16,
    class: u16,
    ttl: u32,
    data: (usize, usize),
}

/// The records after the question: the answer section's, or with `all`
/// those of every section; `None` if the counts do not fit the message.
fn records(m: &[u8], mut i: usize, all: bool) -> Option<Vec<Record>> {
    let counts = [u16_at(m, 6)?, u16_at(m, 8)?, u16_at(m, 10)?];
    let total: usize = if all { counts.iter().map(|c| usize::from(*c)).sum() } else { usize::from(counts[0]) };
    // Each record needs at least 11 bytes: a claim of more is a lie.
    if total > m.len() / 11 {
        return None;
    }
    let mut out = Vec::with_capacity(total);
    for _ in 0..total {
        let (owner, _, end) = name_at(m, i).ok()?;
        let rtype = u16_at(m, end)?;
        let class = u16_at(m, end + 2)?;
        let ttl = u32_at(m, end + 4)?;
        let len = usize::from(u16_at(m, end + 8)?);
        let data = (end + 10, end + 10 + len);
        if data.1 > m.len() {
            return None;
        }
        out.push(Record { owner, rtype, class, ttl, data });
        i = data.1;
    }
    Some(out)
}

/// One address an answer gives, with its record's TTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    pub addr: Ipv4Addr,
    pub ttl: u32,
}

/// What an answer to `query` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub rcode: u8,
    /// Truncated: the client will ask again over TCP.
    pub truncated: bool,
    /// The A records of the question's name and of the names its CNAME
    /// chain leads to, and no others (a server that adds records for
    /// other names opens nothing).
    pub addrs: Vec<Resolved>,
}

/// The answer in `m` to `query`: the same id and question, then the
/// answer section's A records along the CNAME chain.
pub fn parse_answer(m: &[u8], query: &Query) -> Result<Answer, Malformed> {
    if m.len() < HEADER {
        return Err(Malformed::Short);
    }
    if m[2] & QR == 0 {
        return Err(Malformed::NotAnAnswer);
    }
    let (q, end) = question_of(m)?;
    if u16_at(m, 0) != Some(query.id) || q != query.question {
        return Err(Malformed::OtherQuestion);
    }
    let rcode = m[3] & 0x0f;
    let records = records(m, end, false).unwrap_or_default();
    let mut addrs = Vec::new();
    let mut current = q.name.clone();
    for _ in 0..MAX_CHAIN {
        let here = |r: &&Record| r.class == CLASS_IN && r.owner == current;
        for r in records.iter().filter(here).filter(|r| r.rtype == TYPE_A && r.data.1 - r.data.0 == 4) {
            let b = &m[r.data.0..r.data.1];
            addrs.push(Resolved { addr: Ipv4Addr::new(b[0], b[1], b[2], b[3]), ttl: r.ttl });
        }
        match records.iter().filter(here).find(|r| r.rtype == TYPE_CNAME) {
            Some(r) => match name_at(m, r.data.0) {
                Ok((target, _, _)) => current = target,
                Err(_) => break,
            },
            None => break,
        }
    }
    Ok(Answer { rcode, truncated: m[2] & TC != 0, addrs })
}

/// The forwarder's own reply to `query` (whose bytes are `m`): its id and
/// question, RD as asked, RA, the `rcode`, no records; with EDNS, an OPT
/// record carrying an extended error (`Blocked`, with `REFUSAL_TEXT`)
/// when `blocked`.
pub fn reply(m: &[u8], query: &Query, rcode: u8, blocked: bool) -> Vec<u8> {
    let mut r = Vec::with_capacity(query.question_end + 64);
    r.extend_from_slice(&query.id.to_be_bytes());
    r.push(QR | (m.get(2).copied().unwrap_or(0) & 0x01));
    r.push(0x80 | (rcode & 0x0f));
    r.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, u8::from(query.edns)]);
    r.extend_from_slice(m.get(HEADER..query.question_end).unwrap_or_default());
    if query.edns {
        // OPT: root owner, type 41, UDP size 1232 in the class, no
        // extended rcode, version 0, no flags.
        r.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0]);
        let mut data = Vec::new();
        if blocked {
            data.extend_from_slice(&OPT_EDE.to_be_bytes());
            data.extend_from_slice(&((2 + REFUSAL_TEXT.len()) as u16).to_be_bytes());
            data.extend_from_slice(&EDE_BLOCKED.to_be_bytes());
            data.extend_from_slice(REFUSAL_TEXT.as_bytes());
        }
        r.extend_from_slice(&(data.len() as u16).to_be_bytes());
        r.extend_from_slice(&data);
    }
    r
}

/// The refusal of a name not in allowDomains: NXDOMAIN, a definite answer
/// ("no such name": tools fail at once and do not retry), with the
/// extended error that says why.
pub fn refusal(m: &[u8], query: &Query) -> Vec<u8> {
    reply(m, query, NXDOMAIN, true)
}

/// The extended error of a reply, if it carries one (`verify` tells the
/// forwarder's refusal from an upstream NXDOMAIN by it).
pub fn extended_error(m: &[u8]) -> Option<(u16, String)> {
    let (_, end) = question_of(m).ok()?;
    let opt = records(m, end, true)?.into_iter().find(|r| r.rtype == TYPE_OPT)?;
    let mut i = opt.data.0;
    while i + 4 <= opt.data.1 {
        let (code, len) = (u16_at(m, i)?, usize::from(u16_at(m, i + 2)?));
        let body = m.get(i + 4..i + 4 + len)?;
        if code == OPT_EDE && body.len() >= 2 {
            return Some((u16::from_be_bytes([body[0], body[1]]), String::from_utf8_lossy(&body[2..]).into_owned()));
        }
        i += 4 + len;
    }
    None
}

/// A query for `name` (`type`), with an OPT record when `edns` (for
/// `verify` and the tests).
pub fn query(id: u16, name: &str, qtype: u16, edns: bool) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0x01, 0, 0, 1, 0, 0, 0, 0, 0, u8::from(edns)]);
    for label in name.split('.').filter(|l| !l.is_empty()) {
        q.push(label.len().min(63) as u8);
        q.extend_from_slice(&label.as_bytes()[..label.len().min(63)]);
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&CLASS_IN.to_be_bytes());
    if edns {
        q.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0]);
    }
    q
}

#[cfg(test)]
mod tests;
