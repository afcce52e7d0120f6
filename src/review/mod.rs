//! What a session leaves behind. At session start the launcher records a
//! baseline of the workspace's places that run code later (git hooks and
//! config keys, venv scripts and `.pth` files, editor tasks, Makefiles, the
//! devcontainer definition...), stored under the user's state directory —
//! outside the workspace and hidden from sessions (their home is a tmpfs).
//! `agent-sandbox review` compares the workspace with it.

pub mod collect;
pub mod items;

use items::Item;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub session: String,
    pub workspace: PathBuf,
    /// Seconds since the epoch.
    pub started: u64,
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Added,
    Changed,
    Removed,
    /// Listed without a baseline (`--all`).
    Present,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub change: Change,
    #[serde(flatten)]
    pub item: Item,
    pub when: &'static str,
}

impl Finding {
    /// Whether it needs the user's look (a removal cannot run anything).
    pub fn needs_look(&self) -> bool {
        self.change != Change::Removed
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    #[error("cannot write the session baseline {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("no baseline for session {0} of this workspace; list them with `ls {1}`, or use --all")]
    NoSession(String, String),
}

/// Where baselines live: `$XDG_STATE_HOME/agent-sandbox/baselines`, else
/// `~/.local/state/agent-sandbox/baselines` (not bound into sessions).
pub fn store_dir(home: &Path, xdg_state: Option<&Path>) -> PathBuf {
    let base = match xdg_state {
        Some(p) if p.is_absolute() => p.to_path_buf(),
        _ => home.join(".local/state"),
    };
    base.join("agent-sandbox/baselines")
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The baselines of one workspace live together, so finding and pruning
/// them never reads another workspace's.
fn workspace_dir(dir: &Path, workspace: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    dir.join(&items::sha256_hex(workspace.as_os_str().as_bytes())[..16])
}

/// Records the baseline of `workspace` for `session`.
pub fn record(dir: &Path, session: &str, workspace: &Path) -> Result<Baseline, ReviewError> {
    let b = Baseline { session: session.into(), workspace: workspace.into(), started: now_secs(), items: collect::collect(workspace) };
    let dir = &workspace_dir(dir, workspace);
    let path = dir.join(format!("{session}.json"));
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let bytes = serde_json::to_vec(&b).map_err(std::io::Error::other)?;
        std::fs::write(&path, bytes)
    };
    write().map_err(|source| ReviewError::Write { path, source })?;
    prune(dir, KEEP_BASELINES);
    Ok(b)
}

/// Baselines kept per workspace; older ones are deleted at session start.
pub const KEEP_BASELINES: usize = 20;

fn prune(dir: &Path, keep: usize) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.metadata().ok()?.modified().ok()?, e.path()))
        })
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, p) in &files[..files.len() - keep] {
        let _ = std::fs::remove_file(p);
    }
}

/// The baseline of `session`, or the newest one for `workspace`.
pub fn load(dir: &Path, workspace: &Path, session: Option<&str>) -> Result<Option<Baseline>, ReviewError> {
    let read = |p: &Path| -> Option<Baseline> { serde_json::from_slice(&std::fs::read(p).ok()?).ok() };
    let dir = &workspace_dir(dir, workspace);
    if let Some(id) = session {
        let found = read(&dir.join(format!("{id}.json"))).filter(|b| b.workspace == workspace);
        return found.map(Some).ok_or_else(|| ReviewError::NoSession(id.into(), dir.display().to_string()));
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return Ok(None) };
    Ok(rd
        .filter_map(|e| read(&e.ok()?.path()))
        .filter(|b| b.workspace == workspace)
        .max_by(|a, b| a.started.cmp(&b.started).then_with(|| a.session.cmp(&b.session))))
}

/// What changed since the baseline (or, without one, everything present),
/// most dangerous first.
pub fn diff(baseline: Option<&Baseline>, now: &[Item]) -> Vec<Finding> {
    let finding = |change, item: &Item| Finding { change, when: item.kind.when(), item: item.clone() };
    let mut out: Vec<Finding> = match baseline {
        None => now.iter().map(|i| finding(Change::Present, i)).collect(),
        Some(b) => {
            let mut v = Vec::new();
            for i in now {
                match b.items.iter().find(|o| o.id == i.id) {
                    None => v.push(finding(Change::Added, i)),
                    Some(o) if o.digest != i.digest || o.mode != i.mode => v.push(finding(Change::Changed, i)),
                    Some(_) => {}
                }
            }
            for o in &b.items {
                if !now.iter().any(|i| i.id == o.id) {
                    v.push(finding(Change::Removed, o));
                }
            }
            v
        }
    };
    out.sort_by(|a, b| {
        b.item.kind.danger().cmp(&a.item.kind.danger()).then_with(|| a.item.id.cmp(&b.item.id))
    });
    out
}

/// The one-line hint printed after a session, if it left anything behind.
pub fn hint(findings: &[Finding]) -> Option<String> {
    let look: Vec<&Finding> = findings.iter().filter(|f| f.needs_look()).collect();
    let first = look.first()?;
    Some(format!(
        "agent-sandbox: this session changed {} place(s) that run code outside the sandbox (first: {}, {}); see `agent-sandbox review`",
        look.len(),
        first.item.path,
        first.when
    ))
}

/// The human report.
pub fn render(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "nothing changed in the places that run code outside the sandbox\n".into();
    }
    let mut s = String::new();
    for f in findings {
        let change = format!("{:?}", f.change).to_lowercase();
        s.push_str(&format!("{change:<8} {:<40} {}\n         runs: {}\n", f.item.path, f.when, f.item.runs));
    }
    s
}

#[cfg(test)]
mod tests;
