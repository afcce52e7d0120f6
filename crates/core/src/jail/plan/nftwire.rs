//! The nf_tables netlink messages the jail's packet filter needs, as pure
//! encoders and decoders: batches (transactions) that create the table,
//! its chain, its set, the set's elements and the rules, or add and remove
//! elements; and the parsers for the kernel's dumps of tables, chains,
//! sets, elements and rules. No socket here (`run/nft.rs` sends and
//! receives).
//!
//! Why by hand, when routes go through netlink-packet-route: the
//! netlink-packet-* family's nf_tables types (netlink-packet-netfilter
//! 0.4) know the bitwise, cmp, immediate, lookup, meta and payload
//! expressions only, not the ct, dynset, counter and reject ones the
//! filter is made of, and they are built on netlink-packet-core 0.9 where
//! rtnetlink 0.14 is on 0.7.
//!
//! Wire facts (from the kernel's uapi headers `linux/netlink.h`,
//! `linux/netfilter/nfnetlink.h`, `linux/netfilter/nf_tables.h`):
//! - a message is `nlmsghdr` (host byte order) + `nfgenmsg` (family,
//!   version, resource id in network order) + attributes;
//! - attributes are `nlattr` (length and type in host order, padded to 4
//!   bytes); nested ones carry `NLA_F_NESTED`;
//! - nf_tables' own integers (hook numbers, priorities, registers, verdicts,
//!   payload offsets) are 32-bit big-endian.

use super::filter::{ChainState, ElementState, RuleState, SetState, TableState};

mod expr;

pub const NETLINK_NETFILTER: i32 = 12;

const NLMSG_HDRLEN: usize = 16;
const NFGEN_LEN: usize = 4;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_DUMP: u16 = 0x300;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const NLM_F_APPEND: u16 = 0x800;
const NLA_F_NESTED: u16 = 0x8000;
const NLA_TYPE_MASK: u16 = 0x3fff;

const NFNL_SUBSYS_NFTABLES: u16 = 10;
const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
const NFNL_MSG_BATCH_END: u16 = 0x11;

const NFT_MSG_NEWTABLE: u16 = 0;
const NFT_MSG_GETTABLE: u16 = 1;
const NFT_MSG_NEWCHAIN: u16 = 3;
const NFT_MSG_GETCHAIN: u16 = 4;
const NFT_MSG_NEWRULE: u16 = 6;
const NFT_MSG_GETRULE: u16 = 7;
const NFT_MSG_NEWSET: u16 = 9;
const NFT_MSG_GETSET: u16 = 10;
const NFT_MSG_NEWSETELEM: u16 = 12;
const NFT_MSG_GETSETELEM: u16 = 13;
const NFT_MSG_DELSETELEM: u16 = 14;

