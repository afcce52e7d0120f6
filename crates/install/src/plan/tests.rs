//! Whole-value tests of the installer's plan, and a model executor that
//! applies a plan to `Facts` so the properties that matter are checked
//! without touching the system: a second run plans nothing, and an
//! uninstall brings every path back to what it was.

use super::*;
use crate::facts::Source;
use crate::packages::PackageFacts;
use std::collections::BTreeMap;

fn dir() -> Observed {
    Observed::Dir { mode: 0o755, uid: 0, gid: 0 }
}

fn text_file(text: &str, uid: u32) -> Observed {
    Observed::File { mode: 0o644, uid, gid: uid, hash: content::hash(text.as_bytes()), text: Some(text.into()) }
}

fn bin_source() -> Source {
    Source { path: "/build/agent-sandbox".into(), len: 4, hash: content::hash(b"ELF1") }
}

/// A fresh Debian-like system with a user `vscode`.
fn fresh() -> Facts {
    let mut paths = BTreeMap::new();
    for d in ["/usr", "/usr/local", "/usr/local/lib", "/usr/local/sbin", "/etc", "/etc/profile.d", "/var", "/var/lib", "/home", "/home/vscode"] {
        paths.insert(PathBuf::from(d), dir());
    }
    paths.insert("/etc/bash.bashrc".into(), text_file("# system bashrc\n", 0));
    paths.insert("/home/vscode/.profile".into(), text_file("PATH=\"$HOME/.local/bin:$PATH\"\n", 1000));
    Facts {
        can_chown: true,
        paths,
        manifest: ManifestState::Absent,
        binary: Some(bin_source()),
        installer: None,
        user: None,
        packages: PackageFacts { manager: Some(Manager::Apt), os: "Debian".into(), missing: Vec::new() },
    }
}

fn vscode() -> User {
    User { name: "vscode".into(), uid: 1000, gid: 1000, home: "/home/vscode".into(), shell: "/bin/bash".into() }
}

fn req(agents: &[Agent]) -> Request {
    Request { agents: agents.to_vec(), uninstall: false, no_deps: false, staged: false, seed: ConfigSeed::default() }
}

/// Applies `plan` to the model the way `exec::apply` applies it to disk.
fn simulate(facts: &mut Facts, plan: &InstallPlan) {
    let p = &mut facts.paths;
    for s in &plan.steps {
        match &s.action {
            Action::MakeDir { path, mode, owner } => {
                let o = owner.unwrap_or(ROOT);
                p.insert(path.clone(), Observed::Dir { mode: *mode, uid: o.uid, gid: o.gid });
            }
            Action::Write { path, content, mode, owner, backup } => {
                if let Some(b) = backup {
                    let old = p[path].clone();
                    p.insert(b.clone(), old);
                }
                let o = owner.unwrap_or(ROOT);
                let text = match content {
                    Content::Text { text } => Some(text.clone()),
                    Content::Copy { .. } => None,
                };
                p.insert(path.clone(), Observed::File { mode: *mode, uid: o.uid, gid: o.gid, hash: content.hash(), text });
            }
            Action::SetMode { path, mode: m, owner } => {
                if let Some(Observed::File { mode, uid, gid, .. } | Observed::Dir { mode, uid, gid }) = p.get_mut(path) {
                    *mode = *m;
                    if let Some(o) = owner {
                        (*uid, *gid) = (o.uid, o.gid);
                    }
                }
            }
            Action::Symlink { path, target, backup } => {
                if let Some(b) = backup {
                    let old = p[path].clone();
                    p.insert(b.clone(), old);
                }
                p.insert(path.clone(), Observed::Link { target: target.clone() });
            }
            Action::Remove { path } => {
                p.remove(path);
            }
            Action::Restore { path, backup } => {
                let b = p.remove(backup).expect("backup exists");
                p.insert(path.clone(), b);
            }
            Action::RemoveDir { path } => {
                if !p.keys().any(|k| k != path && k.starts_with(path)) {
                    p.remove(path);
                }
            }
            Action::InstallPackages { .. } => facts.packages.missing.clear(),
            Action::RemovePackages { .. } => {}
            Action::WriteManifest => {
                let m = plan.manifest.clone().unwrap();
                p.insert(MANIFEST.into(), text_file(&m.to_json(), 0));
                facts.manifest = ManifestState::Valid(m);
            }
            Action::RemoveState => {
                p.remove(Path::new(MANIFEST));
                let created = matches!(&facts.manifest, ManifestState::Valid(m) if m.state_dir_created);
                if created && !p.keys().any(|k| k != Path::new(STATE_DIR) && k.starts_with(STATE_DIR)) {
                    p.remove(Path::new(STATE_DIR));
                }
                facts.manifest = ManifestState::Absent;
            }
        }
    }
}

