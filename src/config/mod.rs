//! Configuration: `/etc/agent-sandbox/config.json5` plus `AGENT_SANDBOX_*`
//! (and `CLAUDE_SANDBOX_*`) environment overrides.

use std::net::Ipv4Addr;
use std::path::PathBuf;

/// The effective, validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub egress_jail: bool,
    pub allow_ip: Vec<Ipv4Addr>,
    pub local_ports: Vec<u16>,
    pub callback_ports: Vec<u16>,
    pub no_forge: bool,
    pub peers: bool,
    pub allow_write: Vec<PathBuf>,
    pub allow_device: Vec<PathBuf>,
    pub gpu: bool,
    pub pass_env: Vec<String>,
    pub workspace_root: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            egress_jail: true,
            allow_ip: Vec::new(),
            local_ports: Vec::new(),
            callback_ports: Vec::new(),
            no_forge: false,
            peers: false,
            allow_write: Vec::new(),
            allow_device: Vec::new(),
            gpu: false,
            pass_env: Vec::new(),
            workspace_root: None,
        }
    }
}