const NFTA_TABLE_NAME: u16 = 1;
const NFTA_TABLE_FLAGS: u16 = 2;
const NFTA_CHAIN_TABLE: u16 = 1;
const NFTA_CHAIN_NAME: u16 = 3;
const NFTA_CHAIN_HOOK: u16 = 4;
const NFTA_CHAIN_POLICY: u16 = 5;
const NFTA_CHAIN_TYPE: u16 = 7;
const NFTA_HOOK_HOOKNUM: u16 = 1;
const NFTA_HOOK_PRIORITY: u16 = 2;
const NFTA_RULE_TABLE: u16 = 1;
const NFTA_RULE_CHAIN: u16 = 2;
const NFTA_RULE_EXPRESSIONS: u16 = 4;
const NFTA_LIST_ELEM: u16 = 1;
const NFTA_DATA_VALUE: u16 = 1;
const NFTA_SET_TABLE: u16 = 1;
const NFTA_SET_NAME: u16 = 2;
const NFTA_SET_FLAGS: u16 = 3;
const NFTA_SET_KEY_TYPE: u16 = 4;
const NFTA_SET_KEY_LEN: u16 = 5;
const NFTA_SET_ID: u16 = 10;
const NFTA_SET_TIMEOUT: u16 = 11;
const NFTA_SET_DESC_SIZE: u16 = 1;
/// Reported by the kernel, not planned, and harmless: the handle, the
/// userspace's own notes, the backend hint, the size description, the
/// garbage-collection interval, the backend's type and the element count
/// (newer kernels).
const NFTA_SET_POLICY: u16 = 8;
const NFTA_SET_DESC: u16 = 9;
const NFTA_SET_GC_INTERVAL: u16 = 12;
const NFTA_SET_USERDATA: u16 = 13;
const NFTA_SET_HANDLE: u16 = 16;
const NFTA_SET_TYPE: u16 = 19;
const NFTA_SET_COUNT: u16 = 20;
const NFTA_SET_ELEM_LIST_TABLE: u16 = 1;
const NFTA_SET_ELEM_LIST_SET: u16 = 2;
const NFTA_SET_ELEM_LIST_ELEMENTS: u16 = 3;
const NFTA_SET_ELEM_LIST_SET_ID: u16 = 4;
const NFTA_SET_ELEM_KEY: u16 = 1;
const NFTA_SET_ELEM_FLAGS: u16 = 3;
const NFTA_SET_ELEM_TIMEOUT: u16 = 4;
const NFTA_SET_ELEM_EXPIRATION: u16 = 5;
const NFTA_SET_ELEM_EXPR: u16 = 7;
const NFTA_SET_ELEM_PAD: u16 = 8;
const NFTA_SET_ELEM_EXPRESSIONS: u16 = 11;
/// `NFT_SET_ELEM_INTERVAL_END`.
const ELEM_INTERVAL_END: u32 = 1;

/// The id that names one of the jail's sets within the transaction
/// creating it (the kernel finds a set by name first, so the id only
/// needs to differ between the sets of one transaction).
fn set_id(name: &str) -> u32 {
    use super::filter::{ALLOWED_SET, BLOCKED_SET, SEEN_SET};
    [BLOCKED_SET, SEEN_SET, ALLOWED_SET].iter().position(|n| *n == name).map_or(1, |i| i as u32 + 1)
}

/// One message before encoding: its netlink type, flags, family and
/// attributes (already encoded).
struct Msg {
    kind: u16,
    flags: u16,
    family: u8,
    attrs: Vec<u8>,
}

/// Appends one attribute (padded).
fn attr(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = 4 + payload.len();
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(payload);
    out.resize(out.len() + pad(len) - len, 0);
}

fn nested(out: &mut Vec<u8>, kind: u16, inner: &[u8]) {
    attr(out, kind | NLA_F_NESTED, inner);
}

