//! `agent-sandbox verify` and `scope`, run for real: the battery passes as
//! root and as a non-root user, every check has a line, jail checks say so
//! when the jail is off, and — the point of it all — each check fails when
//! its defence is removed from the plan (`verify --weaken DEFENCE`, a
//! hidden test-only flag that exists only on `verify`).
//!
//! Sessions run with `AGENT_SANDBOX_EGRESS_JAIL=0` (the jail checks are
//! then skipped, and this file asserts that they say so; they run with the
//! jail on in the container tests, tests/suite/feature_e2e.rs and
//! tests/suite/image.rs). Needs root and bubblewrap; a missing prerequisite
//! fails the test.

use crate::support::launcher::*;
use agent_sandbox::verify::registry::{by_name, Kind, CHECKS};
use agent_sandbox::verify::Defence;
use serde_json::Value;
use std::path::Path;

fn setup(tag: &str) -> TestDir {
    require_root();
    require_bwrap();
    TestDir::new(tag)
}

/// `verify --json --allow-jail-off [EXTRA...]` through `launcher` (these
/// sessions run with the jail off on purpose); the parsed report.
fn verify_json(launcher: Launcher, extra: &[&str]) -> (Out, Value) {
    let mut args = vec!["verify", "--json", "--allow-jail-off"];
    args.extend_from_slice(extra);
    let out = launcher.cli(&args);
    let v: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("verify printed no JSON ({e})\n{out}"));
    (out, v)
}

fn status_of<'a>(v: &'a Value, name: &str) -> &'a str {
    let n = by_name(name).unwrap_or_else(|| panic!("no check named {name}")).number as usize;
    v["checks"][n - 1]["status"].as_str().unwrap_or("")
}

/// Every check passed (or was blocked, or skipped because the jail is off),
/// and the exit status says 0.
#[track_caller]
fn assert_all_pass(out: &Out, v: &Value) {
    let bad: Vec<String> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !matches!(c["status"].as_str(), Some("pass" | "blocked" | "skip")))
        .map(|c| format!("{} {} {}: {}", c["status"], c["number"], c["name"], c["detail"]))
        .collect();
    assert!(bad.is_empty(), "failing checks:\n{}\n{out}", bad.join("\n"));
    assert_eq!(v["summary"]["failures"], 0, "{out}");
    out.assert_ok();
}

#[test]
fn verify_passes_as_root() {
    let _machine = crate::support::share_machine();
    let td = setup("verify-root");
    // Host-executed parts for check 26 to protect.
    mkdir(&td.ws().join(".git/hooks"));
    write(&td.ws().join(".git/config"), "[core]\n");
    mkdir(&td.ws().join(".devcontainer"));
    let (out, v) = verify_json(Launcher::new(&td.ws()), &[]);
    assert_eq!(status_of(&v, "host-executed-read-only"), "pass");
    assert_eq!(v["checks"][by_name("host-executed-read-only").unwrap().number as usize - 1]["detail"], Value::Null, "{out}");
    assert_all_pass(&out, &v);
    assert_eq!(v["checks"].as_array().unwrap().len(), CHECKS.len());
    assert_eq!(v["egressJail"], false);
}

#[test]
fn verify_passes_as_a_non_root_user() {
    let _machine = crate::support::share_machine();
    let td = setup("verify-user");
    let user = test_user();
    chown(&td.ws(), user.uid, user.gid);
    let (out, v) = verify_json(Launcher::as_account(&td.ws(), user).bin(&td.public_bin()), &[]);
    assert_all_pass(&out, &v);
}

#[test]
fn verify_passes_for_every_agent_profile() {
    let _machine = crate::support::share_machine();
    let td = setup("verify-agents");
    for agent in ["codex", "pi"] {
        let (out, v) = verify_json(Launcher::new(&td.ws()), &["--agent", agent]);
        assert_all_pass(&out, &v);
        assert_eq!(v["agent"], agent, "{out}");
    }
}

/// A directory tree under root's home, removed on drop.
struct HomeDir(std::path::PathBuf);

