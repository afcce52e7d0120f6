//! Launching a jailed session the way the launcher will: a forked child of
//! the test (single-threaded, as the launcher is) optionally enters a lab
//! namespace and a private mount namespace with the lab's resolv.conf,
//! then calls the library (`host_facts_with`, `plan`, `run_jailed`) with
//! an `exec_inner` that execs bwrap. Its output comes back through a pipe
//! read by a thread; `Launched` waits for lines and for the exit status.

use agent_sandbox::config::Config;
use agent_sandbox::jail::GATE_PATH;
use agent_sandbox::jail::{self, HostProbe, JailPlan};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{ForkResult, Pid};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How to launch.
pub(crate) struct Opts {
    /// Lab namespace to run the launcher in (`None`: the test's own).
    pub netns: Option<String>,
    /// resolv.conf bound over /etc/resolv.conf for the launcher (and so
    /// for pasta).
    pub resolv_conf: Option<String>,
    pub config: Config,
    pub probe: HostProbe,
    /// A change to the plan before launch (fault tests).
    pub edit: fn(&mut JailPlan),
    /// What runs in the session (bash, after the functions of probe.sh).
    pub script: String,
    /// Extra environment for the session script.
    pub env: Vec<(String, String)>,
    /// TMPDIR of the launcher.
    pub tmpdir: Option<PathBuf>,
    /// Before the launch, in the child: e.g. switch user namespaces off.
    pub before: fn() -> Result<(), String>,
    /// Run the product instead of the library: `agent-sandbox run` (its
    /// default configuration, its own sandbox plan) in this workspace.
    pub product_in: Option<PathBuf>,
    /// With `product_in`: these arguments instead of `run -- bash SCRIPT`
    /// (e.g. `verify --json`).
    pub product_args: Option<Vec<String>>,
    /// With `product_in`: more environment for the product (e.g.
    /// `AGENT_SANDBOX_ALLOW_DOMAINS`).
    pub product_env: Vec<(String, String)>,
    /// The product's executable where every user can run it (copied, if
    /// need be, here in the test: the child may have become another user).
    pub product_exe: String,
    /// More bwrap options for the library's session (e.g. one it fails on).
    pub bwrap_args: Vec<String>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            netns: None,
            resolv_conf: None,
            config: Config::default(),
            probe: HostProbe::default(),
            edit: |_| {},
            script: "true".into(),
            env: vec![],
            tmpdir: None,
            before: || Ok(()),
            product_in: None,
            product_args: None,
            product_env: vec![],
            product_exe: gate_exe(),
            bwrap_args: vec![],
        }
    }
}

pub(crate) struct Launched {
    pub pid: Pid,
    /// Holds the lab resolv.conf bound into the launcher's mount namespace.
    _files: tempfile::TempDir,
    lines: Arc<(Mutex<Output>, Condvar)>,
    status: Option<WaitStatus>,
}

/// What the launcher wrote, line by line, and whether its output has
/// ended (every holder of the pipe's write end closed it).
#[derive(Default)]
struct Output {
    lines: Vec<String>,
    ended: bool,
}

/// How long the output may go on after the launcher exited (a process it
/// left behind still holding it): its lines are read until then.
const OUTPUT_AFTER_EXIT: Duration = Duration::from_secs(10);

/// Exit status of the launcher child when the library refused to launch.
pub(crate) const REFUSED: i32 = 200;

pub(crate) fn launch(opts: Opts) -> Launched {
    let files = tempfile::tempdir().expect("tempdir");
    let resolv = files.path().join("resolv.conf");
    if let Some(text) = &opts.resolv_conf {
        std::fs::write(&resolv, text).expect("writing the lab resolv.conf");
    }
    let (r, w) = nix::unistd::pipe().expect("pipe");
    // The forwarded signals stay blocked across the fork until the child
    // has set their defaults: one sent at once is then neither lost to a
    // disposition this process inherited nor delivered to the wrong one.
    let mut forwarded = nix::sys::signal::SigSet::empty();
    FORWARDED.iter().for_each(|s| forwarded.add(*s));
    let mut old = nix::sys::signal::SigSet::empty();
    nix::sys::signal::pthread_sigmask(nix::sys::signal::SigmaskHow::SIG_BLOCK, Some(&forwarded), Some(&mut old)).expect("blocking signals");
    // SAFETY: the child only runs `child_main` and leaves with _exit; the
    // test threads that could hold locks are parked on the test mutex.
    let forked = unsafe { nix::unistd::fork() }.expect("fork");
    if let ForkResult::Parent { .. } = forked {
        nix::sys::signal::pthread_sigmask(nix::sys::signal::SigmaskHow::SIG_SETMASK, Some(&old), None).expect("restoring the signal mask");
    }
    match forked {
        ForkResult::Child => {
            drop(r);
            for sig in FORWARDED {
                // SAFETY: installs the default action; no handler code runs.
                let _ = unsafe { nix::sys::signal::signal(*sig, nix::sys::signal::SigHandler::SigDfl) };
            }
            let _ = nix::sys::signal::pthread_sigmask(nix::sys::signal::SigmaskHow::SIG_SETMASK, Some(&old), None);
            let code = child_main(&opts, &resolv, w);
            // SAFETY: end the forked child without running the test
            // harness's destructors.
            unsafe { libc::_exit(code) }
        }
        ForkResult::Parent { child } => {
            drop(w);
            let lines = Arc::new((Mutex::new(Output::default()), Condvar::new()));
            let l2 = lines.clone();
            std::thread::spawn(move || {
                let (m, cv) = &*l2;
                for line in BufReader::new(std::fs::File::from(r)).lines() {
                    let Ok(line) = line else { break };
                    m.lock().unwrap().lines.push(line);
                    cv.notify_all();
                }
                m.lock().unwrap().ended = true;
                cv.notify_all();
            });
            Launched { pid: child, _files: files, lines, status: None }
        }
    }
}