fn strz(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

fn be32(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

fn pad(len: usize) -> usize {
    (len + 3) & !3
}

/// A message type of the nf_tables subsystem.
fn nft(msg: u16) -> u16 {
    (NFNL_SUBSYS_NFTABLES << 8) | msg
}

fn message(out: &mut Vec<u8>, m: &Msg, seq: u32) {
    let len = NLMSG_HDRLEN + NFGEN_LEN + m.attrs.len();
    out.extend_from_slice(&(len as u32).to_ne_bytes());
    out.extend_from_slice(&m.kind.to_ne_bytes());
    out.extend_from_slice(&m.flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    // nfgenmsg: family, NFNETLINK_V0, resource id (a batch names the
    // subsystem it is for).
    let batch_edge = m.kind == NFNL_MSG_BATCH_BEGIN || m.kind == NFNL_MSG_BATCH_END;
    let res_id: u16 = if batch_edge { NFNL_SUBSYS_NFTABLES } else { 0 };
    out.push(m.family);
    out.push(0);
    out.extend_from_slice(&res_id.to_be_bytes());
    out.extend_from_slice(&m.attrs);
}

/// What a transaction does with elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ElemOp {
    /// Add; one already there is an error (EEXIST).
    Add,
    /// Add; one already there stays as it is.
    Ensure,
    Remove,
}

/// One object a transaction creates (or, for elements, removes).
pub(crate) enum Obj<'a> {
    Table(&'a TableState),
    Chain(&'a ChainState),
    Set(&'a SetState),
    Elements { set: &'a SetState, elements: &'a [ElementState], op: ElemOp },
    Rule(&'a RuleState),
}

/// Elements per message: their list is one attribute, whose length is 16
/// bits.
pub(crate) const ELEMENTS_PER_MESSAGE: usize = 1000;

/// One transaction of `objs`, in order: all of it or nothing. Every object
/// message asks for an acknowledgement; the sequence numbers are
/// `seq + 1 ..= seq + n` (the batch's own begin and end use `seq` and
/// `seq + n + 1`). Returns the bytes and `n`.
pub(crate) fn batch(objs: &[Obj<'_>], seq: u32) -> (Vec<u8>, u32) {
    let create = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
    let mut msgs = Vec::new();
    for o in objs {
        match o {
            Obj::Table(t) => msgs.push(Msg { kind: nft(NFT_MSG_NEWTABLE), flags: create, family: t.family, attrs: table_attrs(t) }),
            Obj::Chain(c) => msgs.push(Msg { kind: nft(NFT_MSG_NEWCHAIN), flags: create, family: c.family, attrs: chain_attrs(c) }),
            Obj::Set(set) => msgs.push(Msg { kind: nft(NFT_MSG_NEWSET), flags: create, family: set.family, attrs: set_attrs(set) }),
            Obj::Elements { set, elements, op } => {
                let (kind, flags) = match op {
                    ElemOp::Add => (NFT_MSG_NEWSETELEM, create),
                    ElemOp::Ensure => (NFT_MSG_NEWSETELEM, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE),
                    ElemOp::Remove => (NFT_MSG_DELSETELEM, NLM_F_REQUEST | NLM_F_ACK),
                };
                for chunk in elements.chunks(ELEMENTS_PER_MESSAGE) {
                    msgs.push(Msg { kind: nft(kind), flags, family: set.family, attrs: element_attrs(set, chunk) });
                }
            }
            Obj::Rule(r) => {
                let mut a = Vec::new();
                attr(&mut a, NFTA_RULE_TABLE, &strz(&r.table));
                attr(&mut a, NFTA_RULE_CHAIN, &strz(&r.chain));
                nested(&mut a, NFTA_RULE_EXPRESSIONS, &expr::expressions(&r.exprs));
                let flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_APPEND;
                msgs.push(Msg { kind: nft(NFT_MSG_NEWRULE), flags, family: r.family, attrs: a });
            }
        }
    }
    let n = msgs.len() as u32;
    let mut out = Vec::new();
    let edge = |kind| Msg { kind, flags: NLM_F_REQUEST, family: 0, attrs: Vec::new() };
    message(&mut out, &edge(NFNL_MSG_BATCH_BEGIN), seq);
    for (i, m) in msgs.iter().enumerate() {
        message(&mut out, m, seq + 1 + i as u32);
    }
    message(&mut out, &edge(NFNL_MSG_BATCH_END), seq + n + 1);
    (out, n)
}

#[cfg(test)]
/// The transaction creating `table`, its base `chain` (if any) and `rules`
/// in order (see [`batch`]).
pub(crate) fn create_batch(table: &TableState, chain: Option<&ChainState>, rules: &[RuleState], seq: u32) -> (Vec<u8>, u32) {
    let mut objs = vec![Obj::Table(table)];
    objs.extend(chain.map(Obj::Chain));
    objs.extend(rules.iter().map(Obj::Rule));
    batch(&objs, seq)
}

fn table_attrs(t: &TableState) -> Vec<u8> {
    let mut a = Vec::new();
    attr(&mut a, NFTA_TABLE_NAME, &strz(&t.name));
    attr(&mut a, NFTA_TABLE_FLAGS, &be32(t.flags));
    a
}

fn chain_attrs(chain: &ChainState) -> Vec<u8> {
    let mut c = Vec::new();
    attr(&mut c, NFTA_CHAIN_TABLE, &strz(&chain.table));
    attr(&mut c, NFTA_CHAIN_NAME, &strz(&chain.name));
    if let Some((hooknum, priority)) = chain.hook {
        let mut h = Vec::new();
        attr(&mut h, NFTA_HOOK_HOOKNUM, &be32(hooknum));
        attr(&mut h, NFTA_HOOK_PRIORITY, &be32(priority as u32));
        nested(&mut c, NFTA_CHAIN_HOOK, &h);
    }
    if let Some(policy) = chain.policy {
        attr(&mut c, NFTA_CHAIN_POLICY, &be32(policy as u32));
    }
    if let Some(kind) = &chain.kind {
        attr(&mut c, NFTA_CHAIN_TYPE, &strz(kind));
    }
    c
}

fn set_attrs(set: &SetState) -> Vec<u8> {
    let mut a = Vec::new();
    attr(&mut a, NFTA_SET_TABLE, &strz(&set.table));
    attr(&mut a, NFTA_SET_NAME, &strz(&set.name));
    attr(&mut a, NFTA_SET_FLAGS, &be32(set.flags));
    attr(&mut a, NFTA_SET_KEY_TYPE, &be32(set.key_type));
    attr(&mut a, NFTA_SET_KEY_LEN, &be32(set.key_len));
    attr(&mut a, NFTA_SET_ID, &be32(set_id(&set.name)));
    if let Some(t) = set.timeout_ms {
        attr(&mut a, NFTA_SET_TIMEOUT, &t.to_be_bytes());
    }
    if let Some(size) = set.size {
        let mut desc = Vec::new();
        attr(&mut desc, NFTA_SET_DESC_SIZE, &be32(size));
        nested(&mut a, NFTA_SET_DESC, &desc);
    }
    a
}

fn element_attrs(set: &SetState, elements: &[ElementState]) -> Vec<u8> {
    let mut a = Vec::new();
    attr(&mut a, NFTA_SET_ELEM_LIST_TABLE, &strz(&set.table));
    attr(&mut a, NFTA_SET_ELEM_LIST_SET, &strz(&set.name));
    attr(&mut a, NFTA_SET_ELEM_LIST_SET_ID, &be32(set_id(&set.name)));
    let mut list = Vec::new();
    for e in elements {
        let mut elem = Vec::new();
        let mut key = Vec::new();
        attr(&mut key, NFTA_DATA_VALUE, &e.key);
        nested(&mut elem, NFTA_SET_ELEM_KEY, &key);
        if e.end {
            attr(&mut elem, NFTA_SET_ELEM_FLAGS, &be32(ELEM_INTERVAL_END));
        }
        if let Some(t) = e.timeout_ms {
            attr(&mut elem, NFTA_SET_ELEM_TIMEOUT, &t.to_be_bytes());
        }
        nested(&mut list, NFTA_LIST_ELEM, &elem);
    }
    nested(&mut a, NFTA_SET_ELEM_LIST_ELEMENTS, &list);
    a
}

/// What to dump: every object of a kind, of every family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dump {
    Tables,
    Chains,
    Sets,
    Rules,
}

pub(crate) fn dump_request(what: Dump, seq: u32) -> Vec<u8> {
    let kind = match what {
        Dump::Tables => NFT_MSG_GETTABLE,
        Dump::Chains => NFT_MSG_GETCHAIN,
        Dump::Sets => NFT_MSG_GETSET,
        Dump::Rules => NFT_MSG_GETRULE,
    };
    let mut out = Vec::new();
    message(&mut out, &Msg { kind: nft(kind), flags: NLM_F_REQUEST | NLM_F_DUMP, family: 0, attrs: Vec::new() }, seq);
    out
}

/// A dump of one set's elements (the kernel lists elements per set).
pub(crate) fn elements_request(set: &SetState, seq: u32) -> Vec<u8> {
    let mut a = Vec::new();
    attr(&mut a, NFTA_SET_ELEM_LIST_TABLE, &strz(&set.table));
    attr(&mut a, NFTA_SET_ELEM_LIST_SET, &strz(&set.name));
    let mut out = Vec::new();
    message(&mut out, &Msg { kind: nft(NFT_MSG_GETSETELEM), flags: NLM_F_REQUEST | NLM_F_DUMP, family: set.family, attrs: a }, seq);
    out
}

/// One message of a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// An acknowledgement (0) or an error (a negative errno) for `seq`.
    Ack {
        seq: u32,
        error: i32,
    },
    Done {
        seq: u32,
    },
    Table(TableState),
    Chain(ChainState),
    Set(SetState),
    Elements(Vec<ElementState>),
    Rule(RuleState),
    /// Something this code does not know (kept so it counts as a difference).
    Unknown {
        kind: u16,
    },
}

/// Splits a buffer of netlink messages and decodes each.
pub(crate) fn parse_replies(buf: &[u8]) -> Result<Vec<Reply>, String> {
    let mut out = Vec::new();
    let mut rest = buf;
    while rest.len() >= NLMSG_HDRLEN {
        let len = u32::from_ne_bytes(rest[0..4].try_into().map_err(|_| "short header")?) as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            return Err(format!("bad netlink message length {len}"));
        }
        let kind = u16::from_ne_bytes([rest[4], rest[5]]);
        let seq = u32::from_ne_bytes(rest[8..12].try_into().map_err(|_| "short header")?);
        out.push(parse_one(kind, seq, &rest[NLMSG_HDRLEN..len])?);
        rest = &rest[pad(len).min(rest.len())..];
    }
    Ok(out)
}

fn parse_one(kind: u16, seq: u32, body: &[u8]) -> Result<Reply, String> {
    match kind {
        NLMSG_ERROR => {
            let b: [u8; 4] = body.get(0..4).and_then(|b| b.try_into().ok()).ok_or("short error message")?;
            Ok(Reply::Ack { seq, error: i32::from_ne_bytes(b) })
        }
        NLMSG_DONE => Ok(Reply::Done { seq }),
        _ if kind >> 8 == NFNL_SUBSYS_NFTABLES => {
            let family = *body.first().ok_or("short nfgenmsg")?;
            let attrs = attrs(body.get(NFGEN_LEN..).unwrap_or_default())?;
            match kind & 0xff {
                NFT_MSG_NEWTABLE => Ok(Reply::Table(table(family, &attrs))),
                NFT_MSG_NEWCHAIN => Ok(Reply::Chain(chain(family, &attrs)?)),
                NFT_MSG_NEWRULE => Ok(Reply::Rule(rule(family, &attrs)?)),
                NFT_MSG_NEWSET => Ok(Reply::Set(set(family, &attrs)?)),
                NFT_MSG_NEWSETELEM => Ok(Reply::Elements(set_elements(family, &attrs)?)),
                _ => Ok(Reply::Unknown { kind }),
            }
        }
        _ => Ok(Reply::Unknown { kind }),
    }
}

/// (type without flags, payload) of each attribute.
fn attrs(mut b: &[u8]) -> Result<Vec<(u16, &[u8])>, String> {
    let mut out = Vec::new();
    while b.len() >= 4 {
        let len = u16::from_ne_bytes([b[0], b[1]]) as usize;
        let kind = u16::from_ne_bytes([b[2], b[3]]) & NLA_TYPE_MASK;
        if len < 4 || len > b.len() {
            return Err(format!("bad attribute length {len}"));
        }
        out.push((kind, &b[4..len]));
        b = &b[pad(len).min(b.len())..];
    }
    Ok(out)
}

fn find<'a>(a: &[(u16, &'a [u8])], kind: u16) -> Option<&'a [u8]> {
    a.iter().find(|(k, _)| *k == kind).map(|(_, v)| *v)
}

