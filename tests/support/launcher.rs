//! Shared helpers for the integration tests: per-test directories outside
//! the session-private /tmp and /var/tmp, root-owned config files, a
//! builder that runs `agent-sandbox` with a controlled environment (as root
//! or as a dedicated non-root user), a pseudo-terminal driver, and guards
//! that remove what a test put into a home directory or /run.
//!
//! These tests run real sessions: they need root (to create the test user,
//! root-owned configs, sockets under /run and private mount namespaces),
//! bubblewrap, and a few Debian base tools. A missing prerequisite panics
//! with the command that installs it; nothing is skipped.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Write as _;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub(crate) use super::{bin, unique};

/// `exe` at a path a session can see: a checkout under /tmp, /var/tmp or
/// the home (all private or empty inside a session) gets a copy under
/// /var/lib/agent-sandbox-tests/bin, replaced on each run.
pub(crate) fn visible_copy(exe: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
    if ![Path::new("/tmp"), Path::new("/var/tmp"), home.as_path()].iter().any(|p| exe.starts_with(p)) {
        return exe.to_path_buf();
    }
    let dir = Path::new("/var/lib/agent-sandbox-tests/bin");
    std::fs::create_dir_all(dir).expect("create /var/lib/agent-sandbox-tests/bin");
    let name = exe.file_name().unwrap().to_string_lossy().into_owned();
    let dst = dir.join(format!("{name}-{}", std::process::id()));
    if !dst.exists() {
        remove_old_copies(dir, &name);
        std::fs::copy(exe, &dst).expect("copy the binary where sessions can see it");
    }
    dst
}

/// Copies left by earlier runs (their pid is gone).
pub(crate) fn remove_old_copies(dir: &Path, name: &str) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let pid = file.strip_prefix(&format!("{name}-")).and_then(|p| p.parse::<i32>().ok());
        if pid.is_some_and(|p| p != std::process::id() as i32 && !Path::new(&format!("/proc/{p}")).exists()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The system PATH sessions are started with (no user-writable entries).
pub(crate) const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Where per-test directories go. Not /tmp or /var/tmp: those are private
/// tmpfs mounts inside a session, so siblings and helper binaries placed
/// there would be invisible for the wrong reason. Override with
/// `AGENT_SANDBOX_TEST_DIR` (it must not be under /tmp, /var/tmp, /run or a
/// home directory).
pub(crate) fn test_base() -> PathBuf {
    let base = std::env::var_os("AGENT_SANDBOX_TEST_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/var/lib/agent-sandbox-tests"));
    for bad in ["/tmp", "/var/tmp", "/run", "/root", "/home"] {
        assert!(!base.starts_with(bad), "AGENT_SANDBOX_TEST_DIR={} is under {bad}, which a session masks; pick another directory", base.display());
    }
    base
}

pub(crate) fn require_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "these tests run real sandbox sessions and need root (to create a test user, root-owned \
         configs and sockets under /run); run them as root, e.g. `sudo -E cargo test --test all suite::sandbox::`"
    );
}

/// bubblewrap where the launcher looks for it.
pub(crate) fn require_bwrap() {
    let found = ["/usr/bin/bwrap", "/usr/sbin/bwrap", "/bin/bwrap", "/sbin/bwrap", "/usr/local/bin/bwrap"].iter().any(|p| Path::new(p).is_file());
    assert!(found, "bubblewrap is not installed; install it with `apt-get install bubblewrap`");
}

/// An executable the tests need, with the package that provides it.
pub(crate) fn require_tool(path: &str, install: &str) -> PathBuf {
    assert!(Path::new(path).is_file(), "{path} is missing; install it with `{install}`");
    PathBuf::from(path)
}

pub(crate) fn python3() -> PathBuf {
    require_tool("/usr/bin/python3", "apt-get install python3-minimal")
}