/// Install, check a second run is empty, uninstall, check nothing is left.
fn round_trip(mut facts: Facts, r: &Request) -> InstallPlan {
    let before = facts.paths.clone();
    let first = plan(r, &facts).expect("plan");
    simulate(&mut facts, &first);
    let second = plan(r, &facts).expect("second plan");
    assert!(second.up_to_date(), "second run should change nothing: {:#?}", second.steps);
    let mut un = r.clone();
    un.uninstall = true;
    let undo = plan(&un, &facts).expect("uninstall plan");
    simulate(&mut facts, &undo);
    assert_eq!(facts.paths, before, "uninstall leaves the system as it was");
    first
}

fn actions(p: &InstallPlan) -> Vec<String> {
    p.steps.iter().map(crate::render::step).collect()
}

#[test]
fn fresh_install_of_claude_as_a_whole() {
    let p = round_trip(fresh(), &req(&[Agent::Claude]));
    let bashrc_after = content::with_block("# system bashrc\n", &content::source_block(false));
    assert_eq!(
        actions(&p),
        vec![
            "mkdir     /usr/local/lib/agent-sandbox (0755 root)".to_string(),
            "mkdir     /usr/local/lib/agent-sandbox/bin (0755 root)".into(),
            "write     /usr/local/lib/agent-sandbox/bin/agent-sandbox (copy of /build/agent-sandbox, 4 bytes, 0755 root)".into(),
            "link      /usr/local/lib/agent-sandbox/bin/claude -> agent-sandbox".into(),
            "link      /usr/local/sbin/claude -> ../lib/agent-sandbox/bin/agent-sandbox".into(),
            "link      /usr/local/sbin/agent-sandbox -> ../lib/agent-sandbox/bin/agent-sandbox".into(),
            format!("write     /etc/profile.d/agent-sandbox.sh ({} bytes, 0644 root)", content::profile_script().len()),
            format!("edit      /etc/bash.bashrc (managed block, {} bytes in all, 0644 root); the original is saved to /var/lib/agent-sandbox/backup/etc/bash.bashrc", bashrc_after.len()),
            "mkdir     /etc/agent-sandbox (0755 root)".into(),
            format!("write     /etc/agent-sandbox/config.json5 ({} bytes, 0644 root)", content::default_config(&ConfigSeed::default()).len()),
            "mkdir     /etc/claude-code (0755 root)".into(),
            "write     /etc/claude-code/managed-settings.json (50 bytes, 0644 root)".into(),
            "mkdir     /var/lib/agent-sandbox (0755 root)".into(),
            "manifest  /var/lib/agent-sandbox/install-manifest.json".into(),
        ]
    );
    let m = p.manifest.unwrap();
    assert_eq!(m.agents, vec!["claude"]);
    assert!(m.state_dir_created);
    assert_eq!(
        m.find(Path::new(BASH_RC)),
        Some(&Entry::Block {
            path: BASH_RC.into(),
            hash: content::hash(bashrc_after.as_bytes()),
            backup: Some("/var/lib/agent-sandbox/backup/etc/bash.bashrc".into())
        })
    );
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}

#[test]
fn remote_user_gets_state_dirs_and_rc_blocks_with_their_ownership() {
    let mut f = fresh();
    f.user = Some(vscode());
    let p = round_trip(f, &req(&[Agent::Codex, Agent::Pi]));
    let a = actions(&p);
    assert!(a.contains(&"mkdir     /home/vscode/.codex (0700 1000:1000)".to_string()), "{a:#?}");
    assert!(a.contains(&"mkdir     /home/vscode/.pi (0700 1000:1000)".to_string()));
    assert!(!a.iter().any(|l| l.contains(".claude")), "claude not chosen");
    let profile = a.iter().find(|l| l.contains("/home/vscode/.profile")).unwrap();
    assert!(profile.starts_with("edit") && profile.contains("1000:1000"), "{profile}");
    assert!(a.contains(&"write     /etc/codex/config.toml (119 bytes, 0644 root)".to_string()));
    assert_eq!(p.user.as_deref(), Some("vscode"));
    assert!(p.notes.iter().any(|n| n.text.contains("PI_SKIP_VERSION_CHECK")));
}

