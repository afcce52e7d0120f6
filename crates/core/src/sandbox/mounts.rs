//! The session's file-system view as an ordered list of mounts. bwrap
//! applies them in order, so a later mount covers an earlier one; the same
//! list answers `scope` questions.

use std::ffi::OsString;
use std::path::PathBuf;

/// The host's device nodes bwrap's `--dev` binds into the fresh /dev.
pub(crate) const DEV_HOST_NODES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];
/// What else bwrap's `--dev` makes there: the session's own ptys, shm, the
/// standard links.
pub(crate) const DEV_MADE: [&str; 9] = ["ptmx", "pts", "shm", "fd", "stdin", "stdout", "stderr", "core", "console"];

/// Why a mount is in the plan: the defence it implements, or what it gives
/// the session. Decided with the mount, so nothing later has to guess a
/// mount's purpose from its destination (verify's weakenings remove a
/// defence by it; review finds the shared tool dirs by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    // The defences.
    /// The host's tree, read-only.
    ReadOnlyRoot,
    /// A private /dev: the host's device nodes out of reach.
    Devices,
    /// A fresh /proc for the session's pid namespace.
    PidNamespace,
    /// Kernel interfaces under /proc kept read-only (sysctls, sysrq).
    KernelInterfaces,
    /// A scanned root session's view of root-only entries (masks, the
    /// trees of /sys it keeps).
    RootOnly,
    /// A private /tmp and /var/tmp.
    Tmp,
    /// The home replaced by an empty tmpfs.
    Home,
    /// Credentials and privilege settings masked: dotfiles (.netrc, X
    /// authority), /etc's shadow and sudoers files, the host's SSH keys,
    /// the credential corners of shared tool dirs.
    Credentials,
    /// Per-user runtime dirs (IDE, agent, desktop sockets) and mounted
    /// secrets hidden.
    RunUser,
    /// Container engines' sockets and runtime dirs hidden.
    Engines,
    /// The workspace's siblings hidden (without peers).
    Siblings,
    /// What runs later outside the sandbox read-only in the workspace (the
    /// devcontainer definition, git config and hooks).
    Protections,
    /// The workspace's git directories pinned onto themselves, so their
    /// names cannot be swapped.
    GitDirPins,
    /// The entry points' names masked in writable PATH dirs, those dirs
    /// and the vendors' install dirs pinned.
    EntryPoints,
    /// This workspace's private copies of the tool dirs.
    ToolDirs,
    /// Trust stores and the sandbox's own state read-only in shared tool
    /// dirs.
    TrustStores,
    /// The curated git config.
    Git,
    /// The session marker (no sandbox inside a sandbox).
    Recursion,
    // What the session is given.
    /// The workspace, writable.
    Workspace,
    /// The agent's own state, bound back.
    AgentState,
    /// Shared skills and caches of the home.
    SharedHome,
    /// The user's own tool dirs (`shareToolDirs`).
    SharedToolDirs,
    /// A vendor's installed command, bound back read-only.
    InstalledCommand,
    /// Forge token stores, read-only.
    Forge,
    /// Sibling checkouts, read-only (peers).
    Peers,
    /// `allowWrite` paths.
    AllowWrite,
    /// `allowDevice` nodes.
    AllowDevice,
    /// The GPU's device nodes (`gpu`).
    Gpu,
    /// The container's own /proc, where a fresh one is refused.
    ContainerProc,
    /// What sessions need from the runtime dirs (resolv.conf's target).
    RuntimeKept,
    /// The jail's resolv.conf.
    JailDns,
    /// The jail's gate executable.
    Gate,
    /// verify's probe executable.
    Probe,
    /// A mount a weakening took out, kept so bwrap still consumes its
    /// descriptor.
    Retired,
}

/// A mount of the plan with what it is there for: most serve one role;
/// the runtime dirs' tmpfs hides per-user sockets and engines' alike.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Planned {
    #[serde(flatten)]
    pub mount: Mount,
    pub roles: &'static [Role],
}

impl Planned {
    pub fn new(mount: Mount, roles: &'static [Role]) -> Planned {
        Planned { mount, roles }
    }
    pub fn serves(&self, r: Role) -> bool {
        self.roles.contains(&r)
    }
}

impl std::ops::Deref for Planned {
    type Target = Mount;
    fn deref(&self) -> &Mount {
        &self.mount
    }
}