/// Creates `p` and its missing parents with mode 0755 (whatever the umask).
pub(crate) fn mkdir(p: &Path) {
    std::fs::create_dir_all(p).unwrap_or_else(|e| panic!("mkdir {}: {e}", p.display()));
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub(crate) fn write(p: &Path, contents: impl AsRef<[u8]>) {
    if let Some(parent) = p.parent() {
        if !parent.exists() {
            mkdir(parent);
        }
    }
    std::fs::write(p, contents).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
}

pub(crate) fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap_or_else(|e| panic!("chmod {}: {e}", p.display()));
}

pub(crate) fn chown(p: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(p, Some(uid), Some(gid)).unwrap_or_else(|e| panic!("chown {}: {e}", p.display()));
}

/// A per-test directory tree, removed when dropped:
///
/// ```text
/// <base>/<unique>/        root (0755, root-owned)
///                 p/ws    the workspace (its parent `p` holds the peers)
///                 etc/    configuration files (outside the workspace)
///                 aux/    anything else the test needs outside `p`
/// ```
pub(crate) struct TestDir {
    pub root: PathBuf,
    _state: SystemState,
}

/// Tests that change what every session's plan depends on (sockets or
/// directories under /run) hold this exclusively; every other test holds it
/// shared for its lifetime (through its [`TestDir`]), so a plan is never
/// computed while such a path is being created or removed. A test must hold
/// one `TestDir` at a time: the lock prefers writers, so a second shared
/// acquisition while an exclusive test waits would deadlock. Across the
/// suite's processes it is a file lock too (`SYSTEM_STATE_LOCK`), which a
/// test that owns its process (`own_machine`) holds shared.
static SYSTEM_STATE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// The name of [`SYSTEM_STATE`]'s lock across the suite's processes.
pub(crate) const SYSTEM_STATE_LOCK: &str = "system-state";

