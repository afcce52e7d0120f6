//! The PATH the user's shells will have (`sandbox::shellrc`, read from their
//! start-up files, never run): sessions guard the entry points in those
//! directories too. A line whose effect on PATH cannot be read (`eval`,
//! command substitution, a variable never assigned there, a function named
//! like an entry point) leaves a directory the guard does not know: said
//! here, with the fix. Pure over what was read.

use super::{Finding, Severity};
use crate::sandbox::shellrc::ShellPath;

/// How many unreadable lines are named one by one.
const SHOWN: usize = 5;

pub(crate) fn findings(s: &ShellPath) -> Vec<Finding> {
    if s.unfollowed.is_empty() {
        return vec![Finding {
            check: "shell",
            id: "shell-path-ok",
            severity: Severity::Ok,
            message: format!(
                "the shells' start-up files put {} directories on PATH and alias {} entry points; sessions guard the entry points where they could write",
                s.dirs.len(),
                s.aliases.len()
            ),
            fix: None,
        }];
    }
    let mut lines: Vec<String> = s.unfollowed.iter().take(SHOWN).map(|(o, what)| format!("{o}: {what}")).collect();
    if s.unfollowed.len() > SHOWN {
        lines.push(format!("and {} more", s.unfollowed.len() - SHOWN));
    }
    vec![Finding {
        check: "shell",
        id: "shell-path-unreadable",
        severity: Severity::Info,
        message: format!(
            "sessions cannot tell what these start-up file lines put on PATH, so a directory they add is guarded only when it is also on the session's PATH: {}",
            lines.join("; ")
        ),
        fix: Some("where such a line adds a directory a session can write (the workspace, ~/.claude, shared ~/.local/share or ~/.cache, an allowWrite path), add it with a plain line instead, e.g. export PATH=\"/home/USER/.local/share/pnpm:$PATH\" (or keep it out of those places)".into()),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::shellrc::parse;
    use std::path::{Path, PathBuf};

    #[test]
    fn readable_start_up_files_are_ok_and_unreadable_lines_are_named() {
        let read = |text: &str| parse(&[(PathBuf::from("/home/u/.bashrc"), text.to_string())], Path::new("/home/u"), &|_| None);
        let ok = findings(&read("export PATH=\"$HOME/.local/share/pnpm:$PATH\"\nalias claude=~/.claude/local/claude\n"));
        assert_eq!((ok[0].id, ok[0].severity), ("shell-path-ok", Severity::Ok));
        assert!(ok[0].message.contains("put 1 directories on PATH and alias 1 entry points"), "{}", ok[0].message);
        let f = findings(&read("eval \"$(mise activate bash)\"\nPATH=$(brew --prefix)/bin:$PATH\n"));
        assert_eq!((f[0].id, f[0].severity), ("shell-path-unreadable", Severity::Info));
        assert!(
            f[0].message.contains("/home/u/.bashrc:1: `eval") && f[0].message.contains("/home/u/.bashrc:2: PATH is set from a command's output"),
            "{}",
            f[0].message
        );
        assert!(f[0].fix.as_deref().unwrap().contains("export PATH="));
    }
}
