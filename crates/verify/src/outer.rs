//! The launcher's side of `verify`: decide a real session exactly as `run`
//! would (jail on unless switched off), make it run our probe, start it,
//! read the probe's results and judge what only the outside can see.
//!
//! Order:
//!  1. plant secret-like variables in the environment the plan is decided
//!     from (they must not arrive);
//!  2. `launch::decide`; apply test-only weakenings; bind this binary
//!     read-only at `PROBE_PATH` from a descriptor opened by its real path
//!     (bwrap resolves the source from inside its new user namespace, where
//!     /proc/PID/exe of an outer process is not accessible), staged like
//!     the jail's gate where the executor makes the view, and make the
//!     probe the command;
//!  3. start the canary (an outer process with a secret and sockets), put
//!     a secret key (readable by its owner) in a fresh session keyring of
//!     this process, and try what agents need from the kernel out here
//!     (what the container itself refuses is not the session's doing);
//!  4. become a child subreaper, fork: the child leaks a descriptor on
//!     purpose and calls `launch::start` with stdout on a pipe;
//!  5. read the probe's lines (answering its connect requests) until EOF;
//!  6. reap the session; anything else still ours is a leftover (check 51).

use super::canary::Canary;
use super::facts::{self, Layout};
use super::protocol::Line;
use super::registry::{LEAVES_NOTHING, PROTECTED_SYMLINK, REPORT_LISTS};
use super::report::Report;
use super::weaken::{self, Weakening};
use super::{Outcome, PROBE_PATH, PROBE_VERB};
use crate::agents::Agent;
use crate::config::{Config, EnvMap};
use crate::launch::{self, Request, Session};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Runs the battery in a real session of `agent`.
pub fn verify(config: &Config, agent: Agent, weakenings: &[Weakening], env: &EnvMap, jail_off_allowed: bool) -> Report {
    let mut report = Report {
        agent: agent.name().into(),
        jail: config.egress_jail,
        session: String::new(),
        weakened: weakenings.iter().map(|w| w.name().to_string()).collect(),
        rows: Vec::new(),
        error: None,
        jail_off_allowed,
    };
    match run(config, agent, weakenings, env, &mut report) {
        Ok(rows) => report.rows = rows,
        Err(e) => report.error = Some(e),
    }
    report
}

