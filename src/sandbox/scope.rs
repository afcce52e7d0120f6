//! What a session can do at a path, derived from the same mount list the
//! launcher hands to bwrap: the last mount covering a path decides.

use crate::sandbox::mounts::Mount;
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Not visible inside the session.
    Hidden,
    /// Visible but empty (a masked file or a fresh directory).
    Empty,
    /// Readable, not writable.
    Read,
    /// Readable and writable; changes reach the outside.
    Write,
    /// Writable, but only inside the session (a private tmpfs).
    Private,
}

impl Access {
    pub fn readable(self) -> bool {
        matches!(self, Access::Read | Access::Write | Access::Private)
    }
    /// Writable from inside in a way that persists outside the session.
    pub fn writable_outside(self) -> bool {
        self == Access::Write
    }
    /// Writable from inside at all (even if only in a private tmpfs).
    pub fn writable(self) -> bool {
        matches!(self, Access::Write | Access::Private)
    }
}

/// The access a session has at `path` (absolute, normalised).
pub fn access(mounts: &[Mount], path: &Path) -> Access {
    let Some(m) = mounts.iter().rev().find(|m| path.starts_with(m.dest())) else {
        return Access::Hidden;
    };
    let exact = path == m.dest().as_path();
    match m {
        Mount::RoBind { .. } | Mount::Proc { .. } | Mount::Data { .. } => Access::Read,
        Mount::Dev { .. } => Access::Read,
        Mount::Bind { .. } | Mount::DevBind { .. } => Access::Write,
        Mount::Tmpfs { .. } => {
            if exact {
                Access::Private
            } else {
                // Below a fresh tmpfs nothing of the outside exists; the
                // session may create files there, private to it.
                Access::Hidden
            }
        }
        Mount::TmpfsRo { .. } | Mount::Mask { .. } => {
            if exact {
                Access::Empty
            } else {
                Access::Hidden
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn last_covering_mount_wins() {
        let mounts = vec![
            Mount::RoBind { src: p("/"), dest: p("/"), optional: false },
            Mount::Tmpfs { dest: p("/home/u") },
            Mount::Bind { src: p("/home/u/.claude"), dest: p("/home/u/.claude"), optional: true },
            Mount::Mask { dest: p("/etc/shadow"), data: 3 },
            Mount::Bind { src: p("/w/p"), dest: p("/w/p"), optional: false },
        ];
        assert_eq!(access(&mounts, &p("/usr/bin/ls")), Access::Read);
        assert_eq!(access(&mounts, &p("/home/u")), Access::Private);
        assert_eq!(access(&mounts, &p("/home/u/.ssh/id_rsa")), Access::Hidden);
        assert_eq!(access(&mounts, &p("/home/u/.claude/settings.json")), Access::Write);
        assert_eq!(access(&mounts, &p("/etc/shadow")), Access::Empty);
        assert_eq!(access(&mounts, &p("/w/p/src/main.rs")), Access::Write);
        assert_eq!(access(&mounts, &p("/w/other")), Access::Read);
        // Path prefix is by component, not by string.
        assert_eq!(access(&mounts, &p("/home/user2")), Access::Read);
    }
}
