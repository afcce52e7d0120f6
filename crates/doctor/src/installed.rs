//! Whether the installation is still what `sandbox-install` made: every
//! shim link and command link its manifest records, and the binaries it
//! copied (by hash). Observing is `install::facts::observe` (no symlink
//! followed); the verdict over the observations is pure.

use crate::install::facts::{self, Observed};
use crate::install::manifest::{Entry, Manifest};
use crate::layout::{BINARY, EXEC_LINK_DIR, INSTALLER, MANIFEST, SHIM_DIR};
use std::path::{Path, PathBuf};

/// The installation's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Installed {
    No,
    Untrusted(String),
    /// Installed; what no longer is as installed (empty: all in place).
    Yes {
        problems: Vec<String>,
    },
}

/// Observes the installation on this machine.
pub(crate) fn gather() -> Installed {
    if std::fs::symlink_metadata(BINARY).is_err() {
        return Installed::No;
    }
    if let Err(e) = crate::sysbin::find_in("agent-sandbox", &[SHIM_DIR], "") {
        return Installed::Untrusted(e.to_string());
    }
    let problems = match std::fs::read_to_string(MANIFEST) {
        Ok(text) => match Manifest::from_json(&text) {
            Ok(m) => against_manifest(&m, &|p| facts::observe(p)),
            Err(e) => vec![format!("the install manifest {MANIFEST} cannot be read ({e})")],
        },
        // Installed by hand (the tests' copies): the links that exist must
        // lead to the binary.
        Err(_) => links_lead_to_binary(),
    };
    Installed::Yes { problems }
}

/// What differs from the manifest: a recorded link missing, replaced or
/// pointing elsewhere; a copied binary missing or changed. Files that are
/// meant to be edited (the configuration, managed settings, rc blocks) are
/// not judged here.
fn against_manifest(m: &Manifest, observe: &dyn Fn(&Path) -> Observed) -> Vec<String> {
    let mut out = Vec::new();
    for e in &m.entries {
        match e {
            Entry::Link { path, target, .. } => match observe(path) {
                Observed::Link { target: t } if t == *target => {}
                Observed::Link { target: t } => out.push(format!("{} points to {}, not {}", path.display(), t.display(), target.display())),
                Observed::Absent => out.push(format!("{} (a link to {}) is missing", path.display(), target.display())),
                o => out.push(format!("{} is a {}, not the link to {}", path.display(), o.kind_name(), target.display())),
            },
            Entry::File { path, hash, .. } if path == Path::new(BINARY) || path == Path::new(INSTALLER) => match observe(path) {
                Observed::File { hash: h, .. } if h == *hash => {}
                Observed::File { .. } => out.push(format!("{} is not the binary sandbox-install copied (its contents changed)", path.display())),
                Observed::Absent => out.push(format!("{} is missing", path.display())),
                o => out.push(format!("{} is a {}, not the binary sandbox-install copied", path.display(), o.kind_name())),
            },
            _ => {}
        }
    }
    out
}

/// Without a manifest: the shim and command links present must resolve to
/// the binary.
fn links_lead_to_binary() -> Vec<String> {
    let target = std::fs::canonicalize(BINARY).ok();
    let mut out = Vec::new();
    for name in crate::agents::ALL.iter().map(|a| a.binary()).chain(["agent-sandbox"]) {
        for dir in [SHIM_DIR, EXEC_LINK_DIR] {
            let p: PathBuf = Path::new(dir).join(name);
            if p == Path::new(BINARY) || std::fs::symlink_metadata(&p).is_err() {
                continue;
            }
            if std::fs::canonicalize(&p).ok() != target {
                out.push(format!("{} no longer leads to {BINARY}", p.display()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn manifest() -> Manifest {
        let mut m = Manifest::empty(true);
        m.record(Entry::File { path: BINARY.into(), hash: "sha256:aa".into(), backup: None });
        m.record(Entry::Link { path: format!("{SHIM_DIR}/claude").into(), target: "agent-sandbox".into(), backup: None });
        m.record(Entry::Link { path: format!("{EXEC_LINK_DIR}/claude").into(), target: "../lib/agent-sandbox/bin/agent-sandbox".into(), backup: None });
        m.record(Entry::File { path: "/etc/agent-sandbox/config.json5".into(), hash: "sha256:cc".into(), backup: None });
        m
    }

    fn as_installed() -> BTreeMap<PathBuf, Observed> {
        let file = |h: &str| Observed::File { mode: 0o755, uid: 0, gid: 0, hash: h.into(), text: None };
        BTreeMap::from([
            (PathBuf::from(BINARY), file("sha256:aa")),
            (PathBuf::from(format!("{SHIM_DIR}/claude")), Observed::Link { target: "agent-sandbox".into() }),
            (PathBuf::from(format!("{EXEC_LINK_DIR}/claude")), Observed::Link { target: "../lib/agent-sandbox/bin/agent-sandbox".into() }),
            // Edited since: the configuration is the user's to change.
            (PathBuf::from("/etc/agent-sandbox/config.json5"), file("sha256:dd")),
        ])
    }

    fn check(fs: &BTreeMap<PathBuf, Observed>) -> Vec<String> {
        against_manifest(&manifest(), &|p| fs.get(p).cloned().unwrap_or(Observed::Absent))
    }

    #[test]
    fn an_installation_as_recorded_has_no_problems() {
        assert_eq!(check(&as_installed()), Vec::<String>::new());
    }

    #[test]
    fn every_changed_link_and_binary_is_named() {
        let mut fs = as_installed();
        fs.remove(Path::new(&format!("{SHIM_DIR}/claude")));
        fs.insert(format!("{EXEC_LINK_DIR}/claude").into(), Observed::File { mode: 0o755, uid: 0, gid: 0, hash: "sha256:vendor".into(), text: None });
        fs.insert(BINARY.into(), Observed::File { mode: 0o755, uid: 0, gid: 0, hash: "sha256:bb".into(), text: None });
        assert_eq!(
            check(&fs),
            vec![
                format!("{BINARY} is not the binary sandbox-install copied (its contents changed)"),
                format!("{SHIM_DIR}/claude (a link to agent-sandbox) is missing"),
                format!("{EXEC_LINK_DIR}/claude is a file, not the link to ../lib/agent-sandbox/bin/agent-sandbox"),
            ]
        );
        fs.insert(format!("{EXEC_LINK_DIR}/claude").into(), Observed::Link { target: "/usr/local/bin/claude".into() });
        assert!(check(&fs).contains(&format!("{EXEC_LINK_DIR}/claude points to /usr/local/bin/claude, not ../lib/agent-sandbox/bin/agent-sandbox")));
    }
}
