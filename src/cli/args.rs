//! Command-line flags, parsed into plain values (nothing here acts).

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "agent-sandbox",
    version,
    about = "Run AI coding agents (claude, codex, pi) in a bubblewrap sandbox with an egress jail",
    after_help = "Logs: set RUST_LOG (e.g. RUST_LOG=debug). Configuration: /etc/agent-sandbox/config.json5."
)]
pub(crate) struct Cli {
    /// Read this configuration file instead of /etc/agent-sandbox/config.json5
    /// (tests; it must be root-owned and outside the workspace).
    #[arg(long, global = true, hide = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a command (default: the agent) inside the sandbox.
    Run(RunArgs),
    /// What a session could read and write at each path.
    Scope(ScopeArgs),
    /// The effective configuration and where each value came from.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Check what sessions need here: prerequisites (bwrap, user namespaces,
    /// /dev/net/tun, pasta), PATH order, shims, config, devcontainer.json.
    /// Exit status 1 when something blocks sessions.
    Doctor(DoctorArgs),
    /// Prove the isolation: run the numbered check battery inside a real
    /// session. Exit status = failed checks + escaped probes (+1 with the
    /// egress jail off, unless --allow-jail-off).
    Verify(VerifyArgs),
    /// Internal: the check battery, run inside the session by `verify`.
    #[command(name = "__probe", hide = true)]
    Probe {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Internal: the sacrificial outer process `verify` aims its probes at.
    #[command(name = "__canary", hide = true)]
    Canary {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// What changed since you last acknowledged a review, in the places that
    /// run code outside the sandbox (git internals, hooks, venvs, devcontainer,
    /// Makefiles, editor tasks...) and in files a diff does not show.
    Review(ReviewArgs),
    /// Maintainers: package or publish the devcontainer feature (OCI
    /// artifact), by agent-sandbox-release beside this program.
    Feature(HandedOver),
    /// Maintainers: package or publish the devcontainer templates (OCI
    /// artifacts), by agent-sandbox-release beside this program.
    Templates(HandedOver),
    /// Maintainers: build, verify and publish the reference image, by
    /// agent-sandbox-release beside this program.
    Image(HandedOver),
    /// Print the container's seccomp profile: the engine's default plus what
    /// sessions need, for `--security-opt seccomp=FILE` (Docker, podman) or a
    /// Kubernetes Localhost profile (docs/kubernetes.md).
    SeccompProfile(SeccompProfileArgs),
}

/// A maintainer verb's arguments, `--help` included, passed unread to
/// agent-sandbox-release (`cli::release`).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub(crate) struct HandedOver {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

#[derive(Debug, Args)]
pub(crate) struct SeccompProfileArgs {
    /// Write it to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Agent profile: claude, codex or pi (default: claude).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// Make sibling checkouts (the workspace's parent's other children) readable.
    #[arg(long)]
    pub peers: bool,
    /// Print the plan (bwrap argv, environment names, mounts) instead of running.
    #[arg(long)]
    pub print_plan: bool,
    /// With --print-plan: print it as JSON.
    #[arg(long, requires = "print_plan")]
    pub json: bool,
    /// After the session, write what the egress jail blocked to FILE as
    /// JSON (each destination with its port, protocol, count and first
    /// time; with allowDomains the names refused).
    #[arg(long, value_name = "FILE", conflicts_with = "print_plan")]
    pub report: Option<std::path::PathBuf>,
    /// The command and its arguments (default: the agent's CLI).
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<OsString>,
}

#[derive(Debug, Args)]
pub(crate) struct ScopeArgs {
    /// Agent profile whose session is described (default: claude).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    #[arg(long)]
    pub peers: bool,
    #[arg(long)]
    pub json: bool,
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ReviewArgs {
    #[arg(long)]
    pub json: bool,
    /// Record the present state as reviewed: later reviews (and the hint
    /// after a session) compare with it.
    #[arg(long)]
    pub ack: bool,
    /// Compare with the state before this session started (default: the
    /// last acknowledged state).
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub since_session: Option<String>,
    /// List everything present, without comparing with a baseline.
    #[arg(long)]
    pub all: bool,
    /// The workspace (default: workspaceRoot, else the current directory).
    #[arg(value_name = "WORKSPACE")]
    pub workspace: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print each effective value and its source.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Validate the configuration; exit status 1 when invalid.
    Check,
}

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// Agent profile of the session (default: claude).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// The egress jail is meant to be off here: its skipped checks do not
    /// count as a failure (without this flag a run with the jail off fails).
    #[arg(long)]
    pub allow_jail_off: bool,
    /// Tests only: remove this defence from the verify session's plan first
    /// (repeatable). Never available to `run`.
    #[arg(long, hide = true, value_name = "DEFENCE")]
    pub weaken: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// The devcontainer.json to lint (default: .devcontainer/devcontainer.json
    /// or .devcontainer.json in the current directory or a parent).
    #[arg(long, value_name = "PATH", conflicts_with = "start_check")]
    pub devcontainer: Option<PathBuf>,
    /// The container-start check (a devcontainer's postStartCommand): only
    /// warnings and errors, one line each on stderr, never a failing exit
    /// status; no devcontainer.json lint (the container is what it is).
    #[arg(long, conflicts_with = "json")]
    pub start_check: bool,
}
