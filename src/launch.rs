//! From a request ("run this agent / command") to a running session:
//! gather the facts, decide the plans (sandbox, and jail when on), then hand
//! them to the executors. Shared by `run`, the shims and `verify`.

use crate::agents::{locate_vendor, Agent, AgentError, VendorSearch};
use crate::config::{Config, EnvMap};
use crate::jail;
use crate::review;
use crate::sandbox::context::{self, Context, ContextError, Network};
use crate::sandbox::fsview::RealFs;
use crate::sandbox::hostmask::Later;
use crate::sandbox::plan::{Plan, PlanError};
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
    pub review_shared: Vec<std::path::PathBuf>,
    /// The session's id (also `AGENT_SANDBOX_SESSION` inside).
    pub session_id: String,
    /// For a root launcher: what its scan must keep (`rootscan`). The scan
    /// runs in the process that starts bwrap, right before it does (in the
    /// jail, while pasta starts), and masks what it finds.
    pub root_scan: Option<RootScan>,
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
    /// The final plan: the decided one plus, for a root launcher, masks
    /// over what only root may use (scanned now; `--print-plan`).
    pub fn final_plan(&self) -> Plan {
        let mut p = self.plan.clone();
        if let Some(scan) = &self.root_scan {
            p.host_masks = crate::sandbox::rootscan::scan(&scan.keep, &scan.home, &scan.extra);
        }
        p
    }
}

/// `plan` with the findings of a running scan masked (none to wait for
/// when there is no scan).
fn with_scan(plan: &Plan, pending: Option<&crate::sandbox::rootscan::Pending>) -> std::io::Result<Plan> {
    let mut p = plan.clone();
    if let Some(scan) = pending {
        p.host_masks = scan.findings()?;
    }
    Ok(p)
}

fn own_exe_id() -> Option<(u64, u64)> {
    let m = std::fs::metadata("/proc/self/exe").ok()?;
    Some((m.dev(), m.ino()))
}

/// The command line the session runs: the explicit one, or the vendor's
/// binary with the profile's argument rewrite.
pub fn session_command(req: &Request, env: &EnvMap, home: &std::path::Path) -> Result<Vec<OsString>, AgentError> {
    if let Some(cmd) = &req.command {
        return Ok(cmd.clone());
    }
    let path = crate::sandbox::env::sanitized_path(env.get(OsStr::new("PATH")).map(OsString::as_os_str));
    let search = VendorSearch { path_dirs: crate::sandbox::env::path_dirs(&path), home: home.to_path_buf(), own_exe: own_exe_id() };
    let vendor = locate_vendor(req.agent, &search)?;
    let mut cmd = vec![vendor.into_os_string()];
    cmd.extend(req.agent.rewrite_args(&req.agent_args));
    Ok(cmd)
}

