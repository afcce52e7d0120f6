//! What a session sees of the host beyond its workspace: a root
//! launcher's session and root's private files and sockets, the runtime
//! directories, the tool caches (private by default), package-index tokens,
//! and configurations that would hand a session a system location. Real
//! sessions; each finding of the adversarial review is reproduced here.
//!
//! Needs root, bubblewrap and python3; a missing prerequisite fails the test.

use crate::support::launcher::*;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::Path;

fn setup(tag: &str) -> TestDir {
    require_root();
    require_bwrap();
    TestDir::new(tag)
}

/// `script`'s `key=value` lines, from a session of `account` in `ws`,
/// with the egress jail on (`"1"`) or off (`"0"`).
fn session(ws: &Path, account: Account, bin: &Path, script: &str, jail: &str) -> Out {
    let out = Launcher::as_account(ws, account).bin(bin).env("AGENT_SANDBOX_EGRESS_JAIL", jail).private_tun().sh(script);
    out.assert_ok();
    out
}

/// Each probe "reaches" when it succeeds and shows something: a masked
/// file reads as empty and a masked directory lists nothing.
const PROBE: &str = r#"
t() { got=$("$@" 2>/dev/null) && [ -n "$got" ] && echo "$name=reached" || echo "$name=refused"; }
name=etc_key t cat "$ETC/secret.key"
name=etc_public t cat "$ETC/public.txt"
name=varlib_secret t cat "$VARLIB/secret"
name=private_dir t ls "$PRIVATE/"
name=private_file t cat "$PRIVATE/inside"
name=root_socket t python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(1)" "$VARLIB/svc.sock"
name=run_socket t python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(1)" "$RUNSOCK"
name=toplevel_file t cat "$TOP/secret"
name=toplevel_dir t ls "$TOPDIR/"
name=acl_file t cat "$ACL"
name=usr_local t cat "$USRLOCAL"
name=dpkg_info t cat "$DPKG"
name=lost_found t ls -a /lost+found/
name=slabinfo t cat /proc/slabinfo
name=sys_slab t sh -c 'cat /sys/kernel/slab/*/aliases | head -c 100'
name=kpageflags t head -c 8 /proc/kpageflags
"#;

