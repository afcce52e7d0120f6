//! What the jail refused during a session, as the launcher reports it
//! afterwards: the packet filter's `seen` set (destination, protocol,
//! port, how often, how long ago the first) and, with allowDomains, the
//! names the jail's DNS forwarder refused. A one-line summary each and a
//! JSON document (`agent-sandbox run --report FILE`). Pure: built from the
//! dumped elements and the forwarder's tally, given the time of the dump.
//! Allowed traffic never appears: only refused packets reach the set.

use super::filter::{ElementState, IPPROTO_TCP, IPPROTO_UDP, SEEN_SIZE, SEEN_TIMEOUT_MS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Refused destinations named in the summary line (the JSON has all).
const SHOWN: usize = 8;
/// Distinct refused names the forwarder counts (more are only counted).
const NAMES_KEPT: usize = 256;

/// One destination the filter refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    pub addr: Ipv4Addr,
    pub proto: u8,
    pub port: u16,
    /// Packets refused (a TCP connect is refused at its first SYN: one
    /// each; every datagram counts).
    pub count: u64,
    /// How long before the dump the first was refused.
    pub(crate) age_ms: u64,
}

/// One name the forwarder refused (not in allowDomains).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedName {
    pub name: String,
    pub count: u64,
    pub(crate) age_ms: u64,
}

/// The forwarder's side of the report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameTally {
    pub names: Vec<RefusedName>,
    /// Refusals of names beyond the first `NAMES_KEPT`.
    pub more: u64,
    /// Lookups of allowed names that failed because the allowed set was
    /// full (answered SERVFAIL).
    pub(crate) set_full: u64,
}

/// Everything refused in one session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JailReport {
    pub refused: Vec<Refused>,
    /// The set was full: more was refused than it lists.
    pub(crate) refused_full: bool,
    pub names: NameTally,
    /// The filter recorded nothing (no report set, or it could not be
    /// read): why.
    pub unavailable: Option<String>,
}

/// The refused destinations the `seen` set's elements hold, most often
/// refused first.
pub(crate) fn refused_from(elements: &[ElementState]) -> Vec<Refused> {
    let mut out: Vec<Refused> = elements
        .iter()
        .filter_map(|e| {
            let k: &[u8; 12] = e.key.as_slice().try_into().ok()?;
            Some(Refused {
                addr: Ipv4Addr::new(k[0], k[1], k[2], k[3]),
                proto: k[4],
                port: u16::from_be_bytes([k[8], k[9]]),
                count: e.packets.unwrap_or(1).max(1),
                age_ms: e.expires_ms.map_or(0, |left| SEEN_TIMEOUT_MS.saturating_sub(left)),
            })
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.addr.cmp(&b.addr)).then(a.port.cmp(&b.port)).then(a.proto.cmp(&b.proto)));
    out
}

impl JailReport {
    pub fn new(elements: &[ElementState], names: NameTally) -> JailReport {
        JailReport { refused: refused_from(elements), refused_full: elements.len() >= SEEN_SIZE as usize, names, unavailable: None }
    }

