//! `agent-sandbox scope PATH...`: what a session could read and write,
//! answered from the same plan the launcher would run (its mounts as bwrap
//! really applies them; `verify` check 27 proves the answers in a session).

use super::args::ScopeArgs;
use agent_sandbox::agents::Agent;
use agent_sandbox::launch::{self, Request};
use agent_sandbox::sandbox::context::env_snapshot;
use agent_sandbox::sandbox::fsview::RealFs;
use agent_sandbox::sandbox::scope::{access, effective_mounts, real_path};
use std::path::{Path, PathBuf};

pub(crate) fn scope(config_path: Option<&Path>, a: ScopeArgs) -> anyhow::Result<u8> {
    let env = env_snapshot();
    let agent = Agent::from_name(a.agent.as_deref().unwrap_or("claude"))?;
    let eff = super::load_config(config_path, &env)?;
    // The command does not change what is visible; a placeholder avoids
    // requiring the agent to be installed just to ask.
    let req = Request { agent, command: Some(vec!["/bin/true".into()]), agent_args: Vec::new(), peers: a.peers };
    let mut config = eff.config.clone();
    config.egress_jail = false; // file-system scope does not depend on the network
    let session = launch::decide(&req, &config, &env)?;
    // As bwrap will apply them: missing optional sources skipped, symlinked
    // destinations resolved, so the query (resolved the same way) matches.
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mounts = effective_mounts(&session.plan.mounts, &RealFs, &canonical);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let rows: Vec<(PathBuf, _)> = a
        .paths
        .iter()
        .map(|p| {
            let n = real_path(p, &cwd);
            let acc = access(&mounts, &n);
            (n, acc)
        })
        .collect();
    if a.json {
        let v: Vec<_> =
            rows.iter().map(|(p, acc)| serde_json::json!({"path": p, "access": acc, "read": acc.readable(), "write": acc.writable_outside()})).collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for (p, acc) in rows {
            let what = match acc {
                agent_sandbox::sandbox::scope::Access::Hidden => "hidden (not visible)",
                agent_sandbox::sandbox::scope::Access::Empty => "masked (reads as empty)",
                agent_sandbox::sandbox::scope::Access::Read => "read-only",
                agent_sandbox::sandbox::scope::Access::Write => "read-write",
                agent_sandbox::sandbox::scope::Access::Private => "private (fresh tmpfs: outer contents hidden, writes stay in the session)",
            };
            outln!("{:<45} {what}", p.display());
        }
    }
    Ok(0)
}
