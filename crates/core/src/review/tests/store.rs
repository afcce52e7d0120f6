//! Baselines: the first session's, the acknowledged one, sessions' ends.

use super::super::codec::How;
use super::super::store::{state_dir, ReviewError, Store};
use super::{plant, take};
use std::io::Read;
use std::path::{Path, PathBuf};

#[test]
fn the_first_baseline_is_recorded_once_and_ack_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    plant(&ws, "Makefile", "all:\n", 0o644);
    let store = Store::new(&dir.path().join("state"), &ws);
    assert!(!store.has_baseline());
    assert!(store.record_first(take(&ws).snapshot, "s1", 100).unwrap());
    plant(&ws, "Makefile", "all:\n\tevil\n", 0o644);
    assert!(!store.record_first(take(&ws).snapshot, "s2", 200).unwrap(), "a later session must not move the baseline");
    let b = store.baseline().unwrap().unwrap();
    assert_eq!((b.how, b.session.as_deref(), b.snapshot.taken_ns), (How::FirstSession, Some("s1"), 100));
    store.acknowledge(take(&ws).snapshot).unwrap();
    let b = store.baseline().unwrap().unwrap();
    assert_eq!(b.how, How::Acknowledged);
    assert_eq!(b.snapshot, {
        let mut s = take(&ws).snapshot;
        s.taken_ns = b.snapshot.taken_ns;
        s
    });
}

#[test]
fn since_session_compares_with_the_state_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    plant(&ws, "Makefile", "v1\n", 0o644);
    let store = Store::new(&dir.path().join("state"), &ws);
    store.record_first(take(&ws).snapshot, "1-a", 100).unwrap();
    let end = |id: &str, started: u64, ended: u64| {
        let mut s = take(&ws).snapshot;
        s.taken_ns = ended;
        store.save_session(id, started, s, store.baseline().unwrap().as_ref()).unwrap();
    };
    end("1-a", 100, 150);
    end("2-b", 200, 250);
    end("3-c", 300, 350);
    assert_eq!(store.before_session("1-a").unwrap().how, How::FirstSession);
    let before = store.before_session("3-c").unwrap();
    assert_eq!((before.session.as_deref(), before.snapshot.taken_ns), (Some("2-b"), 250));
    assert!(matches!(store.before_session("9-z"), Err(ReviewError::NoSession { .. })));
    // Sessions are kept as differences from the baseline: once it is
    // replaced, the state before them is gone, and review says so.
    store.acknowledge(take(&ws).snapshot).unwrap();
    assert!(matches!(store.before_session("3-c"), Err(ReviewError::NothingBefore(_))));
    assert!(matches!(store.before_session("../x"), Err(ReviewError::BadSessionId(_))));
    for i in 0..12u64 {
        end(&format!("{i}-p"), 400 + i, 401 + i);
    }
    assert!(matches!(store.before_session("1-a"), Err(ReviewError::NoSession { .. })), "pruned");
}

#[test]
fn the_state_dir_is_never_where_sessions_write() {
    let home = Path::new("/home/u");
    let ws = [PathBuf::from("/home/u/p")];
    assert_eq!(state_dir(home, None, &ws).unwrap(), PathBuf::from("/home/u/.local/state/agent-sandbox/baselines"));
    assert_eq!(state_dir(home, Some(Path::new("/s")), &ws).unwrap(), PathBuf::from("/s/agent-sandbox/baselines"));
    // XDG_STATE_HOME inside the workspace or a shared dir: the default.
    assert_eq!(state_dir(home, Some(Path::new("/home/u/p/.state")), &ws).unwrap(), PathBuf::from("/home/u/.local/state/agent-sandbox/baselines"));
    assert!(matches!(state_dir(home, None, &[PathBuf::from("/home/u/.local")]), Err(ReviewError::Reachable { .. })));
}

/// What agent settings run is kept in the baseline (never a credential),
/// so a later review names what was added against it.
#[test]
fn agent_settings_items_survive_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, home) = (dir.path().join("ws"), dir.path().join("home"));
    plant(&ws, "README.md", "x\n", 0o644);
    plant(&home, ".claude/settings.json", r#"{"env": {"API_TOKEN": "sk-verysecretvalue123"}, "statusLine": {"command": "s.sh"}}"#, 0o644);
    let store = Store::new(&dir.path().join("state"), &ws);
    let snap = super::take_home(&ws, &home).snapshot;
    store.acknowledge(snap.clone()).unwrap();
    let b = store.baseline().unwrap().unwrap();
    assert_eq!(b.snapshot.commands, snap.commands);
    let key = format!("{}/.claude/settings.json", home.display());
    let lines: Vec<String> = b.snapshot.commands[&key].iter().map(|i| i.line()).collect();
    assert_eq!(lines, ["env.API_TOKEN = <hidden>", "statusLine.command = s.sh"]);
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(dir.path().join("state").join(crate::review::digest(ws.as_os_str().as_encoded_bytes())).join("acknowledged.gz")).unwrap(),
    )
    .read_to_end(&mut raw)
    .unwrap();
    assert!(!String::from_utf8_lossy(&raw).contains("verysecret"), "a credential reached the baseline");
    // Sessions' differences carry them too.
    let started = b.snapshot.taken_ns + 1;
    let mut end = snap.clone();
    end.taken_ns = started + 1;
    store.save_session("1-a", started, end, Some(&b)).unwrap();
    assert_eq!(store.before_session("1-a").unwrap().snapshot.commands, snap.commands);
}

/// The launcher reads the baseline ahead while the session runs; a
/// baseline replaced meanwhile (`review --ack` elsewhere) is read again.
#[test]
fn a_baseline_read_ahead_is_used_only_while_it_is_current() {
    use super::super::session::Watch;
    let dir = tempfile::tempdir().unwrap();
    let (ws, state) = (dir.path().join("ws"), dir.path().join("state"));
    plant(&ws, "Makefile", "all:\n", 0o644);
    let watch = |ws: &Path| Watch::start(Ok(&state), ws, Vec::new(), None, "s").0;

    let mut w = watch(&ws);
    w.preload();
    plant(&ws, "Makefile", "all:\n\tevil\n", 0o644);
    let lines = w.finish();
    assert!(lines.iter().any(|l| l.contains("changed")), "compared with the baseline read ahead: {lines:?}");

    let mut w = watch(&ws);
    w.preload();
    plant(&ws, "Makefile", "all:\n\tworse\n", 0o644);
    Store::new(&state, &ws).acknowledge(take(&ws).snapshot).unwrap();
    let lines = w.finish();
    assert!(lines.is_empty(), "compared with the baseline acknowledged during the session: {lines:?}");
}
