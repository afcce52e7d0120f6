//! The installer's plan: a pure function from the options and the observed
//! facts to every change the installer will make (`InstallPlan`), tested as
//! a whole value. One executor (`exec.rs`) applies it; `--dry-run` prints it.
//!
//! Rules that keep runs repeatable and reversible:
//! 1. Only differences become steps: a second run plans nothing.
//! 2. A file that was not ours is backed up before it is replaced; the
//!    manifest remembers the backup, and undo restores it.
//! 3. Files shared with others (shell rc files, agent settings) are edited,
//!    not replaced: a managed block, or a merged key.
//! 4. Manifest entries no longer wanted (an agent dropped from `--agents`)
//!    are undone exactly like an uninstall would.
//! 5. Undo only removes or restores what still holds what the installer
//!    wrote; anything changed since is kept and reported.

use super::content::{self, ConfigSeed};
use super::error::InstallError;
use super::facts::{Facts, ManifestState, Observed};
use super::manifest::{Entry, Manifest, Packages};
use super::packages::Manager;
use super::users::User;
use crate::agents::{Agent, StateKind};
use crate::layout::*;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

pub(super) const ROOT: Owner = Owner { uid: 0, gid: 0 };

/// What a written file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Content {
    /// A copy of a file on this machine (the binaries).
    Copy {
        from: PathBuf,
        len: u64,
        hash: String,
    },
    Text {
        text: String,
    },
}

impl Content {
    pub fn hash(&self) -> String {
        match self {
            Content::Copy { hash, .. } => hash.clone(),
            Content::Text { text } => content::hash(text.as_bytes()),
        }
    }
}

/// One change. Paths are logical (as the installed system sees them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    MakeDir {
        path: PathBuf,
        mode: u32,
        owner: Option<Owner>,
    },
    /// Replace (or create) a file; `backup`: copy the current one there first.
    Write {
        path: PathBuf,
        content: Content,
        mode: u32,
        owner: Option<Owner>,
        backup: Option<PathBuf>,
    },
    /// Fix mode and owner of a file that already holds the right content.
    SetMode {
        path: PathBuf,
        mode: u32,
        owner: Option<Owner>,
    },
    Symlink {
        path: PathBuf,
        target: PathBuf,
        backup: Option<PathBuf>,
    },
    Remove {
        path: PathBuf,
    },
    /// Put the backup back in place (and drop it).
    Restore {
        path: PathBuf,
        backup: PathBuf,
    },
    /// Remove a directory if it is empty.
    RemoveDir {
        path: PathBuf,
    },
    InstallPackages {
        manager: Manager,
        packages: Vec<String>,
    },
    RemovePackages {
        manager: Manager,
        packages: Vec<String>,
    },
    WriteManifest,
    /// The manifest, the emptied backup tree, and the state directory if
    /// the installer made it.
    RemoveState,
}

/// How a step changes the manifest once it succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Record {
    None,
    Add { entry: Entry },
    Forget { path: PathBuf },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub action: Action,
    pub record: Record,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    pub level: Level,
    pub text: String,
}

/// What the installer was asked to do (already validated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Request {
    pub agents: Vec<Agent>,
    pub uninstall: bool,
    pub no_deps: bool,
    /// `--root DIR`: staging (no packages, no probes).
    pub staged: bool,
    pub seed: ConfigSeed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallPlan {
    pub uninstall: bool,
    pub agents: Vec<String>,
    pub user: Option<String>,
    pub steps: Vec<Step>,
    pub notes: Vec<Note>,
    /// The manifest once every step has succeeded (None after uninstall).
    pub manifest: Option<Manifest>,
}

impl InstallPlan {
    pub(crate) fn up_to_date(&self) -> bool {
        self.steps.is_empty()
    }
}

