//! nf_tables expressions on the wire: the encoder for the ones the jail
//! plans and the decoder for whatever the kernel reports (anything not
//! planned, or with an attribute the jail does not expect, is `Other`).
//! Attribute numbers from `linux/netfilter/nf_tables.h`; each expression
//! numbers its own from 1.

use super::{attr, attrs, be32, find, nested, strz, text, u32_be, value, NFTA_DATA_VALUE, NFTA_LIST_ELEM};
use crate::jail::plan::filter::Expr;

const NFTA_EXPR_NAME: u16 = 1;
const NFTA_EXPR_DATA: u16 = 2;
const NFTA_DATA_VERDICT: u16 = 2;
const NFTA_VERDICT_CODE: u16 = 1;
const NFTA_VERDICT_CHAIN: u16 = 2;
/// `NFT_GOTO`.
const NFT_GOTO: i32 = -4;
const NFTA_META_DREG: u16 = 1;
const NFTA_META_KEY: u16 = 2;
const NFTA_CT_DREG: u16 = 1;
const NFTA_CT_KEY: u16 = 2;
const NFTA_PAYLOAD_DREG: u16 = 1;
const NFTA_PAYLOAD_BASE: u16 = 2;
const NFTA_PAYLOAD_OFFSET: u16 = 3;
const NFTA_PAYLOAD_LEN: u16 = 4;
const NFTA_BITWISE_SREG: u16 = 1;
const NFTA_BITWISE_DREG: u16 = 2;
const NFTA_BITWISE_LEN: u16 = 3;
const NFTA_BITWISE_MASK: u16 = 4;
const NFTA_BITWISE_XOR: u16 = 5;
/// Kernels from 5.6 report the operation; 0 is the mask-and-xor one.
pub(super) const NFTA_BITWISE_OP: u16 = 6;
const NFTA_CMP_SREG: u16 = 1;
const NFTA_CMP_OP: u16 = 2;
const NFTA_CMP_DATA: u16 = 3;
const NFTA_IMMEDIATE_DREG: u16 = 1;
const NFTA_IMMEDIATE_DATA: u16 = 2;
const NFTA_LOOKUP_SET: u16 = 1;
const NFTA_LOOKUP_SREG: u16 = 2;
const NFTA_LOOKUP_SET_ID: u16 = 4;
const NFTA_LOOKUP_FLAGS: u16 = 5;
const NFTA_REJECT_TYPE: u16 = 1;
const NFTA_REJECT_ICMP_CODE: u16 = 2;
const NFTA_DYNSET_SET_NAME: u16 = 1;
const NFTA_DYNSET_SET_ID: u16 = 2;
const NFTA_DYNSET_OP: u16 = 3;
const NFTA_DYNSET_SREG_KEY: u16 = 4;
const NFTA_DYNSET_TIMEOUT: u16 = 6;
const NFTA_DYNSET_EXPR: u16 = 7;
const NFTA_DYNSET_PAD: u16 = 8;
const NFTA_DYNSET_FLAGS: u16 = 9;
const NFTA_DYNSET_EXPRESSIONS: u16 = 10;
/// A counter's values (only read: they are never planned).
const NFTA_COUNTER_PACKETS: u16 = 2;

/// The encoded expression list of one rule.
pub(super) fn expressions(exprs: &[Expr]) -> Vec<u8> {
    let mut list = Vec::new();
    for e in exprs {
        nested(&mut list, NFTA_LIST_ELEM, &one(e));
    }
    list
}

/// One expression: its name and data.
fn one(e: &Expr) -> Vec<u8> {
    let (name, data) = expression(e);
    let mut elem = Vec::new();
    attr(&mut elem, NFTA_EXPR_NAME, &strz(name));
    if !data.is_empty() {
        nested(&mut elem, NFTA_EXPR_DATA, &data);
    }
    elem
}

fn data_value(bytes: &[u8]) -> Vec<u8> {
    let mut d = Vec::new();
    attr(&mut d, NFTA_DATA_VALUE, bytes);
    d
}

fn immediate(verdict: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    nested(&mut data, NFTA_DATA_VERDICT, verdict);
    let mut d = Vec::new();
    attr(&mut d, NFTA_IMMEDIATE_DREG, &be32(0));
    nested(&mut d, NFTA_IMMEDIATE_DATA, &data);
    d
}