/// A file in the user's home that the user does not own (a root-only file
/// renamed in from a directory the user can write) is neither read into a
/// rewrite nor edited: left alone, with the reason and the fix.
#[test]
fn a_file_in_the_home_not_owned_by_its_user_is_left_alone() {
    let mut f = fresh();
    f.user = Some(vscode());
    f.paths
        .insert("/home/vscode/.bashrc".into(), Observed::File { mode: 0o600, uid: 0, gid: 0, hash: content::hash(b"SECRET\n"), text: Some("SECRET\n".into()) });
    let p = plan(&req(&[Agent::Pi]), &f).unwrap();
    assert!(!p.steps.iter().any(|s| s_path(&s.action).is_some_and(|p| p.ends_with(".bashrc"))), "{:#?}", actions(&p));
    let note = p.notes.iter().find(|n| n.text.contains("/home/vscode/.bashrc")).expect("a note about .bashrc");
    assert_eq!(note.level, Level::Warning);
    assert!(note.text.contains("owned by uid 0, not by vscode") && note.text.contains("chown vscode: /home/vscode/.bashrc"), "{}", note.text);
    // The user's own ~/.profile still gets its block.
    assert!(actions(&p).iter().any(|l| l.starts_with("edit") && l.contains("/home/vscode/.profile")));
}

fn s_path(a: &Action) -> Option<&Path> {
    match a {
        Action::Write { path, .. } | Action::SetMode { path, .. } | Action::Symlink { path, .. } | Action::Remove { path } | Action::Restore { path, .. } => {
            Some(path)
        }
        _ => None,
    }
}

#[test]
fn foreign_files_are_backed_up_and_restored() {
    let mut f = fresh();
    f.paths.insert("/etc/claude-code".into(), dir());
    f.paths.insert(CLAUDE_MANAGED.into(), text_file("{\"model\": \"opus\"}", 0));
    f.paths.insert("/usr/local/sbin/claude".into(), text_file("#!/bin/sh\necho old\n", 0));
    let p = round_trip(f, &req(&[Agent::Claude]));
    let a = actions(&p);
    assert!(a.contains(&"link      /usr/local/sbin/claude -> ../lib/agent-sandbox/bin/agent-sandbox; the original is saved to /var/lib/agent-sandbox/backup/usr/local/sbin/claude".to_string()), "{a:#?}");
    let settings = p.steps.iter().find_map(|s| match &s.action {
        Action::Write { path, content: Content::Text { text }, backup, .. } if path == Path::new(CLAUDE_MANAGED) => Some((text.clone(), backup.clone())),
        _ => None,
    });
    let (text, backup) = settings.expect("settings merged");
    assert!(text.contains("\"model\": \"opus\"") && text.contains("DISABLE_AUTOUPDATER"));
    assert!(backup.is_some());
}

#[test]
fn an_existing_config_is_kept_and_checked() {
    let mut f = fresh();
    f.paths.insert("/etc/agent-sandbox".into(), dir());
    f.paths.insert(CONFIG_FILE.into(), text_file("{ egressJail: maybe }", 1000));
    let mut r = req(&[Agent::Claude]);
    r.seed.no_forge = Some(true);
    let p = round_trip(f, &r);
    assert!(!actions(&p).iter().any(|l| l.contains("config.json5")));
    let notes: Vec<&str> = p.notes.iter().map(|n| n.text.as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("kept the existing /etc/agent-sandbox/config.json5")), "{notes:#?}");
    assert!(notes.iter().any(|n| n.contains("options given were not applied")), "{notes:#?}");
    assert!(notes.iter().any(|n| n.contains("is invalid")), "{notes:#?}");
    assert!(notes.iter().any(|n| n.contains("chown root:root")), "{notes:#?}");
}

