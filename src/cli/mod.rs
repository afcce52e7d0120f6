//! The binary's verbs: each turns parsed flags into library calls and an
//! exit status. Errors go up as `anyhow` and become one line in `main`.

pub(crate) mod args;
mod config_cmd;
pub(crate) mod doctor;
pub(crate) mod release;
pub(crate) mod review;
pub(crate) mod run;
pub(crate) mod scope;
pub(crate) mod verify;

use agent_sandbox::config::{self, Effective};
use anyhow::{bail, Context as _};
use args::{Cli, Command};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

pub(crate) fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Run(a) => run::run(cli.config.as_deref(), a),
        Command::Scope(a) => scope::scope(cli.config.as_deref(), a),
        Command::Config(c) => config_cmd::config(cli.config.as_deref(), c),
        Command::Doctor(a) => doctor::doctor(cli.config.as_deref(), a),
        Command::Verify(a) => verify::verify(cli.config.as_deref(), a),
        Command::Probe { args } => Ok(agent_sandbox::verify::probe::probe_main(&args).clamp(0, 255) as u8),
        Command::Canary { args } => Ok(agent_sandbox::verify::canary_main(&args).clamp(0, 255) as u8),
        Command::Review(a) => review::review(cli.config.as_deref(), a),
        Command::Feature(h) => release::run("feature", h.args),
        Command::Templates(h) => release::run("templates", h.args),
        Command::Image(h) => release::run("image", h.args),
        Command::SeccompProfile(a) => seccomp_profile(a),
    }
}

/// `seccomp-profile`: the container's profile, to stdout or a file.
fn seccomp_profile(a: args::SeccompProfileArgs) -> anyhow::Result<u8> {
    let text = agent_sandbox::container_seccomp::render();
    match a.output {
        Some(path) => std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?,
        None => out!("{text}"),
    }
    Ok(0)
}

/// Loads the configuration: the root-owned default file, or a `--config`
/// override that must also be root-owned, not writable by others, and not
/// inside the current directory (a session could have written it there).
pub(crate) fn load_config(path: Option<&Path>, env: &config::EnvMap) -> anyhow::Result<Effective> {
    let Some(path) = path else { return Ok(config::load(env)?) };
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read --config {}", path.display()))?;
    config::check_file_trust(path, meta.uid(), meta.mode())?;
    let real = std::fs::canonicalize(path)?;
    if let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize) {
        if real.starts_with(&cwd) && cwd != Path::new("/") {
            bail!("--config {} is inside the workspace {}, where a session can write; keep configuration outside it", path.display(), cwd.display());
        }
    }
    Ok(config::load_from(path, env)?)
}