impl std::borrow::Borrow<Mount> for Planned {
    fn borrow(&self) -> &Mount {
        &self.mount
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Mount {
    /// Read-only bind; `optional` ones are skipped by bwrap when missing.
    RoBind { src: PathBuf, dest: PathBuf, optional: bool },
    /// Read-write bind.
    Bind { src: PathBuf, dest: PathBuf, optional: bool },
    /// Device bind (read-write, device access kept).
    DevBind { src: PathBuf, dest: PathBuf, optional: bool },
    /// A fresh empty writable tmpfs.
    Tmpfs { dest: PathBuf },
    /// A fresh empty tmpfs, then remounted read-only.
    TmpfsRo { dest: PathBuf },
    /// A minimal /dev (null, zero, tty, urandom, pts...).
    Dev { dest: PathBuf },
    /// A fresh procfs for the session's pid namespace.
    Proc { dest: PathBuf },
    /// The container's own procfs, bound writable with its submounts (the
    /// runtime's masks and read-only paths come along, locked): where the
    /// container's /proc is masked the kernel refuses a fresh one in a
    /// user namespace. It shows the container's processes and numbers them
    /// as the container does (docs/defences.md, "Under a masked /proc").
    ContainerProc { dest: PathBuf },
    /// An empty read-only regular file over `dest`, from the (empty) plan
    /// data number `data`. Not /dev/null: bwrap binds with `nodev`, where a
    /// device node cannot even be opened.
    Mask { dest: PathBuf, data: usize },
    /// Read-only file with contents from plan data number `data`.
    Data { dest: PathBuf, data: usize },
    /// Hidden by the executor before bwrap starts, in the mount namespace
    /// where the root-only masks go (`sandbox::hostmask`): an empty
    /// read-only tmpfs over a directory, the empty file over anything else,
    /// as it is then (gone: skipped); bwrap's bind of `/` carries it in.
    /// One mount call each, where bwrap's `--tmpfs` + `--remount-ro` would
    /// read the whole mount table again for each. Only where the executor
    /// has a namespace of its own anyway (a jailed or a root launch).
    EarlyMask { dest: PathBuf },
    /// The file or directory the executor opened for plan data number
    /// `data` (without following anything), bound on `dest`: what is
    /// mounted is what was checked, whatever happens to the name meanwhile.
    BindFd { dest: PathBuf, data: usize, writable: bool },
}

impl Mount {
    pub fn dest(&self) -> &PathBuf {
        match self {
            Mount::RoBind { dest, .. }
            | Mount::Bind { dest, .. }
            | Mount::DevBind { dest, .. }
            | Mount::Tmpfs { dest }
            | Mount::TmpfsRo { dest }
            | Mount::EarlyMask { dest }
            | Mount::Dev { dest }
            | Mount::Proc { dest }
            | Mount::ContainerProc { dest }
            | Mount::Mask { dest, .. }
            | Mount::Data { dest, .. }
            | Mount::BindFd { dest, .. } => dest,
        }
    }

    /// The bwrap arguments for this mount; `data_fd` maps a data index to
    /// the descriptor the executor will place it at.
    pub(crate) fn to_args(&self, data_fd: impl Fn(usize) -> i32) -> Vec<OsString> {
        fn v(parts: &[&std::ffi::OsStr]) -> Vec<OsString> {
            parts.iter().map(|p| p.to_os_string()).collect()
        }
        match self {
            Mount::RoBind { src, dest, optional } => v(&[if *optional { "--ro-bind-try" } else { "--ro-bind" }.as_ref(), src.as_os_str(), dest.as_os_str()]),
            Mount::Bind { src, dest, optional } => v(&[if *optional { "--bind-try" } else { "--bind" }.as_ref(), src.as_os_str(), dest.as_os_str()]),
            Mount::DevBind { src, dest, optional } => v(&[if *optional { "--dev-bind-try" } else { "--dev-bind" }.as_ref(), src.as_os_str(), dest.as_os_str()]),
            Mount::Tmpfs { dest } => v(&["--tmpfs".as_ref(), dest.as_os_str()]),
            Mount::TmpfsRo { dest } => v(&["--tmpfs".as_ref(), dest.as_os_str(), "--remount-ro".as_ref(), dest.as_os_str()]),
            Mount::EarlyMask { .. } => Vec::new(),
            Mount::Dev { dest } => v(&["--dev".as_ref(), dest.as_os_str()]),
            Mount::Proc { dest } => v(&["--proc".as_ref(), dest.as_os_str()]),
            // Writable: the session writes its own nested user namespaces'
            // id maps through it (`unshare -r`); the kernel's interfaces
            // in it are covered read-only after it.
            Mount::ContainerProc { dest } => v(&["--bind".as_ref(), dest.as_os_str(), dest.as_os_str()]),
            Mount::Mask { dest, data } | Mount::Data { dest, data } => {
                let fd = data_fd(*data).to_string();
                v(&["--ro-bind-data".as_ref(), fd.as_ref(), dest.as_os_str()])
            }
            Mount::BindFd { dest, data, writable } => {
                let fd = data_fd(*data).to_string();
                v(&[if *writable { "--bind-fd" } else { "--ro-bind-fd" }.as_ref(), fd.as_ref(), dest.as_os_str()])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_serves_the_roles_it_was_given_and_prints_them() {
        let m = Planned::new(Mount::Tmpfs { dest: "/run".into() }, &[Role::RunUser, Role::Engines]);
        assert!(m.serves(Role::RunUser) && m.serves(Role::Engines) && !m.serves(Role::Tmp));
        assert_eq!(serde_json::to_value(&m).ok(), Some(serde_json::json!({"type": "tmpfs", "dest": "/run", "roles": ["run-user", "engines"]})));
    }
}