fn text(v: Option<&[u8]>) -> String {
    let v = v.unwrap_or_default();
    let end = v.iter().position(|b| *b == 0).unwrap_or(v.len());
    String::from_utf8_lossy(&v[..end]).into_owned()
}

fn u32_be(v: Option<&[u8]>) -> Option<u32> {
    v.and_then(|b| b.try_into().ok()).map(u32::from_be_bytes)
}

fn u64_be(v: Option<&[u8]>) -> Option<u64> {
    v.and_then(|b| b.try_into().ok()).map(u64::from_be_bytes)
}

fn table(family: u8, a: &[(u16, &[u8])]) -> TableState {
    TableState { family, name: text(find(a, NFTA_TABLE_NAME)), flags: u32_be(find(a, NFTA_TABLE_FLAGS)).unwrap_or(0) }
}

fn chain(family: u8, a: &[(u16, &[u8])]) -> Result<ChainState, String> {
    let hook = match find(a, NFTA_CHAIN_HOOK) {
        Some(h) => {
            let h = attrs(h)?;
            let num = u32_be(find(&h, NFTA_HOOK_HOOKNUM)).ok_or("a hook without a number")?;
            let prio = u32_be(find(&h, NFTA_HOOK_PRIORITY)).ok_or("a hook without a priority")? as i32;
            Some((num, prio))
        }
        None => None,
    };
    Ok(ChainState {
        family,
        table: text(find(a, NFTA_CHAIN_TABLE)),
        name: text(find(a, NFTA_CHAIN_NAME)),
        hook,
        policy: u32_be(find(a, NFTA_CHAIN_POLICY)).map(|p| p as i32),
        kind: find(a, NFTA_CHAIN_TYPE).map(|t| text(Some(t))),
    })
}