impl Drop for HomeDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn verify_passes_in_a_workspace_under_the_home() {
    let _machine = crate::support::share_machine();
    let _td = setup("verify-in-home");
    let top = HomeDir(root_account().home.join(format!(".{}", unique("verify-ws"))));
    let ws = top.0.join("src/app");
    mkdir(&ws);
    mkdir(&top.0.join("src/sibling"));
    let (out, v) = verify_json(Launcher::new(&ws), &[]);
    assert_all_pass(&out, &v);
    // The workspace's ancestors exist inside (mount points in the home's
    // tmpfs); its siblings do not.
    let out = Launcher::new(&ws).cli(&["scope", "--json", &top.0.join("src").display().to_string(), &top.0.join("src/sibling").display().to_string()]);
    let rows: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(rows[0]["access"], "private", "{out}");
    assert_eq!(rows[1]["access"], "hidden", "{out}");
}

#[test]
fn text_report_has_one_numbered_line_per_check_and_skips_say_why() {
    let _machine = crate::support::share_machine();
    let td = setup("verify-text");
    let out = Launcher::new(&td.ws()).cli(&["verify", "--allow-jail-off"]);
    out.assert_ok();
    let rows: Vec<&str> = out.stdout.lines().filter(|l| ["PASS", "FAIL", "SKIP", "BLOCKED", "ESCAPED"].iter().any(|w| l.starts_with(w))).collect();
    assert_eq!(rows.len(), CHECKS.len(), "{out}");
    for (row, check) in rows.iter().zip(CHECKS) {
        let mut f = row.split_whitespace();
        let (_, n, name) = (f.next(), f.next().unwrap(), f.next().unwrap());
        assert_eq!((n, name.trim_end_matches(':')), (check.number.to_string().as_str(), check.name), "{out}");
        if check.needs_jail {
            assert_eq!(*row, format!("SKIP    {:>2} {}: egress jail is off", check.number, check.name), "{out}");
        }
    }
    assert!(out.stdout.contains("skipped (the egress jail is off)"), "{out}");
    assert!(!out.stdout.contains("FAIL: the egress jail is off"), "allowed: {out}");
    assert!(out.stdout.contains("egress jail off"), "{out}");
}

/// A run with the jail off that was not said to be intended fails: its
/// checks were skipped, not proven.
#[test]
fn the_jail_off_fails_verify_unless_allowed() {
    let _machine = crate::support::share_machine();
    let td = setup("verify-jail-off");
    let out = Launcher::new(&td.ws()).cli(&["verify"]);
    out.assert_code(1);
    assert!(out.stdout.contains("FAIL: the egress jail is off, so its ") && out.stdout.contains("--allow-jail-off"), "{out}");
    let out = Launcher::new(&td.ws()).cli(&["verify", "--json"]);
    out.assert_code(1);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (v["summary"]["failures"].as_u64(), v["summary"]["jailOffFailure"].as_bool(), v["jailOffAllowed"].as_bool()),
        (Some(1), Some(true), Some(false)),
        "{out}"
    );
}

#[test]
fn a_session_that_cannot_start_fails_every_check() {
    let _machine = crate::support::share_machine();
    let td = setup("verify-refused");
    let cfg = td.config("{ allowWrite: [\"/nonexistent/agent-sandbox-verify\"] }\n");
    let out = Launcher::new(&td.ws()).config(&cfg).cli(&["verify"]);
    assert_eq!(out.status.code(), Some(CHECKS.len() as i32), "{out}");
    assert!(out.stdout.contains("the session did not start:"), "{out}");
}

#[test]
fn weakening_is_not_available_to_run() {
    let _machine = crate::support::share_machine();
    let td = setup("verify-run-weaken");
    let out = Launcher::new(&td.ws()).cli(&["run", "--weaken", "home", "--", "/bin/true"]);
    out.assert_code(2);
    let out = Launcher::new(&td.ws()).cli(&["verify", "--weaken", "nonsense"]);
    out.assert_code(2);
    assert!(out.stderr.contains("read-only-root"), "{out}");
}

