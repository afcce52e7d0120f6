//! Whole-value tests of the plan for representative launches. The argv is
//! rendered one option per line so a change shows as a readable diff.

use super::*;
use crate::agents::Agent;
use crate::sandbox::fsview::{Kind, TableFs};
use crate::sandbox::gitconfig::GitIdentity;
use std::collections::BTreeMap;

fn ctx(uid: u32, user: &str, home: &str, cwd: &str, agent: Agent) -> Context {
    let mut env = BTreeMap::new();
    for (k, v) in [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("TERM", "xterm-256color"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        ("AWS_SECRET_ACCESS_KEY", "s3cr3t"),
        ("GITHUB_TOKEN", "ghp_x"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
        ("LD_PRELOAD", "/tmp/evil.so"),
        ("VSCODE_IPC_HOOK_CLI", "/tmp/vscode-ipc.sock"),
        ("DISPLAY", ":0"),
        ("HOME", home),
        ("MY_TOKEN", "passme"),
    ] {
        env.insert(k.into(), v.into());
    }
    Context {
        uid,
        gid: uid,
        user: user.into(),
        home: home.into(),
        shell: "/bin/bash".into(),
        cwd: cwd.into(),
        env,
        agent,
        command: vec!["/usr/bin/claude".into(), "--no-chrome".into()],
        bwrap: "/usr/bin/bwrap".into(),
        shim_dir: Some("/usr/local/bin".into()),
        session_id: "s1".into(),
        git_identity: GitIdentity { name: Some("Dev".into()), email: Some("dev@example.org".into()) },
        forge_helpers: vec![("https://github.com".into(), "/usr/bin/gh".into())],
        network: Network::Host,
        peers_flag: false,
        fresh_proc: true,
        apparmor: None,
        shell_path: Default::default(),
        host_view: if uid == 0 {
            HostView::Unprivileged { uid: 65533, gid: 65533, groups: vec![], idmapped: vec![home.into(), cwd.into()] }
        } else {
            HostView::Launcher
        },
        kernel_root_only: vec![],
        mount_api: crate::sandbox::mountfd::MountApi::Tree,
    }
}

fn fs() -> TableFs {
    TableFs::default()
        .with("/var/tmp", Kind::Dir)
        .with("/run/user", Kind::Dir)
        .with("/run/docker.sock", Kind::Socket)
        .with("/etc/shadow", Kind::File)
        .with("/etc/sudoers.d", Kind::Dir)
        .with("/etc/ssh/ssh_host_ed25519_key", Kind::File)
        .with("/etc/ssh/ssh_host_ed25519_key.pub", Kind::File)
        .with("/root/.cache", Kind::Dir)
        .with("/root/.local/share/keyrings", Kind::Dir)
        .with("/root/.config/gh", Kind::Dir)
        .with("/workspaces/app/.git/hooks", Kind::Dir)
        .with("/workspaces/app/.devcontainer", Kind::Dir)
        .with("/workspaces/other", Kind::Dir)
        .with("/home/dev/.cache", Kind::Dir)
        .with("/home/dev/src/app", Kind::Dir)
        .with("/home/dev/src/lib", Kind::Dir)
        .with("/home/dev/src/.secret", Kind::Dir)
        .with("/dev/nvidia0", Kind::CharDevice)
        .with("/dev/nvidiactl", Kind::CharDevice)
        .with("/dev/kvm", Kind::CharDevice)
        .with("/data/models", Kind::Dir)
}

/// The argv, one bwrap option per line.
/// Every mount of the plan in order, as bwrap arguments (also those the
/// executor makes itself before bwrap: `bwrap_lines` leaves them out).
fn lines(plan: &Plan) -> String {
    let mut all = plan.clone();
    all.premount = crate::sandbox::mountfd::MountApi::None;
    bwrap_lines(&all)
}

/// bwrap's own arguments, one option a line.
fn bwrap_lines(plan: &Plan) -> String {
    let mut out = String::new();
    let mut in_command = false;
    for a in &plan.args() {
        let a = a.to_string_lossy();
        if a.starts_with("--") && !out.is_empty() && !in_command {
            in_command = a == "--";
            out.push('\n');
        } else if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&a);
    }
    out
}

const ROOT_CLAUDE: &str = "\
--unshare-user
--unshare-pid
--unshare-ipc
--unshare-uts
--unshare-cgroup-try
--die-with-parent
--cap-drop ALL
--uid 0
--gid 0
--ro-bind / /
--dev /dev
--proc /proc
--ro-bind-try /proc/sys /proc/sys
--tmpfs /tmp
--tmpfs /var/tmp
--tmpfs /run
--ro-bind-data 3 /etc/shadow
--tmpfs /etc/sudoers.d
--remount-ro /etc/sudoers.d
--ro-bind-data 4 /etc/ssh/ssh_host_ed25519_key
--tmpfs /root
--bind-try /root/.claude /root/.claude
--bind-try /root/.claude.json /root/.claude.json
--bind-fd 5 /root/.cache
--bind-fd 6 /root/.local/share
--ro-bind /root/.config/gh /root/.config/gh
--ro-bind-data 7 /root/.netrc
--ro-bind-data 8 /root/.Xauthority
--ro-bind-data 9 /root/.ICEauthority
--bind /workspaces/app /workspaces/app
--bind-fd 10 /workspaces/app/.git
--ro-bind-fd 11 /workspaces/app/.devcontainer
--ro-bind-fd 12 /workspaces/app/.git/hooks
--ro-bind-data 1 /root/.gitconfig
--ro-bind-data 2 /dev/.agent-sandbox-session
--seccomp 0
--chdir /workspaces/app
-- /usr/bin/claude --no-chrome";

/// What each mount of `ROOT_CLAUDE` is for.
const ROOT_CLAUDE_ROLES: &str = "\
/ read-only-root
/dev devices
/proc pid-namespace
/proc/sys kernel-interfaces
/tmp tmp
/var/tmp tmp
/run run-user,engines
/etc/shadow credentials
/etc/sudoers.d credentials
/etc/ssh/ssh_host_ed25519_key credentials
/root home
/root/.claude agent-state
/root/.claude.json agent-state
/root/.cache tool-dirs
/root/.local/share tool-dirs
/root/.config/gh forge
/root/.netrc credentials
/root/.Xauthority credentials
/root/.ICEauthority credentials
/workspaces/other siblings
/workspaces/app workspace
/workspaces/app/.git git-dir-pins
/workspaces/app/.devcontainer protections
/workspaces/app/.git/hooks protections
/root/.gitconfig git
/dev/.agent-sandbox-session recursion";

/// Data descriptors are FIRST_DATA_FD-based; the table above numbers them
/// from 0 for readability, shifted here.
fn expected(text: &str) -> String {
    text.lines()
        .map(|l| {
            let mut parts: Vec<String> = l.split(' ').map(String::from).collect();
            if matches!(parts[0].as_str(), "--ro-bind-data" | "--seccomp" | "--bind-fd" | "--ro-bind-fd") {
                let n: i32 = parts[1].parse().unwrap();
                parts[1] = (n + FIRST_DATA_FD).to_string();
            }
            parts.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// With the whole mount API the executor makes every mount but `/dev`,
/// `/proc` and what lies in them: bwrap binds the (read-only) host tree as
/// it is and adds only those, so it re-reads the mount table a handful of
/// times, not once per read-only mount.
#[test]
fn with_the_whole_mount_api_bwrap_gets_only_dev_and_proc() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.mount_api = crate::sandbox::mountfd::MountApi::Full;
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    // The same mounts as with bwrap making them.
    assert_eq!(lines(&plan), expected(ROOT_CLAUDE));
    let want = "\
--unshare-user
--unshare-pid
--unshare-ipc
--unshare-uts
--unshare-cgroup-try
--die-with-parent
--cap-drop ALL
--uid 0
--gid 0
--bind / /
--dev /dev
--proc /proc
--ro-bind-try /proc/sys /proc/sys
--ro-bind-data 2 /dev/.agent-sandbox-session
--seccomp 0
--chdir /workspaces/app
-- /usr/bin/claude --no-chrome";
    assert_eq!(bwrap_lines(&plan), expected(want));
    // Only the marker's and the filter's descriptors reach bwrap.
    let used: Vec<&str> = plan.data.iter().zip(plan.data_for_bwrap()).filter(|(_, u)| *u).map(|(d, _)| d.purpose.name()).collect();
    assert_eq!(used, ["seccomp", "marker"]);
    // Each of the executor's mounts is walked to from the mount that covers
    // it (the parent directory where only the host's tree does); mount
    // points are made in its own tmpfs, and on the host (before any
    // idmapped tree covers them) only in places sessions write.
    let premounts = plan.premounts();
    let row = |dest: &str| {
        let p = premounts.iter().find(|p| plan.mounts[p.mount].dest() == Path::new(dest)).unwrap_or_else(|| panic!("{dest} is not the executor's"));
        (p.root.to_str().unwrap().to_string(), p.rel.to_str().unwrap().to_string(), p.fresh, p.host.is_some())
    };
    let r = |root: &str, rel: &str, fresh, host| (root.to_string(), rel.to_string(), fresh, host);
    assert_eq!(row("/tmp"), r("/", "tmp", false, false));
    assert_eq!(row("/etc/shadow"), r("/etc", "shadow", false, false));
    assert_eq!(row("/root"), r("/", "root", false, false));
    assert_eq!(row("/root/.claude"), r("/root", ".claude", true, false));
    assert_eq!(row("/root/.cache"), r("/root", ".cache", true, false));
    assert_eq!(row("/root/.netrc"), r("/root", ".netrc", true, false));
    assert_eq!(row("/root/.gitconfig"), r("/root", ".gitconfig", true, false));
    assert_eq!(row("/workspaces/app"), r("/workspaces", "app", false, false));
    assert_eq!(row("/workspaces/app/.git/hooks"), r("/workspaces/app/.git", "hooks", false, true));
    for p in &premounts {
        assert!(!crate::sandbox::premount::bwrap_only(&plan.mounts[p.mount]), "{:?}", plan.mounts[p.mount]);
    }
    // A weakened root (bound writable) stays bound as it is.
    let mut weak = plan.clone();
    weak.mounts[0].mount = Mount::Bind { src: "/".into(), dest: "/".into(), optional: false };
    assert!(bwrap_lines(&weak).contains("\n--bind / /\n"));
}

/// Each mount of the plan with the roles it serves, one a line.
fn role_lines(plan: &Plan) -> String {
    let mut out = Vec::new();
    for m in &plan.mounts {
        let roles = serde_json::to_value(m.roles).unwrap();
        let roles: Vec<&str> = roles.as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        out.push(format!("{} {}", m.dest().display(), roles.join(",")));
    }
    out.join("\n")
}

/// A non-root user with peers, shared tool dirs, the jail, allowWrite,
/// devices, the GPU and a writable PATH dir ahead of the shims.
const NON_ROOT_EVERYTHING_ROLES: &str = "\
/ read-only-root
/dev devices
/dev/kvm allow-device
/dev/nvidia0 gpu
/dev/nvidiactl gpu
/proc pid-namespace
/proc/sys kernel-interfaces
/tmp tmp
/var/tmp tmp
/run run-user,engines
/etc/shadow credentials
/etc/sudoers.d credentials
/etc/ssh/ssh_host_ed25519_key credentials
/home/dev home
/home/dev/.claude agent-state
/home/dev/.claude.json agent-state
/home/dev/.cache shared-tool-dirs
/home/dev/.local/share shared-tool-dirs
/home/dev/.local/share/direnv trust-stores
/home/dev/.local/share/agent-sandbox trust-stores
/home/dev/.netrc credentials
/home/dev/.Xauthority credentials
/home/dev/.ICEauthority credentials
/home/dev/src/lib peers
/home/dev/src/app workspace
/data/models allow-write
/home/dev/src/app/.venv entry-points
/home/dev/src/app/.venv/bin entry-points
/home/dev/src/app/.venv/bin/claude entry-points
/home/dev/src/app/.venv/bin/codex entry-points
/home/dev/src/app/.venv/bin/pi entry-points
/home/dev/src/app/.venv/bin/agent-sandbox entry-points
/home/dev/src/app/.venv/bin/sandbox-install entry-points
/home/dev/.gitconfig git
/dev/.agent-sandbox-session recursion
/etc/resolv.conf jail-dns
/dev/.agent-sandbox-gate gate";

/// A scanned root session under a masked /proc.
const SCANNED_ROOT_ROLES: &str = "\
/ read-only-root
/dev devices
/proc container-proc
/proc/sys kernel-interfaces
/proc/sysrq-trigger kernel-interfaces
/proc/irq kernel-interfaces
/proc/bus kernel-interfaces
/proc/acpi kernel-interfaces
/proc/scsi kernel-interfaces
/proc/sys/net/ipv6/conf root-only
/proc/sys/net/ipv6/conf/all root-only
/proc/sys/net/ipv6/conf/default root-only
/proc/slabinfo root-only
/sys root-only
/sys/fs/cgroup root-only
/sys/devices/system/cpu root-only
/sys/fs/cgroup/secret root-only
/tmp tmp
/var/tmp tmp
/run run-user,engines
/etc/shadow credentials
/etc/sudoers.d credentials
/etc/ssh/ssh_host_ed25519_key credentials
/root home
/root/.claude agent-state
/root/.claude.json agent-state
/root/.cache tool-dirs
/root/.local/share tool-dirs
/root/.config/gh forge
/root/.netrc credentials
/root/.Xauthority credentials
/root/.ICEauthority credentials
/workspaces/other siblings
/workspaces/app workspace
/workspaces/app/.git git-dir-pins
/workspaces/app/.devcontainer protections
/workspaces/app/.git/hooks protections
/root/.gitconfig git
/dev/.agent-sandbox-session recursion";

/// Every mount says why it is there, decided with it: the defence it
/// implements, or what it gives the session (verify's weakenings remove
/// a defence by it, review finds the shared tool dirs by it).
#[test]
fn every_mount_says_which_defence_it_implements_or_what_it_gives() {
    let mut c = ctx(1000, "dev", "/home/dev", "/home/dev/src/app", Agent::Claude);
    c.network = Network::Jail { resolv_conf: "nameserver 192.0.2.53\n".into(), gate_exe: "/usr/local/bin/agent-sandbox".into() };
    c.env.insert("PATH".into(), "/home/dev/src/app/.venv/bin:/usr/local/bin:/usr/bin".into());
    c.peers_flag = true;
    let config =
        Config { share_tool_dirs: true, allow_write: vec!["/data/models".into()], allow_device: vec!["/dev/kvm".into()], gpu: true, ..Config::default() };
    let table = fs().with("/home/dev/src/app/.venv/bin", Kind::Dir).with("/home/dev/.local/share", Kind::Dir);
    let plan = build(&c, &config, &table).unwrap();
    assert_eq!(role_lines(&plan), NON_ROOT_EVERYTHING_ROLES);
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.host_view = HostView::Scan { why: "test".into() };
    c.kernel_root_only = vec![
        ("/proc/slabinfo".into(), Kind::File),
        ("/proc/sys/net/ipv6/conf/eth0/stable_secret".into(), Kind::File),
        ("/sys/fs/cgroup/secret".into(), Kind::File),
    ];
    c.fresh_proc = false;
    let plan = build(&c, &Config::default(), &fs().with("/sys", Kind::Dir)).unwrap();
    assert_eq!(role_lines(&plan), SCANNED_ROOT_ROLES);
    let plan = build(&ctx(0, "root", "/root", "/workspaces/app", Agent::Claude), &Config::default(), &fs()).unwrap();
    assert_eq!(role_lines(&plan), ROOT_CLAUDE_ROLES);
}

#[test]
fn root_claude_whole_argv() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    assert_eq!(lines(&plan), expected(ROOT_CLAUDE));
    // What lies in the workspace is mounted by the executor, by
    // descriptor, before bwrap starts: not bwrap's.
    let premounts = plan.premounts();
    let premounted: Vec<(usize, &str, &str)> = premounts.iter().map(|p| (p.mount, p.root.to_str().unwrap(), p.rel.to_str().unwrap())).collect();
    let at = |dest: &str| plan.mounts.iter().position(|m| m.dest() == Path::new(dest)).unwrap();
    assert_eq!(
        premounted,
        [
            (at("/workspaces/app/.git"), "/workspaces/app", ".git"),
            (at("/workspaces/app/.devcontainer"), "/workspaces/app", ".devcontainer"),
            (at("/workspaces/app/.git/hooks"), "/workspaces/app", ".git/hooks"),
        ]
    );
    let want: String = expected(ROOT_CLAUDE).lines().filter(|l| !l.contains("/workspaces/app/.")).collect::<Vec<_>>().join("\n");
    assert_eq!(bwrap_lines(&plan), want);
    assert_eq!(plan.data_for_bwrap().iter().filter(|u| !**u).count(), 3, "the three premounts' descriptors stay closed");
    // The sibling is hidden before bwrap starts (a root launcher's
    // executor has a mount namespace of its own).
    assert_eq!(plan.early_masks(), [Path::new("/workspaces/other")]);
    assert_eq!(plan.workspace, PathBuf::from("/workspaces/app"));
    let ensure = |rel: &str, required| EnsureDir { root: "/root".into(), rel: rel.into(), required };
    let private = format!(".local/share/agent-sandbox/workspaces/{}", workspace_key(Path::new("/workspaces/app")));
    assert_eq!(plan.ensure_dirs, vec![ensure(".claude", false), ensure(&format!("{private}/cache"), true), ensure(&format!("{private}/share"), true)]);
    let purposes: Vec<_> = plan.data.iter().map(|d| d.purpose.name()).collect();
    assert_eq!(
        purposes,
        ["seccomp", "gitconfig", "marker", "empty", "empty", "protected", "protected", "empty", "empty", "empty", "protected", "protected", "protected"]
    );
    assert!(plan.data[3..].iter().all(|d| d.bytes.is_empty()));
    // The private tool dirs and the protected paths are opened by the
    // executor, relative to the home and the workspace.
    let opened: Vec<(PathBuf, PathBuf, bool)> = plan.data.iter().filter_map(|d| d.open.as_ref().map(|o| (o.root.clone(), o.rel.clone(), o.dir))).collect();
    let o = |root: &str, rel: &str| (PathBuf::from(root), PathBuf::from(rel), true);
    assert_eq!(
        opened,
        [
            o("/root", &format!("{private}/cache")),
            o("/root", &format!("{private}/share")),
            o("/workspaces/app", ".git"),
            o("/workspaces/app", ".devcontainer"),
            o("/workspaces/app", ".git/hooks"),
        ]
    );
}

#[test]
fn environment_is_the_allow_list_plus_launcher_values() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let config = Config { pass_env: vec!["MY_TOKEN".into()], ..Config::default() };
    let plan = build(&c, &config, &fs()).unwrap();
    let env: Vec<(String, String)> = plan.env.iter().map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into())).collect();
    let want: Vec<(String, String)> = [
        ("AGENT_SANDBOX_SESSION", "s1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("GIT_CONFIG_GLOBAL", "/root/.gitconfig"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("HOME", "/root"),
        ("IS_SANDBOX", "1"),
        ("IS_SANDBOX_AGENT", "claude"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        ("LOGNAME", "root"),
        ("MY_TOKEN", "passme"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("SHELL", "/bin/bash"),
        ("TERM", "xterm-256color"),
        ("TMPDIR", "/tmp"),
        ("USER", "root"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(env, want);
}

#[test]
fn pass_env_cannot_name_never_passed_variables() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    for bad in ["LD_PRELOAD", "PATH", "HOME", "BASH_ENV", "SSH_AUTH_SOCK", "VSCODE_IPC_HOOK_CLI"] {
        let config = Config { pass_env: vec![bad.into()], ..Config::default() };
        assert_eq!(build(&c, &config, &fs()), Err(PlanError::NeverPassed(bad.into())), "{bad}");
    }
}

#[test]
fn tool_dirs_are_private_unless_shared_and_trust_stores_stay_read_only() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    assert_eq!(access(&plan.mounts, Path::new("/root/.cache/x")), crate::sandbox::scope::Access::Write);
    let got = lines(&plan);
    assert!(!got.contains("--bind /root/.cache") && !got.contains("/root/.local/share/keyrings"), "{got}");
    // Shared: the user's own, credential corners masked, direnv read-only
    // (an empty read-only one where none exists yet).
    let shared = Config { share_tool_dirs: true, ..Config::default() };
    let got = lines(&build(&c, &shared, &fs()).unwrap());
    assert!(got.contains("\n--bind /root/.cache /root/.cache\n--bind /root/.local/share /root/.local/share\n"), "{got}");
    assert!(got.contains("\n--tmpfs /root/.local/share/keyrings\n--remount-ro /root/.local/share/keyrings\n"), "{got}");
    assert!(got.contains("\n--tmpfs /root/.local/share/direnv\n--remount-ro /root/.local/share/direnv\n"), "{got}");
    let table = fs().with("/root/.local/share/direnv/allow", Kind::Dir);
    let plan = build(&c, &shared, &table).unwrap();
    assert!(lines(&plan).contains("\n--ro-bind /root/.local/share/direnv /root/.local/share/direnv\n"));
    assert_eq!(access(&plan.mounts, Path::new("/root/.local/share/direnv/allow/x")), crate::sandbox::scope::Access::Read);
    assert!(build(&c, &shared, &table).unwrap().ensure_dirs.iter().all(|d| !d.required));
    // Shared, the sandbox's own state (every workspace's private copies)
    // stays read-only: a session cannot plant into another project's.
    assert!(got.contains("\n--tmpfs /root/.local/share/agent-sandbox\n--remount-ro /root/.local/share/agent-sandbox\n"), "{got}");
    let table = fs().with("/root/.local/share/agent-sandbox/workspaces", Kind::Dir);
    let plan = build(&c, &shared, &table).unwrap();
    assert_eq!(access(&plan.mounts, Path::new("/root/.local/share/agent-sandbox/workspaces/k/cache/x")), crate::sandbox::scope::Access::Read);
}

/// Review watches the user's own tool dirs when a session writes them
/// (`shareToolDirs`), and not the private copies.
#[test]
fn review_finds_the_shared_tool_dirs_by_their_role() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let private = build(&c, &Config::default(), &fs()).unwrap();
    assert_eq!(crate::review::session::shared_dirs(&private.mounts), Vec::<PathBuf>::new());
    let shared = build(&c, &Config { share_tool_dirs: true, ..Config::default() }, &fs()).unwrap();
    assert_eq!(crate::review::session::shared_dirs(&shared.mounts), [PathBuf::from("/root/.cache"), PathBuf::from("/root/.local/share")]);
}

/// Each workspace has its own private tool dirs, keyed by its canonical
/// path: a session of one never sees another's.
#[test]
fn private_tool_dirs_are_per_workspace() {
    let dirs = |ws: &str| {
        let c = ctx(0, "root", "/root", ws, Agent::Claude);
        build(&c, &Config::default(), &fs()).unwrap().data.iter().filter_map(|d| d.open.clone()).map(|o| o.rel).take(2).collect::<Vec<_>>()
    };
    let (a, b) = (dirs("/workspaces/app"), dirs("/workspaces/other"));
    assert_eq!(a, private_tool_dirs(Path::new("/workspaces/app")));
    assert_ne!(a, b);
    assert!(a.iter().chain(&b).all(|d| d.starts_with(PRIVATE_TOOL_ROOT)), "{a:?} {b:?}");
    assert_eq!(workspace_key(Path::new("/workspaces/app")), crate::review::digest(b"/workspaces/app"), "the same key as review's baselines");
    assert_eq!(workspace_key(Path::new("/workspaces/app")).len(), 32);
}

#[test]
fn non_root_user_masks_their_own_home_and_peers_stay_read_only() {
    let mut c = ctx(1000, "dev", "/home/dev", "/home/dev/src/app", Agent::Codex);
    c.command = vec!["/usr/local/bin/codex".into()];
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    let got = lines(&plan);
    assert!(got.contains("\n--tmpfs /home/dev\n--bind-try /home/dev/.codex /home/dev/.codex\n--bind-fd 8 /home/dev/.cache\n"), "{got}");
    assert!(!got.contains("/root"), "{got}");
    assert!(!got.contains(".claude"), "{got}");
    // Without peers: siblings under the home are already gone with its tmpfs.
    assert!(!got.contains("/home/dev/src/lib"), "{got}");
    assert!(got.contains("\n--bind /home/dev/src/app /home/dev/src/app\n"), "{got}");
    assert_eq!(plan.env.get(std::ffi::OsStr::new("HOME")).unwrap(), "/home/dev");
    assert_eq!(plan.env.get(std::ffi::OsStr::new("IS_SANDBOX_AGENT")).unwrap(), "codex");

    c.peers_flag = true;
    let got = lines(&build(&c, &Config::default(), &fs()).unwrap());
    assert!(got.contains("\n--ro-bind-try /home/dev/src/lib /home/dev/src/lib\n"), "{got}");
    assert!(!got.contains(".secret"), "dot-siblings stay hidden: {got}");
}

#[test]
fn peers_outside_home_are_not_masked() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let config = Config { peers: true, ..Config::default() };
    let got = lines(&build(&c, &config, &fs()).unwrap());
    assert!(!got.contains("/workspaces/other"), "{got}");
    let plan = build(&c, &config, &fs()).unwrap();
    assert_eq!(access(&plan.mounts, Path::new("/workspaces/other/README")), crate::sandbox::scope::Access::Read);
}

