//! The undo half of the planner: reversing manifest entries, for
//! `--uninstall` and for entries a later install no longer wants. Only
//! what still holds what the installer wrote is removed or restored.

use super::*;

impl Planner<'_> {
    pub(super) fn uninstall(mut self, req: &Request) -> InstallPlan {
        let Some(old) = self.old else {
            self.note(Level::Info, format!("nothing to uninstall: there is no manifest at {MANIFEST}"));
            return InstallPlan { uninstall: true, agents: Vec::new(), user: None, steps: self.steps, notes: self.notes, manifest: None };
        };
        // The state directory's own parents go last, after the state itself.
        let holds_state = |e: &&Entry| matches!(e, Entry::Dir { .. }) && Path::new(STATE_DIR).starts_with(e.path());
        for e in old.entries.iter().rev().filter(|e| !holds_state(e)) {
            self.undo(e);
        }
        if let Some(Packages { manager, names }) = &old.packages {
            match Manager::from_name(manager) {
                _ if names.is_empty() => {}
                Some(m) if !req.no_deps => self.push(Action::RemovePackages { manager: m, packages: names.clone() }, Record::None),
                _ => self.note(Level::Info, format!("kept the packages it installed: {}", names.join(" "))),
            }
        }
        self.push(Action::RemoveState, Record::None);
        for e in old.entries.iter().rev().filter(holds_state) {
            self.undo(e);
        }
        InstallPlan { uninstall: true, agents: old.agents.clone(), user: old.user.clone(), steps: self.steps, notes: self.notes, manifest: None }
    }

    /// Put the backup back, or remove what the installer created.
    fn restore_or_remove(&mut self, path: &Path, backup: Option<&Path>) {
        let forget = Record::Forget { path: path.into() };
        match backup {
            Some(b) if self.facts.exists(b) => self.push(Action::Restore { path: path.into(), backup: b.into() }, forget),
            Some(b) => {
                self.note(Level::Warning, format!("the original of {} is lost ({} is missing); removed the installed one", path.display(), b.display()));
                self.push(Action::Remove { path: path.into() }, forget);
            }
            None => self.push(Action::Remove { path: path.into() }, forget),
        }
    }

    fn kept(&mut self, path: &Path, backup: Option<&Path>) {
        let original = backup.map(|b| format!("; the original is in {}", b.display())).unwrap_or_default();
        self.note(Level::Warning, format!("kept {}: it changed since sandbox-install wrote it{original}", path.display()));
        self.manifest.forget(path);
    }

    pub(super) fn undo(&mut self, e: &Entry) {
        let path = e.path();
        let current = self.facts.get(path);
        match (e, current) {
            (Entry::Dir { .. }, Observed::Dir { .. }) => self.push(Action::RemoveDir { path: path.into() }, Record::Forget { path: path.into() }),
            (Entry::File { hash, backup, .. }, Observed::File { hash: h, .. }) if h == hash => self.restore_or_remove(path, backup.as_deref()),
            (Entry::Link { target, backup, .. }, Observed::Link { target: t }) if t == target => self.restore_or_remove(path, backup.as_deref()),
            (Entry::Block { hash, backup, .. }, Observed::File { hash: h, .. }) if h == hash => self.restore_or_remove(path, backup.as_deref()),
            (Entry::Block { backup, .. }, Observed::File { text: Some(text), mode, uid, gid, .. }) => {
                let rest = content::without_block(text);
                if rest == *text {
                    self.manifest.forget(path);
                } else if rest.is_empty() && backup.is_none() {
                    self.push(Action::Remove { path: path.into() }, Record::Forget { path: path.into() });
                } else {
                    let owner = self.facts.can_chown.then_some(Owner { uid: *uid, gid: *gid });
                    let content = Content::Text { text: rest };
                    self.push(Action::Write { path: path.into(), content, mode: *mode, owner, backup: None }, Record::Forget { path: path.into() });
                    self.note(Level::Info, format!("removed the managed block from {}; its other changes since install are kept", path.display()));
                }
                if let Some(b) = backup.as_deref().filter(|b| self.facts.exists(b)) {
                    self.push(Action::Remove { path: b.into() }, Record::None);
                }
            }
            (_, Observed::Absent) => match e.backup() {
                // Deleted since; bring back what was there before install.
                Some(b) if self.facts.exists(b) => self.push(Action::Restore { path: path.into(), backup: b.into() }, Record::Forget { path: path.into() }),
                _ => self.manifest.forget(path),
            },
            (Entry::Dir { .. }, _) => self.manifest.forget(path),
            (_, _) => self.kept(path, e.backup()),
        }
    }
}
