//! The one executor: applies an `InstallPlan`'s steps in order, keeping the
//! manifest in step with what really happened — also when a step fails
//! midway, so an uninstall can still undo the part that was done. Files are
//! replaced atomically (write beside, then rename); temporary files are
//! created exclusively and never through a symlink, and modes and owners are
//! set on open handles, so a user who owns a directory the installer writes
//! in (their home) cannot redirect a write, chmod or chown.

use super::error::InstallError;
use super::manifest::{Manifest, Packages};
use super::packages;
use super::plan::{Action, Content, InstallPlan, Level, Note, Owner, Record};
use crate::layout::{Layout, BACKUP_DIR, MANIFEST, STATE_DIR};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Applies `plan`; returns what the steps themselves had to say (kept
/// directories, packages that could not be removed).
pub(super) fn apply(plan: &InstallPlan, layout: &Layout, old: Option<&Manifest>) -> Result<Vec<Note>, InstallError> {
    let state_dir_created = plan.manifest.as_ref().is_some_and(|m| m.state_dir_created);
    let mut ex = Executor { layout, manifest: old.cloned().unwrap_or_else(|| Manifest::empty(state_dir_created)), notes: Vec::new() };
    if let Some(m) = &plan.manifest {
        ex.manifest.agents = m.agents.clone();
        ex.manifest.user = m.user.clone();
    }
    for step in &plan.steps {
        if let Err(e) = ex.step(&step.action) {
            if !plan.uninstall && ex.manifest.entries != old.map(|m| m.entries.clone()).unwrap_or_default() {
                // Best effort: remember what was done before the failure.
                let _ = ex.write_manifest();
            }
            return Err(e);
        }
        match &step.record {
            Record::None => {}
            Record::Add { entry } => ex.manifest.record(entry.clone()),
            Record::Forget { path } => ex.manifest.forget(path),
        }
    }
    Ok(ex.notes)
}

struct Executor<'a> {
    layout: &'a Layout,
    manifest: Manifest,
    notes: Vec<Note>,
}

/// Opens an existing file or directory without following a final symlink
/// (a user who owns the directory cannot redirect a chmod or chown).
fn open_nofollow(path: &Path) -> Result<std::fs::File, InstallError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(InstallError::io("cannot open", path))
}

/// Sets mode and owner through the open handle.
fn set_meta(f: &std::fs::File, path: &Path, mode: u32, owner: Option<Owner>) -> Result<(), InstallError> {
    f.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(InstallError::io("cannot set the mode of", path))?;
    if let Some(o) = owner {
        std::os::unix::fs::fchown(f, Some(o.uid), Some(o.gid)).map_err(InstallError::io("cannot change the owner of", path))?;
    }
    Ok(())
}

/// Creates `tmp` (which must not exist, not even as a link), fills it, and
/// sets its mode and owner, all through one handle.
fn create_new(tmp: &Path, mode: u32, owner: Option<Owner>, fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>) -> Result<(), InstallError> {
    use std::os::unix::fs::OpenOptionsExt;
    remove_if_exists(tmp)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(tmp)
        .map_err(InstallError::io("cannot create", tmp))?;
    fill(&mut f).map_err(InstallError::io("cannot write", tmp))?;
    set_meta(&f, tmp, mode, owner)
}

/// A temporary name beside `path` (same file system, so rename is atomic).
fn beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.sandbox-install.tmp"))
}

fn remove_if_exists(path: &Path) -> Result<(), InstallError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(InstallError::Io { what: "cannot remove", path: path.into(), source: e }),
        _ => Ok(()),
    }
}

/// Copies `src` to `dst` with its mode and owner (a link as a link),
/// atomically replacing `dst`.
fn copy_preserving(src: &Path, dst: &Path) -> Result<(), InstallError> {
    let meta = std::fs::symlink_metadata(src).map_err(InstallError::io("cannot read", src))?;
    let tmp = beside(dst);
    if meta.file_type().is_symlink() {
        remove_if_exists(&tmp)?;
        let target = std::fs::read_link(src).map_err(InstallError::io("cannot read the link", src))?;
        std::os::unix::fs::symlink(target, &tmp).map_err(InstallError::io("cannot create the link", &tmp))?;
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::lchown(&tmp, Some(meta.uid()), Some(meta.gid())).map_err(InstallError::io("cannot change the owner of", &tmp))?;
        }
    } else {
        // Mode, owner and contents from one handle: a file swapped after
        // the look above cannot lend its contents another file's owner.
        let mut from = open_nofollow(src)?;
        let meta = from.metadata().map_err(InstallError::io("cannot read", src))?;
        if !meta.is_file() {
            return Err(InstallError::InTheWay { path: src.into(), what: "special file", want: "file" });
        }
        let owner = nix::unistd::geteuid().is_root().then_some(Owner { uid: meta.uid(), gid: meta.gid() });
        create_new(&tmp, meta.mode() & 0o7777, owner, |f| std::io::copy(&mut from, f).map(drop))?;
    }
    std::fs::rename(&tmp, dst).map_err(InstallError::io("cannot put in place", dst))
}

