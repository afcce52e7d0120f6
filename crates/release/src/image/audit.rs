//! The built image's ownership audit: nothing a root process may run or
//! read as configuration — the system trees, the npm global tree and the
//! agents' CLIs in it, /etc, /opt — may be owned by anyone but root or be
//! writable by anyone else. npm, running as root, keeps the owner recorded
//! in a package's tarball (often uid 1000), and the image's user already
//! has uid 1000: that user could append to code root runs. `image build`
//! fails when the audit finds any such file.
//!
//! The command runs in the check container (GNU find, as root); reading its
//! output is pure.

use serde::Serialize;

/// The trees audited (those that exist; links such as /bin -> usr/bin are
/// covered by their targets).
const TREES: &[&str] = &["/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/// The non-root user's own trees inside those (the project venv, never on
/// root's PATH): not audited.
const USER_TREES: &[&str] = &[super::labels::VENV];
/// Printed after a complete run.
pub(super) const DONE: &str = "audit-complete";
/// How many offenders are named in messages.
const SHOWN: usize = 10;

/// The audit's shell script: one `UID GID MODE PATH` line per file or
/// directory (links are never written through their own mode) owned by
/// someone other than root, writable by others, or writable by a group
/// other than root's.
pub(super) fn script() -> String {
    let prune = USER_TREES.iter().map(|t| format!("-path {t}")).collect::<Vec<_>>().join(" -o ");
    format!(
        "set --; for d in {trees}; do [ -d \"$d\" ] && [ ! -L \"$d\" ] && set -- \"$@\" \"$d\"; done; \
         find \"$@\" -xdev \\( {prune} \\) -prune -o ! -type l \\( ! -uid 0 -o -perm -0002 -o \\( -perm -0020 ! -gid 0 \\) \\) -printf '%U %G %m %p\\n' \
         && echo {DONE}",
        trees = TREES.join(" "),
    )
}

/// The check container's command (run as root).
pub(super) fn command() -> Vec<String> {
    vec!["sh".into(), "-c".into(), script()]
}

/// What the audit found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditOutcome {
    /// How many files and directories are not root's alone.
    pub offenders: usize,
    /// The first few, `PATH (uid U, gid G, mode M)`.
    pub examples: Vec<String>,
    /// The audit did not run to its end (then it does not pass).
    pub error: Option<String>,
}

impl AuditOutcome {
    pub fn ok(&self) -> bool {
        self.offenders == 0 && self.error.is_none()
    }

    pub fn summary(&self) -> String {
        match &self.error {
            Some(e) => format!("ownership audit did not complete: {e}"),
            None if self.offenders == 0 => "ownership audit: everything root may run is root's alone".into(),
            None => format!("ownership audit: {} files or directories root may run are not root's alone", self.offenders),
        }
    }

    /// The lines explaining a failed audit.
    pub fn problems(&self) -> Vec<String> {
        if self.ok() {
            return Vec::new();
        }
        let mut out = vec![format!(
            "{}; a user could change code or configuration root runs. Make them root's (chown -R root:root, chmod go-w) in the step that wrote them: npm running as root keeps the owner a package's tarball records",
            self.summary()
        )];
        out.extend(self.examples.iter().map(|e| format!("  {e}")));
        if self.offenders > self.examples.len() {
            out.push(format!("  ... and {} more", self.offenders - self.examples.len()));
        }
        out
    }
}

/// Reads the audit's output.
pub(super) fn parse(stdout: &str, stderr: &str) -> AuditOutcome {
    let mut lines: Vec<&str> = stdout.lines().collect();
    let complete = lines.last() == Some(&DONE);
    if complete {
        lines.pop();
    }
    let offenders: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let mut f = l.splitn(4, ' ');
            let (uid, gid, mode, path) = (f.next()?, f.next()?, f.next()?, f.next()?);
            Some(format!("{path} (uid {uid}, gid {gid}, mode {mode})"))
        })
        .collect();
    let error = (!complete).then(|| {
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        if tail.is_empty() {
            "find stopped without an error message".to_string()
        } else {
            tail.join(" | ")
        }
    });
    AuditOutcome { offenders: offenders.len(), examples: offenders.into_iter().take(SHOWN).collect(), error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_image_passes() {
        let o = parse(&format!("{DONE}\n"), "");
        assert!(o.ok(), "{o:?}");
        assert!(o.problems().is_empty());
    }

    #[test]
    fn files_of_another_owner_fail_and_are_named() {
        let mut out = String::new();
        for i in 0..12 {
            out += &format!("1000 1000 644 /usr/local/lib/node_modules/@mariozechner/pi-coding-agent/node_modules/x/f{i}.js\n");
        }
        out += &format!("0 0 777 /usr/local/share/x\n{DONE}\n");
        let o = parse(&out, "");
        assert_eq!((o.offenders, o.examples.len(), o.ok()), (13, 10, false));
        assert_eq!(o.examples[0], "/usr/local/lib/node_modules/@mariozechner/pi-coding-agent/node_modules/x/f0.js (uid 1000, gid 1000, mode 644)");
        let p = o.problems();
        assert!(p[0].starts_with("ownership audit: 13 files or directories root may run are not root's alone") && p[0].contains("chown -R root:root"), "{p:?}");
        assert_eq!(p.last().unwrap(), "  ... and 3 more");
    }

    #[test]
    fn an_audit_that_stopped_does_not_pass() {
        let o = parse("", "find: '/usr': Permission denied\n");
        assert!(!o.ok());
        assert_eq!(o.error.as_deref(), Some("find: '/usr': Permission denied"));
    }

    /// The script, run by a real sh and GNU find over a tree made here.
    #[test]
    fn the_script_finds_what_is_not_roots_alone() {
        assert!(nix::unistd::geteuid().is_root(), "this test sets owners: run it as root");
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let mk = |p: &str, mode: u32, uid: u32, gid: u32| {
            let p = r.join(p);
            if p.extension().is_some() {
                std::fs::write(&p, "x").unwrap();
            } else {
                std::fs::create_dir_all(&p).unwrap();
            }
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
            std::os::unix::fs::chown(&p, Some(uid), Some(gid)).unwrap();
        };
        mk("usr", 0o755, 0, 0);
        mk("usr/ok.js", 0o644, 0, 0);
        mk("usr/theirs.js", 0o644, 1000, 1000);
        mk("usr/world.js", 0o666, 0, 0);
        mk("usr/group.js", 0o664, 0, 50);
        mk("usr/rootgroup.js", 0o664, 0, 0);
        std::os::unix::fs::symlink("/nonexistent", r.join("usr/link")).unwrap();
        mk("opt", 0o755, 0, 0);
        mk("opt/venv", 0o755, 1000, 1000);
        mk("opt/venv/bin.py", 0o644, 1000, 1000);
        let root = r.display().to_string();
        // The same script over the temporary tree.
        let script = script()
            .replace("for d in /usr /etc /opt", &format!("for d in {root}/usr {root}/etc {root}/opt"))
            .replace("-path /opt/venv", &format!("-path {root}/opt/venv"));
        let out = std::process::Command::new("/bin/sh").args(["-c", &script]).output().unwrap();
        let o = parse(&String::from_utf8_lossy(&out.stdout), &String::from_utf8_lossy(&out.stderr));
        let mut names: Vec<&str> = o.examples.iter().map(|e| e.split(' ').next().unwrap().rsplit('/').next().unwrap()).collect();
        names.sort();
        assert_eq!((names, o.error), (vec!["group.js", "theirs.js", "world.js"], None));
    }
}
