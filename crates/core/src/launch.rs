//! From a request ("run this agent / command") to a running session:
//! gather the facts, decide the plans (sandbox, and jail when on), then hand
//! them to the executors. Shared by `run`, the shims and `verify`.

use crate::agents::{locate_vendor, Agent, AgentError, VendorSearch};
use crate::config::{Config, EnvMap};
use crate::jail;
use crate::review;
use crate::sandbox::context::{self, Context, ContextError, Network};
use crate::sandbox::fsview::RealFs;
use crate::sandbox::hostview::{self, Later, Prepared, Scanned, Stage};
use crate::sandbox::plan::{HostView, Plan, PlanError};
use crate::sandbox::{exec, gitconfig, supervise};
use crate::sysbin::{self, SysbinError};
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Request {
    pub agent: Agent,
    /// An explicit command; None runs the agent's CLI with `agent_args`.
    pub command: Option<Vec<OsString>>,
    pub agent_args: Vec<OsString>,
    pub peers: bool,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Sysbin(#[from] SysbinError),
    #[error(transparent)]
    Jail(#[from] jail::JailError),
    #[error("cannot start the sandbox ({bwrap}): {source}")]
    Exec { bwrap: String, source: std::io::Error },
}

/// The decided session: the sandbox plan and, when the jail is on, its plan.
#[derive(Debug)]
pub struct Session {
    pub plan: Plan,
    pub jail: Option<jail::JailPlan>,
    /// Where this user's review baselines are kept (an error when every
    /// candidate lies where sessions can write).
    pub state_dir: Result<std::path::PathBuf, review::ReviewError>,
    /// The user's tool dirs this session may write (review watches them).
    pub(crate) review_shared: Vec<std::path::PathBuf>,
    /// The home whose agents' state review watches (`review::session::agent_roots`).
    pub(crate) review_home: std::path::PathBuf,
    /// The session's id (also `AGENT_SANDBOX_SESSION` inside).
    pub session_id: String,
    /// For a root launcher without idmapped mounts (`HostView::Scan`):
    /// what its scan must keep (`rootscan`). The scan runs beside the
    /// launch; the process that starts bwrap masks what it finds (in the
    /// jail, while bwrap sets up).
    pub root_scan: Option<RootScan>,
    /// For a root launcher's unprivileged session: the idmapped trees.
    pub prepared: Prepared,
    /// Where the end-of-session report's JSON goes (`run --report FILE`),
    /// opened before the session starts: nothing the session does can
    /// redirect it.
    pub report: Option<std::fs::File>,
}

/// The inputs of a root launcher's scan for root-only entries.
#[derive(Debug, Clone)]
pub struct RootScan {
    pub keep: Vec<std::path::PathBuf>,
    pub home: std::path::PathBuf,
    /// Paths judged besides the scanned trees (verify's canaries).
    pub extra: Vec<std::path::PathBuf>,
}

impl Session {
    /// What a root launcher's scan would hide now (`--print-plan`).
    pub fn scan_now(&self) -> Vec<std::path::PathBuf> {
        self.root_scan.as_ref().map(|s| crate::sandbox::rootscan::scan(&s.keep, &s.home, &s.extra).into_iter().map(|(p, _)| p).collect()).unwrap_or_default()
    }
}

fn own_exe_id() -> Option<(u64, u64)> {
    let m = std::fs::metadata("/proc/self/exe").ok()?;
    Some((m.dev(), m.ino()))
}

/// The command line the session runs: the explicit one, or the vendor's
/// binary with the profile's argument rewrite.
fn session_command(req: &Request, env: &EnvMap, home: &std::path::Path) -> Result<Vec<OsString>, AgentError> {
    if let Some(cmd) = &req.command {
        return Ok(cmd.clone());
    }
    let path = crate::sandbox::env::sanitized_path(env.get(OsStr::new(crate::env_vars::PATH)).map(OsString::as_os_str));
    let search = VendorSearch { path_dirs: crate::sandbox::env::path_dirs(&path), home: home.to_path_buf(), own_exe: own_exe_id() };
    let vendor = locate_vendor(req.agent, &search)?;
    let mut cmd = vec![vendor.into_os_string()];
    cmd.extend(req.agent.rewrite_args(&req.agent_args));
    Ok(cmd)
}

/// Where a launch's time goes, logged at debug level under
/// `agent_sandbox::timing` (RUST_LOG=agent_sandbox::timing=debug).
pub(crate) struct Phases {
    start: std::time::Instant,
    last: std::time::Instant,
    marks: Vec<(&'static str, std::time::Duration)>,
}

impl Phases {
    pub(crate) fn new() -> Phases {
        let now = std::time::Instant::now();
        Phases { start: now, last: now, marks: Vec::new() }
    }

    pub(crate) fn mark(&mut self, what: &'static str) {
        let now = std::time::Instant::now();
        self.marks.push((what, now - self.last));
        self.last = now;
    }

    pub(crate) fn log(&self, what: &str) {
        let parts: Vec<String> = self.marks.iter().map(|(w, d)| format!("{w} {:.2}", d.as_secs_f64() * 1e3)).collect();
        tracing::debug!(target: "agent_sandbox::timing", "{what} in {:.2} ms: {}", self.start.elapsed().as_secs_f64() * 1e3, parts.join(", "));
    }
}

impl Default for Phases {
    fn default() -> Self {
        Phases::new()
    }
}

/// Gathers the facts and decides both plans. Nothing is started.
pub fn decide(req: &Request, config: &Config, env: &EnvMap) -> Result<Session, LaunchError> {
    let mut t = Phases::new();
    let account = context::account()?;
    t.mark("account");
    let cwd = context::cwd()?;
    let bwrap = sysbin::find("bwrap", crate::fixes::BWRAP)?;
    t.mark("bwrap");
    let command = session_command(req, env, &account.home)?;
    t.mark("command");
    // A root launcher's session: unprivileged on host files where idmapped
    // mounts can keep the owners of what it writes, else scanned.
    let (host_view, prepared) = if account.uid == 0 {
        let workspace = config.workspace_root.clone().unwrap_or_else(|| cwd.clone());
        let places: Vec<std::path::PathBuf> = [account.home.clone(), workspace].into_iter().chain(config.writable()).collect();
        hostview::decide_root(&places, &allowed_devices(config))
    } else {
        (HostView::Launcher, Prepared::default())
    };
    t.mark("host view");
    let outer = match &host_view {
        HostView::Unprivileged { uid, gid, .. } => (*uid, *gid),
        _ => (account.uid, account.gid),
    };
    let (network, jail_plan) = if config.egress_jail {
        let facts = jail::host_facts()?;
        let plan = jail::plan_for(config, &facts, outer)?;
        let gate_exe = crate::jail::run::gate::executable()?;
        (Network::Jail { resolv_conf: plan.resolv_conf.clone(), gate_exe }, Some(plan))
    } else {
        (Network::Host, None)
    };
    t.mark("jail plan");
    let shell_path = crate::sandbox::shellrc::gather(&account.home);
    t.mark("shellrc");
    let ctx = Context {
        uid: account.uid,
        gid: account.gid,
        user: account.name,
        git_identity: gitconfig::read_identity(&account.home),
        home: account.home,
        shell: account.shell,
        cwd,
        env: env.clone(),
        agent: req.agent,
        command,
        bwrap,
        shim_dir: context::shim_dir(),
        session_id: context::new_session_id(),
        forge_helpers: if config.no_forge { Vec::new() } else { context::forge_helpers() },
        network,
        peers_flag: req.peers,
        fresh_proc: context::fresh_proc_possible(),
        apparmor: crate::confinement::read().apparmor,
        shell_path,
        kernel_root_only: if matches!(host_view, HostView::Scan { .. }) { scanned_kernel(config.gpu, config.egress_jail) } else { Vec::new() },
        host_view,
        mount_api: crate::sandbox::mountfd::mount_api(),
    };
    t.mark("context");
    let plan = crate::sandbox::build(&ctx, config, &RealFs)?;
    t.mark("plan");
    let root_scan =
        matches!(ctx.host_view, HostView::Scan { .. }).then(|| RootScan { keep: given_paths(&ctx, config), home: ctx.home.clone(), extra: Vec::new() });
    let xdg_state = env.get(OsStr::new(crate::env_vars::XDG_STATE_HOME)).map(std::path::Path::new);
    // A baseline the session could rewrite would prove nothing. The tool
    // dirs count whether shared or not, as `review` (which has no plan) sees it.
    let tool_dirs = review::session::TOOL_DIRS.iter().map(|d| ctx.home.join(d));
    let writable: Vec<std::path::PathBuf> = plan.mounts.iter().map(|m| &m.mount).filter_map(writable_dest).chain(tool_dirs).collect();
    let state_dir = review::store::state_dir(&ctx.home, xdg_state, &writable);
    let review_shared = review::session::shared_dirs(&plan.mounts);
    t.mark("review state");
    t.log("decided");
    Ok(Session {
        plan,
        jail: jail_plan,
        state_dir,
        review_shared,
        review_home: ctx.home.clone(),
        session_id: ctx.session_id,
        root_scan,
        prepared,
        report: None,
    })
}

/// A scanned root session's kernel interfaces only root may read: in
/// /proc and the parts of /sys it keeps.
fn scanned_kernel(gpu: bool, jail: bool) -> Vec<(std::path::PathBuf, crate::sandbox::fsview::Kind)> {
    use crate::sandbox::plan::{SCAN_SYS_GPU, SCAN_SYS_KEPT};
    let sys: Vec<std::path::PathBuf> = SCAN_SYS_KEPT.iter().chain(if gpu { SCAN_SYS_GPU } else { &[] }).map(std::path::PathBuf::from).collect();
    crate::sandbox::rootscan::kernel_root_only(&sys, jail)
}

/// The device nodes a session is given: `allowDevice`, and with `gpu` the
/// GPU nodes (their groups are kept by an unprivileged root session).
fn allowed_devices(config: &Config) -> Vec<std::path::PathBuf> {
    let mut v = config.allow_device.clone();
    if config.gpu {
        let gpu = |p: &std::path::Path| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            crate::sandbox::plan::GPU_DEVICE_PREFIXES.iter().any(|pre| name.starts_with(pre))
        };
        v.extend(std::fs::read_dir("/dev").into_iter().flatten().flatten().map(|e| e.path()).filter(|p| gpu(p)));
        for d in crate::sandbox::plan::GPU_DEVICE_DIRS {
            v.extend(std::fs::read_dir(d).into_iter().flatten().flatten().map(|e| e.path()));
        }
    }
    v
}

fn writable_dest(m: &crate::sandbox::mounts::Mount) -> Option<std::path::PathBuf> {
    use crate::sandbox::mounts::Mount;
    match m {
        Mount::Bind { dest, .. } | Mount::DevBind { dest, .. } | Mount::BindFd { dest, writable: true, .. } => Some(dest.clone()),
        _ => None,
    }
}

/// What a session is given outside its home, which a scan must never mask:
/// the workspace, allowWrite paths, PATH directories, the launcher's
/// directory, the command.
fn given_paths(ctx: &Context, config: &Config) -> Vec<std::path::PathBuf> {
    let mut v = vec![config.workspace_root.clone().unwrap_or_else(|| ctx.cwd.clone())];
    v.extend(config.writable());
    let path = crate::sandbox::env::sanitized_path(ctx.env.get(OsStr::new(crate::env_vars::PATH)).map(OsString::as_os_str));
    v.extend(crate::sandbox::env::path_dirs(&path));
    v.extend(ctx.shim_dir.clone());
    v.extend(ctx.command.first().map(std::path::PathBuf::from).filter(|p| p.is_absolute()));
    v
}

/// Starts the session and waits for it; returns its exit status (128+N
/// after signal N). Review's part around it (`review::session`): a
/// baseline before the workspace's first session, and afterwards a
/// one-line hint when places that run code outside the sandbox changed
/// since the last acknowledged review.
pub fn start(session: &Session) -> Result<i32, LaunchError> {
    // The terminal as the session finds it, restored however this returns
    // (`crate::terminal`): termios, modes, and no answer to the session's
    // queries left in its input for the outer shell.
    let mut t = Phases::new();
    let mut terminal = crate::terminal::Guard::save(session.plan.env.get(OsStr::new(crate::env_vars::TERM)).map(OsString::as_os_str));
    t.mark("terminal saved");
    // A root launcher's scan runs meanwhile (see `RootScan`).
    let scan = match &session.root_scan {
        Some(s) => {
            Some(crate::sandbox::rootscan::start(&s.keep, &s.home, &s.extra).map_err(|e| LaunchError::Exec { bwrap: "the root-only scan".into(), source: e })?)
        }
        None => None,
    };
    exec::prepare(&session.plan).map_err(|e| LaunchError::Exec { bwrap: session.plan.bwrap.display().to_string(), source: e })?;
    t.mark("dirs");
    let (mut watch, lines) = review::session::Watch::start(
        session.state_dir.as_deref(),
        &session.plan.workspace,
        session.review_shared.clone(),
        Some(&session.review_home),
        &session.session_id,
    );
    lines.iter().for_each(|l| eprintln!("{l}"));
    t.mark("review watch");
    // In the jail the gate holds the command back, so bwrap need not wait
    // for the scan: its findings are masked while bwrap sets up, and the
    // gate opens once they are (`hostview::apply`). Without the jail,
    // bwrap starts after the scan.
    let (ready, done) = match (&session.jail, &scan) {
        (Some(_), Some(_)) => {
            let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| LaunchError::Exec { bwrap: "a pipe".into(), source: e.into() })?;
            (Some(r), Some(w))
        }
        _ => (None, None),
    };
    let done = done.as_ref();
    // A root launcher's unprivileged session needs root's own rights for
    // its host view (idmapped mounts), before any namespace of the
    // session; every other launch makes it inside a user namespace (the
    // jail holder's, or one of its own).
    let unprivileged = matches!(session.plan.host_view, HostView::Unprivileged { .. });
    let scanned = || match (done, &scan) {
        (Some(done), Some(scan)) => Ok(Scanned::Later(Later { scan, done })),
        (None, Some(scan)) => scan.findings().map(|f| Scanned::Now(f.into_iter().map(|(p, _)| p).collect())),
        _ => Ok(Scanned::None),
    };
    let mut jail_notes = Vec::new();
    let mut jail_report = None;
    let code = match &session.jail {
        None => {
            let stage = if unprivileged { Stage::Root { jail: false } } else { Stage::User { in_userns: false } };
            let mut exec_final = || match scanned() {
                Ok(s) => exec::exec(&session.plan, &session.prepared, stage, s),
                Err(e) => e,
            };
            supervise::run(&mut exec_final, &mut || watch.preload())
                .map_err(|e| LaunchError::Exec { bwrap: session.plan.bwrap.display().to_string(), source: e })
        }
        Some(jail_plan) => {
            // What the host view made for bwrap, from the holder's first
            // step to its last.
            let made = std::cell::RefCell::new(hostview::ForBwrap::default());
            let mut before_ns = || -> std::io::Result<()> {
                if unprivileged {
                    *made.borrow_mut() = hostview::apply(&session.plan, &session.prepared, Stage::Root { jail: true }, Scanned::None)?;
                }
                Ok(())
            };
            let mut exec_final = || {
                if unprivileged {
                    return exec::exec_prepared(&session.plan, made.take());
                }
                match scanned() {
                    Ok(s) => exec::exec(&session.plan, &session.prepared, Stage::User { in_userns: true }, s),
                    Err(e) => e,
                }
            };
            jail::run_jailed(jail_plan, &mut before_ns, &mut exec_final, ready).map_err(LaunchError::from).map(|ended| {
                jail_notes = ended.notes;
                jail_report = ended.report;
                ended.code
            })
        }
    };
    t.mark("session");
    if let Some(s) = &scan {
        s.reap();
    }
    let code = code?;
    if !terminal.restore().is_some_and(|r| r.reset_written()) {
        reset_terminal();
    }
    jail_notes.iter().for_each(|l| eprintln!("{l}"));
    if let Some(file) = &session.report {
        write_report(file, session.jail.is_some(), jail_report.as_ref());
    }
    t.mark("terminal restored");
    watch.finish().iter().for_each(|l| eprintln!("{l}"));
    t.mark("review");
    t.log("session run");
    Ok(code)
}

pub use crate::terminal::TERMINAL_RESET;

/// Opens `path` for the report (`run --report`): created or emptied, not
/// inherited by what the launcher runs, and never through a symbolic link,
/// at its last component or any directory on the way. The launcher may be
/// root and the path often lies in the workspace, where an earlier session
/// could have left `out -> /etc` for the next `--report out/...` to write
/// through. The walk opens one component at a time (`nofollow::walk`);
/// leading `..` steps up from the working directory are fine, a `..` after
/// a name is refused (it would step back out of a directory the walk did
/// not choose).
pub fn open_report(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::path::Component;
    let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let name = match path.components().next_back() {
        Some(Component::Normal(n)) => n.to_os_string(),
        _ => return Err(bad("it does not end in a file name".into())),
    };
    let parent = path.parent().unwrap_or(std::path::Path::new(""));
    let mut start = std::path::PathBuf::from(if path.is_absolute() { "/" } else { "." });
    let mut rel = std::path::PathBuf::new();
    for c in parent.components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir if rel.as_os_str().is_empty() => start.push(".."),
            Component::ParentDir => return Err(bad("`..` after a directory name: name the path without it".into())),
            Component::Normal(n) => rel.push(n),
            Component::Prefix(_) => return Err(bad("not a Unix path".into())),
        }
    }
    let root = crate::nofollow::open_root(&start)?;
    let dir = match crate::nofollow::walk(&root, &rel) {
        Ok((fd, crate::nofollow::Entry::Dir)) => fd,
        Ok((_, kind)) | Err(kind) => {
            return Err(bad(format!("its directory {} is {}", start.join(&rel).display(), kind.describe())));
        }
    };
    let flags =
        nix::fcntl::OFlag::O_WRONLY | nix::fcntl::OFlag::O_CREAT | nix::fcntl::OFlag::O_TRUNC | nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_CLOEXEC;
    let fd = nix::fcntl::openat(Some(std::os::fd::AsRawFd::as_raw_fd(&dir)), name.as_os_str(), flags, nix::sys::stat::Mode::from_bits_truncate(0o644))
        .map_err(|e| if e == nix::errno::Errno::ELOOP { bad("it is a symbolic link".into()) } else { std::io::Error::from(e) })?;
    // SAFETY: a new descriptor owned only here.
    Ok(std::fs::File::from(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) }))
}

