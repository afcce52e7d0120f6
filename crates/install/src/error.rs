//! Why an installation could not be planned or applied. Each message says
//! what failed, why, and what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    #[error("sandbox-install must run as root to install system-wide (it is running as uid {0}); run it with sudo or as root in your Dockerfile, or use --dry-run / --root DIR")]
    NotRoot(u32),
    #[error("cannot find the agent-sandbox binary to install at {path}: {why}; put it next to sandbox-install or pass --binary PATH")]
    NoBinary { path: PathBuf, why: String },
    #[error("user `{name}` (from {from}) does not exist in {passwd}; create it first (useradd -m {name}) or pass --user with an existing user")]
    NoUser { name: String, from: &'static str, passwd: PathBuf },
    #[error("{path} is a {what} where sandbox-install needs to put a {want}; move it away and run sandbox-install again")]
    InTheWay { path: PathBuf, what: &'static str, want: &'static str },
    #[error(
        "the install manifest {path} cannot be read ({why}); sandbox-install does not know what it installed before. Fix or remove the file and run it again"
    )]
    Manifest { path: PathBuf, why: String },
    #[error("{missing} must be installed but no supported package manager was found on {os} (apt, dnf or apk); install them yourself and run sandbox-install --no-deps")]
    NoPackageManager { missing: String, os: String },
    #[error("installing packages with {manager}: {detail}; check the network and the package sources, or install bubblewrap and passt yourself and run sandbox-install --no-deps")]
    Packages { manager: &'static str, detail: String },
    #[error("{what} {path}: {source}")]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error("the generated configuration is invalid: {0}; check the --allow-ip / --local-port / --callback-port values")]
    Seed(String),
}

impl InstallError {
    pub fn io<'a>(what: &'static str, path: &'a std::path::Path) -> impl FnOnce(std::io::Error) -> InstallError + 'a {
        move |source| InstallError::Io { what, path: path.to_path_buf(), source }
    }
}
