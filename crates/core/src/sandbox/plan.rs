//! The sandbox plan: a pure function from configuration + launch facts to
//! the complete bwrap invocation (argv, environment, data files).
//!
//! Mount order matters (bwrap applies them in order, later ones cover
//! earlier ones); the numbered steps in `mounts` are security-relevant:
//!  1. the whole root read-only;
//!  2. a minimal /dev, then only the allowed devices;
//!  3. a fresh /proc for the session's pid namespace (where the
//!     container's /proc is masked, which makes the kernel refuse one: the
//!     container's own, masks and all), its kernel interfaces (/proc/sys,
//!     sysrq-trigger...) read-only;
//!  4. private /tmp and /var/tmp; /run (and a real /var/run) an empty
//!     private tmpfs, only resolv.conf's target bound back; /etc secrets
//!     and engine sockets elsewhere masked;
//!  5. the home an empty tmpfs, then the agent state and tool caches bound
//!     back, their credential subdirectories and the dotfiles masked again;
//!  6. the workspace's siblings hidden (or, with peers, readable);
//!  7. the workspace writable, its host-executed parts read-only (bound
//!     from descriptors: `protect.rs` decides, nothing is followed);
//!  8. `allowWrite` paths writable;
//!  9. entry points in writable PATH directories covered — the session's
//!     PATH and the one the user's shell start-up files make — and those
//!     directories pinned; vendor install directories and aliased files'
//!     directories read-only (must come after every writable mount, since
//!     it asks which directories are writable);
//! 10. the data files (git config, session marker, resolv.conf).

use crate::config::Config;
use crate::jail::{GATE_FD, GATE_PATH};
pub use crate::sandbox::context::HostView;
use crate::sandbox::context::{Context, Network};
use crate::sandbox::env::{path_dirs, session_env};
use crate::sandbox::fsview::{FsView, Kind};
use crate::sandbox::gitconfig;
use crate::sandbox::mounts::{Mount, Planned, Role};
use crate::sandbox::protect::{self, Protected, UnsafeEntry};
use crate::sandbox::scope::access;
use crate::sandbox::{seccomp, SESSION_MARKER};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Data file `i` of a plan is handed to bwrap at descriptor `FIRST_DATA_FD + i`.
pub const FIRST_DATA_FD: i32 = 3;

/// Container-engine control sockets: a session that reaches one owns the host.
pub const ENGINE_SOCKETS: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
    "/var/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
    "/var/run/containerd/containerd.sock",
    "/run/crio/crio.sock",
    "/run/buildkit/buildkitd.sock",
];

/// Runtime directories replaced by an empty private tmpfs: the sockets of
/// D-Bus, systemd, container engines, k3s, LXD, Docker Desktop's
/// `host-services` (the user's SSH agent) and every per-user runtime dir
/// live there. What sessions need from them is bound back
/// (`RUNTIME_KEPT`).
pub const RUNTIME_DIRS: &[&str] = &["/run", "/var/run"];

/// Files under the runtime directories that sessions need: /etc/resolv.conf
/// is often a link into /run (systemd-resolved, resolvconf); its target
/// is bound back read-only.
const RUNTIME_KEPT: &[&str] = &["/etc/resolv.conf"];

/// Directories masked whole: per-user runtime dirs (IDE, agent, desktop
/// sockets), mounted secrets, and engine runtime dirs (for systems where
/// they are not under the runtime tmpfs).
pub const MASKED_DIRS: &[&str] =
    &["/run/user", "/run/secrets", "/var/run/secrets", "/run/docker", "/run/podman", "/run/containerd", "/run/crio", "/run/buildkit"];

/// The system's masks with the defence each serves: per-user runtime dirs
/// and mounted secrets, engines' sockets and runtime dirs, /etc's
/// credentials.
fn system_masks() -> impl Iterator<Item = (&'static str, &'static [Role])> {
    let dir_roles = |d: &str| -> &'static [Role] {
        if d.contains("/user") || d.contains("secrets") {
            &[Role::RunUser]
        } else {
            &[Role::Engines]
        }
    };
    let dirs = MASKED_DIRS.iter().map(move |d| (*d, dir_roles(d)));
    let engines = ENGINE_SOCKETS.iter().map(|p| (*p, &[Role::Engines][..]));
    let etc = MASKED_ETC.iter().chain(MASKED_ETC_DIRS).map(|p| (*p, &[Role::Credentials][..]));
    dirs.chain(engines).chain(etc)
}

/// Kernel interfaces under the session's /proc kept read-only (bwrap's
/// own cover list skips them when it is not root): all for a session that
/// is root on host files, the first (/proc/sys) for every other.
pub(crate) const PROC_READ_ONLY: &[&str] = &["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/acpi", "/proc/scsi"];

/// The per-interface sysctl tree an entry under /proc/sys/net lies in
/// (`/proc/sys/net/ipv6/conf` for `.../conf/eth0/stable_secret`), when the
/// interface is a real one: not `all` or `default`, which always exist.
fn interface_tree(p: &Path) -> Option<&Path> {
    let rest = p.strip_prefix("/proc/sys/net").ok()?;
    let parts: Vec<&std::ffi::OsStr> = rest.iter().collect();
    let per_interface = matches!(parts.get(1).and_then(|c| c.to_str()), Some("conf" | "neigh"));
    let shared = matches!(parts.get(2).and_then(|i| i.to_str()), Some("all" | "default") | None);
    if !per_interface || shared {
        return None;
    }
    p.ancestors().nth(parts.len() - 2)
}

/// For a scanned root session (`HostView::Scan`): what of /sys stays
/// visible (control groups, for runtimes that size themselves from their
/// limits; the CPUs), its root-only entries masked; the rest of /sys is an
/// empty private tmpfs. With `gpu`, also the device tree the
/// drivers' libraries read (`SCAN_SYS_GPU`).
pub(crate) const SCAN_SYS_KEPT: &[&str] = &["/sys/fs/cgroup", "/sys/devices/system/cpu"];
pub(crate) const SCAN_SYS_GPU: &[&str] = &["/sys/devices", "/sys/bus", "/sys/class", "/sys/module"];

/// System files that read as empty inside.
pub const MASKED_ETC: &[&str] = &["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers"];
pub const MASKED_ETC_DIRS: &[&str] = &["/etc/sudoers.d"];

/// Home dotfiles that read as empty inside.
pub const MASKED_DOTFILES: &[&str] = &[".netrc", ".Xauthority", ".ICEauthority"];

/// Shared state bound back into the empty home (read-write).
pub const SHARED_HOME_DIRS: &[&str] = &[".agents/skills"];

