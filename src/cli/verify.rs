//! `agent-sandbox verify [--agent A] [--json]`: runs the check battery in a
//! real session (`agent_sandbox::verify`) and prints the report. The exit
//! status is the number of failed checks plus escaped probes (255 at most),
//! plus one when the egress jail is off and `--allow-jail-off` was not
//! given (its checks were skipped, not proven); when no session could
//! start, every check counts as failed.

use super::args::VerifyArgs;
use agent_sandbox::agents::Agent;
use agent_sandbox::sandbox::context::env_snapshot;
use agent_sandbox::verify::report::Report;
use agent_sandbox::verify::weaken::Weakening;
use std::path::Path;

pub(crate) fn verify(config_path: Option<&Path>, a: VerifyArgs) -> anyhow::Result<u8> {
    let agent = match Agent::from_name(a.agent.as_deref().unwrap_or("claude")) {
        Ok(agent) => agent,
        Err(e) => return usage(&e.to_string()),
    };
    let mut weakenings = Vec::new();
    for name in &a.weaken {
        match Weakening::from_name(name) {
            Ok(w) => weakenings.push(w),
            Err(e) => return usage(&e),
        }
    }
    let env = env_snapshot();
    let report = match super::load_config(config_path, &env) {
        Ok(eff) => agent_sandbox::verify::outer::verify(&eff.config, agent, &weakenings, &env, a.allow_jail_off),
        Err(e) => Report {
            agent: agent.name().into(),
            jail: true,
            session: String::new(),
            weakened: a.weaken.clone(),
            rows: Vec::new(),
            error: Some(format!("{e:#}")),
            jail_off_allowed: a.allow_jail_off,
        },
    };
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        out!("{}", report.text());
    }
    Ok(report.failures().min(255) as u8)
}

fn usage(msg: &str) -> anyhow::Result<u8> {
    eprintln!("agent-sandbox verify: {msg}");
    Ok(2)
}
