//! The facts of one launch: who runs it, where, with what environment,
//! which helpers and which command. `Context` is plain data (tests build it
//! by hand); `gather` reads it off the running process.

use crate::agents::Agent;
use crate::sandbox::gitconfig::GitIdentity;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How the session reaches the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// The outer network namespace (egress jail switched off).
    Host,
    /// Inside the egress jail: the session's resolv.conf names only the
    /// jail's DNS forwarder; the command passes the jail's gate, a copy
    /// of the launcher's own executable (`gate_exe`) bound into the
    /// session (see `jail::gate`).
    Jail { resolv_conf: String, gate_exe: PathBuf },
}

/// How a session's processes stand toward the host's files (the root
/// launcher row of docs/defences.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "mechanism", rename_all = "kebab-case")]
pub enum HostView {
    /// The launcher's own uid (a non-root launcher): a user's permissions.
    Launcher,
    /// A root launcher's session as the unprivileged `uid`/`gid` on host
    /// files (kernel-enforced: every root-only file, directory, socket and
    /// kernel interface is refused by the kernel's own checks), with the
    /// places it writes bound through idmapped mounts that exchange their
    /// owner and `uid`; `groups`: the allowed devices' groups it keeps.
    Unprivileged { uid: u32, gid: u32, groups: Vec<u32>, idmapped: Vec<PathBuf> },
    /// A root launcher where idmapped mounts cannot be made (`why`): root's
    /// uid, and the root-only scan hides what only root may use.
    Scan { why: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub uid: u32,
    pub gid: u32,
    pub user: String,
    /// The home of the user who runs the launcher (from the password
    /// database): the one that is masked.
    pub home: PathBuf,
    pub shell: PathBuf,
    /// The current directory (absolute, symlinks resolved).
    pub cwd: PathBuf,
    pub env: BTreeMap<OsString, OsString>,
    pub agent: Agent,
    /// The command to run inside, argv[0] first.
    pub command: Vec<OsString>,
    pub bwrap: PathBuf,
    /// Where the shims and the CLI live (the launcher's own directory).
    pub shim_dir: Option<PathBuf>,
    pub session_id: String,
    pub(crate) git_identity: GitIdentity,
    /// Forge credential helpers available in root-owned system directories.
    pub(crate) forge_helpers: Vec<(String, PathBuf)>,
    pub network: Network,
    /// `--peers` from the command line (ORed with the config's `peers`).
    pub(crate) peers_flag: bool,
    /// Whether bwrap may mount a fresh /proc here (false in containers whose
    /// /proc has masked paths).
    pub fresh_proc: bool,
    /// The AppArmor profile this process runs under, if any.
    pub apparmor: Option<crate::confinement::AppArmor>,
    /// What the user's shell start-up files put on PATH and alias the
    /// entry points to (`shellrc`, read without running them): the entry
    /// guard covers those too.
    pub shell_path: crate::sandbox::shellrc::ShellPath,
    pub host_view: HostView,
    /// For a scanned root session (`HostView::Scan`): the kernel's
    /// interfaces only root may read in /proc and in the parts of /sys the
    /// session keeps (`rootscan::kernel_root_only`), masked by the plan.
    pub(crate) kernel_root_only: Vec<(PathBuf, crate::sandbox::fsview::Kind)>,
    /// How much of the mount API the kernel has (`mountfd::MountApi`):
    /// which mounts the executor makes itself, by descriptor (`premount`).
    pub(crate) mount_api: crate::sandbox::mountfd::MountApi,
}

/// Reads the process environment once, so everything after works on a value.
pub fn env_snapshot() -> BTreeMap<OsString, OsString> {
    std::env::vars_os().collect()
}

/// The launching user's account.
pub struct Account {
    pub uid: u32,
    pub gid: u32,
    pub name: String,
    pub home: PathBuf,
    pub shell: PathBuf,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    #[error("cannot find uid {0} in the password database; create the user (useradd) or run as a user that exists")]
    NoAccount(u32),
    #[error("cannot read the current directory: {0}; cd into your project first")]
    Cwd(std::io::Error),
}

pub fn account() -> Result<Account, ContextError> {
    let uid = nix::unistd::getuid();
    let user = nix::unistd::User::from_uid(uid).ok().flatten().ok_or(ContextError::NoAccount(uid.as_raw()))?;
    Ok(Account { uid: uid.as_raw(), gid: nix::unistd::getgid().as_raw(), name: user.name, home: user.dir, shell: user.shell })
}

pub fn cwd() -> Result<PathBuf, ContextError> {
    let cwd = std::env::current_dir().map_err(ContextError::Cwd)?;
    crate::sandbox::fsview::real_path(&cwd).map_err(ContextError::Cwd)
}

/// A session id: unique enough to name a session's files and logs.
pub(crate) fn new_session_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{:x}-{:x}", std::process::id(), now & 0xffff_ffff_ffff)
}

/// The forge CLIs whose credential helpers the curated git config may name.
pub(crate) fn forge_helpers() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for (host, bin) in [("https://github.com", "gh"), ("https://gitlab.com", "glab")] {
        if let Ok(p) = crate::sysbin::find(bin, "") {
            out.push((host.to_string(), p));
        }
    }
    out
}

/// The launcher's own directory, where the installer puts the shims.
pub fn shim_dir() -> Option<PathBuf> {
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    exe.parent().map(Path::to_path_buf)
}

/// Whether a fresh procfs can be mounted: not when /proc has paths masked by
/// a container runtime (bwrap's mount would be refused).
pub fn fresh_proc_possible() -> bool {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mountinfo") else { return true };
    !mounts.lines().any(|l| {
        let mut f = l.split(' ');
        let mount_point = f.nth(4).unwrap_or("");
        mount_point.starts_with("/proc/") && mount_point != "/proc/sys/fs/binfmt_misc"
    })
}