fn nonce() -> String {
    let mut b = [0u8; 12];
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b)).is_ok();
    if !ok {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        b[..8].copy_from_slice(&(t as u64 ^ u64::from(std::process::id())).to_ne_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn run(config: &Config, agent: Agent, weakenings: &[Weakening], env: &EnvMap, report: &mut Report) -> Result<Vec<super::report::Row>, String> {
    if crate::sandbox::inside_session() {
        return Err("this is already a sandbox session; run `agent-sandbox verify` outside it".into());
    }
    let nonce = nonce();
    let env = facts::planted_env(env, &nonce);
    let req = Request { agent, command: Some(vec![PROBE_PATH.into()]), agent_args: Vec::new(), peers: false };
    let mut session = launch::decide(&req, config, &env).map_err(|e| e.to_string())?;
    let account = crate::sandbox::context::account().map_err(|e| e.to_string())?;
    report.jail = session.jail.is_some();
    let layout = Layout { agent, config, env: &env, home: account.home.clone(), user: account.name.clone(), uid: account.uid, nonce: nonce.clone() };
    let mut spec = facts::spec(&layout, &session.plan, session.jail.is_some());
    report.session = spec.session_id.clone();

    // The jail's facts as decided, before a weakening narrows the plan.
    let jail_spec = session.jail.as_ref().map(|j| facts::jail_spec(&session.plan, config, j));
    // Step 2: the probe inside, then the weakenings (verify only).
    for w in weakenings {
        weaken::apply(&mut session.plan, *w, &env, &account.home, &|p| p.exists());
        weaken::apply_session(&mut session, *w);
    }
    // By descriptor, like the jail's gate: this binary may lie where the
    // session's view puts a fresh tmpfs (verify run from under /tmp). After
    // the weakenings, which may drop data files and so renumber them.
    session.plan.bind_file_into_dev(
        crate::sandbox::plan::Purpose::Probe,
        &[crate::sandbox::mounts::Role::Probe],
        &own_binary()?,
        std::path::Path::new(PROBE_PATH),
    );

    // Step 3.
    let canary =
        Canary::start(std::path::Path::new("/proc/self/exe"), &super::canary_secret(&nonce)).map_err(|e| format!("cannot start the canary process: {e}"))?;
    spec.canary_pid = canary.pid();
    spec.canary_port = canary.port;
    spec.abstract_name = canary.abstract_name.clone();
    spec.tmp_sockets = canary.sockets.clone();
    (spec.key_id, spec.keyring_id) = plant_key(&nonce).unzip();
    // Planted before the session starts, so its scan sees them.
    let canaries = (account.uid == 0).then(|| super::hostview::RootCanaries::plant(&nonce));
    match &canaries {
        Some(Ok(c)) => {
            spec.root_canaries = c.paths();
            spec.root_canary_notes = c.notes.clone();
            if let Some(scan) = session.root_scan.as_mut() {
                scan.extra = c.paths();
            }
        }
        Some(Err(e)) => spec.root_canary_error = Some(format!("{}: {e}", super::hostview::CANARY_ROOT)),
        None => {}
    }
    spec.outside_refuses = super::checks::needs::outside_refusals();
    spec.scope = facts::scope_samples(&session.plan, &spec);
    spec.jail = jail_spec;
    session.plan.command = vec![PROBE_PATH.into(), PROBE_VERB.into(), spec.to_arg().into()];
    // The report's JSON, as `run --report` writes it (check 97).
    let report_path = std::env::temp_dir().join(format!("agent-sandbox-verify-report-{nonce}.json"));
    session.report = Some(launch::open_report(&report_path).map_err(|e| format!("{}: {e}", report_path.display()))?);

    // Steps 4-6.
    let (results, status) = run_session(&session)?;
    let written = std::fs::read_to_string(&report_path);
    let _ = std::fs::remove_file(&report_path);
    if results.is_empty() {
        return Err(format!("the session ended ({status}) before the probe ran; see the message above"));
    }
    let leftovers = leftovers(canary.pid());
    drop(canary);
    drop(canaries);
    let mut results = results;
    results.insert(LEAVES_NOTHING, if leftovers.is_empty() { Outcome::pass() } else { Outcome::fail(format!("left running: {}", leftovers.join(", "))) });
    let unprotected = weakenings.contains(&Weakening::Protections);
    results.insert(PROTECTED_SYMLINK, super::hostview::protected_symlink_refused(config, &env, &account.home, &nonce, unprotected));
    let report_check = match (&spec.jail, written) {
        (None, _) => Outcome::skip(super::JAIL_OFF),
        (Some(j), Ok(text)) => super::report_check::judge(j, &nonce, &text),
        (Some(_), Err(e)) => Outcome::fail(format!("the report was not written: {e}")),
    };
    results.insert(REPORT_LISTS, report_check);
    Ok(Report::assemble(results, &format!("the session ended ({status}) before the probe reported it")))
}

/// This binary's path, which the session must be able to reach.
fn own_binary() -> Result<PathBuf, String> {
    let exe = std::fs::read_link("/proc/self/exe").map_err(|e| format!("cannot find this program's path: {e}"))?;
    if exe.to_string_lossy().ends_with(" (deleted)") || !exe.is_file() {
        return Err(format!("{} was replaced or removed while running; run verify again", exe.display()));
    }
    Ok(exe)
}

/// A key holding the nonce in a new session keyring of this process (the
/// user's own session keyring is left alone), readable by its owner as
/// many tools leave keys (`keyctl setperm`); its id and the keyring's.
fn plant_key(nonce: &str) -> Option<(i32, i32)> {
    const KEY_POS_ALL: u32 = 0x3f00_0000;
    const KEY_USR_VIEW_READ: u32 = 0x0001_0000 | 0x0002_0000;
    let desc = std::ffi::CString::new(format!("agent-sandbox-verify-{nonce}")).ok()?;
    // SAFETY: keyctl/add_key with valid C strings and lengths.
    unsafe {
        if libc::syscall(libc::SYS_keyctl, libc::KEYCTL_JOIN_SESSION_KEYRING, std::ptr::null::<libc::c_char>()) < 0 {
            return None;
        }
        let id = libc::syscall(libc::SYS_add_key, c"user".as_ptr(), desc.as_ptr(), nonce.as_ptr(), nonce.len(), libc::KEY_SPEC_SESSION_KEYRING);
        if id < 0 || libc::syscall(libc::SYS_keyctl, libc::KEYCTL_SETPERM, id, KEY_POS_ALL | KEY_USR_VIEW_READ) < 0 {
            return None;
        }
        let ring = libc::syscall(libc::SYS_keyctl, libc::KEYCTL_GET_KEYRING_ID, libc::KEY_SPEC_SESSION_KEYRING, 0);
        (ring >= 0).then_some((id as i32, ring as i32))
    }
}

/// Forks the session with stdout on a pipe and collects the probe's lines.
fn run_session(session: &Session) -> Result<(BTreeMap<u16, Outcome>, String), String> {
    // SAFETY: prctl with integer arguments: orphans of the session come to us.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors, owned below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe2: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both were just created and are owned only here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let r_fd = r.as_raw_fd();
    // SAFETY: this process is single-threaded (see main.rs); the child only
    // rearranges descriptors and calls the launch path, which execs.
    let child = unsafe {
        crate::child::run(move || {
            let _ = nix::unistd::close(r_fd);
            session_child(w, session)
        })
    }
    .map_err(|e| format!("fork: {e}"))?;
    let mut results = BTreeMap::new();
    let mut last = Instant::now();
    for line in BufReader::new(std::fs::File::from(r)).lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Line>(&line) {
            Ok(Line::Result { n, outcome }) => {
                tracing::debug!("check {n}: {:?} after {} ms", outcome.status, last.elapsed().as_millis());
                last = Instant::now();
                results.insert(n, outcome);
            }
            Ok(Line::Request { port, .. }) => {
                let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
                let _ = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500));
            }
            Err(_) => eprintln!("{line}"),
        }
    }
    let status = match nix::sys::wait::waitpid(child, None) {
        Ok(nix::sys::wait::WaitStatus::Exited(_, c)) => format!("exit status {c}"),
        Ok(nix::sys::wait::WaitStatus::Signaled(_, s, _)) => format!("killed by {s}"),
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("waitpid: {e}"),
    };
    Ok((results, status))
}

