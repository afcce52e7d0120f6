//! Configuration: `/etc/agent-sandbox/config.json5` plus `AGENT_SANDBOX_*`
//! (and `CLAUDE_SANDBOX_*`) environment overrides, validated into a
//! [`Config`] with the provenance of every value ([`Effective`]).
//!
//! This file holds the public types and the load pipeline:
//! 1. read the file (`file.rs`; missing = defaults; the default path must be
//!    root-owned and not group/world writable),
//! 2. parse and validate it (`parse.rs`, over the crate's JSONC parser,
//!    which keeps positions; json5 confirms the text is JSON5),
//! 3. apply the environment (`env.rs`): scalars replace, lists extend,
//! 4. record where each value came from; `show.rs` renders that.
//!
//! Everything after step 1 is pure: the environment is passed in as a value,
//! never read from the process here.

pub mod domains;
mod env;
mod error;
mod file;
mod keys;
mod parse;
mod show;
mod validate;
mod value;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

pub use error::{At, ConfigError, Hint, Origin};
pub use file::check_file_trust;
pub use keys::{suggest, ItemKind, Key, Kind};
pub use show::{render_check, render_show, show_json};
pub use validate::{never_passed, not_allowable};

/// The only config file read in production, unless the CLI's `--config`
/// names another.
pub(crate) const DEFAULT_CONFIG_PATH: &str = "/etc/agent-sandbox/config.json5";

/// The process environment as passed to [`load`]: build it with
/// `std::env::vars_os().collect()`. `OsString` so that a non-UTF-8 value of
/// a config variable is reported instead of silently dropped.
pub type EnvMap = BTreeMap<OsString, OsString>;

/// The effective, validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub egress_jail: bool,
    pub allow_ip: Vec<Ipv4Addr>,
    /// Host names, `*.` wildcards and presets (`domains`), normalised; when
    /// any, the jail reaches only what they resolve to.
    pub allow_domains: Vec<String>,
    pub local_ports: Vec<u16>,
    pub callback_ports: Vec<u16>,
    pub no_forge: bool,
    pub peers: bool,
    pub allow_write: Vec<PathBuf>,
    /// Writable too, though root owns them (the user accepted that).
    pub allow_write_root_owned: Vec<PathBuf>,
    pub allow_device: Vec<PathBuf>,
    pub gpu: bool,
    pub pass_env: Vec<String>,
    pub workspace_root: Option<PathBuf>,
    /// Host-executed parts of the workspace made read-only in sessions.
    pub protect_devcontainer: bool,
    pub protect_git_hooks: bool,
    pub protect_git_config: bool,
    /// Sessions get the user's own ~/.cache and ~/.local/share (today's
    /// way) instead of the sandbox's private, persistent ones.
    pub share_tool_dirs: bool,
}

impl Config {
    /// Every path sessions may write besides the workspace: `allowWrite`
    /// and `allowWriteRootOwned`, in that order, each once.
    pub fn writable(&self) -> Vec<PathBuf> {
        let mut v = self.allow_write.clone();
        v.extend(self.allow_write_root_owned.iter().filter(|p| !self.allow_write.contains(p)).cloned());
        v
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            egress_jail: true,
            allow_ip: Vec::new(),
            allow_domains: Vec::new(),
            local_ports: Vec::new(),
            callback_ports: Vec::new(),
            no_forge: false,
            peers: false,
            allow_write: Vec::new(),
            allow_write_root_owned: Vec::new(),
            allow_device: Vec::new(),
            gpu: false,
            pass_env: Vec::new(),
            workspace_root: None,
            protect_devcontainer: true,
            protect_git_hooks: true,
            protect_git_config: true,
            share_tool_dirs: false,
        }
    }
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Built-in default.
    Default,
    /// The config file, at the key's line.
    File { path: PathBuf, line: usize },
    /// An environment variable (`AGENT_SANDBOX_*` or its alias).
    Env { var: String },
    /// A list from the file, extended by an environment variable.
    FileAndEnv { path: PathBuf, line: usize, var: String },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { path, line } => write!(f, "{}:{line}", path.display()),
            Source::Env { var } => write!(f, "env {var}"),
            Source::FileAndEnv { path, line, var } => {
                write!(f, "{}:{line} + env {var}", path.display())
            }
        }
    }
}

/// The configuration in force and where each value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    pub config: Config,
    /// Every key (camelCase) → its source; `Source::Default` when unset.
    pub sources: BTreeMap<&'static str, Source>,
    /// The config file consulted.
    pub path: PathBuf,
    /// False when it does not exist (defaults apply).
    pub file_present: bool,
}

/// Loads [`DEFAULT_CONFIG_PATH`] (which must be trusted, see
/// [`check_file_trust`]) and applies the environment.
pub fn load(env: &EnvMap) -> Result<Effective, ConfigError> {
    load_from(Path::new(DEFAULT_CONFIG_PATH), env)
}

/// Loads the config at `path` and applies the environment. The ownership
/// check applies only when `path` is the default path: another path is a
/// deliberate choice of the user running the CLI (`--config`) or a test.
pub fn load_from(path: &Path, env: &EnvMap) -> Result<Effective, ConfigError> {
    let trust = path == Path::new(DEFAULT_CONFIG_PATH);
    let text = file::read_config(path, trust)?;
    from_source(path, text.as_deref(), env)
}

/// Pure: the effective configuration from the file's text (`None`: no
/// file) and the environment. `path` is only used in messages and sources.
pub fn from_source(path: &Path, text: Option<&str>, env: &EnvMap) -> Result<Effective, ConfigError> {
    let (mut config, mut sources) = match text {
        Some(text) => parse::parse_document(path, text)?,
        None => (Config::default(), BTreeMap::new()),
    };
    env::apply_env(&mut config, &mut sources, env)?;
    for key in Key::ALL {
        sources.entry(key.name()).or_insert(Source::Default);
    }
    Ok(Effective { config, sources, path: path.to_path_buf(), file_present: text.is_some() })
}