enum SystemState {
    Shared { _guard: super::Locked<std::sync::RwLockReadGuard<'static, ()>> },
    Exclusive { _guard: super::Locked<std::sync::RwLockWriteGuard<'static, ()>> },
}

impl TestDir {
    /// A test directory; the test may run alongside others.
    pub(crate) fn new(tag: &str) -> TestDir {
        let guard = SYSTEM_STATE.read().unwrap_or_else(|e| e.into_inner());
        let guard = super::across_processes(SYSTEM_STATE_LOCK, false, guard);
        TestDir::with_state(tag, SystemState::Shared { _guard: guard })
    }

    /// A test directory for a test that changes shared system paths (under
    /// /run): no other session of this test run runs meanwhile.
    pub(crate) fn exclusive(tag: &str) -> TestDir {
        let guard = SYSTEM_STATE.write().unwrap_or_else(|e| e.into_inner());
        let guard = super::across_processes(SYSTEM_STATE_LOCK, true, guard);
        TestDir::with_state(tag, SystemState::Exclusive { _guard: guard })
    }

    fn with_state(tag: &str, state: SystemState) -> TestDir {
        require_root();
        let base = test_base();
        if !base.exists() {
            mkdir(&base);
        }
        let root = base.join(unique(tag));
        mkdir(&root);
        let td = TestDir { root, _state: state };
        mkdir(&td.ws());
        mkdir(&td.etc());
        mkdir(&td.aux());
        td
    }

    pub(crate) fn ws(&self) -> PathBuf {
        self.root.join("p/ws")
    }

    /// The workspace's parent: the directory whose other children are peers.
    pub(crate) fn peers_dir(&self) -> PathBuf {
        self.root.join("p")
    }

    /// Another workspace, `<root>/<name>/ws` (its own parent, so not a peer
    /// of the first), created.
    pub(crate) fn workspace(&self, name: &str) -> PathBuf {
        let ws = self.root.join(name).join("ws");
        mkdir(&ws);
        ws
    }

    pub(crate) fn etc(&self) -> PathBuf {
        self.root.join("etc")
    }

    pub(crate) fn aux(&self) -> PathBuf {
        self.root.join("aux")
    }

    /// Writes a root-owned, mode 0644 config file outside the workspace.
    pub(crate) fn config(&self, text: &str) -> PathBuf {
        let p = self.etc().join(format!("{}.json5", unique("config")));
        write(&p, text);
        chown(&p, 0, 0);
        chmod(&p, 0o644);
        p
    }

    /// The launcher binary at a path any user can reach (a hard link, or a
    /// copy across file systems), for sessions run by the test user when the
    /// build directory is not reachable by other users.
    pub(crate) fn public_bin(&self) -> PathBuf {
        let dir = self.root.join("bin");
        mkdir(&dir);
        let dest = dir.join("agent-sandbox");
        if !dest.exists() && std::fs::hard_link(bin(), &dest).is_err() {
            std::fs::copy(bin(), &dest).unwrap();
        }
        chmod(&dest, 0o755);
        dest
    }
}

/// Places outside every home and workspace (files or trees), removed on drop.
pub(crate) struct Planted(pub Vec<PathBuf>);

impl Drop for Planted {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_dir_all(p);
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The account a session runs as.
#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

pub(crate) fn root_account() -> Account {
    let u = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(0)).unwrap().expect("root is in /etc/passwd");
    Account { name: u.name, uid: 0, gid: 0, home: u.dir }
}

/// The dedicated non-root test user (`astest`, any free uid), created once
/// with its home directory if it does not exist yet.
pub(crate) fn test_user() -> Account {
    static USER: OnceLock<Account> = OnceLock::new();
    USER.get_or_init(|| user_named("astest")).clone()
}

/// A second non-root test user (`astrc`) whose shell start-up files tests
/// may write: the sessions of `test_user` never read them.
pub(crate) fn rc_test_user() -> Account {
    static USER: OnceLock<Account> = OnceLock::new();
    USER.get_or_init(|| user_named("astrc")).clone()
}

/// A non-root user of one area's own (review's agent-state tests write its
/// home's `~/.claude`, `~/.codex`...), created once.
pub(crate) fn area_test_user(name: &str) -> Account {
    user_named(name)
}

/// The non-root user `name` (any free uid), created with its home
/// directory if it does not exist yet.
fn user_named(name: &str) -> Account {
    require_root();
    let lookup = || nix::unistd::User::from_name(name).ok().flatten();
    if lookup().is_none() {
        require_tool("/usr/sbin/useradd", "apt-get install passwd");
        // Another test run may be creating it at the same moment:
        // useradd then fails on the passwd lock; retry and look again.
        for _ in 0..20 {
            let out = Command::new("/usr/sbin/useradd").args(["-m", "-U", "-s", "/bin/sh", name]).output().unwrap();
            if out.status.success() || lookup().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let u = lookup().unwrap_or_else(|| panic!("cannot create the test user {name} with useradd"));
    assert_ne!(u.uid.as_raw(), 0, "{name} must not be uid 0");
    if !u.dir.exists() {
        mkdir(&u.dir);
    }
    chown(&u.dir, u.uid.as_raw(), u.gid.as_raw());
    chmod(&u.dir, 0o755);
    Account { name: u.name, uid: u.uid.as_raw(), gid: u.gid.as_raw(), home: u.dir }
}

/// What a finished process left: exit status and captured output.
pub(crate) struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub stdout_bytes: Vec<u8>,
    /// What was run, for failure messages.
    pub what: String,
}

impl Out {
    fn from_output(o: std::process::Output, what: String) -> Out {
        Out {
            status: o.status,
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            stdout_bytes: o.stdout,
            what,
        }
    }

    #[track_caller]
    pub(crate) fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.status.code(), Some(code), "expected exit code {code}\n{self}");
        self
    }

    #[track_caller]
    pub(crate) fn assert_ok(&self) -> &Self {
        self.assert_code(0)
    }

    /// Lines of stdout of the form `key=value`, as a map.
    pub(crate) fn kv(&self) -> BTreeMap<String, String> {
        self.stdout.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.trim().to_string(), v.to_string())).collect()
    }

    /// The value of `key=...` on stdout; panics when absent.
    #[track_caller]
    pub(crate) fn get(&self, key: &str) -> String {
        self.kv().get(key).cloned().unwrap_or_else(|| panic!("no `{key}=` line in the output\n{self}"))
    }
}