/// Sets `path`'s access ACL: mode bits from `mode`, and `user:0:r--`
/// (root's only grant), through python3 (no acl tools needed).
fn grant_root_by_acl(path: &Path) {
    let script = r#"
import os, struct, sys
e = lambda tag, perm, id: struct.pack('<HHI', tag, perm, id)
acl = struct.pack('<I', 2) + e(1, 0, 0xffffffff) + e(2, 4, 0) + e(4, 0, 0xffffffff) + e(0x10, 4, 0xffffffff) + e(0x20, 0, 0xffffffff)
os.setxattr(sys.argv[1], 'system.posix_acl_access', acl)
"#;
    let out = std::process::Command::new("python3").args(["-c", script]).arg(path).output().unwrap();
    assert!(out.status.success(), "setting an ACL on {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
}

/// The review found a root launcher's session reading root's 0600 files
/// (/etc/ssl/private, /etc, /var/lib) and connecting to root-only sockets
/// outside /tmp and /run/user (/run/dbus, k3s, Docker Desktop's
/// /run/host-services/ssh-auth.sock); then, with the scan as the
/// mechanism, root-only entries it did not list: a 0600 file in a fresh
/// top-level directory, a 0700 top-level directory, /lost+found, a file
/// whose only grant to root is an ACL, root-only files under /usr/local and
/// /var/lib/dpkg/info, and the kernel's root-only interfaces
/// (/proc/slabinfo, /proc/kpageflags, /sys/kernel/slab). A session reaches
/// no more than an ordinary user's would: both are checked against the
/// same plants, root with the jail and without.
#[test]
fn a_root_session_reaches_no_more_of_the_host_than_a_users() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-root");
    python3();
    let u = unique("hv");
    let etc = Path::new("/etc").join(&u);
    let varlib = Path::new("/var/lib").join(&u);
    let private = Path::new("/var/lib").join(format!("{u}-private"));
    let run = Path::new("/run").join(&u).join("host-services");
    let top = Path::new("/").join(format!("{u}-data"));
    let topdir = Path::new("/").join(format!("{u}-private"));
    let usr_local = Path::new("/usr/local").join(format!("{u}.secret"));
    let dpkg = Path::new("/var/lib/dpkg/info").join(format!("{u}.secret"));
    let _planted = Planted(vec![
        etc.clone(),
        varlib.clone(),
        private.clone(),
        run.parent().unwrap().to_path_buf(),
        top.clone(),
        topdir.clone(),
        usr_local.clone(),
        dpkg.clone(),
    ]);
    for d in [&etc, &varlib, &run, &top] {
        mkdir(d);
    }
    write(&etc.join("secret.key"), "-----BEGIN PRIVATE KEY-----\n");
    chmod(&etc.join("secret.key"), 0o600);
    write(&etc.join("public.txt"), "public\n");
    write(&varlib.join("secret"), "s3cret\n");
    chmod(&varlib.join("secret"), 0o640);
    mkdir(&private);
    chmod(&private, 0o700);
    write(&private.join("inside"), "x\n");
    chmod(&private.join("inside"), 0o644);
    let _svc = UnixListener::bind(varlib.join("svc.sock")).unwrap();
    chmod(&varlib.join("svc.sock"), 0o660);
    let _ssh = UnixListener::bind(run.join("ssh-auth.sock")).unwrap();
    chmod(&run.join("ssh-auth.sock"), 0o666);
    write(&top.join("secret"), "top\n");
    chmod(&top.join("secret"), 0o600);
    mkdir(&topdir);
    write(&topdir.join("inside"), "x\n");
    chmod(&topdir.join("inside"), 0o644);
    chmod(&topdir, 0o700);
    // Another user's file, nobody but root (by an ACL entry) may read.
    let acl = varlib.join("acl-only");
    write(&acl, "acl\n");
    chown(&acl, 65534, 65534);
    chmod(&acl, 0o000);
    grant_root_by_acl(&acl);
    for f in [&usr_local, &dpkg] {
        write(f, "pkg\n");
        chmod(f, 0o600);
    }
    let bin = td.public_bin();
    let script = format!(
        "ETC={} VARLIB={} PRIVATE={} RUNSOCK={} TOP={} TOPDIR={} ACL={} USRLOCAL={} DPKG={}\n{PROBE}",
        etc.display(),
        varlib.display(),
        private.display(),
        run.join("ssh-auth.sock").display(),
        top.display(),
        topdir.display(),
        acl.display(),
        usr_local.display(),
        dpkg.display()
    );
    let mut refused = vec![
        "etc_key",
        "varlib_secret",
        "private_dir",
        "private_file",
        "root_socket",
        "run_socket",
        "toplevel_file",
        "toplevel_dir",
        "acl_file",
        "usr_local",
        "dpkg_info",
        "slabinfo",
        "kpageflags",
    ];
    if Path::new("/lost+found").is_dir() {
        refused.push("lost_found");
    }
    if Path::new("/sys/kernel/slab").is_dir() {
        refused.push("sys_slab");
    }
    for (account, jail) in [(root_account(), "0"), (root_account(), "1"), (test_user(), "0"), (test_user(), "1")] {
        let ws = td.workspace(&unique(&account.name));
        chown(&ws, account.uid, account.gid);
        let out = session(&ws, account.clone(), &bin, &script, jail);
        assert_eq!(out.get("etc_public"), "reached", "the check must be able to read (sanity)\n{out}");
        for key in &refused {
            assert_eq!(out.get(key), "refused", "{} (jail {jail}) reached {key}\n{out}", account.name);
        }
    }
}

/// No session leaves a setuid or setgid file behind, root or not, jail on
/// or off: chmod u+s/g+s, a create mode with the bits, and `install -m
/// 4755` all fail, and the file outside carries no such bit. A file
/// capability set from a nested user namespace is namespaced to it: it
/// gives another account nothing outside.
#[test]
fn no_session_leaves_a_setuid_or_setgid_file_behind() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-setid");
    python3();
    let bin = td.public_bin();
    let script = r#"
