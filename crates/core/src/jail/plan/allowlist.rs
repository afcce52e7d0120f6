//! allowDomains as the jail applies it: which names the jail's DNS
//! forwarder answers (`allows`), from the configuration's entries with the
//! presets expanded. Pure.
//!
//! A name is allowed when it is one of the listed names, or lies below a
//! `*.` wildcard's domain (`*.github.com` allows `api.github.com` and
//! `a.b.github.com`, not `github.com`). Matching is by whole labels, in
//! lower case, without a trailing dot.

use super::dns::Resolved;
use crate::config::domains;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// The names a session may resolve, and so reach.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowlist {
    /// Names allowed as they are.
    pub names: BTreeSet<String>,
    /// Domains whose every subdomain is allowed (from `*.DOMAIN`).
    pub below: BTreeSet<String>,
}

impl Allowlist {
    /// From the configuration's (validated, normalised) entries; `None`
    /// when there are none: the allowlist is off.
    pub(crate) fn from_entries(entries: &[String]) -> Option<Allowlist> {
        if entries.is_empty() {
            return None;
        }
        let mut list = Allowlist::default();
        for e in entries {
            match domains::preset(e) {
                Some(names) => list.names.extend(names.iter().map(|n| n.to_string())),
                None => match e.strip_prefix("*.") {
                    Some(domain) => {
                        list.below.insert(domain.to_string());
                    }
                    None => {
                        list.names.insert(e.clone());
                    }
                },
            }
        }
        Some(list)
    }

    /// Whether `name` (as a DNS question names it, any case, maybe with a
    /// trailing dot) is allowed.
    pub fn allows(&self, name: &str) -> bool {
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        if self.names.contains(&name) {
            return true;
        }
        // Every proper suffix that starts after a dot.
        name.match_indices('.').any(|(i, _)| i > 0 && self.below.contains(&name[i + 1..]))
    }

    /// The entries as written in messages (`*.` for the wildcards).
    pub fn describe(&self) -> Vec<String> {
        self.names.iter().cloned().chain(self.below.iter().map(|d| format!("*.{d}"))).collect()
    }
}

/// A record's TTL is believed up to a day (a longer one would keep an
/// address reachable for longer than any cache holds it).
const MAX_TTL_S: u32 = 24 * 3600;

/// What the jail's forwarder has put in the allowed set: each address
/// until when (milliseconds on the forwarder's clock). It decides which
/// addresses an answer adds, and which it renews, so that an answer for
/// what the set already holds long enough costs no transaction.
#[derive(Clone, Debug, Default)]
pub struct Held {
    until: BTreeMap<Ipv4Addr, u64>,
}

/// One transaction on the allowed set: renewed elements are removed and
/// added again (with their new lifetime), new ones added.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Update {
    pub remove: Vec<Ipv4Addr>,
    /// (address, lifetime in ms)
    pub add: Vec<(Ipv4Addr, u64)>,
}

impl Update {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty()
    }
}

impl Held {
    /// The update that makes the set hold every address of `found` for
    /// its TTL plus `grace_ms` from `now_ms`; `None` when the set cannot
    /// hold them (`capacity` addresses live at once). A held address is
    /// renewed only when the answer extends it by more than half the
    /// grace.
    pub fn update(&mut self, now_ms: u64, found: &[Resolved], grace_ms: u64, capacity: usize) -> Option<Update> {
        let mut want: BTreeMap<Ipv4Addr, u64> = BTreeMap::new();
        for r in found {
            // RFC 2181: a TTL with the top bit set is zero.
            let ttl = if r.ttl > i32::MAX as u32 { 0 } else { r.ttl.min(MAX_TTL_S) };
            let life = u64::from(ttl) * 1000 + grace_ms;
            let e = want.entry(r.addr).or_insert(life);
            *e = (*e).max(life);
        }
        let mut up = Update::default();
        for (addr, life) in want {
            match self.until.get(&addr) {
                Some(&old) if old > now_ms && now_ms + life <= old + grace_ms / 2 => continue,
                Some(&old) if old > now_ms => up.remove.push(addr),
                _ => {}
            }
            up.add.push((addr, life));
        }
        if !up.add.is_empty() && self.until.len() + up.add.len() > capacity {
            self.until.retain(|_, until| *until > now_ms);
            let new = up.add.iter().filter(|(a, _)| !self.until.contains_key(a)).count();
            if self.until.len() + new > capacity {
                return None;
            }
        }
        Some(up)
    }

