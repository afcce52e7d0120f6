//! The container boundary. Sessions mount their own /proc where the
//! kernel allows it, only where the container's /proc has nothing masked
//! (`--security-opt systempaths=unconfined` / `unmask=/proc/*`; otherwise
//! they get the container's, docs/defences.md); but then
//! /proc/sys is writable too, and where the container's root is the host's
//! root (no user namespace) it can change host-wide kernel settings —
//! `kernel.core_pattern` runs a program as host root at the next crash.
//! A user-namespaced container (rootless podman or Docker, `--userns=auto`,
//! userns-remap) keeps both: its root is not the host's, so /proc/sys
//! refuses its writes. This check says which case the container is in.
//!
//! `gather` reads /proc; `finding` is pure.

use super::{Finding, Severity};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Boundary {
    /// Running in a container started by an engine (see `gather`).
    pub(crate) in_container: bool,
    /// /proc/self/uid_map, as read ("" when unreadable).
    pub uid_map: String,
    /// /proc/sys is mounted writable here.
    pub(crate) proc_sys_writable: bool,
}

/// The files container engines (Docker, podman, Kubernetes) bind into
/// every container they start.
const ENGINE_FILE_MOUNTS: &[&str] = &["/etc/hostname", "/etc/hosts", "/etc/resolv.conf"];

/// Whether `mountinfo` shows a container engine's doing: one of
/// `ENGINE_FILE_MOUNTS` is a mount point. Marker files (/.dockerenv,
/// /run/.containerenv) are not enough: a machine whose root file system
/// was made from a container keeps them.
fn engine_mounts(mountinfo: &str) -> bool {
    mountinfo.lines().filter_map(|l| l.split(' ').nth(4)).any(|m| ENGINE_FILE_MOUNTS.contains(&m))
}

/// Observes this machine.
pub(crate) fn gather() -> Boundary {
    let in_container = engine_mounts(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let uid_map = std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default();
    let proc_sys_writable = nix::sys::statvfs::statvfs("/proc/sys").is_ok_and(|s| !s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY));
    Boundary { in_container, uid_map, proc_sys_writable }
}

/// uid 0 inside maps to uid 0 outside: no user namespace between them.
fn root_is_host_root(uid_map: &str) -> bool {
    uid_map.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        matches!(f.as_slice(), ["0", "0", _])
    })
}

/// None outside a container.
pub(crate) fn finding(b: &Boundary) -> Option<Finding> {
    if !b.in_container {
        return None;
    }
    let f = |id, severity, message: String, fix: Option<&str>| Some(Finding { check: "container", id, severity, message, fix: fix.map(str::to_string) });
    let map = b.uid_map.split_whitespace().collect::<Vec<_>>().join(" ");
    if !root_is_host_root(&b.uid_map) {
        return f(
            "container-userns-ok",
            Severity::Ok,
            format!("the container runs in a user namespace (uid map: {map}): its root is not the host's, so the unmasked /proc that gives sessions their own gives it no host kernel settings"),
            None,
        );
    }
    if !b.proc_sys_writable {
        return f("container-sysctl-ro", Severity::Ok, "the container's /proc/sys is read-only: its root cannot change host kernel settings".into(), None);
    }
    f(
        "container-host-root",
        Severity::Warning,
        "the container's root is the host's root (no user namespace) and /proc/sys is writable (the unmasked /proc that gives sessions their own): a process running as root in this container, outside any session, can change host-wide kernel settings (kernel.core_pattern runs a program as host root at the next crash)".into(),
        Some(crate::fixes::CONTAINER_USERNS),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(uid_map: &str, w: bool) -> Boundary {
        Boundary { in_container: true, uid_map: uid_map.into(), proc_sys_writable: w }
    }

    #[test]
    fn a_container_is_told_by_the_files_its_engine_binds() {
        let vm = "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n23 22 0:5 / /proc rw - proc proc rw\n";
        assert!(!engine_mounts(vm));
        let ctr = format!("{vm}501 22 0:44 /containers/x/hostname /etc/hostname rw,nosuid - tmpfs tmpfs rw\n");
        assert!(engine_mounts(&ctr));
    }

    #[test]
    fn which_case_the_container_is_in() {
        let id = |x: &Boundary| finding(x).map(|f| (f.id, f.severity));
        assert_eq!(id(&b("         0          0 4294967295\n", true)), Some(("container-host-root", Severity::Warning)));
        assert_eq!(id(&b("         0          0 4294967295\n", false)), Some(("container-sysctl-ro", Severity::Ok)));
        // Rootful podman with --uidmap / --userns=auto, and rootless podman.
        assert_eq!(id(&b("         0     300000      65536\n", true)), Some(("container-userns-ok", Severity::Ok)));
        assert_eq!(id(&b("         0       1000          1\n         1     100000      65536\n", true)), Some(("container-userns-ok", Severity::Ok)));
        assert!(finding(&b("0 0 4294967295", true)).unwrap().fix.unwrap().contains("--userns=auto"));
        assert_eq!(id(&Boundary { in_container: false, uid_map: "0 0 4294967295".into(), proc_sys_writable: true }), None);
    }
}
