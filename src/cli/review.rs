//! `agent-sandbox review`: what changed, since a session's baseline, in the
//! workspace's places that run code later outside the sandbox. Exit status
//! 1 when something needs a look, 0 otherwise.

use super::args::ReviewArgs;
use agent_sandbox::review;
use agent_sandbox::sandbox::context::{self, env_snapshot};
use std::ffi::OsStr;
use std::path::Path;

pub fn review(config_path: Option<&Path>, a: ReviewArgs) -> anyhow::Result<u8> {
    let env = env_snapshot();
    let eff = super::load_config(config_path, &env)?;
    let workspace = match (a.workspace, eff.config.workspace_root) {
        (Some(w), _) => std::fs::canonicalize(&w)?,
        (None, Some(root)) => root,
        (None, None) => context::cwd()?,
    };
    let account = context::account()?;
    let dir = review::store_dir(&account.home, env.get(OsStr::new("XDG_STATE_HOME")).map(Path::new));
    let baseline = if a.all { None } else { review::load(&dir, &workspace, a.since_session.as_deref())? };
    if baseline.is_none() && !a.all {
        eprintln!("agent-sandbox: no session baseline for {}; listing everything present", workspace.display());
    }
    let findings = review::diff(baseline.as_ref(), &review::collect::collect(&workspace));
    if a.json {
        let v = serde_json::json!({
            "workspace": workspace,
            "baseline": baseline.as_ref().map(|b| serde_json::json!({"session": b.session, "started": b.started})),
            "findings": findings,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        if let Some(b) = &baseline {
            println!("since session {} of {}:", b.session, workspace.display());
        }
        print!("{}", review::render(&findings));
    }
    Ok(u8::from(findings.iter().any(review::Finding::needs_look)))
}
