//! `agent-sandbox verify`: prove the isolation from inside a real session.
//!
//! Two halves, as in youki's container tests: the launcher (`outer`) starts a
//! real session through the same `launch::decide`/`launch::start` path as
//! `run`, with our own binary bound in as the command (`__probe`); the probe
//! (`probe`) runs the numbered battery inside and prints one JSON line per
//! check; the launcher joins those lines with the registry and prints the
//! report (`report`). Each check is a plain function that asks the kernel
//! (syscalls, not markers) whether its defence holds.
//!
//! - `registry`: every check — number, name, defence, what it asserts;
//!   docs/verify.md is tested against it.
//! - `spec`: what the launcher tells the probe (expected values, outer facts).
//! - `protocol`: the probe's output lines (results, requests to the launcher).
//! - `homeview`: which home paths a session may see (the launcher's sample
//!   and the inside check apply the same rule).
//! - `checks`: the check functions (run inside the session).
//! - `canary`: a sacrificial outer process the adversarial probes aim at.
//! - `facts`: the launcher's side of the spec (outer facts, scope samples).
//! - `weaken`: test-only plan edits that remove one defence (verify only).
//!
//! Not here: the defences themselves (`sandbox`, `jail`).

// The crates below, under the names this crate has always used.
use agent_sandbox_core::{agents, config, jail, launch, sandbox, sysbin};
use agent_sandbox_sys::{child, env_vars};

mod canary;
mod checks;
pub mod egress;
mod facts;
mod homeview;
mod hostview;
pub mod outer;
pub mod probe;
mod protocol;
pub mod registry;
pub mod report;
mod report_check;
mod spec;
pub mod weaken;

pub use canary::canary_main;
pub use registry::{Check, Kind, CHECKS};

use serde::{Deserialize, Serialize};

/// The defence a check proves (the rows of docs/defences.md, the jail of docs/jail.md, and the few
/// extra properties verify also covers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Defence {
    Sentinel,
    Environment,
    Home,
    DotfileMasks,
    Ipc,
    ContainerEngines,
    Privileges,
    PidNamespace,
    TerminalInjection,
    Syscalls,
    FileSystem,
    Git,
    EntryPoints,
    OwnBinaries,
    Recursion,
    Descriptors,
    Keyring,
    Scope,
    EgressJail,
    RootLauncher,
    SetId,
}

impl Defence {
    /// The name used in reports and in docs/verify.md.
    pub fn label(self) -> &'static str {
        match self {
            Defence::Sentinel => "sentinel",
            Defence::Environment => "environment",
            Defence::Home => "home",
            Defence::DotfileMasks => "dotfile masks",
            Defence::Ipc => "IPC / runtime / X11",
            Defence::ContainerEngines => "container engines",
            Defence::Privileges => "privileges",
            Defence::PidNamespace => "pid namespace",
            Defence::TerminalInjection => "terminal injection",
            Defence::Syscalls => "syscalls",
            Defence::FileSystem => "file system",
            Defence::Git => "git",
            Defence::EntryPoints => "entry points",
            Defence::OwnBinaries => "own binaries",
            Defence::Recursion => "recursion",
            Defence::Descriptors => "descriptors",
            Defence::Keyring => "session keyring",
            Defence::Scope => "scope",
            Defence::EgressJail => "egress jail",
            Defence::RootLauncher => "root launcher",
            Defence::SetId => "setuid",
        }
    }
}

/// What one check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The defence holds (an adversarial probe: the attempt was blocked).
    Pass,
    /// The defence does not hold (a probe: the attempt escaped).
    Fail,
    /// Not run: what it checks is switched off (the egress jail).
    Skip,
    /// The defence holds only in part, as the mode this machine allows
    /// promises and docs/defences.md says (the container's masked /proc:
    /// outer processes visible, not reachable). Named, not counted as a
    /// failure.
    Degraded,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub status: Status,
    /// Why it failed or was skipped; for a pass, an optional note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Outcome {
    pub fn pass() -> Outcome {
        Outcome { status: Status::Pass, detail: None }
    }
    /// A pass with a note (e.g. nothing of that kind exists here).
    pub(crate) fn pass_note(note: impl Into<String>) -> Outcome {
        Outcome { status: Status::Pass, detail: Some(note.into()) }
    }
    pub fn fail(detail: impl Into<String>) -> Outcome {
        Outcome { status: Status::Fail, detail: Some(detail.into()) }
    }
    pub fn skip(why: impl Into<String>) -> Outcome {
        Outcome { status: Status::Skip, detail: Some(why.into()) }
    }
    /// Held only as far as this machine allows, saying what differs.
    pub fn degraded(what: impl Into<String>) -> Outcome {
        Outcome { status: Status::Degraded, detail: Some(what.into()) }
    }
    /// Pass when `problems` is empty, else fail listing them.
    pub(crate) fn from_problems(problems: Vec<String>) -> Outcome {
        if problems.is_empty() {
            Outcome::pass()
        } else {
            Outcome::fail(problems.join("; "))
        }
    }
}

/// The reason printed for a jail check when the jail is off.
pub const JAIL_OFF: &str = "egress jail is off";

/// Where the probe binary appears inside the session: bwrap's private
/// `/dev` is a fresh tmpfs in every plan (even a weakened one whose /tmp is
/// the outer one, where no mount point could be created).
pub(crate) const PROBE_PATH: &str = "/dev/.agent-sandbox-probe";

/// The hidden subcommands the probe and the canary run as.
pub(crate) const PROBE_VERB: &str = "__probe";
pub(crate) const CANARY_VERB: &str = "__canary";

/// The canary's secret for a run's nonce (distinct from the planted
/// variables' values, which hold the bare nonce).
pub(crate) fn canary_secret(nonce: &str) -> String {
    format!("{nonce}-canary")
}