fn set(family: u8, a: &[(u16, &[u8])]) -> Result<SetState, String> {
    let known = [NFTA_SET_TABLE, NFTA_SET_NAME, NFTA_SET_FLAGS, NFTA_SET_KEY_TYPE, NFTA_SET_KEY_LEN, NFTA_SET_ID, NFTA_SET_TIMEOUT, NFTA_SET_DESC];
    let harmless = [NFTA_SET_POLICY, NFTA_SET_GC_INTERVAL, NFTA_SET_USERDATA, NFTA_SET_HANDLE, NFTA_SET_TYPE, NFTA_SET_COUNT];
    // The description: its size is planned; anything else in it (a
    // concatenation's field lengths) is not the jail's.
    let desc = attrs(find(a, NFTA_SET_DESC).unwrap_or_default())?;
    let mut extra: Vec<String> = a.iter().filter(|(k, _)| !known.contains(k) && !harmless.contains(k)).map(|(k, v)| format!("attribute {k} {v:?}")).collect();
    extra.extend(desc.iter().filter(|(k, _)| *k != NFTA_SET_DESC_SIZE).map(|(k, v)| format!("description attribute {k} {v:?}")));
    Ok(SetState {
        family,
        table: text(find(a, NFTA_SET_TABLE)),
        name: text(find(a, NFTA_SET_NAME)),
        flags: u32_be(find(a, NFTA_SET_FLAGS)).unwrap_or(0),
        key_type: u32_be(find(a, NFTA_SET_KEY_TYPE)).unwrap_or(0),
        key_len: u32_be(find(a, NFTA_SET_KEY_LEN)).unwrap_or(0),
        timeout_ms: u64_be(find(a, NFTA_SET_TIMEOUT)).filter(|t| *t != 0),
        size: u32_be(find(&desc, NFTA_SET_DESC_SIZE)).filter(|s| *s != 0),
        extra,
    })
}

