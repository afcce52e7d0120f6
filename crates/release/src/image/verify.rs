//! `agent-sandbox verify` inside the built image: the command each verify
//! container runs, and reading its `--json` report into an outcome. A run
//! passes only with no failed check, no escaped probe, a session that
//! started, and the egress jail in the state that was asked for (a jail
//! that silently stayed off would skip its checks, not fail them).

use serde::Serialize;
use serde_json::Value;

/// The script a verify container runs as its user: a fresh workspace in
/// the user's home, then the battery (`$1` is the agent profile, the rest
/// are verify's flags).
pub(super) const SCRIPT: &str =
    r#"mkdir -p "$HOME/verify-workspace" && cd "$HOME/verify-workspace" && agent=$1 && shift && exec agent-sandbox verify --agent "$agent" --json "$@""#;

/// The container command for `agent`; `egress_jail` false: the jail is
/// meant to be off (`--allow-jail-off`, else verify counts it a failure).
pub(super) fn command(agent: &str, egress_jail: bool) -> Vec<String> {
    let mut v: Vec<String> = ["sh", "-c", SCRIPT, "sh", agent].iter().map(|s| s.to_string()).collect();
    if !egress_jail {
        v.push("--allow-jail-off".into());
    }
    v
}

/// One verify run, planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyRun {
    pub user: String,
    pub agent: String,
    pub egress_jail: bool,
    pub argv: Vec<String>,
}

/// What one verify run found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyOutcome {
    pub user: String,
    pub agent: String,
    /// Whether the session ran with the egress jail (from the report).
    pub egress_jail: bool,
    pub passed: u64,
    pub failed: u64,
    pub blocked: u64,
    pub escaped: u64,
    pub skipped: u64,
    /// `N name: detail` for each failed check and escaped probe.
    pub failures: Vec<String>,
    /// Why no session could start, or why the report is unusable.
    pub error: Option<String>,
    /// Seconds the container ran.
    pub seconds: f64,
}

impl VerifyOutcome {
    /// Whether the run proves the image: see the module comment.
    pub fn ok(&self, want_jail: bool) -> bool {
        self.failed == 0 && self.escaped == 0 && self.error.is_none() && self.egress_jail == want_jail && self.passed > 0
    }

    /// One line: `root/claude: 51 passed, 0 failed, 16 blocked, 0 escaped, 0 skipped (jail on)`.
    pub fn summary(&self) -> String {
        format!(
            "{}/{}: {} passed, {} failed, {} blocked, {} escaped, {} skipped (jail {})",
            self.user,
            self.agent,
            self.passed,
            self.failed,
            self.blocked,
            self.escaped,
            self.skipped,
            if self.egress_jail { "on" } else { "off" }
        )
    }

    /// The lines explaining a failed run.
    pub fn problems(&self, want_jail: bool) -> Vec<String> {
        let mut out: Vec<String> = self.failures.iter().map(|f| format!("{}: {f}", self.user)).collect();
        if let Some(e) = &self.error {
            out.push(format!("{}: {e}", self.user));
        }
        if self.egress_jail != want_jail {
            let (want, got) = if want_jail { ("on", "off") } else { ("off", "on") };
            out.push(format!("{}: the egress jail was {got}, verify asked for it {want} (check /etc/agent-sandbox/config.json5 in the image)", self.user));
        }
        if self.passed == 0 && self.error.is_none() {
            out.push(format!("{}: no check passed", self.user));
        }
        out
    }
}

