//! What an item would run, in one line, for the report.

use super::gitcfg;
use super::kinds::Kind;
use super::walk::{Entry, Ty};
use crate::nofollow::ReadError;

/// At most a line of text, for display; control characters (a session's
/// escape sequences) shown escaped.
pub(super) fn summary(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let safe = shown(&one);
    if safe.chars().count() > 120 {
        format!("{}…", safe.chars().take(119).collect::<String>())
    } else {
        safe
    }
}

/// Text from the workspace (names, contents) as it may reach a terminal:
/// control characters (escape sequences) and the invisible or reordering
/// format characters (bidirectional overrides, zero-width) escaped.
pub(super) fn shown(text: &str) -> String {
    let hidden = |c: char| c.is_control() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}');
    text.chars().flat_map(|c| if hidden(c) { c.escape_unicode().collect::<Vec<_>>() } else { vec![c] }).collect()
}

/// What a symlink or special file where `expected` belongs does.
pub(super) fn special(e: &Entry, expected: Option<Kind>) -> String {
    let what = match (&e.target, e.ty) {
        (Some(t), Ty::Symlink) => format!("a symbolic link to {}", summary(t)),
        (_, ty) => ty.describe().to_string(),
    };
    let place = expected.filter(|k| *k != Kind::SpecialFile).map_or("code".to_string(), |k| format!("a {} file", k.name()));
    format!("{what} where {place} is expected (review never follows or opens it)")
}

/// Executables up to this size are read to show their first line.
pub(super) const SHOWN_SCRIPT: u64 = 64 << 10;

/// What an agent-settings file runs or allows, in one line.
pub(super) fn items(items: &[super::settings::Item]) -> String {
    if items.is_empty() {
        return "no setting that runs commands".into();
    }
    let lines: Vec<String> = items.iter().map(super::settings::Item::line).collect();
    summary(&lines.join("; "))
}

/// An executable: its set-id bits, then a script's first line or its size.
fn executable(e: &Entry, content: Option<&Result<std::rc::Rc<[u8]>, ReadError>>) -> String {
    let ids = match (e.mode() & 0o4000 != 0, e.mode() & 0o2000 != 0) {
        (true, true) => "setuid and setgid, ",
        (true, false) => "setuid, ",
        (false, true) => "setgid, ",
        _ => "",
    };
    let what = match content {
        Some(Ok(b)) if !b.iter().take(8000).any(|c| *c == 0) => first_line(&String::from_utf8_lossy(b)),
        _ => format!("{} bytes, mode {:o}", e.meta.size, e.mode()),
    };
    format!("{ids}{what}")
}

pub(super) fn runs(key: &str, e: &Entry, kind: Kind, content: Option<&Result<std::rc::Rc<[u8]>, ReadError>>) -> String {
    if let Some(why) = &e.unreadable {
        return format!("cannot be read ({why}): nothing in it was reviewed");
    }
    if e.ty == Ty::Symlink {
        return format!("symbolic link to {}", summary(e.target.as_deref().unwrap_or("?")));
    }
    if kind.bulk() {
        return String::new();
    }
    if kind == Kind::Executable {
        return executable(e, content);
    }
    let bytes = match content {
        Some(Ok(b)) => b,
        Some(Err(err)) => return err.to_string(),
        None => return String::new(),
    };
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return format!("binary, {} bytes", bytes.len());
    }
    let text = String::from_utf8_lossy(bytes);
    let name = key.rsplit('/').next().unwrap_or(key);
    match kind {
        Kind::GitConfig => git_config(&text),
        Kind::PythonStartup if name.ends_with(".pth") => pth(&text),
        Kind::PackageManager if name == "package.json" => package_scripts(&text),
        Kind::Devcontainer if name.ends_with(".json") => devcontainer(&text),
        Kind::DirenvApproval => format!("approves {}", summary(text.lines().next().unwrap_or(""))),
        Kind::BuildFile if name.contains("akefile") || name.ends_with(".mk") => recipe(&text),
        Kind::ToolConfig
        | Kind::ShellInit
        | Kind::DevEnvironment
        | Kind::EnvLoader
        | Kind::PythonProject
        | Kind::RubyProject
        | Kind::PhpProject
        | Kind::GoModule
        | Kind::DotnetProject
        | Kind::JvmBuild => telling_line(&text),
        _ => first_line(&text),
    }
}

/// Words on a config's line that say it runs or loads something.
const TELLING: &[&str] = &[
    "init-hook",
    "load-plugins",
    "plugins",
    "require",
    "import",
    "exec",
    "system(",
    "spawn",
    "bootstrap",
    "setupfiles",
    "toolchain",
    "replace ",
    "--index-url",
    "--extra-index-url",
    "--trusted-host",
    "-e ",
    "url",
    "source",
    "command",
    "script",
    "local(",
    "shell",
    "hook",
];

/// A config's first line that names what it runs or loads, else its first
/// meaningful line.
fn telling_line(text: &str) -> String {
    let hit = text.lines().map(str::trim).find(|l| {
        let lower = l.to_ascii_lowercase();
        !l.is_empty() && !l.starts_with('#') && !l.starts_with("//") && TELLING.iter().any(|w| lower.contains(w))
    });
    hit.map_or_else(|| first_line(text), summary)
}

fn first_line(text: &str) -> String {
    let meaningful = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"));
    summary(meaningful.or_else(|| text.lines().find(|l| !l.trim().is_empty())).unwrap_or("(empty)"))
}

/// A Makefile's first recipe line says more than its first target.
fn recipe(text: &str) -> String {
    match text.lines().find(|l| l.starts_with('\t') && !l.trim().is_empty()) {
        Some(l) => summary(l),
        None => first_line(text),
    }
}

fn git_config(text: &str) -> String {
    let run: Vec<String> = gitcfg::entries(text).iter().filter(|e| e.runs_command()).map(|e| format!("{} = {}", e.name(), e.value)).collect();
    if run.is_empty() {
        "no keys that run commands".into()
    } else {
        summary(&run.join("; "))
    }
}

/// A .pth file runs its `import` lines at every interpreter start; the
/// rest only extends sys.path.
fn pth(text: &str) -> String {
    let code: Vec<&str> = text.lines().filter(|l| l.starts_with("import ") || l.starts_with("import\t")).collect();
    if code.is_empty() {
        "adds paths to sys.path".into()
    } else {
        summary(&code.join("; "))
    }
}

/// npm runs these without being asked, on install.
const LIFECYCLE_SCRIPTS: &[&str] = &["preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare", "prepublish"];

fn package_scripts(text: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else { return "not valid JSON".into() };
    let Some(scripts) = v.get("scripts").and_then(|s| s.as_object()) else { return "no scripts".into() };
    let auto: Vec<String> =
        scripts.iter().filter(|(k, _)| LIFECYCLE_SCRIPTS.contains(&k.as_str())).map(|(k, c)| format!("{k}: {}", c.as_str().unwrap_or(""))).collect();
    if auto.is_empty() {
        summary(&format!("scripts: {}", scripts.keys().cloned().collect::<Vec<_>>().join(", ")))
    } else {
        summary(&auto.join("; "))
    }
}

fn devcontainer(text: &str) -> String {
    let Ok(v) = crate::jsonc::parse_value(text) else { return first_line(text) };
    match v.get("initializeCommand") {
        Some(cmd) => summary(&format!("initializeCommand (on the host): {}", cmd.as_str().map_or_else(|| cmd.to_string(), str::to_string))),
        None => "container definition (image, mounts, runArgs, features, lifecycle commands)".into(),
    }
}
