//! The text of every file the installer generates, and the edits it makes
//! to files it shares with others (managed blocks, merged settings). Pure
//! functions of their inputs; the planner decides when they are written.

use crate::env_vars::DISABLE_AUTOUPDATER;
use crate::layout::{PROFILE_SCRIPT, SHIM_DIR, SYSTEM_PATH_DIRS};
use std::net::Ipv4Addr;

/// First and last line of a managed block in a shared file.
pub(crate) const BLOCK_BEGIN: &str = "# >>> agent-sandbox >>> (managed by sandbox-install; `sandbox-install --uninstall` removes it)";
pub(crate) const BLOCK_END: &str = "# <<< agent-sandbox <<<";

/// Values the installer writes into a new default configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConfigSeed {
    pub egress_jail: Option<bool>,
    pub allow_ip: Vec<Ipv4Addr>,
    /// `allowDomains` entries, already normalised (`config::domains::normalise`).
    pub allow_domains: Vec<String>,
    pub local_ports: Vec<u16>,
    pub callback_ports: Vec<u16>,
    pub no_forge: Option<bool>,
}

/// The default `/etc/agent-sandbox/config.json5`: every key documented,
/// the seeded ones set, the rest commented out at their defaults.
pub(crate) fn default_config(seed: &ConfigSeed) -> String {
    let list = |v: Vec<String>| format!("[{}]", v.join(", "));
    let line = |set: bool, key: &str, value: String, doc: &str| {
        let lead = if set { "  " } else { "  // " };
        let setting = format!("{key}: {value},");
        format!("{lead}{setting:<28} // {doc}\n")
    };
    let mut s = String::from(
        "// agent-sandbox configuration, written by sandbox-install (see docs/config.md).\n\
         // Root-owned and never read from the workspace. JSON5: comments and trailing\n\
         // commas are fine. Unset keys take the defaults shown in the comments.\n{\n",
    );
    s += &line(seed.egress_jail.is_some(), "egressJail", seed.egress_jail.unwrap_or(true).to_string(), "egress jail: own network namespace behind pasta");
    s += &line(
        !seed.allow_ip.is_empty(),
        "allowIp",
        list(seed.allow_ip.iter().map(|ip| format!("\"{ip}\"")).collect()),
        "IPv4 addresses reachable despite the jail's blocked ranges",
    );
    s += &line(
        !seed.allow_domains.is_empty(),
        "allowDomains",
        list(seed.allow_domains.iter().map(|d| format!("\"{d}\"")).collect()),
        "if set, only these names (\"*.github.com\", \"@agents\", \"@registries\") are reachable",
    );
    s += &line(
        !seed.local_ports.is_empty(),
        "localPorts",
        list(seed.local_ports.iter().map(u16::to_string).collect()),
        "jail's 127.0.0.1:P reaches the container's 127.0.0.1:P",
    );
    s += &line(
        !seed.callback_ports.is_empty(),
        "callbackPorts",
        list(seed.callback_ports.iter().map(u16::to_string).collect()),
        "container's 127.0.0.1:P reaches the agent (OAuth logins)",
    );
    s += &line(seed.no_forge.is_some(), "noForge", seed.no_forge.unwrap_or(false).to_string(), "hide forge tokens and credential helpers");
    s += &line(false, "peers", "false".into(), "sibling checkouts readable");
    s += &line(false, "allowWrite", "[]".into(), "extra writable absolute paths");
    s += &line(false, "allowDevice", "[]".into(), "device nodes under /dev passed in");
    s += &line(false, "gpu", "false".into(), "NVIDIA/DRI devices");
    s += &line(false, "passEnv", "[]".into(), "extra variable names passed in");
    s += "  // workspaceRoot: \"/workspaces/project\", // the writable workspace (default: the current directory)\n}\n";
    s
}