/// Every path the planner may ask `Facts` about (ancestors are added by
/// the gatherer).
pub(super) fn paths_of_interest(user: Option<&User>, manifest: Option<&Manifest>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        LIB_DIR,
        SHIM_DIR,
        BINARY,
        INSTALLER,
        EXEC_LINK_DIR,
        PROFILE_DIR,
        PROFILE_SCRIPT,
        BASH_RC,
        ZSH_RC,
        CONFIG_DIR,
        CONFIG_FILE,
        CLAUDE_DIR,
        CLAUDE_MANAGED,
        CODEX_DIR,
        CODEX_SYSTEM,
        STATE_DIR,
        MANIFEST,
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for name in crate::agents::ALL.iter().map(|a| a.binary()).chain(LINKED_COMMANDS.iter().copied()) {
        v.push(Path::new(SHIM_DIR).join(name));
        v.push(Path::new(EXEC_LINK_DIR).join(name));
    }
    if let Some(u) = user {
        v.push(u.home.clone());
        for rc in USER_RC_FILES {
            v.push(u.home.join(rc.0));
        }
        for a in crate::agents::ALL {
            v.extend(a.state_paths(&u.home).into_iter().map(|(p, _)| p));
        }
    }
    for e in manifest.map(|m| m.entries.as_slice()).unwrap_or_default() {
        v.push(e.path().to_path_buf());
        v.extend(e.backup().map(Path::to_path_buf));
    }
    v
}

/// A remote user's shell start-up files that get the managed block (when
/// they exist): Debian's ~/.profile prepends ~/.local/bin, after the
/// system-wide snippet ran. (file, zsh syntax)
const USER_RC_FILES: &[(&str, bool)] = &[(".profile", false), (".bashrc", false), (".zshrc", true)];

/// Plans an install or an uninstall.
pub(super) fn plan(req: &Request, facts: &Facts) -> Result<InstallPlan, InstallError> {
    let old = match &facts.manifest {
        ManifestState::Absent => None,
        ManifestState::Valid(m) => Some(m),
        ManifestState::Invalid(why) => return Err(InstallError::Manifest { path: MANIFEST.into(), why: why.clone() }),
    };
    let root_owner = facts.can_chown.then_some(ROOT);
    let state_dir_created = old.map_or(!facts.exists(Path::new(STATE_DIR)), |m| m.state_dir_created);
    let mut p = Planner {
        facts,
        old,
        manifest: old.cloned().unwrap_or_else(|| Manifest::empty(state_dir_created)),
        steps: Vec::new(),
        notes: Vec::new(),
        desired: BTreeSet::new(),
        made: BTreeSet::new(),
        root_owner,
    };
    if req.uninstall {
        return Ok(p.uninstall(req));
    }
    p.install(req)?;
    Ok(p.finish(req))
}

struct Planner<'a> {
    facts: &'a Facts,
    old: Option<&'a Manifest>,
    /// The manifest as it will be after the steps so far.
    manifest: Manifest,
    steps: Vec<Step>,
    notes: Vec<Note>,
    /// Paths this install wants to exist (everything else in the old
    /// manifest is undone).
    desired: BTreeSet<PathBuf>,
    /// Directories created by earlier steps.
    made: BTreeSet<PathBuf>,
    root_owner: Option<Owner>,
}

fn owner_matches(want: Option<Owner>, uid: u32, gid: u32) -> bool {
    want.is_none_or(|o| o.uid == uid && o.gid == gid)
}