/// Runs the battery with `defence` removed and asserts that each of
/// `expect` fails (a check) or escapes (a probe), and that the exit status
/// is the number of failures.
fn weakened(launcher: Launcher, defence: &str, expect: &[&str]) {
    weakened_all(launcher, &[defence], expect)
}

/// The same with several defences removed (where they cover the same).
fn weakened_all(launcher: Launcher, defences: &[&str], expect: &[&str]) {
    let args: Vec<&str> = defences.iter().flat_map(|d| ["--weaken", d]).collect();
    let (out, v) = verify_json(launcher, &args);
    for name in expect {
        let s = status_of(&v, name);
        assert!(s == "fail" || s == "escaped", "with {defences:?} removed, {name} is `{s}`, not failed\n{out}");
    }
    let failures = v["summary"]["failures"].as_u64().unwrap();
    assert!(failures >= expect.len() as u64, "{out}");
    assert_eq!(out.status.code(), Some(failures as i32), "exit status is not the failure count\n{out}");
    for defence in defences {
        assert!(out.stdout.contains(&format!("\"{defence}\"")), "the report does not name the weakening\n{out}");
    }
}

#[test]
fn removing_the_sentinel_fails_its_check() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-sentinel");
    weakened(Launcher::new(&td.ws()), "sentinel", &["sentinel-set"]);
}

#[test]
fn removing_environment_filtering_fails_the_environment_checks() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-env");
    let l = Launcher::new(&td.ws()).env("AWS_ACCESS_KEY_ID", "AKIAVERIFYTEST");
    weakened(l, "environment", &["env-allow-list-only", "env-planted-secrets-absent"]);
}

#[test]
fn removing_the_home_tmpfs_fails_the_home_checks() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-home");
    let u = unique("verify-home");
    let _secret = PlacedFile::new(&root_account().home.join(format!(".{u}")), "secret\n");
    weakened(Launcher::new(&td.ws()), "home", &["home-only-bound-state", "home-outer-entries-hidden"]);
}

#[test]
fn removing_the_masks_fails_the_dotfile_checks() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-dotfiles");
    // For a root launcher /etc/shadow is hidden twice: by the list of
    // masks and by the scan for what only root may read.
    weakened(Launcher::new(&td.ws()), "dotfiles", &["dotfiles-read-empty"]);
    weakened_all(Launcher::new(&td.ws()), &["dotfiles", "root-only"], &["dotfiles-read-empty", "etc-secrets-read-empty"]);
}

#[test]
fn the_users_own_tool_dirs_fail_the_credential_check() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-tools");
    mkdir(&root_account().home.join(".cache"));
    weakened(Launcher::new(&td.ws()), "tool-dirs", &["home-credential-stores-masked"]);
}

#[test]
fn without_the_root_masks_a_root_launchers_session_reaches_roots_canaries() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-rootonly");
    weakened(Launcher::new(&td.ws()), "root-only", &["root-only-unreachable"]);
}

#[test]
fn without_the_protections_host_executed_files_are_writable_and_a_planted_link_launches() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-protect");
    mkdir(&td.ws().join(".git/hooks"));
    write(&td.ws().join(".git/config"), "[core]\n");
    mkdir(&td.ws().join(".devcontainer"));
    weakened(Launcher::new(&td.ws()), "protections", &["host-executed-read-only", "protected-symlink-refused"]);
}

#[test]
fn sharing_tmp_fails_the_tmp_check() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-tmp");
    weakened(Launcher::new(&td.ws()), "tmp", &["tmp-private"]);
}

#[test]
fn unmasking_run_user_fails_its_check() {
    let _machine = crate::support::share_machine();
    let td = TestDir::exclusive("weak-run-user");
    require_bwrap();
    let _sock = PlacedFile::socket(&Path::new("/run/user/0").join(format!("{}.sock", unique("verify"))));
    weakened(Launcher::new(&td.ws()), "run-user", &["run-user-secrets-masked"]);
}

#[test]
fn unmasking_engine_sockets_fails_their_check() {
    let _machine = crate::support::share_machine();
    let td = TestDir::exclusive("weak-engines");
    require_bwrap();
    let p = Path::new("/run/docker.sock");
    let _sock = (!p.exists()).then(|| PlacedFile::socket(p));
    weakened(Launcher::new(&td.ws()), "engines", &["engine-sockets-unreachable"]);
}

