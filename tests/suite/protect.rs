//! What a session leaves for the next one and for git outside: planted
//! symbolic links, FIFOs and devices at the places the sandbox protects,
//! and every git directory of a real repository layout (submodules,
//! worktrees, nested repositories, a hooks path). Real sessions, real git;
//! each finding of the adversarial review is reproduced here.
//!
//! Needs root, bubblewrap and git; a missing prerequisite fails the test.

use crate::support::launcher::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn setup(tag: &str) -> TestDir {
    require_root();
    require_bwrap();
    require_tool("/usr/bin/git", "apt-get install git");
    TestDir::new(tag)
}

/// A relative symlink target from `ws` to `/target`: what a session plants
/// so that a path resolved outside the sandbox lands on a host path.
fn up_to_root(ws: &Path, target: &str) -> String {
    let depth = ws.components().count() - 1;
    format!("{}{}", "../".repeat(depth), target.trim_start_matches('/'))
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("/usr/bin/git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `sh -c script` in a session of `ws` as root, killed after `limit` (a
/// launch that reads a FIFO would otherwise hang the test).
fn run_with_limit(ws: &Path, script: &str, limit: Duration) -> (Out, Duration) {
    let start = Instant::now();
    let mut child = Launcher::new(ws)
        .run_command(&["/bin/sh", "-c", script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start agent-sandbox");
    while child.try_wait().unwrap().is_none() && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let took = start.elapsed();
    let o = child.wait_with_output().unwrap();
    let out = Out {
        status: o.status,
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        stdout_bytes: o.stdout,
        what: format!("sh -c {script:?} in {}", ws.display()),
    };
    (out, took)
}

/// The launcher refused before running anything, naming `path`.
#[track_caller]
fn assert_refused_naming(out: &Out, path: &str) {
    assert_eq!(out.status.code(), Some(1), "the launch must be refused\n{out}");
    assert!(!out.stdout.contains("RAN"), "the command ran\n{out}");
    assert!(out.stderr.contains(&format!("workspace's {path} is")), "the refusal names {path}\n{out}");
    assert!(out.stderr.contains("agent-sandbox review"), "the refusal says what to do\n{out}");
    assert!(!out.stderr.contains("panicked"), "{out}");
}

/// The review found that a session could replace a protected path (one
/// that did not exist at its own launch) with a relative symlink, and the
/// next session then got the launcher's home, the host's /tmp or
/// /run/user mounted there. Each such plant now refuses the next launch,
/// for root and for an ordinary user.
#[test]
fn planted_symlinks_at_protected_places_are_never_followed() {
    let _machine = crate::support::share_machine();
    let td = setup("protect-symlinks");
    for account in [root_account(), test_user()] {
        for (name, target) in [(".devcontainer", account.home.display().to_string()), (".devcontainer.json", "/etc/shadow".into()), (".git", "/tmp".into())] {
            let ws = td.workspace(&unique(&format!("{}-{}", account.name, name.trim_start_matches('.'))));
            chown(&ws, account.uid, account.gid);
            // The planting session: the name did not exist when it started.
            let link = up_to_root(&ws, &target);
            let bin = td.public_bin();
            let plant = Launcher::as_account(&ws, account.clone()).bin(&bin).sh(&format!("ln -s '{link}' {name} && echo planted=yes"));
            assert_eq!(plant.get("planted"), "yes", "{plant}");
            let next = Launcher::as_account(&ws, account.clone()).bin(&bin).sh("echo RAN; ls -a");
            assert_refused_naming(&next, name);
        }
        // Inside .git: hooks and config replaced while .git itself was new.
        let ws = td.workspace(&unique(&format!("{}-hooks", account.name)));
        chown(&ws, account.uid, account.gid);
        let bin = td.public_bin();
        let run_user = up_to_root(&ws.join(".git"), "/run/user");
        let plant = Launcher::as_account(&ws, account.clone())
            .bin(&bin)
            .sh(&format!("mkdir .git && ln -s '{run_user}' .git/hooks && ln -s /etc/gitconfig .git/config && echo planted=yes"));
        assert_eq!(plant.get("planted"), "yes", "{plant}");
        assert_refused_naming(&Launcher::as_account(&ws, account.clone()).bin(&bin).sh("echo RAN"), ".git/config");
    }
}

/// A FIFO at a protected file, or a link to /dev/zero, used to hang every
/// later launch (the launcher read it); now a refusal, at once.
#[test]
fn fifos_and_devices_at_protected_places_refuse_at_once() {
    let _machine = crate::support::share_machine();
    let td = setup("protect-fifo");
    let ws = td.ws();
    mkdir(&ws.join(".git"));
    nix::unistd::mkfifo(&ws.join(".git/config"), nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let (out, took) = run_with_limit(&ws, "echo RAN", Duration::from_secs(10));
    assert!(took < Duration::from_secs(10), "the launch hung on a FIFO\n{out}");
    assert_refused_naming(&out, ".git/config");
    assert!(out.stderr.contains("FIFO"), "{out}");

    let ws = td.workspace("zero");
    std::os::unix::fs::symlink("/dev/zero", ws.join(".devcontainer.json")).unwrap();
    let (out, took) = run_with_limit(&ws, "echo RAN", Duration::from_secs(10));
    assert!(took < Duration::from_secs(10), "the launch read /dev/zero\n{out}");
    assert_refused_naming(&out, ".devcontainer.json");
}

/// A real layout: a submodule (its git directory in .git/modules), a linked
/// worktree inside the workspace, a nested repository, a hooks path that
/// does not exist yet. A session writes to each place git reads code
/// from; every write must fail, while ordinary git work (a commit) does not.
#[test]
fn every_git_directory_of_the_workspace_is_protected() {
    let _machine = crate::support::share_machine();
    let td = setup("protect-git");
    let lib = td.workspace("lib");
    git(&lib, &["init", "-q"]);
    write(&lib.join("README"), "lib\n");
    git(&lib, &["add", "."]);
    git(&lib, &["commit", "-qm", "lib"]);
    let ws = td.ws();
    git(&ws, &["init", "-q"]);
    write(&ws.join("main.txt"), "main\n");
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "main"]);
    git(&ws, &["submodule", "add", "-q", lib.to_str().unwrap(), "lib"]);
    git(&ws, &["commit", "-qm", "submodule"]);
    git(&ws, &["worktree", "add", "-q", "wt"]);
    git(&ws, &["config", "core.hooksPath", "tools/hooks"]);
    let nested = ws.join("nested");
    mkdir(&nested);
    git(&nested, &["init", "-q"]);
    assert!(ws.join(".git/modules/lib/config").is_file() && ws.join(".git/worktrees/wt/commondir").is_file());
    let before: Vec<(PathBuf, String)> = [".git/config", ".git/modules/lib/config", "nested/.git/config", ".git/worktrees/wt/commondir", "wt/.git", "lib/.git"]
        .iter()
        .map(|p| (ws.join(p), std::fs::read_to_string(ws.join(p)).unwrap()))
        .collect();

    let out = Launcher::new(&ws).sh("t() { name=$1; shift; if (\"$@\") >/dev/null 2>&1; then echo $name=written; else echo $name=refused; fi; }
         t main_config sh -c 'echo \"[core] fsmonitor = touch /tmp/x\" >> .git/config'
         t submodule_config sh -c 'echo \"[core] fsmonitor = x\" >> .git/modules/lib/config'
         t submodule_hook sh -c 'echo x > .git/modules/lib/hooks/post-checkout'
         t nested_config sh -c 'echo x >> nested/.git/config'
         t nested_hook sh -c 'mkdir -p nested/.git/hooks && echo x > nested/.git/hooks/pre-commit'
         t worktree_commondir sh -c 'echo ../../../evil > .git/worktrees/wt/commondir'
         t worktree_gitfile sh -c 'echo gitdir: /elsewhere > wt/.git'
         t submodule_gitfile sh -c 'echo gitdir: ../evil > lib/.git'
         t hooks_path sh -c 'mkdir -p tools/hooks && echo x > tools/hooks/pre-commit'
         t swap_git mv .git .git-moved
         t swap_nested_git mv nested/.git nested/.git-moved
         git -c user.name=t -c user.email=t@example.org commit -q --allow-empty -m inside && echo commit=ok");
    out.assert_ok();
    for key in [
        "main_config",
        "submodule_config",
        "submodule_hook",
        "nested_config",
        "nested_hook",
        "worktree_commondir",
        "worktree_gitfile",
        "submodule_gitfile",
        "hooks_path",
        "swap_git",
        "swap_nested_git",
    ] {
        assert_eq!(out.get(key), "refused", "{key}\n{out}");
    }
    assert_eq!(out.get("commit"), "ok", "ordinary git work inside must keep working\n{out}");
    for (p, text) in before {
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text, "{} changed", p.display());
    }
    assert!(!ws.join("tools/hooks/pre-commit").exists() && ws.join(".git").is_dir());
}