cp /usr/bin/id uid-copy; chmod 4755 uid-copy; echo chmod_suid=$?
cp /usr/bin/id gid-copy; chmod g+s gid-copy; echo chmod_sgid=$?
install -m 4755 /usr/bin/id installed; echo install=$?
python3 -c "import os; os.close(os.open('created', os.O_CREAT|os.O_WRONLY, 0o6755))"; echo create=$?
mkdir -m 2775 sgid-dir; echo mkdir=$?
cp /bin/cat capped
unshare -r python3 -c "import os; os.setxattr('capped', 'security.capability', bytes.fromhex('0100000200200000000000000000000000000000'))"; echo filecap=$?
"#;
    for (account, jail) in [(root_account(), "0"), (root_account(), "1"), (test_user(), "0"), (test_user(), "1")] {
        let ws = td.workspace(&unique(&format!("{}{jail}", account.name)));
        chown(&ws, account.uid, account.gid);
        let out = Launcher::as_account(&ws, account.clone()).bin(&bin).env("AGENT_SANDBOX_EGRESS_JAIL", jail).private_tun().sh(script);
        for key in ["chmod_suid", "chmod_sgid", "install", "create", "mkdir"] {
            assert_ne!(out.get(key), "0", "{} (jail {jail}): {key} succeeded\n{out}", account.name);
        }
        for f in ["uid-copy", "gid-copy", "installed", "created", "sgid-dir"] {
            let Ok(m) = std::fs::symlink_metadata(ws.join(f)) else { continue };
            let mode = std::os::unix::fs::PermissionsExt::mode(&m.permissions());
            assert_eq!(mode & 0o6000, 0, "{} (jail {jail}) left {f} with mode {mode:o}", account.name);
        }
        // A user's session may set a capability from a nested namespace of
        // its own: it is that namespace's, and run by another account it
        // grants nothing; review names the file as the most dangerous kind.
        // (A root launcher's session is uid 0 inside, whose nested
        // namespaces cannot map it: CAP_SETFCAP, which no session has, is
        // what mapping uid 0 takes. It cannot set one at all.)
        if account.uid == 0 {
            let caps = std::process::Command::new("python3")
                .args(["-c", "import os,sys; os.getxattr(sys.argv[1], 'security.capability')"])
                .arg(ws.join("capped"))
                .output()
                .unwrap();
            // No attribute: getxattr's ENODATA (a missing file would fail too, and prove nothing).
            let err = String::from_utf8_lossy(&caps.stderr);
            assert!(!caps.status.success() && err.contains("Errno 61"), "{} (jail {jail}) set a file capability\n{err}\n{out}", account.name);
            continue;
        }
        assert_eq!(out.get("filecap"), "0", "{} (jail {jail}): the nested setxattr (the check needs it)\n{out}", account.name);
        let review = Launcher::as_account(&ws, account.clone()).bin(&bin).cli(&["review", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&review.stdout).unwrap_or_else(|e| panic!("review --json: {e}\n{review}"));
        let kind_of =
            |path: &str| v["findings"].as_array().and_then(|a| a.iter().find(|f| f["path"] == path)).and_then(|f| f["kind"].as_str()).map(str::to_string);
        assert_eq!(kind_of("capped").as_deref(), Some("set-id"), "{} (jail {jail}): review\n{review}", account.name);
        {
            let other = if account.uid == 0 { test_user() } else { crate::support::launcher::rc_test_user() };
            let status = output_of_new_program(std::process::Command::new(ws.join("capped")).arg("/proc/self/status").uid(other.uid).gid(other.gid));
            let text = String::from_utf8_lossy(&status.stdout);
            for cap in ["CapPrm", "CapEff"] {
                assert_eq!(status_field(&text, cap).as_deref(), Some("0000000000000000"), "{} (jail {jail}): {cap} outside\n{text}", account.name);
            }
        }
    }
}

/// A root launch works in a workspace of any owner and mode root itself
/// could use (a 0700 directory of another user's), jail on and off; what
/// it creates there belongs to that owner, as root's own files keep root.
/// (A jailed launch there was refused with bwrap's `Can't chdir` and then
/// re-diagnosed as pasta's.)
#[test]
fn a_root_launch_works_in_another_users_private_workspace() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-owner");
    let user = test_user();
    for jail in ["0", "1"] {
        let ws = td.workspace(&unique(&format!("other{jail}")));
        chown(&ws, user.uid, user.gid);
        chmod(&ws, 0o700);
        write(&ws.join("theirs"), "x\n");
        chown(&ws.join("theirs"), user.uid, user.gid);
        let out = Launcher::new(&ws).env("AGENT_SANDBOX_EGRESS_JAIL", jail).sh("echo new > made && cat theirs >/dev/null && echo more >> theirs && echo ok=1");
        out.assert_ok();
        assert_eq!(out.get("ok"), "1", "{out}");
        assert_eq!(owner_mode(&ws.join("made")).0, user.uid, "(jail {jail}) the new file's owner");
        assert_eq!(owner_mode(&ws.join("theirs")).0, user.uid, "(jail {jail}) the changed file's owner");
    }
}