fn say(msg: &str) {
    let _ = std::io::stderr().write_all(format!("{msg}\n").as_bytes());
}

/// The signals a launcher forwards (`jail::run::sys::FORWARDED`). The
/// launched child starts with each at its default, as a terminal starts a
/// launcher, whatever this test process inherited (a suite run in the
/// background ignores SIGINT and SIGQUIT, one under nohup SIGHUP);
/// `Opts::before` may set another.
pub(crate) const FORWARDED: &[nix::sys::signal::Signal] = {
    use nix::sys::signal::Signal::*;
    &[SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2]
};

fn child_main(opts: &Opts, resolv: &Path, out: OwnedFd) -> i32 {
    for fd in [1, 2] {
        if nix::unistd::dup2(out.as_raw_fd(), fd).is_err() {
            return 201;
        }
    }
    drop(out);
    if let Err(e) = enter_lab(opts, resolv) {
        say(&format!("JAILTEST setup failed: {e}"));
        return 202;
    }
    let _ = tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).try_init();
    if let Err(e) = (opts.before)() {
        say(&format!("JAILTEST before failed: {e}"));
        return 203;
    }
    if let Some(ws) = &opts.product_in {
        let err = exec_product(&opts.product_exe, ws, &opts.script, opts.product_args.as_deref(), &opts.product_env);
        say(&format!("JAILTEST could not run the product: {err}"));
        return 204;
    }
    match run(opts) {
        Ok(code) => code,
        Err(e) => {
            say(&format!("JAILTEST REFUSED {e}"));
            REFUSED
        }
    }
}

fn enter_lab(opts: &Opts, resolv: &Path) -> Result<(), String> {
    if let Some(ns) = &opts.netns {
        let f = std::fs::File::open(format!("/run/netns/{ns}")).map_err(|e| e.to_string())?;
        nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET).map_err(|e| e.to_string())?;
    }
    if opts.resolv_conf.is_some() {
        use nix::mount::{mount, MsFlags};
        nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS).map_err(|e| e.to_string())?;
        mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>).map_err(|e| e.to_string())?;
        mount(Some(resolv), "/etc/resolv.conf", None::<&str>, MsFlags::MS_BIND, None::<&str>).map_err(|e| e.to_string())?;
    }
    if let Some(t) = &opts.tmpdir {
        std::env::set_var("TMPDIR", t);
    }
    Ok(())
}

fn run(opts: &Opts) -> Result<i32, jail::JailError> {
    let facts = jail::host_facts_with(&opts.probe)?;
    let mut plan = jail::plan(&opts.config, &facts)?;
    (opts.edit)(&mut plan);
    let resolv = plan.resolv_conf.clone();
    let mut inner = || exec_bwrap(&resolv, &opts.product_exe, &opts.script, &opts.env, &opts.bwrap_args);
    // The end-of-session report, as the launcher prints it.
    jail::run_jailed(&plan, &mut || Ok(()), &mut inner, None).map(|ended| {
        ended.notes.iter().for_each(|n| say(n));
        ended.code
    })
}

/// `agent-sandbox run -- bash -c SCRIPT` (or `args`) as root, in `ws`,
/// with a plain environment (the jail on).
fn exec_product(exe: &str, ws: &Path, script: &str, args: Option<&[String]>, env: &[(String, String)]) -> std::io::Error {
    let full = format!("{}\n{script}", include_str!("probe.sh"));
    let mut cmd = std::process::Command::new(exe);
    match args {
        Some(a) => cmd.args(a),
        None => cmd.args(["run", "--", "/bin/bash", "-c", &full]),
    };
    cmd.current_dir(ws).env_clear();
    cmd.envs([("PATH", crate::support::launcher::SYSTEM_PATH), ("HOME", "/root"), ("USER", "root"), ("LOGNAME", "root"), ("LANG", "C.UTF-8")]);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.exec()
}

