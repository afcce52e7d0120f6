//! Typed values on their way into [`Config`], and the one place that writes
//! them into its fields: replacing (file values, environment scalars) or
//! extending (environment lists), deduplicating lists while keeping order.
//! Also the port-conflict rule, which needs both port lists.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use super::error::{At, ConfigError};
use super::keys::{ItemKind, Key};
use super::validate::{self, Invalid};
use super::Config;

/// A validated value for one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Typed {
    Bool(bool),
    Path(PathBuf),
    Ips(Vec<Ipv4Addr>),
    Ports(Vec<u16>),
    Paths(Vec<PathBuf>),
    Names(Vec<String>),
}

/// Validates list items given as text (every environment list; file lists
/// of strings), each with the place it came from.
pub(crate) fn text_list(kind: ItemKind, items: Vec<(&str, At)>) -> Result<Typed, ConfigError> {
    Ok(match kind {
        ItemKind::Ip => Typed::Ips(each(items, validate::ipv4)?),
        ItemKind::Port => Typed::Ports(each(items, validate::port_text)?),
        ItemKind::Path => Typed::Paths(each(items, validate::write_path)?),
        ItemKind::RootOwnedPath => Typed::Paths(each(items, validate::abs_path)?),
        ItemKind::Device => Typed::Paths(each(items, validate::device_path)?),
        ItemKind::Name => Typed::Names(each(items, validate::env_name)?),
        ItemKind::Domain => Typed::Names(each(items, super::domains::domain)?),
    })
}

fn each<T>(items: Vec<(&str, At)>, check: fn(&str) -> Result<T, Invalid>) -> Result<Vec<T>, ConfigError> {
    items.into_iter().map(|(text, at)| check(text).map_err(|e| e.at(at))).collect()
}

/// Writes `value` into the field of `key`; lists are extended when
/// `extend` is set, replaced otherwise.
pub(crate) fn assign(config: &mut Config, key: Key, value: Typed, extend: bool) {
    match (key, value) {
        (Key::EgressJail, Typed::Bool(b)) => config.egress_jail = b,
        (Key::NoForge, Typed::Bool(b)) => config.no_forge = b,
        (Key::Peers, Typed::Bool(b)) => config.peers = b,
        (Key::Gpu, Typed::Bool(b)) => config.gpu = b,
        (Key::ProtectDevcontainer, Typed::Bool(b)) => config.protect_devcontainer = b,
        (Key::ProtectGitHooks, Typed::Bool(b)) => config.protect_git_hooks = b,
        (Key::ProtectGitConfig, Typed::Bool(b)) => config.protect_git_config = b,
        (Key::ShareToolDirs, Typed::Bool(b)) => config.share_tool_dirs = b,
        (Key::WorkspaceRoot, Typed::Path(p)) => config.workspace_root = Some(p),
        (Key::AllowIp, Typed::Ips(v)) => merge(&mut config.allow_ip, v, extend),
        (Key::LocalPorts, Typed::Ports(v)) => merge(&mut config.local_ports, v, extend),
        (Key::CallbackPorts, Typed::Ports(v)) => merge(&mut config.callback_ports, v, extend),
        (Key::AllowWrite, Typed::Paths(v)) => merge(&mut config.allow_write, v, extend),
        (Key::AllowWriteRootOwned, Typed::Paths(v)) => merge(&mut config.allow_write_root_owned, v, extend),
        (Key::AllowDevice, Typed::Paths(v)) => merge(&mut config.allow_device, v, extend),
        (Key::PassEnv, Typed::Names(v)) => merge(&mut config.pass_env, v, extend),
        (Key::AllowDomains, Typed::Names(v)) => merge(&mut config.allow_domains, v, extend),
        // Callers build the variant from `key.kind()`, so this cannot happen.
        (key, value) => debug_assert!(false, "{key:?} cannot hold {value:?}"),
    }
}

/// Appends the items not already present, in order.
fn merge<T: PartialEq>(target: &mut Vec<T>, items: Vec<T>, extend: bool) {
    if !extend {
        target.clear();
    }
    for item in items {
        if !target.contains(&item) {
            target.push(item);
        }
    }
}

/// The first port listed as both a local and a callback relay.
pub(crate) fn port_conflict(config: &Config) -> Option<u16> {
    config.callback_ports.iter().copied().find(|p| config.local_ports.contains(p))
}
