//! Where snapshots are kept: `$XDG_STATE_HOME/agent-sandbox/baselines`, else
//! `~/.local/state/agent-sandbox/baselines`, one directory per workspace —
//! outside the workspace and out of sessions' reach (their home is an
//! empty tmpfs; a state dir a session could write is never used).
//!
//! Per workspace: `acknowledged.json.gz`, the baseline `review` compares
//! with (recorded by the launcher before the first session, replaced by
//! `review --ack`), and `sessions/`, the state at the end of each recent
//! session (for `--since-session`).

use super::{digest, Snapshot};
use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Session snapshots kept per workspace (the acknowledged one is kept
/// until replaced).
pub const KEEP_SESSIONS: usize = 10;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    #[error("cannot write the review baseline {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read the review baseline {path}: {why}; remove it, then run `agent-sandbox review --ack` to record a new one")]
    Read { path: PathBuf, why: String },
    #[error("no recorded session {id} for this workspace (recorded: {known}); the newest {KEEP_SESSIONS} are kept")]
    NoSession { id: String, known: String },
    #[error("no state recorded before session {0} (it was pruned); use `agent-sandbox review` (since the acknowledged baseline) instead")]
    NothingBefore(String),
    #[error("{0:?} is not a session id (they look like 1a2b-3c4d5e6f)")]
    BadSessionId(String),
    #[error("the review state dir {dir} lies inside {writable}, which sessions can write, so a session could rewrite its own baseline; set XDG_STATE_HOME to a directory outside it")]
    Reachable { dir: PathBuf, writable: PathBuf },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// Recorded by the launcher before the workspace's first session.
    FirstSession,
    /// Recorded by `agent-sandbox review --ack`.
    Acknowledged,
    /// The state at the end of a session.
    SessionEnd,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub how: How,
    pub session: Option<String>,
    /// When that session started, in nanoseconds since the epoch (0 for an
    /// acknowledgement).
    pub started_ns: u64,
    pub snapshot: Snapshot,
}

impl Record {
    /// "the acknowledged review of …", for messages.
    pub fn describe(&self) -> String {
        match (self.how, &self.session) {
            (How::FirstSession, _) => "the start of this workspace's first session".into(),
            (How::Acknowledged, _) => "the last acknowledged review (`review --ack`)".into(),
            (How::SessionEnd, Some(s)) => format!("the end of session {s}"),
            (How::SessionEnd, None) => "the end of a session".into(),
        }
    }
}

/// `$XDG_STATE_HOME/agent-sandbox/baselines`, else under `~/.local/state`;
/// never one inside a path sessions can write (`writable`).
pub fn state_dir(home: &Path, xdg_state: Option<&Path>, writable: &[PathBuf]) -> Result<PathBuf, ReviewError> {
    let default = home.join(".local/state/agent-sandbox/baselines");
    let chosen = match xdg_state {
        Some(p) if p.is_absolute() => p.join("agent-sandbox/baselines"),
        _ => default.clone(),
    };
    let reachable = |d: &Path| writable.iter().find(|w| d.starts_with(w)).cloned();
    if reachable(&chosen).is_none() {
        return Ok(chosen);
    }
    match reachable(&default) {
        None => Ok(default),
        Some(writable) => Err(ReviewError::Reachable { dir: default, writable }),
    }
}

/// One workspace's snapshots.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

impl Store {
    pub fn new(state_dir: &Path, workspace: &Path) -> Store {
        use std::os::unix::ffi::OsStrExt;
        Store { dir: state_dir.join(digest(workspace.as_os_str().as_bytes())) }
    }

    fn acknowledged_path(&self) -> PathBuf {
        self.dir.join("acknowledged.json.gz")
    }

    /// One stat: the launcher's cost at every session start.
    pub fn has_baseline(&self) -> bool {
        self.acknowledged_path().exists()
    }

    pub fn baseline(&self) -> Result<Option<Record>, ReviewError> {
        let p = self.acknowledged_path();
        if !p.exists() {
            return Ok(None);
        }
        read(&p).map(Some)
    }

    /// Records the state before the first session, unless a baseline
    /// exists (another launcher may have been first): false then.
    pub fn record_first(&self, mut snapshot: Snapshot, session: &str, started: u64) -> Result<bool, ReviewError> {
        snapshot.taken_ns = started;
        let rec = Record { how: How::FirstSession, session: Some(session.into()), started_ns: started, snapshot };
        let tmp = self.write_tmp(&rec)?;
        let res = std::fs::hard_link(&tmp, self.acknowledged_path());
        let _ = std::fs::remove_file(&tmp);
        match res {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(source) => Err(ReviewError::Write { path: self.acknowledged_path(), source }),
        }
    }