pub(super) fn expression(e: &Expr) -> (&str, Vec<u8>) {
    let mut d = Vec::new();
    match e {
        Expr::Meta { key, dreg } => {
            attr(&mut d, NFTA_META_DREG, &be32(*dreg));
            attr(&mut d, NFTA_META_KEY, &be32(*key));
            ("meta", d)
        }
        Expr::Ct { key, dreg } => {
            attr(&mut d, NFTA_CT_DREG, &be32(*dreg));
            attr(&mut d, NFTA_CT_KEY, &be32(*key));
            ("ct", d)
        }
        Expr::Payload { base, offset, len, dreg } => {
            attr(&mut d, NFTA_PAYLOAD_DREG, &be32(*dreg));
            attr(&mut d, NFTA_PAYLOAD_BASE, &be32(*base));
            attr(&mut d, NFTA_PAYLOAD_OFFSET, &be32(*offset));
            attr(&mut d, NFTA_PAYLOAD_LEN, &be32(*len));
            ("payload", d)
        }
        Expr::Bitwise { sreg, dreg, mask, xor } => {
            attr(&mut d, NFTA_BITWISE_SREG, &be32(*sreg));
            attr(&mut d, NFTA_BITWISE_DREG, &be32(*dreg));
            attr(&mut d, NFTA_BITWISE_LEN, &be32(mask.len() as u32));
            nested(&mut d, NFTA_BITWISE_MASK, &data_value(mask));
            nested(&mut d, NFTA_BITWISE_XOR, &data_value(xor));
            ("bitwise", d)
        }
        Expr::Cmp { sreg, op, data } => {
            attr(&mut d, NFTA_CMP_SREG, &be32(*sreg));
            attr(&mut d, NFTA_CMP_OP, &be32(*op));
            nested(&mut d, NFTA_CMP_DATA, &data_value(data));
            ("cmp", d)
        }
        Expr::Lookup { sreg, set, flags } => {
            attr(&mut d, NFTA_LOOKUP_SET, &strz(set));
            attr(&mut d, NFTA_LOOKUP_SREG, &be32(*sreg));
            // In the transaction that creates the set, its id names it.
            attr(&mut d, NFTA_LOOKUP_SET_ID, &be32(super::set_id(set)));
            attr(&mut d, NFTA_LOOKUP_FLAGS, &be32(*flags));
            ("lookup", d)
        }
        Expr::Dynset { set, op, sreg, timeout_ms, counter } => {
            attr(&mut d, NFTA_DYNSET_SET_NAME, &strz(set));
            attr(&mut d, NFTA_DYNSET_SET_ID, &be32(super::set_id(set)));
            attr(&mut d, NFTA_DYNSET_OP, &be32(*op));
            attr(&mut d, NFTA_DYNSET_SREG_KEY, &be32(*sreg));
            if *timeout_ms != 0 {
                attr(&mut d, NFTA_DYNSET_TIMEOUT, &timeout_ms.to_be_bytes());
            }
            if *counter {
                let mut c = Vec::new();
                attr(&mut c, NFTA_EXPR_NAME, &strz("counter"));
                nested(&mut d, NFTA_DYNSET_EXPR, &c);
            }
            ("dynset", d)
        }
        Expr::Verdict(code) => {
            let mut verdict = Vec::new();
            attr(&mut verdict, NFTA_VERDICT_CODE, &be32(*code as u32));
            ("immediate", immediate(&verdict))
        }
        Expr::Goto(chain) => {
            let mut verdict = Vec::new();
            attr(&mut verdict, NFTA_VERDICT_CODE, &be32(NFT_GOTO as u32));
            attr(&mut verdict, NFTA_VERDICT_CHAIN, &strz(chain));
            ("immediate", immediate(&verdict))
        }
        Expr::Reject { kind, code } => {
            attr(&mut d, NFTA_REJECT_TYPE, &be32(*kind));
            if let Some(code) = code {
                attr(&mut d, NFTA_REJECT_ICMP_CODE, &[*code]);
            }
            ("reject", d)
        }
        // Only read back, never planned: nothing to encode.
        Expr::Other { name, .. } => (name.as_str(), d),
    }
}