    /// `up` is in the kernel now.
    pub fn applied(&mut self, now_ms: u64, up: &Update) {
        for (addr, life) in &up.add {
            self.until.insert(*addr, now_ms + life);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(e: &[&str]) -> Allowlist {
        Allowlist::from_entries(&e.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn names_wildcards_and_presets() {
        let l = list(&["pypi.org", "*.github.com", "@agents"]);
        for yes in ["pypi.org", "PyPI.org.", "api.github.com", "a.b.github.com", "api.anthropic.com", "chatgpt.com"] {
            assert!(l.allows(yes), "{yes}");
        }
        for no in ["github.com", "evilgithub.com", "api.github.com.evil.net", "files.pythonhosted.org", "pypi.org.evil", "x.pypi.org", "", ".", ".github.com"] {
            assert!(!l.allows(no), "{no}");
        }
        assert_eq!(l.describe().last().map(String::as_str), Some("*.github.com"));
    }

    fn found(a: [u8; 4], ttl: u32) -> Resolved {
        Resolved { addr: Ipv4Addr::from(a), ttl }
    }

    #[test]
    fn an_answer_adds_renews_only_when_it_extends_and_keeps_the_bound() {
        let mut h = Held::default();
        let up = h.update(1000, &[found([1, 2, 3, 4], 60), found([1, 2, 3, 4], 90), found([5, 6, 7, 8], 0)], 10_000, 16).unwrap();
        assert_eq!(up, Update { remove: vec![], add: vec![(Ipv4Addr::new(1, 2, 3, 4), 100_000), (Ipv4Addr::new(5, 6, 7, 8), 10_000)] });
        h.applied(1000, &up);
        // Asked again a second later: nothing to do.
        assert!(h.update(2000, &[found([1, 2, 3, 4], 89)], 10_000, 16).unwrap().is_empty());
        // Much later, still held: renewed (removed and added in one go).
        let up = h.update(60_000, &[found([1, 2, 3, 4], 90)], 10_000, 16).unwrap();
        assert_eq!(up, Update { remove: vec![Ipv4Addr::new(1, 2, 3, 4)], add: vec![(Ipv4Addr::new(1, 2, 3, 4), 100_000)] });
        h.applied(60_000, &up);
        // Expired: added again, nothing removed.
        let up = h.update(20_000 + 1000, &[found([5, 6, 7, 8], 0)], 10_000, 16).unwrap();
        assert_eq!(up, Update { remove: vec![], add: vec![(Ipv4Addr::new(5, 6, 7, 8), 10_000)] });
        // A TTL of 2^31 or more is zero; over a day is a day.
        let up = h.update(0, &[found([9, 9, 9, 9], u32::MAX), found([8, 8, 8, 8], 10 * 24 * 3600)], 0, 16).unwrap();
        assert_eq!(up.add, [(Ipv4Addr::new(8, 8, 8, 8), u64::from(MAX_TTL_S) * 1000), (Ipv4Addr::new(9, 9, 9, 9), 0)]);
    }

    #[test]
    fn a_full_set_refuses_new_addresses_until_old_ones_expire() {
        let mut h = Held::default();
        let first: Vec<_> = (0..4u8).map(|i| found([10, 0, 0, i], 1)).collect();
        let up = h.update(0, &first, 0, 4).unwrap();
        h.applied(0, &up);
        assert_eq!(h.update(500, &[found([10, 0, 0, 9], 1)], 0, 4), None);
        assert!(h.update(1500, &[found([10, 0, 0, 9], 1)], 0, 4).is_some());
    }

    #[test]
    fn no_entries_is_off() {
        assert_eq!(Allowlist::from_entries(&[]), None);
    }
}
