//! The host checks: `gather` observes (probes, file metadata, PATH), and
//! `assess` turns the observations into findings without touching the
//! system, so each verdict and its fix is tested as a value.

pub(crate) use super::installed::Installed;
use super::path::{self, DirInfo, Offence};
use super::probe::{self, Attach, Filter, Mounts, Tun, Userns};
use super::{Finding, Severity};
use crate::agents::{Agent, ALL};
use crate::layout::{BINARY, EXEC_LINK_DIR, SHIM_DIR};
use crate::sandbox::landlock::{self, Scoping, Support};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How `claude` (or codex, pi) resolves on PATH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// The first hit is one of our shims.
    Shim(PathBuf),
    /// The first hit is something else; `shim_later`: a shim comes after it.
    Vendor {
        found: PathBuf,
        shim_later: bool,
    },
    Nothing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostFacts {
    pub(crate) jail_on: bool,
    pub bwrap: Result<PathBuf, String>,
    /// The effective uid doctor runs as.
    pub uid: u32,
    pub userns: Userns,
    /// The kernel's switches for user namespaces and how the container
    /// confines this process (seccomp, CAP_SYS_ADMIN, AppArmor).
    pub(crate) userns_facts: crate::jail::UsernsFacts,
    /// None: not tried (no user namespaces).
    pub mounts: Option<Mounts>,
    /// The user-mode emulator this process runs under (another
    /// architecture's image), if any: `crate::arch::emulation::emulator`.
    pub emulator: Option<PathBuf>,
    pub tun: Tun,
    /// The container engine, only to word the fixes.
    pub engine: crate::confinement::Engine,
    pub pasta: Result<PathBuf, String>,
    pub(crate) pasta_version: Option<String>,
    /// None: not tried (no pasta, no tun or no user namespaces).
    pub attach: Option<Attach>,
    /// None: not tried (no user namespaces).
    pub filter: Option<Filter>,
    /// The container's routes, rules and addresses (`jail::container_net`).
    pub container: Result<crate::jail::ContainerNet, String>,
    pub fresh_proc: bool,
    /// Landlock as the kernel offers it, and what sessions of this user
    /// would get from it (abstract-socket scoping).
    pub landlock: Support,
    pub(crate) abstract_scoping: Scoping,
    pub installed: Installed,
    pub path: String,
    pub path_dirs: Vec<DirInfo>,
    pub(crate) resolutions: Vec<(Agent, Resolution)>,
    /// doctor runs as root (its PATH is root's).
    pub root: bool,
    /// The container boundary (user namespace, /proc/sys).
    pub boundary: super::boundary::Boundary,
    /// The PATH commands run without a shell get, when it is not doctor's own.
    pub exec: Option<ExecPath>,
    /// doctor as root: how a root launcher's sessions would see host files
    /// here (`hostview::decide_root` for this directory and root's home):
    /// Ok, as an unprivileged uid through idmapped mounts; Err, scanned,
    /// and why. None for another user (sessions act as that user).
    pub host_view: Option<Result<(), String>>,
}

/// The PATH of commands run without a shell (`path::exec_path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExecPath {
    pub path: String,
    /// Where it was read (for messages).
    pub from: String,
    pub dirs: Vec<DirInfo>,
    /// Root's commands get it (pid 1 runs as root).
    pub root: bool,
    pub(crate) resolutions: Vec<(Agent, Resolution)>,
}

impl ExecPath {
    /// Judged even when it equals this process's own PATH: whether a
    /// lifecycle command got the login shell's PATH or the container's
    /// depends on the devcontainer CLI's environment probe (which gives up
    /// on a slow machine), and the container's is what matters here.
    pub(crate) fn gather() -> Option<ExecPath> {
        let (path, from) = path::exec_path()?;
        Some(ExecPath {
            dirs: path::split(&path).into_iter().map(path::dir_info).collect(),
            root: path::pid1_is_root(),
            resolutions: ALL.iter().map(|a| (*a, resolve(*a, &path))).collect(),
            path,
            from,
        })
    }
}

