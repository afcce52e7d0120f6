//! Helpers shared by every area of the suite, one module per kind of
//! thing the tests drive:
//!
//! - `launcher`: per-test directories, accounts, `agent-sandbox` run with a
//!   controlled environment, a pseudo-terminal driver, placed-file guards;
//! - `podman`: rootful podman (scripts/podman-env.sh), throwaway containers,
//!   cached derived images, tree hashes;
//! - `registry`: the local registry and Dev Containers CLI
//!   (scripts/registry-env.sh), registry reads with curl, fake binaries;
//! - `docker`: the private Docker engine (scripts/docker-env.sh), started on
//!   the first Docker test and stopped when the test process ends;
//! - `lab`: the egress jail's lab (network namespaces and their servers),
//!   jailed launches from a forked child, process bookkeeping.
//!
//! Here: what several of them share — the binary under test, unique names,
//! the static binaries, podman's configuration — and the locks that let all
//! areas run in one process (see [`share_machine`] and [`setup`]), and
//! across the suite's processes (see [`across_processes`]).

pub(crate) mod docker;
pub(crate) mod lab;
pub(crate) mod launcher;
pub(crate) mod podman;
pub(crate) mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A lock held by this process and by every other process of the suite:
/// scripts/test.sh runs the jail's area (whose tests fork, so they own
/// their process) in a test process of its own, and one area can be run
/// by hand while the suite runs. What they share — the package manager
/// and base images the set-up scripts make, podman's image store, paths
/// under /run that sessions' plans depend on — is guarded by `flock(2)` on
/// a file in the target's temporary folder as well as by the in-process
/// lock beside it, which keeps its own order (writers first) among this
/// process's threads.
pub(crate) struct Locked<G> {
    // Declared first, so released first: another process's waiter then
    // gets its turn before this process's next thread takes it again.
    _file: nix::fcntl::Flock<std::fs::File>,
    _inner: G,
}

/// Takes the in-process lock (`inner`), then the file lock `name`.
pub(crate) fn across_processes<G>(name: &str, exclusive: bool, inner: G) -> Locked<G> {
    use nix::fcntl::{Flock, FlockArg};
    let (path, file) = lock_file(name);
    let arg = if exclusive { FlockArg::LockExclusive } else { FlockArg::LockShared };
    let file = Flock::lock(file, arg).unwrap_or_else(|(_, e)| panic!("cannot lock {}: {e}", path.display()));
    Locked { _file: file, _inner: inner }
}

/// The file lock `name`, exclusive, if no other process holds it now.
fn try_across_processes<G>(name: &str, inner: G) -> Option<Locked<G>> {
    use nix::fcntl::{Flock, FlockArg};
    let (path, file) = lock_file(name);
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(file) => Some(Locked { _file: file, _inner: inner }),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => None,
        Err((_, e)) => panic!("cannot lock {}: {e}", path.display()),
    }
}

fn lock_file(name: &str) -> (PathBuf, std::fs::File) {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open the suite's lock file {}: {e}", path.display()));
    (path, file)
}

/// The repository's root.
pub(crate) fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binary under test.
pub(crate) fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_agent-sandbox"))
}

/// A name no other test (or concurrent run) uses: lowercase, usable in a
/// file name, a container name and a registry repository path.
pub(crate) fn unique(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{tag}-{}-{}-{:x}", std::process::id(), N.fetch_add(1, Ordering::Relaxed), nanos)
}

/// The tests of every area run in this one process, side by side. A test
/// that forks the test process and runs library code in the child, or
/// changes what all of the machine sees (the jail's lab: network
/// namespaces under /run/netns, /dev/net/tun's mode), holds the machine
/// alone ([`own_machine`]); every other test shares it for its whole run.
/// A forked child inherits locks other threads held at that moment (the
/// environment lock `Command::spawn` takes, a half-made `OnceLock`), and
/// no other test thread is then running to release them.
static MACHINE: RwLock<()> = RwLock::new(());

