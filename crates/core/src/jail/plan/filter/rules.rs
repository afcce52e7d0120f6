//! The filter's rules as values: what a rule matches, what it does, the
//! nf_tables expressions that say so, and back (for read-back messages).
//! Pure.

use super::state::{family_name, RuleState};
use super::{Expr, NF_ACCEPT, SEEN_SET};
use crate::jail::net::Ipv4Net;
use std::fmt;
use std::net::Ipv4Addr;

const NF_DROP: i32 = 0;
/// `NFT_REJECT_ICMP_UNREACH`: an ICMP destination-unreachable of a code.
pub const NFT_REJECT_ICMP_UNREACH: u32 = 0;
/// `ICMP_PKT_FILTERED`: communication administratively prohibited.
pub const ICMP_ADMIN_PROHIBITED: u8 = 13;
const NFT_META_OIFNAME: u32 = 7;
const NFT_META_L4PROTO: u32 = 16;
/// `NFT_CT_STATE` and the bit of `IP_CT_ESTABLISHED` in it.
const NFT_CT_STATE: u32 = 0;
const CT_STATE_ESTABLISHED: u32 = 1 << 1;
const NFT_PAYLOAD_NETWORK_HEADER: u32 = 1;
const NFT_PAYLOAD_TRANSPORT_HEADER: u32 = 2;
/// The destination address in an IPv4 header.
const IPV4_DADDR: (u32, u32) = (16, 4);
/// The destination port in a UDP or TCP header.
const L4_DPORT: (u32, u32) = (2, 2);
/// `NFT_REG_1`: the first 128-bit data register (also the first 32-bit
/// one, `NFT_REG32_00`, which the kernel reports as `NFT_REG_1`).
const REG_1: u32 = 1;
/// `NFT_REG32_01`, `NFT_REG32_02`: the 32-bit registers after it, where a
/// concatenated key's later fields go.
const REG32_01: u32 = 9;
const REG32_02: u32 = 10;
const NFT_CMP_EQ: u32 = 0;
const NFT_CMP_NEQ: u32 = 1;
/// `NFT_DYNSET_OP_ADD`: add the key unless it is there (its lifetime is
/// not renewed, so what is left of it dates the first packet).
const NFT_DYNSET_OP_ADD: u32 = 0;
const IFNAMSIZ: usize = 16;
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;
/// The regular chain every refused packet goes to.
pub const REFUSED_CHAIN: &str = "refused";

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Accept,
    /// Only read back (another table's rule): the jail rejects.
    Drop,
    /// ICMP administratively prohibited.
    Reject,
    /// `goto refused`: recorded (when the report is on), then rejected.
    Refuse,
    /// Not a verdict: add the packet's destination, protocol and port to
    /// the `seen` set with a counter, and go on to the next rule (also
    /// when the set is full: the next rule rejects all the same).
    Record,
}

impl Verdict {
    /// The rule's last expression(s).
    fn exprs(&self) -> Vec<Expr> {
        match self {
            Verdict::Accept => vec![Expr::Verdict(NF_ACCEPT)],
            Verdict::Drop => vec![Expr::Verdict(NF_DROP)],
            Verdict::Reject => vec![Expr::Reject { kind: NFT_REJECT_ICMP_UNREACH, code: Some(ICMP_ADMIN_PROHIBITED) }],
            Verdict::Refuse => vec![Expr::Goto(REFUSED_CHAIN.into())],
            Verdict::Record => {
                let (offset, len) = L4_DPORT;
                vec![
                    load_daddr(),
                    Expr::Meta { key: NFT_META_L4PROTO, dreg: REG32_01 },
                    Expr::Payload { base: NFT_PAYLOAD_TRANSPORT_HEADER, offset, len, dreg: REG32_02 },
                    Expr::Dynset { set: SEEN_SET.into(), op: NFT_DYNSET_OP_ADD, sreg: REG_1, timeout_ms: 0, counter: true },
                ]
            }
        }
    }