/// The tool caches and data dirs. Sessions get the sandbox's own,
/// persistent copy of each, one pair per workspace (`private_tool_dirs`,
/// kept across that workspace's sessions), so what a session writes there
/// (a poisoned corepack, pre-commit or pip cache) never reaches the tools
/// you run outside, nor another project's sessions; `shareToolDirs` binds
/// your own instead.
pub const TOOL_DIRS: &[&str] = &[".cache", ".local/share"];
/// Where the sandbox keeps its per-workspace copies, relative to the home
/// (outside both tool dirs as sessions see them).
pub const PRIVATE_TOOL_ROOT: &str = ".local/share/agent-sandbox/workspaces";
/// The sandbox's own state in the user's data dir: read-only for sessions
/// that share the tool dirs, so none can plant into another workspace's
/// private copies.
const SANDBOX_SHARE: &str = ".local/share/agent-sandbox";

/// A workspace's stable identity: 128 bits of SHA-256 of its canonical
/// path, in hex (review's baselines use the same key).
pub fn workspace_key(workspace: &Path) -> String {
    use sha2::{Digest, Sha256};
    use std::os::unix::ffi::OsStrExt;
    Sha256::digest(workspace.as_os_str().as_bytes())[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// `workspace`'s private copies of `TOOL_DIRS`, in that order, relative to
/// the home: a session of one workspace never sees another's.
pub fn private_tool_dirs(workspace: &Path) -> [PathBuf; 2] {
    let root = Path::new(PRIVATE_TOOL_ROOT).join(workspace_key(workspace));
    [root.join("cache"), root.join("share")]
}

/// Trust stores in the tool dirs: approvals a tool outside acts on
/// without asking (direnv runs an approved `.envrc` on `cd`). With shared
/// tool dirs they are read-only in sessions (an empty read-only one when
/// missing), so a session cannot approve its own plant.
pub const TRUST_STORES: &[&str] = &[".local/share/direnv"];

/// Credential and desktop subdirectories of `~/.local/share` (and of
/// `~/.cache`) masked again after the bind.
pub const MASKED_SHARE: &[&str] = &[
    ".local/share/keyrings",
    ".local/share/kwalletd",
    ".local/share/gnupg",
    ".local/share/password-store",
    ".local/share/gvfs-metadata",
    ".local/share/recently-used.xbel",
    ".local/share/applications",
    ".local/share/autostart",
    ".local/share/systemd",
    ".local/share/dbus-1",
    ".local/share/flatpak",
    ".local/share/containers",
    ".local/share/Trash",
    ".local/share/nvim/shada",
    ".cache/keyring",
];

/// Forge token stores, readable unless `noForge`.
pub const FORGE_DIRS: &[&str] = &[".config/gh", ".config/glab-cli"];

/// Names that must always lead to the launcher, never to a planted file.
pub const ENTRY_POINTS: &[&str] = &["claude", "codex", "pi", "agent-sandbox", "sandbox-install"];

/// Where vendors install a CLI (relative to the home) that runs outside
/// sessions later — Claude Code's old local installer (`~/.claude/local`,
/// run through an alias) and its native installer's versions — inside the
/// agent state or tool data that sessions get bound back: read-only there.
pub const VENDOR_INSTALL_DIRS: &[&str] = &[".claude/local", ".local/share/claude"];

/// GPU device nodes exposed by `gpu: true`.
pub(crate) const GPU_DEVICE_PREFIXES: &[&str] = &["nvidia"];
pub(crate) const GPU_DEVICE_DIRS: &[&str] = &["/dev/dri"];

/// What bwrap gets on a descriptor: file contents it copies, or (`open`)
/// a file or directory the executor opens for a `Mount::BindFd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    pub purpose: Purpose,
    pub bytes: Vec<u8>,
    pub open: Option<OpenBeneath>,
}

/// A path the executor opens without following anything (`nofollow`),
/// checking that it still is what the plan saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenBeneath {
    pub root: PathBuf,
    pub rel: PathBuf,
    pub dir: bool,
}

impl OpenBeneath {
    /// The regular file `path`, opened beneath its own directory.
    pub fn file(path: &Path) -> OpenBeneath {
        let (dir, name) = (path.parent().unwrap_or(Path::new("/")), path.file_name().map(PathBuf::from).unwrap_or_default());
        OpenBeneath { root: dir.into(), rel: name, dir: false }
    }
}

/// What a data file is for: the executor, verify's weakenings and the
/// plan's printout tell them apart by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The session's syscall filter, which bwrap loads (`--seccomp`).
    Seccomp,
    /// The filter left unloaded (a verify weakening only).
    SeccompUnloaded,
    /// The session's git config (`GIT_CONFIG_GLOBAL`).
    GitConfig,
    /// The session marker (its id).
    Marker,
    /// The jail's resolv.conf.
    ResolvConf,
    /// The empty file a mask binds.
    Empty,
    /// A protected place of the workspace, or a private tool dir, bound
    /// from a descriptor.
    Protected,
    /// A vendor's installed command bound back read-only.
    InstalledCommand,
    /// A directory on the way to a PATH entry, pinned in place.
    Pinned,
    /// The jail's gate executable.
    Gate,
    /// Verify's probe executable.
    Probe,
}

impl Purpose {
    /// In words (the plan's printout, the memfd's name).
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Seccomp => "seccomp",
            Purpose::SeccompUnloaded => "seccomp (weakened: not loaded)",
            Purpose::GitConfig => "gitconfig",
            Purpose::Marker => "marker",
            Purpose::ResolvConf => "resolv.conf",
            Purpose::Empty => "empty",
            Purpose::Protected => "protected",
            Purpose::InstalledCommand => "installed command",
            Purpose::Pinned => "pinned",
            Purpose::Gate => "gate",
            Purpose::Probe => "probe",
        }
    }
}

impl DataFile {
    pub fn bytes(purpose: Purpose, bytes: Vec<u8>) -> DataFile {
        DataFile { purpose, bytes, open: None }
    }
}

/// A directory made before launch: `rel` under `root`. A `required` one
/// is bound by descriptor, so the launch stops when it cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnsureDir {
    pub root: PathBuf,
    pub rel: PathBuf,
    pub required: bool,
}