/// The forked child: stdout to the pipe, stdin from /dev/null, one
/// inheritable descriptor planted (check 32 proves it does not arrive),
/// then the launch path. Never returns.
fn session_child(w: OwnedFd, session: &Session) -> ! {
    // SAFETY: dup2/open on descriptors this child owns; O_PATH without
    // O_CLOEXEC on purpose (the leak the launcher must stop).
    unsafe {
        libc::dup2(w.as_raw_fd(), 1);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null >= 0 {
            libc::dup2(null, 0);
        }
        let leak = libc::open(c"/".as_ptr(), libc::O_PATH);
        if leak >= 0 {
            libc::dup2(leak, 100);
        }
    }
    drop(w);
    let code = match launch::start(session) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agent-sandbox verify: {e}");
            125
        }
    };
    // SAFETY: end the child without running the parent's destructors.
    unsafe { libc::_exit(code) }
}

/// Our children other than the canary, after giving the session's helpers
/// a moment to exit; each is then killed and reaped.
fn leftovers(canary: i32) -> Vec<String> {
    let me = std::process::id().to_string();
    let find = || -> Vec<(i32, String)> {
        crate::checks::sys::entries(std::path::Path::new("/proc"))
            .into_iter()
            .filter_map(|n| n.parse::<i32>().ok())
            .filter(|pid| *pid != canary)
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                // pid (comm) state ppid ...
                let (comm, rest) = stat.rsplit_once(')')?;
                let ppid = rest.split_whitespace().nth(1)?;
                let state = rest.split_whitespace().next()?;
                (ppid == me && state != "Z").then(|| (pid, comm.split_once('(').map(|c| c.1).unwrap_or("").to_string()))
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut left = find();
    while !left.is_empty() && Instant::now() < deadline {
        reap_zombies();
        std::thread::sleep(Duration::from_millis(20));
        left = find();
    }
    for (pid, _) in &left {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid), nix::sys::signal::Signal::SIGKILL);
    }
    reap_zombies();
    left.into_iter().map(|(pid, comm)| format!("{comm} (pid {pid})")).collect()
}

fn reap_zombies() {
    while let Ok(s) = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(-1), Some(nix::sys::wait::WaitPidFlag::WNOHANG)) {
        if s == nix::sys::wait::WaitStatus::StillAlive {
            break;
        }
    }
}