/// Decodes one element of an expression list.
pub(super) fn decode_listed(elem: &[u8]) -> Result<Expr, String> {
    let e = attrs(elem)?;
    decode_expr(&text(find(&e, NFTA_EXPR_NAME)), find(&e, NFTA_EXPR_DATA).unwrap_or_default())
}

/// The packets a counter counted, from an expression attribute (a set
/// element's, or a list of them holding one counter).
pub(super) fn counter_packets(expr: &[u8]) -> Result<Option<u64>, String> {
    let e = attrs(expr)?;
    if text(find(&e, NFTA_EXPR_NAME)) != "counter" {
        return Ok(None);
    }
    let data = attrs(find(&e, NFTA_EXPR_DATA).unwrap_or_default())?;
    Ok(find(&data, NFTA_COUNTER_PACKETS).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes))
}

/// Decodes the expressions the jail plans; anything else (another
/// expression, an attribute this code does not expect) becomes `Other`,
/// which never equals a planned expression.
pub(super) fn decode_expr(name: &str, data: &[u8]) -> Result<Expr, String> {
    let a = attrs(data)?;
    let known = |allowed: &[u16]| a.iter().all(|(k, _)| allowed.contains(k));
    let g = |k| u32_be(find(&a, k));
    let other = || Expr::Other { name: name.to_string(), attrs: data.to_vec() };
    let e = match name {
        "meta" if known(&[NFTA_META_DREG, NFTA_META_KEY]) => g(NFTA_META_KEY).zip(g(NFTA_META_DREG)).map(|(key, dreg)| Expr::Meta { key, dreg }),
        "ct" if known(&[NFTA_CT_DREG, NFTA_CT_KEY]) => g(NFTA_CT_KEY).zip(g(NFTA_CT_DREG)).map(|(key, dreg)| Expr::Ct { key, dreg }),
        "payload" if known(&[NFTA_PAYLOAD_DREG, NFTA_PAYLOAD_BASE, NFTA_PAYLOAD_OFFSET, NFTA_PAYLOAD_LEN]) => {
            match (g(NFTA_PAYLOAD_BASE), g(NFTA_PAYLOAD_OFFSET), g(NFTA_PAYLOAD_LEN), g(NFTA_PAYLOAD_DREG)) {
                (Some(base), Some(offset), Some(len), Some(dreg)) => Some(Expr::Payload { base, offset, len, dreg }),
                _ => None,
            }
        }
        "bitwise"
            if known(&[NFTA_BITWISE_SREG, NFTA_BITWISE_DREG, NFTA_BITWISE_LEN, NFTA_BITWISE_MASK, NFTA_BITWISE_XOR, NFTA_BITWISE_OP])
                && g(NFTA_BITWISE_OP).unwrap_or(0) == 0 =>
        {
            let (mask, xor) = (value(find(&a, NFTA_BITWISE_MASK))?, value(find(&a, NFTA_BITWISE_XOR))?);
            match (g(NFTA_BITWISE_SREG), g(NFTA_BITWISE_DREG), mask, xor) {
                (Some(sreg), Some(dreg), Some(mask), Some(xor)) if g(NFTA_BITWISE_LEN) == Some(mask.len() as u32) => {
                    Some(Expr::Bitwise { sreg, dreg, mask, xor })
                }
                _ => None,
            }
        }
        "cmp" if known(&[NFTA_CMP_SREG, NFTA_CMP_OP, NFTA_CMP_DATA]) => match (g(NFTA_CMP_SREG), g(NFTA_CMP_OP), value(find(&a, NFTA_CMP_DATA))?) {
            (Some(sreg), Some(op), Some(data)) => Some(Expr::Cmp { sreg, op, data }),
            _ => None,
        },
        // The set id only names a set within its own transaction.
        "lookup" if known(&[NFTA_LOOKUP_SET, NFTA_LOOKUP_SREG, NFTA_LOOKUP_SET_ID, NFTA_LOOKUP_FLAGS]) => {
            g(NFTA_LOOKUP_SREG).map(|sreg| Expr::Lookup { sreg, set: text(find(&a, NFTA_LOOKUP_SET)), flags: g(NFTA_LOOKUP_FLAGS).unwrap_or(0) })
        }
        "dynset" => dynset(&a)?,
        "immediate" if known(&[NFTA_IMMEDIATE_DREG, NFTA_IMMEDIATE_DATA]) && g(NFTA_IMMEDIATE_DREG) == Some(0) => verdict(find(&a, NFTA_IMMEDIATE_DATA))?,
        // The kernel reports the code only for the ICMP kinds.
        "reject" if known(&[NFTA_REJECT_TYPE, NFTA_REJECT_ICMP_CODE]) => {
            let code = match find(&a, NFTA_REJECT_ICMP_CODE) {
                Some([c]) => Some(*c),
                Some(_) => return Ok(other()),
                None => None,
            };
            g(NFTA_REJECT_TYPE).map(|kind| Expr::Reject { kind, code })
        }
        _ => None,
    };
    Ok(e.unwrap_or_else(other))
}

