//! Lint of a devcontainer.json (JSONC: comments and trailing commas, read
//! with the crate's [`crate::jsonc`] parser): the settings a sandboxed session needs from the
//! container — /dev/net/tun for the egress jail, an unmasked /proc (sessions' own), the
//! feature (or the reference image, or a Dockerfile running
//! sandbox-install) — and a PATH that keeps venvs after the system
//! directories. Pure over the text; `find` locates the file.

use super::{Finding, Severity};
use crate::layout::SHIM_DIR;
use crate::path::is_system;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The published feature, as a user adds it to `features` (major version
/// tag of this release).
const FEATURE_REF: &str = concat!("ghcr.io/agent-sandbox/agent-sandbox/agent-sandbox:", env!("CARGO_PKG_VERSION_MAJOR"));

const CHECK: &str = "devcontainer";

/// `.devcontainer/devcontainer.json` or `.devcontainer.json` in `start` or
/// the nearest ancestor that has one.
pub fn find(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|d| [d.join(".devcontainer/devcontainer.json"), d.join(".devcontainer.json")].into_iter().find(|p| p.is_file()))
}

fn finding(id: &'static str, severity: Severity, message: String, fix: Option<String>) -> Finding {
    Finding { check: CHECK, id, severity, message, fix }
}

/// Lints `text` (the file at `path`); `read` fetches a Dockerfile named by
/// `build.dockerfile`, relative to the file's directory.
pub fn lint(path: &Path, text: &str, read: &dyn Fn(&Path) -> Option<String>) -> Vec<Finding> {
    let shown = path.display();
    let doc: Value = match crate::jsonc::parse_value(text) {
        Ok(v) => v,
        Err(e) => {
            return vec![finding(
                "devcontainer-invalid",
                Severity::Error,
                format!("{shown} cannot be parsed: {e}"),
                Some("fix the syntax (comments and trailing commas are fine)".into()),
            )]
        }
    };
    let Some(obj) = doc.as_object() else {
        return vec![finding("devcontainer-invalid", Severity::Error, format!("{shown} is not a JSON object"), None)];
    };
    let mut out = Vec::new();
    let run_args: Vec<String> =
        obj.get("runArgs").and_then(Value::as_array).map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()).unwrap_or_default();
    let sandbox = sandbox_source(path, obj, read);
    if obj.contains_key("dockerComposeFile") {
        out.push(finding(
            "devcontainer-compose",
            Severity::Info,
            format!("{shown} uses Docker Compose, where runArgs do not apply"),
            Some("give the service `devices: [\"/dev/net/tun:/dev/net/tun\"]` and `security_opt: [\"systempaths=unconfined\", \"seccomp=unconfined\", \"apparmor=unconfined\"]` in the compose file".into()),
        ));
    } else {
        out.extend(run_args_findings(&shown.to_string(), &run_args, sandbox));
    }
    if sandbox == Sandbox::Missing {
        out.push(finding(
            "devcontainer-no-sandbox",
            Severity::Warning,
            format!("{shown} neither uses the agent-sandbox feature or image nor runs sandbox-install in its Dockerfile"),
            Some(format!("add \"{FEATURE_REF}\": {{}} to \"features\"")),
        ));
    }
    for key in ["containerEnv", "remoteEnv"] {
        if let Some(p) = obj.get(key).and_then(|e| e.get(crate::env_vars::PATH)).and_then(Value::as_str) {
            out.extend(path_findings(&shown.to_string(), key, p));
        }
    }
    if out.iter().all(|f| f.severity == Severity::Info) {
        out.push(finding("devcontainer-ok", Severity::Ok, format!("{shown} gives sessions what they need"), None));
    }
    out
}

/// The value of a flag in `args` given as `--flag=V`, `--flag V` or one
/// string `--flag V`.
fn flag_values(args: &[String], flag: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let a = a.trim();
        if let Some(v) = a.strip_prefix(&format!("{flag}=")) {
            out.push(v.trim().to_string());
        } else if let Some(v) = a.strip_prefix(&format!("{flag} ")) {
            out.push(v.trim().to_string());
        } else if a == flag {
            out.extend(args.get(i + 1).map(|v| v.trim().to_string()));
        }
    }
    out
}

/// Where the sandbox comes from: the feature and the reference image ask
/// the engine for the security options sessions need themselves
/// (`securityOpt`), a Dockerfile running sandbox-install cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sandbox {
    FeatureOrImage,
    Dockerfile,
    Missing,
}