    const ALL: [Verdict; 5] = [Verdict::Accept, Verdict::Drop, Verdict::Reject, Verdict::Refuse, Verdict::Record];
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    OutputInterface(String),
    Destination(Ipv4Net),
    /// One address, protocol (TCP or UDP) and destination port.
    Service {
        addr: Ipv4Addr,
        proto: u8,
        port: u16,
    },
    /// The destination is in the named set.
    DestinationIn(String),
    /// A packet of a connection whose first packet the filter let out
    /// (conntrack's "established").
    Established,
    /// Every packet.
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterRule {
    pub what: Match,
    pub verdict: Verdict,
}

pub(super) fn load_daddr() -> Expr {
    let (offset, len) = IPV4_DADDR;
    Expr::Payload { base: NFT_PAYLOAD_NETWORK_HEADER, offset, len, dreg: REG_1 }
}

fn cmp(data: Vec<u8>) -> Expr {
    Expr::Cmp { sreg: REG_1, op: NFT_CMP_EQ, data }
}

/// `ip daddr ADDR PROTO dport PORT`.
fn service(addr: Ipv4Addr, proto: u8, port: u16) -> Vec<Expr> {
    let (offset, len) = L4_DPORT;
    vec![
        load_daddr(),
        cmp(addr.octets().to_vec()),
        Expr::Meta { key: NFT_META_L4PROTO, dreg: REG_1 },
        cmp(vec![proto]),
        Expr::Payload { base: NFT_PAYLOAD_TRANSPORT_HEADER, offset, len, dreg: REG_1 },
        cmp(port.to_be_bytes().to_vec()),
    ]
}

impl Match {
    fn exprs(&self) -> Vec<Expr> {
        match self {
            Match::OutputInterface(name) => {
                let mut data = name.as_bytes().to_vec();
                data.resize(IFNAMSIZ, 0);
                vec![Expr::Meta { key: NFT_META_OIFNAME, dreg: REG_1 }, cmp(data)]
            }
            Match::Destination(net) => {
                let mut v = vec![load_daddr()];
                if net.prefix() < 32 {
                    v.push(Expr::Bitwise { sreg: REG_1, dreg: REG_1, mask: prefix_mask(net.prefix()).to_vec(), xor: vec![0; 4] });
                }
                v.push(cmp(net.network().octets().to_vec()));
                v
            }
            Match::Service { addr, proto, port } => service(*addr, *proto, *port),
            Match::DestinationIn(set) => vec![load_daddr(), Expr::Lookup { sreg: REG_1, set: set.clone(), flags: 0 }],
            Match::Established => vec![
                Expr::Ct { key: NFT_CT_STATE, dreg: REG_1 },
                Expr::Bitwise { sreg: REG_1, dreg: REG_1, mask: CT_STATE_ESTABLISHED.to_ne_bytes().to_vec(), xor: vec![0; 4] },
                Expr::Cmp { sreg: REG_1, op: NFT_CMP_NEQ, data: vec![0; 4] },
            ],
            Match::Any => vec![],
        }
    }