/// Everything needed to start the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub bwrap: PathBuf,
    /// Namespace and privilege flags (before the mounts).
    pub flags: Vec<&'static str>,
    /// The ids the session runs as inside its user namespace: the
    /// launcher's own (inside the jail, whose namespace maps only the
    /// launcher's id, bwrap would otherwise default to the overflow id).
    pub uid: u32,
    pub gid: u32,
    pub env: BTreeMap<OsString, OsString>,
    /// Data file `i` goes at descriptor `FIRST_DATA_FD + i`.
    pub data: Vec<DataFile>,
    /// In the jail: the command runs through the gate at [`GATE_PATH`],
    /// which waits on this descriptor ([`GATE_FD`]).
    pub gate_fd: Option<i32>,
    pub mounts: Vec<Planned>,
    pub workspace: PathBuf,
    pub chdir: PathBuf,
    /// The command run inside, argv[0] first.
    pub command: Vec<OsString>,
    /// How the session stands toward the host's files, and what the
    /// executor does for it before bwrap starts (`hostview`).
    pub host_view: HostView,
    /// Which mounts the executor makes itself, by descriptor, before bwrap
    /// starts (`premounts`), as far as the kernel's mount API allows: none,
    /// those in places sessions write, or all but `/dev` and `/proc`.
    pub premount: crate::sandbox::mountfd::MountApi,
    /// Directories the executor creates before launch (without following
    /// anything under the home) so agent state and the private tool dirs
    /// persist.
    pub ensure_dirs: Vec<EnsureDir>,
    /// Scope abstract unix sockets to the session with Landlock where the
    /// kernel can (`sandbox::landlock`); always true but in weakened tests.
    pub scope_abstract_sockets: bool,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    #[error("the workspace {0} is {1}; a session could write everything in it. cd into a project directory, or set workspaceRoot in /etc/agent-sandbox/config.json5")]
    UnsafeWorkspace(PathBuf, &'static str),
    #[error("workspaceRoot {0} does not exist or is not a directory; create it or fix workspaceRoot in /etc/agent-sandbox/config.json5")]
    MissingWorkspace(PathBuf),
    #[error("allowWrite path {0} does not exist; create it first or remove it from allowWrite")]
    MissingAllowWrite(PathBuf),
    #[error("allowWrite path {0} is your home directory or one of its parents, where your credentials live; allow a directory inside it instead (in /etc/agent-sandbox/config.json5 or AGENT_SANDBOX_ALLOW_WRITE)")]
    HomeAllowWrite(PathBuf),
    #[error("allowDevice {0} is not a character or block device; list device nodes under /dev only")]
    NotADevice(PathBuf),
    #[error("passEnv name {0} can never be passed into a session; remove it from passEnv")]
    NeverPassed(String),
    #[error("this container runs under the AppArmor profile `{0}`, which refuses every mount, and bubblewrap builds each session from mounts in its own namespaces. Fix: {fix}", fix = crate::fixes::APPARMOR)]
    AppArmorMounts(String),
    #[error("PATH names {0} ahead of the agent-sandbox shims; it does not exist yet, but a session could create it in a writable place and plant a `claude` there that runs outside the sandbox later. Put it after the system directories (e.g. PATH=$PATH:{0}) or create it before the session")]
    UnguardablePathDir(PathBuf),
    #[error("{origin} {what} {dir}, which does not exist yet; a session could create it in a writable place and plant a `claude` there that your next shell runs outside the sandbox. Create it now (mkdir -p {dir}) or remove that line")]
    UnguardableShellDir { dir: PathBuf, origin: String, what: String },
    #[error("{dir} is reached through the symbolic link {link}, which a session can point elsewhere and so shadow the agent-sandbox shims; put the directory the link leads to on PATH (or in the alias) instead")]
    UnguardableLink { dir: PathBuf, link: PathBuf },
    #[error("the command to run is empty")]
    EmptyCommand,
    #[error(transparent)]
    UnsafeEntry(#[from] UnsafeEntry),
}

/// Whether what a session writes at `p` lands at `p` outside, where a
/// shell outside finds it: the mount that covers it binds it onto itself
/// (a bind of another source, such as a private copy, does not).
pub fn writes_land_outside<M: std::borrow::Borrow<Mount>>(mounts: &[M], p: &Path) -> bool {
    match mounts.iter().map(|m| m.borrow()).rev().find(|m| p.starts_with(m.dest())) {
        Some(Mount::Bind { src, dest, .. }) => src == dest,
        Some(Mount::BindFd { writable, .. }) => *writable,
        _ => false,
    }
}

/// Builds the whole plan. Pure: every question about the file system goes
/// through `fs`.
pub fn build(ctx: &Context, config: &Config, fs: &dyn FsView) -> Result<Plan, PlanError> {
    if ctx.command.is_empty() {
        return Err(PlanError::EmptyCommand);
    }
    if let Some(bad) = config.pass_env.iter().find(|n| crate::env_vars::never_passed(n)) {
        return Err(PlanError::NeverPassed(bad.clone()));
    }
    if let Some(a) = ctx.apparmor.as_ref().filter(|a| a.refuses_mounts()) {
        return Err(PlanError::AppArmorMounts(a.label()));
    }
    let workspace = workspace(ctx, config, fs)?;
    let git_config_path = ctx.home.join(".gitconfig");
    let env = session_env(ctx, config, &git_config_path);
    let session_path = env.get(std::ffi::OsStr::new(crate::env_vars::PATH)).cloned().unwrap_or_default();

    let mut fixed = vec![
        DataFile::bytes(Purpose::Seccomp, seccomp::to_bytes(&seccomp::program(seccomp::native_abis()))),
        DataFile::bytes(
            Purpose::GitConfig,
            gitconfig::render(&ctx.git_identity, &workspace, if config.no_forge { &[] } else { &ctx.forge_helpers }).into_bytes(),
        ),
        DataFile::bytes(Purpose::Marker, format!("{}\n", ctx.session_id).into_bytes()),
    ];
    if let Network::Jail { resolv_conf, .. } = &ctx.network {
        fixed.push(DataFile::bytes(Purpose::ResolvConf, resolv_conf.clone().into_bytes()));
    }

    let protected = protect::plan(fs, &workspace, config)?;
    // The executor makes a mount namespace of its own for every session
    // (`hostview`): masks that need no later bwrap mount go there, one
    // mount each.
    let mut m = MountBuilder { fs, mounts: Vec::new(), data: fixed, early: true };
    let scanned = matches!(ctx.host_view, HostView::Scan { .. }).then_some((ctx.kernel_root_only.as_slice(), config.gpu));
    m.base(config, ctx.fresh_proc, scanned)?;
    m.home(ctx, config, &workspace);
    m.siblings(ctx, config, &workspace, &path_dirs(&session_path));
    m.workspace(&workspace, &protected);
    m.allow_write(config, &ctx.home)?;
    m.entry_guard(&path_dirs(&session_path), ctx)?;
    m.data_files(ctx, &git_config_path);

    let chdir = if ctx.cwd.starts_with(&workspace) { ctx.cwd.clone() } else { workspace.clone() };
    let ensure = |rel: &Path, required| EnsureDir { root: ctx.home.clone(), rel: rel.into(), required };
    let mut ensure_dirs: Vec<EnsureDir> = ctx
        .agent
        .state_paths(&ctx.home)
        .into_iter()
        .filter(|(_, k)| *k == crate::agents::StateKind::Dir)
        .filter_map(|(p, _)| p.strip_prefix(&ctx.home).ok().map(|r| ensure(r, false)))
        .collect();
    if !config.share_tool_dirs {
        ensure_dirs.extend(private_tool_dirs(&workspace).iter().map(|d| ensure(d, true)));
    }
    Ok(Plan {
        bwrap: ctx.bwrap.clone(),
        flags: NAMESPACE_FLAGS.to_vec(),
        uid: ctx.uid,
        gid: ctx.gid,
        env,
        data: m.data,
        gate_fd: matches!(ctx.network, Network::Jail { .. }).then_some(GATE_FD),
        mounts: m.mounts,
        workspace,
        chdir,
        command: ctx.command.clone(),
        host_view: ctx.host_view.clone(),
        premount: ctx.mount_api,
        ensure_dirs,
        scope_abstract_sockets: true,
    })
}

fn workspace(ctx: &Context, config: &Config, fs: &dyn FsView) -> Result<PathBuf, PlanError> {
    let ws = match &config.workspace_root {
        Some(root) => {
            if fs.kind(root) != Some(Kind::Dir) {
                return Err(PlanError::MissingWorkspace(root.clone()));
            }
            root.clone()
        }
        None => ctx.cwd.clone(),
    };
    if ws == Path::new("/") {
        return Err(PlanError::UnsafeWorkspace(ws, "the root directory"));
    }
    if ctx.home.starts_with(&ws) {
        return Err(PlanError::UnsafeWorkspace(ws, "your home directory or one of its parents"));
    }
    Ok(ws)
}

/// New user, pid, ipc, uts (and cgroup where possible) namespaces; every
/// capability dropped; killed with its parent. bwrap also sets no-new-privs.
pub const NAMESPACE_FLAGS: &[&str] =
    &["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--cap-drop", "ALL"];

impl Plan {
    /// Mount `i` of the plan.
    pub fn mount(&self, i: usize) -> Option<&Mount> {
        self.mounts.get(i).map(|m| &m.mount)
    }

    /// What the executor hides before bwrap starts (`sandbox::hostview`):
    /// the plan's early masks.
    pub fn early_masks(&self) -> Vec<&Path> {
        self.mounts
            .iter()
            .filter_map(|m| match &m.mount {
                Mount::EarlyMask { dest } => Some(dest.as_path()),
                _ => None,
            })
            .collect()
    }

    /// The mounts the executor makes itself, by descriptor, before bwrap
    /// starts (their destinations lie in places sessions write;
    /// `premount`); bwrap's arguments leave them out. Derived from the
    /// mount list, so an edited plan (a weakening) stays consistent.
    pub fn premounts(&self) -> Vec<crate::sandbox::premount::Premount> {
        use crate::sandbox::mountfd::MountApi;
        match self.premount {
            MountApi::None => Vec::new(),
            MountApi::Tree => crate::sandbox::premount::plan(&self.mounts, &self.data),
            MountApi::Full => crate::sandbox::premount::plan_all(&self.mounts, &self.data),
        }
    }

    /// Whether the session gets the container's /proc (a masked one
    /// refuses it a fresh /proc): outer processes are visible in it.
    pub fn container_proc(&self) -> bool {
        self.mounts.iter().any(|m| matches!(m.mount, Mount::ContainerProc { .. }))
    }

    /// The files bwrap binds by descriptor onto places in its own fresh
    /// /dev (the jail's gate, verify's probe): each one's data index and
    /// where it is opened. bwrap finds such a source again by its path, which
    /// one of the executor's mounts may cover (a launcher under /tmp), so
    /// the executor stages them first (`hostview`).
    pub(crate) fn dev_binds(&self) -> Vec<(usize, &OpenBeneath)> {
        let in_dev = |dest: &Path| dest.starts_with("/dev");
        self.mounts
            .iter()
            .filter_map(|m| match &m.mount {
                Mount::BindFd { dest, data, .. } if in_dev(dest) => Some((*data, self.data.get(*data)?.open.as_ref()?)),
                _ => None,
            })
            .collect()
    }

    /// Binds the regular file `path` read-only at `dest` in the session's
    /// /dev, from a descriptor opened without following links (so it is
    /// found whatever the session's view puts over `path`).
    pub fn bind_file_into_dev(&mut self, purpose: Purpose, roles: &'static [Role], path: &Path, dest: &Path) {
        self.data.push(DataFile { purpose, bytes: Vec::new(), open: Some(OpenBeneath::file(path)) });
        self.mounts.push(Planned::new(Mount::BindFd { dest: dest.into(), data: self.data.len() - 1, writable: false }, roles));
    }

    /// Whether the executor makes the whole view (`MountApi::Full`): the
    /// host's tree read-only in place, bwrap binding it as it is.
    pub(crate) fn executor_view(&self) -> bool {
        self.premount == crate::sandbox::mountfd::MountApi::Full
    }

    /// The data files bwrap is given (those of mounts the executor makes
    /// itself are not: `premounts`); their descriptors stay closed.
    pub(crate) fn data_for_bwrap(&self) -> Vec<bool> {
        let premounts = self.premounts();
        let mut used = vec![false; self.data.len()];
        if let Some(u) = used.get_mut(0).filter(|_| self.data.first().is_some_and(|d| matches!(d.purpose, Purpose::Seccomp | Purpose::SeccompUnloaded))) {
            *u = true;
        }
        for (i, m) in self.mounts.iter().enumerate() {
            if crate::sandbox::premount::is_premounted(&premounts, i) {
                continue;
            }
            if let Mount::Mask { data, .. } | Mount::Data { data, .. } | Mount::BindFd { data, .. } = &m.mount {
                if let Some(u) = used.get_mut(*data) {
                    *u = true;
                }
            }
        }
        used
    }

    /// bwrap's arguments (argv[1..]): the flags, the mounts in order (but
    /// those the executor makes itself), the seccomp filter, the working
    /// directory, then `--` and the command.
    pub fn args(&self) -> Vec<OsString> {
        let premounts = self.premounts();
        let mut a: Vec<OsString> = self.flags.iter().map(OsString::from).collect();
        a.extend(["--uid".into(), self.uid.to_string().into(), "--gid".into(), self.gid.to_string().into()]);
        for (i, mount) in self.mounts.iter().enumerate() {
            match &mount.mount {
                // The executor made the host's tree read-only (or, weakened,
                // left it writable): bwrap binds it as it is.
                Mount::RoBind { src, dest, .. } | Mount::Bind { src, dest, .. } if i == 0 && self.executor_view() => {
                    a.extend(["--bind".into(), src.as_os_str().to_os_string(), dest.as_os_str().to_os_string()])
                }
                _ if crate::sandbox::premount::is_premounted(&premounts, i) => {}
                _ => a.extend(mount.to_args(|i| FIRST_DATA_FD + i as i32)),
            }
        }
        if self.data.first().is_some_and(|d| d.purpose == Purpose::Seccomp) {
            a.extend(["--seccomp".into(), FIRST_DATA_FD.to_string().into()]);
        }
        a.extend(["--chdir".into(), self.chdir.as_os_str().to_os_string()]);
        a.push("--".into());
        if self.gate_fd.is_some() {
            a.push(GATE_PATH.into());
        }
        a.extend(self.command.iter().cloned());
        a
    }
}

struct MountBuilder<'a> {
    fs: &'a dyn FsView,
    mounts: Vec<Planned>,
    /// The plan's data files; masks append an empty one each (bwrap
    /// consumes a descriptor per use).
    data: Vec<DataFile>,
    /// Whether the executor mounts masks before bwrap starts
    /// (`Mount::EarlyMask`).
    early: bool,
}

