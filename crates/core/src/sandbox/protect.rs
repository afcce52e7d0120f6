//! Which places of the workspace a session may not change because they run
//! code later, outside the sandbox: the devcontainer definition, and for
//! every git directory in the workspace (the main one, submodules'
//! `modules/**`, `worktrees/*`, a `.git` file's target, a `commondir`'s
//! target, nested repositories) its config files, hooks and `core.hooksPath`
//! directory. Pure: every question goes through `FsView`'s no-follow calls.
//!
//! What is found is taken as what it is, never followed: a symbolic link,
//! FIFO, socket or device where a protected directory or file is expected
//! refuses the launch (a session may have planted it so that the next
//! session mounts a host path there, or so that git outside reads another
//! config). The plan binds each protected path from a descriptor the
//! executor opens the same no-follow way (`Mount::BindFd`), so a swap after
//! this check cannot change what is mounted.
//!
//! Not covered here (review reports them): files that do not exist at
//! launch and would change git's behaviour once created (`commondir`,
//! `config.worktree`, an `include.path` target), and nested repositories
//! deeper than the scan's bounds.

use crate::config::Config;
use crate::nofollow::Entry;
use crate::sandbox::fsview::FsView;
use crate::sandbox::gitconfig;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// How deep, and through how many directories, nested repositories are
/// looked for (a launch-time cost; deeper ones are review's).
pub(super) const NESTED_REPO_DEPTH: usize = 4;
pub(super) const NESTED_REPO_DIRS: usize = 400;
/// Directories never searched for nested repositories (dependency trees).
const NOT_SEARCHED: &[&str] = &[".git", "node_modules"];
/// Submodules can nest; a `modules` tree deeper than this is not followed.
const MODULES_DEPTH: usize = 8;

/// The protections, as paths relative to the workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Protected {
    /// Git directories bound onto themselves, writable: their name cannot
    /// be swapped for a file or a link while a session runs.
    pub pinned: Vec<PathBuf>,
    /// Existing directories and files bound read-only (`true`: a directory).
    pub read_only: Vec<(PathBuf, bool)>,
    /// Directories that do not exist: an empty read-only one is mounted
    /// there, so nothing can be planted (hook directories).
    pub empty: Vec<PathBuf>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error(
    "the workspace's {path} is {found}, where {expected} belongs; a session may have planted it so the next \
     session mounts something else there, or so git outside the sandbox runs other code. Look at it \
     (`agent-sandbox review`), replace it with {expected} or remove it, then start the session again"
)]
pub struct UnsafeEntry {
    pub path: PathBuf,
    pub found: String,
    pub expected: &'static str,
}

struct Scan<'a> {
    fs: &'a dyn FsView,
    ws: &'a Path,
    config: &'a Config,
    out: Protected,
    /// Git directories still to look at, with their worktree when known.
    gitdirs: Vec<(PathBuf, Option<PathBuf>)>,
    seen: BTreeSet<PathBuf>,
}

/// The protections for workspace `ws`.
pub(super) fn plan(fs: &dyn FsView, ws: &Path, config: &Config) -> Result<Protected, UnsafeEntry> {
    let mut s = Scan { fs, ws, config, out: Protected::default(), gitdirs: Vec::new(), seen: BTreeSet::new() };
    if config.protect_devcontainer {
        s.expect(Path::new(".devcontainer"), true, false)?;
        s.expect(Path::new(".devcontainer.json"), false, false)?;
    }
    if config.protect_git_hooks || config.protect_git_config {
        for repo in s.repositories() {
            s.repository(&repo)?;
        }
        while let Some((g, worktree)) = s.gitdirs.pop() {
            s.gitdir(&g, worktree.as_deref())?;
        }
    }
    let mut out = s.out;
    out.pinned.sort();
    out.pinned.dedup();
    out.read_only.sort();
    out.read_only.dedup();
    out.empty.sort();
    out.empty.dedup();
    Ok(out)
}

