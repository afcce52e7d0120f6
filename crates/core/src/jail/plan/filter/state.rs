//! nf_tables objects as values, as the jail plans them and as the kernel's
//! dumps report them (`nftwire` decodes into these): tables, chains, sets,
//! set elements, rules. Pure; the comparison of a plan with a read-back
//! lives in `filter.rs`.

use super::Expr;
use std::collections::BTreeSet;
use std::fmt;
use std::net::Ipv4Addr;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TableState {
    pub family: u8,
    pub name: String,
    /// 0 = active (`NFT_TABLE_F_DORMANT` would switch every rule off).
    pub flags: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChainState {
    pub family: u8,
    pub table: String,
    pub name: String,
    /// (hook number, priority) of a base chain.
    pub hook: Option<(u32, i32)>,
    pub policy: Option<i32>,
    pub kind: Option<String>,
}

impl ChainState {
    /// A regular chain (no hook): reached only by a jump or goto.
    pub fn regular(family: u8, table: &str, name: &str) -> ChainState {
        ChainState { family, table: table.into(), name: name.into(), hook: None, policy: None, kind: None }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SetState {
    pub family: u8,
    pub table: String,
    pub name: String,
    pub flags: u32,
    pub(crate) key_type: u32,
    pub(crate) key_len: u32,
    /// The elements' default lifetime (a set with the timeout flag).
    pub(crate) timeout_ms: Option<u64>,
    /// The most elements the set holds (a dynamic set's bound).
    pub size: Option<u32>,
    /// What the jail does not plan (a map's data, expressions).
    pub extra: Vec<String>,
}

/// One element of a set as nf_tables holds it: an interval set keeps a
/// start element for each range and an end element (the address after
/// its last) unless the range runs to the end of the address space.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ElementState {
    pub family: u8,
    pub table: String,
    pub set: String,
    pub key: Vec<u8>,
    pub end: bool,
    /// The element's own lifetime (sent when adding; reported back).
    pub(crate) timeout_ms: Option<u64>,
    /// Reported only: what is left of its lifetime.
    pub(crate) expires_ms: Option<u64>,
    /// Reported only: the packets its counter counted.
    pub packets: Option<u64>,
    /// Anything else the kernel reported about the element.
    pub extra: Vec<String>,
}

impl ElementState {
    /// A plain element (no lifetime, no counter) of `set`.
    pub fn new(set: &SetState, key: Vec<u8>, end: bool) -> ElementState {
        ElementState {
            family: set.family,
            table: set.table.clone(),
            set: set.name.clone(),
            key,
            end,
            timeout_ms: None,
            expires_ms: None,
            packets: None,
            extra: vec![],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleState {
    pub family: u8,
    pub table: String,
    pub chain: String,
    pub(crate) exprs: Vec<Expr>,
}

/// Every nf_tables object of the namespace (rules in evaluation order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ruleset {
    pub tables: Vec<TableState>,
    pub(crate) chains: Vec<ChainState>,
    pub sets: Vec<SetState>,
    pub elements: Vec<ElementState>,
    pub rules: Vec<RuleState>,
}

impl fmt::Display for ChainState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chain {} {}/{}", family_name(self.family), self.table, self.name)?;
        if let Some((hook, prio)) = self.hook {
            write!(f, " hook {hook} priority {prio}")?;
        }
        if let Some(p) = self.policy {
            write!(f, " policy {}", if p == super::NF_ACCEPT { "accept".into() } else { p.to_string() })?;
        }
        if let Some(k) = &self.kind {
            write!(f, " type {k}")?;
        }
        Ok(())
    }
}

impl fmt::Display for TableState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "table {} {} flags {}", family_name(self.family), self.name, self.flags)
    }
}

impl fmt::Display for SetState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "set {} {}/{} flags {:#x} key type {} len {}", family_name(self.family), self.table, self.name, self.flags, self.key_type, self.key_len)?;
        if let Some(t) = self.timeout_ms {
            write!(f, " timeout {t} ms")?;
        }
        if let Some(s) = self.size {
            write!(f, " size {s}")?;
        }
        for e in &self.extra {
            write!(f, " {e}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ElementState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = match <[u8; 4]>::try_from(self.key.as_slice()) {
            Ok(k) => Ipv4Addr::from(k).to_string(),
            Err(_) => format!("{:?}", self.key),
        };
        write!(f, "element of {} {}/{}: {key}{}", family_name(self.family), self.table, self.set, if self.end { " (end of a range)" } else { "" })?;
        if let Some(t) = self.timeout_ms {
            write!(f, " timeout {t} ms")?;
        }
        for e in &self.extra {
            write!(f, " {e}")?;
        }
        Ok(())
    }
}

pub(super) fn family_name(family: u8) -> String {
    match family {
        1 => "inet".into(),
        2 => "ip".into(),
        3 => "arp".into(),
        5 => "netdev".into(),
        7 => "bridge".into(),
        10 => "ip6".into(),
        f => format!("family-{f}"),
    }
}

/// The objects of `want` missing from `have` and those of `have` not
/// wanted, compared as values (a large set's thousands of elements are
/// formatted only when they differ).
pub(super) fn differ<T: Ord + fmt::Display>(want: &[T], have: &[T], diffs: &mut Vec<String>) {
    let (w, h): (BTreeSet<&T>, BTreeSet<&T>) = (want.iter().collect(), have.iter().collect());
    diffs.extend(w.difference(&h).map(|x| format!("missing {x}")));
    diffs.extend(h.difference(&w).map(|x| format!("unexpected {x}")));
}