impl MountBuilder<'_> {
    fn push(&mut self, m: Mount, roles: &'static [Role]) {
        self.mounts.push(Planned::new(m, roles));
    }

    /// An empty read-only file over `dest`.
    fn mask(&mut self, dest: PathBuf, roles: &'static [Role]) {
        self.data.push(DataFile::bytes(Purpose::Empty, Vec::new()));
        let data = self.data.len() - 1;
        self.push(Mount::Mask { dest, data }, roles);
    }

    fn exists(&self, p: &Path) -> bool {
        self.fs.kind(p).is_some()
    }

    /// Steps 1-4. `fresh_proc`: whether the kernel allows the session a
    /// /proc of its own here (`context::fresh_proc_possible`).
    fn base(&mut self, config: &Config, fresh_proc: bool, scanned: Option<(&[(PathBuf, Kind)], bool)>) -> Result<(), PlanError> {
        self.push(Mount::RoBind { src: "/".into(), dest: "/".into(), optional: false }, &[Role::ReadOnlyRoot]);
        self.push(Mount::Dev { dest: "/dev".into() }, &[Role::Devices]);
        self.devices(config)?;
        // Under a masked /proc (a pod's, Docker's and podman's default) the
        // kernel refuses a fresh procfs to any user namespace: the
        // container's own is bound instead, its masks kept. The session keeps
        // its pid namespace (outer processes cannot be signalled, nothing of
        // it is left behind) and its user namespace, in which the kernel
        // refuses every ptrace-mode access (environment, memory, files,
        // namespaces) to the outer processes it now sees (docs/defences.md,
        // "Under a masked /proc").
        match fresh_proc {
            true => self.push(Mount::Proc { dest: "/proc".into() }, &[Role::PidNamespace]),
            false => self.push(Mount::ContainerProc { dest: "/proc".into() }, &[Role::ContainerProc]),
        }
        // Either /proc is writable where file modes allow: a session
        // running as root (uid 0 outside too: a scanned root launch) could
        // write host sysctls (kernel.core_pattern runs a program as real
        // root) or sysrq. Any other session is an ordinary uid on host
        // files, refused by the modes of everything but the sysctls of its
        // own network namespace (the jail's, whose owner it descends from):
        // /proc/sys alone.
        let read_only = if scanned.is_some() { PROC_READ_ONLY } else { &PROC_READ_ONLY[..1] };
        for p in read_only {
            self.push(Mount::RoBind { src: p.into(), dest: p.into(), optional: true }, &[Role::KernelInterfaces]);
        }
        self.scanned_kernel(scanned);
        self.push(Mount::Tmpfs { dest: "/tmp".into() }, &[Role::Tmp]);
        if self.fs.kind(Path::new("/var/tmp")) == Some(Kind::Dir) {
            self.push(Mount::Tmpfs { dest: "/var/tmp".into() }, &[Role::Tmp]);
        }
        self.runtime_dirs();
        // Resolved first and masked once each: /var/run is usually a
        // symlink to /run, and bwrap cannot follow it into the new root.
        let mut system: Vec<(PathBuf, &'static [Role])> = Vec::new();
        for (p, roles) in system_masks() {
            let real = self.fs.resolve_parent(Path::new(p));
            if !system.iter().any(|(s, _)| *s == real) {
                system.push((real, roles));
            }
        }
        for (p, roles) in &system {
            self.mask_existing(p, roles);
        }
        // The host's SSH private keys: root-only files a root session could
        // otherwise read through the owner bits.
        for key in self.fs.children(Path::new("/etc/ssh")) {
            let name = key.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("ssh_host_") && name.ends_with("_key") {
                self.mask_existing(&key, &[Role::Credentials]);
            }
        }
        Ok(())
    }

    /// A scanned root session (root's uid on host files): the kernel's
    /// root-only interfaces masked in its /proc, and of /sys only what
    /// `SCAN_SYS_KEPT` (and, with a GPU, `SCAN_SYS_GPU`) names, their
    /// root-only entries masked too.
    fn scanned_kernel(&mut self, scanned: Option<(&[(PathBuf, Kind)], bool)>) {
        let Some((found, gpu)) = scanned else { return };
        let mask = |m: &mut Self, p: &Path, k: Kind| match k {
            Kind::Dir => m.push(Mount::TmpfsRo { dest: p.into() }, &[Role::RootOnly]),
            _ => m.mask(p.into(), &[Role::RootOnly]),
        };
        // An interface's sysctls come and go with it (a container's veth):
        // one that was gone by the time bwrap masked its root-only entry
        // (`stable_secret`) failed the launch, and one made after the scan
        // would show its own unmasked. Each per-interface tree with such an
        // entry is covered whole instead, `all` and `default` bound back
        // (their entries masked below like any other).
        let per_interface: std::collections::BTreeSet<&Path> = found.iter().filter_map(|(p, _)| interface_tree(p)).collect();
        for tree in per_interface {
            self.push(Mount::Tmpfs { dest: tree.into() }, &[Role::RootOnly]);
            for kept in ["all", "default"] {
                self.push(Mount::RoBind { src: tree.join(kept), dest: tree.join(kept), optional: true }, &[Role::RootOnly]);
            }
        }
        for (p, k) in found.iter().filter(|(p, _)| p.starts_with("/proc") && interface_tree(p).is_none()) {
            mask(self, p, *k);
        }
        if self.fs.kind(Path::new("/sys")) != Some(Kind::Dir) {
            return;
        }
        // Writable, so bwrap can make the kept trees' mount points in it;
        // a session's own and in memory, as /tmp is.
        self.push(Mount::Tmpfs { dest: "/sys".into() }, &[Role::RootOnly]);
        let kept: Vec<&str> = SCAN_SYS_KEPT.iter().chain(if gpu { SCAN_SYS_GPU } else { &[] }).copied().collect();
        for d in kept {
            self.push(Mount::RoBind { src: d.into(), dest: d.into(), optional: true }, &[Role::RootOnly]);
        }
        for (p, k) in found.iter().filter(|(p, _)| p.starts_with("/sys")) {
            mask(self, p, *k);
        }
    }

    /// The runtime directories as an empty private tmpfs each (a symlink,
    /// such as /var/run -> /run, is left to its target), then what sessions
    /// need from them bound back read-only.
    fn runtime_dirs(&mut self) {
        for d in RUNTIME_DIRS {
            let p = Path::new(d);
            if self.fs.kind(p) == Some(Kind::Dir) && !self.fs.is_symlink(p) {
                self.push(Mount::Tmpfs { dest: p.into() }, &[Role::RunUser, Role::Engines]);
            }
        }
        for f in RUNTIME_KEPT {
            let Some(target) = self.fs.resolve(Path::new(f)) else { continue };
            let under_tmpfs = RUNTIME_DIRS.iter().any(|d| target.starts_with(d));
            if under_tmpfs && self.fs.kind(&target) == Some(Kind::File) {
                self.push(Mount::RoBind { src: target.clone(), dest: target, optional: true }, &[Role::RuntimeKept]);
            }
        }
    }

    /// An empty read-only view over whatever is at `p` (nothing if absent,
    /// or already out of sight: under an earlier mask — whose read-only
    /// tmpfs could not take a mount point anyway — or a private tmpfs).
    fn mask_existing(&mut self, p: &Path, roles: &'static [Role]) {
        let a = access(&self.mounts, p);
        if !a.readable() || a == crate::sandbox::scope::Access::Private {
            return;
        }
        match self.fs.kind(p) {
            None => {}
            Some(Kind::Dir) => self.push(Mount::TmpfsRo { dest: p.into() }, roles),
            Some(_) => self.mask(p.into(), roles),
        }
    }

    fn devices(&mut self, config: &Config) -> Result<(), PlanError> {
        for dev in &config.allow_device {
            match self.fs.kind(dev) {
                Some(Kind::CharDevice | Kind::BlockDevice) => {
                    self.push(Mount::DevBind { src: dev.clone(), dest: dev.clone(), optional: false }, &[Role::AllowDevice])
                }
                _ => return Err(PlanError::NotADevice(dev.clone())),
            }
        }
        if config.gpu {
            for p in self.fs.children(Path::new("/dev")) {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if GPU_DEVICE_PREFIXES.iter().any(|pre| name.starts_with(pre)) {
                    self.push(Mount::DevBind { src: p.clone(), dest: p, optional: true }, &[Role::Gpu]);
                }
            }
            for d in GPU_DEVICE_DIRS {
                if self.exists(Path::new(d)) {
                    self.push(Mount::DevBind { src: d.into(), dest: d.into(), optional: true }, &[Role::Gpu]);
                }
            }
        }
        Ok(())
    }

    /// Step 5: the home. An empty tmpfs, then the agent's own state, the
    /// shared skills and tool caches bound back read-write, forge token
    /// stores read-only (unless `noForge`), and the credential and desktop
    /// corners of those binds plus the dotfiles masked again.
    fn home(&mut self, ctx: &Context, config: &Config, workspace: &Path) {
        let home = &ctx.home;
        self.push(Mount::Tmpfs { dest: home.clone() }, &[Role::Home]);
        for (p, _) in ctx.agent.state_paths(home) {
            self.push(Mount::Bind { src: p.clone(), dest: p, optional: true }, &[Role::AgentState]);
        }
        for rel in SHARED_HOME_DIRS {
            let p = home.join(rel);
            if self.fs.kind(&p) == Some(Kind::Dir) {
                self.push(Mount::Bind { src: p.clone(), dest: p, optional: false }, &[Role::SharedHome]);
            }
        }
        self.tool_dirs(home, config.share_tool_dirs, workspace);
        if !config.share_tool_dirs {
            self.command_install(home, &ctx.command);
        }
        if !config.no_forge {
            for rel in FORGE_DIRS {
                let p = home.join(rel);
                if self.fs.kind(&p) == Some(Kind::Dir) {
                    self.push(Mount::RoBind { src: p.clone(), dest: p, optional: false }, &[Role::Forge]);
                }
            }
        }
        for rel in MASKED_DOTFILES {
            self.mask(home.join(rel), &[Role::Credentials]);
        }
    }

    /// The tool dirs: this workspace's private copies (created before
    /// launch, `Plan::ensure_dirs`), or with `share`, the user's own minus
    /// their credential and desktop corners, trust stores and the
    /// sandbox's own state (every workspace's private copies) read-only.
    fn tool_dirs(&mut self, home: &Path, share: bool, workspace: &Path) {
        if !share {
            // From descriptors: an earlier session (with shared tool dirs)
            // could have left a link where the private copy belongs.
            for (rel, private) in TOOL_DIRS.iter().zip(private_tool_dirs(workspace)) {
                self.bind_fd_at(Purpose::Protected, &[Role::ToolDirs], home, &private, &home.join(rel), true, true);
            }
            // A vendor's install dir in a tool dir (Claude Code's native
            // installer: ~/.local/share/claude, linked from ~/.local/bin)
            // would be hidden by the private copy, and the agent with it:
            // bound back read-only, like an installed command.
            for rel in self.vendor_installs_in_tool_dirs(home) {
                self.bind_fd_at(Purpose::InstalledCommand, &[Role::InstalledCommand], home, &rel, &home.join(&rel), true, false);
            }
            return;
        }
        for rel in TOOL_DIRS {
            let p = home.join(rel);
            if self.fs.kind(&p) == Some(Kind::Dir) {
                self.push(Mount::Bind { src: p.clone(), dest: p, optional: false }, &[Role::SharedToolDirs]);
            }
        }
        for rel in MASKED_SHARE {
            self.mask_existing(&home.join(rel), &[Role::Credentials]);
        }
        for rel in TRUST_STORES.iter().chain(&[SANDBOX_SHARE]) {
            let p = home.join(rel);
            match self.fs.kind(&p) {
                Some(Kind::Dir) => self.push(Mount::RoBind { src: p.clone(), dest: p, optional: false }, &[Role::TrustStores]),
                // Only where sessions could make it (the tool dir is there).
                None if p.parent().is_some_and(|d| self.fs.kind(d) == Some(Kind::Dir)) => self.push(Mount::TmpfsRo { dest: p }, &[Role::TrustStores]),
                _ => {}
            }
        }
    }

    /// A command installed in a tool dir of the home (Claude Code's native
    /// installer keeps its versions in `~/.local/share/claude`, pnpm its
    /// globals in `~/.local/share/pnpm`) would be hidden by the private
    /// copies: its install dir, the tool dir's entry that holds it, is
    /// bound back read-only (sessions run it, never change it), from a
    /// descriptor opened without following anything.
    fn command_install(&mut self, home: &Path, command: &[OsString]) {
        let Some(cmd) = command.first().map(Path::new).filter(|c| c.is_absolute()) else { return };
        let vendors = self.vendor_installs_in_tool_dirs(home);
        for tool in TOOL_DIRS {
            let Ok(rest) = cmd.strip_prefix(home.join(tool)) else { continue };
            let mut parts = rest.components();
            let Some(Component::Normal(entry)) = parts.next() else { return };
            let rel = Path::new(tool).join(entry);
            if rel.starts_with(SANDBOX_SHARE) || vendors.contains(&rel) {
                return;
            }
            let dir = parts.next().is_some();
            self.bind_fd_at(Purpose::InstalledCommand, &[Role::InstalledCommand], home, &rel, &home.join(&rel), dir, false);
            return;
        }
    }

    /// The vendors' install dirs (`VENDOR_INSTALL_DIRS`) that lie in a
    /// tool dir and are directories in the home, relative to it.
    fn vendor_installs_in_tool_dirs(&self, home: &Path) -> Vec<PathBuf> {
        VENDOR_INSTALL_DIRS
            .iter()
            .map(PathBuf::from)
            .filter(|rel| TOOL_DIRS.iter().any(|t| rel.starts_with(t)))
            .filter(|rel| self.fs.kind(&home.join(rel)) == Some(Kind::Dir))
            .collect()
    }

    /// Step 6 (after the home, so peers under the home can be bound back):
    /// the workspace's siblings. Without peers they are hidden, except those
    /// the session needs to run (they hold PATH directories, the launcher,
    /// the command, the home or an allowWrite path). With peers they are
    /// readable, never writable. Siblings in the home itself are dotfiles
    /// and credentials, never exposed.
    fn siblings(&mut self, ctx: &Context, config: &Config, ws: &Path, path_dirs: &[PathBuf]) {
        let Some(parent) = ws.parent() else { return };
        if parent == Path::new("/") || parent == ctx.home {
            return;
        }
        let peers = config.peers || ctx.peers_flag;
        let under_home = parent.starts_with(&ctx.home);
        let mut needed: Vec<&Path> = path_dirs.iter().map(PathBuf::as_path).collect();
        needed.extend(ctx.shim_dir.as_deref());
        let writable = config.writable();
        needed.extend(writable.iter().map(PathBuf::as_path));
        needed.push(&ctx.home);
        let cmd = Path::new(&ctx.command[0]);
        if cmd.is_absolute() {
            needed.push(cmd);
        }
        for sib in self.fs.children(parent) {
            // A symlinked sibling is not a checkout of its own (its target,
            // when a sibling, is handled as itself), and bwrap could not
            // follow an absolute link inside the new root anyway.
            if sib == ws || needed.iter().any(|n| n.starts_with(&sib)) || self.fs.is_symlink(&sib) {
                continue;
            }
            // Already gone (under the home's or /tmp's tmpfs)?
            let visible = access(&self.mounts, &sib).readable();
            let dotted = sib.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
            match (peers, visible) {
                // Visible through the read-only root: nothing to do.
                (true, true) => {}
                // Bring sibling checkouts back read-only; dot-entries under
                // the home are configuration and credentials, not checkouts.
                (true, false) if under_home && !dotted => self.push(Mount::RoBind { src: sib.clone(), dest: sib, optional: true }, &[Role::Peers]),
                (true, false) => {}
                (false, true) if self.early => self.push(Mount::EarlyMask { dest: sib }, &[Role::Siblings]),
                (false, true) => self.mask_existing(&sib, &[Role::Siblings]),
                (false, false) => {}
            }
        }
    }

    /// Step 7: the workspace writable; what runs later outside the sandbox
    /// read-only (`protect.rs`: the devcontainer definition, every git
    /// directory's config files, hooks and hooks path), bound from
    /// descriptors opened without following anything; git directories
    /// bound onto themselves so their name cannot be swapped; missing hook
    /// directories an empty read-only one, so none can be planted.
    fn workspace(&mut self, ws: &Path, protected: &Protected) {
        self.push(Mount::Bind { src: ws.into(), dest: ws.into(), optional: false }, &[Role::Workspace]);
        for rel in &protected.pinned {
            self.bind_fd_for(Purpose::Protected, &[Role::GitDirPins], ws, rel, true, true);
        }
        for (rel, dir) in &protected.read_only {
            self.bind_fd_for(Purpose::Protected, &[Role::Protections], ws, rel, *dir, false);
        }
        for rel in &protected.empty {
            self.push(Mount::TmpfsRo { dest: ws.join(rel) }, &[Role::Protections]);
        }
    }

    fn bind_fd_for(&mut self, purpose: Purpose, roles: &'static [Role], root: &Path, rel: &Path, dir: bool, writable: bool) {
        self.bind_fd_at(purpose, roles, root, rel, &root.join(rel), dir, writable);
    }

    /// `rel` under `root`, opened by the executor without following
    /// anything, bound on `dest`.
    #[allow(clippy::too_many_arguments)]
    fn bind_fd_at(&mut self, purpose: Purpose, roles: &'static [Role], root: &Path, rel: &Path, dest: &Path, dir: bool, writable: bool) {
        let open = OpenBeneath { root: root.into(), rel: rel.into(), dir };
        self.data.push(DataFile { purpose, bytes: Vec::new(), open: Some(open) });
        let data = self.data.len() - 1;
        self.push(Mount::BindFd { dest: dest.into(), data, writable }, roles);
    }

    /// Step 8.
    fn allow_write(&mut self, config: &Config, home: &Path) -> Result<(), PlanError> {
        for p in &config.writable() {
            if home.starts_with(p) {
                return Err(PlanError::HomeAllowWrite(p.clone()));
            }
            if !self.exists(p) {
                return Err(PlanError::MissingAllowWrite(p.clone()));
            }
            self.push(Mount::Bind { src: p.clone(), dest: p.clone(), optional: false }, &[Role::AllowWrite]);
        }
        Ok(())
    }

    /// Step 9: the entry points (`ENTRY_POINTS`) cannot be shadowed from
    /// inside, in this session or in a later shell outside:
    ///  a. every directory of the session's PATH before the shims' own that
    ///     the session can write, and every directory the user's shell
    ///     start-up files put on PATH (`ctx.shell_path`) where what a
    ///     session writes lands outside, gets read-only empty files over
    ///     the entry-point names — and is pinned, with each directory
    ///     between it and the bind it lies in: bound onto itself from a
    ///     descriptor, it is a mount point, which can be neither renamed
    ///     nor removed, so it cannot be swapped for one holding a plant;
    ///  b. the directory of the file an entry-point alias runs, and the
    ///     vendors' install directories (`VENDOR_INSTALL_DIRS`), are pinned
    ///     read-only where they lie in a bind that writes through;
    ///  c. such a directory that does not exist yet but could be created
    ///     with a persistent write cannot be guarded (a mount point would
    ///     have to be made in it): the launch is refused, naming it and
    ///     where it came from.
    /// Must come after every writable mount, since it asks which
    /// directories are writable.
    fn entry_guard(&mut self, path_dirs: &[PathBuf], ctx: &Context) -> Result<(), PlanError> {
        let shim_dir = ctx.shim_dir.as_deref();
        let made: Vec<PathBuf> = ctx.agent.state_paths(&ctx.home).into_iter().filter(|(_, k)| *k == crate::agents::StateKind::Dir).map(|(p, _)| p).collect();
        let mut done: Vec<PathBuf> = Vec::new();
        // Directories are judged (and guarded) where they really are: a
        // PATH entry reached through a link outside the session's reach
        // (~/proj -> /workspaces/proj) lands in the bind of its target.
        for dir in path_dirs {
            if Some(dir.as_path()) == shim_dir {
                break;
            }
            if self.fs.kind(dir) != Some(Kind::Dir) {
                if self.creatable_outside(dir) {
                    return Err(PlanError::UnguardablePathDir(dir.clone()));
                }
                continue;
            }
            let real = self.fs.resolve(dir).unwrap_or_else(|| dir.clone());
            if access(&self.mounts, &real).writable() && !done.contains(&real) {
                self.guard_path_dir(&real)?;
                done.push(real);
            }
        }
        for (dir, origin) in &ctx.shell_path.dirs {
            if Some(dir.as_path()) == shim_dir {
                continue;
            }
            match self.fs.kind(dir) {
                Some(Kind::Dir) => {
                    let real = self.fs.resolve(dir).unwrap_or_else(|| dir.clone());
                    if self.lands_outside(&real) && !done.contains(&real) {
                        self.guard_path_dir(&real)?;
                        done.push(real);
                    }
                }
                None if self.lands_outside_once_made(dir, &made) => {
                    return Err(PlanError::UnguardableShellDir { dir: dir.clone(), origin: origin.to_string(), what: "puts on PATH".into() })
                }
                _ => {}
            }
        }
        let vendor = VENDOR_INSTALL_DIRS.iter().map(|rel| (ctx.home.join(rel), None));
        let aliased = ctx.shell_path.aliases.iter().filter_map(|(name, file, origin)| Some((file.parent()?.to_path_buf(), Some((name, origin)))));
        for (dir, alias) in vendor.chain(aliased).collect::<Vec<_>>() {
            let real = self.fs.resolve(&dir).unwrap_or_else(|| dir.clone());
            match (self.fs.kind(&dir), alias) {
                (Some(Kind::Dir), _) if self.lands_outside(&real) => self.pin(&real, false)?,
                (None, Some((name, origin))) if self.lands_outside_once_made(&dir, &made) => {
                    return Err(PlanError::UnguardableShellDir { dir, origin: origin.to_string(), what: format!("aliases `{name}` to a file in") })
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// 9a for one directory: pinned, writable, the entry points masked.
    fn guard_path_dir(&mut self, dir: &Path) -> Result<(), PlanError> {
        if self.lands_outside(dir) {
            self.pin(dir, true)?;
        }
        for name in ENTRY_POINTS {
            self.mask(dir.join(name), &[Role::EntryPoints]);
        }
        Ok(())
    }

    fn lands_outside(&self, p: &Path) -> bool {
        writes_land_outside(&self.mounts, p)
    }

    /// Whether a session could create the missing `p` where it lands
    /// outside. `made`: directories the launcher creates before the session
    /// (the agent's state), which count as existing.
    fn lands_outside_once_made(&self, p: &Path, made: &[PathBuf]) -> bool {
        p.ancestors().skip(1).find(|a| self.fs.kind(a).is_some() || made.iter().any(|m| m == a)).is_some_and(|a| {
            let real = self.fs.resolve(a).unwrap_or_else(|| a.to_path_buf());
            self.lands_outside(&real) && access(&self.mounts, &real).writable_outside()
        })
    }

    /// Makes `dir`, and each directory between it and the bind it lies in,
    /// a mount point bound onto itself from a descriptor (opened without
    /// following anything, so what is pinned is what the plan saw): none
    /// of them can then be renamed or removed from inside. `writable`: what
    /// `dir` itself stays; the ones above it stay writable.
    fn pin(&mut self, dir: &Path, writable: bool) -> Result<(), PlanError> {
        let Some(root) = self.mounts.iter().rev().map(|m| m.dest()).find(|d| dir.starts_with(d)).cloned() else { return Ok(()) };
        let Ok(rel) = dir.strip_prefix(&root) else { return Ok(()) };
        let parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
        let mut cur = PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            cur.push(part);
            if self.fs.is_symlink(&root.join(&cur)) {
                return Err(PlanError::UnguardableLink { dir: dir.to_path_buf(), link: root.join(&cur) });
            }
            let last = i + 1 == parts.len();
            self.bind_fd_for(Purpose::Pinned, &[Role::EntryPoints], &root, &cur, true, writable || !last);
        }
        // The bind's own root is a mount point already; read-only, it is
        // bound again so.
        if parts.is_empty() && !writable {
            self.bind_fd_for(Purpose::Pinned, &[Role::EntryPoints], &root, Path::new(""), true, false);
        }
        Ok(())
    }

    /// Whether a session could create `missing` so that it persists: its
    /// nearest existing ancestor is writable through to the outside.
    fn creatable_outside(&self, missing: &Path) -> bool {
        missing.ancestors().skip(1).find(|a| self.fs.kind(a).is_some()).is_some_and(|a| access(&self.mounts, a).writable_outside())
    }

    /// Step 10.
    fn data_files(&mut self, ctx: &Context, git_config: &Path) {
        self.push(Mount::Data { dest: git_config.into(), data: 1 }, &[Role::Git]);
        self.push(Mount::Data { dest: SESSION_MARKER.into(), data: 2 }, &[Role::Recursion]);
        if let Network::Jail { gate_exe, .. } = &ctx.network {
            self.push(Mount::Data { dest: "/etc/resolv.conf".into(), data: 3 }, &[Role::JailDns]);
            // By descriptor: the executable may lie where the session's
            // view puts a fresh tmpfs (a launcher under /tmp), which the
            // executor makes before bwrap binds /dev (`Plan::dev_binds`).
            let gate = OpenBeneath::file(gate_exe);
            self.bind_fd_at(Purpose::Gate, &[Role::Gate], &gate.root, &gate.rel, Path::new(GATE_PATH), false, false);
        }
    }
}

#[cfg(test)]
mod tests;
