//! Checks of the home and the masked secrets (docs/defences.md, home and dotfile
//! masks): the home is a fresh tmpfs holding only what the registry binds
//! back, the outer home's entries are invisible, the credential corners and
//! dotfiles read as empty, and /etc's secrets are empty.

use super::sys::{self, try_create};
use super::Ctx;
use crate::agents::Agent;
use crate::homeview::{allowed_rel, classify};
use crate::sandbox::plan::{FORGE_DIRS, MASKED_DOTFILES, MASKED_ETC, MASKED_ETC_DIRS, TRUST_STORES};
use crate::Outcome;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

fn walk(dir: &Path, prefix: &str, allowed: &[String], bad: &mut Vec<String>) {
    for name in sys::entries(dir) {
        let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        match classify(&rel, allowed) {
            Some(true) => {}
            Some(false) => walk(&dir.join(&name), &rel, allowed, bad),
            None => bad.push(rel),
        }
    }
}

pub(crate) fn only_bound_state(c: &Ctx) -> Outcome {
    let home = &c.spec.home;
    let mut bad = Vec::new();
    match nix::sys::statfs::statfs(home) {
        Ok(s) if s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC => {}
        Ok(_) => bad.push(format!("{} is not a fresh tmpfs", home.display())),
        Err(e) => bad.push(format!("cannot stat {}: {e}", home.display())),
    }
    let allowed = allowed_rel(Agent::from_name(&c.spec.agent).ok(), &c.spec.home_extra);
    let mut extra = Vec::new();
    walk(home, "", &allowed, &mut extra);
    if !extra.is_empty() {
        extra.truncate(8);
        bad.push(format!("visible in the home: {}", extra.join(", ")));
    }
    Outcome::from_problems(bad)
}

pub(crate) fn outer_entries_hidden(c: &Ctx) -> Outcome {
    if c.spec.outer_home_sample.is_empty() {
        return Outcome::pass_note("the outer home has nothing besides what is bound back");
    }
    let seen: Vec<&String> = c.spec.outer_home_sample.iter().filter(|n| std::fs::symlink_metadata(c.spec.home.join(n)).is_ok()).collect();
    if seen.is_empty() {
        Outcome::pass()
    } else {
        Outcome::fail(format!("outer home entries visible: {}", seen.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")))
    }
}

/// Empty (no entries or no bytes) and not writable; absent counts as empty.
fn empty_and_read_only(p: &Path, nonce: &str) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(p) else { return Ok(()) };
    if meta.is_dir() {
        if !sys::dir_is_empty(p).unwrap_or(true) {
            return Err(format!("{} has entries", p.display()));
        }
        if try_create(p, nonce).is_ok() {
            return Err(format!("{} is writable", p.display()));
        }
        return Ok(());
    }
    let mut buf = Vec::new();
    if let Ok(mut f) = std::fs::File::open(p) {
        let _ = f.read_to_end(&mut buf);
    }
    if !buf.is_empty() {
        return Err(format!("{} has {} bytes", p.display(), buf.len()));
    }
    if sys::open_for_write(p).is_ok() {
        return Err(format!("{} is writable", p.display()));
    }
    Ok(())
}

/// Private tool dirs: none of the user's own is what the session sees.
/// Shared ones: their credential corners read as empty, and trust stores
/// (direnv's approvals) cannot be written.
pub(crate) fn credential_corners(c: &Ctx) -> Outcome {
    if !c.spec.share_tool_dirs {
        let bad: Vec<String> = c
            .spec
            .outer_tool_dirs
            .iter()
            .filter(|(rel, dev, ino)| std::fs::metadata(c.spec.home.join(rel)).is_ok_and(|m| (m.dev(), m.ino()) == (*dev, *ino)))
            .map(|(rel, _, _)| format!("~/{rel} is your own, not the sandbox's private copy"))
            .collect();
        return Outcome::from_problems(bad);
    }
    let mut bad: Vec<String> = c.spec.masked_share_present.iter().filter_map(|rel| empty_and_read_only(&c.spec.home.join(rel), &c.spec.nonce).err()).collect();
    for rel in TRUST_STORES {
        let p = c.spec.home.join(rel);
        if p.is_dir() && try_create(&p, &c.spec.nonce).is_ok() {
            bad.push(format!("{} (a trust store) is writable", p.display()));
        }
    }
    Outcome::from_problems(bad)
}

pub(crate) fn agent_state_writable(c: &Ctx) -> Outcome {
    let Ok(agent) = Agent::from_name(&c.spec.agent) else { return Outcome::fail(format!("unknown agent {}", c.spec.agent)) };
    let mut bad = Vec::new();
    for (p, kind) in agent.state_paths(&c.spec.home) {
        match kind {
            crate::agents::StateKind::Dir => {
                if let Err(e) = try_create(&p, &c.spec.nonce) {
                    bad.push(format!("{}: {e}", p.display()));
                }
            }
            crate::agents::StateKind::File => {
                if p.exists() {
                    if let Err(e) = sys::open_for_write(&p) {
                        bad.push(format!("{}: {e}", p.display()));
                    }
                }
            }
        }
    }
    Outcome::from_problems(bad)
}

pub(crate) fn forge_stores(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for rel in FORGE_DIRS {
        let p = c.spec.home.join(rel);
        let exists = p.exists();
        if c.spec.no_forge && exists && !sys::dir_is_empty(&p).unwrap_or(true) {
            bad.push(format!("{} is visible although noForge is set", p.display()));
        } else if exists && try_create(&p, &c.spec.nonce).is_ok() {
            bad.push(format!("{} is writable", p.display()));
        }
    }
    Outcome::from_problems(bad)
}

pub(crate) fn dotfiles_empty(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for name in MASKED_DOTFILES {
        let p = c.spec.home.join(name);
        match std::fs::symlink_metadata(&p) {
            Err(_) => bad.push(format!("{} is not masked (absent, so a session could create it)", p.display())),
            Ok(m) if !m.is_file() => bad.push(format!("{} is not a regular file", p.display())),
            Ok(_) => {
                if let Err(e) = empty_and_read_only(&p, &c.spec.nonce) {
                    bad.push(e);
                }
            }
        }
    }
    Outcome::from_problems(bad)
}

pub(crate) fn etc_secrets_empty(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for p in &c.spec.etc_masked_present {
        if !MASKED_ETC.iter().chain(MASKED_ETC_DIRS).any(|m| Path::new(m) == p) {
            continue;
        }
        if let Err(e) = empty_and_read_only(p, &c.spec.nonce) {
            bad.push(e);
        }
    }
    Outcome::from_problems(bad)
}
