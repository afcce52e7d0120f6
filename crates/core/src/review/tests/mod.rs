//! Review's unit tests: real files planted in real temporary directories
//! (walked and read the way the launcher does), and the pure parts fed
//! from a table.

mod git;
mod kinds;
mod planted;
mod pure;
mod report;
mod store;

use super::kinds::Kind;
use super::Current;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A file with `text` and `mode` at `rel` under `root`.
pub(super) fn plant(root: &Path, rel: &str, text: &str, mode: u32) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
}

pub(super) fn link(root: &Path, rel: &str, target: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, p).unwrap();
}

/// The kind review gives `path` now (None: ordinary or absent).
pub(super) fn kind_of(now: &Current, path: &str) -> Option<Kind> {
    now.snapshot.get(path).and_then(|r| r.kind)
}

pub(super) fn take(ws: &Path) -> Current {
    super::take(ws, super::Roots::default())
}

/// With the agents' state in `home` reviewed too.
pub(super) fn take_home(ws: &Path, home: &Path) -> Current {
    super::take(ws, super::Roots { shared: &[], home: Some(home) })
}