/// A dynset adding to a plain set (no map data, no flags), with no
/// expression or exactly one counter (whose template values are not
/// compared: they are the kernel's).
fn dynset(a: &[(u16, &[u8])]) -> Result<Option<Expr>, String> {
    let allowed = [
        NFTA_DYNSET_SET_NAME,
        NFTA_DYNSET_SET_ID,
        NFTA_DYNSET_OP,
        NFTA_DYNSET_SREG_KEY,
        NFTA_DYNSET_TIMEOUT,
        NFTA_DYNSET_EXPR,
        NFTA_DYNSET_PAD,
        NFTA_DYNSET_FLAGS,
        NFTA_DYNSET_EXPRESSIONS,
    ];
    let g = |k| u32_be(find(a, k));
    if !a.iter().all(|(k, _)| allowed.contains(k)) || g(NFTA_DYNSET_FLAGS).unwrap_or(0) != 0 {
        return Ok(None);
    }
    let timeout_ms = match find(a, NFTA_DYNSET_TIMEOUT) {
        Some(b) => u64::from_be_bytes(b.try_into().map_err(|_| "a dynset timeout of the wrong size")?),
        None => 0,
    };
    let mut exprs = Vec::new();
    if let Some(e) = find(a, NFTA_DYNSET_EXPR) {
        exprs.push(e);
    }
    for (kind, e) in attrs(find(a, NFTA_DYNSET_EXPRESSIONS).unwrap_or_default())? {
        if kind != NFTA_LIST_ELEM {
            return Ok(None);
        }
        exprs.push(e);
    }
    let counter = match exprs.as_slice() {
        [] => false,
        [e] if text(find(&attrs(e)?, NFTA_EXPR_NAME)) == "counter" => true,
        _ => return Ok(None),
    };
    let (Some(op), Some(sreg)) = (g(NFTA_DYNSET_OP), g(NFTA_DYNSET_SREG_KEY)) else { return Ok(None) };
    Ok(Some(Expr::Dynset { set: text(find(a, NFTA_DYNSET_SET_NAME)), op, sreg, timeout_ms, counter }))
}

/// A plain verdict, or a goto (a jump, or any other chained verdict, is
/// not planned).
fn verdict(data: Option<&[u8]>) -> Result<Option<Expr>, String> {
    let Some(data) = data else { return Ok(None) };
    let outer = attrs(data)?;
    let Some(v) = find(&outer, NFTA_DATA_VERDICT) else { return Ok(None) };
    let v = attrs(v)?;
    if v.iter().any(|(k, _)| *k != NFTA_VERDICT_CODE && *k != NFTA_VERDICT_CHAIN) || outer.len() != 1 {
        return Ok(None);
    }
    let Some(code) = u32_be(find(&v, NFTA_VERDICT_CODE)).map(|c| c as i32) else { return Ok(None) };
    Ok(match (code, find(&v, NFTA_VERDICT_CHAIN)) {
        (NFT_GOTO, Some(chain)) => Some(Expr::Goto(text(Some(chain)))),
        (_, Some(_)) => None,
        (code, None) => Some(Expr::Verdict(code)),
    })
}

#[cfg(test)]
mod tests;