/// A root launch whose workspace and launcher binary lie under /tmp (a
/// checkout cloned there, a quick trial), jail on and off: the launcher
/// stages its masks elsewhere, and what bwrap binds into /dev from the
/// launcher's executable (the jail's gate, verify's probe) first, so both
/// stay reachable; `verify` then passes from there too.
#[test]
fn a_root_launch_from_and_in_tmp_works() {
    let _machine = crate::support::share_machine();
    require_root();
    require_bwrap();
    let dir = tempfile::Builder::new().prefix("ast-in-tmp").tempdir_in("/tmp").unwrap();
    chmod(dir.path(), 0o755);
    let bin = dir.path().join("agent-sandbox");
    std::fs::copy(crate::support::bin(), &bin).unwrap();
    // Another test thread's child, forked while the copy was open for
    // writing, holds it until that child execs (ETXTBSY meanwhile).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while let Err(e) = std::process::Command::new(&bin).arg("--version").output() {
        assert!(e.raw_os_error() == Some(libc::ETXTBSY) && std::time::Instant::now() < deadline, "{}: {e}", bin.display());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for jail in ["0", "1"] {
        let ws = dir.path().join(format!("ws{jail}"));
        mkdir(&ws);
        let out = Launcher::new(&ws).bin(&bin).env("AGENT_SANDBOX_EGRESS_JAIL", jail).private_tun().sh("echo new > made && echo ok=1");
        out.assert_ok();
        assert_eq!(out.get("ok"), "1", "(jail {jail}) {out}");
        assert_eq!(owner_mode(&ws.join("made")).0, 0, "(jail {jail}) the new file is root's");
        // verify binds this same executable into the session as its probe,
        // which the session's fresh /tmp covers on the host side too.
        let out = Launcher::new(&ws).bin(&bin).env("AGENT_SANDBOX_EGRESS_JAIL", jail).private_tun().cli(&["verify", "--json", "--allow-jail-off"]);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("(jail {jail}) verify printed no JSON ({e})\n{out}"));
        assert_eq!(v["summary"]["failures"], 0, "(jail {jail}) {out}");
        assert!(v["summary"]["passed"].as_u64().unwrap_or(0) > 30, "(jail {jail}) the probe ran its checks: {out}");
    }
}

