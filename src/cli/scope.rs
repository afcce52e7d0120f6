//! `agent-sandbox scope PATH...`: what a session could read and write,
//! answered from the same plan the launcher would run.

use super::args::ScopeArgs;
use agent_sandbox::agents::Agent;
use agent_sandbox::launch::{self, Request};
use agent_sandbox::sandbox::context::env_snapshot;
use agent_sandbox::sandbox::scope::access;
use std::path::{Component, Path, PathBuf};

/// Absolute and lexically normalised (no `.`/`..`), without touching the
/// file system beyond the current directory.
fn normalise(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
    let mut out = PathBuf::from("/");
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    // Resolve symlinks where the path exists: the session sees the target.
    std::fs::canonicalize(&out).unwrap_or(out)
}

pub fn scope(config_path: Option<&Path>, a: ScopeArgs) -> anyhow::Result<u8> {
    let env = env_snapshot();
    let agent = Agent::from_name(a.agent.as_deref().unwrap_or("claude"))?;
    let eff = super::load_config(config_path, &env)?;
    // The command does not change what is visible; a placeholder avoids
    // requiring the agent to be installed just to ask.
    let req = Request { agent, command: Some(vec!["/bin/true".into()]), agent_args: Vec::new(), peers: a.peers };
    let mut config = eff.config.clone();
    config.egress_jail = false; // file-system scope does not depend on the network
    let session = launch::decide(&req, &config, &env)?;
    let rows: Vec<(PathBuf, _)> = a.paths.iter().map(|p| {
        let n = normalise(p);
        let acc = access(&session.plan.mounts, &n);
        (n, acc)
    }).collect();
    if a.json {
        let v: Vec<_> = rows
            .iter()
            .map(|(p, acc)| serde_json::json!({"path": p, "access": acc, "read": acc.readable(), "write": acc.writable_outside()}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for (p, acc) in rows {
            let what = match acc {
                agent_sandbox::sandbox::scope::Access::Hidden => "hidden (not visible)",
                agent_sandbox::sandbox::scope::Access::Empty => "masked (reads as empty)",
                agent_sandbox::sandbox::scope::Access::Read => "read-only",
                agent_sandbox::sandbox::scope::Access::Write => "read-write",
                agent_sandbox::sandbox::scope::Access::Private => "private (empty, writes stay in the session)",
            };
            println!("{:<45} {what}", p.display());
        }
    }
    Ok(0)
}