impl Scan<'_> {
    fn entry(&self, rel: &Path) -> Entry {
        self.fs.entry_beneath(self.ws, rel)
    }

    fn unsafe_entry(rel: &Path, found: &Entry, dir: bool) -> UnsafeEntry {
        UnsafeEntry { path: rel.into(), found: found.describe(), expected: if dir { "a directory" } else { "a regular file" } }
    }

    /// `rel` must be what is expected (or missing): protect it read-only
    /// if present; with `empty_if_missing`, mount an empty directory there.
    fn expect(&mut self, rel: &Path, dir: bool, empty_if_missing: bool) -> Result<(), UnsafeEntry> {
        match self.entry(rel) {
            Entry::Dir if dir => self.out.read_only.push((rel.into(), true)),
            Entry::File if !dir => self.out.read_only.push((rel.into(), false)),
            Entry::Missing if empty_if_missing => self.out.empty.push(rel.into()),
            Entry::Missing => {}
            other => return Err(Self::unsafe_entry(rel, &other, dir)),
        }
        Ok(())
    }

    /// The workspace itself and nested repositories within the bounds
    /// (directories holding a `.git`), breadth first.
    fn repositories(&self) -> Vec<PathBuf> {
        let mut found = vec![PathBuf::new()];
        let mut queue = std::collections::VecDeque::from([(PathBuf::new(), 0usize)]);
        let mut listed = 0;
        while let Some((dir, depth)) = queue.pop_front() {
            if listed >= NESTED_REPO_DIRS {
                tracing::debug!("nested repositories: stopped after {listed} directories; review covers deeper ones");
                break;
            }
            listed += 1;
            let children = self.fs.list_beneath(self.ws, &dir);
            if !dir.as_os_str().is_empty() && children.iter().any(|(n, _)| n == ".git") {
                found.push(dir.clone());
            }
            if depth + 1 > NESTED_REPO_DEPTH {
                continue;
            }
            for (name, e) in children {
                if e == Entry::Dir && !NOT_SEARCHED.iter().any(|n| name == *n) {
                    queue.push_back((dir.join(name), depth + 1));
                }
            }
        }
        found
    }

    /// A repository's `.git`: a directory (pinned), or a file naming the
    /// git directory (kept read-only, its target followed if inside).
    fn repository(&mut self, root: &Path) -> Result<(), UnsafeEntry> {
        let dot_git = root.join(".git");
        match self.entry(&dot_git) {
            Entry::Missing => {}
            Entry::Dir => {
                self.out.pinned.push(dot_git.clone());
                self.queue(dot_git, Some(root.into()));
            }
            Entry::File => {
                self.out.read_only.push((dot_git.clone(), false));
                let text = self.fs.read_beneath(self.ws, &dot_git).unwrap_or_default();
                if let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) {
                    if let Some(g) = self.within(root, target.trim(), &dot_git)? {
                        self.queue(g, Some(root.into()));
                    }
                }
            }
            other => return Err(UnsafeEntry { path: dot_git, found: other.describe(), expected: "a directory (or a gitdir file)" }),
        }
        Ok(())
    }

    fn queue(&mut self, gitdir: PathBuf, worktree: Option<PathBuf>) {
        if self.seen.insert(gitdir.clone()) {
            self.gitdirs.push((gitdir, worktree));
        }
    }

    /// One git directory: its pointer files, config files, hooks and
    /// hooks path, then its submodules' and worktrees' git directories.
    fn gitdir(&mut self, g: &Path, worktree: Option<&Path>) -> Result<(), UnsafeEntry> {
        let commondir = g.join("commondir");
        let linked = match self.entry(&commondir) {
            Entry::Missing => false,
            Entry::File => {
                self.out.read_only.push((commondir.clone(), false));
                let text = self.fs.read_beneath(self.ws, &commondir).unwrap_or_default();
                if let Some(c) = self.within(g, text.trim(), &commondir)? {
                    // A common directory named `.git` belongs to the main
                    // worktree, its parent.
                    let main = (c.file_name() == Some(std::ffi::OsStr::new(".git"))).then(|| c.parent().unwrap_or(Path::new("")).to_path_buf());
                    self.queue(c, main);
                }
                true
            }
            other => return Err(Self::unsafe_entry(&commondir, &other, false)),
        };
        if self.config.protect_git_config {
            self.expect(&g.join("config"), false, false)?;
            self.expect(&g.join("config.worktree"), false, false)?;
        }
        if self.config.protect_git_hooks {
            // A linked worktree's hooks are its common directory's.
            self.expect(&g.join("hooks"), true, !linked)?;
            self.hooks_path(g, worktree)?;
        }
        let gitfile = g.join("gitdir");
        if linked {
            self.expect(&gitfile, false, false)?;
        }
        self.modules(&g.join("modules"), 0);
        for (name, e) in self.fs.list_beneath(self.ws, &g.join("worktrees")) {
            if e == Entry::Dir {
                self.queue(g.join("worktrees").join(name), None);
            }
        }
        Ok(())
    }

    /// Submodule git directories under `modules` (a name may have several
    /// components): any directory holding a `HEAD` file.
    fn modules(&mut self, dir: &Path, depth: usize) {
        if depth > MODULES_DEPTH {
            return;
        }
        let children = self.fs.list_beneath(self.ws, dir);
        if depth > 0 && children.iter().any(|(n, e)| n == "HEAD" && *e == Entry::File) {
            self.queue(dir.to_path_buf(), None);
            return;
        }
        for (name, e) in children {
            if e == Entry::Dir {
                self.modules(&dir.join(name), depth + 1);
            }
        }
    }

    /// `core.hooksPath` of this git directory's config files, when it is in
    /// the workspace: protected whether or not it exists yet. A relative
    /// value is relative to the worktree, unknown here for a submodule's or
    /// linked worktree's git directory (review reports those).
    fn hooks_path(&mut self, g: &Path, worktree: Option<&Path>) -> Result<(), UnsafeEntry> {
        for file in ["config", "config.worktree"] {
            let text = self.fs.read_beneath(self.ws, &g.join(file)).unwrap_or_default();
            let Some(value) = gitconfig::hooks_path_value(&text) else { continue };
            if value.starts_with("~/") {
                continue;
            }
            let base = match (Path::new(&value).is_absolute(), worktree) {
                (true, _) => Path::new(""),
                (false, Some(w)) => w,
                (false, None) => continue,
            };
            if let Some(dir) = self.within(base, &value, &g.join(file))? {
                self.expect(&dir, true, true)?;
            }
        }
        Ok(())
    }

    /// `target` (absolute, or relative to `base`) as a path relative to the
    /// workspace, when it lies inside it; None when it points outside. Each
    /// component is checked on the way (a symbolic link in it refuses, since
    /// git would follow it and this plan would not).
    fn within(&self, base: &Path, target: &str, named_in: &Path) -> Result<Option<PathBuf>, UnsafeEntry> {
        let t = Path::new(target);
        let (start, rest) = if t.is_absolute() {
            match t.strip_prefix(self.ws) {
                Ok(r) => (PathBuf::new(), r.to_path_buf()),
                Err(_) => return Ok(None),
            }
        } else {
            (base.to_path_buf(), t.to_path_buf())
        };
        let mut cur = start;
        for c in rest.components() {
            match c {
                Component::Normal(n) => {
                    cur.push(n);
                    match self.entry(&cur) {
                        Entry::Dir | Entry::Missing | Entry::File => {}
                        other => {
                            return Err(UnsafeEntry {
                                path: cur,
                                found: format!("{} (named by {})", other.describe(), named_in.display()),
                                expected: "a directory",
                            })
                        }
                    }
                }
                Component::ParentDir => {
                    if !cur.pop() {
                        return Ok(None);
                    }
                }
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return Ok(None),
            }
        }
        Ok(Some(cur))
    }
}

#[cfg(test)]
mod tests;
