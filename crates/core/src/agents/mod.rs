//! Agent profiles: what each vendor CLI (Claude Code, Codex, Pi) needs from
//! a session — its state paths, the flags we inject or strip, the variables
//! that turn its update checks off — and where its real binary lives.
//! Pure data, except `locate_vendor`, which looks at the file system.

mod vendor;

pub use vendor::{locate_vendor, VendorSearch};

use crate::env_vars;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
    Pi,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentError {
    #[error("unknown agent `{0}`; valid agents are: claude, codex, pi")]
    Unknown(String),
    #[error("the {agent} CLI is not installed (no `{binary}` outside the agent-sandbox shims in {searched}); install it with: {install}")]
    NotInstalled { agent: &'static str, binary: &'static str, searched: String, install: &'static str },
}

/// Whether a piece of agent state is a directory or a single file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    Dir,
    File,
}

pub const ALL: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Pi];

impl Agent {
    /// One entry of an `--agents` list (clap splits the list at commas):
    /// spaces around a name are ignored and an empty entry names none, so
    /// `--agents "claude, pi"` and `--agents ""` mean what they say.
    pub fn parse_list_entry(entry: &str) -> Result<Option<Agent>, String> {
        let name = entry.trim();
        if name.is_empty() {
            return Ok(None);
        }
        <Agent as clap::ValueEnum>::from_str(name, false)
            .map(Some)
            .map_err(|_| format!("unknown agent `{name}`: the agents are claude, codex and pi (comma-separated; empty for none)"))
    }

    /// The agents an `--agents` list names, each once, in the order they
    /// first appear.
    pub fn from_list(entries: &[Option<Agent>]) -> Vec<Agent> {
        let mut out = Vec::new();
        for a in entries.iter().flatten() {
            if !out.contains(a) {
                out.push(*a);
            }
        }
        out
    }

    pub fn from_name(name: &str) -> Result<Agent, AgentError> {
        match name {
            "claude" => Ok(Agent::Claude),
            "codex" => Ok(Agent::Codex),
            "pi" => Ok(Agent::Pi),
            other => Err(AgentError::Unknown(other.to_string())),
        }
    }

    /// The agent selected by the name this binary was invoked as (a shim),
    /// if it is one of the agents.
    pub fn from_argv0(argv0: &OsStr) -> Option<Agent> {
        let base = Path::new(argv0).file_name()?.to_str()?;
        Agent::from_name(base).ok()
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Pi => "pi",
        }
    }

    /// The vendor's executable name.
    pub fn binary(self) -> &'static str {
        self.name()
    }

    pub(crate) fn install_hint(self) -> &'static str {
        match self {
            Agent::Claude => "npm install -g @anthropic-ai/claude-code",
            Agent::Codex => "npm install -g @openai/codex",
            Agent::Pi => "npm install -g @mariozechner/pi-coding-agent",
        }
    }

    /// The agent's own state, relative to the home directory; bound back
    /// read-write into the otherwise empty home.
    pub fn state(self) -> &'static [(&'static str, StateKind)] {
        match self {
            Agent::Claude => &[(".claude", StateKind::Dir), (".claude.json", StateKind::File)],
            Agent::Codex => &[(".codex", StateKind::Dir)],
            Agent::Pi => &[(".pi", StateKind::Dir)],
        }
    }

    /// Variables that turn the vendor's self-update and update checks off:
    /// an updater would rewrite binaries outside the session's view.
    pub fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Agent::Claude => &[(env_vars::DISABLE_AUTOUPDATER, "1")],
            Agent::Codex => &[(env_vars::CODEX_DISABLE_UPDATE_CHECK, "1")],
            Agent::Pi => &[(env_vars::PI_SKIP_VERSION_CHECK, "1"), (env_vars::PI_OFFLINE_UPDATE_CHECK, "1")],
        }
    }

    /// The arguments the vendor binary gets: the user's, with flags that
    /// would reach outside the sandbox dropped and our own injected first.
    pub(crate) fn rewrite_args(self, user_args: &[OsString]) -> Vec<OsString> {
        match self {
            // Claude's browser bridge (--chrome) talks to a native host
            // outside the sandbox; it is always turned off.
            Agent::Claude => {
                let mut out = vec![OsString::from("--no-chrome")];
                out.extend(user_args.iter().filter(|a| *a != "--chrome" && *a != "--no-chrome").cloned());
                out
            }
            Agent::Codex => {
                let mut out: Vec<OsString> = vec!["-c".into(), "check_for_update_on_startup=false".into()];
                out.extend(user_args.iter().cloned());
                out
            }
            Agent::Pi => user_args.to_vec(),
        }
    }

    /// Where `locate_vendor` looks besides `PATH` (relative to home when not
    /// absolute): the vendors' own install locations.
    pub(crate) fn extra_locations(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => &[".local/bin/claude", ".claude/local/claude", "/usr/local/lib/node_modules/@anthropic-ai/claude-code/cli.js"],
            Agent::Codex => &["/usr/local/lib/node_modules/@openai/codex/bin/codex.js"],
            Agent::Pi => &["/usr/local/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"],
        }
    }

    pub fn state_paths(self, home: &Path) -> Vec<(PathBuf, StateKind)> {
        self.state().iter().map(|(rel, kind)| (home.join(rel), *kind)).collect()
    }
}

#[cfg(test)]
mod tests;
