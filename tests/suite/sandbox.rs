//! Real-bwrap integration tests: one per defence of docs/defences.md, each running
//! actual sessions through the `agent-sandbox` binary and asserting on what
//! is observed inside (and outside) them. Sessions run with
//! `AGENT_SANDBOX_EGRESS_JAIL=0` (the jail has its own tests).
//!
//! Needs root, bubblewrap, python3 and util-linux; a missing prerequisite
//! fails the test with the command that installs it.

use crate::support::launcher::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One per test: a test holding two would deadlock against an exclusive
/// one (see `TestDir::exclusive`); use `TestDir::workspace` for more.
fn setup(tag: &str) -> TestDir {
    require_root();
    require_bwrap();
    TestDir::new(tag)
}

/// For tests that create or remove paths under /run (see `TestDir::exclusive`).
fn setup_exclusive(tag: &str) -> TestDir {
    require_root();
    require_bwrap();
    TestDir::exclusive(tag)
}

/// The session's environment, from `env -0` run directly (no shell).
fn session_env(out: &Out) -> std::collections::BTreeMap<String, String> {
    out.stdout_bytes
        .split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .filter_map(|e| {
            let s = String::from_utf8_lossy(e);
            s.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect()
}

// ---------------------------------------------------------------- sentinel, environment

#[test]
fn environment_is_cleared_to_the_allow_list_and_sentinels_are_set() {
    let _machine = crate::support::share_machine();
    let td = setup("env");
    let cfg = td.config("{\n  passEnv: [\"AST_PASSED_BY_CONFIG\"],\n}\n");
    let out = Launcher::new(&td.ws())
        .config(&cfg)
        // Secrets and hooks that must never reach a session.
        .env("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
        .env("GITHUB_TOKEN", "ghp_secret_value")
        .env("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")
        .env("DISPLAY", ":77")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus")
        .env("VSCODE_IPC_HOOK_CLI", "/tmp/vscode-ipc.sock")
        .env("XDG_RUNTIME_DIR", "/run/user/0")
        .env("DOCKER_HOST", "unix:///run/docker.sock")
        .env("GIT_SSH_COMMAND", "ssh -o ProxyCommand=evil")
        .env("GIT_CONFIG_GLOBAL", "/etc/passwd")
        .env("NODE_OPTIONS", "--require /tmp/evil.js")
        .env("PYTHONPATH", "/tmp/evil")
        .env("BASH_ENV", "/tmp/evil.sh")
        .env("ENV", "/tmp/evil.sh")
        .env("IFS", ":")
        // Harmless loader values: preloading libc again is a no-op, and the
        // library path does not exist.
        .env("LD_PRELOAD", "libc.so.6")
        .env("LD_LIBRARY_PATH", "/nonexistent-agent-sandbox-test")
        .env("AST_NOT_PASSED", "not-passed-value")
        // Allowed ones.
        .env("TERM", "xterm-256color")
        .env("LANG", "C.UTF-8")
        .env("LC_PAPER", "C")
        .env("VIRTUAL_ENV", "/opt/venv-test")
        .env("AST_PASSED_BY_CONFIG", "passed-by-config-value")
        // PATH and HOME cannot be steered: relative PATH entries are dropped,
        // HOME comes from the password database.
        .env("PATH", format!("relative/bin::{SYSTEM_PATH}"))
        .env("HOME", "/nonexistent-home")
        .run(&["/usr/bin/env", "-0"]);
    out.assert_ok();
    let env = session_env(&out);
    for secret in [
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "SSH_AUTH_SOCK",
        "DISPLAY",
        "DBUS_SESSION_BUS_ADDRESS",
        "VSCODE_IPC_HOOK_CLI",
        "XDG_RUNTIME_DIR",
        "DOCKER_HOST",
        "GIT_SSH_COMMAND",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "AST_NOT_PASSED",
    ] {
        assert!(!env.contains_key(secret), "{secret} reached the session: {env:?}");
    }
    let values: Vec<&String> = env.values().collect();
    for v in ["aws-secret-value", "ghp_secret_value", "not-passed-value"] {
        assert!(!values.iter().any(|x| x.contains(v)), "secret value {v} found inside: {env:?}");
    }
    assert_eq!(env.get("TERM").map(String::as_str), Some("xterm-256color"));
    assert_eq!(env.get("LANG").map(String::as_str), Some("C.UTF-8"));
    assert_eq!(env.get("LC_PAPER").map(String::as_str), Some("C"));
    assert_eq!(env.get("VIRTUAL_ENV").map(String::as_str), Some("/opt/venv-test"));
    assert_eq!(env.get("AST_PASSED_BY_CONFIG").map(String::as_str), Some("passed-by-config-value"));
    assert_eq!(env.get("PATH").map(String::as_str), Some(SYSTEM_PATH), "relative PATH entries must be dropped");
    assert_eq!(env.get("HOME").map(String::as_str), Some(root_account().home.to_str().unwrap()));
    assert_ne!(env.get("GIT_CONFIG_GLOBAL").map(String::as_str), Some("/etc/passwd"));
    assert_eq!(env.get("GIT_CONFIG_NOSYSTEM").map(String::as_str), Some("1"));
    assert_eq!(env.get("IS_SANDBOX").map(String::as_str), Some("1"));
    assert_eq!(env.get("IS_SANDBOX_AGENT").map(String::as_str), Some("claude"), "claude is the default agent");
}

#[test]
fn sentinel_names_each_agent_and_update_checks_are_off() {
    let _machine = crate::support::share_machine();
    let td = setup("sentinel");
    let expected: [(&str, &[(&str, &str)]); 3] = [
        ("claude", &[("DISABLE_AUTOUPDATER", "1")]),
        ("codex", &[("CODEX_DISABLE_UPDATE_CHECK", "1")]),
        ("pi", &[("PI_SKIP_VERSION_CHECK", "1"), ("PI_OFFLINE_UPDATE_CHECK", "1")]),
    ];
    for (agent, vars) in expected {
        let out = Launcher::new(&td.ws()).agent(agent).run(&["/usr/bin/env", "-0"]);
        out.assert_ok();
        let env = session_env(&out);
        assert_eq!(env.get("IS_SANDBOX").map(String::as_str), Some("1"), "{agent}: {env:?}");
        assert_eq!(env.get("IS_SANDBOX_AGENT").map(String::as_str), Some(agent), "{agent}: {env:?}");
        for (k, v) in vars {
            assert_eq!(env.get(*k).map(String::as_str), Some(*v), "{agent}: {k}: {env:?}");
        }
    }
}

// ---------------------------------------------------------------- home, dotfile masks

#[test]
fn home_is_empty_except_the_agents_own_state() {
    let _machine = crate::support::share_machine();
    let td = setup("home");
    let home = root_account().home;
    let u = unique("agent-sandbox-test");
    let secret = PlacedFile::new(&home.join(format!(".{u}-secret")), "outer-home-secret\n");
    let ssh = PlacedFile::new(&home.join(format!(".ssh/{u}")), "ssh-key\n");
    let claude_state = PlacedFile::new(&home.join(format!(".claude/{u}")), "claude-state\n");
    let codex_state = PlacedFile::new(&home.join(format!(".codex/{u}")), "codex-state\n");
    let share = PlacedFile::new(&home.join(format!(".local/share/{u}")), "shared-cache\n");
    let keyring = PlacedFile::new(&home.join(format!(".local/share/keyrings/{u}")), "keyring\n");
    let written_back = home.join(format!(".claude/{u}-written-inside"));
    let script = format!(
        "echo HOME=$HOME
         cat {secret} 2>/dev/null; echo secret=$?
         cat {ssh} 2>/dev/null; echo ssh=$?
         echo claude=$(cat {claude} 2>/dev/null)
         cat {codex} 2>/dev/null; echo codex=$?
         cat {share} 2>/dev/null; echo share=$?
         cat {keyring} 2>/dev/null; echo keyring=$?
         echo inside > {back}; echo writeback=$?
         echo listing=$(ls -A ~ | grep -c {u})",
        secret = secret.path.display(),
        ssh = ssh.path.display(),
        claude = claude_state.path.display(),
        codex = codex_state.path.display(),
        share = share.path.display(),
        keyring = keyring.path.display(),
        back = written_back.display(),
    );
    let out = Launcher::new(&td.ws()).agent("claude").sh(&script);
    let _back_guard = PlacedFileCleanup(written_back.clone());
    out.assert_ok();
    assert_eq!(out.get("HOME"), home.display().to_string(), "{out}");
    assert_eq!(out.get("secret"), "1", "a file in the outer home is visible inside\n{out}");
    assert_eq!(out.get("ssh"), "1", "~/.ssh is visible inside\n{out}");
    assert_eq!(out.get("claude"), "claude-state", "~/.claude is not bound back for --agent claude\n{out}");
    assert_eq!(out.get("codex"), "1", "~/.codex is visible to --agent claude\n{out}");
    // The sandbox's own ~/.local/share, not the user's (shareToolDirs is off).
    assert_eq!(out.get("share"), "1", "the outer ~/.local/share is visible inside\n{out}");
    assert_eq!(out.get("keyring"), "1", "~/.local/share/keyrings is visible inside\n{out}");
    assert_eq!(out.get("writeback"), "0", "{out}");
    assert_eq!(out.get("listing"), "0", "the outer home's entries are listed inside\n{out}");
    assert_eq!(std::fs::read_to_string(&written_back).unwrap(), "inside\n", "agent state written inside did not persist");

    // The other way round for codex.
    let out = Launcher::new(&td.ws()).agent("codex").sh(&format!(
        "echo codex=$(cat {} 2>/dev/null); cat {} 2>/dev/null; echo claude=$?",
        codex_state.path.display(),
        claude_state.path.display()
    ));
    out.assert_ok();
    assert_eq!(out.get("codex"), "codex-state", "~/.codex is not bound back for --agent codex\n{out}");
    assert_eq!(out.get("claude"), "1", "~/.claude is visible to --agent codex\n{out}");
    drop((secret, ssh, claude_state, codex_state, share, keyring));
}

/// Removes a path on drop (files the session wrote into shared places).
struct PlacedFileCleanup(PathBuf);
impl Drop for PlacedFileCleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn credential_dotfiles_and_system_secrets_read_empty() {
    let _machine = crate::support::share_machine();
    let td = setup("dotfiles");
    for f in ["/etc/shadow", "/etc/gshadow"] {
        let len = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{f} is empty or missing outside; the test needs a real one (install the passwd package)");
    }
    let out = Launcher::new(&td.ws()).sh("for f in ~/.netrc ~/.Xauthority ~/.ICEauthority /etc/shadow /etc/gshadow; do
           cat \"$f\" > /tmp/content; r=$?; echo \"$f=rc$r:$(wc -c < /tmp/content)\"
         done
         echo write=$(echo x 2>/dev/null > ~/.netrc; echo $?)");
    out.assert_ok();
    let home = root_account().home;
    for f in [".netrc", ".Xauthority", ".ICEauthority"] {
        assert_eq!(out.get(&format!("{}/{f}", home.display())), "rc0:0", "~/{f} must read as empty\n{out}");
    }
    assert_eq!(out.get("/etc/shadow"), "rc0:0", "{out}");
    assert_eq!(out.get("/etc/gshadow"), "rc0:0", "{out}");
    assert_ne!(out.get("write"), "0", "~/.netrc must not be writable\n{out}");
}

// ---------------------------------------------------------------- privileges

fn own_status() -> String {
    std::fs::read_to_string("/proc/self/status").unwrap()
}

#[test]
fn capabilities_are_dropped_no_new_privs_and_namespaces_are_new() {
    let _machine = crate::support::share_machine();
    let td = setup("privs");
    let out = Launcher::new(&td.ws()).sh("cat /proc/self/status
         for n in pid ipc uts; do echo ns_$n=$(readlink /proc/self/ns/$n); done");
    out.assert_ok();
    for cap in ["CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"] {
        assert_eq!(status_field(&out.stdout, cap).as_deref(), Some("0000000000000000"), "{cap}\n{out}");
    }
    assert_eq!(status_field(&out.stdout, "NoNewPrivs").as_deref(), Some("1"), "{out}");
    assert_eq!(status_field(&out.stdout, "Seccomp").as_deref(), Some("2"), "no seccomp filter\n{out}");
    for ns in ["pid", "ipc", "uts"] {
        let outer = std::fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
        assert_ne!(out.get(&format!("ns_{ns}")), outer.display().to_string(), "the {ns} namespace is shared with the outside\n{out}");
    }
}

#[test]
fn setuid_binary_does_not_elevate_for_a_non_root_user() {
    let _machine = crate::support::share_machine();
    let td = setup("setuid");
    let user = test_user();
    let ws = td.ws();
    chown(&ws, user.uid, user.gid);
    // Outside the workspace's parent, so it is visible (read-only) inside.
    let suid = td.aux().join("suid-id");
    std::fs::copy("/usr/bin/id", &suid).unwrap();
    chown(&suid, 0, 0);
    chmod(&suid, 0o4755);
    // Control: outside a session the copy does elevate (the file system
    // honours setuid), so the check inside means something.
    let outside = output_of_new_program(std::process::Command::new(&suid).arg("-u").uid(user.uid).gid(user.gid));
    assert_eq!(String::from_utf8_lossy(&outside.stdout).trim(), "0", "control: setuid copy of id does not elevate outside");
    let out = Launcher::as_account(&ws, user.clone())
        .bin(&td.public_bin())
        .sh(&format!("echo uid=$(id -u); echo euid=$({} -u); grep -E '^(CapEff|NoNewPrivs)' /proc/self/status", suid.display()));
    out.assert_ok();
    assert_eq!(out.get("uid"), user.uid.to_string(), "{out}");
    assert_eq!(out.get("euid"), user.uid.to_string(), "the setuid binary elevated inside the session\n{out}");
    assert_eq!(status_field(&out.stdout, "CapEff").as_deref(), Some("0000000000000000"), "{out}");
    assert_eq!(status_field(&out.stdout, "NoNewPrivs").as_deref(), Some("1"), "{out}");
}

#[test]
fn non_root_users_home_is_the_one_masked() {
    let _machine = crate::support::share_machine();
    let td = setup("userhome");
    let user = test_user();
    let ws = td.ws();
    chown(&ws, user.uid, user.gid);
    let u = unique("agent-sandbox-test");
    let secret = PlacedFile::new(&user.home.join(format!(".{u}-secret")), "user-secret\n");
    chown(&secret.path, user.uid, user.gid);
    let out = Launcher::as_account(&ws, user.clone()).bin(&td.public_bin()).sh(&format!(
        "echo HOME=$HOME; echo USER=$USER; echo uid=$(id -u)
         cat {} 2>/dev/null; echo secret=$?
         echo netrc=$(wc -c < ~/.netrc)
         echo ws=$(touch inside-{u} && echo ok)",
        secret.path.display()
    ));
    out.assert_ok();
    assert_eq!(out.get("HOME"), user.home.display().to_string(), "{out}");
    assert_eq!(out.get("USER"), user.name, "{out}");
    assert_eq!(out.get("uid"), user.uid.to_string(), "{out}");
    assert_eq!(out.get("secret"), "1", "a file in the user's home is visible inside\n{out}");
    assert_eq!(out.get("netrc"), "0", "{out}");
    assert_eq!(out.get("ws"), "ok", "{out}");
    let (uid, _) = owner_mode(&ws.join(format!("inside-{u}")));
    assert_eq!(uid, user.uid, "files written inside must belong to the user outside");
}

// ---------------------------------------------------------------- IPC, runtime dirs, engine sockets

/// A python3 snippet that tries to connect to each unix socket path given
/// as an argument and prints `PATH=ok` or `PATH=ERRNO-NAME`.
const CONNECT_PY: &str = r#"
import errno, socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p)
        print(p + "=ok")
    except OSError as e:
        print(p + "=" + errno.errorcode.get(e.errno, str(e.errno)))
"#;

/// Runs CONNECT_PY inside a session against `paths` (each reachable from
/// outside, checked first) and asserts none is reachable inside.
fn assert_unreachable_inside(td: &TestDir, paths: &[PathBuf]) {
    let py = python3();
    for p in paths {
        assert!(std::os::unix::net::UnixStream::connect(p).is_ok(), "control: cannot connect to {} outside the session", p.display());
    }
    let mut args: Vec<&str> = vec![py.to_str().unwrap(), "-c", CONNECT_PY];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    let out = Launcher::new(&td.ws()).run(&args);
    out.assert_ok();
    for p in paths {
        assert_ne!(out.get(p.to_str().unwrap()), "ok", "{} is reachable inside the session\n{out}", p.display());
    }
}

#[test]
fn outer_sockets_in_tmp_and_run_user_are_unreachable() {
    let _machine = crate::support::share_machine();
    let td = setup_exclusive("ipc");
    let u = unique("agent-sandbox-test");
    // VS Code IPC and git credential sockets live in /tmp; desktop, agent
    // and IDE sockets under /run/user/UID.
    let (tmp_sock, _l1) = PlacedFile::socket(Path::new(&format!("/tmp/{u}.sock")));
    let (run_user_sock, _l2) = PlacedFile::socket(Path::new(&format!("/run/user/{u}/bus")));
    assert_unreachable_inside(&td, &[tmp_sock.path.clone(), run_user_sock.path.clone()]);
    // /tmp inside is private: a file written there does not appear outside.
    let marker = format!("/tmp/{u}-private");
    Launcher::new(&td.ws()).sh(&format!("echo x > {marker}")).assert_ok();
    assert!(!Path::new(&marker).exists(), "a file written to /tmp inside appeared outside");
}

/// A listening socket at `p` for the test's duration: the real one when it
/// is alive, otherwise the test's own (replacing a stale one).
fn engine_socket(p: &Path) -> Option<(PlacedFile, std::os::unix::net::UnixListener)> {
    if std::os::unix::net::UnixStream::connect(p).is_ok() {
        return None;
    }
    let _ = std::fs::remove_file(p);
    Some(PlacedFile::socket(p))
}

#[test]
fn container_engine_sockets_and_run_secrets_are_unreachable() {
    let _machine = crate::support::share_machine();
    let td = setup_exclusive("engines");
    let _docker = engine_socket(Path::new("/run/docker.sock"));
    let _containerd = engine_socket(Path::new("/run/containerd/containerd.sock"));
    let u = unique("agent-sandbox-test");
    let secret = PlacedFile::new(&PathBuf::from(format!("/run/secrets/{u}")), "mounted-secret\n");
    assert_unreachable_inside(
        &td,
        &[PathBuf::from("/run/docker.sock"), PathBuf::from("/var/run/docker.sock"), PathBuf::from("/run/containerd/containerd.sock")],
    );
    let out = Launcher::new(&td.ws()).sh(&format!("cat {} 2>/dev/null; echo secret=$?", secret.path.display()));
    out.assert_ok();
    assert_eq!(out.get("secret"), "1", "/run/secrets is readable inside\n{out}");
}

#[test]
fn inherited_descriptors_do_not_leak_into_the_session() {
    let _machine = crate::support::share_machine();
    let td = setup("fds");
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&a);
    let mut cmd = Launcher::new(&td.ws()).run_command(&["/bin/sh", "-c", "for f in /proc/$$/fd/*; do echo \"${f##*/}=$(readlink $f)\"; done"]);
    // SAFETY: dup2 is async-signal-safe; it clears close-on-exec on fd 20,
    // as a careless parent (an IDE, a multiplexer) would leave it.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(fd, 20) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(!stdout.lines().any(|l| l.starts_with("20=")), "fd 20 leaked into the session:\n{stdout}");
    assert!(!stdout.contains("socket:"), "an outer socket leaked into the session:\n{stdout}");
}

// ---------------------------------------------------------------- terminal

const IOCTL_PY: &str = r#"
import fcntl, os, termios
print("isatty=%s" % os.isatty(0))
for name, req in (("TIOCSTI", termios.TIOCSTI), ("TIOCLINUX", 0x541C)):
    try:
        fcntl.ioctl(0, req, b"x")
        print("%s=0" % name)
    except OSError as e:
        print("%s=%d" % (name, e.errno))
print("DONE")
"#;

#[test]
fn tiocsti_and_tioclinux_fail_with_eperm_on_the_terminal() {
    let _machine = crate::support::share_machine();
    let td = setup("tiocsti");
    let py = python3();
    let cmd = Launcher::new(&td.ws()).run_command(&[py.to_str().unwrap(), "-c", IOCTL_PY]);
    let mut pty = PtyChild::spawn(cmd);
    let status = pty.wait(Duration::from_secs(20)).expect("the session did not finish");
    pty.read_to_end(Duration::from_secs(2));
    let text = pty.text();
    assert!(status.success(), "{status:?}\n{text}");
    assert!(text.contains("DONE"), "{text}");
    assert!(text.contains("isatty=True"), "the session's stdin is not the terminal\n{text}");
    // The kernel itself answers EIO (legacy_tiocsti off) or succeeds; only
    // the session's seccomp filter answers EPERM (1).
    assert!(text.contains("TIOCSTI=1"), "TIOCSTI did not fail with EPERM\n{text}");
    assert!(text.contains("TIOCLINUX=1"), "TIOCLINUX did not fail with EPERM\n{text}");
}

#[test]
fn window_resize_reaches_a_session_on_a_terminal() {
    let _machine = crate::support::share_machine();
    let td = setup("winch");
    let cmd = Launcher::new(&td.ws()).run_command(&[
        "/bin/sh",
        "-c",
        "trap 'echo WINCH-$(stty size)' WINCH; echo READY; i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done",
    ]);
    let mut pty = PtyChild::spawn(cmd);
    assert!(pty.expect("READY", Duration::from_secs(20)), "the session did not start\n{}", pty.text());
    pty.resize(33, 99);
    assert!(pty.expect("WINCH-33 99", Duration::from_secs(10)), "SIGWINCH (or the new size) did not reach the session\n{}", pty.text());
}

#[test]
fn job_control_works_on_a_terminal() {
    let _machine = crate::support::share_machine();
    let td = setup("jobs");
    require_tool("/bin/bash", "apt-get install bash");
    // The job waits until it is the terminal's foreground process group
    // (bash's `fg` made it so), says so, and sleeps; Ctrl-Z from the
    // terminal must then stop it and hand control back to bash.
    let job = r#"sh -c 'while :; do set -- $(cat /proc/$$/stat); [ "$5" = "$8" ] && break; sleep 0.05; done; echo FOREGROUND; exec sleep 30'"#;
    let script = format!("set -m; {job} & echo STARTED; fg %1; echo FG-STATUS=$?; kill -9 %1 2>/dev/null; echo END");
    let cmd = Launcher::new(&td.ws()).run_command(&["/bin/bash", "--norc", "--noprofile", "-c", &script]);
    let mut pty = PtyChild::spawn(cmd);
    assert!(pty.expect("FOREGROUND", Duration::from_secs(20)), "the job never became the foreground\n{}", pty.text());
    std::thread::sleep(Duration::from_millis(200));
    pty.send(b"\x1a"); // Ctrl-Z
    assert!(pty.expect("END", Duration::from_secs(10)), "Ctrl-Z did not stop the job\n{}", pty.text());
    let text = pty.text();
    assert!(text.contains("FG-STATUS=148"), "the job was not stopped by SIGTSTP (148 = 128+20)\n{text}");
}

// ---------------------------------------------------------------- syscalls, abstract sockets

/// A python3 snippet that makes raw system calls (numbers passed in as
/// `NAME=NR` arguments, the native ones of this build) and opens sockets,
/// printing `what=0` on success or `what=ERRNO`.
const SYSCALLS_PY: &str = r#"
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
nr = dict(a.split("=") for a in sys.argv[1:])
def sc(name, *args):
    r = libc.syscall(ctypes.c_long(int(nr[name])), *[ctypes.c_long(a) for a in args])
    return 0 if r >= 0 else ctypes.get_errno()
params = ctypes.create_string_buffer(120)
print("keyctl=%d" % sc("keyctl", 0, -3, 0))                     # KEYCTL_GET_KEYRING_ID @s
print("add_key=%d" % sc("add_key", ctypes.cast(ctypes.c_char_p(b"user"), ctypes.c_void_p).value,
                         ctypes.cast(ctypes.c_char_p(b"k"), ctypes.c_void_p).value, 0, 0, -3))
print("io_uring_setup=%d" % sc("io_uring_setup", 4, ctypes.addressof(params)))
print("userfaultfd=%d" % sc("userfaultfd", 0o2000000 | 1))      # O_CLOEXEC | UFFD_USER_MODE_ONLY
print("personality_rie=%d" % sc("personality", 0x0400000))      # READ_IMPLIES_EXEC
print("personality_norandom=%d" % sc("personality", 0x0040000)) # gdb's ADDR_NO_RANDOMIZE
for name, fam, ty in (("vsock", 40, 1), ("packet", 17, 3), ("alg", 38, 5), ("bluetooth", 31, 1), ("unix", 1, 1),
                      ("inet", 2, 2), ("netlink", 16, 3)):
    try:
        socket.socket(fam, ty).close()
        print("socket_%s=0" % name)
    except OSError as e:
        print("socket_%s=%d" % (name, e.errno))
"#;

fn syscall_numbers() -> Vec<String> {
    [
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("userfaultfd", libc::SYS_userfaultfd),
        ("personality", libc::SYS_personality),
    ]
    .iter()
    .map(|(n, v)| format!("{n}={v}"))
    .collect()
}

/// What the profile refuses fails with its errno; the sockets agents use
/// open (run by a non-root user, as agents usually are).
#[test]
fn the_syscall_profile_refuses_keyrings_vsock_io_uring_and_weakening_personalities() {
    let _machine = crate::support::share_machine();
    let td = setup("syscalls");
    let user = test_user();
    chown(&td.ws(), user.uid, user.gid);
    let py = python3();
    let nrs = syscall_numbers();
    let mut args: Vec<&str> = vec![py.to_str().unwrap(), "-c", SYSCALLS_PY];
    args.extend(nrs.iter().map(String::as_str));
    let out = Launcher::as_account(&td.ws(), user).bin(&td.public_bin()).run(&args);
    out.assert_ok();
    let (eperm, enosys, eafnosupport) = (libc::EPERM.to_string(), libc::ENOSYS.to_string(), libc::EAFNOSUPPORT.to_string());
    for (key, want) in [
        ("keyctl", &eperm),
        ("add_key", &eperm),
        ("io_uring_setup", &enosys),
        ("userfaultfd", &eperm),
        ("personality_rie", &eperm),
        ("socket_vsock", &eafnosupport),
        ("socket_packet", &eafnosupport),
        ("socket_alg", &eafnosupport),
        ("socket_bluetooth", &eafnosupport),
    ] {
        assert_eq!(&out.get(key), want, "{key}\n{out}");
    }
    for key in ["personality_norandom", "socket_unix", "socket_inet", "socket_netlink"] {
        assert_eq!(out.get(key), "0", "{key} must work inside\n{out}");
    }
}

/// Nested user namespaces keep working with the tools agents use:
/// `unshare -r` (and mounting inside it) and a bubblewrap sandbox inside
/// the session (browsers' and build tools' sandboxes). (A fresh /proc
/// cannot be mounted inside: the session's /proc has read-only covers,
/// which the kernel will not let a nested namespace see past.)
#[test]
fn nested_user_namespaces_and_sandboxes_still_work() {
    let _machine = crate::support::share_machine();
    let td = setup("nested-userns");
    let user = test_user();
    chown(&td.ws(), user.uid, user.gid);
    require_tool("/usr/bin/unshare", "apt-get install util-linux");
    let out = Launcher::as_account(&td.ws(), user).bin(&td.public_bin()).sh("echo unshare_uid=$(unshare -r id -u)
         echo unshare_mount=$(unshare -rm sh -c 'mount -t tmpfs none /mnt && touch /mnt/x && echo ok')
         echo nested_bwrap=$(/usr/bin/bwrap --unshare-all --ro-bind / / --dev /dev --tmpfs /tmp -- sh -c 'echo ok' 2>&1)");
    out.assert_ok();
    assert_eq!(out.get("unshare_uid"), "0", "{out}");
    assert_eq!(out.get("unshare_mount"), "ok", "{out}");
    assert_eq!(out.get("nested_bwrap"), "ok", "{out}");
}

/// With the jail off the session shares the container's network
/// namespace, so its abstract sockets (X11, D-Bus) would be reachable;
/// Landlock's scoping keeps them out, while the session's own work.
#[test]
fn outer_abstract_sockets_are_unreachable_with_the_jail_off() {
    let _machine = crate::support::share_machine();
    use std::os::linux::net::SocketAddrExt;
    let td = setup("abstract");
    let name = unique("agent-sandbox-test-abstract");
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    assert!(std::os::unix::net::UnixStream::connect_addr(&addr).is_ok(), "control: the socket is reachable outside");
    let script = r#"
import socket, sys
def connect(name):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\0" + name)
        return "ok"
    except OSError as e:
        return str(e.errno)
print("outer=" + connect(sys.argv[1]))
l = socket.socket(socket.AF_UNIX); l.bind("\0" + sys.argv[1] + "-inner"); l.listen()
print("inner=" + connect(sys.argv[1] + "-inner"))
"#;
    let py = python3();
    let out = Launcher::new(&td.ws()).run(&[py.to_str().unwrap(), "-c", script, &name]);
    out.assert_ok();
    assert_eq!(out.get("outer"), libc::EPERM.to_string(), "the outer abstract socket is reachable\n{out}");
    assert_eq!(out.get("inner"), "ok", "{out}");
}

// ---------------------------------------------------------------- file system

#[test]
fn only_the_workspace_and_allowed_paths_are_writable() {
    let _machine = crate::support::share_machine();
    let td = setup("fs");
    let ws = td.ws();
    let u = unique("agent-sandbox-test");
    // allowWrite refuses /var/lib (where the test directories are) and
    // directories root owns: one owned by the test user, and one of root's
    // named under allowWriteRootOwned.
    let places = Planted(vec![Path::new("/srv").join(unique("agent-sandbox-allowed"))]);
    let allowed = places.0[0].join("allowed");
    let allowed_root = places.0[0].join("allowed-root");
    let not_allowed = td.aux().join("not-allowed");
    for d in [&allowed, &allowed_root, &not_allowed] {
        mkdir(d);
    }
    let user = test_user();
    chown(&allowed, user.uid, user.gid);
    let cfg = td.config(&format!("{{\n  allowWrite: [\"{}\"],\n  allowWriteRootOwned: [\"{}\"],\n}}\n", allowed.display(), allowed_root.display()));
    let parent = td.peers_dir();
    let script = format!(
        "t() {{ if echo x 2>/dev/null > \"$2\"; then echo $1=written; else echo $1=refused; fi; }}
         t etc /etc/{u}
         t usr /usr/{u}
         t parent {parent}/{u}
         t aux {not_allowed}/{u}
         t root /{u}
         t ws {ws}/{u}
         t wssub {ws}/sub-{u}
         t allowed {allowed}/{u}
         t allowed_root {allowed_root}/{u}
         t tmp /tmp/{u}",
        parent = parent.display(),
        not_allowed = not_allowed.display(),
        ws = ws.display(),
        allowed = allowed.display(),
        allowed_root = allowed_root.display(),
    );
    let out = Launcher::new(&ws).config(&cfg).sh(&script);
    out.assert_ok();
    for (k, want) in [
        ("etc", "refused"),
        ("usr", "refused"),
        ("parent", "refused"),
        ("aux", "refused"),
        ("root", "refused"),
        ("ws", "written"),
        ("wssub", "written"),
        ("allowed", "written"),
        ("allowed_root", "written"),
        ("tmp", "written"),
    ] {
        assert_eq!(out.get(k), want, "{k}\n{out}");
    }
    assert!(ws.join(&u).is_file(), "a file written in the workspace is missing outside");
    assert!(allowed.join(&u).is_file(), "a file written in an allowWrite path is missing outside");
    assert!(allowed_root.join(&u).is_file(), "a file written in an allowWriteRootOwned path is missing outside");
    // Without the explicit key, root's directory is refused, naming why.
    let cfg = td.config(&format!("{{\n  allowWrite: [\"{}\"],\n}}\n", allowed_root.display()));
    let out = Launcher::new(&ws).config(&cfg).sh("echo RAN");
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(out.stderr.contains(":2: key \"allowWrite\"") && out.stderr.contains("root owns it") && out.stderr.contains("allowWriteRootOwned"), "{out}");
    for p in [PathBuf::from("/etc").join(&u), PathBuf::from("/usr").join(&u), parent.join(&u), not_allowed.join(&u)] {
        assert!(!p.exists(), "{} was written from inside", p.display());
    }
}

#[test]
fn siblings_are_hidden_without_peers_and_read_only_with_peers() {
    let _machine = crate::support::share_machine();
    let td = setup("peers");
    let sib = td.peers_dir().join("sibling-checkout");
    write(&sib.join("README"), "peer-content\n");
    let script = format!(
        "echo read=$(cat {f} 2>/dev/null || echo none)
         echo count=$(ls -A {d} 2>/dev/null | wc -l)
         if echo x 2>/dev/null > {d}/new; then echo write=written; else echo write=refused; fi",
        f = sib.join("README").display(),
        d = sib.display()
    );
    let out = Launcher::new(&td.ws()).sh(&script);
    out.assert_ok();
    assert_eq!(out.get("read"), "none", "a sibling checkout is readable without --peers\n{out}");
    assert_eq!(out.get("count"), "0", "a sibling checkout is listed without --peers\n{out}");
    assert_eq!(out.get("write"), "refused", "{out}");

    let out = Launcher::new(&td.ws()).peers().sh(&script);
    out.assert_ok();
    assert_eq!(out.get("read"), "peer-content", "--peers does not make siblings readable\n{out}");
    assert_eq!(out.get("count"), "1", "{out}");
    assert_eq!(out.get("write"), "refused", "--peers made a sibling writable\n{out}");
    assert!(!sib.join("new").exists());

    // `peers: true` in the config does the same.
    let cfg = td.config("{ peers: true }\n");
    let out = Launcher::new(&td.ws()).config(&cfg).sh(&script);
    out.assert_ok();
    assert_eq!(out.get("read"), "peer-content", "peers: true does not make siblings readable\n{out}");
    assert_eq!(out.get("write"), "refused", "{out}");
}

#[test]
fn host_executed_parts_of_the_workspace_are_read_only() {
    let _machine = crate::support::share_machine();
    let td = setup("hostexec");
    let ws = td.ws();
    write(&ws.join(".devcontainer/devcontainer.json"), "{}\n");
    write(&ws.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
    let out = Launcher::new(&ws).sh("t() { if (echo x > \"$2\") 2>/dev/null; then echo $1=written; else echo $1=refused; fi; }
         t devcontainer .devcontainer/devcontainer.json
         t devcontainer_new .devcontainer/other.json
         t hook .git/hooks/pre-commit
         t gitconfig_ok .git/description");
    out.assert_ok();
    assert_eq!(out.get("devcontainer"), "refused", "{out}");
    assert_eq!(out.get("devcontainer_new"), "refused", "{out}");
    assert_eq!(out.get("hook"), "refused", "{out}");
    assert_eq!(out.get("gitconfig_ok"), "written", "the rest of .git must stay writable\n{out}");
    assert_eq!(std::fs::read_to_string(ws.join(".devcontainer/devcontainer.json")).unwrap(), "{}\n");
    assert!(!ws.join(".git/hooks/pre-commit").exists());

    // A .git without hooks: none can be planted either.
    let ws2 = td.workspace("second");
    mkdir(&ws2.join(".git"));
    let out =
        Launcher::new(&ws2).sh("if (mkdir -p .git/hooks && echo x > .git/hooks/post-checkout) 2>/dev/null; then echo hook=written; else echo hook=refused; fi");
    out.assert_ok();
    assert_eq!(out.get("hook"), "refused", "{out}");
    assert!(!ws2.join(".git/hooks/post-checkout").exists());
}

// ---------------------------------------------------------------- exit status, arguments

#[test]
fn exit_status_and_signals_propagate() {
    let _machine = crate::support::share_machine();
    let td = setup("exit");
    let out = Launcher::new(&td.ws()).sh("exit 42");
    assert_eq!(out.status.code(), Some(42), "{out}");
    let out = Launcher::new(&td.ws()).sh("exit 0");
    assert_eq!(out.status.code(), Some(0), "{out}");
    // The command dies by SIGTERM: the launcher (bwrap) exits 128+15; the
    // launcher process itself is not killed (code() is Some(143)).
    let out = Launcher::new(&td.ws()).sh("kill -TERM $$");
    assert_eq!(out.status.code(), Some(143), "{out}");
    let out = Launcher::new(&td.ws()).sh("kill -KILL $$");
    assert_eq!(out.status.code(), Some(137), "{out}");
    // A missing command: bwrap's own failure, not success.
    let out = Launcher::new(&td.ws()).run(&["/nonexistent-agent-sandbox-command"]);
    assert_ne!(out.status.code(), Some(0), "{out}");
}

#[test]
fn nothing_is_left_when_the_launcher_dies() {
    let _machine = crate::support::share_machine();
    let td = setup("orphan");
    let token = unique("agent-sandbox-orphan-token");
    let mut child = Launcher::new(&td.ws())
        .run_command(&["/bin/sh", "-c", &format!("sleep 60 & sleep 60; : {token}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the command itself (not only bwrap's forks, which may not
    // have armed their parent-death signal yet), and note its pid namespace.
    let is_command = |pid: &u32| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.starts_with(b"/bin/sh\0-c\0"));
    let mut pidns = None;
    let appeared = wait_for(Duration::from_secs(10), || {
        pidns = pids_with_cmdline(&token).iter().find(|p| is_command(p)).and_then(|p| std::fs::read_link(format!("/proc/{p}/ns/pid")).ok());
        pidns.is_some()
    });
    assert!(appeared, "the session's command never started");
    let pidns = pidns.unwrap();
    let in_session = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
            .filter(|pid| std::fs::read_link(format!("/proc/{pid}/ns/pid")).is_ok_and(|l| l == pidns))
            .collect()
    };
    assert!(wait_for(Duration::from_secs(10), || in_session().len() >= 4), "expected bwrap's init, sh and two sleeps in the session: {:?}", in_session());
    child.kill().unwrap(); // SIGKILL: the launcher gets no chance to clean up
    let st = child.wait().unwrap();
    assert_eq!(st.signal(), Some(9));
    assert!(wait_for(Duration::from_secs(10), || in_session().is_empty()), "session processes survived their launcher: {:?}", in_session());
}

#[test]
fn arguments_arrive_intact() {
    let _machine = crate::support::share_machine();
    let td = setup("args");
    let args: Vec<&OsStr> = vec![
        OsStr::new("/usr/bin/printf"),
        OsStr::new("[%s]\n"),
        OsStr::new("a b"),
        OsStr::new("it's"),
        OsStr::new("x\ny"),
        OsStr::new("$HOME"),
        OsStr::new("*"),
        OsStr::new(""),
        OsStr::new("--"),
        OsStr::new("\"q\" \\ `id`"),
        OsStr::from_bytes(b"\xff\xfe"),
    ];
    let out = Launcher::new(&td.ws()).run_os(&args);
    out.assert_ok();
    let mut want = b"[a b]\n[it's]\n[x\ny]\n[$HOME]\n[*]\n[]\n[--]\n[\"q\" \\ `id`]\n[".to_vec();
    want.extend_from_slice(b"\xff\xfe]\n");
    assert_eq!(out.stdout_bytes, want, "{out}");
}

// ---------------------------------------------------------------- recursion

#[test]
fn a_session_inside_a_session_runs_directly() {
    let _machine = crate::support::share_machine();
    let td = setup("nested");
    let bin = visible_copy(&bin());
    assert!(
        !bin.starts_with(td.peers_dir()) && !bin.starts_with("/tmp") && !bin.starts_with(root_account().home),
        "the binary must be visible inside the session"
    );
    let script = format!(
        "echo outer_pidns=$(readlink /proc/self/ns/pid)
         echo outer_mntns=$(readlink /proc/self/ns/mnt)
         echo outer_filters=$(sed -n \"s/^Seccomp_filters:[[:space:]]*//p\" /proc/self/status)
         {bin} run -- /bin/sh -c 'echo inner_is_sandbox=$IS_SANDBOX
           echo inner_pidns=$(readlink /proc/self/ns/pid)
           echo inner_mntns=$(readlink /proc/self/ns/mnt)
           echo inner_filters=$(sed -n \"s/^Seccomp_filters:[[:space:]]*//p\" /proc/self/status)
           exit 7'
         echo inner_exit=$?",
        bin = bin.display()
    );
    let out = Launcher::new(&td.ws()).sh(&script);
    out.assert_ok();
    assert_eq!(out.get("inner_is_sandbox"), "1", "{out}");
    assert_eq!(out.get("inner_pidns"), out.get("outer_pidns"), "the nested session got its own pid namespace\n{out}");
    assert_eq!(out.get("inner_mntns"), out.get("outer_mntns"), "the nested session got its own mount namespace\n{out}");
    assert_eq!(out.get("inner_filters"), out.get("outer_filters"), "a second seccomp layer was stacked\n{out}");
    let outside: u32 = status_field(&own_status(), "Seccomp_filters").and_then(|v| v.parse().ok()).unwrap_or(0);
    assert_eq!(out.get("outer_filters"), (outside + 1).to_string(), "the session has exactly one filter of its own\n{out}");
    assert_eq!(out.get("inner_exit"), "7", "the nested command's exit status was lost\n{out}");
}

// ---------------------------------------------------------------- entry points, own binaries

#[test]
fn entry_points_in_a_writable_path_directory_cannot_be_shadowed() {
    let _machine = crate::support::share_machine();
    let td = setup("entry");
    let ws = td.ws();
    let venv_bin = ws.join(".venv/bin");
    mkdir(&venv_bin);
    let shim_dir = bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}:{SYSTEM_PATH}", venv_bin.display(), shim_dir.display());
    let out = Launcher::new(&ws).env("PATH", &path).sh("for n in claude codex pi agent-sandbox; do
           f=.venv/bin/$n
           if (printf '#!/bin/sh\\necho planted\\n' > $f) 2>/dev/null; then w=written; else w=refused; fi
           chmod +x $f 2>/dev/null; rm -f $f 2>/dev/null
           echo $n=$w:$(wc -c < $f):$(command -v $n)
         done
         echo other=$( (echo x > .venv/bin/other-tool) 2>/dev/null && echo written)");
    out.assert_ok();
    for n in ["claude", "codex", "pi", "agent-sandbox"] {
        let got = out.get(n);
        let mut parts = got.splitn(3, ':');
        assert_eq!(parts.next(), Some("refused"), "{n} could be written\n{out}");
        assert_eq!(parts.next(), Some("0"), "{n} does not read empty\n{out}");
    }
    assert_eq!(out.get("other"), "written", "the rest of the venv must stay writable\n{out}");
    // Outside, after the session, nothing planted runs.
    for n in ["claude", "codex", "pi", "agent-sandbox"] {
        let p = venv_bin.join(n);
        if let Ok(m) = std::fs::metadata(&p) {
            assert_eq!(m.len(), 0, "{} was planted", p.display());
        }
    }
}

/// A PATH directory ahead of the shims that does not exist yet cannot be
/// guarded (bwrap would need a mount point in it), yet a session could
/// create it in the workspace and plant an entry point that shadows the
/// shim later, outside: the launcher refuses such a PATH, naming the fix.
#[test]
fn entry_points_cannot_be_planted_in_a_path_directory_created_inside() {
    let _machine = crate::support::share_machine();
    let td = setup("entry-new");
    let ws = td.ws();
    let venv_bin = ws.join(".venv/bin"); // does not exist yet
    let shim_dir = bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}:{SYSTEM_PATH}", venv_bin.display(), shim_dir.display());
    let out = Launcher::new(&ws).env("PATH", &path).sh("mkdir -p .venv/bin 2>/dev/null
         (printf '#!/bin/sh\\necho planted\\n' > .venv/bin/claude && chmod +x .venv/bin/claude) 2>/dev/null
         echo found=$(command -v claude)");
    out.assert_code(1);
    assert!(out.stderr.contains(&venv_bin.display().to_string()) && out.stderr.contains("PATH=$PATH:"), "{out}");
    assert!(!out.stdout.contains("found="), "the session ran\n{out}");
    assert!(!venv_bin.join("claude").exists(), "{out}");
    // Once the directory exists it is guarded and the session runs.
    std::fs::create_dir_all(&venv_bin).unwrap();
    let out = Launcher::new(&ws).env("PATH", &path).sh("(printf 'x' > .venv/bin/claude) 2>/dev/null; echo found=$(command -v claude)");
    out.assert_ok();
    let len = std::fs::metadata(venv_bin.join("claude")).map(|m| m.len()).unwrap_or(0);
    assert_eq!(len, 0, "planted from inside\n{out}");
}

/// Masking the names is not enough: a session could rename the guarded
/// directory (or one above it) away and make a new one holding a plant.
/// Guarded directories are pinned (mount points), up to the bind they lie in.
#[test]
fn a_guarded_path_directory_cannot_be_renamed_away() {
    let _machine = crate::support::share_machine();
    let td = setup("entry-rename");
    let ws = td.ws();
    let venv_bin = ws.join(".venv/bin");
    mkdir(&venv_bin);
    let shim_dir = bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}:{SYSTEM_PATH}", venv_bin.display(), shim_dir.display());
    let out = Launcher::new(&ws).env("PATH", &path).sh("mv .venv/bin .venv/bin.old 2>/dev/null && echo bin=moved || echo bin=refused
         mv .venv .venv.old 2>/dev/null && echo venv=moved || echo venv=refused
         mkdir -p .venv/bin 2>/dev/null; (printf '#!/bin/sh\necho planted\n' > .venv/bin/claude) 2>/dev/null; chmod +x .venv/bin/claude 2>/dev/null
         echo other=$( (echo x > .venv/other) 2>/dev/null && echo written)");
    out.assert_ok();
    assert_eq!((out.get("bin"), out.get("venv")), ("refused".into(), "refused".into()), "{out}");
    assert_eq!(out.get("other"), "written", "the rest of the venv stays writable\n{out}");
    assert!(!ws.join(".venv/bin.old").exists() && !ws.join(".venv.old").exists(), "{out}");
    assert_eq!(std::fs::metadata(venv_bin.join("claude")).map(|m| m.len()).unwrap_or(0), 0, "planted\n{out}");
}

/// The PATH the user's shells will have, not only this session's: a
/// directory that `pnpm setup`'s lines in ~/.bashrc put on PATH, and the
/// directory an alias of `claude` points into (Claude Code's old local
/// installer), can be planted in by no session — nor renamed away. One
/// that does not exist yet, where a session could make it, refuses the
/// launch with the line and the fix.
#[test]
fn the_users_shell_path_and_aliases_are_guarded() {
    let _machine = crate::support::share_machine();
    let td = setup("entry-shellrc");
    let user = rc_test_user();
    let ws = td.ws();
    let pnpm = ws.join("tools/pnpm");
    mkdir(&pnpm);
    let local = user.home.join(".claude/local");
    let _claude = PlacedFile::new(&local.join("claude"), "#!/bin/sh\necho the local install\n");
    for p in [&ws, &ws.join("tools"), &pnpm, &user.home.join(".claude"), &local, &local.join("claude")] {
        chown(p, user.uid, user.gid);
    }
    let bashrc = format!(
        "# pnpm\nexport PNPM_HOME=\"{}\"\ncase \":$PATH:\" in\n  *\":$PNPM_HOME:\"*) ;;\n  *) export PATH=\"$PNPM_HOME:$PATH\" ;;\nesac\n# pnpm end\nalias claude=~/.claude/local/claude\n",
        pnpm.display()
    );
    let _rc = PlacedFile::new(&user.home.join(".bashrc"), &bashrc);
    chown(&user.home.join(".bashrc"), user.uid, user.gid);
    let launcher = || Launcher::as_account(&ws, user.clone()).bin(&td.public_bin());
    let out = launcher().sh(&format!(
        "t={}
         (printf '#!/bin/sh\\necho planted\\n' > $t/claude) 2>/dev/null && echo pnpm=written || echo pnpm=refused
         mv $t $t.old 2>/dev/null && echo pnpm_dir=moved || echo pnpm_dir=refused
         (echo planted > ~/.claude/local/claude) 2>/dev/null && echo local=written || echo local=refused
         (echo x > ~/.claude/local/other) 2>/dev/null && echo local_other=written || echo local_other=refused
         mv ~/.claude/local ~/.claude/local.old 2>/dev/null && echo local_dir=moved || echo local_dir=refused
         (echo x > ~/.claude/verify-state) 2>/dev/null && echo state=written || echo state=refused; rm -f ~/.claude/verify-state",
        pnpm.display()
    ));
    out.assert_ok();
    for (k, want) in
        [("pnpm", "refused"), ("pnpm_dir", "refused"), ("local", "refused"), ("local_other", "refused"), ("local_dir", "refused"), ("state", "written")]
    {
        assert_eq!(out.get(k), want, "{k}\n{out}");
    }
    assert_eq!(std::fs::metadata(pnpm.join("claude")).map(|m| m.len()).unwrap_or(0), 0, "planted in PNPM_HOME\n{out}");
    assert_eq!(std::fs::read_to_string(local.join("claude")).unwrap(), "#!/bin/sh\necho the local install\n");

    // PNPM_HOME missing where a session could create it: refused, naming the line.
    std::fs::remove_dir_all(&pnpm).unwrap();
    let out = launcher().sh("echo ran");
    out.assert_code(1);
    assert!(!out.stdout.contains("ran"), "{out}");
    let line = format!("{}:5 puts on PATH {}, which does not exist yet", user.home.join(".bashrc").display(), pnpm.display());
    assert!(out.stderr.contains(&line) && out.stderr.contains(&format!("mkdir -p {}", pnpm.display())), "{out}");
    std::fs::remove_dir_all(user.home.join(".claude")).unwrap();
}

/// Hides every system directory holding bwrap (in a private mount
/// namespace of the child), or binds `replacement` over bwrap itself.
fn bwrap_override(hide_dir: Option<PathBuf>, replacement: Option<PathBuf>) -> impl FnMut() -> std::io::Result<()> + Send + Sync {
    use std::ffi::CString;
    let bwrap = std::fs::canonicalize("/usr/bin/bwrap").expect("bwrap at /usr/bin/bwrap");
    let target_dir = CString::new(bwrap.parent().unwrap().as_os_str().as_bytes()).unwrap();
    let target_file = CString::new(bwrap.as_os_str().as_bytes()).unwrap();
    let hide = hide_dir.map(|d| CString::new(d.as_os_str().as_bytes()).unwrap());
    let repl = replacement.map(|d| CString::new(d.as_os_str().as_bytes()).unwrap());
    move || {
        let err = || Err(std::io::Error::last_os_error());
        // SAFETY: plain system calls on pre-built C strings (no allocation).
        unsafe {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return err();
            }
            if libc::mount(c"none".as_ptr(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) != 0 {
                return err();
            }
            if let Some(h) = &hide {
                if libc::mount(h.as_ptr(), target_dir.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) != 0 {
                    return err();
                }
            }
            if let Some(r) = &repl {
                if libc::mount(r.as_ptr(), target_file.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) != 0 {
                    return err();
                }
            }
        }
        Ok(())
    }
}

#[test]
fn a_missing_bwrap_is_a_refusal_that_says_how_to_install_it() {
    let _machine = crate::support::share_machine();
    let td = setup("nobwrap");
    let others: Vec<&str> = ["/usr/sbin/bwrap", "/sbin/bwrap", "/usr/local/bin/bwrap"]
        .into_iter()
        .filter(|p| Path::new(p).exists() && !std::fs::canonicalize(p).unwrap().starts_with("/usr/bin"))
        .collect();
    assert!(others.is_empty(), "this test hides /usr/bin only; bwrap also at {others:?}");
    let empty = td.aux().join("empty-dir");
    mkdir(&empty);
    let marker = td.ws().join("ran");
    let out = Launcher::new(&td.ws()).pre_exec(bwrap_override(Some(empty), None)).sh(&format!("touch {}", marker.display()));
    out.assert_code(1);
    assert!(out.stderr.contains("bwrap"), "{out}");
    assert!(out.stderr.contains("apt-get install bubblewrap"), "the refusal does not say how to install bwrap\n{out}");
    assert!(!marker.exists(), "the command ran without bwrap");
}

#[test]
fn bwrap_is_taken_only_from_trusted_system_directories() {
    let _machine = crate::support::share_machine();
    let td = setup("trustbwrap");
    let ws = td.ws();
    // A bwrap planted in a writable PATH directory ahead of the system's is
    // never run.
    let venv_bin = ws.join(".venv/bin");
    let planted_marker = td.aux().join("planted-bwrap-ran");
    write(&venv_bin.join("bwrap"), format!("#!/bin/sh\ntouch {}\n", planted_marker.display()));
    chmod(&venv_bin.join("bwrap"), 0o755);
    let out = Launcher::new(&ws).path_first(&venv_bin).sh("echo session=$IS_SANDBOX");
    out.assert_ok();
    assert_eq!(out.get("session"), "1", "{out}");
    assert!(!planted_marker.exists(), "the launcher ran a bwrap found through PATH");

    // A bwrap not owned by root, or writable by others, is refused.
    let user = test_user();
    for (name, uid, mode, expect) in [("foreign", user.uid, 0o755, "owned by uid"), ("writable", 0, 0o775, "writable by group or others")] {
        let copy = td.aux().join(format!("bwrap-{name}"));
        std::fs::copy("/usr/bin/bwrap", &copy).unwrap();
        chown(&copy, uid, 0);
        chmod(&copy, mode);
        let marker = ws.join(format!("ran-{name}"));
        let out = Launcher::new(&ws).pre_exec(bwrap_override(None, Some(copy))).sh(&format!("touch {}", marker.display()));
        out.assert_code(1);
        assert!(out.stderr.contains("refusing to run"), "{name}\n{out}");
        assert!(out.stderr.contains(expect), "{name}\n{out}");
        assert!(!marker.exists(), "{name}: the session ran with an untrusted bwrap");
    }
}

// ---------------------------------------------------------------- git

#[test]
fn git_uses_a_curated_global_config() {
    let _machine = crate::support::share_machine();
    let td = setup("git");
    let git = ["/usr/bin/git", "/usr/local/bin/git"].into_iter().find(|p| Path::new(p).is_file());
    let git = git.unwrap_or_else(|| panic!("git is missing; install it with `apt-get install git`"));
    let user = test_user();
    let ws = td.ws();
    chown(&ws, user.uid, user.gid);
    let u = unique("id");
    let gitconfig = PlacedFile::new(
        &user.home.join(".gitconfig"),
        &format!(
            "[user]\n\tname = AS Test {u}\n\temail = astest-{u}@example.org\n\
             [alias]\n\tevil = !touch /tmp/pwned\n\
             [credential]\n\thelper = store\n\
             [core]\n\tpager = evil-pager\n\tsshCommand = evil-ssh\n\thooksPath = /tmp/hooks\n\
             [include]\n\tpath = /etc/passwd\n"
        ),
    );
    chown(&gitconfig.path, user.uid, user.gid);
    let out = Launcher::as_account(&ws, user.clone())
        .bin(&td.public_bin())
        // Outer attempts to inject config through the environment.
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "alias.injected")
        .env("GIT_CONFIG_VALUE_0", "!id")
        .env("GIT_CONFIG_GLOBAL", gitconfig.path.as_os_str())
        .sh(&format!(
            "echo '--- global'; {git} config --global --list; echo '--- all'; {git} config --list --show-origin; echo '--- end'
             echo name=$({git} config user.name)
             echo email=$({git} config user.email)"
        ));
    out.assert_ok();
    assert_eq!(out.get("name"), format!("AS Test {u}"), "{out}");
    assert_eq!(out.get("email"), format!("astest-{u}@example.org"), "{out}");
    let section = |from: &str, to: &str| -> Vec<String> {
        let s = out.stdout.split(from).nth(1).and_then(|r| r.split(to).next()).unwrap_or("");
        s.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
    };
    let global = section("--- global", "--- all");
    assert!(!global.is_empty(), "{out}");
    for line in &global {
        let key = line.split('=').next().unwrap().to_ascii_lowercase();
        let allowed = key == "user.name"
            || key == "user.email"
            || key == "safe.directory"
            || (key.starts_with("credential.https://") && key.ends_with(".helper") && line.ends_with(" auth git-credential"));
        assert!(allowed, "uncurated key in the session's global git config: {line}\n{out}");
    }
    assert!(global.iter().any(|l| l == &format!("safe.directory={}", ws.display())), "safe.directory is not the workspace\n{out}");
    // Nothing from anywhere else: no system config, no env-injected keys;
    // every value comes from the curated file.
    let all = section("--- all", "--- end");
    assert_eq!(all.len(), global.len(), "config from other sources is read\n{out}");
    let origin = format!("file:{}", user.home.join(".gitconfig").display());
    for line in &all {
        assert!(line.starts_with(&origin), "git config from elsewhere: {line}\n{out}");
    }
}

// ---------------------------------------------------------------- bad input

#[test]
fn invalid_configs_are_errors_naming_file_line_and_key() {
    let _machine = crate::support::share_machine();
    let td = setup("badcfg");
    let ws = td.ws();
    // (config text, line of the error, words the message must contain)
    let cases: &[(&str, usize, &[&str])] = &[
        ("{\n  // unknown\n  bogusKey: true,\n}\n", 3, &["unknown key", "bogusKey"]),
        ("{\n  egressJail: false,\n  noForge: \"yes\",\n}\n", 3, &["noForge", "boolean"]),
        ("{\n\n  allowWrite: [\"relative/path\"],\n}\n", 3, &["allowWrite", "relative/path"]),
        ("{\n  localPorts: [\n    70000,\n  ],\n}\n", 3, &["localPorts", "70000"]),
        ("{\n  allowIp: [\"300.1.2.3\"],\n}\n", 2, &["allowIp", "300.1.2.3"]),
        ("{\n  localPorts: [8080],\n  callbackPorts: [8080],\n}\n", 0, &["8080", "localPorts", "callbackPorts"]),
        ("{\n  passEnv: [\"LD_PRELOAD\"],\n}\n", 2, &["passEnv", "LD_PRELOAD"]),
        ("{\n  passEnv: [\"PATH\"],\n}\n", 2, &["passEnv", "PATH"]),
        ("{\n  egressJail: false,\n  = oops\n}\n", 3, &["JSON5"]),
    ];
    for (text, line, words) in cases {
        let cfg = td.config(text);
        let out = Launcher::new(&ws).config(&cfg).cli(&["config", "check"]);
        out.assert_code(1);
        let at = if *line > 0 { format!("{}:{line}", cfg.display()) } else { cfg.display().to_string() };
        assert!(out.stderr.contains(&at), "the error does not name {at}\n{text}\n{out}");
        for w in *words {
            assert!(out.stderr.contains(w), "the error does not mention {w}\n{text}\n{out}");
        }
        assert!(!out.stderr.contains("panicked") && !out.stderr.contains("RUST_BACKTRACE"), "{out}");
        // `run` refuses with the same message and runs nothing.
        let marker = ws.join("ran");
        let out = Launcher::new(&ws).config(&cfg).sh(&format!("touch {}", marker.display()));
        out.assert_code(1);
        assert!(out.stderr.contains(&at), "run: {text}\n{out}");
        assert!(!marker.exists(), "run ran a command with an invalid config:\n{text}");
    }
    // A valid JSON5 file (comments, trailing commas) passes.
    let cfg = td.config("// comment\n{\n  egressJail: false,\n  passEnv: [\"FOO\",],\n}\n");
    Launcher::new(&ws).config(&cfg).cli(&["config", "check"]).assert_ok();
}

#[test]
fn untrusted_config_files_are_refused() {
    let _machine = crate::support::share_machine();
    let td = setup("trustcfg");
    let ws = td.ws();
    let writable = td.config("{}\n");
    chmod(&writable, 0o666);
    let out = Launcher::new(&ws).config(&writable).cli(&["config", "check"]);
    out.assert_code(1);
    assert!(out.stderr.contains("writable by group or others"), "{out}");

    let foreign = td.config("{}\n");
    chown(&foreign, 65534, 65534);
    let out = Launcher::new(&ws).config(&foreign).cli(&["config", "check"]);
    out.assert_code(1);
    assert!(out.stderr.contains("owned by uid 65534"), "{out}");

    // Inside the workspace: a session could have written it.
    let inside = ws.join("config.json5");
    write(&inside, "{ egressJail: false }\n");
    chmod(&inside, 0o644);
    let marker = ws.join("ran");
    let out = Launcher::new(&ws).config(&inside).sh(&format!("touch {}", marker.display()));
    out.assert_code(1);
    assert!(out.stderr.contains("inside the workspace"), "{out}");
    assert!(!marker.exists());
}

#[test]
fn bad_command_lines_are_refused() {
    let _machine = crate::support::share_machine();
    let td = setup("badcli");
    let ws = td.ws();
    let marker = ws.join("ran");
    let touch = format!("touch {}", marker.display());

    let out = Launcher::new(&ws).agent("bogus").sh(&touch);
    out.assert_code(1);
    for a in ["bogus", "claude", "codex", "pi"] {
        assert!(out.stderr.contains(a), "unknown agent: {a} not mentioned\n{out}");
    }
    let out = Launcher::new(&ws).cli(&["run", "--bogus-flag", "--", "/bin/sh", "-c", &touch]);
    out.assert_code(2);
    let out = Launcher::new(&ws).cli(&["run", "--json", "--", "/bin/sh", "-c", &touch]);
    out.assert_code(2);
    assert!(!marker.exists(), "a refused command line ran the command");

    // The workspace may not be / or the home (or a parent of it).
    for dir in [PathBuf::from("/"), root_account().home] {
        let out = Launcher::new(&dir).sh("echo RAN");
        out.assert_code(1);
        assert!(!out.stdout.contains("RAN"), "{out}");
        assert!(out.stderr.contains("workspace"), "{out}");
    }
}

// ---------------------------------------------------------------- plan, scope

#[test]
fn print_plan_json_describes_the_sandbox() {
    let _machine = crate::support::share_machine();
    let td = setup("plan");
    let marker = td.ws().join("ran");
    let out = Launcher::new(&td.ws()).env("AWS_SECRET_ACCESS_KEY", "plan-secret").cli(&[
        "run",
        "--print-plan",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        &format!("touch {}", marker.display()),
    ]);
    out.assert_ok();
    assert!(!marker.exists(), "--print-plan ran the command");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{out}"));
    let args: Vec<&str> = v["args"].as_array().expect("args").iter().map(|a| a.as_str().unwrap()).collect();
    for flag in ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--cap-drop", "ALL", "--seccomp"] {
        assert!(args.contains(&flag), "{flag} missing from {args:?}");
    }
    let cap = args.iter().position(|a| *a == "--cap-drop").unwrap();
    assert_eq!(args[cap + 1], "ALL");
    assert_eq!(&args[args.len() - 3..], &["/bin/sh", "-c", &format!("touch {}", marker.display())]);
    assert!(v["bwrap"].as_str().unwrap().ends_with("/bwrap"), "{out}");
    assert_eq!(v["env"]["IS_SANDBOX"], "1");
    assert!(v["env"].get("AWS_SECRET_ACCESS_KEY").is_none(), "{out}");
    assert!(!out.stdout.contains("plan-secret"), "{out}");
    assert_eq!(v["workspace"], td.ws().display().to_string());
    assert_eq!(v["egressJail"], false);
}

#[test]
fn scope_reports_what_a_session_could_reach() {
    let _machine = crate::support::share_machine();
    let td = setup("scope");
    let home = root_account().home;
    let ws = td.ws();
    let sib = td.peers_dir().join("sibling");
    mkdir(&sib);
    let paths = [
        ("/etc/shadow".to_string(), "empty"),
        (home.join(".ssh").display().to_string(), "hidden"),
        (home.join(".netrc").display().to_string(), "empty"),
        (ws.display().to_string(), "write"),
        (ws.join("src/main.rs").display().to_string(), "write"),
        (home.join(".claude").display().to_string(), "write"),
        ("/usr/bin".to_string(), "read"),
        ("/tmp".to_string(), "private"),
        (sib.display().to_string(), "empty"),
    ];
    let mut args = vec!["scope", "--json"];
    args.extend(paths.iter().map(|(p, _)| p.as_str()));
    let out = Launcher::new(&ws).cli(&args);
    out.assert_ok();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{out}"));
    let rows = v.as_array().expect("an array");
    assert_eq!(rows.len(), paths.len(), "{out}");
    for ((p, want), row) in paths.iter().zip(rows) {
        assert_eq!(row["path"].as_str(), Some(p.as_str()), "{out}");
        assert_eq!(row["access"].as_str(), Some(*want), "{p}\n{out}");
    }
    // With --peers the sibling is readable, still not writable.
    let out = Launcher::new(&ws).cli(&["scope", "--json", "--peers", sib.to_str().unwrap()]);
    out.assert_ok();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[0]["access"], "read", "{out}");
    assert_eq!(v[0]["write"], false, "{out}");
}

/// A sibling that is an absolute symlink (e.g. /var/lib/app-info ->
/// /var/lib/swcatalog) must not break the launch: bwrap cannot follow it
/// inside the new root, so the plan leaves it to its target.
#[test]
fn a_symlinked_sibling_does_not_break_the_launch() {
    let _machine = crate::support::share_machine();
    let td = setup("symlinked-sibling");
    let ws = td.ws();
    let target = td.peers_dir().join("real");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("secret.txt"), "peer\n").unwrap();
    std::os::unix::fs::symlink(&target, td.peers_dir().join("alias")).unwrap();
    let out = Launcher::new(&ws).sh("cat ../real/secret.txt 2>/dev/null || echo hidden=yes");
    out.assert_ok();
    assert_eq!(out.get("hidden"), "yes", "{out}");
}

/// A reader that goes away (`agent-sandbox doctor --json | head -c1`)
/// ends the report verbs quietly with 141 (128 + SIGPIPE), not a panic.
#[test]
fn report_verbs_end_quietly_when_their_reader_goes_away() {
    let _machine = crate::support::share_machine();
    for args in [&["config", "show"][..], &["doctor", "--json"], &["scope", "/etc"]] {
        let (r, w) = nix::unistd::pipe().unwrap();
        drop(r);
        let out = std::process::Command::new(crate::support::bin()).args(args).stdout(std::process::Stdio::from(w)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
