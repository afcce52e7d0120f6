//! Every git dir in the workspace, found the way git finds them: any `.git`
//! directory; any directory git would accept as one (`HEAD` with `objects`
//! and `refs`, or with `commondir`: bare repositories, `.git/modules/*`,
//! `.git/worktrees/*`); and wherever a `.git` file (`gitdir:`) or a
//! `commondir` points. Inside each, everything but git's own data is
//! reviewed; their configs say where else code comes from (`hooksPath`,
//! includes).

use super::super::gitcfg;
use super::super::kinds::Kind;
use super::super::walk::Ty;
use super::{name, parent, Ctx, GitDir, Tag};
use std::collections::BTreeSet;

/// Git's data: content-addressed or shown by git itself (`git status`,
/// `git log`, `git branch`).
const DATA_DIRS: &[&str] = &["objects", "refs", "logs", "lfs", "rr-cache", "fsmonitor--daemon"];
const DATA_FILES: &[&str] = &[
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_HEAD",
    "AUTO_MERGE",
    "COMMIT_EDITMSG",
    "MERGE_MSG",
    "MERGE_MODE",
    "SQUASH_MSG",
    "TAG_EDITMSG",
    "index",
    "packed-refs",
    "shallow",
    "description",
    "fsmonitor--daemon.ipc",
    "gc.log",
    "gc.pid",
];

/// The kind of `rel`, a path inside a git dir.
fn inside(rel: &str) -> Tag {
    let first = rel.split('/').next().unwrap_or(rel);
    match rel {
        "config" | "config.worktree" => Tag::Kind(Kind::GitConfig),
        "commondir" | "gitdir" => Tag::Kind(Kind::GitPointer),
        _ if first == "hooks" => Tag::Kind(Kind::GitHook),
        _ if rel.starts_with("objects/info") => Tag::Kind(Kind::GitInternal),
        _ if DATA_DIRS.contains(&first) || DATA_FILES.contains(&rel) || rel.ends_with(".lock") => Tag::Ignore,
        _ => Tag::Kind(Kind::GitInternal),
    }
}

