//! Reproducible archives: a tar built from an in-memory file list, where
//! the same list always gives the same bytes — entries sorted by path,
//! parent directories present, one fixed mtime, owner 0:0 without names,
//! modes normalised to 0755 (directories, executables) or 0644. Optionally
//! gzip-compressed with a fixed header (no name, no time), for image layers.
//!
//! Names are written `./path` (directories `./dir/`), as node-tar writes
//! them for the Dev Containers CLI.

use std::collections::BTreeMap;
use std::io::Write as _;

/// A file in an archive. `path` is relative, `/`-separated, without `.` or
/// `..` components.
#[derive(Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub path: String,
    pub data: Vec<u8>,
    pub executable: bool,
}

impl std::fmt::Debug for FileEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileEntry({}, {} bytes{})", self.path, self.data.len(), if self.executable { ", +x" } else { "" })
    }
}

impl FileEntry {
    pub fn new(path: impl Into<String>, data: impl Into<Vec<u8>>, executable: bool) -> Self {
        FileEntry { path: path.into(), data: data.into(), executable }
    }
}

/// Whether `path` is a clean relative path (what [`tar`] accepts).
fn clean_path(path: &str) -> bool {
    !path.is_empty() && !path.starts_with('/') && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The tar bytes of `files` (see the module comment). `mtime` is seconds
/// since the epoch for every entry. Duplicate paths: the last one wins.
pub fn tar(files: &[FileEntry], mtime: u64) -> std::io::Result<Vec<u8>> {
    let mut entries: BTreeMap<String, Option<&FileEntry>> = BTreeMap::new();
    for f in files {
        if !clean_path(&f.path) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("archive path `{}` is not a clean relative path", f.path)));
        }
        let parts: Vec<&str> = f.path.split('/').collect();
        for depth in 1..parts.len() {
            entries.entry(format!("{}/", parts[..depth].join("/"))).or_insert(None);
        }
        entries.insert(f.path.clone(), Some(f));
    }
    let mut b = tar::Builder::new(Vec::new());
    b.append(&header("./", tar::EntryType::Directory, 0o755, 0, mtime)?, std::io::empty())?;
    for (path, file) in entries {
        let name = format!("./{path}");
        match file {
            None => b.append(&header(&name, tar::EntryType::Directory, 0o755, 0, mtime)?, std::io::empty())?,
            Some(f) => {
                let mode = if f.executable { 0o755 } else { 0o644 };
                let h = header(&name, tar::EntryType::Regular, mode, f.data.len() as u64, mtime)?;
                b.append(&h, f.data.as_slice())?;
            }
        }
    }
    b.into_inner()
}

/// A ustar header with `name` written verbatim (the tar crate would drop
/// the leading `./`): up to 100 bytes in `name`, longer paths split at a
/// `/` into `prefix` (155) + `name` (100).
fn header(name: &str, kind: tar::EntryType, mode: u32, size: u64, mtime: u64) -> std::io::Result<tar::Header> {
    let mut h = tar::Header::new_ustar();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(mtime);
    let bytes = name.as_bytes();
    // A directory's trailing `/` stays with the name part.
    let stem = name.strip_suffix('/').unwrap_or(name).as_bytes();
    let (prefix, rest) = if bytes.len() <= 100 {
        (&bytes[..0], bytes)
    } else {
        let split = (1..stem.len().saturating_sub(1))
            .rev()
            .find(|&i| stem[i] == b'/' && i <= 155 && bytes.len() - i - 1 <= 100)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("archive path `{name}` is too long for a tar header")))?;
        (&bytes[..split], &bytes[split + 1..])
    };
    let ustar = h.as_ustar_mut().ok_or_else(|| std::io::Error::other("not a ustar header"))?;
    ustar.name[..rest.len()].copy_from_slice(rest);
    ustar.prefix[..prefix.len()].copy_from_slice(prefix);
    h.set_cksum();
    Ok(h)
}

/// Gzip with a fixed header (no file name, mtime 0) and a fixed level, so
/// equal input gives equal output.
pub fn gzip(data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc = flate2::GzBuilder::new().mtime(0).operating_system(255).write(Vec::new(), flate2::Compression::new(6));
    enc.write_all(data)?;
    enc.finish()
}

/// The paths in a tar, with their modes (for tests and comparisons).
pub fn list(data: &[u8]) -> std::io::Result<Vec<(String, u32)>> {
    let mut a = tar::Archive::new(data);
    let mut out = Vec::new();
    for e in a.entries()? {
        let e = e?;
        let path = String::from_utf8_lossy(&e.path_bytes()).into_owned();
        out.push((path, e.header().mode()?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<FileEntry> {
        vec![FileEntry::new("install.sh", "#!/bin/sh\n", true), FileEntry::new("bin/x86_64/tool", vec![1, 2, 3], true), FileEntry::new("a.json", "{}", false)]
    }

    #[test]
    fn layout_is_sorted_with_directories_and_fixed_modes() {
        let t = tar(&files(), 0).unwrap();
        assert_eq!(
            list(&t).unwrap(),
            vec![
                ("./".into(), 0o755),
                ("./a.json".into(), 0o644),
                ("./bin/".into(), 0o755),
                ("./bin/x86_64/".into(), 0o755),
                ("./bin/x86_64/tool".into(), 0o755),
                ("./install.sh".into(), 0o755),
            ]
        );
    }

    #[test]
    fn same_files_in_any_order_give_the_same_bytes() {
        let mut rev = files();
        rev.reverse();
        assert_eq!(tar(&files(), 7).unwrap(), tar(&rev, 7).unwrap());
        assert_ne!(tar(&files(), 7).unwrap(), tar(&files(), 8).unwrap());
        assert_eq!(gzip(b"abc").unwrap(), gzip(b"abc").unwrap());
    }

    #[test]
    fn headers_carry_no_owner_names_or_times() {
        let t = tar(&files(), 1234).unwrap();
        let mut a = tar::Archive::new(t.as_slice());
        for e in a.entries().unwrap() {
            let e = e.unwrap();
            let h = e.header();
            assert_eq!((h.uid().unwrap(), h.gid().unwrap(), h.mtime().unwrap()), (0, 0, 1234));
            assert_eq!(h.username().unwrap(), Some(""));
        }
    }

    #[test]
    fn long_paths_use_the_ustar_prefix() {
        let long = format!("{}/{}/{}", "d".repeat(60), "e".repeat(60), "f".repeat(90));
        let t = tar(&[FileEntry::new(long.clone(), "x", false)], 0).unwrap();
        assert_eq!(list(&t).unwrap().last().unwrap().0, format!("./{long}"));
        assert!(tar(&[FileEntry::new("x".repeat(300), "", false)], 0).is_err());
    }

    #[test]
    fn unclean_paths_are_refused() {
        for bad in ["/etc/x", "../x", "a/./b", "a//b", ""] {
            assert!(tar(&[FileEntry::new(bad, "", false)], 0).is_err(), "{bad}");
        }
    }
}
