//! `agent-sandbox config show|check`.

use super::args::ConfigCommand;
use agent_sandbox::config;
use agent_sandbox::sandbox::context::env_snapshot;
use std::path::Path;

pub(super) fn config(config_path: Option<&Path>, cmd: ConfigCommand) -> anyhow::Result<u8> {
    let eff = super::load_config(config_path, &env_snapshot())?;
    match cmd {
        ConfigCommand::Show { json: true } => outln!("{}", serde_json::to_string_pretty(&config::show_json(&eff))?),
        ConfigCommand::Show { json: false } => out!("{}", config::render_show(&eff)),
        ConfigCommand::Check => outln!("{}", config::render_check(&eff)),
    }
    Ok(0)
}