/// A lock on the machine held for a test's run, which also times the run
/// (from the moment the lock is held) for the report by area.
pub(crate) struct Held<G> {
    _guard: G,
    started: std::time::Instant,
}

impl<G> Drop for Held<G> {
    fn drop(&mut self) {
        timing::record(self.started.elapsed());
    }
}

/// How many verify checks a jailed session skips when no `allowDomains`
/// is set (95 and 96, the allowlist's: they prove it only where it is on).
/// A test of a jailed session without one expects exactly these skipped.
pub(crate) const SKIPPED_WITHOUT_ALLOWLIST: u64 = 2;

/// Held for a test's whole run by every test that does not own the machine.
pub(crate) fn share_machine() -> Held<RwLockReadGuard<'static, ()>> {
    timing::epoch();
    let guard = MACHINE.read().unwrap_or_else(|e| e.into_inner());
    Held { _guard: guard, started: std::time::Instant::now() }
}

/// Held for a test's whole run by a test that forks the test process or
/// changes the machine for everyone (the jail's tests). Other processes of
/// the suite go on; what such a test shares with them it locks by name
/// (the paths under /run that plans depend on: shared with every session,
/// `launcher::TestDir`).
pub(crate) fn own_machine() -> Held<Locked<RwLockWriteGuard<'static, ()>>> {
    timing::epoch();
    let guard = MACHINE.write().unwrap_or_else(|e| e.into_inner());
    let guard = across_processes(launcher::SYSTEM_STATE_LOCK, false, guard);
    Held { _guard: guard, started: std::time::Instant::now() }
}

/// How long each area's tests ran, printed when the test process ends
/// (the longest areas first): where a run's time goes.
mod timing {
    use std::collections::BTreeMap;
    use std::sync::{Mutex, Once, OnceLock};
    use std::time::{Duration, Instant};

    /// Every test's start and end since the first test started, and its
    /// name: the areas' sums, and when the longest tests started (what
    /// held them back).
    static SPANS: Mutex<Vec<Span>> = Mutex::new(Vec::new());
    /// A test's start, its end, and its name.
    type Span = (Duration, Duration, String);
    /// How many of the longest tests the report lists.
    const LONGEST: usize = 10;

    /// When the process's first test started.
    pub(super) fn epoch() -> Instant {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        *EPOCH.get_or_init(Instant::now)
    }

    /// Records the test this thread runs (libtest names the thread after it).
    pub(super) fn record(took: Duration) {
        static REPORT: Once = Once::new();
        // SAFETY: registers a plain extern "C" function to run at exit.
        REPORT.call_once(|| unsafe {
            libc::atexit(report);
        });
        let name = std::thread::current().name().unwrap_or("?").to_string();
        let end = epoch().elapsed();
        SPANS.lock().unwrap_or_else(|e| e.into_inner()).push((end.saturating_sub(took), end, name));
    }

    extern "C" fn report() {
        let mut spans = SPANS.lock().unwrap_or_else(|e| e.into_inner());
        // Longest first: each area's first span is its longest test.
        spans.sort_by_key(|s| std::cmp::Reverse(s.1 - s.0));
        // Per area: tests, their summed time, the longest one.
        let mut areas: BTreeMap<&str, (u32, Duration, &Span)> = BTreeMap::new();
        for span in spans.iter() {
            let area = span.2.split("::").nth(1).unwrap_or("?");
            let e = areas.entry(area).or_insert((0, Duration::ZERO, span));
            e.0 += 1;
            e.1 += span.1 - span.0;
        }
        let mut rows: Vec<_> = areas.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1 .1));
        let mut out = String::from("\ntest time by area (summed over its tests; they run side by side), longest first:\n");
        for (area, (n, total, (start, end, longest))) in rows {
            out += &format!("  {area:<12} {:>6.0} s in {n:>3} tests; longest {:>5.0} s ({longest})\n", total.as_secs_f64(), (*end - *start).as_secs_f64());
        }
        out += "the longest tests, from when to when (seconds since the first test started):\n";
        for (start, end, name) in spans.iter().take(LONGEST) {
            out += &format!("  {:>5.0} to {:>5.0}  {name}\n", start.as_secs_f64(), end.as_secs_f64());
        }
        eprint!("{out}");
    }
}