/// While a running session swaps a protected path of the workspace (a
/// nested repository's `.git/hooks`, `.devcontainer`) with a link to
/// root's home in a tight loop (`renameat2(RENAME_EXCHANGE)`), 1,000
/// launches of another session there never get a writable protected path
/// nor root's home at it: each either starts with the real directory
/// protected or is refused because it changed. Here the swap loop is a
/// thread of the test (a session cannot tell who swaps).
#[test]
fn launches_racing_a_swap_loop_never_mount_the_wrong_place() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-race");
    let ws = td.ws();
    let home = root_account().home;
    let u = unique("race");
    let marker = home.join(format!(".{u}-root-home"));
    let _m = PlacedFile::new(&marker, "root's home\n");
    mkdir(&ws.join(".git/hooks"));
    write(&ws.join(".git/config"), "[core]\n");
    mkdir(&ws.join("sub/.git/hooks"));
    write(&ws.join("sub/.git/config"), "[core]\n");
    mkdir(&ws.join(".devcontainer"));
    // The links the loop exchanges the directories with.
    std::os::unix::fs::symlink(&home, ws.join("sub/.git/hooks.swap")).unwrap();
    std::os::unix::fs::symlink(&home, ws.join(".devcontainer.swap")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, ws) = (stop.clone(), ws.clone());
        std::thread::spawn(move || {
            let pairs = [(ws.join("sub/.git/hooks"), ws.join("sub/.git/hooks.swap")), (ws.join(".devcontainer"), ws.join(".devcontainer.swap"))];
            let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            let pairs: Vec<_> = pairs.iter().map(|(a, b)| (c(a), c(b))).collect();
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for (a, b) in &pairs {
                    // SAFETY: renameat2 reads two NUL-terminated paths.
                    unsafe {
                        libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), 2 /* RENAME_EXCHANGE */)
                    };
                    n += 1;
                }
            }
            n
        })
    };
    let launches = std::env::var("HOSTVIEW_RACE_LAUNCHES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    // Writes under either name: one of them is the real directory (whose
    // protection must hold under whatever name it has by then), the other
    // the link (which leads into the session's own home, a tmpfs). The
    // outer root home must never show.
    let probe = "for p in sub/.git/hooks sub/.git/hooks.swap .devcontainer .devcontainer.swap; do \
        echo x > $p/pwned 2>/dev/null; \
        if ls -a $p/ 2>/dev/null | grep -q root-home; then echo \"$p=HOME\"; fi; done; echo ran=1";
    let (mut ran, mut refused) = (0, 0);
    for i in 0..launches {
        let out = Launcher::new(&ws).env("AGENT_SANDBOX_EGRESS_JAIL", "0").sh(probe);
        if out.kv().get("ran").map(String::as_str) == Some("1") {
            ran += 1;
            assert!(!out.stdout.contains("=HOME"), "launch {i}: root's home at a protected path\n{out}");
        } else {
            refused += 1;
            assert_eq!(out.status.code(), Some(1), "launch {i}: neither ran nor refused\n{out}");
            assert!(out.stderr.contains("changed while the session was starting") || out.stderr.contains("where a directory belongs"), "launch {i}: {out}");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    println!("MEASURE swap race: {launches} launches ({ran} ran, {refused} refused), {swaps} swaps");
    // Nothing was written through a protected path, here or in root's home.
    for p in [
        ws.join("sub/.git/hooks/pwned"),
        ws.join("sub/.git/hooks.swap/pwned"),
        ws.join(".devcontainer/pwned"),
        ws.join(".devcontainer.swap/pwned"),
        home.join("pwned"),
    ] {
        assert!(!p.exists(), "{} was written", p.display());
    }
    assert!(ran > 0 && swaps > launches as u64, "the race did not happen: {ran} ran, {swaps} swaps");
}

/// The host's mount table changes under every launch on a machine with a
/// container engine: a container stopped beside the launch unmounts its
/// root and deletes the directory, which detaches that mount from every
/// namespace, a launch's copy included. bwrap's `--bind`/`--ro-bind` of `/`
/// remounts each submount after copying them and fails the launch on one
/// that vanished meanwhile (`Unable to apply mount flags: remount ...: No
/// such file or directory`); the product's executor sets every mount's
/// flags first, in one call, so bwrap remounts none of them. Here four
/// threads mount and delete tmpfs mounts while sessions launch, root and
/// non-root, jail on and off: every launch runs. (The same churn fails a
/// raw `bwrap --ro-bind / /` launches in a private mount namespace,
/// which shows the churn reached the launches.)
#[test]
fn launches_start_while_host_mounts_come_and_go() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-churn");
    let user = test_user();
    let churn_dir = tempfile::Builder::new().prefix("ast-churn").tempdir_in("/var/tmp").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churners: Vec<_> = (0..4)
        .map(|t| {
            let (stop, dir) = (stop.clone(), churn_dir.path().to_path_buf());
            std::thread::spawn(move || {
                use nix::mount::{mount, umount, MsFlags};
                let mut cycles = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let d = dir.join(format!("m{t}-{cycles}"));
                    std::fs::create_dir(&d).unwrap();
                    mount(Some("tmpfs"), &d, Some("tmpfs"), MsFlags::empty(), Some("size=64k")).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(1000 + (cycles * 7919 + t * 104_729) % 9000));
                    umount(&d).unwrap();
                    std::fs::remove_dir(&d).unwrap();
                    cycles += 1;
                }
                cycles
            })
        })
        .collect();
    let launches = std::env::var("HOSTVIEW_CHURN_LAUNCHES").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let user_ws = td.workspace(&unique("churn-user"));
    chown(&user_ws, user.uid, user.gid);
    for jail in ["0", "1"] {
        for (who, ws, account) in [("root", td.ws(), root_account()), ("user", user_ws.clone(), user.clone())] {
            for i in 0..launches {
                let out = Launcher::as_account(&ws, account.clone()).env("AGENT_SANDBOX_EGRESS_JAIL", jail).private_tun().sh("echo ran=1");
                assert_eq!(out.kv().get("ran").map(String::as_str), Some("1"), "{who}, jail {jail}, launch {i}: {out}");
            }
        }
    }
    let mut raw_failed = 0;
    for _ in 0..300 {
        let st = std::process::Command::new("unshare")
            .args("-m --propagation private /usr/bin/bwrap --unshare-user --ro-bind / / --dev /dev --proc /proc /bin/true".split(' '))
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        raw_failed += usize::from(!st.success());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let cycles: u64 = churners.into_iter().map(|c| c.join().unwrap()).sum();
    println!(
        "MEASURE mount churn: {} launches all ran beside {cycles} mounts made and deleted; raw bwrap --ro-bind / / failed {raw_failed} of 300",
        launches * 4
    );
    assert!(cycles > launches as u64, "the mounts did not churn: {cycles} cycles");
    assert!(raw_failed > 0, "the churn never reached a launch: every raw bwrap launch ran");
}

