//! Locating the real vendor binary behind a shim: the first candidate on
//! `PATH` (then the vendor's own install locations) that is not one of our
//! shims, i.e. does not resolve to the agent-sandbox executable itself.

use super::{Agent, AgentError};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What the search looks at; built from the real process by the launcher,
/// or by hand in tests.
#[derive(Debug, Clone)]
pub struct VendorSearch {
    pub path_dirs: Vec<PathBuf>,
    pub home: PathBuf,
    /// (device, inode) of our own executable: anything resolving to it is a
    /// shim, never the vendor.
    pub(crate) own_exe: Option<(u64, u64)>,
}

fn is_executable_file(p: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(p).ok()?;
    (meta.is_file() && meta.mode() & 0o111 != 0).then(|| (meta.dev(), meta.ino()))
}

/// The real binary for `agent`, resolved through symlinks so it stays
/// reachable inside the session even when the link lives in a masked
/// directory such as `~/.local/bin`.
pub fn locate_vendor(agent: Agent, search: &VendorSearch) -> Result<PathBuf, AgentError> {
    let from_path = search.path_dirs.iter().map(|d| d.join(agent.binary()));
    let extra = agent.extra_locations().iter().map(|rel| search.home.join(rel));
    for candidate in from_path.chain(extra) {
        let Some(id) = is_executable_file(&candidate) else { continue };
        if Some(id) == search.own_exe {
            continue;
        }
        if is_shim_script(&candidate) {
            continue;
        }
        return Ok(std::fs::canonicalize(&candidate).unwrap_or(candidate));
    }
    let searched: Vec<String> = search.path_dirs.iter().map(|d| d.display().to_string()).collect();
    Err(AgentError::NotInstalled {
        agent: agent.name(),
        binary: agent.binary(),
        searched: if searched.is_empty() { "PATH (empty)".into() } else { searched.join(":") },
        install: agent.install_hint(),
    })
}

/// Shims written by the installer as small scripts carry this marker.
const SHIM_MARKER: &str = "agent-sandbox shim";

fn is_shim_script(p: &Path) -> bool {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(p) else { return false };
    let mut head = [0u8; 256];
    let n = f.read(&mut head).unwrap_or(0);
    head[..n].starts_with(b"#!") && String::from_utf8_lossy(&head[..n]).contains(SHIM_MARKER)
}
