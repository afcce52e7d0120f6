//! The session's file-system view as an ordered list of mounts. bwrap
//! applies them in order, so a later mount covers an earlier one; the same
//! list answers `scope` questions.

use std::ffi::OsString;
use std::path::PathBuf;

/// The host's device nodes bwrap's `--dev` binds into the fresh /dev.
pub const DEV_HOST_NODES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];
/// What else bwrap's `--dev` makes there: the session's own ptys, shm, the
/// standard links.
pub const DEV_MADE: [&str; 9] = ["ptmx", "pts", "shm", "fd", "stdin", "stdout", "stderr", "core", "console"];

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
    pub fn to_args(&self, data_fd: impl Fn(usize) -> i32) -> Vec<OsString> {
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