impl fmt::Display for Out {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--- {}\n--- status: {:?}\n--- stdout:\n{}\n--- stderr:\n{}\n---", self.what, self.status, self.stdout, self.stderr)
    }
}

/// Runs `agent-sandbox` with a controlled environment: cleared, then PATH,
/// HOME, USER, LANG, `AGENT_SANDBOX_EGRESS_JAIL=0`, then what the test adds.
pub(crate) struct Launcher {
    bin: PathBuf,
    cwd: PathBuf,
    account: Account,
    env: BTreeMap<OsString, OsString>,
    global: Vec<OsString>,
    run_flags: Vec<OsString>,
    namespace_setup: Option<Box<dyn FnMut() -> std::io::Result<()> + Send + Sync>>,
    private_tun: bool,
}

impl Launcher {
    /// As root (the test process's user), in `cwd`.
    pub(crate) fn new(cwd: &Path) -> Launcher {
        Launcher::as_account(cwd, root_account())
    }

    /// As `account` (dropping privileges when it is not root).
    pub(crate) fn as_account(cwd: &Path, account: Account) -> Launcher {
        let mut env = BTreeMap::new();
        env.insert("PATH".into(), SYSTEM_PATH.into());
        env.insert("HOME".into(), account.home.clone().into());
        env.insert("USER".into(), account.name.clone().into());
        env.insert("LOGNAME".into(), account.name.clone().into());
        env.insert("LANG".into(), "C.UTF-8".into());
        env.insert("AGENT_SANDBOX_EGRESS_JAIL".into(), "0".into());
        Launcher { bin: bin(), cwd: cwd.to_path_buf(), account, env, global: Vec::new(), run_flags: Vec::new(), namespace_setup: None, private_tun: false }
    }

    /// Use this copy of the binary (see [`TestDir::public_bin`]).
    pub(crate) fn bin(mut self, p: &Path) -> Self {
        self.bin = p.to_path_buf();
        self
    }

