//! The install manifest (`/var/lib/agent-sandbox/install-manifest.json`):
//! what the installer created or changed, with the hash of what it wrote
//! and where the original of a replaced file is kept. Uninstall and later
//! installs undo exactly these entries. Deterministic (no timestamps), so a
//! run that changes nothing leaves it byte for byte.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// A directory the installer created (removed again when empty).
    Dir { path: PathBuf },
    /// A file the installer wrote; `backup` holds the file it replaced.
    File { path: PathBuf, hash: String, backup: Option<PathBuf> },
    /// A symbolic link the installer made.
    Link { path: PathBuf, target: PathBuf, backup: Option<PathBuf> },
    /// A managed block in a shared file; `backup` is the file before the
    /// block was added (None: the installer created the file).
    Block { path: PathBuf, hash: String, backup: Option<PathBuf> },
}

impl Entry {
    pub fn path(&self) -> &Path {
        match self {
            Entry::Dir { path } | Entry::File { path, .. } | Entry::Link { path, .. } | Entry::Block { path, .. } => path,
        }
    }

    pub fn backup(&self) -> Option<&Path> {
        match self {
            Entry::Dir { .. } => None,
            Entry::File { backup, .. } | Entry::Link { backup, .. } | Entry::Block { backup, .. } => backup.as_deref(),
        }
    }
}

/// Packages the installer installed (not ones that were already there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packages {
    pub manager: String,
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The agents whose shims and settings are installed.
    pub agents: Vec<String>,
    /// The remote user the installation was made for, if any.
    pub user: Option<String>,
    /// Whether the installer created the state directory itself.
    pub(crate) state_dir_created: bool,
    /// In the order they were made; undone in reverse.
    pub entries: Vec<Entry>,
    pub packages: Option<Packages>,
}

impl Manifest {
    pub fn empty(state_dir_created: bool) -> Manifest {
        Manifest { format: FORMAT, agents: Vec::new(), user: None, state_dir_created, entries: Vec::new(), packages: None }
    }

    pub fn find(&self, path: &Path) -> Option<&Entry> {
        self.entries.iter().find(|e| e.path() == path)
    }

    /// Adds or replaces the entry for its path (keeping its position).
    pub fn record(&mut self, entry: Entry) {
        match self.entries.iter_mut().find(|e| e.path() == entry.path()) {
            Some(slot) => *slot = entry,
            None => self.entries.push(entry),
        }
    }

    pub(crate) fn forget(&mut self, path: &Path) {
        self.entries.retain(|e| e.path() != path);
    }

    pub(crate) fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    pub fn from_json(text: &str) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if m.format != FORMAT {
            return Err(format!("unknown manifest format {}", m.format));
        }
        Ok(m)
    }
}