/// Package-index URLs pass into sessions only without a token in them.
#[test]
fn package_index_tokens_stay_outside() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-pip");
    let out = Launcher::new(&td.ws())
        .env("PIP_INDEX_URL", "https://user:tok3n@pypi.example.org/simple")
        .env("PIP_EXTRA_INDEX_URL", "https://pypi.example.org/extra")
        .env("UV_INDEX", "corp=https://__token__:tok3n@idx.example/simple")
        .sh("echo pip=${PIP_INDEX_URL-unset}; echo extra=${PIP_EXTRA_INDEX_URL-unset}; echo uv=${UV_INDEX-unset}");
    out.assert_ok();
    assert_eq!(out.get("pip"), "unset", "{out}");
    assert_eq!(out.get("uv"), "unset", "{out}");
    assert_eq!(out.get("extra"), "https://pypi.example.org/extra", "{out}");
    assert!(!out.stdout.contains("tok3n"));
}

/// `workspaceRoot` and `allowWrite` may not name a system location (nor
/// the launcher's home); the refusal names where it came from and why.
#[test]
fn system_locations_are_refused_as_workspace_or_writable() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-config");
    for (text, key) in [
        ("{\n  allowWrite: ['/etc'],\n}\n", "allowWrite"),
        ("{\n  allowWrite: ['/proc/sys'],\n}\n", "allowWrite"),
        ("{\n  allowWrite: ['/run'],\n}\n", "allowWrite"),
        ("{\n  workspaceRoot: '/usr',\n}\n", "workspaceRoot"),
        ("{\n  workspaceRoot: '/home',\n}\n", "workspaceRoot"),
    ] {
        let cfg = td.config(text);
        let out = Launcher::new(&td.ws()).config(&cfg).sh("echo RAN");
        assert_eq!(out.status.code(), Some(1), "{text}\n{out}");
        assert!(!out.stdout.contains("RAN"), "{out}");
        assert!(out.stderr.contains(&format!("{}:2: key \"{key}\"", cfg.display())), "names file, line and key\n{out}");
    }
    let out = Launcher::new(&td.ws()).env("AGENT_SANDBOX_ALLOW_WRITE", "/root").sh("echo RAN");
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(out.stderr.contains("AGENT_SANDBOX_ALLOW_WRITE") && out.stderr.contains("root's home"), "{out}");
    // The launcher's home itself (a user's, not in the fixed list).
    let user = test_user();
    let ws = td.workspace("user");
    chown(&ws, user.uid, user.gid);
    let out = Launcher::as_account(&ws, user.clone()).bin(&td.public_bin()).env("AGENT_SANDBOX_ALLOW_WRITE", &user.home).sh("echo RAN");
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(out.stderr.contains("your home directory"), "{out}");
}