#[test]
fn keeping_capabilities_fails_the_privilege_checks() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-caps");
    weakened(Launcher::new(&td.ws()), "capabilities", &["capabilities-none", "setuid-no-elevation", "mount-or-remount"]);
}

/// Every refusal of the syscall profile has a probe that escapes without
/// it (the keyring one included: keys are reached by id), while the
/// checks that agents keep what they need still pass.
#[test]
fn dropping_the_seccomp_filter_fails_the_syscall_checks() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-seccomp");
    let expect = [
        "tiocsti-blocked",
        "tioclinux-blocked",
        "read-launcher-keyring",
        "seccomp-keyrings",
        "seccomp-bpf-perf-userfaultfd",
        "seccomp-modules-kexec",
        "seccomp-host-admin",
        "seccomp-clock",
        "seccomp-io-uring",
        "seccomp-file-handles",
        "seccomp-other-processes",
        "seccomp-obsolete-calls",
        "seccomp-personality",
        "seccomp-address-families",
    ];
    // Every probe of the syscalls defence is in the list.
    for c in CHECKS.iter().filter(|c| c.defence == Defence::Syscalls && c.kind == Kind::Probe) {
        assert!(expect.contains(&c.name), "{} is not shown to fail without the filter", c.name);
    }
    // The keyring probe: the launcher's keys are also out of reach of a
    // root launcher's unprivileged uid.
    let (out, v) = verify_json(Launcher::new(&td.ws()), &["--weaken", "seccomp", "--weaken", "root-only"]);
    for name in expect {
        let s = status_of(&v, name);
        assert!(s == "fail" || s == "escaped", "without the filter, {name} is `{s}`\n{out}");
    }
    for name in ["nested-user-namespaces-work", "debugging-a-child-works", "abstract-socket-inside-works"] {
        assert_eq!(status_of(&v, name), "pass", "{out}");
    }
}

/// Without the profile's refusal of setuid and setgid bits a session makes
/// its copy of a program setuid; the rest of the profile still holds.
#[test]
fn without_the_setid_refusal_a_session_sets_setuid_bits() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-setid");
    let (out, v) = verify_json(Launcher::new(&td.ws()), &[]);
    assert_eq!(status_of(&v, "setid-bits-refused"), "blocked", "{out}");
    weakened(Launcher::new(&td.ws()), "setid", &["setid-bits-refused"]);
    let (out, v) = verify_json(Launcher::new(&td.ws()), &["--weaken", "setid"]);
    assert_eq!(status_of(&v, "seccomp-keyrings"), "blocked", "only the setid rows go\n{out}");
}

/// With the jail off only Landlock keeps the outer abstract sockets out.
#[test]
fn dropping_landlock_scoping_fails_the_abstract_socket_probe() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-landlock");
    let (out, v) = verify_json(Launcher::new(&td.ws()), &[]);
    assert_eq!(status_of(&v, "abstract-socket-of-outer-process"), "blocked", "this test needs Linux 6.12+ with Landlock\n{out}");
    weakened(Launcher::new(&td.ws()), "landlock", &["abstract-socket-of-outer-process"]);
}

#[test]
fn a_writable_root_fails_the_file_system_checks() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-root");
    // A root launcher's session is an unprivileged uid on host files, which
    // keeps root's directories unwritable even over a writable root bind:
    // both defences go.
    weakened_all(
        Launcher::new(&td.ws()),
        &["read-only-root", "root-only"],
        &["root-read-only", "outside-workspace-read-only", "helpers-not-replaceable", "write-through-proc-root"],
    );
}

