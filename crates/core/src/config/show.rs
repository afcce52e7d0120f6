//! Rendering the effective configuration for `agent-sandbox config show`
//! (a table, or JSON) and `config check` (one line). Pure: text in, text
//! out; printing is the CLI's job.

use serde_json::{json, Map, Value};

use super::keys::Key;
use super::{Config, Effective, Source};

/// A table: key, value, source; preceded by the file consulted.
pub fn render_show(eff: &Effective) -> String {
    let rows: Vec<(&str, String, String)> =
        Key::ALL.into_iter().map(|key| (key.name(), value_text(&eff.config, key), source_of(eff, key).to_string())).collect();
    let key_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    // Long lists would push every source far right; cap the column.
    let value_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0).clamp(5, 40);
    let mut out = format!("config file: {}\n", file_line(eff));
    out.push_str(&format!("{:key_width$}  {:value_width$}  SOURCE\n", "KEY", "VALUE"));
    for (key, value, source) in rows {
        out.push_str(&format!("{key:key_width$}  {value:value_width$}  {source}\n"));
    }
    out
}

/// `{"egressJail": {"value": true, "source": "default"}, ...}`.
pub fn show_json(eff: &Effective) -> Value {
    let map: Map<String, Value> = Key::ALL
        .into_iter()
        .map(|key| {
            let entry = json!({
                "value": value_json(&eff.config, key),
                "source": source_of(eff, key).to_string(),
            });
            (key.name().to_string(), entry)
        })
        .collect();
    Value::Object(map)
}

/// One line for `config check`: the file, and the variables that override it.
pub fn render_check(eff: &Effective) -> String {
    let mut vars: Vec<&str> = eff
        .sources
        .values()
        .filter_map(|s| match s {
            Source::Env { var } | Source::FileAndEnv { var, .. } => Some(var.as_str()),
            _ => None,
        })
        .collect();
    vars.sort_unstable();
    let env = if vars.is_empty() { String::new() } else { format!("; environment overrides: {}", vars.join(", ")) };
    format!("OK: config {}{env}", file_line(eff))
}

fn file_line(eff: &Effective) -> String {
    if eff.file_present {
        format!("{} is valid", eff.path.display())
    } else {
        format!("{} not found, defaults apply", eff.path.display())
    }
}

fn source_of(eff: &Effective, key: Key) -> &Source {
    eff.sources.get(key.name()).unwrap_or(&Source::Default)
}

fn value_text(config: &Config, key: Key) -> String {
    match value_json(config, key) {
        Value::Null => "(unset: the current directory)".to_string(),
        Value::Array(items) if items.is_empty() => "(none)".to_string(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => plain(&other),
    }
}

/// A JSON scalar without string quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn value_json(c: &Config, key: Key) -> Value {
    let paths = |v: &[std::path::PathBuf]| -> Value { v.iter().map(|p| p.to_string_lossy()).collect() };
    match key {
        Key::EgressJail => json!(c.egress_jail),
        Key::AllowIp => c.allow_ip.iter().map(|ip| ip.to_string()).collect(),
        Key::AllowDomains => json!(c.allow_domains),
        Key::LocalPorts => json!(c.local_ports),
        Key::CallbackPorts => json!(c.callback_ports),
        Key::NoForge => json!(c.no_forge),
        Key::Peers => json!(c.peers),
        Key::AllowWrite => paths(&c.allow_write),
        Key::AllowWriteRootOwned => paths(&c.allow_write_root_owned),
        Key::AllowDevice => paths(&c.allow_device),
        Key::Gpu => json!(c.gpu),
        Key::PassEnv => json!(c.pass_env),
        Key::ProtectDevcontainer => json!(c.protect_devcontainer),
        Key::ProtectGitHooks => json!(c.protect_git_hooks),
        Key::ProtectGitConfig => json!(c.protect_git_config),
        Key::ShareToolDirs => json!(c.share_tool_dirs),
        Key::WorkspaceRoot => c.workspace_root.as_ref().map_or(Value::Null, |p| json!(p.to_string_lossy())),
    }
}
