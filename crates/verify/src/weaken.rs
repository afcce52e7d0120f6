//! Test-only weakenings: each removes one defence from a decided plan (the
//! sandbox's, or the jail's for `jail-filter` and `jail-container-routes`), so
//! the tests can show the matching checks fail. Only `verify` applies them
//! (the command is then always the probe); `run` has no way to reach this.
//! Pure edits of the plan value; `Plan::args()` re-renders the argv.

use crate::config::EnvMap;
use crate::env_vars;
use crate::launch::Session;
use crate::sandbox::mounts::{Mount, Planned, Role};
use crate::sandbox::plan::{HostView, Plan, Purpose};
use crate::sandbox::seccomp::{self, table};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weakening {
    Sentinel,
    Environment,
    Home,
    Dotfiles,
    Tmp,
    RunUser,
    Engines,
    Capabilities,
    Seccomp,
    Landlock,
    ReadOnlyRoot,
    EntryPoints,
    Git,
    PidNamespace,
    Recursion,
    /// The egress jail's packet filter (its routes stay).
    JailFilter,
    /// What the jail blocks of the container's own routing beyond its
    /// connected subnets (other gateways, other tables, rules' targets,
    /// its addresses), and the following of changes.
    JailContainerRoutes,
    /// A root launcher's host view: its session is root on host files
    /// (not the unprivileged uid) and nothing only root may use is hidden.
    RootOnly,
    /// The private tool dirs: the user's own ~/.cache and ~/.local/share
    /// are bound instead.
    ToolDirs,
    /// The workspace's protections (devcontainer, git config and hooks);
    /// also decides the planted-symlink check's scratch launch without them.
    Protections,
    /// The syscall profile's refusal of setuid and setgid mode bits (the
    /// rest of the profile stays).
    SetId,
    /// allowDomains' enforcement in the packet filter (the jail's DNS
    /// forwarder still answers; the filter lets everything out again).
    JailAllowlist,
    /// The filter's count of what it refuses (the end-of-session report).
    JailReport,
    /// The jail's dead end: blocked destinations get blackhole routes
    /// instead, so a routed attempt fails on the route, uncounted.
    JailDeadEnd,
}

pub const ALL: &[(&str, Weakening)] = &[
    ("sentinel", Weakening::Sentinel),
    ("environment", Weakening::Environment),
    ("home", Weakening::Home),
    ("dotfiles", Weakening::Dotfiles),
    ("tmp", Weakening::Tmp),
    ("run-user", Weakening::RunUser),
    ("engines", Weakening::Engines),
    ("capabilities", Weakening::Capabilities),
    ("seccomp", Weakening::Seccomp),
    ("landlock", Weakening::Landlock),
    ("read-only-root", Weakening::ReadOnlyRoot),
    ("entry-points", Weakening::EntryPoints),
    ("git", Weakening::Git),
    ("pid-namespace", Weakening::PidNamespace),
    ("recursion", Weakening::Recursion),
    ("jail-filter", Weakening::JailFilter),
    ("jail-container-routes", Weakening::JailContainerRoutes),
    ("root-only", Weakening::RootOnly),
    ("tool-dirs", Weakening::ToolDirs),
    ("protections", Weakening::Protections),
    ("setid", Weakening::SetId),
    ("jail-allowlist", Weakening::JailAllowlist),
    ("jail-report", Weakening::JailReport),
    ("jail-dead-end", Weakening::JailDeadEnd),
];

impl Weakening {
    pub fn from_name(name: &str) -> Result<Weakening, String> {
        ALL.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, w)| *w)
            .ok_or_else(|| format!("unknown defence `{name}`; one of: {}", ALL.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")))
    }

    pub fn name(self) -> &'static str {
        ALL.iter().find(|(_, w)| *w == self).map(|(n, _)| *n).unwrap_or("?")
    }
}

/// Where a removed data mount goes instead: bwrap must still consume its
/// descriptor (an unconsumed one would leak into the session), so it is
/// bound, harmlessly, into the session's private /dev.
fn retired(data: usize) -> Planned {
    Planned::new(Mount::Mask { dest: retired_dest(data), data }, &[Role::Retired])
}

