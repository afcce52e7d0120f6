//! `agent-sandbox doctor`: checks, outside any sandbox, what sessions need
//! — prerequisites (bwrap, user namespaces, /dev/net/tun, a pasta that can
//! really attach, an unmasked /proc), the configuration, the installation
//! (binary and shims), PATH order, and the devcontainer.json — and says
//! for each problem how to fix it.
//!
//! - `checks`: gathers the host facts (`HostFacts`, impure) and turns them
//!   into findings (`assess`, pure).
//! - `probe`: the live probes (namespace holder, pasta attach), also used
//!   by `sandbox-install`.
//! - `path`: PATH-order rules; `devcontainer`: the lint; `render`: output.
//! - `settings`: the configuration (jail off, environment overrides,
//!   allowWrite); `installed`: the installation against its manifest;
//!   `boundary`: the container's root and the host's kernel settings;
//!   `shell`: what the shells' start-up files put on PATH.

pub mod boundary;
pub mod checks;
mod confined;
pub mod devcontainer;
pub mod installed;
pub mod path;
pub mod probe;
pub mod render;
pub mod settings;
pub mod shell;

use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    Info,
    Warning,
    /// Sessions cannot start (or would not be sandboxed) until it is fixed.
    Error,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One result: which check, a stable id (documented in docs/doctor.md),
/// how bad, what was found, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub id: &'static str,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn count(&self, s: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == s).count()
    }

    /// Something blocks sessions (the exit status is non-zero).
    pub fn blocking(&self) -> bool {
        self.count(Severity::Error) > 0
    }
}

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The devcontainer.json to lint; None: search from the current directory.
    pub devcontainer: Option<PathBuf>,
    /// The container-start check: the live checks only, no lint.
    pub start_check: bool,
}

/// Runs every check. `config` is the result of loading the configuration
/// (the CLI loads it, honouring `--config`).
pub fn run(opts: &Options, config: Result<crate::config::Effective, String>) -> Report {
    let jail_on = config.as_ref().map_or(true, |e| e.config.egress_jail);
    let host = checks::gather(jail_on);
    let mut findings = checks::assess(&host);
    let home = crate::sandbox::context::account().map(|a| a.home).unwrap_or_default();
    findings.extend(settings::findings(&config, &home));
    findings.extend(shell::findings(&crate::sandbox::shellrc::gather(&home)));
    if !opts.start_check {
        findings.extend(devcontainer_findings(opts));
    }
    Report { findings }
}

fn devcontainer_findings(opts: &Options) -> Vec<Finding> {
    let path = match &opts.devcontainer {
        Some(p) => Some(p.clone()),
        None => std::env::current_dir().ok().and_then(|d| devcontainer::find(&d)),
    };
    let Some(path) = path else {
        return vec![Finding {
            check: "devcontainer",
            id: "devcontainer-not-found",
            severity: Severity::Info,
            message: "no .devcontainer/devcontainer.json in the current directory or its parents".into(),
            fix: Some("pass --devcontainer PATH to lint one elsewhere".into()),
        }];
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => devcontainer::lint(&path, &text, &|p| std::fs::read_to_string(p).ok()),
        Err(e) => vec![Finding {
            check: "devcontainer",
            id: "devcontainer-unreadable",
            severity: Severity::Error,
            message: format!("cannot read {}: {e}", path.display()),
            fix: Some("check the path given to --devcontainer".into()),
        }],
    }
}