/// One set-up script at a time: podman-env.sh, registry-env.sh and
/// docker-env.sh install packages with apt (one dpkg lock) and make the
/// same base tarball (scripts/base-tarball.sh), which would clash when the
/// first tests of several areas start together on a fresh machine.
pub(crate) fn setup() -> Locked<MutexGuard<'static, ()>> {
    static SETUP: Mutex<()> = Mutex::new(());
    across_processes("setup", true, SETUP.lock().unwrap_or_else(|e| e.into_inner()))
}

/// `CONTAINERS_CONF` after running scripts/podman-env.sh once (it installs
/// podman, runc, mmdebstrap and imports the Debian 13 and 12 bases).
pub(crate) fn containers_conf() -> &'static str {
    static CONF: OnceLock<String> = OnceLock::new();
    CONF.get_or_init(|| {
        assert!(nix::unistd::geteuid().is_root(), "the container tests need root (rootful podman); run them as root");
        let _one = setup();
        let out = Command::new("bash")
            .args(["-c", ". scripts/podman-env.sh trixie bookworm >&2 && printf %s \"$CONTAINERS_CONF\""])
            .current_dir(root())
            .stderr(Stdio::inherit())
            .output()
            .expect("run bash scripts/podman-env.sh");
        assert!(
            out.status.success(),
            "scripts/podman-env.sh failed (it installs podman, runc, mmdebstrap and makes the base images); run it by hand to see why"
        );
        String::from_utf8(out.stdout).unwrap()
    })
}

/// The static binaries under test: $AGENT_SANDBOX_STATIC_DIR (the folder
/// `bash scripts/build-static.sh` prints; scripts/test.sh exports it), else
/// built here with that script.
pub(crate) fn static_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = match std::env::var_os("AGENT_SANDBOX_STATIC_DIR") {
            Some(d) => PathBuf::from(d),
            None => {
                let _one = setup();
                let out = registry::ok(Command::new("bash").arg(root().join("scripts/build-static.sh")).current_dir(root()));
                root().join(registry::stdout(&out).trim())
            }
        };
        for b in ["agent-sandbox", "sandbox-install"] {
            assert!(dir.join(b).is_file(), "{} has no {b}; build it with `bash scripts/build-static.sh`", dir.display());
        }
        dir
    })
}

/// The start check's only warning, with the device present, is the
/// container boundary's: rootful podman (and rootful Docker) run the container without a user
/// namespace, so its root is the host's root with /proc unmasked.
pub(crate) fn assert_only_boundary_warning(log: &str) {
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("agent-sandbox: WARNING")).collect();
    assert!(!warnings.is_empty() && warnings.iter().all(|w| w.contains("[container-host-root]")), "start warnings:\n{log}");
}

/// podman's image store: builds, commits, pulls and `devcontainer up`
/// read it (a build looks for cached layers among every image), removals
/// change it. A build whose cache lookup meets an image being removed
/// fails ("layer not known"), so removals wait for the others to finish;
/// the others may overlap one another. Held around one command at a time.
static IMAGE_STORE: RwLock<()> = RwLock::new(());

pub(crate) fn image_store_read() -> Locked<RwLockReadGuard<'static, ()>> {
    across_processes("image-store", false, IMAGE_STORE.read().unwrap_or_else(|e| e.into_inner()))
}

/// Without queueing: a waiting writer would hold back every new reader
/// (std's RwLock prefers writers), so one removal behind a ten-minute
/// emulated build stopped every other image test with it. A removal tries
/// until no build runs, and only its own test waits.
pub(crate) fn image_store_write() -> Locked<RwLockWriteGuard<'static, ()>> {
    loop {
        let inner = match IMAGE_STORE.try_write() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        if let Some(locked) = inner.and_then(|g| try_across_processes("image-store", g)) {
            return locked;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