/// Observes this machine (the probes run here).
pub(crate) fn gather(jail_on: bool) -> HostFacts {
    let bwrap = crate::sysbin::find("bwrap", crate::fixes::BWRAP).map_err(|e| e.to_string());
    let userns = probe::userns();
    let tun = probe::tun();
    let pasta = crate::sysbin::find("pasta", crate::fixes::PASTA).map_err(|e| e.to_string());
    let pasta_version = pasta.as_ref().ok().and_then(|p| probe::pasta_version(p));
    let attach = match (&pasta, &tun, &userns) {
        (Ok(p), Tun::Usable(_), Userns::Works) => Some(probe::pasta_attach(p)),
        _ => None,
    };
    let filter = (userns == Userns::Works).then(probe::packet_filter);
    let mounts = (userns == Userns::Works).then(probe::mounts);
    let path = std::env::var(crate::env_vars::PATH).unwrap_or_default();
    let path_dirs = path::split(&path).into_iter().map(path::dir_info).collect();
    let landlock = landlock::kernel_support();
    let setuid = bwrap.as_ref().is_ok_and(|b| landlock::setuid_root(b));
    let abstract_scoping = landlock::decide(landlock, setuid, nix::unistd::geteuid().is_root());
    HostFacts {
        jail_on,
        bwrap,
        uid: nix::unistd::geteuid().as_raw(),
        userns,
        userns_facts: crate::jail::current_userns_facts(),
        mounts,
        emulator: crate::arch::emulation::emulator(),
        tun,
        engine: crate::confinement::engine(),
        pasta,
        pasta_version,
        attach,
        filter,
        container: crate::jail::container_net().map_err(|e| e.to_string()),
        fresh_proc: crate::sandbox::context::fresh_proc_possible(),
        landlock,
        abstract_scoping,
        installed: super::installed::gather(),
        resolutions: ALL.iter().map(|a| (*a, resolve(*a, &path))).collect(),
        root: nix::unistd::geteuid().is_root(),
        boundary: super::boundary::gather(),
        exec: ExecPath::gather(),
        path,
        path_dirs,
        host_view: nix::unistd::geteuid().is_root().then(root_host_view),
    }
}

/// What a root launch in this directory would get (the probe makes the
/// id mappings and idmapped trees for real, then drops them).
fn root_host_view() -> Result<(), String> {
    let home = std::env::var_os(crate::env_vars::HOME).map(PathBuf::from).filter(|h| h.is_absolute()).unwrap_or_else(|| PathBuf::from("/root"));
    let cwd = std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?;
    match crate::sandbox::hostview::decide_root(&[home, cwd], &[]).0 {
        crate::sandbox::plan::HostView::Scan { why } => Err(why),
        _ => Ok(()),
    }
}

/// How a root launcher's sessions see host files.
fn host_view(h: &HostFacts) -> Option<Finding> {
    let uid = crate::sandbox::hostview::OUTER_ID;
    Some(match h.host_view.as_ref()? {
        Ok(()) => Finding::new(
            "host-view",
            "host-view-kernel",
            Severity::Ok,
            format!(
                "a root launcher's sessions act on host files as uid {uid}, with the workspace and root's home mounted idmapped: the kernel's own checks keep them out of whatever only root may use"
            ),
            None,
        ),
        Err(why) => Finding::new(
            "host-view",
            "host-view-scan",
            Severity::Info,
            format!(
                "a root launcher's sessions act on host files as root here, with what only root may use hidden by a scan at each launch (slower, and it sees only what exists at the launch): {why}"
            ),
            Some(
                "for the kernel-enforced view: Linux 5.12 or later; the workspace and root's home on a file system that supports idmapped mounts (ext4, xfs, btrfs, tmpfs; \
                 not overlayfs, a container image's root: put root's home on a volume, as the workspace is); a container that may make them (`--cap-add SYS_ADMIN`)",
            ),
        ),
    })
}

fn id_of(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

fn ours() -> Vec<(u64, u64)> {
    [Path::new(BINARY), Path::new("/proc/self/exe")].iter().filter_map(|p| id_of(p)).collect()
}

fn resolve(agent: Agent, path: &str) -> Resolution {
    let ours = ours();
    let is_exec = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0);
    let hits: Vec<PathBuf> =
        path::split(path).iter().filter(|d| d.starts_with('/')).map(|d| Path::new(d).join(agent.binary())).filter(|p| is_exec(p)).collect();
    let is_ours = |p: &PathBuf| id_of(p).is_some_and(|id| ours.contains(&id));
    match hits.first() {
        None => Resolution::Nothing,
        Some(first) if is_ours(first) => Resolution::Shim(first.clone()),
        Some(first) => Resolution::Vendor { found: first.clone(), shim_later: hits.iter().any(is_ours) },
    }
}