fn retired_dest(data: usize) -> PathBuf {
    format!("/dev/.agent-sandbox-retired-{data}").into()
}

/// Removes the mounts matching `pred`, retiring data mounts.
fn remove(mounts: &mut Vec<Planned>, pred: impl Fn(&Planned) -> bool) {
    for m in std::mem::take(mounts) {
        if !pred(&m) {
            mounts.push(m);
            continue;
        }
        match m.mount {
            Mount::Mask { data, .. } | Mount::Data { data, .. } => mounts.push(retired(data)),
            Mount::BindFd { data, .. } => mounts.push(Planned::new(Mount::BindFd { dest: retired_dest(data), data, writable: false }, &[Role::Retired])),
            _ => {}
        }
    }
}

/// Removes the mounts that implement `defence`.
fn remove_defence(mounts: &mut Vec<Planned>, defence: Role) {
    remove(mounts, |m| m.serves(defence))
}

/// Removes `w` from `plan`. `outer_env` is the environment the plan was
/// decided from; `home` the masked home; `exists` answers whether a path
/// exists outside (bwrap cannot create mount points in a read-only home).
pub fn apply(plan: &mut Plan, w: Weakening, outer_env: &EnvMap, home: &Path, exists: &dyn Fn(&Path) -> bool) {
    let mounts = &mut plan.mounts;
    match w {
        Weakening::Sentinel => {
            for k in [env_vars::IS_SANDBOX, env_vars::IS_SANDBOX_AGENT, env_vars::SANDBOX_SESSION] {
                plan.env.remove(std::ffi::OsStr::new(k));
            }
        }
        Weakening::Environment => {
            for (k, v) in outer_env {
                plan.env.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        Weakening::Home => {
            remove_defence(mounts, Role::Home);
            // Without the tmpfs, mount points under the home must exist.
            remove(mounts, |m| m.dest().starts_with(home) && !exists(m.dest()));
        }
        Weakening::Dotfiles => remove_defence(mounts, Role::Credentials),
        Weakening::Tmp => remove_defence(mounts, Role::Tmp),
        // The runtime dirs' tmpfs serves both: it goes with either.
        Weakening::RunUser => remove_defence(mounts, Role::RunUser),
        Weakening::Engines => remove_defence(mounts, Role::Engines),
        // Dropping `--cap-drop ALL` alone proves nothing once bwrap runs
        // as nobody (a root launcher's session does): bwrap then drops
        // them itself. Asking for them is what a careless plan would do.
        Weakening::Capabilities => {
            if let Some(i) = plan.flags.windows(2).position(|p| p == ["--cap-drop", "ALL"]) {
                plan.flags[i] = "--cap-add";
            }
        }
        Weakening::Seccomp => {
            if let Some(i) = plan.data.iter().position(|d| d.purpose == Purpose::Seccomp) {
                plan.data[i].purpose = Purpose::SeccompUnloaded;
                mounts.push(retired(i));
            }
        }
        Weakening::SetId => {
            if let Some(d) = plan.data.iter_mut().find(|d| d.purpose == Purpose::Seccomp) {
                let rows: Vec<_> = table::ROWS.iter().copied().filter(|r| r.group != table::Group::SetId).collect();
                d.bytes = seccomp::to_bytes(&seccomp::generate::program(&rows, seccomp::native_abis()));
            }
        }
        Weakening::Landlock => plan.scope_abstract_sockets = false,
        Weakening::ReadOnlyRoot => {
            for m in mounts.iter_mut().filter(|m| m.serves(Role::ReadOnlyRoot)) {
                if let Mount::RoBind { src, dest, optional } = &m.mount {
                    m.mount = Mount::Bind { src: src.clone(), dest: dest.clone(), optional: *optional };
                }
            }
        }
        Weakening::EntryPoints => {
            // The masks over the entry-point names, and the pins that keep
            // their directories (and vendor install directories) in place.
            remove_defence(mounts, Role::EntryPoints)
        }
        Weakening::Git => {
            for k in [crate::env_vars::GIT_CONFIG_GLOBAL, crate::env_vars::GIT_CONFIG_NOSYSTEM] {
                plan.env.remove(std::ffi::OsStr::new(k));
            }
            remove_defence(mounts, Role::Git);
        }
        Weakening::PidNamespace => {
            plan.flags.retain(|f| *f != "--unshare-pid");
            remove_defence(mounts, Role::PidNamespace);
        }
        Weakening::Recursion => remove_defence(mounts, Role::Recursion),
        Weakening::ToolDirs => {
            let dests: Vec<PathBuf> = mounts.iter().filter(|m| m.serves(Role::ToolDirs)).map(|m| m.dest().clone()).collect();
            remove_defence(mounts, Role::ToolDirs);
            for d in dests.into_iter().filter(|d| exists(d)) {
                mounts.push(Planned::new(Mount::Bind { src: d.clone(), dest: d, optional: false }, &[Role::SharedToolDirs]));
            }
        }
        Weakening::Protections => remove_defence(mounts, Role::Protections),
        Weakening::JailFilter
        | Weakening::JailContainerRoutes
        | Weakening::RootOnly
        | Weakening::JailAllowlist
        | Weakening::JailReport
        | Weakening::JailDeadEnd => {}
    }
}

/// The part of `w` that edits the rest of the session: the jail's plan,
/// the root launcher's scan (none for most).
pub(crate) fn apply_session(session: &mut Session, w: Weakening) {
    match w {
        Weakening::JailFilter => {
            if let Some(jail) = session.jail.as_mut() {
                jail.packet_filter = false;
            }
        }
        Weakening::JailAllowlist => {
            if let Some(jail) = session.jail.as_mut() {
                jail.enforce_allowlist = false;
            }
        }
        Weakening::JailDeadEnd => {
            if let Some(jail) = session.jail.as_mut() {
                jail.dead_end = false;
            }
        }
        Weakening::JailReport => {
            if let Some(jail) = session.jail.as_mut() {
                jail.report = false;
            }
        }
        Weakening::JailContainerRoutes => {
            if let Some(jail) = session.jail.as_mut() {
                jail.container = crate::jail::connected_only(&jail.container);
                jail.follow = false;
            }
        }
        // The session root on host files and nothing hidden: no scan, no
        // unprivileged uid (nor its idmapped places; the jail maps root).
        Weakening::RootOnly => {
            session.root_scan = None;
            if matches!(session.plan.host_view, HostView::Unprivileged { .. }) {
                session.plan.host_view = HostView::Scan { why: "weakened: root-only".into() };
                session.prepared = Default::default();
                if let Some(jail) = session.jail.as_mut() {
                    jail.uid_map = crate::jail::id_map(jail.uid);
                    jail.gid_map = crate::jail::id_map(jail.gid);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::plan::DataFile;
    use std::path::PathBuf;

    fn plan() -> Plan {
        let p = PathBuf::from;
        Plan {
            bwrap: p("/usr/bin/bwrap"),
            flags: crate::sandbox::plan::NAMESPACE_FLAGS.to_vec(),
            uid: 0,
            gid: 0,
            env: [("IS_SANDBOX".into(), "1".into()), ("GIT_CONFIG_GLOBAL".into(), "/h/.gitconfig".into())].into(),
            data: vec![
                DataFile::bytes(Purpose::Seccomp, vec![1]),
                DataFile::bytes(Purpose::GitConfig, vec![]),
                DataFile::bytes(Purpose::Marker, vec![]),
                DataFile::bytes(Purpose::Empty, vec![]),
            ],
            gate_fd: None,
            mounts: vec![
                Planned::new(Mount::RoBind { src: p("/"), dest: p("/"), optional: false }, &[Role::ReadOnlyRoot]),
                Planned::new(Mount::Proc { dest: p("/proc") }, &[Role::PidNamespace]),
                Planned::new(Mount::Tmpfs { dest: p("/tmp") }, &[Role::Tmp]),
                Planned::new(Mount::Tmpfs { dest: p("/h") }, &[Role::Home]),
                Planned::new(Mount::Mask { dest: p("/h/.netrc"), data: 3 }, &[Role::Credentials]),
                Planned::new(Mount::Mask { dest: p("/w/bin/claude"), data: 3 }, &[Role::EntryPoints]),
                Planned::new(Mount::Data { dest: p("/h/.gitconfig"), data: 1 }, &[Role::Git]),
                Planned::new(Mount::Data { dest: p(crate::sandbox::SESSION_MARKER), data: 2 }, &[Role::Recursion]),
            ],
            workspace: p("/w"),
            chdir: p("/w"),
            command: vec!["/x".into()],
            host_view: crate::sandbox::plan::HostView::Launcher,
            premount: crate::sandbox::mountfd::MountApi::None,
            ensure_dirs: vec![],
            scope_abstract_sockets: true,
        }
    }

    fn args(p: &Plan) -> String {
        p.args().iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn each_weakening_removes_only_its_defence() {
        let home = Path::new("/h");
        let base = args(&plan());
        let cases: &[(Weakening, &[(&str, &str)])] = &[
            (Weakening::Tmp, &[("--tmpfs /tmp ", "")]),
            (Weakening::Capabilities, &[("--cap-drop ALL ", "--cap-add ALL ")]),
            (Weakening::Seccomp, &[("--seccomp 3 ", ""), ("--chdir", "--ro-bind-data 3 /dev/.agent-sandbox-retired-0 --chdir")]),
            (Weakening::PidNamespace, &[("--unshare-pid ", ""), ("--proc /proc ", "")]),
            (Weakening::EntryPoints, &[("6 /w/bin/claude ", "6 /dev/.agent-sandbox-retired-3 ")]),
            (Weakening::Dotfiles, &[("6 /h/.netrc ", "6 /dev/.agent-sandbox-retired-3 ")]),
            (Weakening::Git, &[("4 /h/.gitconfig ", "4 /dev/.agent-sandbox-retired-1 ")]),
            (Weakening::Recursion, &[("5 /dev/.agent-sandbox-session ", "5 /dev/.agent-sandbox-retired-2 ")]),
            // /h/.gitconfig does not exist: without the tmpfs it cannot be mounted.
            (Weakening::Home, &[("--tmpfs /h ", ""), ("4 /h/.gitconfig ", "4 /dev/.agent-sandbox-retired-1 ")]),
            (Weakening::ReadOnlyRoot, &[("--ro-bind / / ", "--bind / / ")]),
        ];
        for (w, edits) in cases {
            let mut want = base.clone();
            for (from, to) in *edits {
                assert!(want.contains(from), "{from}");
                want = want.replacen(from, to, 1);
            }
            let mut p = plan();
            apply(&mut p, *w, &EnvMap::new(), home, &|d| d != Path::new("/h/.gitconfig"));
            assert_eq!(args(&p), want, "{w:?}");
        }
    }

    #[test]
    fn environment_and_sentinel_weakenings_edit_only_the_environment() {
        let outer: EnvMap = [("AWS_SECRET_ACCESS_KEY".into(), "x".into())].into();
        let mut p = plan();
        apply(&mut p, Weakening::Environment, &outer, Path::new("/h"), &|_| true);
        assert!(p.env.contains_key(std::ffi::OsStr::new("AWS_SECRET_ACCESS_KEY")));
        let mut p = plan();
        apply(&mut p, Weakening::Sentinel, &outer, Path::new("/h"), &|_| true);
        assert!(!p.env.contains_key(std::ffi::OsStr::new("IS_SANDBOX")));
        assert_eq!(p.mounts, plan().mounts);
        // Landlock is applied by the executor, not bwrap: only the flag changes.
        let mut p = plan();
        apply(&mut p, Weakening::Landlock, &outer, Path::new("/h"), &|_| true);
        assert!(!p.scope_abstract_sockets);
        assert_eq!(args(&p), args(&plan()));
    }

    #[test]
    fn names_round_trip() {
        for (n, w) in ALL {
            assert_eq!(Weakening::from_name(n), Ok(*w));
            assert_eq!(w.name(), *n);
        }
        assert!(Weakening::from_name("nope").unwrap_err().contains("read-only-root"));
    }
}
