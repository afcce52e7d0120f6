//! The report: the registry joined with the probe's results, rendered as
//! one line per check (`PASS`/`FAIL`/`SKIP`, or `BLOCKED`/`ESCAPED` for an
//! adversarial probe) or as JSON. The exit status is the number of failed
//! checks plus escaped probes; skips (the jail switched off) and degraded
//! results (what a masked /proc allows, docs/defences.md) do not count, but
//! are counted and named separately.

use super::registry::{Check, Kind, CHECKS};
use super::{Outcome, Status};
use serde_json::json;
use std::collections::BTreeMap;

pub struct Row {
    pub check: &'static Check,
    pub outcome: Outcome,
    /// The probe never reported this check (a failure, not an escape).
    pub missing: bool,
}

pub struct Report {
    pub agent: String,
    pub jail: bool,
    pub session: String,
    /// Defences removed for this run (tests only).
    pub weakened: Vec<String>,
    pub rows: Vec<Row>,
    /// Why the session could not run (then every check counts as failed).
    pub error: Option<String>,
    /// The caller said the jail is meant to be off (`--allow-jail-off`);
    /// otherwise a run with the jail off counts one failure: its checks
    /// were skipped, so the defence was not proven.
    pub jail_off_allowed: bool,
}

/// The word a row is reported with.
pub fn word(kind: Kind, status: Status) -> &'static str {
    match (kind, status) {
        (_, Status::Skip) => "SKIP",
        (_, Status::Degraded) => "DEGRADED",
        (Kind::Check, Status::Pass) => "PASS",
        (Kind::Check, Status::Fail) => "FAIL",
        (Kind::Probe, Status::Pass) => "BLOCKED",
        (Kind::Probe, Status::Fail) => "ESCAPED",
    }
}

impl Row {
    pub fn word(&self) -> &'static str {
        if self.missing {
            "FAIL"
        } else {
            word(self.check.kind, self.outcome.status)
        }
    }
}

impl Report {
    /// Joins `results` (by number) with the registry; a check without a
    /// result failed (the probe stopped before it).
    pub(crate) fn assemble(mut results: BTreeMap<u16, Outcome>, missing_why: &str) -> Vec<Row> {
        CHECKS
            .iter()
            .map(|c| match results.remove(&c.number) {
                Some(outcome) => Row { check: c, outcome, missing: false },
                None => Row { check: c, outcome: Outcome::fail(format!("no result: {missing_why}")), missing: true },
            })
            .collect()
    }

    fn count(&self, kind: Kind, status: Status) -> usize {
        self.rows.iter().filter(|r| r.check.kind == kind && r.outcome.status == status).count()
    }

    /// Failed checks plus escaped probes (every check when nothing ran),
    /// plus one for the jail switched off unless that was allowed.
    pub fn failures(&self) -> usize {
        if self.error.is_some() {
            return CHECKS.len();
        }
        self.rows.iter().filter(|r| r.outcome.status == Status::Fail).count() + usize::from(self.jail_off_failure())
    }