/// The prerequisites only (what `sandbox-install` reports after installing).
pub(crate) fn prerequisites(h: &HostFacts) -> Vec<Finding> {
    // Without the jail, its prerequisites do not block sessions.
    let jail = if h.jail_on { Severity::Error } else { Severity::Info };
    let mut out = Vec::new();
    out.push(match &h.bwrap {
        Ok(p) => Finding::new("bwrap", "bwrap-ok", Severity::Ok, format!("bubblewrap: {}", p.display()), None),
        Err(e) if e.contains("refusing") => Finding::new("bwrap", "bwrap-untrusted", Severity::Error, e.clone(), None),
        Err(_) => Finding::new(
            "bwrap",
            "bwrap-missing",
            Severity::Error,
            format!("bubblewrap (bwrap) is not installed in {}", crate::sysbin::SYSTEM_DIRS.join(", ")),
            Some(crate::fixes::BWRAP),
        ),
    });
    let arch = crate::arch::Arch::native();
    out.push(match (&h.userns, &h.emulator) {
        (Userns::Works, _) => Finding::new("userns", "userns-ok", Severity::Ok, "user namespaces can be created".into(), None),
        // qemu-user refuses clone() with namespace flags and runs a helper
        // thread, so the kernel refuses unshare(CLONE_NEWUSER): no sysctl helps.
        (Userns::Fails { why, .. }, Some(emu)) => Finding::new(
            "userns",
            "userns-emulated",
            Severity::Error,
            format!("user namespaces are not available: {why}; this agent-sandbox ({arch}) runs under the emulator {}, and user-mode emulators such as qemu-user cannot create namespaces or load seccomp filters, so sessions cannot start", emu.display()),
            Some(crate::fixes::EMULATED),
        ),
        (Userns::Fails { why, errno }, None) => super::confined::userns_failure(why, *errno, &h.userns_facts, h.uid),
    });
    // Under gVisor, a failure is named above (`userns-gvisor`); where its
    // namespaces work, the rest is not proven there.
    if let (Userns::Works, Some(version)) = (&h.userns, &h.userns_facts.gvisor) {
        out.push(Finding::new(
            "userns",
            "runtime-gvisor",
            Severity::Warning,
            format!("this container runs on gVisor ({version}): its application kernel is not the one sessions are proven on, and it lacks parts of what bubblewrap and the egress jail need; the other findings say what failed here"),
            Some(crate::fixes::GVISOR),
        ));
    }
    if let (Userns::Works, Some(emu)) = (&h.userns, &h.emulator) {
        out.push(Finding::new(
            "emulation",
            "emulated",
            Severity::Warning,
            format!(
                "this agent-sandbox ({arch}) runs under the emulator {}: sessions are proven on each architecture's own machines, not under emulation",
                emu.display()
            ),
            Some(crate::fixes::EMULATED),
        ));
    }
    out.push(match &h.tun {
        Tun::Usable(mode) => Finding::new("tun", "tun-ok", Severity::Ok, format!("/dev/net/tun is usable ({mode})"), None),
        Tun::Missing => Finding::new("tun", "tun-missing", jail, "/dev/net/tun is missing, so the egress jail cannot start".into(), Some(crate::fixes::TUN)),
        Tun::Unusable(why) => Finding::new("tun", "tun-unusable", jail, format!("/dev/net/tun is not usable: {why}"), Some(crate::fixes::TUN)),
        Tun::Denied(mode) => Finding::new(
            "tun",
            "tun-permission",
            jail,
            format!("/dev/net/tun is the TUN device but uid {} may not open it ({mode}), so the egress jail cannot start", h.uid),
            Some(&crate::jail::tun_permission_fix(&h.engine)),
        ),
    });
    let version = h.pasta_version.as_deref().map(|v| format!(" ({v})")).unwrap_or_default();
    out.push(match (&h.pasta, &h.attach) {
        (Err(e), _) if e.contains("refusing") => Finding::new("pasta", "pasta-untrusted", jail, e.clone(), None),
        (Err(_), _) => Finding::new(
            "pasta",
            "pasta-missing",
            jail,
            format!("pasta (package passt) is not installed in {}", crate::sysbin::SYSTEM_DIRS.join(", ")),
            Some(crate::fixes::PASTA),
        ),
        (Ok(p), Some(Attach::Attached)) => {
            Finding::new("pasta", "pasta-ok", Severity::Ok, format!("pasta {}{version} attaches to a new network namespace", p.display()), None)
        }
        (Ok(p), Some(Attach::Failed(why))) => Finding::new(
            "pasta",
            "pasta-cannot-attach",
            jail,
            format!("pasta {}{version} cannot attach to a network namespace here: {why}", p.display()),
            Some(crate::fixes::PASTA_ATTACH),
        ),
        (Ok(p), None) => Finding::new(
            "pasta",
            "pasta-not-checked",
            Severity::Warning,
            format!("pasta {}{version} was not tried: it needs /dev/net/tun and user namespaces", p.display()),
            Some("fix the tun / userns findings, then run `agent-sandbox doctor` again"),
        ),
    });
    out.push(match &h.filter {
        Some(Filter::Works) => {
            Finding::new("filter", "filter-ok", Severity::Ok, "the jail's packet filter (nf_tables) can be installed in a new network namespace".into(), None)
        }
        Some(Filter::Fails { why, fix }) => Finding::new(
            "filter",
            "filter-unavailable",
            jail,
            format!("the jail's packet filter cannot be installed, so jailed sessions refuse to start: {why}"),
            Some(fix),
        ),
        None => Finding::new(
            "filter",
            "filter-not-checked",
            Severity::Warning,
            "the jail's packet filter was not tried: it needs user namespaces".into(),
            Some("fix the userns finding, then run `agent-sandbox doctor` again"),
        ),
    });
    out.push(super::confined::mounts(h.mounts.as_ref(), h.userns_facts.confinement.apparmor.as_ref()));
    out.push(proc_finding(h.fresh_proc));
    out
}