    /// The lines printed after the session (none when nothing was refused).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.refused.is_empty() {
            let total: u64 = self.refused.iter().map(|r| r.count).sum();
            let items: Vec<String> = self.refused.iter().take(SHOWN).map(describe).collect();
            let mut line = format!("egress jail: {} blocked: {}", plural(total, "connection was", "connections were"), items.join(", "));
            let more = self.refused.len().saturating_sub(SHOWN);
            if more > 0 {
                line += &format!(", and {more} more destination(s) (--report FILE lists them all)");
            }
            if self.refused_full {
                line += &format!("; the jail lists at most {SEEN_SIZE} destinations and more were blocked");
            }
            out.push(line);
        }
        let t = &self.names;
        if !t.names.is_empty() {
            let total: u64 = t.names.iter().map(|n| n.count).sum::<u64>() + t.more;
            let mut names = t.names.clone();
            names.sort_by(|a, b| b.count.cmp(&a.count).then(a.name.cmp(&b.name)));
            let items: Vec<String> = names.iter().take(SHOWN).map(|n| times(&n.name, n.count)).collect();
            let more = names.len().saturating_sub(SHOWN);
            let tail = if more > 0 { format!(", and {more} more name(s)") } else { String::new() };
            out.push(format!("egress jail: {} of names not in allowDomains refused: {}{tail}", plural(total, "lookup", "lookups"), items.join(", ")));
        }
        if t.set_full > 0 {
            out.push(format!(
                "egress jail: {} of allowed names failed: the jail's set of allowed addresses was full ({} addresses)",
                plural(t.set_full, "lookup", "lookups"),
                super::filter::ALLOWED_SIZE
            ));
        }
        if let Some(why) = &self.unavailable {
            out.push(format!("egress jail: what the jail blocked could not be read after the session ({why})"));
        }
        out
    }

    /// The JSON document of `--report FILE`; `now_ms` is the time of the
    /// dump (milliseconds since the epoch), which dates the first refusals.
    pub fn json(&self, now_ms: u64) -> serde_json::Value {
        let when = |age: u64| rfc3339(now_ms.saturating_sub(age));
        let refused: Vec<_> = self
            .refused
            .iter()
            .map(|r| serde_json::json!({"address": r.addr, "port": r.port, "protocol": proto_name(r.proto), "count": r.count, "first": when(r.age_ms)}))
            .collect();
        let names: Vec<_> = self.names.names.iter().map(|n| serde_json::json!({"name": n.name, "count": n.count, "first": when(n.age_ms)})).collect();
        serde_json::json!({
            "blocked": refused,
            "blockedListFull": self.refused_full,
            "refusedNames": names,
            "refusedNamesNotListed": self.names.more,
            "allowedSetFull": self.names.set_full,
            "unavailable": self.unavailable,
        })
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn times(what: &str, n: u64) -> String {
    if n > 1 {
        format!("{what} ×{n}")
    } else {
        what.to_string()
    }
}

fn proto_name(p: u8) -> String {
    match p {
        IPPROTO_TCP => "tcp".into(),
        IPPROTO_UDP => "udp".into(),
        p => p.to_string(),
    }
}

/// `10.0.0.5:5432` for TCP, `10.0.0.5:53/udp`, `10.0.0.5 (protocol 1)`.
fn describe(r: &Refused) -> String {
    let what = match r.proto {
        IPPROTO_TCP => format!("{}:{}", r.addr, r.port),
        IPPROTO_UDP => format!("{}:{}/udp", r.addr, r.port),
        p => format!("{} (protocol {p})", r.addr),
    };
    times(&what, r.count)
}

/// Milliseconds since the epoch as RFC 3339 UTC (`2026-03-01T12:00:00.250Z`),
/// by the proleptic Gregorian calendar's day arithmetic.
pub fn rfc3339(ms: u64) -> String {
    let days = (ms / 86_400_000) as i64;
    let rem = ms % 86_400_000;
    // Days since 0000-03-01 in 400-year eras of 146097 days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// The forwarder's count of refused names, bounded: the first
/// `NAMES_KEPT` distinct names are kept with their count and first time
/// (milliseconds on the forwarder's clock); later names only count.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    names: BTreeMap<String, (u64, u64)>,
    more: u64,
    set_full: u64,
}

impl Tally {
    pub(crate) fn refused(&mut self, name: &str, now_ms: u64) {
        if let Some((n, _)) = self.names.get_mut(name) {
            *n += 1;
        } else if self.names.len() < NAMES_KEPT {
            self.names.insert(name.chars().take(300).collect(), (1, now_ms));
        } else {
            self.more += 1;
        }
    }

    pub(crate) fn set_full(&mut self) {
        self.set_full += 1;
    }

    /// The tally as of `now_ms`.
    pub(crate) fn at(&self, now_ms: u64) -> NameTally {
        NameTally {
            names: self
                .names
                .iter()
                .map(|(name, (count, first))| RefusedName { name: name.clone(), count: *count, age_ms: now_ms.saturating_sub(*first) })
                .collect(),
            more: self.more,
            set_full: self.set_full,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::plan::filter::{seen_set, ElementState};

    fn seen(addr: [u8; 4], proto: u8, port: u16, packets: u64, expires_ms: u64) -> ElementState {
        let mut key = addr.to_vec();
        key.extend_from_slice(&[proto, 0, 0, 0]);
        key.extend_from_slice(&port.to_be_bytes());
        key.extend_from_slice(&[0, 0]);
        ElementState { packets: Some(packets), expires_ms: Some(expires_ms), ..ElementState::new(&seen_set(), key, false) }
    }

    #[test]
    fn the_summary_names_each_destination_and_how_often() {
        let els = [
            seen([169, 254, 169, 254], IPPROTO_TCP, 80, 1, SEEN_TIMEOUT_MS - 500),
            seen([10, 0, 0, 5], IPPROTO_TCP, 5432, 2, SEEN_TIMEOUT_MS - 2000),
            seen([10, 53, 0, 53], IPPROTO_UDP, 53, 1, SEEN_TIMEOUT_MS - 10),
        ];
        let r = JailReport::new(&els, NameTally::default());
        assert_eq!(r.lines(), ["egress jail: 4 connections were blocked: 10.0.0.5:5432 ×2, 10.53.0.53:53/udp, 169.254.169.254:80"]);
        let j = r.json(1_800_000_000_000);
        assert_eq!(
            j["blocked"][0],
            serde_json::json!({"address": "10.0.0.5", "port": 5432, "protocol": "tcp", "count": 2, "first": "2027-01-15T07:59:58.000Z"})
        );
        assert_eq!(j["blocked"][1]["protocol"], "udp");
        assert_eq!(j["blockedListFull"], false);
    }

    #[test]
    fn nothing_refused_says_nothing() {
        assert_eq!(JailReport::new(&[], NameTally::default()).lines(), Vec::<String>::new());
        let one = JailReport::new(&[seen([10, 1, 2, 3], IPPROTO_TCP, 443, 1, SEEN_TIMEOUT_MS)], NameTally::default());
        assert_eq!(one.lines(), ["egress jail: 1 connection was blocked: 10.1.2.3:443"]);
    }

    #[test]
    fn a_full_set_and_many_destinations_say_so() {
        let els: Vec<_> = (0..SEEN_SIZE).map(|i| seen([10, 0, (i >> 8) as u8, i as u8], IPPROTO_TCP, 22, 1, SEEN_TIMEOUT_MS)).collect();
        let line = &JailReport::new(&els, NameTally::default()).lines()[0];
        assert!(line.starts_with("egress jail: 512 connections were blocked: 10.0.0.0:22, "), "{line}");
        assert!(line.contains("and 504 more destination(s)") && line.contains("at most 512"), "{line}");
    }

    #[test]
    fn refused_names_are_counted_and_bounded() {
        let mut t = Tally::default();
        t.refused("evil.example", 100);
        t.refused("evil.example", 200);
        t.refused("doh.example", 300);
        for i in 0..NAMES_KEPT + 10 {
            t.refused(&format!("n{i}.flood"), 400);
        }
        let tally = t.at(1000);
        assert_eq!(tally.names.len(), NAMES_KEPT);
        assert_eq!(tally.more, 12);
        assert!(tally.names.contains(&RefusedName { name: "evil.example".into(), count: 2, age_ms: 900 }));
        let lines = JailReport::new(&[], tally).lines();
        assert!(
            lines[0].starts_with(&format!("egress jail: {} lookups of names not in allowDomains refused: evil.example ×2, ", NAMES_KEPT + 13)),
            "{lines:?}"
        );
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_709_210_096_789), "2024-02-29T12:34:56.789Z");
        assert_eq!(rfc3339(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    }
}
