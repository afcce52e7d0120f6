//! Checks of git, entry points, helpers, recursion and inherited
//! descriptors (docs/defences.md, the rows git, entry points, own
//! binaries, recursion and descriptors).

use super::sys::{self, open_for_write, try_create};
use super::Ctx;
use crate::sandbox::plan::ENTRY_POINTS;
use crate::sandbox::SESSION_MARKER;
use crate::Outcome;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub(crate) fn git_config(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    let global = std::env::var_os(crate::env_vars::GIT_CONFIG_GLOBAL).map(PathBuf::from);
    if global.as_deref() != Some(c.spec.git_config.as_path()) {
        bad.push(format!("GIT_CONFIG_GLOBAL is {global:?}, expected {}", c.spec.git_config.display()));
    }
    if std::env::var(crate::env_vars::GIT_CONFIG_NOSYSTEM).as_deref() != Ok("1") {
        bad.push("GIT_CONFIG_NOSYSTEM is not 1".into());
    }
    let text = std::fs::read_to_string(&c.spec.git_config).unwrap_or_default();
    if open_for_write(&c.spec.git_config).is_ok() {
        bad.push(format!("{} is writable", c.spec.git_config.display()));
    }
    let ws = c.spec.workspace.to_string_lossy();
    if !text.lines().any(|l| l.trim() == format!("directory = \"{ws}\"")) {
        bad.push("the session's git config has no safe.directory for the workspace".into());
    }
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            let section = line.trim_matches(|ch| ch == '[' || ch == ']').split_whitespace().next().unwrap_or("");
            if !["user", "safe", "credential"].contains(&section) {
                bad.push(format!("unexpected section [{section}]"));
            }
        }
        if let Some(helper) = line.strip_prefix("helper = \"!").and_then(|h| h.split_whitespace().next()) {
            let ok = crate::sysbin::SYSTEM_DIRS.iter().any(|d| Path::new(helper).parent() == Some(Path::new(d)))
                && ["gh", "glab"].iter().any(|n| helper.ends_with(&format!("/{n}")));
            if !ok || c.spec.no_forge {
                bad.push(format!("credential helper {helper} is not allowed"));
            }
        }
    }
    bad.extend(git_scopes(c));
    Outcome::from_problems(bad)
}

/// What the system git itself reads: nothing from the system scope, and
/// global values only from the curated file.
fn git_scopes(c: &Ctx) -> Vec<String> {
    let Ok(git) = crate::sysbin::find("git", "") else { return Vec::new() };
    let Ok(out) =
        Command::new(&git).args(["config", "--list", "--show-origin", "--show-scope"]).current_dir("/").stdin(Stdio::null()).stderr(Stdio::null()).output()
    else {
        return Vec::new();
    };
    let want = format!("file:{}", c.spec.git_config.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let (scope, origin) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
            match scope {
                "system" => Some(format!("git reads system config from {origin}")),
                "global" if origin != want => Some(format!("git reads global config from {origin}")),
                _ => None,
            }
        })
        .take(4)
        .collect()
}

/// In every directory a shell would search for the entry points — this
/// session's PATH before the launcher's directory, and the directories the
/// user's start-up files name — that the session can write: the names are
/// empty read-only files, and neither the directory nor any writable one
/// above it can be renamed away (and replaced by one holding a plant).
pub(crate) fn entry_points(c: &Ctx) -> Outcome {
    let path = std::env::var(crate::env_vars::PATH).unwrap_or_default();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in path.split(':').filter(|d| d.starts_with('/')).map(PathBuf::from) {
        if Some(dir.as_path()) == c.spec.launcher_dir.as_deref() {
            break;
        }
        dirs.push(dir);
    }
    dirs.extend(c.spec.shell_dirs.iter().cloned());
    let mut bad = Vec::new();
    let mut guarded = 0;
    for dir in &dirs {
        if !dir.is_dir() || try_create(dir, &c.spec.nonce).is_err() {
            continue;
        }
        guarded += 1;
        for name in ENTRY_POINTS {
            let p = dir.join(name);
            match std::fs::symlink_metadata(&p) {
                Err(_) => bad.push(format!("{} can be planted", p.display())),
                Ok(m) if m.is_file() && m.len() == 0 && m.mode() & 0o111 == 0 && open_for_write(&p).is_err() => {}
                Ok(_) => bad.push(format!("{} is not an empty read-only file", p.display())),
            }
        }
        bad.extend(renamable(dir, &c.spec.nonce));
    }
    if guarded == 0 && bad.is_empty() {
        return Outcome::pass_note("no writable PATH directory precedes the launcher's");
    }
    Outcome::from_problems(bad)
}