    pub(crate) fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env.insert(k.as_ref().to_os_string(), v.as_ref().to_os_string());
        self
    }

    /// Prepends `dir` to PATH.
    pub(crate) fn path_first(mut self, dir: &Path) -> Self {
        let old = self.env.get(OsStr::new("PATH")).cloned().unwrap_or_default();
        let mut new = dir.as_os_str().to_os_string();
        new.push(":");
        new.push(old);
        self.env.insert("PATH".into(), new);
        self
    }

    pub(crate) fn config(mut self, p: &Path) -> Self {
        self.global.push("--config".into());
        self.global.push(p.into());
        self
    }

    pub(crate) fn agent(mut self, a: &str) -> Self {
        self.run_flags.push("--agent".into());
        self.run_flags.push(a.into());
        self
    }

    pub(crate) fn peers(mut self) -> Self {
        self.run_flags.push("--peers".into());
        self
    }

    /// Runs in the child just before exec (e.g. a private mount namespace
    /// that hides or replaces bwrap). Must be async-signal-safe.
    pub(crate) fn pre_exec(mut self, f: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static) -> Self {
        self.namespace_setup = Some(Box::new(f));
        self
    }

    /// A non-root launcher with the jail: a /dev/net/tun that user may open
    /// (as a devcontainer's `--device` gives it), made in a private mount
    /// namespace of the launcher, so this machine's own (root-only on a host
    /// without udev) is left as it is.
    pub(crate) fn private_tun(mut self) -> Self {
        self.private_tun = true;
        self
    }

    /// The command for `agent-sandbox [--config C] ARGS...`.
    pub(crate) fn command(&mut self, args: &[&OsStr]) -> Command {
        let mut c = if self.private_tun && self.account.uid != 0 {
            let script = format!(
                "mount -t tmpfs -o mode=755 tmpfs /dev/net && mknod -m 666 /dev/net/tun c 10 200 && exec setpriv --reuid={} --regid={} --clear-groups -- \"$0\" \"$@\"",
                self.account.uid, self.account.gid
            );
            let mut c = Command::new("/usr/bin/unshare");
            c.args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c", &script]).arg(&self.bin);
            c
        } else {
            let mut c = Command::new(&self.bin);
            if self.account.uid != 0 {
                c.uid(self.account.uid).gid(self.account.gid);
            }
            c
        };
        c.args(&self.global).args(args).current_dir(&self.cwd).env_clear().envs(&self.env).stdin(Stdio::null());
        if let Some(f) = self.namespace_setup.take() {
            // SAFETY: the closure only makes raw system calls (see `pre_exec`).
            unsafe { c.pre_exec(f) };
        }
        c
    }

    /// `agent-sandbox ARGS...` (any verb).
    pub(crate) fn cli(mut self, args: &[&str]) -> Out {
        let os: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let what = format!("agent-sandbox {}", args.join(" "));
        let mut c = self.command(&os);
        Out::from_output(c.output().unwrap_or_else(|e| panic!("cannot start {}: {e}", self.bin.display())), what)
    }

    /// `agent-sandbox run [flags] -- CMD...`.
    pub(crate) fn run_os(mut self, cmd: &[&OsStr]) -> Out {
        let mut args: Vec<&OsStr> = vec![OsStr::new("run")];
        let flags = std::mem::take(&mut self.run_flags);
        args.extend(flags.iter().map(OsString::as_os_str));
        args.push(OsStr::new("--"));
        args.extend(cmd);
        let what = format!("{:?} (in {}, as {})", args, self.cwd.display(), self.account.name);
        let mut c = self.command(&args);
        Out::from_output(c.output().unwrap_or_else(|e| panic!("cannot start {}: {e}", self.bin.display())), what)
    }

    pub(crate) fn run(self, cmd: &[&str]) -> Out {
        let os: Vec<&OsStr> = cmd.iter().map(OsStr::new).collect();
        self.run_os(&os)
    }

    /// `agent-sandbox run [flags] -- sh -c SCRIPT`.
    pub(crate) fn sh(self, script: &str) -> Out {
        self.run(&["/bin/sh", "-c", script])
    }

    /// The full argv for `run [flags] -- CMD...`, for spawning by hand.
    pub(crate) fn run_command(mut self, cmd: &[&str]) -> Command {
        let mut args: Vec<OsString> = vec!["run".into()];
        args.append(&mut self.run_flags);
        args.push("--".into());
        args.extend(cmd.iter().map(OsString::from));
        let refs: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        self.command(&refs)
    }
}

/// A file the test puts somewhere shared (a home directory, /run), removed
/// on drop with the directories it had to create (when they are empty).
pub(crate) struct PlacedFile {
    pub path: PathBuf,
    created_dirs: Vec<PathBuf>,
}

impl PlacedFile {
    pub(crate) fn new(path: &Path, contents: &str) -> PlacedFile {
        let created_dirs = create_parents(path);
        std::fs::write(path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        PlacedFile { path: path.to_path_buf(), created_dirs }
    }

    /// A listening unix socket at `path` (the listener lives as long as the
    /// guard).
    pub(crate) fn socket(path: &Path) -> (PlacedFile, std::os::unix::net::UnixListener) {
        let created_dirs = create_parents(path);
        let l = std::os::unix::net::UnixListener::bind(path).unwrap_or_else(|e| panic!("bind {}: {e}", path.display()));
        (PlacedFile { path: path.to_path_buf(), created_dirs }, l)
    }
}

fn create_parents(path: &Path) -> Vec<PathBuf> {
    let mut missing = Vec::new();
    let mut p = path.parent();
    while let Some(d) = p {
        if d.exists() {
            break;
        }
        missing.push(d.to_path_buf());
        p = d.parent();
    }
    for d in missing.iter().rev() {
        // Racing with another test that creates the same directory is fine.
        let _ = std::fs::create_dir(d);
    }
    missing
}

impl Drop for PlacedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        for d in &self.created_dirs {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// `cmd.output()` for a program the test has just written, tried again
/// while the kernel answers "text file busy": a child that another test
/// thread forked while the file was open for writing holds that descriptor
/// until it execs (a moment; the areas run side by side in one process).
pub(crate) fn output_of_new_program(cmd: &mut Command) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            r => return r.unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}")),
        }
    }
}