#[test]
fn each_agent_gets_its_own_state_only() {
    for (agent, mine, not) in
        [(Agent::Claude, "/root/.claude", "/root/.codex"), (Agent::Codex, "/root/.codex", "/root/.claude"), (Agent::Pi, "/root/.pi", "/root/.codex")]
    {
        let c = ctx(0, "root", "/root", "/workspaces/app", agent);
        let got = lines(&build(&c, &Config::default(), &fs()).unwrap());
        assert!(got.contains(&format!("--bind-try {mine} {mine}")), "{agent:?}: {got}");
        assert!(!got.contains(not), "{agent:?}: {got}");
    }
}

#[test]
fn no_forge_drops_token_stores_and_helpers() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let config = Config { no_forge: true, ..Config::default() };
    let plan = build(&c, &config, &fs()).unwrap();
    assert!(!lines(&plan).contains(".config/gh"));
    let git = String::from_utf8(plan.data[1].bytes.clone()).unwrap();
    assert!(!git.contains("credential"), "{git}");
    let with = build(&c, &Config::default(), &fs()).unwrap();
    assert!(String::from_utf8(with.data[1].bytes.clone()).unwrap().contains("[credential \"https://github.com\"]"));
}

#[test]
fn allow_write_devices_and_gpu() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let config = Config { allow_write: vec!["/data/models".into()], allow_device: vec!["/dev/kvm".into()], gpu: true, ..Config::default() };
    let got = lines(&build(&c, &config, &fs()).unwrap());
    assert!(got.contains("\n--dev /dev\n--dev-bind /dev/kvm /dev/kvm\n--dev-bind-try /dev/nvidia0 /dev/nvidia0\n--dev-bind-try /dev/nvidiactl /dev/nvidiactl\n--proc /proc\n"), "{got}");
    assert!(got.contains("\n--bind /data/models /data/models\n"), "{got}");

    let missing = Config { allow_write: vec!["/nope".into()], ..Config::default() };
    assert_eq!(build(&c, &missing, &fs()), Err(PlanError::MissingAllowWrite("/nope".into())));
    let not_dev = Config { allow_device: vec!["/dev/nope".into()], ..Config::default() };
    assert_eq!(build(&c, &not_dev, &fs()), Err(PlanError::NotADevice("/dev/nope".into())));
}