#[test]
fn dropping_an_agent_undoes_its_entries() {
    let mut f = fresh();
    let first = plan(&req(&[Agent::Claude, Agent::Codex]), &f).unwrap();
    simulate(&mut f, &first);
    let second = plan(&req(&[Agent::Claude]), &f).unwrap();
    let a = actions(&second);
    assert_eq!(
        a,
        vec![
            "remove    /etc/codex/config.toml",
            "rmdir     /etc/codex (if empty)",
            "remove    /usr/local/sbin/codex",
            "remove    /usr/local/lib/agent-sandbox/bin/codex",
            "manifest  /var/lib/agent-sandbox/install-manifest.json",
        ]
    );
    simulate(&mut f, &second);
    assert!(plan(&req(&[Agent::Claude]), &f).unwrap().up_to_date());
}

#[test]
fn changed_files_are_kept_on_uninstall() {
    let mut f = fresh();
    let first = plan(&req(&[Agent::Claude]), &f).unwrap();
    simulate(&mut f, &first);
    // The admin edits the config and appends to bash.bashrc after the block.
    f.paths.insert(CONFIG_FILE.into(), text_file("{ noForge: true }", 0));
    let Observed::File { text: Some(rc), .. } = f.get(Path::new(BASH_RC)).clone() else { panic!() };
    f.paths.insert(BASH_RC.into(), text_file(&format!("{rc}alias ll='ls -l'\n"), 0));
    let mut un = req(&[]);
    un.uninstall = true;
    let undo = plan(&un, &f).unwrap();
    simulate(&mut f, &undo);
    assert_eq!(f.get(Path::new(CONFIG_FILE)), &text_file("{ noForge: true }", 0), "edited config kept");
    assert_eq!(f.get(Path::new(BASH_RC)), &text_file("# system bashrc\nalias ll='ls -l'\n", 0), "block removed, edit kept");
    assert!(undo.notes.iter().any(|n| n.text.contains("kept /etc/agent-sandbox/config.json5")));
    assert!(!f.exists(Path::new("/var/lib/agent-sandbox/backup/etc/bash.bashrc")));
}

#[test]
fn missing_packages_are_installed_with_the_distro_manager() {
    let mut f = fresh();
    f.packages.missing = vec!["bubblewrap".into(), "passt".into()];
    let p = plan(&req(&[Agent::Claude]), &f).unwrap();
    assert!(p.steps.iter().any(|s| s.action == Action::InstallPackages { manager: Manager::Apt, packages: vec!["bubblewrap".into(), "passt".into()] }));
    let mut no_deps = req(&[Agent::Claude]);
    no_deps.no_deps = true;
    let p = plan(&no_deps, &f).unwrap();
    assert!(!p.steps.iter().any(|s| matches!(s.action, Action::InstallPackages { .. })));
    assert!(p.notes.iter().any(|n| n.level == Level::Warning && n.text.contains("bubblewrap and passt not installed")));
    f.packages.manager = None;
    assert!(matches!(plan(&req(&[Agent::Claude]), &f), Err(InstallError::NoPackageManager { .. })));
}

#[test]
fn staging_without_root_sets_no_owners() {
    let mut f = fresh();
    f.can_chown = false;
    // A bare staging directory: no /var yet.
    f.paths.remove(Path::new("/var/lib"));
    f.paths.remove(Path::new("/var"));
    let mut r = req(&[Agent::Pi]);
    r.staged = true;
    let p = round_trip(f, &r);
    for s in &p.steps {
        if let Action::MakeDir { owner, .. } | Action::Write { owner, .. } = &s.action {
            assert_eq!(*owner, None, "{s:?}");
        }
    }
    assert!(p.notes.iter().any(|n| n.text.contains("--root")));
}

#[test]
fn something_in_the_way_is_an_error() {
    let mut f = fresh();
    f.paths.insert(SHIM_DIR.into(), text_file("oops", 0));
    f.paths.insert(LIB_DIR.into(), dir());
    let err = plan(&req(&[Agent::Claude]), &f).unwrap_err().to_string();
    assert!(err.contains("/usr/local/lib/agent-sandbox/bin is a file where sandbox-install needs to put a directory"), "{err}");
}

#[test]
fn uninstall_without_manifest_does_nothing() {
    let mut un = req(&[]);
    un.uninstall = true;
    let p = plan(&un, &fresh()).unwrap();
    assert!(p.up_to_date());
    assert!(p.notes[0].text.contains("nothing to uninstall"));
    let mut f = fresh();
    f.manifest = ManifestState::Invalid("bad".into());
    assert!(plan(&un, &f).unwrap_err().to_string().contains("install manifest"));
}
