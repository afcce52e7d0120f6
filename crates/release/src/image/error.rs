//! Errors of the reference-image build and publish; each names what failed,
//! why, and what to do.

use crate::oci::OciError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    #[error("no container engine found in {dirs}; install one (Debian/Ubuntu: apt-get install podman) or put it in a root-owned system directory")]
    NoEngine { dirs: String },

    #[error("--engine {engine} was asked for but `{engine}` is not in {dirs}; install it or pick one that is here ({found})")]
    EngineMissing { engine: &'static str, dirs: String, found: String },

    #[error("buildah builds the image but cannot start the verify container with /dev/net/tun; install podman beside it (it shares buildah's image store), or use --engine podman")]
    NoRunner,

    #[error(transparent)]
    Untrusted(#[from] crate::sysbin::SysbinError),

    #[error("unknown engine `{0}`: use podman, docker or buildah")]
    UnknownEngine(String),

    #[error("invalid --build-arg `{0}`: write NAME=VALUE with NAME of letters, digits and `_`")]
    BadBuildArg(String),

    #[error("--build-arg {0}=... is set by this command; use {1} instead")]
    ReservedBuildArg(String, &'static str),

    #[error("invalid image name `{0}`: give NAME[:TAG] without spaces (e.g. localhost/agent-sandbox:dev)")]
    BadTag(String),

    #[error("{} is not an image definition (no Containerfile there); run this in the agent-sandbox repository root or pass --definition DIR", path.display())]
    NoDefinition { path: PathBuf },

    #[error("no static {arch} binaries for the image in {searched}; build them with `bash scripts/build-static.sh` (x86_64 and aarch64), or pass --bin-dir {arch}=DIR")]
    NoBinaries { arch: &'static str, searched: String },

    #[error("{} has no `{name}`; build the static binaries with `bash scripts/build-static.sh` and pass the folder it prints as --bin-dir", dir.display())]
    MissingBinary { dir: PathBuf, name: &'static str },

    #[error("{} is not a static executable for its platform ({why}); the image runs it on Debian 13 as is, so build it with `bash scripts/build-static.sh`", path.display())]
    NotStatic { path: PathBuf, why: String },

    #[error("`{0}` is not ARCH=DIR or DIR (this machine's binaries) with ARCH one of x86_64, aarch64: pass e.g. `--bin-dir aarch64=target/static/aarch64`")]
    BadBinDir(String),

    #[error("unknown platform `{0}` in --platform: the image is built for linux/amd64 and linux/arm64 (comma-separated)")]
    UnknownPlatform(String),

    #[error("{platform} builds under emulation on this {machine} machine, but {why}; install qemu-user-static and register it with binfmt_misc, with the F flag (`bash scripts/binfmt.sh` in the agent-sandbox repository), or leave {platform} out of --platform")]
    NoEmulation { platform: String, machine: String, why: String },

    #[error("{platforms} can only run under emulation on this {machine} machine, where sessions cannot start (qemu-user creates no namespaces and loads no seccomp filters), so the verify battery did not prove them: only doctor and the installed files were checked. Publish from a machine of each architecture, pass --allow-emulated to push them checked this far, or leave them out with --platform {machine}")]
    EmulatedUnverified { platforms: String, machine: String },

    #[error("the engine built {tag} for {found}, not {expected} as asked (--platform); update the engine, or build on a {expected} machine")]
    WrongArchitecture { tag: String, expected: String, found: String },

    #[error("--extra-ca {}: {why}; give a readable PEM file (e.g. /etc/ssl/certs/ca-certificates.crt)", path.display())]
    BadExtraCa { path: PathBuf, why: String },

    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },

    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },

    #[error("cannot run `{program}`: {source}")]
    Spawn { program: String, source: std::io::Error },

    #[error("{step} failed ({status}): {detail}")]
    Step { step: String, status: String, detail: String },

    #[error("the engine's answer to {step} is not what was expected: {why}")]
    Unexpected { step: String, why: String },

    #[error("the built image {tag} lacks labels it was built with: {missing}; the engine dropped them — update the engine or report it")]
    LabelsMissing { tag: String, missing: String },

    #[error("verify failed in the built image {tag} ({summary}); publish refuses such an image. Fix the failing checks (see docs/verify.md) and build again:\n{details}")]
    VerifyFailed { tag: String, summary: String, details: String },

    #[error("the exported image at {} is not a usable OCI layout: {why}; export it again", path.display())]
    BadLayout { path: PathBuf, why: String },

    #[error(transparent)]
    Oci(#[from] OciError),
}