/// The end-of-session report as JSON: what the jail refused (nothing
/// without the jail, or when it could not be read).
fn write_report(mut file: &std::fs::File, jail: bool, report: Option<&jail::JailReport>) {
    use std::io::Write;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut doc = report.map(|r| r.json(now)).unwrap_or_else(|| serde_json::json!({"blocked": [], "refusedNames": []}));
    doc["egressJail"] = jail.into();
    if let Err(e) = serde_json::to_writer_pretty(&mut file, &doc).map_err(std::io::Error::from).and_then(|()| file.write_all(b"\n")) {
        eprintln!("agent-sandbox: writing the report failed: {e}");
    }
}

/// Where the terminal guard wrote no escapes (no controlling terminal, or
/// `TERM=dumb`) but stderr is a terminal: what the session printed last
/// must not hide what the launcher prints next (`TERMINAL_RESET`).
fn reset_terminal() {
    use std::io::{IsTerminal, Write};
    let mut err = std::io::stderr();
    if err.is_terminal() {
        let _ = err.write_all(TERMINAL_RESET.as_bytes());
        let _ = err.flush();
    }
}

/// Inside a session already: run the command directly (no second sandbox).
pub fn exec_direct(req: &Request, env: &EnvMap) -> Result<std::convert::Infallible, LaunchError> {
    let home = env.get(OsStr::new(crate::env_vars::HOME)).map(std::path::PathBuf::from).unwrap_or_default();
    let cmd = session_command(req, env, &home)?;
    let err = std::os::unix::process::CommandExt::exec(std::process::Command::new(&cmd[0]).args(&cmd[1..]));
    Err(LaunchError::Exec { bwrap: cmd[0].to_string_lossy().into_owned(), source: err })
}