#[test]
fn entry_points_in_writable_path_dirs_are_covered() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.env.insert("PATH".into(), "/workspaces/app/.venv/bin:/usr/local/bin:/workspaces/app/late".into());
    let table = fs().with("/workspaces/app/.venv/bin", Kind::Dir).with("/workspaces/app/late", Kind::Dir);
    let plan = build(&c, &Config::default(), &table).unwrap();
    let got = lines(&plan);
    for name in ENTRY_POINTS {
        assert!(got.contains(&format!("/workspaces/app/.venv/bin/{name}\n")), "{name}: {got}");
        // Directories after the shims cannot shadow them.
        assert!(!got.contains(&format!("/workspaces/app/late/{name}")), "{name}: {got}");
    }
}

/// The mounts over `under` in order, as `KIND DEST` (binds from
/// descriptors as `pin`/`pin-ro`, masks as `mask`).
fn guard_mounts(plan: &Plan, under: &str) -> Vec<String> {
    plan.mounts
        .iter()
        .filter(|m| m.dest().starts_with(under))
        .filter_map(|m| match &m.mount {
            Mount::BindFd { dest, data, writable } if plan.data[*data].purpose == Purpose::Pinned => {
                Some(format!("{} {}", if *writable { "pin" } else { "pin-ro" }, dest.display()))
            }
            Mount::Mask { dest, .. } => Some(format!("mask {}", dest.display())),
            _ => None,
        })
        .collect()
}