impl Executor<'_> {
    fn real(&self, p: &Path) -> PathBuf {
        self.layout.real(p)
    }

    fn backup(&self, path: &Path, backup: &Path) -> Result<(), InstallError> {
        let dst = self.real(backup);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(InstallError::io("cannot create the backup directory", parent))?;
        }
        copy_preserving(&self.real(path), &dst)
    }

    fn step(&mut self, action: &Action) -> Result<(), InstallError> {
        match action {
            Action::MakeDir { path, mode, owner } => {
                let real = self.real(path);
                match std::fs::create_dir(&real) {
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                        return Err(InstallError::Io { what: "cannot create the directory", path: real, source: e })
                    }
                    _ => {}
                }
                set_meta(&open_nofollow(&real)?, &real, *mode, *owner)?;
            }
            Action::Write { path, content, mode, owner, backup } => {
                if let Some(b) = backup {
                    self.backup(path, b)?;
                }
                let real = self.real(path);
                let tmp = beside(&real);
                create_new(&tmp, *mode, *owner, |f| match content {
                    Content::Copy { from, .. } => std::io::copy(&mut std::fs::File::open(from)?, f).map(drop),
                    Content::Text { text } => f.write_all(text.as_bytes()),
                })?;
                std::fs::rename(&tmp, &real).map_err(InstallError::io("cannot put in place", &real))?;
            }
            Action::SetMode { path, mode, owner } => {
                let real = self.real(path);
                set_meta(&open_nofollow(&real)?, &real, *mode, *owner)?;
            }
            Action::Symlink { path, target, backup } => {
                if let Some(b) = backup {
                    self.backup(path, b)?;
                }
                let real = self.real(path);
                let tmp = beside(&real);
                remove_if_exists(&tmp)?;
                std::os::unix::fs::symlink(target, &tmp).map_err(InstallError::io("cannot create the link", &tmp))?;
                std::fs::rename(&tmp, &real).map_err(InstallError::io("cannot put in place", &real))?;
            }
            Action::Remove { path } => remove_if_exists(&self.real(path))?,
            Action::Restore { path, backup } => {
                let b = self.real(backup);
                copy_preserving(&b, &self.real(path))?;
                remove_if_exists(&b)?;
            }
            Action::RemoveDir { path } => self.remove_dir(path)?,
            Action::InstallPackages { manager, packages: names } => {
                let new = packages::install(*manager, names)?;
                let mut all = self.manifest.packages.take().map(|p| p.names).unwrap_or_default();
                all.extend(new);
                all.sort();
                all.dedup();
                self.manifest.packages = Some(Packages { manager: manager.name().into(), names: all });
            }
            Action::RemovePackages { manager, packages: names } => {
                let kept = packages::remove(*manager, names)?;
                if !kept.is_empty() {
                    self.note(Level::Warning, format!("kept packages other software now depends on: {}", kept.join(" ")));
                }
            }
            Action::WriteManifest => self.write_manifest()?,
            Action::RemoveState => {
                remove_if_exists(&self.real(Path::new(MANIFEST)))?;
                prune_empty(&self.real(Path::new(BACKUP_DIR)));
                if self.manifest.state_dir_created {
                    self.remove_dir(Path::new(STATE_DIR))?;
                }
            }
        }
        Ok(())
    }

    fn remove_dir(&mut self, path: &Path) -> Result<(), InstallError> {
        match std::fs::remove_dir(self.real(path)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) || e.raw_os_error() == Some(libc::EEXIST) => {
                self.note(Level::Info, format!("kept {}: it is not empty", path.display()));
                Ok(())
            }
            Err(e) => Err(InstallError::Io { what: "cannot remove the directory", path: path.into(), source: e }),
        }
    }

    fn write_manifest(&self) -> Result<(), InstallError> {
        let real = self.real(Path::new(MANIFEST));
        let tmp = beside(&real);
        create_new(&tmp, 0o644, None, |f| f.write_all(self.manifest.to_json().as_bytes()))?;
        std::fs::rename(&tmp, &real).map_err(InstallError::io("cannot put in place", &real))
    }

    fn note(&mut self, level: Level, text: String) {
        self.notes.push(Note { level, text });
    }
}

/// Removes `dir` and the empty directories below it; keeps anything with
/// files in it (a kept original).
fn prune_empty(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                prune_empty(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// A backup takes owner, mode and contents from the same file, even
    /// when the user who owns the directory swaps the name for another file
    /// (here a root-only one) while it is being copied.
    #[test]
    fn a_backup_never_gives_one_file_the_contents_of_another() {
        assert!(nix::unistd::geteuid().is_root(), "this test sets file owners: run it as root");
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_path_buf();
        std::fs::write(dir.join(".bashrc"), "# bashrc\n").unwrap();
        std::os::unix::fs::chown(dir.join(".bashrc"), Some(1000), Some(1000)).unwrap();
        std::fs::write(dir.join("swap"), "SECRET\n").unwrap();
        std::fs::set_permissions(dir.join("swap"), std::fs::Permissions::from_mode(0o600)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, dir) = (stop.clone(), dir.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if crate::rename_exchange(&dir.join(".bashrc"), &dir.join("swap")).is_err() {
                        break;
                    }
                }
            })
        };
        let backup = dir.join("backup");
        let mut secrets = 0;
        for _ in 0..5_000 {
            copy_preserving(&dir.join(".bashrc"), &backup).unwrap();
            let meta = std::fs::metadata(&backup).unwrap();
            if std::fs::read_to_string(&backup).unwrap() == "SECRET\n" {
                secrets += 1;
                assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o600), "the root-only contents got the user's file's owner and mode");
            } else {
                assert_eq!((meta.uid(), meta.mode() & 0o777), (1000, 0o644), "the user's contents got the root-only file's owner and mode");
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(secrets > 0, "the swap never raced the copy");
    }
}
