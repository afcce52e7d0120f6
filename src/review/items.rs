//! The places in a workspace that run code later, outside the sandbox, and
//! how to read them into `Item`s (what runs, when, a digest of it). Only
//! the named places are read — never a walk of the whole tree — so taking
//! a baseline at every session start stays cheap.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What kind of place an item is; decides when it runs and how dangerous
/// an unreviewed change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    DevcontainerHostCommand,
    GitConfigKey,
    GitHook,
    Envrc,
    PthFile,
    VenvShadow,
    VenvActivate,
    VscodeSettings,
    VscodeTask,
    VscodeLaunch,
    Devcontainer,
    PreCommitConfig,
    PackageScript,
    Makefile,
}

impl Kind {
    /// When the item runs, in the user's words.
    pub fn when(self) -> &'static str {
        match self {
            Kind::DevcontainerHostCommand => "on the HOST at the next container rebuild",
            Kind::GitConfigKey => "on git commands (the IDE runs git status on its own)",
            Kind::GitHook => "on git commit/checkout/merge/push",
            Kind::Envrc => "on cd into the workspace (direnv)",
            Kind::PthFile => "at every start of the venv's Python",
            Kind::VenvShadow => "instead of the system command, when the venv is on PATH",
            Kind::VenvActivate => "when the venv is activated",
            Kind::VscodeSettings => "when the editor opens the workspace",
            Kind::VscodeTask => "when an editor task runs",
            Kind::VscodeLaunch => "when the editor starts a debug session",
            Kind::Devcontainer => "at the next container rebuild",
            Kind::PreCommitConfig => "on git commit (pre-commit hooks)",
            Kind::PackageScript => "on npm install / npm run",
            Kind::Makefile => "on make / just",
        }
    }

    /// Higher is worse: host execution and things that run without the
    /// user doing anything come first.
    pub fn danger(self) -> u8 {
        match self {
            Kind::DevcontainerHostCommand => 100,
            Kind::GitConfigKey => 90,
            Kind::GitHook => 85,
            Kind::Envrc => 80,
            Kind::PthFile => 70,
            Kind::VenvShadow => 65,
            Kind::VenvActivate => 60,
            Kind::VscodeSettings => 55,
            Kind::VscodeTask => 50,
            Kind::VscodeLaunch => 45,
            Kind::Devcontainer => 42,
            Kind::PreCommitConfig => 40,
            Kind::PackageScript => 35,
            Kind::Makefile => 30,
        }
    }
}

/// One place that can run code later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// Stable identity across baselines: kind, path and key.
    pub id: String,
    pub kind: Kind,
    /// Relative to the workspace.
    pub path: String,
    /// SHA-256 of what runs (file contents or the key's value).
    pub digest: String,
    /// File permission bits (0 for keys).
    pub mode: u32,
    /// What it would run, shortened.
    pub runs: String,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// At most a line of the command, for display.
pub fn summary(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 120 {
        format!("{}…", one.chars().take(119).collect::<String>())
    } else {
        one
    }
}

pub fn item(kind: Kind, rel: &str, key: Option<&str>, content: &[u8], mode: u32, runs: String) -> Item {
    let id = match key {
        Some(k) => format!("{kind:?}:{rel}:{k}"),
        None => format!("{kind:?}:{rel}"),
    };
    Item { id, kind, path: rel.to_string(), digest: sha256_hex(content), mode, runs }
}

/// A whole file as an item (None when absent or not a regular file).
pub fn file_item(ws: &Path, rel: &str, kind: Kind) -> Option<Item> {
    let path = ws.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&path).ok()?;
        let t = target.to_string_lossy().into_owned();
        return Some(item(kind, rel, None, t.as_bytes(), 0o777, format!("symlink to {t}")));
    }
    if !meta.is_file() {
        return None;
    }
    let bytes = std::fs::read(&path).ok()?;
    let first = String::from_utf8_lossy(&bytes).lines().find(|l| !l.trim().is_empty()).map(summary).unwrap_or_default();
    Some(item(kind, rel, None, &bytes, meta.permissions().mode() & 0o7777, first))
}
