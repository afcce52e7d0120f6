//! What packaging adds to a feature: the static binaries its install.sh
//! runs (`bin/<arch>/sandbox-install`, `bin/<arch>/agent-sandbox`), and the
//! CLI's `currentId` rule for features with `legacyIds`.
//!
//! Binaries are checked before they are bundled: an ELF file for the
//! stated architecture with no program interpreter (static), so the
//! feature runs in any base image.

use super::error::PublishError;
use super::json::Json;
use super::source::Item;
use crate::oci::archive::FileEntry;
use std::path::{Path, PathBuf};

/// Architectures a feature can carry binaries for (`uname -m` names).
pub const ARCHES: &[&str] = &["x86_64", "aarch64"];
/// The binaries bundled per architecture.
pub const BUNDLED: &[&str] = &["sandbox-install", "agent-sandbox"];
/// This project's feature: its version must be the crate's.
pub const PROJECT_FEATURE_ID: &str = "agent-sandbox";

/// `--bin-dir ARCH=DIR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinDir {
    pub arch: String,
    pub dir: PathBuf,
}

impl BinDir {
    pub fn parse(spec: &str) -> Result<Self, PublishError> {
        let bad = || PublishError::BadBinDir { spec: spec.to_owned() };
        let (arch, dir) = spec.split_once('=').ok_or_else(bad)?;
        if !ARCHES.contains(&arch) || dir.is_empty() {
            return Err(bad());
        }
        Ok(BinDir { arch: arch.to_owned(), dir: PathBuf::from(dir) })
    }
}

/// A checked static binary for one architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    pub arch: String,
    pub name: String,
    pub data: Vec<u8>,
}

/// Reads every bundled binary from each `--bin-dir`.
pub fn read_binaries(dirs: &[BinDir]) -> Result<Vec<Binary>, PublishError> {
    let mut out = Vec::new();
    for d in dirs {
        for name in BUNDLED {
            let path = d.dir.join(name);
            if !path.is_file() {
                return Err(PublishError::MissingBinary { dir: d.dir.clone(), arch: d.arch.clone(), name: (*name).into() });
            }
            let data = std::fs::read(&path).map_err(|source| PublishError::Read { path: path.clone(), source })?;
            check_static_elf(&data, &d.arch).map_err(|why| PublishError::NotStatic { path: path.clone(), why })?;
            out.push(Binary { arch: d.arch.clone(), name: (*name).into(), data });
        }
    }
    Ok(out)
}

/// Whether `data` is a 64-bit little-endian ELF executable for `arch` with
/// no `PT_INTERP` program header (no dynamic loader needed).
pub fn check_static_elf(data: &[u8], arch: &str) -> Result<(), String> {
    let u16_at = |o: usize| data.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| data.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let u64_at = |o: usize| data.get(o..o + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
    if data.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let machine = match u16_at(0x12) {
        Some(62) => "x86_64",
        Some(183) => "aarch64",
        _ => "another architecture",
    };
    if machine != arch {
        return Err(format!("built for {machine}, bundled as {arch}"));
    }
    let (phoff, phentsize, phnum) = match (u64_at(0x20), u16_at(0x36), u16_at(0x38)) {
        (Some(o), Some(s), Some(n)) => (o as usize, s as usize, n as usize),
        _ => return Err("truncated ELF header".into()),
    };
    for i in 0..phnum {
        match u32_at(phoff + i * phentsize) {
            Some(3) => return Err("it needs a dynamic loader (PT_INTERP)".into()),
            Some(_) => {}
            None => return Err("truncated program headers".into()),
        }
    }
    Ok(())
}

/// Adds the binaries under `bin/<arch>/` and applies the `currentId` rule
/// (a feature with `legacyIds` gets `currentId` = its id, and its metadata
/// file is rewritten, as `devcontainer features package` does).
pub fn prepare(item: &mut Item, binaries: &[Binary]) {
    for b in binaries {
        item.put(FileEntry::new(format!("bin/{}/{}", b.arch, b.name), b.data.clone(), true));
    }
    let has_legacy = matches!(item.metadata.get("legacyIds"), Some(Json::Array(a)) if !a.is_empty());
    if has_legacy {
        let id = item.id.clone();
        item.metadata.set("currentId", Json::String(id));
        let file = item.kind.metadata_file();
        item.put(FileEntry::new(file, item.metadata.pretty(), false));
    }
}

/// This project's feature must carry the crate's version: its binaries are
/// this version.
pub fn check_project_version(item: &Item) -> Result<(), PublishError> {
    let crate_version = env!("CARGO_PKG_VERSION");
    if item.id == PROJECT_FEATURE_ID && item.version.to_string() != crate_version {
        return Err(PublishError::VersionMismatch {
            path: item.metadata_path(),
            feature: item.version.to_string(),
            crate_version: crate_version.into(),
        });
    }
    Ok(())
}

/// The bin dirs to use: the explicit ones, else `AGENT_SANDBOX_STATIC_DIR`
/// for this machine's architecture.
pub fn default_bin_dirs(explicit: Vec<BinDir>, static_dir: Option<&Path>) -> Result<Vec<BinDir>, PublishError> {
    if !explicit.is_empty() {
        return Ok(explicit);
    }
    match static_dir {
        Some(dir) => Ok(vec![BinDir { arch: std::env::consts::ARCH.to_owned(), dir: dir.to_owned() }]),
        None => Err(PublishError::NoBinaries),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(machine: u16, interp: bool) -> Vec<u8> {
        let mut d = vec![0u8; 64 + 56 * 2];
        d[..6].copy_from_slice(b"\x7fELF\x02\x01");
        d[0x12..0x14].copy_from_slice(&machine.to_le_bytes());
        d[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        d[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        d[0x38..0x3a].copy_from_slice(&2u16.to_le_bytes());
        d[64..68].copy_from_slice(&1u32.to_le_bytes());
        d[120..124].copy_from_slice(&(if interp { 3u32 } else { 1 }).to_le_bytes());
        d
    }

    #[test]
    fn static_elf_check() {
        assert_eq!(check_static_elf(&elf(62, false), "x86_64"), Ok(()));
        assert_eq!(check_static_elf(&elf(183, false), "aarch64"), Ok(()));
        assert!(check_static_elf(&elf(62, true), "x86_64").unwrap_err().contains("dynamic loader"));
        assert!(check_static_elf(&elf(62, false), "aarch64").unwrap_err().contains("built for x86_64"));
        assert!(check_static_elf(b"#!/bin/sh\n", "x86_64").is_err());
        assert!(check_static_elf(&elf(62, false)[..70], "x86_64").is_err());
    }

    #[test]
    fn bin_dir_specs() {
        assert_eq!(BinDir::parse("aarch64=/b").unwrap(), BinDir { arch: "aarch64".into(), dir: "/b".into() });
        for bad in ["/b", "arm=/b", "x86_64=", "=x"] {
            assert!(BinDir::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn this_binary_is_checked_against_its_own_arch() {
        // The test binary itself is an ELF for this machine (maybe dynamic).
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let r = check_static_elf(&me, std::env::consts::ARCH);
        assert!(r.is_ok() || r.unwrap_err().contains("dynamic loader"));
    }
}
