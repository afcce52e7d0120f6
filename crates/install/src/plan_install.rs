//! The install half of the planner: the desired end state, item by item,
//! in the order the executor creates it (binaries, shims, PATH, config,
//! agent settings, the remote user's home, packages), then the undo of
//! earlier entries no longer wanted, then the manifest.

use super::*;
use crate::config::{self, EnvMap};

/// Where the links in EXEC_LINK_DIR point (relative: valid in a staging root).
const LINK_TO_SHIM_DIR: &str = "../lib/agent-sandbox/bin";

impl Planner<'_> {
    pub(super) fn install(&mut self, req: &Request) -> Result<(), InstallError> {
        let root = self.root_owner;
        // The state directory's parents (a bare staging root has no /var).
        self.parents(Path::new(STATE_DIR));
        self.binaries(req)?;
        // PATH for login and interactive shells.
        self.dir(Path::new(PROFILE_DIR), 0o755, root)?;
        self.file(Path::new(PROFILE_SCRIPT), Content::Text { text: content::profile_script() }, 0o644, root, false)?;
        self.block(Path::new(BASH_RC), &content::source_block(false));
        self.block(Path::new(ZSH_RC), &content::source_block(true));
        self.config(req)?;
        self.agent_settings(req)?;
        self.remote_user(req)?;
        self.packages(req)?;
        if let Some(old) = self.old {
            for e in old.entries.iter().rev() {
                if !self.desired.contains(e.path()) {
                    self.undo(e);
                }
            }
        }
        Ok(())
    }

    /// The launcher, the installer, the shims, and the links for commands
    /// run without a shell's start-up files.
    fn binaries(&mut self, req: &Request) -> Result<(), InstallError> {
        let root = self.root_owner;
        let facts = self.facts;
        self.dir(Path::new(LIB_DIR), 0o755, root)?;
        self.dir(Path::new(SHIM_DIR), 0o755, root)?;
        let Some(bin) = &facts.binary else {
            return Err(InstallError::NoBinary { path: BINARY.into(), why: "no binary was given".into() });
        };
        let copy = |s: &super::super::facts::Source| Content::Copy { from: s.path.clone(), len: s.len, hash: s.hash.clone() };
        self.file(Path::new(BINARY), copy(bin), 0o755, root, false)?;
        let mut linked: Vec<&str> = vec!["agent-sandbox"];
        if let Some(inst) = &facts.installer {
            self.file(Path::new(INSTALLER), copy(inst), 0o755, root, false)?;
            linked.push("sandbox-install");
        }
        for a in &req.agents {
            self.link(&Path::new(SHIM_DIR).join(a.binary()), Path::new("agent-sandbox"))?;
        }
        self.dir(Path::new(EXEC_LINK_DIR), 0o755, root)?;
        for a in &req.agents {
            self.link(&Path::new(EXEC_LINK_DIR).join(a.binary()), &Path::new(LINK_TO_SHIM_DIR).join("agent-sandbox"))?;
        }
        for cmd in linked {
            self.link(&Path::new(EXEC_LINK_DIR).join(cmd), &Path::new(LINK_TO_SHIM_DIR).join(cmd))?;
        }
        Ok(())
    }

    /// The default configuration (an existing one is kept and checked).
    fn config(&mut self, req: &Request) -> Result<(), InstallError> {
        let text = content::default_config(&req.seed);
        let path = Path::new(CONFIG_FILE);
        config::from_source(path, Some(&text), &EnvMap::new()).map_err(|e| InstallError::Seed(e.to_string()))?;
        self.dir(Path::new(CONFIG_DIR), 0o755, self.root_owner)?;
        let before = self.notes.len();
        self.file(path, Content::Text { text }, 0o644, self.root_owner, true)?;
        let kept = self.notes.len() > before;
        if let Observed::File { text: current, uid, mode, .. } = self.facts.get(path) {
            if kept && req.seed != ConfigSeed::default() {
                self.note(Level::Warning, format!("the configuration options given were not applied: {} is kept as it is; edit it instead", path.display()));
            }
            if let Some(current) = current {
                if let Err(e) = config::from_source(path, Some(current), &EnvMap::new()) {
                    self.note(Level::Warning, format!("the existing {} is invalid, so sessions will refuse to start: {e}", path.display()));
                }
            }
            if self.facts.can_chown && (*uid != 0 || mode & 0o022 != 0) {
                self.note(
                    Level::Warning,
                    format!(
                        "{} must be root-owned and not group/world-writable or sessions refuse to start; run: chown root:root {0} && chmod 644 {0}",
                        path.display()
                    ),
                );
            }
        }
        Ok(())
    }

    /// Managed settings that turn the agents' own updaters off.
    fn agent_settings(&mut self, req: &Request) -> Result<(), InstallError> {
        let root = self.root_owner;
        if req.agents.contains(&Agent::Claude) {
            self.dir(Path::new(CLAUDE_DIR), 0o755, root)?;
            self.merged(Path::new(CLAUDE_MANAGED), content::claude_managed, "\"env\": {\"DISABLE_AUTOUPDATER\": \"1\"}")?;
        }
        if req.agents.contains(&Agent::Codex) {
            self.dir(Path::new(CODEX_DIR), 0o755, root)?;
            self.merged(Path::new(CODEX_SYSTEM), content::codex_system, "check_for_update_on_startup = false")?;
        }
        if req.agents.contains(&Agent::Pi) {
            self.note(Level::Info, "pi has no system-wide settings file; sessions get PI_SKIP_VERSION_CHECK=1 from the launcher".into());
        }
        Ok(())
    }

    /// The remote user's agent state directories (with their ownership, so
    /// a volume mounted there starts out theirs) and PATH in their own
    /// start-up files.
    fn remote_user(&mut self, req: &Request) -> Result<(), InstallError> {
        let Some(u) = &self.facts.user else { return Ok(()) };
        if !matches!(self.facts.get(&u.home), Observed::Dir { .. }) {
            self.note(
                Level::Warning,
                format!("the home {} of user {} does not exist; create it (useradd -m) so sessions have agent state", u.home.display(), u.name),
            );
            return Ok(());
        }
        let owner = self.facts.can_chown.then_some(Owner { uid: u.uid, gid: u.gid });
        for a in &req.agents {
            for (p, kind) in a.state_paths(&u.home) {
                if kind != StateKind::Dir {
                    continue;
                }
                match self.facts.get(&p) {
                    Observed::Dir { uid, .. } if *uid != u.uid && self.facts.can_chown => self.note(
                        Level::Warning,
                        format!(
                            "{} is owned by uid {uid}, not {}; sessions cannot keep agent state there: chown -R {}: {}",
                            p.display(),
                            u.name,
                            u.name,
                            p.display()
                        ),
                    ),
                    _ => self.dir(&p, 0o700, owner)?,
                }
            }
        }
        for (rc, zsh) in USER_RC_FILES {
            self.block(&u.home.join(rc), &content::source_block(*zsh));
        }
        Ok(())
    }

    fn packages(&mut self, req: &Request) -> Result<(), InstallError> {
        let pk = &self.facts.packages;
        let missing = pk.missing.join(" and ");
        if req.staged {
            self.note(Level::Info, "--root: packages are not installed into a staging directory; the target needs bubblewrap and passt".into());
        } else if req.no_deps {
            if !pk.missing.is_empty() {
                self.note(Level::Warning, format!("{missing} not installed (--no-deps): sessions refuse to start until they are"));
            }
        } else if !pk.missing.is_empty() {
            let Some(manager) = pk.manager else {
                return Err(InstallError::NoPackageManager { missing, os: pk.os.clone() });
            };
            self.push(Action::InstallPackages { manager, packages: pk.missing.clone() }, Record::None);
        }
        Ok(())
    }

    pub(super) fn finish(mut self, req: &Request) -> InstallPlan {
        self.manifest.agents = req.agents.iter().map(|a| a.name().to_string()).collect();
        self.manifest.user = self.facts.user.as_ref().map(|u| u.name.clone());
        if self.old != Some(&self.manifest) || self.steps.iter().any(|s| matches!(s.action, Action::InstallPackages { .. })) {
            if !self.facts.exists(Path::new(STATE_DIR)) {
                self.push(Action::MakeDir { path: STATE_DIR.into(), mode: 0o755, owner: self.root_owner }, Record::None);
            }
            self.push(Action::WriteManifest, Record::None);
        }
        InstallPlan {
            uninstall: false,
            agents: self.manifest.agents.clone(),
            user: self.manifest.user.clone(),
            steps: self.steps,
            notes: self.notes,
            manifest: Some(self.manifest),
        }
    }
}