/// The review poisoned a corepack cache from a session and a later
/// `corepack yarn` outside ran it. Sessions now get the sandbox's own
/// tool dirs, kept across sessions; the user's are untouched and unseen.
#[test]
fn tool_caches_are_the_sandboxs_own_unless_shared() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-cache");
    let home = root_account().home;
    let u = unique("cache");
    let outer = home.join(".cache").join(&u);
    let ws = td.ws();
    let [private_cache, _] = agent_sandbox::sandbox::plan::private_tool_dirs(&ws);
    let _cleanup = Planted(vec![outer.clone(), home.join(private_cache).join(&u)]);
    write(&outer.join("yarn.js"), "// the user's\n");
    let out = Launcher::new(&ws).sh(&format!(
        "test -e ~/.cache/{u}/yarn.js && echo seen=yes || echo seen=no; mkdir -p ~/.cache/{u} && echo planted > ~/.cache/{u}/yarn.js && echo wrote=yes"
    ));
    out.assert_ok();
    assert_eq!(out.get("seen"), "no", "the user's cache is visible\n{out}");
    assert_eq!(out.get("wrote"), "yes", "{out}");
    assert_eq!(std::fs::read_to_string(outer.join("yarn.js")).unwrap(), "// the user's\n", "the session reached the user's cache");
    // Kept for the next session.
    let out = Launcher::new(&ws).sh(&format!("cat ~/.cache/{u}/yarn.js"));
    assert_eq!(out.stdout.trim(), "planted", "{out}");

    // Shared on purpose: the user's own, but direnv's approvals read-only.
    let cfg = td.config("{ shareToolDirs: true }");
    let direnv = home.join(".local/share/direnv/allow");
    let existed = direnv.exists();
    let out = Launcher::new(&ws).config(&cfg).sh(&format!(
        "cat ~/.cache/{u}/yarn.js; if (mkdir -p ~/.local/share/direnv/allow && touch ~/.local/share/direnv/allow/x) 2>/dev/null; then echo approve=written; else echo approve=refused; fi"
    ));
    out.assert_ok();
    assert!(out.stdout.starts_with("// the user's"), "{out}");
    assert_eq!(out.get("approve"), "refused", "a session approved an .envrc\n{out}");
    assert!(!direnv.join("x").exists());
    if !existed {
        let _ = std::fs::remove_dir(home.join(".local/share/direnv/allow"));
    }
}

/// In a podman container whose workspace is a bind mount of a host
/// directory (the devcontainer shape), as root, jail on and off: with the
/// engine's default capabilities idmapped mounts cannot be made and the
/// session is scanned; with CAP_SYS_ADMIN, root's home still lies on the
/// image's overlayfs, which cannot be mounted idmapped: scanned, naming
/// it; with the home on a volume too, the session acts on host files as
/// the outer uid. doctor names which; either way a root-only file and a 0700
/// tree at fresh top-level places stay unreadable, a setuid chmod fails,
/// and what the session writes in the workspace is root's on the host.
/// Meanwhile an interface comes and goes in the network the container
/// shares (as a container engine's veths do): the scanned session's
/// launch must not depend on one that was there when it was planned.
#[test]
fn in_a_container_root_sessions_get_the_host_view_doctor_names() {
    use crate::support::podman;
    use std::os::unix::fs::MetadataExt;
    let _machine = crate::support::share_machine();
    let _churn = InterfaceChurn::start();
    let recipe = "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                  bubblewrap passt ca-certificates >/dev/null && useradd -m -u 1000 dev";
    let image = podman::cached_image("jail-trixie", podman::TRIXIE, recipe);
    let probe = "cat /data/secret; echo secret=$?\ncat /top/file; echo top=$?\ncp /bin/true t; chmod 4755 t; echo suid=$?\necho x > \"made-$1\"\necho \"ifaces=$(ls /proc/sys/net/ipv6/conf | tr '\\n' ' ')\"\n";
    let home = tempfile::tempdir().unwrap();
    let home_volume = format!("{}:/root", home.path().display());
    let cases: [(&[&str], &str, &str); 3] = [
        (&[], "host-view-scan", "the mount API is not available"),
        (&["--cap-add", "SYS_ADMIN"], "host-view-scan", "/root cannot be mounted idmapped"),
        (&["--cap-add", "SYS_ADMIN", "-v", &home_volume], "host-view-kernel", "uid 65533"),
    ];
    for (caps, want, says) in cases {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("probe.sh"), probe).unwrap();
        let bind = format!("{}:/workspaces/app", ws.path().display());
        let mut args = vec!["--device", "/dev/net/tun", "--security-opt", "unmask=/proc/*", "-v", &bind];
        args.extend(caps);
        let c = podman::Container::start(&image, &args);
        c.sh("mkdir -m 700 /data /top && echo s3cret > /data/secret && chmod 600 /data/secret && echo t0pfile > /top/file");
        let doctor = c.exec_full("root", &[], &["sh", "-c", "cd /workspaces/app && /opt/ast/agent-sandbox doctor --json"]);
        let v: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap_or_else(|e| panic!("doctor --json: {e}: {doctor:?}"));
        let found: Vec<&serde_json::Value> =
            v["findings"].as_array().unwrap().iter().filter(|f| f["id"].as_str().is_some_and(|i| i.starts_with("host-view"))).collect();
        assert!(found.len() == 1 && found[0]["id"] == want && found[0]["message"].as_str().unwrap().contains(says), "{caps:?}: {v:#}");
        for jail in ["0", "1"] {
            let env = format!("AGENT_SANDBOX_EGRESS_JAIL={jail}");
            let out = c.exec_full("root", &[&env], &["sh", "-c", &format!("cd /workspaces/app && /opt/ast/agent-sandbox run -- sh probe.sh {jail}")]);
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let what = format!("{caps:?}, jail {jail}:\n{stdout}\n{stderr}");
            assert!(out.status.success(), "{what}");
            assert!(stdout.contains("secret=1") && stdout.contains("top=1") && stdout.contains("suid=1"), "{what}");
            assert!(!stdout.contains("s3cret") && !stdout.contains("t0pfile"), "{what}");
            let made = std::fs::metadata(ws.path().join(format!("made-{jail}"))).unwrap();
            assert_eq!((made.uid(), made.gid()), (0, 0), "{what}");
            // Scanned in the host's network: no interface's sysctls at all
            // (their root-only entries could not be masked one by one).
            if want == "host-view-scan" && jail == "0" {
                assert!(stdout.lines().any(|l| l == "ifaces=all default "), "{what}");
            }
        }
    }
}

