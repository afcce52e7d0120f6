//! What a session sees of the host beyond its workspace: a root
//! launcher's session and root's private files and sockets, the runtime
//! directories, the tool caches (private by default), package-index tokens,
//! and configurations that would hand a session a system location. Real
//! sessions; each finding of the adversarial review is reproduced here.
//!
//! Needs root, bubblewrap and python3; a missing prerequisite fails the test.

use crate::support::launcher::*;
use std::os::unix::net::UnixListener;
use std::path::Path;

fn setup(tag: &str) -> TestDir {
    require_root();
    require_bwrap();
    TestDir::new(tag)
}

/// A root-owned place outside every home and workspace, removed on drop.
struct Planted(Vec<std::path::PathBuf>);

impl Drop for Planted {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_dir_all(p);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// `script`'s `key=value` lines, from a session of `account` in `ws`,
/// with the egress jail on (`"1"`) or off (`"0"`).
fn session(ws: &Path, account: Account, bin: &Path, script: &str, jail: &str) -> Out {
    let out = Launcher::as_account(ws, account).bin(bin).env("AGENT_SANDBOX_EGRESS_JAIL", jail).sh(script);
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
"#;

/// The review found a root launcher's session reading root's 0600 files
/// (/etc/ssl/private, /etc, /var/lib) and connecting to root-only sockets
/// outside /tmp and /run/user (/run/dbus, k3s, Docker Desktop's
/// /run/host-services/ssh-auth.sock). A session reaches no more than an
/// ordinary user's would: both are checked against the same plants.
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
    let _planted = Planted(vec![etc.clone(), varlib.clone(), private.clone(), run.parent().unwrap().to_path_buf()]);
    for d in [&etc, &varlib, &run] {
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

    let bin = td.public_bin();
    let script =
        format!("ETC={} VARLIB={} PRIVATE={} RUNSOCK={}\n{PROBE}", etc.display(), varlib.display(), private.display(), run.join("ssh-auth.sock").display());
    // Root twice: without the jail bwrap starts after the scan; in the jail
    // it starts at once and the scan's masks follow before the gate opens.
    for (account, jail) in [(root_account(), "0"), (root_account(), "1"), (test_user(), "0")] {
        let ws = td.workspace(&unique(&account.name));
        chown(&ws, account.uid, account.gid);
        let out = session(&ws, account.clone(), &bin, &script, jail);
        assert_eq!(out.get("etc_public"), "reached", "the check must be able to read (sanity)\n{out}");
        for key in ["etc_key", "varlib_secret", "private_dir", "private_file", "root_socket", "run_socket"] {
            assert_eq!(out.get(key), "refused", "{} (jail {jail}) reached {key}\n{out}", account.name);
        }
    }
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