fn masks(dir: &str) -> Vec<String> {
    ENTRY_POINTS.iter().map(|n| format!("mask {dir}/{n}")).collect()
}

/// A guarded directory is pinned, with each directory between it and the
/// bind it lies in, before its entry points are masked: a mount point can
/// be neither renamed nor removed, so the session cannot swap the
/// directory for one holding a plant.
#[test]
fn guarded_path_dirs_are_pinned_up_to_their_bind() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.env.insert("PATH".into(), "/workspaces/app/.venv/bin:/usr/local/bin".into());
    let table = fs().with("/workspaces/app/.venv/bin", Kind::Dir).with("/workspaces/app/.venv", Kind::Dir);
    let plan = build(&c, &Config::default(), &table).unwrap();
    let mut want = vec!["pin /workspaces/app/.venv".to_string(), "pin /workspaces/app/.venv/bin".to_string()];
    want.extend(masks("/workspaces/app/.venv/bin"));
    assert_eq!(guard_mounts(&plan, "/workspaces/app/.venv"), want);
    // Reached through a link the session could point elsewhere: refused.
    let linked = fs().with("/workspaces/app/.venv/bin", Kind::Dir).with_link("/workspaces/app/.venv", "/workspaces/app/venv-real");
    assert_eq!(
        build(&c, &Config::default(), &linked),
        Err(PlanError::UnguardableLink { dir: "/workspaces/app/.venv/bin".into(), link: "/workspaces/app/.venv".into() })
    );
}

fn origin(file: &str, line: usize) -> crate::sandbox::shellrc::Origin {
    crate::sandbox::shellrc::Origin { file: file.into(), line }
}

