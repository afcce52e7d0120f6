//! What packaging adds to a feature: the static binaries its install.sh
//! runs (`bin/<arch>/sandbox-install`, `bin/<arch>/agent-sandbox`), and the
//! CLI's `currentId` rule for features with `legacyIds`.
//!
//! By default every architecture the project ships for (x86_64, aarch64)
//! is bundled, from the folders `crate::arch::bins` finds; a feature
//! missing one is refused unless the folders are named explicitly.
//! Binaries are checked before they are bundled: an ELF file for the
//! stated architecture with no program interpreter (static), so the
//! feature runs in any base image.

use super::error::PublishError;
use super::json::{self, Json};
use super::source::Item;
use crate::arch::bins::{self, BinDir, Search};
use crate::arch::{check_static_elf, Arch};
use crate::oci::archive::FileEntry;

/// The binaries bundled per architecture (install.sh runs sandbox-install).
const BUNDLED: &[&str] = &["sandbox-install", "agent-sandbox"];
/// This project's feature: its version must be the crate's.
const PROJECT_FEATURE_ID: &str = "agent-sandbox";

/// `--bin-dir ARCH=DIR`.
pub fn parse_bin_dir(spec: &str) -> Result<BinDir, PublishError> {
    BinDir::parse(spec).ok_or_else(|| PublishError::BadBinDir { spec: spec.to_owned() })
}

/// A checked static binary for one architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    pub arch: Arch,
    pub name: String,
    pub data: Vec<u8>,
}

/// Reads every bundled binary from each folder.
pub fn read_binaries(dirs: &[BinDir]) -> Result<Vec<Binary>, PublishError> {
    let mut out = Vec::new();
    for d in dirs {
        for name in BUNDLED {
            let path = d.dir.join(name);
            if !path.is_file() {
                return Err(PublishError::MissingBinary { dir: d.dir.clone(), arch: d.arch.name().into(), name: (*name).into() });
            }
            let data = std::fs::read(&path).map_err(|source| PublishError::Read { path: path.clone(), source })?;
            check_static_elf(&data, d.arch).map_err(|why| PublishError::NotStatic { path: path.clone(), why })?;
            out.push(Binary { arch: d.arch, name: (*name).into(), data });
        }
    }
    Ok(out)
}

/// Adds the binaries under `bin/<arch>/` and applies the `currentId` rule
/// (a feature with `legacyIds` gets `currentId` = its id, and its metadata
/// file is rewritten, as `devcontainer features package` does).
pub fn prepare(item: &mut Item, binaries: &[Binary]) {
    for b in binaries {
        item.put(FileEntry::new(format!("bin/{}/{}", b.arch.name(), b.name), b.data.clone(), true));
    }
    let has_legacy = matches!(item.metadata.get("legacyIds"), Some(Json::Array(a)) if !a.is_empty());
    if has_legacy {
        let id = item.id.clone();
        json::set(&mut item.metadata, "currentId", Json::String(id));
        let file = item.kind.metadata_file();
        item.put(FileEntry::new(file, json::pretty(&item.metadata), false));
    }
}

/// This project's feature must carry the crate's version: its binaries are
/// this version.
pub(crate) fn check_project_version(item: &Item) -> Result<(), PublishError> {
    let crate_version = env!("CARGO_PKG_VERSION");
    if item.id == PROJECT_FEATURE_ID && item.version.to_string() != crate_version {
        return Err(PublishError::VersionMismatch { path: item.metadata_path(), feature: item.version.to_string(), crate_version: crate_version.into() });
    }
    Ok(())
}

/// The folders to bundle: the explicit ones (any subset of architectures,
/// on purpose), else what `search` finds (`has`: whether a folder holds
/// both binaries), which must be every architecture the feature ships for:
/// a feature missing one fails to install on those machines.
pub fn default_bin_dirs(explicit: Vec<BinDir>, search: &Search, has: impl Fn(&std::path::Path) -> bool) -> Result<Vec<BinDir>, PublishError> {
    if !explicit.is_empty() {
        return Ok(explicit);
    }
    let found = bins::found(search, has);
    if found.is_empty() {
        return Err(PublishError::NoBinaries { searched: search.describe() });
    }
    let missing: Vec<&str> = Arch::ALL.iter().filter(|a| !found.iter().any(|d| d.arch == **a)).map(|a| a.name()).collect();
    if !missing.is_empty() {
        return Err(PublishError::MissingArch { found: bins::names(&found), missing: missing.join(", "), searched: search.describe() });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn search() -> Search {
        Search { static_dir: None, target_dir: "t".into(), native: Arch::X86_64 }
    }

    #[test]
    fn defaults_bundle_every_architecture_or_refuse() {
        let both = default_bin_dirs(vec![], &search(), |_| true).unwrap();
        assert_eq!(both, [BinDir { arch: Arch::X86_64, dir: "t/static/x86_64".into() }, BinDir { arch: Arch::Aarch64, dir: "t/static/aarch64".into() }]);
        let one = default_bin_dirs(vec![], &search(), |d| d.ends_with("x86_64")).unwrap_err().to_string();
        assert_eq!(
            one,
            "the feature ships for x86_64 and aarch64, but only x86_64 binaries were found in t/static/ARCH (AGENT_SANDBOX_STATIC_DIR is not set); \
             build the missing aarch64 ones with `bash scripts/build-static.sh` (after `bash scripts/deps.sh`), or pass `--bin-dir ARCH=DIR` for each architecture to ship on purpose"
        );
        let none = default_bin_dirs(vec![], &search(), |_| false).unwrap_err().to_string();
        assert!(none.starts_with("no static binaries for the feature in t/static/ARCH"), "{none}");
    }

    #[test]
    fn explicit_folders_are_taken_as_given() {
        let x = vec![BinDir { arch: Arch::Aarch64, dir: PathBuf::from("/a") }];
        assert_eq!(default_bin_dirs(x.clone(), &search(), |_: &Path| false).unwrap(), x);
        assert_eq!(parse_bin_dir("aarch64=/a").unwrap(), x[0]);
        assert!(parse_bin_dir("arm64=/a").unwrap_err().to_string().contains("ARCH one of x86_64, aarch64"));
    }
}