/// `dir` and each directory above it whose parent is writable: which of
/// them can be renamed (each is put back at once).
fn renamable(dir: &Path, nonce: &str) -> Vec<String> {
    let mut out = Vec::new();
    for d in dir.ancestors() {
        let Some(parent) = d.parent() else { break };
        if try_create(parent, nonce).is_err() {
            break;
        }
        let aside = parent.join(format!(".agent-sandbox-verify-moved-{nonce}"));
        if std::fs::rename(d, &aside).is_ok() {
            let back = std::fs::rename(&aside, d);
            out.push(format!(
                "{} can be renamed away (and replaced by a directory holding a plant){}",
                d.display(),
                if back.is_err() { format!("; it could not be put back from {}", aside.display()) } else { String::new() }
            ));
        }
    }
    out
}

pub(crate) fn helpers(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for h in &c.spec.helpers {
        if !crate::sysbin::SYSTEM_DIRS.iter().any(|d| h.parent() == Some(Path::new(d))) {
            bad.push(format!("{} is not in a system directory", h.display()));
        }
        if open_for_write(h).is_ok() {
            bad.push(format!("{} is writable", h.display()));
        }
        let mut dir = h.parent();
        while let Some(d) = dir {
            if try_create(d, &c.spec.nonce).is_ok() {
                bad.push(format!("{} is writable (the helper could be swapped)", d.display()));
            }
            dir = d.parent();
        }
    }
    Outcome::from_problems(bad)
}

/// `agent-sandbox run -- <probe> __probe --ns` from inside: it must run
/// directly, in this session's namespaces.
pub(crate) fn recursion(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    let marker = std::fs::read_to_string(SESSION_MARKER).unwrap_or_default();
    if marker.trim() != c.spec.session_id {
        bad.push(format!("the session marker {SESSION_MARKER} does not name this session"));
    }
    let probe = crate::PROBE_PATH;
    let mut child = match Command::new(probe)
        .args(["run", "--agent", &c.spec.agent, "--", probe, crate::PROBE_VERB, "--ns"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(ch) => ch,
        Err(e) => {
            bad.push(format!("cannot run {probe}: {e}"));
            return Outcome::from_problems(bad);
        }
    };
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let out = child.stdout.take().map(|o| {
        let fd = std::os::fd::OwnedFd::from(o);
        sys::read_some(&fd, Duration::from_secs(10))
    });
    let code = crate::child::wait_deadline(pid, Duration::from_secs(10));
    let got = String::from_utf8_lossy(&out.unwrap_or_default()).trim().to_string();
    let want = sys::ns_line();
    match code {
        Ok(0) if got == want => {}
        Ok(0) => bad.push(format!("a nested run started a second sandbox ({got} vs {want})")),
        Ok(n) => bad.push(format!("a nested run exited {n} instead of running directly")),
        Err(e) => bad.push(format!("a nested run {e}")),
    }
    Outcome::from_problems(bad)
}

pub(crate) fn descriptors(c: &Ctx) -> Outcome {
    let extra: Vec<String> = c
        .initial_fds
        .iter()
        .filter(|fd| **fd > 2)
        .map(|fd| {
            let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).map(|t| t.display().to_string()).unwrap_or_default();
            format!("{fd} -> {target}")
        })
        .collect();
    if extra.is_empty() {
        Outcome::pass()
    } else {
        Outcome::fail(format!("inherited descriptors: {}", extra.join(", ")))
    }
}