fn run_args_findings(shown: &str, args: &[String], sandbox: Sandbox) -> Vec<Finding> {
    let mut out = Vec::new();
    let privileged = args.iter().any(|a| a.trim() == "--privileged");
    let tun = privileged || flag_values(args, "--device").iter().any(|v| v.starts_with("/dev/net/tun"));
    if !tun {
        out.push(finding(
            "devcontainer-no-tun",
            Severity::Error,
            format!("{shown}: runArgs do not pass /dev/net/tun, so the egress jail cannot start and sessions refuse to launch"),
            Some(crate::fixes::TUN.into()),
        ));
    }
    if privileged || sandbox == Sandbox::FeatureOrImage {
        return out;
    }
    let opts = flag_values(args, "--security-opt");
    let has = |want: &str| opts.iter().any(|v| v == want || v.replace(':', "=") == want);
    if !(has("systempaths=unconfined") || opts.iter().any(|v| v.starts_with("unmask="))) {
        out.push(finding(
            "devcontainer-proc-masked",
            Severity::Warning,
            format!(
                "{shown}: the container's /proc keeps the runtime's masked paths, so sessions get the container's /proc instead of their own: \
                 they see the container's processes (not their environments, memory or files; docs/defences.md, \"Under a masked /proc\")"
            ),
            Some(crate::fixes::PROC.into()),
        ));
    }
    let missing: Vec<&str> = ["seccomp=unconfined", "apparmor=unconfined"].into_iter().filter(|o| !has(o)).collect();
    if !missing.is_empty() {
        let lines: Vec<String> = missing.iter().map(|o| format!("\"--security-opt={o}\"")).collect();
        out.push(finding(
            "devcontainer-docker-confined",
            Severity::Warning,
            format!(
                "{shown}: runArgs do not pass {}, so on Docker sessions refuse to launch (Docker's default seccomp profile refuses bubblewrap's user namespaces; its AppArmor profile, on Ubuntu hosts and Codespaces, refuses its mounts); podman's defaults allow both",
                missing.join(" or ")
            ),
            Some(format!("add {} to \"runArgs\" (sessions load their own seccomp filter), or use the agent-sandbox feature, which asks for them itself", lines.join(" and "))),
        ));
    }
    out
}

fn sandbox_source(path: &Path, obj: &serde_json::Map<String, Value>, read: &dyn Fn(&Path) -> Option<String>) -> Sandbox {
    let feature = obj.get("features").and_then(Value::as_object).is_some_and(|f| f.keys().any(|k| k.contains("agent-sandbox")));
    let image = obj.get("image").and_then(Value::as_str).is_some_and(|i| i.contains("agent-sandbox"));
    let dockerfile = obj
        .get("build")
        .and_then(|b| b.get("dockerfile").or_else(|| b.get("dockerFile")))
        .or_else(|| obj.get("dockerFile"))
        .and_then(Value::as_str)
        .map(|d| path.parent().unwrap_or(Path::new(".")).join(d));
    let installs = dockerfile.as_deref().and_then(read).is_some_and(|t| t.contains("sandbox-install"));
    if feature || image {
        Sandbox::FeatureOrImage
    } else if installs {
        Sandbox::Dockerfile
    } else {
        Sandbox::Missing
    }
}

/// A PATH value's entries; `:` inside `${...}` (`${containerEnv:PATH}`)
/// does not separate.
fn split_path_value(value: &str) -> Vec<&str> {
    let (mut out, mut start, mut depth) = (Vec::new(), 0, 0usize);
    let bytes = value.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'{' if i > 0 && bytes[i - 1] == b'$' => depth += 1,
            b'}' if depth > 0 => depth -= 1,
            b':' if depth == 0 => {
                out.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&value[start..]);
    out
}

/// PATH in containerEnv/remoteEnv: entries before the existing PATH (or
/// before the system directories) that are not system directories.
fn path_findings(shown: &str, key: &str, value: &str) -> Option<Finding> {
    let entries = split_path_value(value);
    let is_ref = |e: &str| matches!(e, "${containerEnv:PATH}" | "${localEnv:PATH}" | "${remoteEnv:PATH}" | "$PATH" | "${PATH}");
    let Some(first) = entries.iter().position(|e| is_ref(e) || is_system(e)) else {
        return Some(finding(
            "devcontainer-path-replaced",
            Severity::Warning,
            format!("{shown}: {key}.PATH replaces PATH without the system directories"),
            Some(format!("keep the existing PATH first: \"PATH\": \"${{containerEnv:PATH}}:{value}\"")),
        ));
    };
    let ahead: Vec<&str> = entries[..first].iter().copied().filter(|e| !e.is_empty() && *e != SHIM_DIR).collect();
    if ahead.is_empty() {
        return None;
    }
    let rest: Vec<&str> = entries.iter().copied().filter(|e| !ahead.contains(e)).collect();
    Some(finding(
        "devcontainer-path-prepend",
        Severity::Warning,
        format!(
            "{shown}: {key}.PATH puts {} before the system directories; a command a session leaves there would shadow system commands in every shell outside the sandbox",
            ahead.join(", ")
        ),
        Some(format!("append it instead: \"PATH\": \"{}:{}\"", rest.join(":"), ahead.join(":"))),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_values_split_outside_substitutions() {
        assert_eq!(split_path_value("${containerEnv:PATH}:/opt/venv/bin"), vec!["${containerEnv:PATH}", "/opt/venv/bin"]);
        assert_eq!(split_path_value("a:${x:y}:b:"), vec!["a", "${x:y}", "b", ""]);
    }

    #[test]
    fn deep_nesting_is_a_finding_not_a_stack_overflow() {
        let text = format!("{{\"runArgs\": {}", "[".repeat(100_000));
        let got = lint(Path::new("devcontainer.json"), &text, &|_| None);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].id, got[0].severity), ("devcontainer-invalid", Severity::Error));
        assert!(got[0].message.contains("line 1, column") && got[0].message.contains("nested deeper than"), "{}", got[0].message);
    }
}