/// The first `key:\tvalue` line of a /proc status file's text.
pub(crate) fn status_field(status: &str, key: &str) -> Option<String> {
    status.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')).map(|v| v.trim().to_string()))
}

/// Owner and mode of a path.
pub(crate) fn owner_mode(p: &Path) -> (u32, u32) {
    let m = std::fs::metadata(p).unwrap();
    (m.uid(), m.mode() & 0o7777)
}

/// Polls `cond` until it holds or `timeout` passes.
pub(crate) fn wait_for(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pids whose command line contains `needle` (zombies have none).
pub(crate) fn pids_with_cmdline(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else { return out };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(needle) {
                out.push(pid);
            }
        }
    }
    out
}

/// A child process whose stdin, stdout and stderr are a new pseudo-terminal
/// that is also its controlling terminal (it leads a new session), as when
/// a person runs it in a terminal emulator.
pub(crate) struct PtyChild {
    pub child: Child,
    pub master: OwnedFd,
    /// Everything read from the terminal so far.
    pub output: Vec<u8>,
}

impl PtyChild {
    pub(crate) fn spawn(mut cmd: Command) -> PtyChild {
        let ws = nix::pty::Winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = nix::pty::openpty(Some(&ws), None).expect("openpty (is /dev/pts mounted?)");
        let slave = pty.slave;
        cmd.stdin(Stdio::from(slave.try_clone().unwrap())).stdout(Stdio::from(slave.try_clone().unwrap())).stderr(Stdio::from(slave.try_clone().unwrap()));
        // SAFETY: setsid and ioctl are async-signal-safe system calls.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn under a pty");
        drop(slave);
        PtyChild { child, master: pty.master, output: Vec::new() }
    }

    /// Reads what is available within `timeout`; false at end of file.
    fn pump(&mut self, timeout: Duration) -> bool {
        let mut pfd = libc::pollfd { fd: self.master.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n <= 0 {
            return true;
        }
        let mut buf = [0u8; 4096];
        // SAFETY: reading into a stack buffer of the given length.
        let r = unsafe { libc::read(self.master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if r <= 0 {
            // EIO: every slave descriptor is closed (the session ended).
            return false;
        }
        self.output.extend_from_slice(&buf[..r as usize]);
        true
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.output).into_owned()
    }

    /// Reads until the output contains `needle` (true) or `timeout` passes
    /// or the terminal closes (false).
    pub(crate) fn expect(&mut self, needle: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.text().contains(needle) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            if !self.pump((deadline - now).min(Duration::from_millis(100))) {
                return self.text().contains(needle);
            }
        }
    }

    /// Reads until the terminal closes or `timeout` passes.
    pub(crate) fn read_to_end(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline && self.pump(Duration::from_millis(100)) {}
    }

    /// Types bytes into the terminal.
    pub(crate) fn send(&mut self, bytes: &[u8]) {
        let mut f = std::fs::File::from(self.master.try_clone().unwrap());
        f.write_all(bytes).unwrap();
    }

    /// Resizes the terminal, as a terminal emulator does when its window
    /// changes (the kernel signals the foreground process group).
    pub(crate) fn resize(&self, rows: u16, cols: u16) {
        let ws = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: TIOCSWINSZ reads one winsize from the pointer.
        let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
        assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }

    /// Waits for the child to exit, up to `timeout`.
    pub(crate) fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return Some(st);
            }
            if Instant::now() > deadline {
                return None;
            }
            // Keep the terminal drained so the child never blocks on output.
            self.pump(Duration::from_millis(20));
        }
    }
}

impl Drop for PtyChild {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