/// Reads the report `agent-sandbox verify --json` printed (`stdout`).
/// Unusable output becomes an outcome with `error` set (`stderr` explains).
pub(super) fn parse(run: &VerifyRun, stdout: &str, stderr: &str, seconds: f64) -> VerifyOutcome {
    let mut o = VerifyOutcome {
        user: run.user.clone(),
        agent: run.agent.clone(),
        egress_jail: false,
        passed: 0,
        failed: 0,
        blocked: 0,
        escaped: 0,
        skipped: 0,
        failures: Vec::new(),
        error: None,
        seconds,
    };
    let v: Value = match serde_json::from_str(stdout.trim()) {
        Ok(v) => v,
        Err(_) => {
            let tail: Vec<&str> = stderr.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev().collect();
            o.error = Some(format!("verify printed no report; its last words: {}", tail.join(" | ")));
            o.egress_jail = run.egress_jail;
            return o;
        }
    };
    let n = |k: &str| v["summary"][k].as_u64().unwrap_or(0);
    (o.passed, o.failed, o.blocked, o.escaped, o.skipped) = (n("passed"), n("failed"), n("blocked"), n("escaped"), n("skipped"));
    o.egress_jail = v["egressJail"].as_bool().unwrap_or(false);
    o.error = v["error"].as_str().map(str::to_owned);
    for c in v["checks"].as_array().into_iter().flatten() {
        if matches!(c["status"].as_str(), Some("fail" | "escaped")) {
            o.failures.push(format!(
                "{} {} {}: {}",
                c["status"].as_str().unwrap_or_default().to_uppercase(),
                c["number"],
                c["name"].as_str().unwrap_or_default(),
                c["detail"].as_str().unwrap_or_default()
            ));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(jail: bool) -> VerifyRun {
        VerifyRun { user: "vscode".into(), agent: "pi".into(), egress_jail: jail, argv: vec![] }
    }

    const REPORT: &str = r#"{"agent":"pi","egressJail":true,"session":"s","weakened":[],"error":null,
        "checks":[{"number":1,"name":"sentinel-set","kind":"check","status":"pass","detail":""},
                  {"number":25,"name":"workspace-writable","kind":"check","status":"fail","detail":"EACCES"},
                  {"number":61,"name":"read-launcher-keyring","kind":"probe","status":"escaped","detail":"read a key"}],
        "summary":{"passed":49,"failed":1,"blocked":15,"escaped":1,"skipped":0,"failures":2}}"#;

    #[test]
    fn failures_are_listed_and_fail_the_run() {
        let o = parse(&run(true), REPORT, "", 1.5);
        assert_eq!((o.passed, o.failed, o.blocked, o.escaped, o.skipped), (49, 1, 15, 1, 0));
        assert_eq!(o.failures, ["FAIL 25 workspace-writable: EACCES", "ESCAPED 61 read-launcher-keyring: read a key"]);
        assert!(!o.ok(true));
        assert_eq!(o.summary(), "vscode/pi: 49 passed, 1 failed, 15 blocked, 1 escaped, 0 skipped (jail on)");
    }

    #[test]
    fn a_clean_report_passes_only_with_the_jail_asked_for() {
        let clean = r#"{"egressJail":true,"error":null,"checks":[],"summary":{"passed":50,"failed":0,"blocked":16,"escaped":0,"skipped":0}}"#;
        assert!(parse(&run(true), clean, "", 0.0).ok(true));
        let off = clean.replace(r#""egressJail":true"#, r#""egressJail":false"#);
        let o = parse(&run(true), &off, "", 0.0);
        assert!(!o.ok(true));
        assert!(o.problems(true).iter().any(|p| p.contains("the egress jail was off")), "{:?}", o.problems(true));
        assert!(parse(&run(false), &off, "", 0.0).ok(false));
    }

    #[test]
    fn no_report_is_a_failure_with_the_reason() {
        let o = parse(&run(true), "", "line1\nagent-sandbox: bwrap missing\n", 0.0);
        assert!(!o.ok(true));
        assert_eq!(o.error.as_deref(), Some("verify printed no report; its last words: line1 | agent-sandbox: bwrap missing"));
    }

    #[test]
    fn the_container_command_passes_the_agent_as_an_argument() {
        assert_eq!(command("codex", true), ["sh", "-c", SCRIPT, "sh", "codex"]);
        assert_eq!(command("codex", false), ["sh", "-c", SCRIPT, "sh", "codex", "--allow-jail-off"]);
    }
}