/// The PATH the user's shells will have (their start-up files), not only
/// this session's: a directory there that a session's writes reach outside
/// is guarded; one in the home's tmpfs is not (nothing persists); one that
/// does not exist yet where a session could make it refuses the launch.
#[test]
fn directories_the_shells_put_on_path_are_guarded_too() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.shell_path.dirs = vec![
        ("/root/.local/share/pnpm".into(), origin("/root/.bashrc", 12)),
        ("/root/.local/bin".into(), origin("/root/.profile", 3)),
        ("/workspaces/app/node_modules/.bin".into(), origin("/root/.bashrc", 20)),
    ];
    let table = fs()
        .with("/root/.local/share", Kind::Dir)
        .with("/root/.local/share/pnpm", Kind::Dir)
        .with("/root/.local/bin", Kind::Dir)
        .with("/workspaces/app/node_modules/.bin", Kind::Dir)
        .with("/workspaces/app/node_modules", Kind::Dir);
    let plan = build(&c, &Config::default(), &table).unwrap();
    let mut want = vec!["pin /root/.local/share/pnpm".to_string()];
    want.extend(masks("/root/.local/share/pnpm"));
    assert_eq!(guard_mounts(&plan, "/root/.local/share/pnpm"), want, "shared tool data: writes land outside");
    assert_eq!(guard_mounts(&plan, "/root/.local/bin"), Vec::<String>::new(), "in the home's tmpfs nothing persists");
    let mut want = vec!["pin /workspaces/app/node_modules".to_string(), "pin /workspaces/app/node_modules/.bin".to_string()];
    want.extend(masks("/workspaces/app/node_modules/.bin"));
    assert_eq!(guard_mounts(&plan, "/workspaces/app/node_modules"), want);

    // Missing where a session could make it: refused, naming the line.
    let no_pnpm = fs().with("/root/.local/share", Kind::Dir).with("/root/.local/bin", Kind::Dir);
    c.shell_path.dirs.truncate(1);
    let e = build(&c, &Config::default(), &no_pnpm).unwrap_err();
    assert_eq!(e, PlanError::UnguardableShellDir { dir: "/root/.local/share/pnpm".into(), origin: "/root/.bashrc:12".into(), what: "puts on PATH".into() });
    assert!(
        e.to_string().starts_with("/root/.bashrc:12 puts on PATH /root/.local/share/pnpm, which does not exist yet")
            && e.to_string().contains("mkdir -p /root/.local/share/pnpm"),
        "{e}"
    );
}

/// A directory the shells put on PATH through a link outside the session's
/// reach (~/proj -> /workspaces/app) is guarded where it really is.
#[test]
fn a_shell_path_dir_reached_through_a_link_is_guarded_at_its_target() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.shell_path.dirs = vec![("/root/proj/bin".into(), origin("/root/.bashrc", 4))];
    let table = fs().with("/workspaces/app/bin", Kind::Dir).with_link("/root/proj", "/workspaces/app");
    let plan = build(&c, &Config::default(), &table).unwrap();
    let mut want = vec!["pin /workspaces/app/bin".to_string()];
    want.extend(masks("/workspaces/app/bin"));
    assert_eq!(guard_mounts(&plan, "/workspaces/app/bin"), want);
    // Missing there: refused, as a session could make it.
    c.shell_path.dirs = vec![("/root/proj/tools".into(), origin("/root/.bashrc", 4))];
    assert!(matches!(build(&c, &Config::default(), &table), Err(PlanError::UnguardableShellDir { .. })));
}

/// An alias of an entry point to a file, and the vendors' install
/// directories in the bound-back state: their directory is read-only.
#[test]
fn aliased_files_and_vendor_install_dirs_are_read_only() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.shell_path.aliases = vec![("codex".into(), "/workspaces/app/tools/codex".into(), origin("/root/.bashrc", 7))];
    let table = fs().with("/root/.claude/local", Kind::Dir).with("/workspaces/app/tools", Kind::Dir);
    let plan = build(&c, &Config::default(), &table).unwrap();
    assert_eq!(guard_mounts(&plan, "/root/.claude"), vec!["pin-ro /root/.claude/local"]);
    assert_eq!(guard_mounts(&plan, "/workspaces/app/tools"), vec!["pin-ro /workspaces/app/tools"]);
    assert_eq!(access(&plan.mounts, Path::new("/root/.claude/local/claude")), crate::sandbox::scope::Access::Read);
    // No local install: nothing to pin; an alias into a missing directory
    // a session could make refuses the launch.
    c.shell_path.aliases = vec![("claude".into(), "/root/.claude/local/claude".into(), origin("/root/.bashrc", 9))];
    let e = build(&c, &Config::default(), &fs()).unwrap_err();
    assert!(e.to_string().starts_with("/root/.bashrc:9 aliases `claude` to a file in /root/.claude/local, which does not exist yet"), "{e}");
    c.shell_path.aliases.clear();
    assert_eq!(guard_mounts(&build(&c, &Config::default(), &fs()).unwrap(), "/root/.claude"), Vec::<String>::new());
}

#[test]
fn jail_binds_the_session_resolv_conf() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.network = Network::Jail { resolv_conf: "nameserver 192.0.2.53\n".into(), gate_exe: "/usr/local/bin/agent-sandbox".into() };
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    assert_eq!(plan.data[3].purpose, Purpose::ResolvConf);
    assert!(lines(&plan).contains(&format!("--ro-bind-data {} /etc/resolv.conf\n", FIRST_DATA_FD + 3)));
}

#[test]
fn jail_sessions_wait_at_the_gate_and_others_do_not() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let host = build(&c, &Config::default(), &fs()).unwrap();
    assert_eq!(host.gate_fd, None);
    c.network = Network::Jail { resolv_conf: "nameserver 192.0.2.53\n".into(), gate_exe: "/usr/local/bin/agent-sandbox".into() };
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    assert_eq!(plan.gate_fd, Some(GATE_FD));
    // The command runs through the gate, the launcher's executable bound
    // into the session's private /dev.
    let got = lines(&plan);
    let gate = plan.data.iter().position(|d| d.purpose == Purpose::Gate).expect("the gate's data file");
    assert!(got.contains(&format!("--ro-bind-fd {} {GATE_PATH}\n", FIRST_DATA_FD + gate as i32)), "{got}");
    let open = plan.data[gate].open.as_ref().unwrap();
    assert_eq!((open.root.as_path(), open.rel.as_path(), open.dir), (Path::new("/usr/local/bin"), Path::new("agent-sandbox"), false));
    let args = plan.args();
    let dashes = args.iter().position(|a| a == "--").unwrap();
    assert_eq!(args[dashes + 1], GATE_PATH);
    assert_eq!(args[dashes + 2..], plan.command[..]);
    assert!(!host.args().iter().any(|a| a == GATE_PATH));
    // The data files stay below the gate descriptor.
    assert!(FIRST_DATA_FD + (plan.data.len() as i32) < GATE_FD);
}

#[test]
fn unsafe_workspaces_refuse() {
    let c = ctx(0, "root", "/root", "/", Agent::Claude);
    assert!(matches!(build(&c, &Config::default(), &fs()), Err(PlanError::UnsafeWorkspace(_, _))));
    let c = ctx(1000, "dev", "/home/dev", "/home/dev", Agent::Claude);
    assert!(matches!(build(&c, &Config::default(), &fs()), Err(PlanError::UnsafeWorkspace(_, _))));
    let c = ctx(1000, "dev", "/home/dev", "/home", Agent::Claude);
    assert!(matches!(build(&c, &Config::default(), &fs()), Err(PlanError::UnsafeWorkspace(_, _))));
    // The launcher's home (or a parent) as allowWrite: the home mask undone.
    let c = ctx(1000, "dev", "/home/dev", "/workspaces/app", Agent::Claude);
    for home in ["/home/dev", "/home"] {
        let config = Config { allow_write: vec![home.into()], ..Config::default() };
        assert_eq!(build(&c, &config, &fs().with("/home/dev", Kind::Dir)), Err(PlanError::HomeAllowWrite(home.into())));
    }
}