    /// The jail was off and the caller did not say that is intended.
    fn jail_off_failure(&self) -> bool {
        !self.jail && !self.jail_off_allowed
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "agent-sandbox verify: agent {}, egress jail {}, session {}\n",
            self.agent,
            if self.jail { "on" } else { "off" },
            if self.session.is_empty() { "-" } else { &self.session }
        );
        if !self.weakened.is_empty() {
            s.push_str(&format!("WEAKENED for testing, not a real session: {} removed\n", self.weakened.join(", ")));
        }
        if let Some(e) = &self.error {
            s.push_str(&format!("the session did not start: {e}\nall {} checks count as failed\n", CHECKS.len()));
            return s;
        }
        for r in &self.rows {
            let w = r.word();
            match &r.outcome.detail {
                Some(d) if r.outcome.status != Status::Pass => s.push_str(&format!("{w:<7} {:>2} {}: {d}\n", r.check.number, r.check.name)),
                _ => s.push_str(&format!("{w:<7} {:>2} {}\n", r.check.number, r.check.name)),
            }
        }
        let skipped = self.count(Kind::Check, Status::Skip) + self.count(Kind::Probe, Status::Skip);
        s.push_str(&format!(
            "checks: {} passed, {} failed; probes: {} blocked, {} escaped; {} skipped{}\n",
            self.count(Kind::Check, Status::Pass),
            self.count(Kind::Check, Status::Fail),
            self.count(Kind::Probe, Status::Pass),
            self.count(Kind::Probe, Status::Fail),
            skipped,
            self.skip_reasons(skipped),
        ));
        let degraded: Vec<String> = self.rows.iter().filter(|r| r.outcome.status == Status::Degraded).map(|r| r.check.number.to_string()).collect();
        if !degraded.is_empty() {
            s.push_str(&format!(
                "DEGRADED: {} held only as far as this container allows (its masked /proc: see \"Under a masked /proc\" in docs/defences.md); not counted as failures\n",
                degraded.join(", ")
            ));
        }
        if self.jail_off_failure() {
            s.push_str(&format!(
                "FAIL: the egress jail is off, so its {skipped} checks were skipped, not passed (this counts as a failure; `--allow-jail-off` says it is intended)\n"
            ));
        }
        s
    }

    /// Why checks were skipped, for the summary: the jail being off, or
    /// with it on, what each skip said (allowDomains not set).
    fn skip_reasons(&self, skipped: usize) -> String {
        if skipped == 0 {
            return String::new();
        }
        if !self.jail {
            return " (the egress jail is off)".into();
        }
        let mut why: Vec<&str> = self.rows.iter().filter(|r| r.outcome.status == Status::Skip).filter_map(|r| r.outcome.detail.as_deref()).collect();
        why.sort();
        why.dedup();
        format!(" ({})", why.join("; "))
    }

    pub fn json(&self) -> serde_json::Value {
        let checks: Vec<_> = self
            .rows
            .iter()
            .map(|r| {
                json!({
                    "number": r.check.number,
                    "name": r.check.name,
                    "kind": match r.check.kind { Kind::Check => "check", Kind::Probe => "probe" },
                    "defence": r.check.defence.label(),
                    "status": r.word().to_ascii_lowercase(),
                    "detail": r.outcome.detail,
                })
            })
            .collect();
        json!({
            "agent": self.agent,
            "egressJail": self.jail,
            "session": self.session,
            "weakened": self.weakened,
            "error": self.error,
            "jailOffAllowed": self.jail_off_allowed,
            "checks": checks,
            "summary": {
                "passed": self.count(Kind::Check, Status::Pass),
                "failed": self.count(Kind::Check, Status::Fail),
                "blocked": self.count(Kind::Probe, Status::Pass),
                "escaped": self.count(Kind::Probe, Status::Fail),
                "skipped": self.count(Kind::Check, Status::Skip) + self.count(Kind::Probe, Status::Skip),
                "degraded": self.count(Kind::Check, Status::Degraded) + self.count(Kind::Probe, Status::Degraded),
                "failures": self.failures(),
                "jailOffFailure": self.error.is_none() && self.jail_off_failure(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of claude's session "s", as verify assembles it.
    fn report(results: BTreeMap<u16, Outcome>, missing: &str, jail: bool, jail_off_allowed: bool) -> Report {
        Report { agent: "claude".into(), jail, session: "s".into(), weakened: vec![], rows: Report::assemble(results, missing), error: None, jail_off_allowed }
    }

    #[test]
    fn failures_count_fails_and_escapes_not_skips() {
        let mut results = BTreeMap::new();
        for c in CHECKS {
            results.insert(c.number, Outcome::pass());
        }
        results.insert(2, Outcome::fail("x"));
        results.insert(34, Outcome::skip("egress jail is off"));
        results.insert(52, Outcome::fail("attached"));
        results.remove(&3);
        let r = report(results, "probe died", false, true);
        assert_eq!(r.failures(), 3);
        let text = r.text();
        assert!(text.contains("FAIL     2 env-allow-list-only: x\n"), "{text}");
        assert!(text.contains("FAIL     3 env-planted-secrets-absent: no result: probe died\n"), "{text}");
        assert!(text.contains("SKIP    34 jail-blocks-10-8: egress jail is off\n"), "{text}");
        assert!(text.contains("ESCAPED 52 ptrace-outer-process: attached\n"), "{text}");
        assert!(text.contains("BLOCKED 53 proc-root-of-outer-process\n"), "{text}");
        assert!(text.contains("1 skipped (the egress jail is off)"), "{text}");
        assert!(!text.contains("FAIL: the egress jail is off"), "allowed: {text}");
        let j = r.json();
        assert_eq!(j["summary"]["failures"], 3);
        assert_eq!(j["checks"][51]["status"], "escaped");
    }

    /// A clean run with the jail off fails once, unless the caller allowed it.
    #[test]
    fn the_jail_off_is_a_failure_unless_allowed() {
        let mut results = BTreeMap::new();
        for c in CHECKS {
            results.insert(c.number, if c.defence == crate::Defence::EgressJail { Outcome::skip("egress jail is off") } else { Outcome::pass() });
        }
        let mut r = report(results, "x", false, false);
        assert_eq!(r.failures(), 1);
        assert!(r.text().contains("FAIL: the egress jail is off, so its "), "{}", r.text());
        assert_eq!((r.json()["summary"]["failures"].as_u64(), r.json()["summary"]["jailOffFailure"].as_bool()), (Some(1), Some(true)));
        r.jail_off_allowed = true;
        assert_eq!(r.failures(), 0);
        assert_eq!(r.json()["summary"]["jailOffFailure"], false);
        r.jail = true;
        r.jail_off_allowed = false;
        assert_eq!(r.failures(), 0, "the jail on: nothing to allow");
    }

    /// With the jail on, a skip is not blamed on the jail: the summary
    /// says what the skipped checks said.
    #[test]
    fn skips_with_the_jail_on_give_their_own_reason() {
        let mut results: BTreeMap<u16, Outcome> = CHECKS.iter().map(|c| (c.number, Outcome::pass())).collect();
        for n in [95, 96] {
            results.insert(n, Outcome::skip("allowDomains is not set"));
        }
        let r = report(results, "x", true, false);
        let text = r.text();
        assert!(text.contains("2 skipped (allowDomains is not set)\n"), "{text}");
        assert!(!text.contains("jail is off"), "{text}");
        assert_eq!(r.failures(), 0);
    }

    /// A degraded check (a masked /proc) is named, in the lines and the
    /// summary, and does not count as a failure.
    #[test]
    fn degraded_checks_are_named_not_counted() {
        let mut results: BTreeMap<u16, Outcome> = CHECKS.iter().map(|c| (c.number, Outcome::pass())).collect();
        results.insert(19, Outcome::degraded("3 outer processes are visible"));
        let r = report(results, "x", true, false);
        assert_eq!(r.failures(), 0);
        let text = r.text();
        assert!(text.contains("DEGRADED 19 outer-processes-invisible: 3 outer processes are visible\n"), "{text}");
        assert!(text.contains("DEGRADED: 19 held only as far as this container allows"), "{text}");
        let j = r.json();
        assert_eq!((j["summary"]["degraded"].as_u64(), j["summary"]["failures"].as_u64()), (Some(1), Some(0)));
        assert_eq!(j["checks"][18]["status"], "degraded");
    }

    #[test]
    fn a_probe_without_result_is_a_failure_not_an_escape() {
        let rows = Report::assemble(BTreeMap::new(), "gone");
        let r = Report { agent: "claude".into(), jail: true, session: "s".into(), weakened: vec![], rows, error: None, jail_off_allowed: false };
        assert!(r.text().contains("FAIL    52 ptrace-outer-process: no result: gone\n"));
        assert_eq!(r.failures(), CHECKS.len());
    }

    #[test]
    fn a_session_that_did_not_start_fails_everything() {
        let r = Report {
            agent: "pi".into(),
            jail: true,
            session: String::new(),
            weakened: vec![],
            rows: vec![],
            error: Some("no bwrap".into()),
            jail_off_allowed: false,
        };
        assert_eq!(r.failures(), CHECKS.len());
        assert!(r.text().contains("the session did not start: no bwrap"));
    }
}
