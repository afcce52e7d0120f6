//! Errors of feature/template packaging and publishing; each names the
//! file or value at fault and the fix.

use crate::oci::OciError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },

    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },

    #[error("{} has no devcontainer-{kind}.json and no sub-folder with one; point --source at a collection's src/ folder or at one {kind} folder", path.display())]
    NothingToPackage { path: PathBuf, kind: &'static str },

    #[error("{} is not valid JSON: {why}; fix the file", path.display())]
    InvalidJson { path: PathBuf, why: String },

    #[error("{}: {why}", path.display())]
    InvalidMetadata { path: PathBuf, why: String },

    #[error("{} is a symbolic link or special file; a published {kind} may only contain regular files and folders — replace it with a copy", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },

    #[error("no static binaries for the feature in {searched}; build them with `bash scripts/build-static.sh` (x86_64 and aarch64), or pass `--bin-dir ARCH=DIR` for each architecture")]
    NoBinaries { searched: String },

    #[error("the feature ships for {}, but only {found} binaries were found in {searched}; build the missing {missing} ones with `bash scripts/build-static.sh` (after `bash scripts/deps.sh`), or pass `--bin-dir ARCH=DIR` for each architecture to ship on purpose", crate::arch::Arch::all_names())]
    MissingArch { found: String, missing: String, searched: String },

    #[error("`{spec}` is not ARCH=DIR with ARCH one of x86_64, aarch64: pass e.g. `--bin-dir aarch64=target/static/aarch64`")]
    BadBinDir { spec: String },

    #[error("{} has no `{name}` for {arch}; build the static binaries with `bash scripts/build-static.sh` (it prints their folder)", dir.display())]
    MissingBinary { dir: PathBuf, arch: String, name: String },

    #[error("{} is not a static executable ({why}); the feature runs it in any base image, so build it with `bash scripts/build-static.sh`", path.display())]
    NotStatic { path: PathBuf, why: String },

    #[error("the feature's version {feature} differs from agent-sandbox {crate_version} (Cargo.toml); set \"version\" in {} to {crate_version}", path.display())]
    VersionMismatch { path: PathBuf, feature: String, crate_version: String },

    #[error("invalid --feature `{input}`: give the feature's repository without a tag, e.g. `ghcr.io/OWNER/agent-sandbox/agent-sandbox`")]
    BadFeatureRef { input: String },

    #[error("{} already exists and is not empty; remove it or pass another --output", path.display())]
    OutputNotEmpty { path: PathBuf },

    #[error(transparent)]
    Oci(#[from] OciError),
}