/// The product's executable, which the sandbox runs as the jail's gate.
pub(crate) fn gate_exe() -> String {
    crate::support::launcher::visible_copy(&crate::support::launcher::bin()).display().to_string()
}

/// The sandbox as the product will run it inside the jail: bwrap with
/// its own user/pid/ipc/uts namespaces, no capabilities, the command
/// held at the jail's gate until the routes are locked, the jail's network, the session resolv.conf bound over /etc/resolv.conf, and
/// /proc/sys read-only (the kernel lets real-root-owned processes write
/// sysctls without capabilities, the jail's IPv6 switch included).
fn exec_bwrap(resolv: &str, gate: &str, script: &str, env: &[(String, String)], extra: &[String]) -> std::io::Error {
    let (r, w) = match nix::unistd::pipe() {
        Ok(p) => p,
        Err(e) => return e.into(),
    };
    if nix::unistd::write(&w, resolv.as_bytes()).is_err() {
        return std::io::Error::other("writing resolv.conf to the pipe");
    }
    drop(w);
    if let Err(e) = steady_root() {
        return e;
    }
    // The probes travel in the command line: a non-root session may not
    // be able to read the checkout.
    let full = format!("{}\n{script}", include_str!("probe.sh"));
    let mut cmd = std::process::Command::new("/usr/bin/bwrap");
    cmd.args(["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL", "--die-with-parent"]);
    cmd.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--tmpfs", "/tmp"]);
    cmd.args(["--ro-bind-data", &r.as_raw_fd().to_string(), "/etc/resolv.conf"]);
    cmd.args(["--ro-bind", gate, GATE_PATH]);
    cmd.args(extra);
    cmd.args(["--", GATE_PATH, "/bin/bash", "-c", &full]);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.exec()
}

/// The tree bwrap binds, as the product's executor gives it
/// (`hostview::host_read_only`): in a mount namespace of its own, every
/// mount read-only, nosuid and nodev already. bwrap's `--ro-bind / /` then
/// remounts none of them: its loop over the submounts fails the launch on
/// one that vanished meanwhile (a container stopped beside the suite), and
/// these tests make hundreds of launches while other areas stop containers.
fn steady_root() -> Result<(), std::io::Error> {
    use nix::mount::{mount, MsFlags};
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)?;
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)?;
    agent_sandbox::sandbox::hostview::host_read_only()
}

impl Launched {
    /// Waits for a line containing `needle`.
    pub(crate) fn wait_line(&self, needle: &str, timeout: Duration) -> Option<String> {
        let (m, cv) = &*self.lines;
        let deadline = Instant::now() + timeout;
        let mut out = m.lock().unwrap();
        loop {
            if let Some(l) = out.lines.iter().find(|l| l.contains(needle)) {
                return Some(l.clone());
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            out = cv.wait_timeout(out, left).unwrap().0;
        }
    }

    pub(crate) fn output(&self) -> Vec<String> {
        self.lines.0.lock().unwrap().lines.clone()
    }

    /// Waits until the output has ended, at most `timeout`.
    fn wait_output_end(&self, timeout: Duration) {
        let (m, cv) = &*self.lines;
        let deadline = Instant::now() + timeout;
        let mut out = m.lock().unwrap();
        while !out.ended {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { return };
            out = cv.wait_timeout(out, left).unwrap().0;
        }
    }

    /// Waits for the launcher to exit (panics after `timeout`).
    pub(crate) fn wait(&mut self, timeout: Duration) -> WaitStatus {
        if let Some(st) = self.status {
            return st;
        }
        let deadline = Instant::now() + timeout;
        loop {
            let st = waitpid(self.pid, Some(WaitPidFlag::WNOHANG)).expect("waitpid");
            if st != WaitStatus::StillAlive {
                self.status = Some(st);
                // The last lines (the end-of-session report) are read
                // once the output ends, not after a fixed pause.
                self.wait_output_end(OUTPUT_AFTER_EXIT);
                return st;
            }
            if Instant::now() > deadline {
                let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
                panic!("launcher did not exit within {timeout:?}; output:\n{}", self.output().join("\n"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The exit code (panics on a signal death).
    pub(crate) fn code(&mut self, timeout: Duration) -> i32 {
        match self.wait(timeout) {
            WaitStatus::Exited(_, c) => c,
            other => panic!("launcher ended with {other:?}; output:\n{}", self.output().join("\n")),
        }
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}