/// Which /proc sessions get here, and what a masked one changes.
fn proc_finding(fresh: bool) -> Finding {
    if fresh {
        return Finding::new(
            "proc",
            "proc-ok",
            Severity::Ok,
            "/proc has no masked paths; sessions get their own /proc, showing only their own processes".into(),
            None,
        );
    }
    Finding::new(
        "proc",
        "proc-masked",
        Severity::Warning,
        format!("{PROC_MASKED}; the egress jail keeps IPv6 unaddressed instead of off, and the kernel's rate limit on its rejects"),
        Some(crate::fixes::PROC),
    )
}

/// What sessions under a masked /proc get, in doctor's words (and the
/// devcontainer lint's).
const PROC_MASKED: &str = "/proc has paths masked by the container runtime, which makes the kernel refuse sessions a /proc of their own: they get the container's (its masks kept, /proc/sys read-only) \
     and see the container's processes, their command lines and status, and can raise the OOM score and niceness of those of their own uid; \
     not their environments, memory or files, and they cannot signal them. `agent-sandbox verify` reports 19 and 102 as DEGRADED; \
     a program that looks itself up as /proc/<its pid> finds another process there (/proc/self is right; docs/defences.md, \"Under a masked /proc\")";

/// Landlock's abstract-socket scoping: with the jail, sessions have their
/// own network namespace (and so their own abstract sockets) anyway;
/// without it, only the scoping keeps the container's out.
pub(crate) fn abstract_scoping(h: &HostFacts) -> Finding {
    let kernel = match h.landlock {
        Support::Abi(n) => format!("Landlock ABI {n}"),
        Support::Disabled => "Landlock not enabled".into(),
        Support::Missing => "no Landlock".into(),
    };
    match (&h.abstract_scoping, h.jail_on) {
        (Scoping::Enforced { .. }, _) => Finding::new("landlock", "abstract-scope-ok", Severity::Ok, format!("{kernel}: sessions reach only abstract unix sockets made inside them, with the egress jail off too"), None),
        (Scoping::NotEnforced(why), true) => Finding::new(
            "landlock",
            "abstract-scope-unavailable",
            Severity::Info,
            format!("{kernel}: abstract-socket scoping is not enforced ({why}); with the egress jail on, sessions have their own network namespace and do not reach the container's abstract sockets anyway"),
            Some(crate::fixes::LANDLOCK),
        ),
        (Scoping::NotEnforced(why), false) => Finding::new(
            "landlock",
            "abstract-scope-unavailable",
            Severity::Warning,
            format!("{kernel}: abstract-socket scoping is not enforced ({why}), and the egress jail is off: sessions can connect to the container's abstract unix sockets (X11's @/tmp/.X11-unix/X0, D-Bus, IDE helpers)"),
            Some(crate::fixes::LANDLOCK),
        ),
    }
}

