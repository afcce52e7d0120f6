//! Observes what an image plan needs (the only reads of the machine before
//! a plan): the engines in system directories, the definition folder, each
//! platform's static binaries, an emulator for platforms that are not this
//! machine's, the provenance, and a private working folder.
//!
//! Not here: deciding (`plan`) or running anything (`exec`).

use super::engine::Engine;
use super::error::ImageError;
use super::labels::{self, Provenance};
use super::plan::{self, BuildRequest, Inputs};
use crate::arch::bins::{self, BinDir, Search};
use crate::arch::emulation::{self, Registration};
use crate::arch::Arch;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `SOURCE_DATE_EPOCH`: the `created` label's time when set.
use crate::env_vars::SOURCE_DATE_EPOCH;

/// A private working folder, removed when dropped.
#[derive(Debug)]
pub struct WorkDir(PathBuf);

impl WorkDir {
    pub fn new() -> Result<WorkDir, ImageError> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("agent-sandbox-image-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|source| ImageError::Write { path: dir.clone(), source })?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(|source| ImageError::Write { path: dir.clone(), source })?;
        Ok(WorkDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where the inputs come from (flags; empty/`None` means the default).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub definition: PathBuf,
    /// `--bin-dir`: `ARCH=DIR`, or a plain `DIR` for this machine's binaries.
    pub bin_dirs: Vec<String>,
    pub revision: Option<String>,
}

/// `--bin-dir ARCH=DIR` or `--bin-dir DIR` (this machine's architecture).
pub fn parse_bin_dir(spec: &str) -> Result<BinDir, ImageError> {
    if let Some(b) = BinDir::parse(spec) {
        return Ok(b);
    }
    let names_arch = spec.split_once('=').is_some_and(|(a, _)| !a.contains('/'));
    if spec.is_empty() || names_arch {
        return Err(ImageError::BadBinDir(spec.to_owned()));
    }
    Ok(BinDir { arch: Arch::native(), dir: PathBuf::from(spec) })
}

/// Observes what the plan needs.
pub fn gather(req: &BuildRequest, src: &Sources, work: &Path) -> Result<Inputs, ImageError> {
    let mut found = BTreeMap::new();
    for e in Engine::ALL {
        match crate::sysbin::find(e.name(), "") {
            Ok(p) => {
                found.insert(e, p);
            }
            Err(crate::sysbin::SysbinError::Missing { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let tools = super::engine::choose(req.engine, &found, &crate::sysbin::SYSTEM_DIRS.join(", "))?;
    if !src.definition.join("Containerfile").is_file() {
        return Err(ImageError::NoDefinition { path: src.definition.clone() });
    }
    let mut definition_files = Vec::new();
    list_files(&src.definition, Path::new(""), &mut definition_files)?;
    definition_files.sort();
    let native = Arch::native();
    let platforms = if req.platforms.is_empty() { vec![native] } else { req.platforms.clone() };
    let explicit = src.bin_dirs.iter().map(|s| parse_bin_dir(s)).collect::<Result<Vec<_>, _>>()?;
    let mut bin_dirs = Vec::new();
    for arch in &platforms {
        bin_dirs.push(bin_dir(*arch, &explicit)?);
        if *arch != native {
            check_emulation(*arch, native)?;
        }
    }
    if let Some(ca) = &req.extra_ca {
        let meta = std::fs::metadata(ca).map_err(|e| ImageError::BadExtraCa { path: ca.clone(), why: e.to_string() })?;
        if !meta.is_file() || meta.len() == 0 {
            return Err(ImageError::BadExtraCa { path: ca.clone(), why: "not a non-empty file".into() });
        }
    }
    let revision = match &src.revision {
        Some(r) => r.clone(),
        None => git_revision(&src.definition),
    };
    let created = match std::env::var(SOURCE_DATE_EPOCH).ok().and_then(|s| s.trim().parse::<u64>().ok()) {
        Some(t) => t,
        None => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    };
    let provenance = Provenance {
        source: env!("CARGO_PKG_REPOSITORY").to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        revision,
        created: labels::rfc3339(created),
    };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let container = format!("agent-sandbox-verify-{}-{nanos:x}", std::process::id());
    Ok(Inputs { tools, provenance, definition: src.definition.clone(), definition_files, bin_dirs, work: work.to_owned(), container, native })
}

fn list_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<(), ImageError> {
    let dir = root.join(rel);
    let entries = std::fs::read_dir(&dir).map_err(|source| ImageError::Read { path: dir.clone(), source })?;
    for entry in entries {
        let entry = entry.map_err(|source| ImageError::Read { path: dir.clone(), source })?;
        let kind = entry.file_type().map_err(|source| ImageError::Read { path: entry.path(), source })?;
        let rel = rel.join(entry.file_name());
        if kind.is_dir() {
            list_files(root, &rel, out)?;
        } else if kind.is_file() || (kind.is_symlink() && root.join(&rel).is_file()) {
            // A link is copied as what it names (image/entrypoint.sh is the
            // feature's own script).
            out.push(rel);
        }
    }
    Ok(())
}

/// `arch`'s binaries: an explicit `--bin-dir`, else the folders
/// `scripts/build-static.sh` writes (`crate::arch::bins`), else, for this
/// machine's architecture, this program's own folder when it holds both.
fn bin_dir(arch: Arch, explicit: &[BinDir]) -> Result<BinDir, ImageError> {
    let search = Search::from_env();
    let dir = match explicit.iter().find(|b| b.arch == arch) {
        Some(b) => b.dir.clone(),
        None => match bins::found(&search, bins::has_binaries).into_iter().find(|b| b.arch == arch) {
            Some(b) => b.dir,
            None => {
                let own = std::env::current_exe().ok().and_then(|p| p.parent().map(Path::to_path_buf));
                match own.filter(|d| arch == Arch::native() && plan::BINARIES.iter().all(|b| check_binary(d, b, arch).is_ok())) {
                    Some(d) => d,
                    None => return Err(ImageError::NoBinaries { arch: arch.name(), searched: search.describe() }),
                }
            }
        },
    };
    for b in plan::BINARIES {
        check_binary(&dir, b, arch)?;
    }
    Ok(BinDir { arch, dir })
}

fn check_binary(dir: &Path, name: &'static str, arch: Arch) -> Result<(), ImageError> {
    let path = dir.join(name);
    if !path.is_file() {
        return Err(ImageError::MissingBinary { dir: dir.to_owned(), name });
    }
    let data = std::fs::read(&path).map_err(|source| ImageError::Read { path: path.clone(), source })?;
    crate::arch::check_static_elf(&data, arch).map_err(|why| ImageError::NotStatic { path, why })
}

/// Another architecture's build runs its RUN steps through an emulator:
/// without one registered (usable in containers), the build would fail
/// halfway with "exec format error".
fn check_emulation(arch: Arch, native: Arch) -> Result<(), ImageError> {
    let why = match emulation::handler_for(arch) {
        Registration::Ready(_) => return Ok(()),
        Registration::NotInContainers(h) => {
            format!("its binfmt_misc handler {} lacks the F flag, so it cannot start {arch} programs inside containers", h.name)
        }
        Registration::Missing => format!("no binfmt_misc handler runs {arch} executables"),
        Registration::Unknown(why) => why,
    };
    Err(ImageError::NoEmulation { platform: arch.platform(), machine: native.platform(), why })
}

/// The git commit of the definition's checkout (`-dirty` with uncommitted
/// changes), or `unknown` outside a checkout.
fn git_revision(dir: &Path) -> String {
    let Ok(git) = crate::sysbin::find("git", "") else { return "unknown".into() };
    let run = |args: &[&str]| Command::new(&git).arg("-C").arg(dir).args(args).stderr(Stdio::null()).output().ok().filter(|o| o.status.success());
    let Some(head) = run(&["rev-parse", "HEAD"]) else { return "unknown".into() };
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let dirty = run(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|o| !o.stdout.is_empty());
    if dirty {
        format!("{head}-dirty")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_dir_flags() {
        assert_eq!(parse_bin_dir("aarch64=/a").unwrap(), BinDir { arch: Arch::Aarch64, dir: "/a".into() });
        assert_eq!(parse_bin_dir("/static").unwrap(), BinDir { arch: Arch::native(), dir: "/static".into() });
        assert_eq!(parse_bin_dir("/odd=name/dir").unwrap().dir, PathBuf::from("/odd=name/dir"), "a path with `=` is a path");
        for bad in ["", "arm64=/a", "x86_64="] {
            assert!(matches!(parse_bin_dir(bad), Err(ImageError::BadBinDir(_))), "{bad}");
        }
    }
}
