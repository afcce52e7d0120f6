//! Environment overrides: `AGENT_SANDBOX_<KEY>` (alias `CLAUDE_SANDBOX_<KEY>`;
//! the AGENT_ name wins when both are set). A scalar replaces the file's
//! value; a list adds to the file's list. The environment arrives as a map,
//! never read from the process here. Unknown `AGENT_SANDBOX_*` variables
//! belong to other parts of the product and are ignored.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use super::error::{At, ConfigError, Origin};
use super::keys::{ItemKind, Key, Kind};
use super::validate;
use super::value::{self, Typed};
use super::{Config, EnvMap, Source};

/// Applies every config variable present in `env`, updating `sources`.
pub(crate) fn apply_env(config: &mut Config, sources: &mut BTreeMap<&'static str, Source>, env: &EnvMap) -> Result<(), ConfigError> {
    let mut port_vars: Vec<(u16, At)> = Vec::new();
    for key in Key::ALL {
        let Some((var, text)) = lookup(env, key)? else {
            continue;
        };
        let at = At { origin: Origin::Env { var: var.to_string() }, key: key.name() };
        let typed = typed(key, text, &at)?;
        if let Typed::Ports(ports) = &typed {
            port_vars.extend(ports.iter().map(|p| (*p, at.clone())));
        }
        if typed_is_empty(&typed) {
            continue;
        }
        value::assign(config, key, typed, matches!(key.kind(), Kind::List(_)));
        record(sources, key, var);
    }
    check_port_conflict(config, &port_vars)
}

/// The AGENT_ variable if set, else the CLAUDE_ alias.
fn lookup(env: &EnvMap, key: Key) -> Result<Option<(&'static str, &str)>, ConfigError> {
    for var in [key.env_var(), key.alias_var()] {
        if let Some(value) = env.get(OsStr::new(var)) {
            let text = value.to_str().ok_or_else(|| ConfigError::NotUtf8 { var: var.to_string() })?;
            return Ok(Some((var, text)));
        }
    }
    Ok(None)
}

fn typed(key: Key, text: &str, at: &At) -> Result<Typed, ConfigError> {
    match key.kind() {
        Kind::Bool => parse_bool(text).map(Typed::Bool).ok_or_else(|| ConfigError::BadBool { at: at.clone(), value: text.to_string() }),
        Kind::Path => validate::abs_path(text.trim()).map(Typed::Path).map_err(|e| e.at(at.clone())),
        Kind::List(kind) => {
            let items = split(kind, text).map(|item| (item, at.clone())).collect();
            value::text_list(kind, items)
        }
    }
}

/// 1/0, true/false, yes/no, on/off, any case. Anything else (including an
/// empty value) is an error: these switch defences off, so no guessing.
fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Paths split on `:` (as in PATH) or `,`; other lists on `,` or
/// whitespace. Empty items are skipped.
fn split(kind: ItemKind, text: &str) -> impl Iterator<Item = &str> {
    let is_path = matches!(kind, ItemKind::Path | ItemKind::RootOwnedPath | ItemKind::Device);
    text.split(move |c: char| if is_path { c == ':' || c == ',' } else { c == ',' || c.is_whitespace() }).map(str::trim).filter(|item| !item.is_empty())
}

/// An empty list variable adds nothing, so it is not a source either.
fn typed_is_empty(typed: &Typed) -> bool {
    match typed {
        Typed::Ips(v) => v.is_empty(),
        Typed::Ports(v) => v.is_empty(),
        Typed::Paths(v) => v.is_empty(),
        Typed::Names(v) => v.is_empty(),
        Typed::Bool(_) | Typed::Path(_) => false,
    }
}

/// A scalar now comes from `var`; a file list becomes file + `var`.
fn record(sources: &mut BTreeMap<&'static str, Source>, key: Key, var: &str) {
    let var = var.to_string();
    let source = match (key.kind(), sources.remove(key.name())) {
        (Kind::List(_), Some(Source::File { path, line })) => Source::FileAndEnv { path, line, var },
        _ => Source::Env { var },
    };
    sources.insert(key.name(), source);
}

/// The file alone was already checked, so a conflict now involves a port
/// from the environment: blame its variable.
fn check_port_conflict(config: &Config, port_vars: &[(u16, At)]) -> Result<(), ConfigError> {
    let Some(port) = value::port_conflict(config) else {
        return Ok(());
    };
    let at = port_vars
        .iter()
        .rev()
        .find(|(p, _)| *p == port)
        .map(|(_, at)| at.clone())
        .unwrap_or_else(|| At { origin: Origin::Env { var: Key::CallbackPorts.env_var().to_string() }, key: Key::CallbackPorts.name() });
    Err(ConfigError::PortConflict { at, port })
}