fn set_elements(family: u8, a: &[(u16, &[u8])]) -> Result<Vec<ElementState>, String> {
    let (table, set) = (text(find(a, NFTA_SET_ELEM_LIST_TABLE)), text(find(a, NFTA_SET_ELEM_LIST_SET)));
    let mut out = Vec::new();
    for (kind, elem) in attrs(find(a, NFTA_SET_ELEM_LIST_ELEMENTS).unwrap_or_default())? {
        if kind != NFTA_LIST_ELEM {
            return Err(format!("unexpected attribute {kind} in an element list"));
        }
        out.push(set_element(family, &table, &set, elem)?);
    }
    Ok(out)
}

/// One element: its key, interval end flag, lifetime and counter; any
/// other attribute (map data, another expression) is kept as `extra`.
fn set_element(family: u8, table: &str, set: &str, elem: &[u8]) -> Result<ElementState, String> {
    let e = attrs(elem)?;
    let flags = u32_be(find(&e, NFTA_SET_ELEM_FLAGS)).unwrap_or(0);
    let known = [
        NFTA_SET_ELEM_KEY,
        NFTA_SET_ELEM_FLAGS,
        NFTA_SET_ELEM_TIMEOUT,
        NFTA_SET_ELEM_EXPIRATION,
        NFTA_SET_ELEM_PAD,
        NFTA_SET_ELEM_EXPR,
        NFTA_SET_ELEM_EXPRESSIONS,
    ];
    let mut extra: Vec<String> = e.iter().filter(|(k, _)| !known.contains(k)).map(|(k, v)| format!("attribute {k} {v:?}")).collect();
    if flags & !ELEM_INTERVAL_END != 0 {
        extra.push(format!("flags {flags:#x}"));
    }
    // One counter, given alone or as a list of one.
    let mut exprs: Vec<&[u8]> = find(&e, NFTA_SET_ELEM_EXPR).into_iter().collect();
    for (kind, x) in attrs(find(&e, NFTA_SET_ELEM_EXPRESSIONS).unwrap_or_default())? {
        if kind == NFTA_LIST_ELEM {
            exprs.push(x);
        }
    }
    let packets = match exprs.as_slice() {
        [] => None,
        [x] => match expr::counter_packets(x)? {
            Some(p) => Some(p),
            None => {
                extra.push(format!("expression {x:?}"));
                None
            }
        },
        more => {
            extra.push(format!("{} expressions", more.len()));
            None
        }
    };
    Ok(ElementState {
        family,
        table: table.to_string(),
        set: set.to_string(),
        key: value(find(&e, NFTA_SET_ELEM_KEY))?.unwrap_or_default(),
        end: flags & ELEM_INTERVAL_END != 0,
        timeout_ms: u64_be(find(&e, NFTA_SET_ELEM_TIMEOUT)),
        expires_ms: u64_be(find(&e, NFTA_SET_ELEM_EXPIRATION)),
        packets,
        extra,
    })
}

fn rule(family: u8, a: &[(u16, &[u8])]) -> Result<RuleState, String> {
    let mut exprs = Vec::new();
    for (kind, elem) in attrs(find(a, NFTA_RULE_EXPRESSIONS).unwrap_or_default())? {
        if kind != NFTA_LIST_ELEM {
            return Err(format!("unexpected attribute {kind} in an expression list"));
        }
        exprs.push(expr::decode_listed(elem)?);
    }
    Ok(RuleState { family, table: text(find(a, NFTA_RULE_TABLE)), chain: text(find(a, NFTA_RULE_CHAIN)), exprs })
}

/// The value inside an `nft_data` attribute.
fn value(v: Option<&[u8]>) -> Result<Option<Vec<u8>>, String> {
    let Some(v) = v else { return Ok(None) };
    Ok(find(&attrs(v)?, NFTA_DATA_VALUE).map(<[u8]>::to_vec))
}

#[cfg(test)]
mod tests;