#[cfg(test)]
mod report_file_tests {
    use super::open_report;
    use std::io::Write;

    #[test]
    fn the_report_is_created_and_emptied_where_named() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.json");
        std::fs::write(&p, "old contents").unwrap();
        open_report(&p).unwrap().write_all(b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{}");
    }

    /// An earlier session could have left `out -> /etc` in the workspace:
    /// a link anywhere on the way is refused, naming it, and nothing is
    /// written through it.
    #[test]
    fn no_symbolic_link_on_the_way_is_followed() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, d.path().join("out")).unwrap();
        std::fs::create_dir(d.path().join("real")).unwrap();
        std::os::unix::fs::symlink(target.join("file"), d.path().join("real/link.json")).unwrap();
        let e = open_report(&d.path().join("out/report.json")).unwrap_err().to_string();
        assert!(e.contains("symbolic link to") && e.contains("target"), "{e}");
        let e = open_report(&d.path().join("out/sub/report.json")).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = open_report(&d.path().join("real/link.json")).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "nothing was written through a link");
    }

    #[test]
    fn odd_paths_are_refused_with_the_reason() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        let e = open_report(&d.path().join("a/../report.json")).unwrap_err().to_string();
        assert!(e.contains("`..`"), "{e}");
        let e = open_report(&d.path().join("missing/report.json")).unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
        let e = open_report(std::path::Path::new("/")).unwrap_err().to_string();
        assert!(e.contains("file name"), "{e}");
    }
}