/// A veth pair made and deleted in a loop in this network namespace until
/// dropped (named for this process, so nothing else's is touched).
struct InterfaceChurn {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u32>>,
}

impl InterfaceChurn {
    fn start() -> InterfaceChurn {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let name = format!("asch{}", std::process::id() % 100_000);
        let ip = |args: &[&str]| std::process::Command::new("ip").args(args).output().map(|o| o.status.success()).unwrap_or(false);
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut made = 0;
            while !stopped.load(Ordering::SeqCst) {
                made += u32::from(ip(&["link", "add", &name, "type", "veth", "peer", "name", &format!("{name}p")]));
                ip(&["link", "del", &name]);
            }
            made
        });
        InterfaceChurn { stop, thread: Some(thread) }
    }
}

impl Drop for InterfaceChurn {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let made = self.thread.take().map(|t| t.join().unwrap_or(0)).unwrap_or(0);
        if !std::thread::panicking() {
            assert!(made > 0, "no interface could be made beside the sessions (ip link add ... type veth): the test proves nothing");
        }
    }
}

/// A non-root launcher's executor makes the session's whole view too (it
/// uses the mount API in a user namespace of its own, where the kernel
/// has it, as this one does): bwrap binds `/` as the executor left it
/// (`--bind / /`), and never binds it itself with `--ro-bind / /`, which
/// remounts every host mount by path and fails a launch when one of them
/// goes meanwhile. The session sees the host's tree read-only, nosuid and
/// nodev, and its /dev/null writable.
#[test]
fn a_non_root_launchers_view_is_made_by_the_executor() {
    let _machine = crate::support::share_machine();
    let td = setup("hostview-user-view");
    let user = test_user();
    let ws = td.workspace(&unique("view-user"));
    chown(&ws, user.uid, user.gid);
    let plan = Launcher::as_account(&ws, user.clone()).env("AGENT_SANDBOX_EGRESS_JAIL", "0").cli(&["run", "--print-plan", "--json", "--", "/bin/true"]);
    plan.assert_ok();
    let json: serde_json::Value = serde_json::from_str(&plan.stdout).unwrap_or_else(|e| panic!("{e}: {}", plan.stdout));
    let args: Vec<&str> = json["args"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
    assert!(args.windows(3).any(|w| w == ["--bind", "/", "/"]), "the executor's view (`--bind / /`): {args:?}");
    assert!(!args.windows(3).any(|w| w == ["--ro-bind", "/", "/"]), "not bwrap's own `--ro-bind / /`: {args:?}");
    let out = Launcher::as_account(&ws, user)
        .env("AGENT_SANDBOX_EGRESS_JAIL", "0")
        .sh("echo root=$(awk '$5 == \"/\" {print $6}' /proc/self/mountinfo | head -n 1); echo x > /dev/null && echo null=writable");
    out.assert_ok();
    let kv = out.kv();
    let root = kv.get("root").map(String::as_str).unwrap_or("");
    assert!(["ro", "nosuid", "nodev"].iter().all(|f| root.split(',').any(|o| o == *f)), "/ in the session: {root:?}\n{out}");
    assert_eq!(kv.get("null").map(String::as_str), Some("writable"), "{out}");
}
