//! Finding the security-relevant executables the launcher runs (bwrap, pasta,
//! git) in fixed root-owned system directories — never through `PATH`, which
//! a session or a project venv may be able to write.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The only directories helpers are taken from, in order.
pub const SYSTEM_DIRS: &[&str] = &["/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin"];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SysbinError {
    #[error("`{name}` was not found in {dirs}; {fix}")]
    Missing { name: String, dirs: String, fix: String },
    #[error("refusing to run {path}: {why}; make it root-owned and not writable by others (chown root:root, chmod 755)")]
    Untrusted { path: PathBuf, why: String },
}

/// Why a file or directory is not trusted, or None when it is: it must be
/// owned by root and not writable by group or others.
pub fn untrusted_reason(uid: u32, mode: u32) -> Option<String> {
    if uid != 0 {
        return Some(format!("it is owned by uid {uid}, not root"));
    }
    if mode & 0o022 != 0 {
        return Some(format!("it is writable by group or others (mode {:o})", mode & 0o7777));
    }
    None
}

fn check_trusted(path: &Path) -> Result<(), SysbinError> {
    // Every component from the file up to / must be trusted, or a writable
    // parent could swap the file after the check.
    let mut cur = Some(path);
    while let Some(p) = cur {
        let meta = std::fs::metadata(p).map_err(|e| SysbinError::Untrusted { path: path.to_path_buf(), why: format!("cannot stat {}: {e}", p.display()) })?;
        if let Some(why) = untrusted_reason(meta.uid(), meta.mode()) {
            return Err(SysbinError::Untrusted { path: path.to_path_buf(), why: format!("{} {why}", p.display()) });
        }
        cur = p.parent();
    }
    Ok(())
}

/// Finds `name` in the system directories; `fix` tells how to install it.
pub fn find(name: &str, fix: &str) -> Result<PathBuf, SysbinError> {
    find_in(name, SYSTEM_DIRS, fix)
}

/// Like [`find`], over explicit directories (tests point this at a temp dir
/// to prove the refusal).
pub fn find_in(name: &str, dirs: &[&str], fix: &str) -> Result<PathBuf, SysbinError> {
    for dir in dirs {
        let candidate = Path::new(dir).join(name);
        // Resolve symlinks (e.g. /bin -> /usr/bin) so the trust check
        // covers the file that will really run.
        let Ok(real) = crate::sandbox::fsview::real_path(&candidate) else { continue };
        let Ok(meta) = std::fs::metadata(&real) else { continue };
        if meta.is_file() {
            check_trusted(&real)?;
            if meta.mode() & 0o111 == 0 {
                return Err(SysbinError::Untrusted { path: real, why: format!("it is not executable; {fix}") });
            }
            return Ok(real);
        }
    }
    Err(SysbinError::Missing { name: name.to_string(), dirs: dirs.join(", "), fix: fix.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_rules() {
        assert_eq!(untrusted_reason(0, 0o100755), None);
        assert!(untrusted_reason(1000, 0o100755).unwrap().contains("uid 1000"));
        assert!(untrusted_reason(0, 0o100775).unwrap().contains("writable"));
        assert!(untrusted_reason(0, 0o100757).unwrap().contains("writable"));
    }

    #[test]
    fn missing_names_fix() {
        let err = find_in("bwrap", &["/nonexistent-dir"], crate::fixes::BWRAP).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("apt-get install bubblewrap"), "{msg}");
        assert!(msg.contains("/nonexistent-dir"), "{msg}");
    }

    #[test]
    fn finds_sh() {
        let p = find("sh", "install a shell").unwrap();
        assert!(p.is_absolute());
    }
}
