//! Where the installer puts things: every path it may write, as constants,
//! and the mapping of those (logical, absolute) paths into a staging root
//! (`--root DIR`). Not responsible for deciding what goes there.
//!
//! Read by the installer, by doctor (which checks the installation) and by
//! the sandbox (which recognises its own profile snippet); it sits below
//! all three so none of them imports another for a path.

use std::path::{Component, Path, PathBuf};

/// The product's own directory (root-owned, 0755).
pub const LIB_DIR: &str = "/usr/local/lib/agent-sandbox";
/// The binaries and the shims. Login and interactive shells get it first on
/// PATH (see `PROFILE_SCRIPT`); the launcher's entry-point guard treats the
/// directory of its own executable as the shim directory.
pub const SHIM_DIR: &str = "/usr/local/lib/agent-sandbox/bin";
/// The launcher binary (a copy, root-owned 0755).
pub const BINARY: &str = "/usr/local/lib/agent-sandbox/bin/agent-sandbox";
/// The installer itself, kept so `sandbox-install --uninstall` works later.
pub const INSTALLER: &str = "/usr/local/lib/agent-sandbox/bin/sandbox-install";
/// Links for commands that get no shell start-up files (`docker exec CTR
/// claude`): the runtime's default PATH is
/// `/usr/local/sbin:/usr/local/bin:...`, so a link here wins over whatever
/// `npm install -g` writes into /usr/local/bin.
pub const EXEC_LINK_DIR: &str = "/usr/local/sbin";

/// Login shells (sh, bash, dash) run /etc/profile.d/*.sh; the snippet puts
/// the shim directory first and system directories before everything else.
pub const PROFILE_DIR: &str = "/etc/profile.d";
pub const PROFILE_SCRIPT: &str = "/etc/profile.d/agent-sandbox.sh";
/// Interactive non-login bash reads this; a managed block sources the snippet.
pub const BASH_RC: &str = "/etc/bash.bashrc";
/// Interactive zsh reads this (only touched when it exists).
pub const ZSH_RC: &str = "/etc/zsh/zshrc";

pub const CONFIG_DIR: &str = "/etc/agent-sandbox";
pub const CONFIG_FILE: &str = crate::config::DEFAULT_CONFIG_PATH;

/// Claude Code's managed settings (highest precedence, Linux location).
pub const CLAUDE_DIR: &str = "/etc/claude-code";
pub const CLAUDE_MANAGED: &str = "/etc/claude-code/managed-settings.json";
/// Codex's system configuration layer.
pub const CODEX_DIR: &str = "/etc/codex";
pub const CODEX_SYSTEM: &str = "/etc/codex/config.toml";

/// The installer's own state: the manifest and backups of replaced files.
pub const STATE_DIR: &str = "/var/lib/agent-sandbox";
pub const MANIFEST: &str = "/var/lib/agent-sandbox/install-manifest.json";
pub const BACKUP_DIR: &str = "/var/lib/agent-sandbox/backup";

/// The commands placed in the shim directory and linked from EXEC_LINK_DIR.
pub const LINKED_COMMANDS: &[&str] = &["agent-sandbox", "sandbox-install"];

/// System directories: these must come before any venv or user-writable
/// directory on PATH (only the shim directory goes before them).
pub const SYSTEM_PATH_DIRS: &[&str] = &["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/games", "/usr/games"];

/// Where the backup of `path` is kept.
pub fn backup_for(path: &Path) -> PathBuf {
    Path::new(BACKUP_DIR).join(relative(path))
}

/// `path` without its leading `/` (and without `.`/`..` games).
fn relative(path: &Path) -> PathBuf {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// Maps logical paths (as seen by the installed system) onto the file
/// system the installer writes: `/` itself, or a staging directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub root: PathBuf,
}

impl Layout {
    pub fn new(root: Option<&Path>) -> Layout {
        Layout { root: root.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/")) }
    }

    pub fn staged(&self) -> bool {
        self.root != Path::new("/")
    }

    /// The real location of logical `path`.
    pub fn real(&self, path: &Path) -> PathBuf {
        if self.staged() {
            self.root.join(relative(path))
        } else {
            path.to_path_buf()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_maps_under_the_root() {
        let l = Layout::new(Some(Path::new("/stage")));
        assert_eq!(l.real(Path::new(BINARY)), Path::new("/stage/usr/local/lib/agent-sandbox/bin/agent-sandbox"));
        assert_eq!(l.real(Path::new("/etc/../etc/x")), Path::new("/stage/etc/etc/x"));
        assert_eq!(Layout::new(None).real(Path::new("/etc/x")), Path::new("/etc/x"));
        assert_eq!(backup_for(Path::new("/etc/bash.bashrc")), Path::new("/var/lib/agent-sandbox/backup/etc/bash.bashrc"));
    }
}
