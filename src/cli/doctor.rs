//! `agent-sandbox doctor`: what sessions need on this machine, outside any
//! sandbox. Exit status 1 when something blocks sessions (or would let an
//! agent run unsandboxed), else 0; `--start-check` (a devcontainer's
//! postStartCommand) only prints the problems and always exits 0.

use super::args::DoctorArgs;
use agent_sandbox::doctor::{self, render};
use agent_sandbox::sandbox::context::env_snapshot;
use std::path::Path;

pub(crate) fn doctor(config_path: Option<&Path>, a: DoctorArgs) -> anyhow::Result<u8> {
    let env = env_snapshot();
    let config = super::load_config(config_path, &env).map_err(|e| format!("{e:#}"));
    let report = doctor::run(&doctor::Options { devcontainer: a.devcontainer, start_check: a.start_check }, config);
    if a.start_check {
        // Warn only: a container start is never failed by this check.
        eprint!("{}", render::start_check(&report));
        return Ok(0);
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&render::json(&report))?);
    } else {
        out!("{}", render::text(&report));
    }
    Ok(u8::from(report.blocking()))
}