/// Every host finding: prerequisites, abstract-socket scoping,
/// installation, PATH.
pub(crate) fn assess(h: &HostFacts) -> Vec<Finding> {
    let mut out = prerequisites(h);
    out.extend(super::jailnet::findings(&h.container, h.uid, h.jail_on, h.emulator.as_deref()));
    out.push(abstract_scoping(h));
    out.extend(host_view(h));
    out.extend(super::boundary::finding(&h.boundary));
    out.push(match &h.installed {
        Installed::No => Finding::new(
            "install",
            "not-installed",
            Severity::Warning,
            format!("agent-sandbox is not installed by sandbox-install ({BINARY} is missing), so there are no claude/codex/pi shims"),
            Some("run sandbox-install as root (see docs/install.md)"),
        ),
        Installed::Untrusted(e) => Finding::new("install", "binary-untrusted", Severity::Error, e.clone(), None),
        Installed::Yes { problems } if problems.is_empty() => {
            Finding::new("install", "install-ok", Severity::Ok, format!("{BINARY} and its shims are in place"), None)
        }
        Installed::Yes { problems } => Finding::new(
            "install",
            "shim-broken",
            Severity::Error,
            format!("the installation is not as sandbox-install left it: {}", problems.join("; ")),
            Some("run sandbox-install again to restore the shims"),
        ),
    });
    out.extend(path_findings(h));
    out
}

fn path_findings(h: &HostFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    let entries = path::split(&h.path);
    let root_writable = if h.root { path::user_writable(&h.path_dirs) } else { Vec::new() };
    for d in &root_writable {
        out.push(Finding {
            check: "path",
            id: "path-root-writable",
            severity: Severity::Warning,
            message: format!("root's PATH has {d}, which users other than root can write: a command missing from the system directories (ps, less, make...) runs what they put there, as root"),
            fix: Some(format!("take {d} off root's PATH (put a venv or user directory on that user's PATH only, e.g. in their ~/.profile or the devcontainer's remoteEnv)")),
        });
    }
    for a in path::ahead_of_system(&h.path_dirs) {
        // Said above, for root.
        if a.offence == Offence::Writable && root_writable.contains(&a.dir.as_str()) {
            continue;
        }
        let id = match a.offence {
            Offence::Venv => "path-venv-first",
            Offence::Writable => "path-writable-first",
            Offence::Relative => "path-relative",
        };
        out.push(Finding {
            check: "path",
            id,
            severity: Severity::Warning,
            message: format!(
                "PATH has {} ({}) before {}: a command placed there shadows system commands",
                if a.dir.is_empty() { "an empty entry" } else { &a.dir },
                a.offence.describe(),
                a.before
            ),
            fix: Some(format!(
                "put system directories first and append the rest, e.g. PATH={}; login shells get this from /etc/profile.d/agent-sandbox.sh",
                path::suggested(&entries)
            )),
        });
    }
    for (agent, r) in &h.resolutions {
        let name = agent.binary();
        match r {
            Resolution::Vendor { found, shim_later } => out.push(Finding {
                check: "path",
                id: "path-vendor-first",
                severity: Severity::Error,
                message: if *shim_later {
                    format!("`{name}` runs {} outside the sandbox: it comes before the agent-sandbox shim on PATH", found.display())
                } else {
                    format!("`{name}` runs {} outside the sandbox: no agent-sandbox shim is on PATH", found.display())
                },
                fix: Some(format!("run sandbox-install (it puts {SHIM_DIR} first), or start {name} as `agent-sandbox run --agent {name}`")),
            }),
            Resolution::Shim(_) | Resolution::Nothing => {}
        }
    }
    if let Some(e) = &h.exec {
        out.extend(exec_findings(e));
    }
    if out.is_empty() {
        out.push(Finding::new("path", "path-ok", Severity::Ok, "PATH keeps system directories first and the shims win".into(), None));
    }
    out
}

