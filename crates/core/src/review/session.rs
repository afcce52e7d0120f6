//! What the launcher does for review around a session.
//!
//! 1. At the start: one stat, unless the workspace has no baseline yet;
//!    then the state before this first session is recorded as the
//!    baseline, so the first session is reviewable too. A common launch
//!    never walks the tree.
//! 2. After the session: one walk, compared with the acknowledged baseline
//!    (not with this session's start: several sessions in a row cannot
//!    hide what an earlier one planted), the end state kept for
//!    `review --since-session`, and a one-line hint.

use super::report::{compare, hint};
use super::store::{ReviewError, Store};
use crate::sandbox::mounts::{Planned, Role};
use std::path::{Path, PathBuf};

/// Tool data dirs that sessions may share with the user.
pub use crate::sandbox::plan::TOOL_DIRS;

/// The agents' state in `home` that review covers: every agent's (a
/// session binds its own agent's; the vendor binaries read all of them
/// wherever they start) and the shared skills.
pub(crate) fn agent_roots(home: &Path) -> Vec<PathBuf> {
    let state = crate::agents::ALL.iter().flat_map(|a| a.state_paths(home)).map(|(p, _)| p);
    state.chain(crate::sandbox::plan::SHARED_HOME_DIRS.iter().map(|d| home.join(d))).collect()
}

/// The user's own tool dirs a plan binds writable into the session
/// (`shareToolDirs`; the sandbox's private copies do not count).
pub(crate) fn shared_dirs(mounts: &[Planned]) -> Vec<PathBuf> {
    mounts.iter().filter(|m| m.serves(Role::SharedToolDirs)).map(|m| m.dest().clone()).collect()
}

/// Review's part of one session.
#[derive(Debug)]
pub(crate) struct Watch {
    store: Option<Store>,
    workspace: PathBuf,
    shared: Vec<PathBuf>,
    /// The home whose agents' state is reviewed.
    home: Option<PathBuf>,
    session: String,
    started: u64,
    /// The baseline, read while the session ran (`preload`).
    preloaded: Option<Preloaded>,
}

/// A baseline read ahead, and the identity of its file then.
#[derive(Debug)]
struct Preloaded {
    id: Option<super::store::FileId>,
    read: Result<Option<super::store::Record>, ReviewError>,
}

impl Watch {
    /// Step 1; returns the lines to print (warnings only).
    pub(crate) fn start(
        state_dir: Result<&Path, &ReviewError>,
        workspace: &Path,
        shared: Vec<PathBuf>,
        home: Option<&Path>,
        session: &str,
    ) -> (Watch, Vec<String>) {
        let started = super::now_ns();
        let mut lines = Vec::new();
        let store = match state_dir {
            Ok(dir) => Some(Store::new(dir, workspace)),
            Err(e) => {
                lines.push(format!("agent-sandbox: {e}; `agent-sandbox review` will list everything present"));
                None
            }
        };
        if let Some(store) = store.as_ref().filter(|s| !s.has_baseline()) {
            let now = super::take(workspace, super::Roots { shared: &shared, home });
            lines.extend(now.warnings.iter().map(|w| format!("agent-sandbox: review: {w}")));
            if let Err(e) = store.record_first(now.snapshot, session, started) {
                lines.push(format!("agent-sandbox: {e}; `agent-sandbox review` will list everything present"));
            }
        }
        if let Some(store) = &store {
            store.save_shared(&shared);
        }
        let watch = Watch {
            store,
            workspace: workspace.to_path_buf(),
            shared,
            home: home.map(Path::to_path_buf),
            session: session.to_string(),
            started,
            preloaded: None,
        };
        (watch, lines)
    }

    /// Reads the baseline ahead, while the session runs (the launcher
    /// only waits then): `finish` uses it unless the baseline was
    /// replaced meanwhile (`review --ack` in another terminal).
    pub(crate) fn preload(&mut self) {
        if let Some(store) = &self.store {
            let (id, read) = store.baseline_read();
            self.preloaded = Some(Preloaded { id, read });
        }
    }

    /// Step 2; returns the lines to print.
    pub(crate) fn finish(self) -> Vec<String> {
        let Some(store) = &self.store else { return Vec::new() };
        let mut t = crate::launch::Phases::new();
        let now = super::take(&self.workspace, super::Roots { shared: &self.shared, home: self.home.as_deref() });
        t.mark("walk");
        let mut lines = Vec::new();
        let read = match self.preloaded {
            // A failed read ahead (a signal's EINTR) is tried again.
            Some(p) if p.read.is_ok() && p.id.is_some() && p.id == store.baseline_id() => p.read,
            _ => store.baseline(),
        };
        let base = read.unwrap_or_else(|e| {
            lines.push(format!("agent-sandbox: {e}"));
            None
        });
        t.mark("baseline");
        if let Some(base) = &base {
            lines.extend(hint(&compare(Some(&base.snapshot), &now), &base.describe()));
        }
        t.mark("compare");
        if let Err(e) = store.save_session(&self.session, self.started, now.snapshot, base.as_ref()) {
            lines.push(format!("agent-sandbox: {e}"));
        }
        t.mark("saved");
        t.log("review after the session");
        lines
    }
}