/// Under a masked /proc the kernel refuses the session a fresh one: the
/// container's own is bound in its place, the rest of the plan unchanged
/// (the pid namespace kept, /proc/sys covered read-only after it; for a
/// scanned root session every kernel interface of PROC_READ_ONLY).
#[test]
fn a_masked_proc_is_replaced_by_the_containers_own() {
    for (uid, user, home) in [(0, "root", "/root"), (1000, "dev", "/home/dev")] {
        let mut c = ctx(uid, user, home, "/workspaces/app", Agent::Claude);
        let fresh = build(&c, &Config::default(), &fs()).unwrap();
        c.fresh_proc = false;
        let masked = build(&c, &Config::default(), &fs()).unwrap();
        assert!(masked.container_proc() && !fresh.container_proc());
        assert_eq!(lines(&masked), lines(&fresh).replacen("\n--proc /proc\n", "\n--bind /proc /proc\n", 1), "{user}");
        assert_eq!(masked.flags, fresh.flags, "the same namespaces, the pid namespace too");
        // With the whole mount API it is bwrap's, as a fresh /proc is.
        c.mount_api = crate::sandbox::mountfd::MountApi::Full;
        let full = build(&c, &Config::default(), &fs()).unwrap();
        let want = format!(
            "--unshare-user\n--unshare-pid\n--unshare-ipc\n--unshare-uts\n--unshare-cgroup-try\n--die-with-parent\n--cap-drop ALL\n--uid {uid}\n--gid {uid}\n\
             --bind / /\n--dev /dev\n--bind /proc /proc\n--ro-bind-try /proc/sys /proc/sys\n--ro-bind-data 2 /dev/.agent-sandbox-session\n--seccomp 0\n\
             --chdir /workspaces/app\n-- /usr/bin/claude --no-chrome"
        );
        assert_eq!(bwrap_lines(&full), expected(&want), "{user}");
    }
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.fresh_proc = false;
    c.host_view = HostView::Scan { why: "test".into() };
    let got = lines(&build(&c, &Config::default(), &fs()).unwrap());
    let proc_lines: Vec<&str> = got.lines().filter(|l| l.contains("/proc")).collect();
    let mut want = vec!["--bind /proc /proc".to_string()];
    want.extend(PROC_READ_ONLY.iter().map(|p| format!("--ro-bind-try {p} {p}")));
    assert_eq!(proc_lines, want);
}

/// Docker's AppArmor profile refuses every mount: no session, and the
/// refusal names the runArgs line (bwrap's own error would not).
#[test]
fn docker_default_apparmor_refuses_with_its_fix() {
    let mut c = ctx(1000, "dev", "/home/dev", "/workspaces/app", Agent::Claude);
    c.apparmor = crate::confinement::parse_apparmor("docker-default (enforce)");
    let e = build(&c, &Config::default(), &fs()).unwrap_err();
    assert_eq!(e, PlanError::AppArmorMounts("docker-default (enforce)".into()));
    assert!(e.to_string().contains("\"--security-opt=apparmor=unconfined\" to \"runArgs\""), "{e}");
    for fine in ["unconfined", "docker-default (complain)", "my-profile (enforce)"] {
        c.apparmor = crate::confinement::parse_apparmor(fine);
        assert!(build(&c, &Config::default(), &fs()).is_ok(), "{fine}");
    }
}

#[test]
fn workspace_root_moves_the_workspace() {
    let c = ctx(0, "root", "/root", "/workspaces/app/sub", Agent::Claude);
    let config = Config { workspace_root: Some("/workspaces/app".into()), ..Config::default() };
    let plan = build(&c, &config, &fs()).unwrap();
    assert_eq!(plan.workspace, PathBuf::from("/workspaces/app"));
    assert_eq!(plan.chdir, PathBuf::from("/workspaces/app/sub"));
    let bad = Config { workspace_root: Some("/missing".into()), ..Config::default() };
    assert_eq!(build(&c, &bad, &fs()), Err(PlanError::MissingWorkspace("/missing".into())));
}

#[test]
fn host_executed_parts_of_the_workspace_are_read_only_and_switchable() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let table = fs()
        .with_text("/workspaces/app/.git/config", "[core]\n\thooksPath = tools/hooks\n")
        .with("/workspaces/app/tools/hooks", Kind::Dir)
        .with("/workspaces/app/.devcontainer.json", Kind::File);
    let plan = build(&c, &Config::default(), &table).unwrap();
    let got = lines(&plan);
    for p in [
        "/workspaces/app/.devcontainer",
        "/workspaces/app/.devcontainer.json",
        "/workspaces/app/.git/hooks",
        "/workspaces/app/tools/hooks",
        "/workspaces/app/.git/config",
    ] {
        assert!(got.lines().any(|l| l.starts_with("--ro-bind-fd ") && l.ends_with(&format!(" {p}"))), "{p}: {got}");
        assert_eq!(access(&plan.mounts, Path::new(p)), crate::sandbox::scope::Access::Read, "{p}");
    }
    // The git directory itself stays writable, pinned by its own bind.
    assert!(got.lines().any(|l| l.starts_with("--bind-fd ") && l.ends_with(" /workspaces/app/.git")), "{got}");
    assert_eq!(access(&plan.mounts, Path::new("/workspaces/app/.git/index")), crate::sandbox::scope::Access::Write);
    assert_eq!(access(&plan.mounts, Path::new("/workspaces/app/src/lib.rs")), crate::sandbox::scope::Access::Write);

    let off = Config { protect_devcontainer: false, protect_git_hooks: false, protect_git_config: false, ..Config::default() };
    let got = lines(&build(&c, &off, &table).unwrap());
    assert!(!got.contains("-fd /workspaces"), "{got}");

    // A symbolic link where a protected directory belongs refuses the launch.
    let planted = fs().with_symlink("/workspaces/app/.devcontainer.json", "../../root/.ssh/id_ed25519");
    match build(&c, &Config::default(), &planted) {
        Err(PlanError::UnsafeEntry(e)) => assert_eq!(e.path, Path::new(".devcontainer.json")),
        other => panic!("{other:?}"),
    }

    // No hooks directory yet: an empty read-only one is mounted instead.
    let bare = TableFs::default().with("/workspaces/app/.git", Kind::Dir);
    let got = lines(&build(&c, &Config::default(), &bare).unwrap());
    assert!(got.contains("\n--tmpfs /workspaces/app/.git/hooks\n--remount-ro /workspaces/app/.git/hooks\n"), "{got}");
}

#[test]
fn the_runtime_directories_are_an_empty_private_tmpfs() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    // /var/run a link to /run (the usual): one tmpfs, nothing under it masked.
    let table = fs().with("/run/secrets", Kind::Dir).with("/run/dbus/system_bus_socket", Kind::Socket).with_link("/var/run", "/run");
    let got = lines(&build(&c, &Config::default(), &table).unwrap());
    assert!(!got.contains("/var/run"), "{got}");
    assert_eq!(got.matches("--tmpfs /run\n").count(), 1, "{got}");
    assert!(!got.contains("/run/"), "nothing under /run is mounted separately: {got}");
    // A real /var/run gets its own; resolv.conf's target under /run comes back.
    let table = fs()
        .with("/var/run/docker.sock", Kind::Socket)
        .with("/run/systemd/resolve/stub-resolv.conf", Kind::File)
        .with_link("/etc/resolv.conf", "/run/systemd/resolve/stub-resolv.conf");
    let plan = build(&c, &Config::default(), &table).unwrap();
    let got = lines(&plan);
    assert!(
        got.contains("--tmpfs /run\n--tmpfs /var/run\n--ro-bind-try /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf\n"),
        "{got}"
    );
    assert_eq!(access(&plan.mounts, Path::new("/var/run/docker.sock")), crate::sandbox::scope::Access::Hidden);
}