impl Ctx<'_> {
    pub(super) fn git(&mut self) {
        self.find_git_dirs();
        // Innermost git dir decides: shallow ones first, deeper ones after.
        let mut dirs = self.git_dirs.clone();
        dirs.sort_by_key(|g| g.key.matches('/').count() + usize::from(!g.key.is_empty()));
        for g in &dirs {
            let skip = if g.key.is_empty() { 0 } else { g.key.len() + 1 };
            for i in self.listing.under(&g.key) {
                self.out.tags[i] = Some(inside(&self.listing.entries[i].0[skip..]));
            }
        }
        for g in dirs {
            self.git_config(&g);
        }
    }

    fn has_git_layout(&self, key: &str) -> bool {
        let at = |n: &str| if key.is_empty() { n.to_string() } else { format!("{key}/{n}") };
        self.is(&at("HEAD"), Ty::File) && ((self.is(&at("objects"), Ty::Dir) && self.is(&at("refs"), Ty::Dir)) || self.is(&at("commondir"), Ty::File))
    }

    fn add_git_dir(&mut self, key: String, worktree: Option<String>) -> bool {
        if let Some(g) = self.git_dirs.iter_mut().find(|g| g.key == key) {
            if g.worktree.is_none() {
                g.worktree = worktree;
            }
            return false;
        }
        self.git_dirs.push(GitDir { key, worktree });
        true
    }

    fn find_git_dirs(&mut self) {
        if self.has_git_layout("") {
            self.add_git_dir(String::new(), None);
        }
        // Candidates: `.git` directories and directories holding a `HEAD`.
        let ws = self.listing.under("");
        let mut dirs: Vec<String> = self.listing.entries[ws]
            .iter()
            .filter_map(|(k, e)| match (name(k), e.ty) {
                (".git", Ty::Dir) => Some(k.clone()),
                ("HEAD", Ty::File) if !parent(k).is_empty() => Some(parent(k).to_string()),
                _ => None,
            })
            .collect();
        dirs.sort_by(|a, b| super::super::walk::key_cmp(a, b));
        dirs.dedup();
        for key in dirs {
            if name(&key) == ".git" && self.is(&key, Ty::Dir) {
                let wt = parent(&key).to_string();
                self.add_git_dir(key, Some(wt));
            } else if self.has_git_layout(&key) {
                self.add_git_dir(key, None);
            }
        }
        // Pointers may lead to git dirs with no layout of their own (a
        // `commondir` target holding just a config and hooks).
        for _ in 0..4 {
            if !self.follow_pointers() {
                break;
            }
        }
        for g in self.git_dirs.clone() {
            if let Some(wt) = self.configured_worktree(&g) {
                self.add_git_dir(g.key, Some(wt));
            }
        }
    }

    /// `.git` files and `commondir`/`gitdir` files; true when a new git dir
    /// was found.
    fn follow_pointers(&mut self) -> bool {
        let mut found = false;
        let ws = self.listing.under("");
        let dot_git: Vec<String> = self.listing.entries[ws].iter().filter(|(k, e)| name(k) == ".git" && e.ty == Ty::File).map(|(k, _)| k.clone()).collect();
        for key in dot_git {
            let Some(text) = self.text(&key) else { continue };
            let Some(to) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) else { continue };
            if let Some(target) = self.key_of(parent(&key), to.trim()).filter(|t| self.is(t, Ty::Dir)) {
                found |= self.add_git_dir(target, Some(parent(&key).to_string()));
            }
        }
        for g in self.git_dirs.clone() {
            let at = |n: &str| if g.key.is_empty() { n.to_string() } else { format!("{}/{n}", g.key) };
            if let Some(to) = self.text(&at("commondir")) {
                if let Some(target) = self.key_of(&g.key, to.trim()).filter(|t| self.is(t, Ty::Dir)) {
                    found |= self.add_git_dir(target, None);
                }
            }
            // A linked worktree's `gitdir` names the work tree's `.git` file.
            if let Some(to) = self.text(&at("gitdir")) {
                if let Some(file) = self.key_of(&g.key, to.trim()) {
                    self.add_git_dir(g.key.clone(), Some(parent(&file).to_string()));
                }
            }
        }
        found
    }

    fn config_files(g: &GitDir) -> [String; 2] {
        let at = |n: &str| if g.key.is_empty() { n.to_string() } else { format!("{}/{n}", g.key) };
        [at("config"), at("config.worktree")]
    }

    fn configured_worktree(&mut self, g: &GitDir) -> Option<String> {
        let text = self.text(&Self::config_files(g)[0])?;
        let wt = gitcfg::facts(&gitcfg::entries(&text)).worktree?;
        self.key_of(&g.key, &wt)
    }

    /// Reads a git dir's configs (and what they include): included files
    /// are configs too; a `core.hooksPath` in the workspace holds hooks,
    /// whether or not it existed when the baseline was taken.
    fn git_config(&mut self, g: &GitDir) {
        let mut queue: Vec<String> = Self::config_files(g).into_iter().collect();
        let mut seen = BTreeSet::new();
        let mut hooks_paths = Vec::new();
        while let Some(file) = queue.pop() {
            if seen.len() > 32 || !seen.insert(file.clone()) {
                continue;
            }
            let Some(text) = self.text(&file) else { continue };
            let facts = gitcfg::facts(&gitcfg::entries(&text));
            for inc in facts.includes.iter().filter(|p| !p.starts_with('~')) {
                if let Some(k) = self.key_of(parent(&file), inc) {
                    self.tag(&k, Kind::GitConfig);
                    queue.push(k);
                }
            }
            hooks_paths.extend(facts.hooks_path.filter(|p| !p.starts_with('~')));
        }
        let commons: Vec<GitDir> = self.git_dirs.iter().filter(|w| self.common_of(w).as_deref() == Some(g.key.as_str())).cloned().collect();
        let bases: BTreeSet<String> =
            g.worktree.iter().cloned().chain(commons.into_iter().filter_map(|w| w.worktree)).chain([parent(&g.key).to_string()]).collect();
        for hp in hooks_paths {
            for base in &bases {
                if let Some(dir) = self.key_of(base, &hp) {
                    self.tag_tree(&dir, Kind::GitHook);
                }
            }
        }
    }

    /// The git dir `w`'s `commondir` points to.
    fn common_of(&self, w: &GitDir) -> Option<String> {
        let at = if w.key.is_empty() { "commondir".to_string() } else { format!("{}/commondir", w.key) };
        let bytes = self.out.contents.get(&at)?.as_ref().ok()?.clone();
        self.key_of(&w.key, String::from_utf8_lossy(&bytes).trim())
    }

    /// `dir` and everything under it.
    pub(super) fn tag_tree(&mut self, dir: &str, kind: Kind) {
        let keys: Vec<String> = std::iter::once(dir.to_string()).chain(self.listing.under(dir).map(|i| self.listing.entries[i].0.clone())).collect();
        for k in keys {
            self.tag(&k, kind);
        }
    }
}
