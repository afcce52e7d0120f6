//! `agent-sandbox doctor`: checks, outside any sandbox, what sessions need
//! — prerequisites (bwrap, user namespaces, /dev/net/tun, a pasta that can
//! really attach, which /proc sessions get), the configuration, the installation
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
//!   `jailnet`: what the egress jail treats as the internet and blocks of
//!   the container's own routing;
//!   `shell`: what the shells' start-up files put on PATH.
//!
//! `after_install` is the subset `sandbox-install` shows after installing;
//! `Finding` and `Severity` live in `crate::finding`, shared with it.

// The crates below, under the names this crate has always used.
use agent_sandbox_core::{agents, arch, config, jail, layout, sandbox, sysbin};
use agent_sandbox_install as install;
use agent_sandbox_sys::{child, confinement, env_vars, finding, fixes, idmap, jsonc};

mod boundary;
mod checks;
mod confined;
pub mod devcontainer;
mod installed;
mod jailnet;
mod path;
mod probe;
pub mod render;
mod settings;
mod shell;

pub use crate::finding::{Finding, Severity};

use serde::Serialize;
use std::path::PathBuf;

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

/// The host checks after installing. At image build time there is no
/// /dev/net/tun, /proc is masked, and the build runs under the engine's
/// default security profiles (Docker's seccomp profile refuses user
/// namespaces, its AppArmor profile mounts); all of that is only needed
/// when the container runs (with the feature's or image's securityOpt), so
/// they are warnings here.
pub fn after_install() -> Vec<Finding> {
    let jail_on = crate::config::load(&std::env::vars_os().collect()).map_or(true, |e| e.config.egress_jail);
    let host = checks::gather(jail_on);
    let mut out = checks::prerequisites(&host);
    for f in &mut out {
        let build_time = matches!(f.id, "tun-missing" | "tun-unusable" | "tun-permission" | "userns-seccomp" | "mounts-apparmor");
        if build_time && f.severity == Severity::Error {
            f.severity = Severity::Warning;
            f.message += " (expected while an image is being built; the running container needs it)";
        }
        // A build's /proc is always masked; what the running container's
        // is, doctor says there.
        if f.id == "proc-masked" {
            f.severity = Severity::Info;
            f.message += " (while an image is being built; `agent-sandbox doctor` in the running container says which /proc its sessions get)";
        }
    }
    let path = std::env::var(crate::env_vars::PATH).unwrap_or_default();
    let dirs: Vec<_> = path::split(&path).into_iter().map(path::dir_info).collect();
    out.extend(checks::exec_path_findings(&path, &dirs));
    out
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