impl Planner<'_> {
    fn push(&mut self, action: Action, record: Record) {
        match &record {
            Record::None => {}
            Record::Add { entry } => self.manifest.record(entry.clone()),
            Record::Forget { path } => self.manifest.forget(path),
        }
        self.steps.push(Step { action, record });
    }

    fn note(&mut self, level: Level, text: String) {
        self.notes.push(Note { level, text });
    }

    fn old_entry(&self, path: &Path) -> Option<&Entry> {
        self.old.and_then(|m| m.find(path))
    }

    fn in_the_way(path: &Path, o: &Observed, want: &'static str) -> InstallError {
        InstallError::InTheWay { path: path.to_path_buf(), what: o.kind_name(), want }
    }

    /// Creates the missing ancestors of `path`, top down.
    fn parents(&mut self, path: &Path) {
        let mut missing: Vec<PathBuf> = Vec::new();
        for a in path.ancestors().skip(1) {
            if a == Path::new("/") || a.as_os_str().is_empty() {
                break;
            }
            self.desired.insert(a.to_path_buf());
            if !self.facts.exists(a) && !self.made.contains(a) {
                missing.push(a.to_path_buf());
            }
        }
        for a in missing.into_iter().rev() {
            self.made.insert(a.clone());
            let entry = Entry::Dir { path: a.clone() };
            self.push(Action::MakeDir { path: a, mode: 0o755, owner: self.root_owner }, Record::Add { entry });
        }
    }

    fn dir(&mut self, path: &Path, mode: u32, owner: Option<Owner>) -> Result<(), InstallError> {
        self.desired.insert(path.to_path_buf());
        if self.made.contains(path) {
            return Ok(());
        }
        match self.facts.get(path) {
            Observed::Absent => {
                self.parents(path);
                self.made.insert(path.to_path_buf());
                let entry = Entry::Dir { path: path.into() };
                self.push(Action::MakeDir { path: path.into(), mode, owner }, Record::Add { entry });
            }
            Observed::Dir { mode: m, uid, gid } => {
                let ours = matches!(self.old_entry(path), Some(Entry::Dir { .. }));
                if ours && (*m != mode || !owner_matches(owner, *uid, *gid)) {
                    self.push(Action::SetMode { path: path.into(), mode, owner }, Record::None);
                }
            }
            // A link to a directory (e.g. a merged-/usr layout) serves.
            Observed::Link { .. } => {}
            o => return Err(Self::in_the_way(path, o, "directory")),
        }
        Ok(())
    }

    /// A file the product owns (`keep_foreign`: an existing file that is
    /// not ours, or ours but edited since, is kept — the configuration).
    fn file(&mut self, path: &Path, content: Content, mode: u32, owner: Option<Owner>, keep_foreign: bool) -> Result<(), InstallError> {
        self.desired.insert(path.to_path_buf());
        self.parents(path);
        let ours = match self.old_entry(path) {
            Some(Entry::File { hash, backup, .. }) => Some((hash.clone(), backup.clone())),
            _ => None,
        };
        let new_hash = content.hash();
        let write = |backup: Option<PathBuf>| Action::Write { path: path.into(), content: content.clone(), mode, owner, backup };
        let entry = |backup: Option<PathBuf>| Record::Add { entry: Entry::File { path: path.into(), hash: new_hash.clone(), backup } };
        let current = self.facts.get(path);
        match current {
            Observed::Absent => {
                let kept_backup = ours.and_then(|o| o.1);
                self.push(write(None), entry(kept_backup));
            }
            Observed::File { hash, mode: m, uid, gid, .. } if *hash == new_hash => {
                if *m != mode || !owner_matches(owner, *uid, *gid) {
                    self.push(Action::SetMode { path: path.into(), mode, owner }, Record::None);
                }
            }
            Observed::File { .. } | Observed::Link { .. } => match ours {
                Some((old_hash, backup)) => {
                    if keep_foreign && *hash_of(current) != old_hash {
                        self.note(Level::Info, format!("kept {}: it was edited since sandbox-install wrote it", path.display()));
                    } else {
                        self.push(write(None), entry(backup));
                    }
                }
                None if keep_foreign => self.note(Level::Info, format!("kept the existing {}", path.display())),
                None => {
                    let b = backup_for(path);
                    self.push(write(Some(b.clone())), entry(Some(b)));
                }
            },
            o => return Err(Self::in_the_way(path, o, "file")),
        }
        Ok(())
    }

    fn link(&mut self, path: &Path, target: &Path) -> Result<(), InstallError> {
        self.desired.insert(path.to_path_buf());
        self.parents(path);
        let ours_backup = match self.old_entry(path) {
            Some(Entry::Link { backup, .. }) => Some(backup.clone()),
            _ => None,
        };
        let record = |backup: Option<PathBuf>| Record::Add { entry: Entry::Link { path: path.into(), target: target.into(), backup } };
        match (self.facts.get(path), ours_backup) {
            (Observed::Link { target: t }, _) if t == target => {}
            (Observed::Absent, ours) => self.push(Action::Symlink { path: path.into(), target: target.into(), backup: None }, record(ours.flatten())),
            (Observed::Link { .. } | Observed::File { .. }, Some(b)) => {
                self.push(Action::Symlink { path: path.into(), target: target.into(), backup: None }, record(b))
            }
            (Observed::Link { .. } | Observed::File { .. }, None) => {
                let b = backup_for(path);
                self.push(Action::Symlink { path: path.into(), target: target.into(), backup: Some(b.clone()) }, record(Some(b)))
            }
            (o, _) => return Err(Self::in_the_way(path, o, "symbolic link")),
        }
        Ok(())
    }

    /// A managed block in an existing shared text file.
    fn block(&mut self, path: &Path, body: &str) {
        let Observed::File { text, mode, uid, gid, .. } = self.facts.get(path) else {
            if !matches!(self.facts.get(path), Observed::Absent) {
                self.note(Level::Warning, format!("left {} alone: it is not a regular file; add `. {PROFILE_SCRIPT}` to it yourself", path.display()));
            }
            return;
        };
        // In a user's home, only what that user owns is edited: anything
        // else there (a root-only file renamed in from a directory the user
        // can write) is not theirs to have rewritten, nor to read.
        if let Some(u) = self.facts.user.as_ref().filter(|u| path.starts_with(&u.home) && self.facts.can_chown && *uid != u.uid) {
            self.note(
                Level::Warning,
                format!(
                    "left {} alone: it is owned by uid {uid}, not by {} whose home it is in; if it is theirs, `chown {}: {0}` and run sandbox-install again",
                    path.display(),
                    u.name,
                    u.name
                ),
            );
            return;
        }
        let Some(text) = text else {
            self.note(Level::Warning, format!("left {} alone: it is not UTF-8 text; add `. {PROFILE_SCRIPT}` to it yourself", path.display()));
            return;
        };
        self.desired.insert(path.to_path_buf());
        let want = content::with_block(text, body);
        if want == *text {
            return;
        }
        let backup = match self.old_entry(path) {
            Some(Entry::Block { backup, .. }) => backup.clone(),
            _ => Some(backup_for(path)),
        };
        let fresh_backup = if self.old_entry(path).is_some() { None } else { backup.clone() };
        let owner = self.facts.can_chown.then_some(Owner { uid: *uid, gid: *gid });
        let entry = Entry::Block { path: path.into(), hash: content::hash(want.as_bytes()), backup };
        self.push(Action::Write { path: path.into(), content: Content::Text { text: want }, mode: *mode, owner, backup: fresh_backup }, Record::Add { entry });
    }

    /// Agent settings merged into whatever file is there.
    fn merged(&mut self, path: &Path, merge: fn(Option<&str>) -> Result<String, String>, setting: &str) -> Result<(), InstallError> {
        let existing = match self.facts.get(path) {
            Observed::Absent => None,
            Observed::File { text: Some(t), .. } => Some(t.as_str()),
            o => {
                let what = o.kind_name();
                self.note(Level::Warning, format!("left {} alone: it is a {what} sandbox-install cannot edit; set {setting} in it yourself", path.display()));
                return Ok(());
            }
        };
        match merge(existing) {
            Ok(text) => self.file(path, Content::Text { text }, 0o644, self.root_owner, false),
            Err(why) => {
                self.note(Level::Warning, format!("left {} alone: {why}; set {setting} in it yourself", path.display()));
                Ok(())
            }
        }
    }
}

fn hash_of(o: &Observed) -> &String {
    static EMPTY: String = String::new();
    match o {
        Observed::File { hash, .. } => hash,
        _ => &EMPTY,
    }
}

#[path = "plan_install.rs"]
mod install;
#[path = "plan_undo.rs"]
mod undo;

#[cfg(test)]
mod tests;