#[test]
fn a_missing_writable_path_dir_ahead_of_the_shims_refuses() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.env.insert("PATH".into(), "/workspaces/app/.venv/bin:/usr/local/bin:/usr/bin".into());
    assert_eq!(build(&c, &Config::default(), &fs()), Err(PlanError::UnguardablePathDir("/workspaces/app/.venv/bin".into())));
    // After the shims it cannot shadow them; in a private tmpfs it does not persist.
    c.env.insert("PATH".into(), "/root/.local/bin:/usr/local/bin:/workspaces/app/.venv/bin".into());
    assert!(build(&c, &Config::default(), &fs()).is_ok());
}

#[test]
fn nothing_is_masked_inside_an_already_masked_directory() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let table = fs().with("/root/.local/share/keyrings/login.keyring", Kind::File).with("/etc/sudoers.d/admins", Kind::File);
    let got = lines(&build(&c, &Config::default(), &table).unwrap());
    assert!(got.contains("\n--tmpfs /etc/sudoers.d\n--remount-ro /etc/sudoers.d\n"), "{got}");
    assert!(!got.contains("/etc/sudoers.d/admins") && !got.contains("login.keyring"), "{got}");
}

#[test]
fn symlinked_siblings_are_left_to_their_targets() {
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let table = fs().with_link("/workspaces/alias", "/workspaces/other");
    let got = lines(&build(&c, &Config::default(), &table).unwrap());
    assert!(!got.contains("/workspaces/alias"), "{got}");
    let mut c = ctx(1000, "dev", "/home/dev", "/workspaces/app", Agent::Claude);
    let plan = build(&c, &Config::default(), &table).unwrap();
    assert!(!lines(&plan).contains("/workspaces/alias"), "{}", lines(&plan));
    assert_eq!(plan.early_masks(), [Path::new("/workspaces/other")]);
    c.network = Network::Jail { resolv_conf: String::new(), gate_exe: "/usr/local/bin/agent-sandbox".into() };
    assert_eq!(build(&c, &Config::default(), &table).unwrap().early_masks(), [Path::new("/workspaces/other")]);
}

/// Siblings are hidden before bwrap starts (every launch's executor has a
/// mount namespace of its own), and the plan's view of them is the same
/// with the jail or without.
#[test]
fn siblings_are_hidden_early_where_the_executor_has_a_namespace() {
    let table = fs();
    let other = Path::new("/workspaces/other");
    let mut c = ctx(1000, "dev", "/home/dev", "/workspaces/app", Agent::Claude);
    let plain = build(&c, &Config::default(), &table).unwrap();
    assert_eq!(plain.early_masks(), [other]);
    assert!(!plain.args().iter().any(|a| a == other.as_os_str()), "not in bwrap's argv");
    c.network = Network::Jail { resolv_conf: String::new(), gate_exe: "/usr/local/bin/agent-sandbox".into() };
    let jailed = build(&c, &Config::default(), &table).unwrap();
    assert_eq!(jailed.early_masks(), [other]);
    assert!(!jailed.args().iter().any(|a| a == other.as_os_str()), "not in bwrap's argv");
    for plan in [&plain, &jailed] {
        assert_eq!(access(&plan.mounts, other), crate::sandbox::scope::Access::Empty);
        assert_eq!(access(&plan.mounts, &other.join("secret")), crate::sandbox::scope::Access::Hidden);
    }
}

#[test]
fn a_command_installed_in_a_tool_dir_is_bound_back_read_only() {
    let mut c = ctx(1000, "dev", "/home/dev", "/home/dev/src/app", Agent::Claude);
    c.command = vec!["/home/dev/.local/share/claude/versions/9.9.9/claude".into()];
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    let opened: Vec<_> = plan.data.iter().filter_map(|d| d.open.as_ref()).map(|o| (o.rel.clone(), o.dir)).collect();
    assert!(opened.contains(&(".local/share/claude".into(), true)), "{opened:?}");
    assert_eq!(access(&plan.mounts, Path::new("/home/dev/.local/share/claude/versions/9.9.9/claude")), crate::sandbox::scope::Access::Read);
    assert_eq!(access(&plan.mounts, Path::new("/home/dev/.local/share/other")), crate::sandbox::scope::Access::Write);
    // A file right in the tool dir: that file only.
    c.command = vec!["/home/dev/.cache/tool".into()];
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    assert!(plan.data.iter().filter_map(|d| d.open.as_ref()).any(|o| o.rel == Path::new(".cache/tool") && !o.dir));
    // The sandbox's own copies, a relative command, or the user's own tool
    // dirs (shared): nothing more.
    for (cmd, config) in [
        ("/home/dev/.local/share/agent-sandbox/workspaces/k/share/x/claude", Config::default()),
        ("claude", Config::default()),
        ("/home/dev/.local/share/claude/versions/9.9.9/claude", Config { share_tool_dirs: true, ..Config::default() }),
    ] {
        c.command = vec![cmd.into()];
        let plan = build(&c, &config, &fs()).unwrap();
        let opened: Vec<_> = plan.data.iter().filter_map(|d| d.open.as_ref()).map(|o| o.rel.clone()).collect();
        assert!(!opened.iter().any(|r| r.starts_with(".local/share/claude") || r.starts_with(".local/share/agent-sandbox/workspaces/k")), "{cmd}: {opened:?}");
    }
    // The native installer's versions, whatever the command (a shell that
    // runs `claude` through ~/.local/bin's link): bound back read-only,
    // once, also when the command lies in it.
    let table = fs().with("/home/dev/.local/share/claude", Kind::Dir);
    for cmd in ["/bin/sh", "/home/dev/.local/share/claude/versions/9.9.9/claude"] {
        c.command = vec![cmd.into()];
        let plan = build(&c, &Config::default(), &table).unwrap();
        let opened: Vec<_> =
            plan.data.iter().filter_map(|d| d.open.as_ref()).filter(|o| o.rel.starts_with(".local/share/claude")).map(|o| (o.rel.clone(), o.dir)).collect();
        assert_eq!(opened, [(".local/share/claude".into(), true)], "{cmd}");
        assert_eq!(access(&plan.mounts, Path::new("/home/dev/.local/share/claude/versions/x")), crate::sandbox::scope::Access::Read, "{cmd}");
        assert_eq!(access(&plan.mounts, Path::new("/home/dev/.local/share/other")), crate::sandbox::scope::Access::Write, "{cmd}");
    }
}