    /// `review --ack`: later reviews compare with this state.
    pub fn acknowledge(&self, snapshot: Snapshot) -> Result<(), ReviewError> {
        let rec = Record { how: How::Acknowledged, session: None, started_ns: 0, snapshot };
        let tmp = self.write_tmp(&rec)?;
        std::fs::rename(&tmp, self.acknowledged_path()).map_err(|source| ReviewError::Write { path: self.acknowledged_path(), source })
    }

    /// The state at the end of `session`, for `--since-session`.
    pub fn save_session(&self, session: &str, started: u64, snapshot: Snapshot) -> Result<(), ReviewError> {
        let dir = self.dir.join("sessions");
        let path = dir.join(format!("{:020}_{started:020}_{session}.json.gz", snapshot.taken_ns));
        let rec = Record { how: How::SessionEnd, session: Some(session.into()), started_ns: started, snapshot };
        let tmp = self.write_tmp(&rec)?;
        mkdir(&dir).and_then(|()| std::fs::rename(&tmp, &path)).map_err(|source| ReviewError::Write { path, source })?;
        self.prune(KEEP_SESSIONS);
        Ok(())
    }

    /// (taken, started, id, path) of the recorded sessions, oldest first.
    fn sessions(&self) -> Vec<(u64, u64, String, PathBuf)> {
        let Ok(rd) = std::fs::read_dir(self.dir.join("sessions")) else { return Vec::new() };
        let mut v: Vec<_> = rd
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().into_string().ok()?;
                let mut parts = name.strip_suffix(".json.gz")?.splitn(3, '_');
                let taken = parts.next()?.parse().ok()?;
                let started = parts.next()?.parse().ok()?;
                Some((taken, started, parts.next()?.to_string(), e.path()))
            })
            .collect();
        v.sort();
        v
    }

    fn prune(&self, keep: usize) {
        let all = self.sessions();
        for (_, _, _, p) in all.iter().take(all.len().saturating_sub(keep)) {
            let _ = std::fs::remove_file(p);
        }
    }

    /// The last state recorded before session `id` started: the end of the
    /// session before it, or the acknowledged baseline, whichever is newer.
    pub fn before_session(&self, id: &str) -> Result<Record, ReviewError> {
        if !valid_id(id) {
            return Err(ReviewError::BadSessionId(id.into()));
        }
        let all = self.sessions();
        let Some(&(_, started, _, _)) = all.iter().find(|s| s.2 == id) else {
            let known: Vec<&str> = all.iter().rev().map(|s| s.2.as_str()).collect();
            return Err(ReviewError::NoSession { id: id.into(), known: if known.is_empty() { "none".into() } else { known.join(", ") } });
        };
        let prior = all.iter().filter(|s| s.0 <= started && s.2 != id).max_by_key(|s| s.0);
        let ack = self.baseline()?.filter(|a| a.snapshot.taken_ns <= started);
        match (prior, ack) {
            (Some(p), Some(a)) if a.snapshot.taken_ns >= p.0 => Ok(a),
            (Some(p), _) => read(&p.3),
            (None, Some(a)) => Ok(a),
            (None, None) => Err(ReviewError::NothingBefore(id.into())),
        }
    }

    /// The tool dirs the last session shared, for `review` (which has no
    /// sandbox plan to ask).
    pub fn save_shared(&self, dirs: &[PathBuf]) {
        if self.shared() != dirs {
            let _ = mkdir(&self.dir).and_then(|()| std::fs::write(self.dir.join("shared.json"), serde_json::to_vec(dirs).unwrap_or_default()));
        }
    }

    pub fn shared(&self) -> Vec<PathBuf> {
        std::fs::read(self.dir.join("shared.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    fn write_tmp(&self, rec: &Record) -> Result<PathBuf, ReviewError> {
        let tmp = self.dir.join(format!(".tmp-{}-{}", std::process::id(), super::now_ns()));
        let write = || -> std::io::Result<()> {
            mkdir(&self.dir)?;
            let mut gz = GzEncoder::new(std::fs::File::create(&tmp)?, Compression::fast());
            serde_json::to_writer(&mut gz, rec).map_err(std::io::Error::other)?;
            gz.finish()?.flush()
        };
        write().map_err(|source| ReviewError::Write { path: tmp.clone(), source })?;
        Ok(tmp)
    }
}

fn mkdir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

fn read(path: &Path) -> Result<Record, ReviewError> {
    let bad = |why: String| ReviewError::Read { path: path.to_path_buf(), why };
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let mut bytes = Vec::new();
    GzDecoder::new(file).read_to_end(&mut bytes).map_err(|e| bad(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))
}
