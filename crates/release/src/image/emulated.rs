//! The check of a variant this machine runs only under emulation (e.g.
//! linux/arm64 on x86_64 through qemu-user). Sessions cannot start there
//! (`crate::arch::emulation`), so the verify battery cannot run; what can
//! be proven is that the image's binaries are that architecture's, run,
//! and were installed as on the machine's own platform:
//! the container runs `uname -m` and `agent-sandbox doctor --json` as root
//! (started like the verify containers: the entrypoint ran, /dev/net/tun
//! and an unmasked /proc given). The outcome passes only when
//! - `uname -m` names the variant's architecture,
//! - every finding in [`MUST_PASS`] is ok (the installation, PATH, config,
//!   bubblewrap, the run options), and
//! - every warning or error is one emulation explains ([`EXPLAINED`]), and
//!   doctor saw the emulator (so the variant really ran emulated).

use crate::arch::Arch;
use serde::Serialize;
use serde_json::Value;

/// The container command (as root, in the image's working directory).
pub(super) const SCRIPT: &str = "uname -m; exec agent-sandbox doctor --json";
/// Doctor findings that must be ok in an emulated variant.
const MUST_PASS: &[&str] = &["bwrap-ok", "tun-ok", "proc-ok", "install-ok", "path-ok", "config-ok"];
/// Warnings and errors that emulation itself causes (docs/doctor.md): no
/// user namespaces (so pasta, the packet filter and mounts are not tried),
/// routing rules the emulator does not read, or the emulator named; and
/// the one that how the check starts its container causes (rootful,
/// without a user namespace, /proc unmasked: the container boundary's
/// warning).
const EXPLAINED: &[&str] =
    &["userns-emulated", "emulated", "pasta-not-checked", "filter-not-checked", "mounts-not-checked", "jail-network-not-checked", "container-host-root"];

pub(super) fn command() -> Vec<String> {
    ["sh", "-c", SCRIPT].iter().map(|s| s.to_string()).collect()
}

/// What the emulated check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmulatedOutcome {
    pub arch: Arch,
    /// What `uname -m` said in the container.
    pub machine: String,
    /// Doctor's findings, `SEVERITY ID` each.
    pub findings: Vec<String>,
    /// Why the check failed (empty: it passed).
    pub problems: Vec<String>,
    pub seconds: f64,
}

impl EmulatedOutcome {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// One line: `linux/arm64 (emulated): aarch64, doctor: ...`.
    pub fn summary(&self) -> String {
        let verdict = if self.ok() { "installed and running; sessions not run (emulated)".to_owned() } else { format!("{} problem(s)", self.problems.len()) };
        format!("{} emulated: uname -m {}, doctor {}: {verdict}", self.arch.platform(), self.machine, self.findings.len())
    }
}

/// Reads the container's output (`uname -m`, then doctor's JSON report).
pub(super) fn parse(arch: Arch, stdout: &str, stderr: &str, seconds: f64) -> EmulatedOutcome {
    let (machine, rest) = stdout.split_once('\n').unwrap_or((stdout, ""));
    let mut o = EmulatedOutcome { arch, machine: machine.trim().to_owned(), findings: Vec::new(), problems: Vec::new(), seconds };
    if o.machine != arch.name() {
        o.problems.push(format!("the container reports `uname -m` = `{}`, not {arch}", o.machine));
    }
    let report: Value = match serde_json::from_str(rest.trim()) {
        Ok(v) => v,
        Err(_) => {
            let tail: Vec<&str> = stderr.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev().collect();
            o.problems.push(format!("agent-sandbox doctor printed no report; its last words: {}", tail.join(" | ")));
            return o;
        }
    };
    let findings: Vec<(&str, &str, &str)> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| (f["id"].as_str().unwrap_or(""), f["severity"].as_str().unwrap_or(""), f["message"].as_str().unwrap_or("")))
        .collect();
    o.findings = findings.iter().map(|(id, sev, _)| format!("{sev} {id}")).collect();
    for id in MUST_PASS {
        if !findings.iter().any(|(i, sev, _)| i == id && *sev == "ok") {
            o.problems.push(format!("doctor did not report {id}"));
        }
    }
    for (id, sev, message) in &findings {
        if matches!(*sev, "warning" | "error") && !EXPLAINED.contains(id) {
            o.problems.push(format!("doctor: {sev} {id}: {message}"));
        }
    }
    if !findings.iter().any(|(id, _, _)| matches!(*id, "userns-emulated" | "emulated")) {
        o.problems.push("doctor did not see an emulator: this variant did not run emulated as planned".into());
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doctor(findings: &[(&str, &str)]) -> String {
        let list: Vec<Value> =
            findings.iter().map(|(id, sev)| serde_json::json!({"check": "x", "id": id, "severity": sev, "message": format!("m {id}")})).collect();
        serde_json::json!({"findings": list, "errors": 1, "warnings": 1, "blocking": true}).to_string()
    }

    /// What doctor says in the arm64 image under qemu-user (measured).
    fn emulated_image() -> Vec<(&'static str, &'static str)> {
        vec![
            ("bwrap-ok", "ok"),
            ("userns-emulated", "error"),
            ("tun-ok", "ok"),
            ("pasta-not-checked", "warning"),
            ("filter-not-checked", "warning"),
            ("mounts-not-checked", "warning"),
            ("proc-ok", "ok"),
            ("install-ok", "ok"),
            ("path-ok", "ok"),
            ("config-ok", "ok"),
            ("devcontainer-not-found", "info"),
        ]
    }

    #[test]
    fn the_emulated_image_passes_with_its_explained_findings() {
        let o = parse(Arch::Aarch64, &format!("aarch64\n{}\n", doctor(&emulated_image())), "", 2.0);
        assert_eq!(o.problems, Vec::<String>::new());
        assert!(o.ok());
        assert_eq!(o.findings[1], "error userns-emulated");
        assert_eq!(o.summary(), "linux/arm64 emulated: uname -m aarch64, doctor 11: installed and running; sessions not run (emulated)");
    }

    #[test]
    fn anything_else_fails_with_the_reason() {
        let o = parse(Arch::Aarch64, &format!("x86_64\n{}", doctor(&emulated_image())), "", 0.0);
        assert_eq!(o.problems, ["the container reports `uname -m` = `x86_64`, not aarch64"]);

        let mut f = emulated_image();
        let install = f.iter().position(|(id, _)| *id == "install-ok").unwrap();
        f[install] = ("shim-broken", "error");
        f.push(("path-venv-first", "error"));
        let o = parse(Arch::Aarch64, &format!("aarch64\n{}", doctor(&f)), "", 0.0);
        assert_eq!(
            o.problems,
            ["doctor did not report install-ok", "doctor: error shim-broken: m shim-broken", "doctor: error path-venv-first: m path-venv-first"]
        );

        // The plain userns failure is not emulation's: the variant did not run emulated.
        let mut f = emulated_image();
        f[1] = ("userns-unavailable", "error");
        let o = parse(Arch::Aarch64, &format!("aarch64\n{}", doctor(&f)), "", 0.0);
        assert_eq!(
            o.problems,
            ["doctor: error userns-unavailable: m userns-unavailable", "doctor did not see an emulator: this variant did not run emulated as planned"]
        );

        let o = parse(Arch::Aarch64, "aarch64\n", "exec format error\n", 0.0);
        assert_eq!(o.problems, ["agent-sandbox doctor printed no report; its last words: exec format error"]);
    }
}