/// What lies in a place sessions write is mounted before bwrap, by
/// descriptor, at the place on disk where it really is: in the workspace
/// (its protections; the entry points of a PATH directory in it, pinned),
/// in a private tool dir (a command installed there), in a shared tool
/// dir (direnv's trust store), in an allowWrite path inside the workspace.
/// What lies under a fresh tmpfs or the read-only root is bwrap's.
#[test]
fn mounts_inside_written_places_are_made_before_bwrap_where_they_are() {
    let mut c = ctx(1000, "dev", "/home/dev", "/workspaces/app", Agent::Claude);
    c.env.insert("PATH".into(), "/workspaces/app/.venv/bin:/usr/local/bin".into());
    c.command = vec!["/home/dev/.local/share/claude/versions/9/claude".into()];
    let table = fs().with("/workspaces/app/.venv/bin", Kind::Dir).with("/workspaces/app/data", Kind::Dir);
    let config = Config { allow_write: vec!["/workspaces/app/data".into()], ..Config::default() };
    let plan = build(&c, &config, &table).unwrap();
    let got: Vec<(String, String, String)> = plan
        .premounts()
        .iter()
        .map(|p| (plan.mounts[p.mount].dest().display().to_string(), p.root.display().to_string(), p.rel.display().to_string()))
        .collect();
    let has = |dest: &str, root: &str, rel: &str| got.contains(&(dest.into(), root.into(), rel.into()));
    assert!(has("/workspaces/app/.git/hooks", "/workspaces/app", ".git/hooks"), "{got:#?}");
    assert!(has("/workspaces/app/.devcontainer", "/workspaces/app", ".devcontainer"), "{got:#?}");
    assert!(has("/workspaces/app/data", "/workspaces/app", "data"), "{got:#?}");
    for name in ENTRY_POINTS {
        let dest = format!("/workspaces/app/.venv/bin/{name}");
        assert!(has(&dest, "/workspaces/app", &format!(".venv/bin/{name}")), "{name}: {got:#?}");
    }
    // The installed command, bound into the private copy of ~/.local/share:
    // it lands in the copy's directory on disk, not in the user's own.
    let share = private_tool_dirs(Path::new("/workspaces/app"))[1].join("claude");
    assert!(has("/home/dev/.local/share/claude", "/home/dev", share.to_str().unwrap()), "{got:#?}");
    // Under the home's tmpfs, /tmp or the read-only root: bwrap's.
    for dest in ["/home/dev/.netrc", "/etc/shadow", "/home/dev/.cache", "/workspaces/other"] {
        assert!(!got.iter().any(|(d, ..)| d == dest), "{dest}: {got:#?}");
    }
    // Shared tool dirs: direnv's trust store is in the user's own dir.
    let shared = Config { share_tool_dirs: true, ..Config::default() };
    let plan = build(&c, &shared, &table.clone().with("/home/dev/.local/share/direnv", Kind::Dir).with("/home/dev/.local/share", Kind::Dir)).unwrap();
    let premounts = plan.premounts();
    let direnv = premounts.iter().find(|p| plan.mounts[p.mount].dest() == Path::new("/home/dev/.local/share/direnv")).unwrap();
    assert_eq!((direnv.root.as_path(), direnv.rel.as_path()), (Path::new("/home/dev/.local/share"), Path::new("direnv")));
    // Without the mount API nothing is premounted (bwrap mounts by path).
    c.mount_api = crate::sandbox::mountfd::MountApi::None;
    assert!(build(&c, &config, &table).unwrap().premounts().is_empty());
}

/// A scanned root session (no idmapped mounts): the kernel's root-only
/// interfaces are masked in its /proc, /sys is empty but for control
/// groups and the CPUs (their root-only entries masked too).
#[test]
fn a_scanned_root_session_masks_the_kernels_root_only_interfaces() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.host_view = HostView::Scan { why: "test".into() };
    c.kernel_root_only = vec![
        ("/proc/slabinfo".into(), Kind::File),
        ("/proc/sys/kernel/cad_pid".into(), Kind::File),
        ("/sys/fs/cgroup/secret".into(), Kind::File),
        ("/sys/devices/system/cpu/cpu0/cpufreq".into(), Kind::Dir),
    ];
    let plan = build(&c, &Config::default(), &fs().with("/sys", Kind::Dir)).unwrap();
    let got = lines(&plan);
    let proc_at = got.find("--proc /proc").unwrap();
    for want in ["/proc/slabinfo", "/proc/sys/kernel/cad_pid", "/sys/fs/cgroup/secret"] {
        let at = got.find(&format!(" {want}\n")).unwrap_or_else(|| panic!("{want}: {got}"));
        assert!(at > proc_at, "{want} masked before the fresh /proc: {got}");
        assert_eq!(access(&plan.mounts, Path::new(want)), crate::sandbox::scope::Access::Empty, "{want}");
    }
    assert!(
        got.contains("--tmpfs /sys\n--ro-bind-try /sys/fs/cgroup /sys/fs/cgroup\n--ro-bind-try /sys/devices/system/cpu /sys/devices/system/cpu\n"),
        "{got}"
    );
    assert!(got.contains("--tmpfs /sys/devices/system/cpu/cpu0/cpufreq\n--remount-ro /sys/devices/system/cpu/cpu0/cpufreq"), "{got}");
    assert_eq!(access(&plan.mounts, Path::new("/sys/kernel/slab/x")), crate::sandbox::scope::Access::Hidden);
    assert_eq!(access(&plan.mounts, Path::new("/sys/fs/cgroup/cpu.max")), crate::sandbox::scope::Access::Read);
    // Unprivileged (kernel-enforced): none of it.
    let c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    let got = lines(&build(&c, &Config::default(), &fs().with("/sys", Kind::Dir)).unwrap());
    assert!(!got.contains("/proc/slabinfo") && !got.contains("--tmpfs /sys\n"), "{got}");
}

/// A scanned root session in the host's network (no jail): an interface's
/// sysctls come and go with it, so its tree is covered whole (a masked
/// entry whose interface went away before bwrap ran failed the launch;
/// one that came after would show unmasked), `all` and `default` bound
/// back with their root-only entries masked; the rest is masked as found.
#[test]
fn a_scanned_root_session_covers_the_per_interface_sysctls_whole() {
    let mut c = ctx(0, "root", "/root", "/workspaces/app", Agent::Claude);
    c.host_view = HostView::Scan { why: "test".into() };
    c.kernel_root_only = vec![
        ("/proc/sys/net/core/bpf_jit_limit".into(), Kind::File),
        ("/proc/sys/net/ipv6/conf/all/stable_secret".into(), Kind::File),
        ("/proc/sys/net/ipv6/conf/default/stable_secret".into(), Kind::File),
        ("/proc/sys/net/ipv6/conf/eth0/stable_secret".into(), Kind::File),
        ("/proc/sys/net/ipv6/conf/veth5e2d07c0/stable_secret".into(), Kind::File),
    ];
    let plan = build(&c, &Config::default(), &fs()).unwrap();
    let got = lines(&plan);
    let cover = "--tmpfs /proc/sys/net/ipv6/conf\n\
                 --ro-bind-try /proc/sys/net/ipv6/conf/all /proc/sys/net/ipv6/conf/all\n\
                 --ro-bind-try /proc/sys/net/ipv6/conf/default /proc/sys/net/ipv6/conf/default\n";
    assert_eq!(got.matches(cover).count(), 1, "{got}");
    let covered = got.find(cover).unwrap();
    for masked in ["/proc/sys/net/core/bpf_jit_limit", "/proc/sys/net/ipv6/conf/all/stable_secret", "/proc/sys/net/ipv6/conf/default/stable_secret"] {
        let at = got.find(&format!(" {masked}\n")).unwrap_or_else(|| panic!("{masked}: {got}"));
        assert!(at > covered, "{masked} masked before the cover: {got}");
        assert_eq!(access(&plan.mounts, Path::new(masked)), crate::sandbox::scope::Access::Empty, "{masked}");
    }
    for iface in ["eth0", "veth5e2d07c0", "made-later"] {
        assert!(!got.contains(&format!("conf/{iface}")), "{iface} is named: {got}");
        assert_ne!(access(&plan.mounts, &Path::new("/proc/sys/net/ipv6/conf").join(iface).join("stable_secret")), crate::sandbox::scope::Access::Read);
    }
    assert_eq!(access(&plan.mounts, Path::new("/proc/sys/net/ipv6/conf/all/forwarding")), crate::sandbox::scope::Access::Read);
    for (entry, tree) in [
        ("/proc/sys/net/ipv6/conf/eth0/stable_secret", Some("/proc/sys/net/ipv6/conf")),
        ("/proc/sys/net/ipv4/neigh/eth0", Some("/proc/sys/net/ipv4/neigh")),
        ("/proc/sys/net/ipv6/conf/all/stable_secret", None),
        ("/proc/sys/net/ipv6/conf", None),
        ("/proc/sys/net/ipv4/tcp_fastopen_key", None),
        ("/proc/sys/kernel/cad_pid", None),
    ] {
        assert_eq!(super::interface_tree(Path::new(entry)), tree.map(Path::new), "{entry}");
    }
}