/// Gathers the facts and decides both plans. Nothing is started.
pub fn decide(req: &Request, config: &Config, env: &EnvMap) -> Result<Session, LaunchError> {
    let account = context::account()?;
    let cwd = context::cwd()?;
    let bwrap = sysbin::find("bwrap", crate::fixes::BWRAP)?;
    let command = session_command(req, env, &account.home)?;
    let (network, jail_plan) = if config.egress_jail {
        let facts = jail::host_facts()?;
        let plan = jail::plan(config, &facts)?;
        let gate_exe = crate::jail::run::gate::executable()?;
        (Network::Jail { resolv_conf: plan.resolv_conf.clone(), gate_exe }, Some(plan))
    } else {
        (Network::Host, None)
    };
    let shell_path = crate::sandbox::shellrc::gather(&account.home);
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
    };
    let plan = crate::sandbox::build(&ctx, config, &RealFs)?;
    let root_scan = (ctx.uid == 0).then(|| RootScan { keep: given_paths(&ctx, config), home: ctx.home.clone(), extra: Vec::new() });
    let xdg_state = env.get(OsStr::new("XDG_STATE_HOME")).map(std::path::Path::new);
    // A baseline the session could rewrite would prove nothing. The tool
    // dirs count whether shared or not, as `review` (which has no plan) sees it.
    let tool_dirs = review::session::TOOL_DIRS.iter().map(|d| ctx.home.join(d));
    let writable: Vec<std::path::PathBuf> = plan.mounts.iter().filter_map(writable_dest).chain(tool_dirs).collect();
    let state_dir = review::store::state_dir(&ctx.home, xdg_state, &writable);
    let review_shared = review::session::shared_dirs(&plan.mounts, &ctx.home);
    Ok(Session { plan, jail: jail_plan, state_dir, review_shared, session_id: ctx.session_id, root_scan })
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
    v.extend(config.allow_write.iter().cloned());
    let path = crate::sandbox::env::sanitized_path(ctx.env.get(OsStr::new("PATH")).map(OsString::as_os_str));
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
    // A root launcher's scan runs meanwhile (see `RootScan`).
    let scan = match &session.root_scan {
        Some(s) => {
            Some(crate::sandbox::rootscan::start(&s.keep, &s.home, &s.extra).map_err(|e| LaunchError::Exec { bwrap: "the root-only scan".into(), source: e })?)
        }
        None => None,
    };
    exec::prepare(&session.plan).map_err(|e| LaunchError::Exec { bwrap: session.plan.bwrap.display().to_string(), source: e })?;
    let (watch, lines) =
        review::session::Watch::start(session.state_dir.as_deref(), &session.plan.workspace, session.review_shared.clone(), &session.session_id);
    lines.iter().for_each(|l| eprintln!("{l}"));
    // In the jail the gate holds the command back, so bwrap need not wait
    // for the scan: its findings are masked while bwrap sets up, and the
    // gate opens once they are (`hostmask::apply`). Without the jail,
    // bwrap starts after the scan.
    let (ready, done) = match (&session.jail, &scan) {
        (Some(_), Some(_)) => {
            let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| LaunchError::Exec { bwrap: "a pipe".into(), source: e.into() })?;
            (Some(r), Some(w))
        }
        _ => (None, None),
    };
    let done = done.as_ref();
    let mut exec_final = || match (done, &scan) {
        (Some(done), Some(scan)) => exec::exec(&session.plan, Some(Later { scan, done })),
        _ => match with_scan(&session.plan, scan.as_ref()) {
            Ok(plan) => exec::exec(&plan, None),
            Err(e) => e,
        },
    };
    let mut jail_notes = Vec::new();
    let code = match &session.jail {
        None => supervise::run(&mut exec_final).map_err(|e| LaunchError::Exec { bwrap: session.plan.bwrap.display().to_string(), source: e }),
        Some(jail_plan) => jail::run_jailed(jail_plan, &mut exec_final, ready).map_err(LaunchError::from).map(|ended| {
            jail_notes = ended.notes;
            ended.code
        }),
    };
    if let Some(s) = &scan {
        s.reap();
    }
    let code = code?;
    reset_terminal();
    jail_notes.iter().for_each(|l| eprintln!("{l}"));
    watch.finish().iter().for_each(|l| eprintln!("{l}"));
    Ok(code)
}

/// What a session printed last may hide what the launcher prints next: a
/// concealed (`ESC[8m`) or same-colour attribute, a hidden cursor, an
/// unfinished escape or string sequence that would swallow the text, the
/// line-drawing character set. CAN ends any sequence in progress, ST any
/// string, then attributes, cursor and character set are restored. Only on
/// a terminal.
pub const TERMINAL_RESET: &str = "\x18\x1b\\\x1b[0m\x1b[?25h\x0f\x1b(B";

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
    let home = env.get(OsStr::new("HOME")).map(std::path::PathBuf::from).unwrap_or_default();
    let cmd = session_command(req, env, &home)?;
    let err = std::os::unix::process::CommandExt::exec(std::process::Command::new(&cmd[0]).args(&cmd[1..]));
    Err(LaunchError::Exec { bwrap: cmd[0].to_string_lossy().into_owned(), source: err })
}