#[test]
fn uncovered_entry_points_fail_their_check() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-entry");
    let bin = td.ws().join("tools/bin");
    mkdir(&bin);
    weakened(Launcher::new(&td.ws()).path_first(&bin), "entry-points", &["entry-points-covered"]);
    // Without the pins the directory (and the one above it) can be renamed
    // away: the check says so, and puts them back.
    let (out, v) = verify_json(Launcher::new(&td.ws()).path_first(&bin), &["--weaken", "entry-points"]);
    let detail = v["checks"][by_name("entry-points-covered").unwrap().number as usize - 1]["detail"].as_str().unwrap_or("").to_string();
    assert!(
        detail.contains(&format!("{} can be renamed away", bin.display()))
            && detail.contains(&format!("{} can be renamed away", td.ws().join("tools").display())),
        "{detail}\n{out}"
    );
    assert!(bin.is_dir(), "the check put the directory back");
    // With the guard, the check passes on the same PATH.
    let (out, v) = verify_json(Launcher::new(&td.ws()).path_first(&bin), &[]);
    assert_eq!(status_of(&v, "entry-points-covered"), "pass", "{out}");
}

#[test]
fn the_users_git_config_fails_the_git_check() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-git");
    weakened(Launcher::new(&td.ws()), "git", &["git-config-curated"]);
}

#[test]
fn sharing_the_pid_namespace_fails_its_checks() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-pid");
    weakened(Launcher::new(&td.ws()), "pid-namespace", &["namespaces-new", "outer-processes-invisible"]);
}

#[test]
fn without_the_session_marker_recursion_fails() {
    let _machine = crate::support::share_machine();
    let td = setup("weak-recursion");
    weakened(Launcher::new(&td.ws()), "recursion", &["recursion-runs-directly"]);
}

// ---------------------------------------------------------------- scope

fn scope_json(td: &TestDir, paths: &[&Path]) -> Vec<(String, String)> {
    let mut args = vec!["scope".to_string(), "--json".to_string()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = Launcher::new(&td.ws()).cli(&refs);
    out.assert_ok();
    let v: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    v.as_array().unwrap().iter().map(|r| (r["path"].as_str().unwrap().to_string(), r["access"].as_str().unwrap().to_string())).collect()
}

#[test]
fn scope_describes_dev_as_bwrap_builds_it() {
    let _machine = crate::support::share_machine();
    let td = setup("scope-dev");
    let rows = scope_json(&td, &[Path::new("/dev/null"), Path::new("/dev/shm"), Path::new("/dev/mem")]);
    assert_eq!(rows[0].1, "write", "{rows:?}");
    assert_eq!(rows[1].1, "private", "{rows:?}");
    assert_eq!(rows[2].1, "hidden", "{rows:?}");
}

#[test]
fn scope_resolves_dot_dot_after_a_symlink_as_the_kernel_does() {
    let _machine = crate::support::share_machine();
    let td = setup("scope-symlink");
    let home = root_account().home;
    let u = unique("scope");
    let dir = PlacedFile::new(&home.join(format!(".{u}/inner/f")), "x\n");
    let link = td.aux().join("l");
    std::os::unix::fs::symlink(dir.path.parent().unwrap(), &link).unwrap();
    // l/../secret is $HOME/.<u>/secret for the kernel, aux/secret lexically.
    let q = link.join("../secret");
    let rows = scope_json(&td, &[&q, &link.join("f")]);
    assert_eq!(rows[0], (home.join(format!(".{u}/secret")).display().to_string(), "hidden".into()), "{rows:?}");
    assert_eq!(rows[1].1, "hidden", "a file under the masked home, through a symlink: {rows:?}");
}

#[test]
fn scope_of_missing_optional_state_is_not_read_write() {
    let _machine = crate::support::share_machine();
    let td = setup("scope-optional");
    let user = test_user();
    let missing = user.home.join(".claude.json");
    assert!(!missing.exists(), "{} exists; this test needs it absent", missing.display());
    let mut args = vec!["scope", "--json"];
    let m = missing.display().to_string();
    args.push(&m);
    chown(&td.ws(), user.uid, user.gid);
    let out = Launcher::as_account(&td.ws(), user).bin(&td.public_bin()).cli(&args);
    out.assert_ok();
    assert!(out.stdout.contains("\"access\": \"hidden\""), "bwrap skips the bind of a missing ~/.claude.json\n{out}");
}