    /// The match a read-back expression list (without its verdict)
    /// encodes, if it has one of the shapes the jail plans; the caller
    /// checks it re-encodes to the same list.
    fn from_exprs(body: &[Expr]) -> Option<Match> {
        let what = match body {
            [] => Match::Any,
            [Expr::Ct { .. }, Expr::Bitwise { .. }, Expr::Cmp { .. }] => Match::Established,
            [Expr::Meta { .. }, Expr::Cmp { data, .. }] => Match::OutputInterface(String::from_utf8_lossy(data).trim_end_matches('\0').to_string()),
            [Expr::Payload { .. }, Expr::Lookup { set, .. }] => Match::DestinationIn(set.clone()),
            rest if rest.len() == 6 => service_of(rest)?,
            [Expr::Payload { .. }, rest @ ..] => {
                let (mask, cmp) = match rest {
                    [Expr::Bitwise { mask, .. }, Expr::Cmp { data, .. }] => (mask.clone(), data),
                    [Expr::Cmp { data, .. }] => (vec![0xff; 4], data),
                    _ => return None,
                };
                let prefix = mask.iter().map(|b| b.count_ones()).sum::<u32>() as u8;
                let addr: [u8; 4] = cmp.as_slice().try_into().ok()?;
                Match::Destination(Ipv4Net::new(addr.into(), prefix)?)
            }
            _ => return None,
        };
        Some(what)
    }
}

fn service_of(exprs: &[Expr]) -> Option<Match> {
    match exprs {
        [Expr::Payload { .. }, Expr::Cmp { data: a, .. }, Expr::Meta { .. }, Expr::Cmp { data: p, .. }, Expr::Payload { .. }, Expr::Cmp { data: port, .. }] => {
            let addr: [u8; 4] = a.as_slice().try_into().ok()?;
            let port: [u8; 2] = port.as_slice().try_into().ok()?;
            Some(Match::Service { addr: addr.into(), proto: *p.first()?, port: u16::from_be_bytes(port) })
        }
        _ => None,
    }
}

impl FilterRule {
    /// The rule's expressions: load a field into register 1, compare (or
    /// look it up in a set), and so on; the verdict last.
    pub(crate) fn exprs(&self) -> Vec<Expr> {
        let mut v = self.what.exprs();
        v.extend(self.verdict.exprs());
        v
    }

    /// The rule a read-back expression list encodes, if it is one the jail
    /// plans (for messages).
    pub(super) fn from_exprs(exprs: &[Expr]) -> Option<FilterRule> {
        Verdict::ALL.into_iter().find_map(|verdict| {
            let tail = verdict.exprs();
            let body = exprs.strip_suffix(tail.as_slice())?;
            let rule = FilterRule { what: Match::from_exprs(body)?, verdict };
            (rule.exprs() == exprs).then_some(rule)
        })
    }
}

fn prefix_mask(prefix: u8) -> [u8; 4] {
    let m = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix.min(32))) };
    m.to_be_bytes()
}

fn proto_name(p: u8) -> String {
    match p {
        IPPROTO_TCP => "tcp".into(),
        IPPROTO_UDP => "udp".into(),
        p => format!("l4proto {p}"),
    }
}

impl fmt::Display for Match {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Match::OutputInterface(n) => write!(f, "meta oifname \"{n}\""),
            Match::Destination(net) if net.prefix() == 32 => write!(f, "ip daddr {}", net.network()),
            Match::Destination(net) => write!(f, "ip daddr {net}"),
            Match::Service { addr, proto, port } => write!(f, "ip daddr {addr} {} dport {port}", proto_name(*proto)),
            Match::DestinationIn(set) => write!(f, "ip daddr @{set}"),
            Match::Established => write!(f, "ct state established"),
            Match::Any => Ok(()),
        }
    }
}

impl fmt::Display for FilterRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.what.to_string();
        let sep = if what.is_empty() { "" } else { " " };
        let verdict = match self.verdict {
            Verdict::Accept => "accept".to_string(),
            Verdict::Drop => "drop".into(),
            Verdict::Reject => "reject with icmp type admin-prohibited".into(),
            Verdict::Refuse => format!("goto {REFUSED_CHAIN}"),
            Verdict::Record => format!("add @{SEEN_SET} {{ ip daddr . meta l4proto . th dport counter }}"),
        };
        write!(f, "{what}{sep}{verdict}")
    }
}

impl fmt::Display for RuleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule in {} {}/{}: ", family_name(self.family), self.table, self.chain)?;
        match FilterRule::from_exprs(&self.exprs) {
            Some(r) => write!(f, "{r}"),
            None => write!(f, "{:?}", self.exprs),
        }
    }
}