/// `/etc/profile.d/agent-sandbox.sh`: POSIX sh, sourced by login shells and
/// (through managed blocks) by interactive ones. Puts the shim directory
/// first, then the system directories, then everything else in its old
/// order: a venv or a user's bin directory is kept, but after the system.
/// For root (`[ -O / ]`: the shell's effective user owns /) the rest keeps
/// only directories that root owns and no one else can write, all the way
/// up: "after the system directories" protects only the names those have,
/// and root would run whatever a user planted under any other name.
pub(crate) fn profile_script() -> String {
    let system = SYSTEM_PATH_DIRS.join("|");
    format!(
        r#"# agent-sandbox: keep the sandbox shims first and system directories ahead of
# venvs and user-writable directories on PATH; root keeps no directory another
# user can write. Installed by sandbox-install (docs/install.md);
# `sandbox-install --uninstall` removes it.
_as_trusted() {{
  _as_p=$1
  while [ -n "$_as_p" ]; do
    [ -O "$_as_p" ] || return 1
    case $(ls -ldnL -- "$_as_p" 2>/dev/null) in
      d????w????* | d???????w?*) return 1 ;;
      d*) ;;
      *) return 1 ;;
    esac
    _as_p=${{_as_p%/*}}
  done
}}
_as_sys= _as_rest= _as_ifs=$IFS _as_root=
[ -O / ] && _as_root=1
IFS=:
for _as_d in $PATH; do
  case "$_as_d" in
    ''|{shim}) ;;
    {system})
      case ":$_as_sys:" in *":$_as_d:"*) ;; *) _as_sys=$_as_sys${{_as_sys:+:}}$_as_d ;; esac ;;
    *)
      if [ -n "$_as_root" ]; then
        case "$_as_d" in /*) _as_trusted "$_as_d" || continue ;; *) continue ;; esac
      fi
      case ":$_as_rest:" in *":$_as_d:"*) ;; *) _as_rest=$_as_rest${{_as_rest:+:}}$_as_d ;; esac ;;
  esac
done
IFS=$_as_ifs
PATH={shim}${{_as_sys:+:$_as_sys}}${{_as_rest:+:$_as_rest}}
export PATH
unset _as_sys _as_rest _as_ifs _as_d _as_p _as_root
unset -f _as_trusted
"#,
        shim = SHIM_DIR,
    )
}

/// The body of the managed block that sources the profile snippet from a
/// shell's rc file. zsh does not split words like sh, so it runs it in sh
/// emulation.
pub(crate) fn source_block(zsh: bool) -> String {
    if zsh {
        format!("[ -r {PROFILE_SCRIPT} ] && emulate sh -c '. {PROFILE_SCRIPT}'\n")
    } else {
        format!("[ -r {PROFILE_SCRIPT} ] && . {PROFILE_SCRIPT}\n")
    }
}

/// The managed block's full text, markers included.
pub fn block(body: &str) -> String {
    format!("{BLOCK_BEGIN}\n{body}{BLOCK_END}\n")
}

/// Where a managed block sits in `text`: the byte range of its lines,
/// including a separating blank line the installer added before it.
fn block_range(text: &str) -> Option<(usize, usize)> {
    let begin = text.find(&format!("{BLOCK_BEGIN}\n")).or_else(|| find_line_start(text, "# >>> agent-sandbox >>>"))?;
    let end_rel = text[begin..].find(&format!("{BLOCK_END}\n"))?;
    let end = begin + end_rel + BLOCK_END.len() + 1;
    Some((begin, end))
}

fn find_line_start(text: &str, prefix: &str) -> Option<usize> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with(prefix) {
            return Some(at);
        }
        at += line.len();
    }
    None
}

/// `text` with the managed block set to `body` (appended when absent; a
/// newline is added first if the file does not end with one).
pub(crate) fn with_block(text: &str, body: &str) -> String {
    let want = block(body);
    match block_range(text) {
        Some((b, e)) => format!("{}{want}{}", &text[..b], &text[e..]),
        None if text.is_empty() || text.ends_with('\n') => format!("{text}{want}"),
        None => format!("{text}\n{want}"),
    }
}

/// `text` without the managed block (for uninstall when the file changed
/// since: the user's other edits stay).
pub(crate) fn without_block(text: &str) -> String {
    match block_range(text) {
        Some((b, e)) => format!("{}{}", &text[..b], &text[e..]),
        None => text.to_string(),
    }
}

/// Claude Code's managed settings with the auto-updater off, merged into an
/// existing file's JSON object (other keys kept). Err: the existing text is
/// not a JSON object (it is left alone then).
pub(crate) fn claude_managed(existing: Option<&str>) -> Result<String, String> {
    let mut root = match existing {
        None => serde_json::Map::new(),
        Some(text) if text.trim().is_empty() => serde_json::Map::new(),
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => return Err("it is not a JSON object".into()),
            Err(e) => return Err(format!("it is not valid JSON ({e})")),
        },
    };
    let env = root.entry("env").or_insert_with(|| serde_json::Value::Object(Default::default()));
    let Some(env) = env.as_object_mut() else { return Err("its \"env\" is not an object".into()) };
    if env.get(DISABLE_AUTOUPDATER).and_then(|v| v.as_str()) == Some("1") {
        // Already off: keep the file byte for byte.
        if let Some(text) = existing {
            return Ok(text.to_string());
        }
    }
    env.insert(DISABLE_AUTOUPDATER.into(), "1".into());
    let mut out = serde_json::to_string_pretty(&serde_json::Value::Object(root)).map_err(|e| e.to_string())?;
    out.push('\n');
    Ok(out)
}

/// Codex's system config with `check_for_update_on_startup = false`. A
/// top-level key must precede every table, so it goes first; an existing
/// setting of the key is left as it is. Err: the key is set to another value.
pub(crate) fn codex_system(existing: Option<&str>) -> Result<String, String> {
    const KEY: &str = "check_for_update_on_startup";
    let text = existing.unwrap_or("");
    for line in text.lines() {
        let l = line.trim_start();
        if l.starts_with('[') {
            break;
        }
        if let Some(rest) = l.strip_prefix(KEY) {
            let value = rest.trim_start().strip_prefix('=').map(|v| v.split('#').next().unwrap_or("").trim());
            if value == Some("false") {
                return Ok(text.to_string());
            }
            if value.is_some() {
                return Err(format!("it sets {KEY} to {}", value.unwrap_or("")));
            }
        }
    }
    let head = format!("# Written by sandbox-install: the sandbox keeps binaries read-only, so no updater.\n{KEY} = false\n");
    Ok(if text.is_empty() { head } else { format!("{head}\n{text}") })
}

/// The SHA-256 of what the installer wrote: tells whether a file still
/// holds it (uninstall removes only unchanged files).
pub fn hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(bytes);
    let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests;
