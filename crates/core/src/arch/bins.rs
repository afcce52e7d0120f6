//! Where the static binaries (`agent-sandbox`, `sandbox-install`) of each
//! architecture are. Explicit `--bin-dir ARCH=DIR` flags win; otherwise the
//! layout `scripts/build-static.sh` writes, `ROOT/static/ARCH/`, found
//! 1. from `AGENT_SANDBOX_STATIC_DIR`, the folder of this machine's
//!    binaries (what the script prints); when that folder is named by this
//!    machine's architecture, its siblings named by the other
//!    architectures hold theirs;
//! 2. else under `${CARGO_TARGET_DIR:-target}/static/` (relative to the
//!    current directory, the repository root).
//!
//! The search is a value ([`Search`]); [`found`] asks a probe which
//! candidate folders hold both binaries, so the rule is tested without files.

use super::Arch;
use crate::env_vars::{CARGO_TARGET_DIR, STATIC_DIR};
use std::path::{Path, PathBuf};

/// The static binaries, each architecture's in its own folder.
pub const BINARIES: [&str; 2] = ["agent-sandbox", "sandbox-install"];

/// One architecture's folder of static binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinDir {
    pub arch: Arch,
    pub dir: PathBuf,
}

impl BinDir {
    /// `ARCH=DIR` with ARCH a `uname -m` name (x86_64, aarch64).
    pub fn parse(spec: &str) -> Option<BinDir> {
        let (arch, dir) = spec.split_once('=')?;
        let arch = Arch::from_name(arch)?;
        (!dir.is_empty()).then(|| BinDir { arch, dir: PathBuf::from(dir) })
    }
}

/// Where to look when no folder is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// `AGENT_SANDBOX_STATIC_DIR`.
    pub static_dir: Option<PathBuf>,
    /// `CARGO_TARGET_DIR`, else `target`.
    pub target_dir: PathBuf,
    /// The architecture of this program.
    pub native: Arch,
}

impl Search {
    pub fn from_env() -> Search {
        Search {
            static_dir: std::env::var_os(STATIC_DIR).filter(|v| !v.is_empty()).map(PathBuf::from),
            target_dir: std::env::var_os(CARGO_TARGET_DIR).filter(|v| !v.is_empty()).map_or_else(|| PathBuf::from("target"), PathBuf::from),
            native: Arch::native(),
        }
    }

    /// The folder each architecture's binaries would be in, if any.
    pub fn candidates(&self) -> Vec<BinDir> {
        let Some(dir) = &self.static_dir else {
            let root = self.target_dir.join("static");
            return Arch::ALL.iter().map(|a| BinDir { arch: *a, dir: root.join(a.name()) }).collect();
        };
        let laid_out = dir.file_name().is_some_and(|n| n == self.native.name());
        Arch::ALL
            .iter()
            .filter_map(|a| match (*a == self.native, dir.parent()) {
                (true, _) => Some(BinDir { arch: *a, dir: dir.clone() }),
                (false, Some(parent)) if laid_out => Some(BinDir { arch: *a, dir: parent.join(a.name()) }),
                _ => None,
            })
            .collect()
    }

    /// Where the search looked, for messages.
    pub fn describe(&self) -> String {
        match &self.static_dir {
            Some(d) => format!("{STATIC_DIR}={} (and its sibling folders named by architecture)", d.display()),
            None => format!("{}/static/ARCH ({STATIC_DIR} is not set)", self.target_dir.display()),
        }
    }
}

/// The candidate folders that hold both binaries, by `has`.
pub fn found(search: &Search, has: impl Fn(&Path) -> bool) -> Vec<BinDir> {
    search.candidates().into_iter().filter(|b| has(&b.dir)).collect()
}

/// Whether `dir` holds both binaries (as files; checked when read).
pub fn has_binaries(dir: &Path) -> bool {
    BINARIES.iter().all(|b| dir.join(b).is_file())
}

/// The architectures of `dirs`, for messages: `x86_64, aarch64` or `none`.
pub fn names(dirs: &[BinDir]) -> String {
    if dirs.is_empty() {
        return "none".into();
    }
    dirs.iter().map(|d| d.arch.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(static_dir: Option<&str>) -> Search {
        Search { static_dir: static_dir.map(PathBuf::from), target_dir: "target".into(), native: Arch::X86_64 }
    }

    fn bd(arch: Arch, dir: &str) -> BinDir {
        BinDir { arch, dir: dir.into() }
    }

    #[test]
    fn without_the_variable_the_target_folder_is_searched() {
        assert_eq!(search(None).candidates(), [bd(Arch::X86_64, "target/static/x86_64"), bd(Arch::Aarch64, "target/static/aarch64")]);
        let s = Search { target_dir: "/b/t".into(), ..search(None) };
        assert_eq!(found(&s, |d| d == Path::new("/b/t/static/aarch64")), [bd(Arch::Aarch64, "/b/t/static/aarch64")]);
    }

    #[test]
    fn the_variable_names_this_machines_folder_and_its_laid_out_siblings() {
        assert_eq!(search(Some("/r/static/x86_64")).candidates(), [bd(Arch::X86_64, "/r/static/x86_64"), bd(Arch::Aarch64, "/r/static/aarch64")]);
        // An aarch64 machine: its own folder, the x86_64 sibling.
        let arm = Search { native: Arch::Aarch64, ..search(Some("/r/static/aarch64")) };
        assert_eq!(arm.candidates(), [bd(Arch::X86_64, "/r/static/x86_64"), bd(Arch::Aarch64, "/r/static/aarch64")]);
        // Any other folder (e.g. cargo's own release folder): that machine's only.
        assert_eq!(search(Some("/t/x86_64-unknown-linux-musl/release")).candidates(), [bd(Arch::X86_64, "/t/x86_64-unknown-linux-musl/release")]);
        let only_native = found(&search(Some("/r/static/x86_64")), |d| d.ends_with("x86_64"));
        assert_eq!(only_native, [bd(Arch::X86_64, "/r/static/x86_64")]);
    }

    #[test]
    fn bin_dir_specs() {
        assert_eq!(BinDir::parse("aarch64=/b"), Some(bd(Arch::Aarch64, "/b")));
        assert_eq!(BinDir::parse("x86_64=rel/dir"), Some(bd(Arch::X86_64, "rel/dir")));
        for bad in ["/b", "arm=/b", "arm64=/b", "x86_64=", "=x"] {
            assert_eq!(BinDir::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_for_messages() {
        assert_eq!(names(&[]), "none");
        assert_eq!(names(&[bd(Arch::X86_64, "/a"), bd(Arch::Aarch64, "/b")]), "x86_64, aarch64");
        assert_eq!(search(None).describe(), "target/static/ARCH (AGENT_SANDBOX_STATIC_DIR is not set)");
    }
}