/// What commands run without a shell resolve (`docker exec CTR claude`,
/// tools started from the container's environment): shell start-up files
/// never put the shims first for them.
fn exec_findings(e: &ExecPath) -> Vec<Finding> {
    let mut out = Vec::new();
    for (agent, r) in &e.resolutions {
        let name = agent.binary();
        if let Resolution::Vendor { found, .. } = r {
            out.push(Finding {
                check: "path",
                id: "exec-path-vendor-first",
                severity: Severity::Error,
                message: format!(
                    "commands run without a shell (`docker exec CTR {name}`, tasks and tools started from the container's environment) get PATH={} from {}: `{name}` runs {} there, outside the sandbox",
                    e.path,
                    e.from,
                    found.display()
                ),
                fix: Some(crate::fixes::EXEC_PATH.into()),
            });
        }
    }
    if e.root {
        for d in path::user_writable(&e.dirs) {
            out.push(Finding {
                check: "path",
                id: "exec-path-writable",
                severity: Severity::Warning,
                message: format!("root's commands run without a shell get PATH={} from {}, with {d}, which users other than root can write: a command missing from the system directories runs what they put there, as root", e.path, e.from),
                fix: Some(format!("take {d} off the container's PATH (ENV PATH / containerEnv); put it on the non-root user's PATH only (their ~/.profile, or remoteEnv in devcontainer.json)")),
            });
        }
    }
    out
}

/// For `sandbox-install`: the PATH that commands run without a shell get
/// (at image build time, the image's ENV PATH, which the installer cannot
/// change). The shims must come before anything `npm install -g` writes,
/// and venvs or user-writable directories after the system directories.
pub(crate) fn exec_path_findings(path: &str, dirs: &[DirInfo]) -> Vec<Finding> {
    let entries = path::split(path);
    let fix = format!("set it in the image: ENV PATH={} (append venvs, never prepend them)", path::suggested(&entries));
    let mut out = Vec::new();
    match path::before_shims(&entries) {
        None => out.push(Finding {
            check: "path",
            id: "exec-path-no-shims",
            severity: Severity::Warning,
            message: format!("commands run without a shell (`docker exec CTR claude`) get PATH={path}, which reaches neither {SHIM_DIR} nor {EXEC_LINK_DIR}, so they miss the shims"),
            fix: Some(fix.clone()),
        }),
        Some(before) if !before.is_empty() => out.push(Finding {
            check: "path",
            id: "exec-path-shadowed",
            severity: Severity::Warning,
            message: format!("commands run without a shell get PATH={path}: {} come before the shims, so a `claude` that `npm install -g` or a vendor installer writes there would run outside the sandbox", before.join(", ")),
            fix: Some(fix.clone()),
        }),
        Some(_) => {}
    }
    for d in path::user_writable(dirs) {
        out.push(Finding {
            check: "path",
            id: "exec-path-writable",
            severity: Severity::Warning,
            message: format!("commands run without a shell get PATH={path}, with {d}, which users other than root can write: root's commands missing from the system directories (ps, less, make...) would run what they put there"),
            fix: Some(format!("take {d} off the image's ENV PATH and put it on the non-root user's PATH only (their ~/.profile, or remoteEnv in devcontainer.json)")),
        });
    }
    for a in path::ahead_of_system(dirs) {
        out.push(Finding {
            check: "path",
            id: "exec-path-order",
            severity: Severity::Warning,
            message: format!("commands run without a shell get PATH={path}, with {} ({}) before {}; sandbox-install cannot change an image's ENV PATH (login and interactive shells are fixed)", a.dir, a.offence.describe(), a.before),
            fix: Some(fix.clone()),
        });
    }
    out
}

#[cfg(test)]
mod tests;
