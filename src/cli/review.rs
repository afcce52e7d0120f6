//! `agent-sandbox review`: what changed, since the state the user last
//! acknowledged, in the places that run code outside the sandbox (and
//! what a diff will not show). Exit status 1 when something needs a look,
//! 0 otherwise (and after `--ack`).

use super::args::ReviewArgs;
use agent_sandbox::review::{self, report, session::TOOL_DIRS, store, Store};
use agent_sandbox::sandbox::context::{self, env_snapshot};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub(crate) fn review(config_path: Option<&Path>, a: ReviewArgs) -> anyhow::Result<u8> {
    let env = env_snapshot();
    let eff = super::load_config(config_path, &env)?;
    let workspace = match (a.workspace, eff.config.workspace_root.clone()) {
        (Some(w), _) => std::fs::canonicalize(&w)?,
        (None, Some(root)) => root,
        (None, None) => context::cwd()?,
    };
    let account = context::account()?;
    // Everything a session may write, so the baselines are kept elsewhere.
    let writable: Vec<PathBuf> = [workspace.clone()].into_iter().chain(eff.config.writable()).chain(TOOL_DIRS.iter().map(|d| account.home.join(d))).collect();
    let dir = store::state_dir(&account.home, env.get(OsStr::new(agent_sandbox::env_vars::XDG_STATE_HOME)).map(Path::new), &writable)?;
    let store = Store::new(&dir, &workspace);
    let base = match (&a.since_session, a.all) {
        (_, true) => None,
        (Some(id), _) => Some(store.before_session(id)?),
        (None, _) => store.baseline()?,
    };
    if base.is_none() && !a.all {
        eprintln!(
            "agent-sandbox: no review baseline for {}; listing everything present (`agent-sandbox review --ack` records this state as reviewed)",
            workspace.display()
        );
    }
    let shared = store.shared();
    let now = review::take(&workspace, review::Roots { shared: &shared, home: Some(&account.home) });
    let r = report::compare(base.as_ref().map(|b| &b.snapshot), &now);
    for w in &r.warnings {
        eprintln!("agent-sandbox: review: {w}");
    }
    if a.json {
        print_json(&workspace, base.as_ref(), &r)?;
    } else {
        if let Some(b) = &base {
            outln!("changes in {} since {}:", workspace.display(), b.describe());
        }
        out!("{}", report::render(&r));
    }
    if a.ack {
        store.acknowledge(now.snapshot)?;
        eprintln!("agent-sandbox: acknowledged; later reviews compare with this state");
        return Ok(0);
    }
    if !a.json && r.needs_look() {
        outln!("\nonce reviewed: `agent-sandbox review --ack`");
    }
    Ok(u8::from(r.needs_look()))
}

fn print_json(workspace: &Path, base: Option<&store::Record>, r: &report::Report) -> anyhow::Result<()> {
    let v = serde_json::json!({
        "workspace": workspace,
        "baseline": base.map(|b| serde_json::json!({"how": b.how, "session": b.session, "taken": b.snapshot.taken_ns / 1_000_000_000})),
        "complete": r.complete,
        "findings": r.findings,
        "other_changes": r.other_changes,
        "warnings": r.warnings,
    });
    outln!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}
