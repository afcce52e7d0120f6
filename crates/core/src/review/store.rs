//! Where snapshots are kept: `$XDG_STATE_HOME/agent-sandbox/baselines`, else
//! `~/.local/state/agent-sandbox/baselines`, one directory per workspace —
//! outside the workspace and out of sessions' reach (their home is an
//! empty tmpfs; a state dir a session could write is never used).
//!
//! Per workspace: `acknowledged.gz`, the baseline `review` compares with
//! (recorded by the launcher before the first session, replaced by
//! `review --ack`), and `sessions/`, how each recent session's end differed
//! from it (for `--since-session`). A compact binary format (`codec`): the
//! launcher reads the baseline after every session.

use super::codec::{self, Header, How};
use super::report::{apply, changes};
use super::{digest, Snapshot};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Session snapshots kept per workspace (the acknowledged one is kept
/// until replaced).
const KEEP_SESSIONS: usize = 10;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    #[error("cannot write the review baseline {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read the review baseline {path}: {why}; remove it, then run `agent-sandbox review --ack` to record a new one")]
    Read { path: PathBuf, why: String },
    #[error("no recorded session {id} for this workspace (recorded: {known}); the newest {KEEP_SESSIONS} are kept")]
    NoSession { id: String, known: String },
    #[error(
        "no state recorded before session {0} is left (pruned, or acknowledged since); use `agent-sandbox review` (since the acknowledged baseline) instead"
    )]
    NothingBefore(String),
    #[error("{0:?} is not a session id (they look like 1a2b-3c4d5e6f)")]
    BadSessionId(String),
    #[error("the review state dir {dir} lies inside {writable}, which sessions can write, so a session could rewrite its own baseline; set XDG_STATE_HOME to a directory outside it")]
    Reachable { dir: PathBuf, writable: PathBuf },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub how: How,
    pub session: Option<String>,
    /// When that session started, in nanoseconds since the epoch (0 for an
    /// acknowledgement).
    pub(crate) started_ns: u64,
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

    fn header(&self, base_ns: Option<u64>) -> Header {
        let s = &self.snapshot;
        Header {
            how: self.how,
            session: self.session.clone(),
            started_ns: self.started_ns,
            taken_ns: s.taken_ns,
            complete: s.complete,
            workspace: s.workspace.clone(),
            shared: s.shared.clone(),
            base_ns,
            kinds: Vec::new(),
            commands: s.commands.clone(),
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

/// A recorded session: (ended, started, id, file).
type SessionFile = (u64, u64, String, PathBuf);

impl Store {
    pub fn new(state_dir: &Path, workspace: &Path) -> Store {
        use std::os::unix::ffi::OsStrExt;
        Store { dir: state_dir.join(digest(workspace.as_os_str().as_bytes())) }
    }

    fn acknowledged_path(&self) -> PathBuf {
        self.dir.join("acknowledged.gz")
    }

    /// One stat: the launcher's cost at every session start.
    pub(crate) fn has_baseline(&self) -> bool {
        self.acknowledged_path().exists()
    }

    pub fn baseline(&self) -> Result<Option<Record>, ReviewError> {
        self.baseline_read().1
    }

    /// The baseline with the identity (device, inode) of the file it was
    /// read from. A baseline is never changed in place (it is renamed or
    /// linked over), so a path that still names that file still holds it.
    pub(crate) fn baseline_read(&self) -> (Option<FileId>, Result<Option<Record>, ReviewError>) {
        let p = self.acknowledged_path();
        let file = match std::fs::File::open(&p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (None, Ok(None)),
            Err(e) => return (None, Err(ReviewError::Read { path: p, why: e.to_string() })),
        };
        let id = file.metadata().ok().map(|m| file_id(&m));
        let read = decode(&p, file);
        (id, read.map(|(h, entries)| Some(record(h, entries.into_iter().filter_map(|(k, r)| Some((k, r?))).collect()))))
    }

    /// The identity of the file the baseline's path names now, if any.
    pub(crate) fn baseline_id(&self) -> Option<FileId> {
        std::fs::metadata(self.acknowledged_path()).ok().map(|m| file_id(&m))
    }

    /// Records the state before the first session, unless a baseline
    /// exists (another launcher may have been first): false then.
    pub(crate) fn record_first(&self, mut snapshot: Snapshot, session: &str, started: u64) -> Result<bool, ReviewError> {
        snapshot.taken_ns = started;
        let rec = Record { how: How::FirstSession, session: Some(session.into()), started_ns: started, snapshot };
        let tmp = self.write_tmp(&rec.header(None), rec.snapshot.entries.iter().map(|(k, r)| (k.as_str(), Some(r))))?;
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
        let tmp = self.write_tmp(&rec.header(None), rec.snapshot.entries.iter().map(|(k, r)| (k.as_str(), Some(r))))?;
        std::fs::rename(&tmp, self.acknowledged_path()).map_err(|source| ReviewError::Write { path: self.acknowledged_path(), source })
    }

    /// The state at the end of `session`, kept as its difference from
    /// `base` (the acknowledged baseline): small, whatever the tree's size.
    pub(crate) fn save_session(&self, session: &str, started: u64, snapshot: Snapshot, base: Option<&Record>) -> Result<(), ReviewError> {
        let dir = self.dir.join("sessions");
        let path = dir.join(format!("{:020}_{started:020}_{session}.gz", snapshot.taken_ns));
        let rec = Record { how: How::SessionEnd, session: Some(session.into()), started_ns: started, snapshot };
        let empty = Vec::new();
        let base_entries = base.map_or(&empty, |b| &b.snapshot.entries);
        let delta = changes(base_entries, &rec.snapshot.entries);
        let header = rec.header(base.map(|b| b.snapshot.taken_ns));
        let tmp = self.write_tmp(&header, delta.into_iter().map(|(k, _, new)| (k, new)))?;
        mkdir(&dir).and_then(|()| std::fs::rename(&tmp, &path)).map_err(|source| ReviewError::Write { path, source })?;
        self.prune(KEEP_SESSIONS);
        Ok(())
    }

    /// The recorded sessions, oldest first.
    fn sessions(&self) -> Vec<SessionFile> {
        let Ok(rd) = std::fs::read_dir(self.dir.join("sessions")) else { return Vec::new() };
        let mut v: Vec<SessionFile> = rd
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().into_string().ok()?;
                let mut parts = name.strip_suffix(".gz")?.splitn(3, '_');
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
        let ack = self.baseline()?;
        match (prior, ack.as_ref().filter(|a| a.snapshot.taken_ns <= started)) {
            (Some(p), Some(a)) if a.snapshot.taken_ns >= p.0 => Ok(a.clone()),
            (Some(p), _) => self.session_end(&p.3, ack.as_ref()).ok_or_else(|| ReviewError::NothingBefore(id.into())),
            (None, Some(a)) => Ok(a.clone()),
            (None, None) => Err(ReviewError::NothingBefore(id.into())),
        }
    }

    /// A session's end state: its difference applied to the baseline it
    /// was taken against (None when that baseline was replaced since).
    fn session_end(&self, path: &Path, ack: Option<&Record>) -> Option<Record> {
        let (h, delta) = read(path).ok()?;
        let base = match (h.base_ns, ack) {
            (None, _) => Vec::new(),
            (Some(ns), Some(a)) if a.snapshot.taken_ns == ns => a.snapshot.entries.clone(),
            _ => return None,
        };
        let entries = apply(&base, &delta);
        Some(record(h, entries))
    }

    /// The tool dirs the last session shared, for `review` (which has no
    /// sandbox plan to ask).
    pub(crate) fn save_shared(&self, dirs: &[PathBuf]) {
        if self.shared() != dirs {
            let _ = mkdir(&self.dir).and_then(|()| std::fs::write(self.dir.join("shared.json"), serde_json::to_vec(dirs).unwrap_or_default()));
        }
    }

    pub fn shared(&self) -> Vec<PathBuf> {
        std::fs::read(self.dir.join("shared.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    fn write_tmp<'a>(&self, header: &Header, entries: impl Iterator<Item = (&'a str, Option<&'a super::Rec>)>) -> Result<PathBuf, ReviewError> {
        let tmp = self.dir.join(format!(".tmp-{}-{}", std::process::id(), super::now_ns()));
        let write = || -> std::io::Result<()> {
            mkdir(&self.dir)?;
            codec::write(std::fs::File::create(&tmp)?, header, entries)
        };
        write().map_err(|source| ReviewError::Write { path: tmp.clone(), source })?;
        Ok(tmp)
    }
}

/// A file's device and inode.
pub(crate) type FileId = (u64, u64);

fn file_id(m: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

fn record(h: Header, entries: Vec<(String, super::Rec)>) -> Record {
    let snapshot = Snapshot { workspace: h.workspace, shared: h.shared, taken_ns: h.taken_ns, complete: h.complete, entries, commands: h.commands };
    Record { how: h.how, session: h.session, started_ns: h.started_ns, snapshot }
}

fn mkdir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

type Entries = Vec<(String, Option<super::Rec>)>;

fn read(path: &Path) -> Result<(Header, Entries), ReviewError> {
    let file = std::fs::File::open(path).map_err(|e| ReviewError::Read { path: path.to_path_buf(), why: e.to_string() })?;
    decode(path, file)
}

/// The records of `file`, opened from `path` (named in an error).
fn decode(path: &Path, file: std::fs::File) -> Result<(Header, Entries), ReviewError> {
    codec::read(file).map_err(|why| ReviewError::Read { path: path.to_path_buf(), why })
}
