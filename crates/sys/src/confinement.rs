//! How the container engine confines this process from outside, for
//! diagnosing why a session cannot create its namespaces or mounts: the
//! seccomp mode and whether the process holds CAP_SYS_ADMIN
//! (`/proc/self/status`), and the AppArmor profile it runs under
//! (`/proc/self/attr/apparmor/current`, or `/proc/self/attr/current` on
//! kernels without LSM stacking). `read` is the only reader; the parsers
//! and the fixes are pure.
//!
//! Why it matters (docs/feature.md): Docker's default seccomp profile
//! refuses to create user namespaces to a container without CAP_SYS_ADMIN,
//! and its AppArmor profile `docker-default` (Ubuntu hosts, Codespaces)
//! refuses every mount; bubblewrap needs both. Sessions load their own
//! seccomp filter (`sandbox::seccomp`) whatever the container has.
//!
//! Not here: the kernel's own switches (sysctls, `jail::host`).

use std::path::Path;

/// Docker's AppArmor profile, which refuses every `mount` (its template
/// has `deny mount,`): a session can never be built under it.
const DOCKER_DEFAULT: &str = "docker-default";

/// `CAP_SYS_ADMIN`'s bit in the capability sets.
const CAP_SYS_ADMIN: u32 = 21;

/// The facts (each `None` when it could not be read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confinement {
    /// `Seccomp:` of /proc/self/status: 0 none, 1 strict, 2 a filter.
    pub seccomp: Option<u8>,
    /// Whether the effective capabilities hold CAP_SYS_ADMIN (the
    /// kernel's and Docker's seccomp profile's test for "privileged").
    pub cap_sys_admin: Option<bool>,
    pub apparmor: Option<AppArmor>,
}

impl Confinement {
    /// A seccomp filter is loaded (by the container engine, or a parent).
    pub fn seccomp_filtered(&self) -> bool {
        self.seccomp == Some(2)
    }
}

/// The AppArmor profile of this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppArmor {
    pub profile: String,
    /// `enforce`, `complain`, `kill`, ... (none for `unconfined`).
    pub mode: Option<String>,
}

impl AppArmor {
    /// Confined: a profile other than `unconfined` whose denials take
    /// effect (enforce or kill mode).
    pub fn enforced(&self) -> bool {
        self.profile != "unconfined" && matches!(self.mode.as_deref(), Some("enforce" | "kill"))
    }

    /// A profile known to refuse every mount, enforced: Docker's. (Other
    /// profiles may too; doctor's mount probe finds those.)
    pub fn refuses_mounts(&self) -> bool {
        self.enforced() && self.profile == DOCKER_DEFAULT
    }

    /// `docker-default (enforce)`.
    pub fn label(&self) -> String {
        match &self.mode {
            Some(m) => format!("{} ({m})", self.profile),
            None => self.profile.clone(),
        }
    }
}

/// Reads the facts of this process.
pub fn read() -> Confinement {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let attr = |p: &str| std::fs::read_to_string(Path::new(p)).ok();
    let apparmor = attr("/proc/self/attr/apparmor/current").or_else(|| attr("/proc/self/attr/current")).and_then(|s| parse_apparmor(&s));
    Confinement { seccomp: status_field(&status, "Seccomp").and_then(|v| v.parse().ok()), cap_sys_admin: cap_sys_admin(&status), apparmor }
}

/// gVisor's application kernel (`runsc`, GKE Sandbox) reports a fixed
/// build string in /proc/version (and `uname -v`), whatever release it
/// claims; newer releases also put `gvisor` in the release.
const GVISOR_BUILD: &str = "#1 SMP Sun Jan 10 15:06:54 PST 2016";

/// What /proc/version says when the kernel is gVisor's, else None.
pub fn gvisor() -> Option<String> {
    gvisor_from(&std::fs::read_to_string("/proc/version").ok()?)
}

fn gvisor_from(proc_version: &str) -> Option<String> {
    let line = proc_version.lines().next()?.trim();
    let release = line.strip_prefix("Linux version ")?.split_whitespace().next()?;
    (line.contains(GVISOR_BUILD) || release.contains("gvisor")).then(|| line.to_owned())
}

/// The container engine this process seems to run under, only to word a
/// fix (what to run where): the engines' own marker files and
/// Kubernetes' service variable. Never a security decision (a marker file
/// proves nothing; doctor's boundary checks judge where the boundary is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
    Kubernetes,
    /// Some other container manager, named by `container=` of PID 1's
    /// environment as systemd-nspawn, LXC and others set it.
    Other(String),
    /// No sign of a container.
    None,
}

/// This process's engine, from the marker files and the environment.
pub fn engine() -> Engine {
    let pid1_container = std::fs::read("/proc/1/environ")
        .ok()
        .and_then(|env| env.split(|b| *b == 0).find_map(|kv| kv.strip_prefix(b"container=").map(|v| String::from_utf8_lossy(v).into_owned())));
    engine_from(
        Path::new("/.dockerenv").exists(),
        Path::new("/run/.containerenv").exists(),
        std::env::var_os(crate::env_vars::KUBERNETES_SERVICE_HOST).is_some(),
        pid1_container.as_deref(),
    )
}

/// Kubernetes first (its nodes run Docker or Podman-compatible runtimes
/// too, and the fix there is the pod's).
fn engine_from(dockerenv: bool, containerenv: bool, kubernetes: bool, container: Option<&str>) -> Engine {
    match (kubernetes, dockerenv, containerenv, container) {
        (true, ..) => Engine::Kubernetes,
        (_, true, ..) | (.., Some("docker")) => Engine::Docker,
        (_, _, true, _) | (.., Some("podman" | "oci")) => Engine::Podman,
        (.., Some(other)) if !other.is_empty() => Engine::Other(other.into()),
        _ => Engine::None,
    }
}

/// The value of `Name:` in /proc/self/status.
fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(str::trim))
}

fn cap_sys_admin(status: &str) -> Option<bool> {
    let caps = u64::from_str_radix(status_field(status, "CapEff")?, 16).ok()?;
    Some(caps & (1 << CAP_SYS_ADMIN) != 0)
}

/// An AppArmor label: `unconfined`, or `PROFILE (MODE)`. Anything else
/// (an SELinux context such as `system_u:system_r:container_t:s0`, which
/// the same /proc/self/attr/current shows on SELinux hosts) is not one.
pub fn parse_apparmor(text: &str) -> Option<AppArmor> {
    let text = text.trim_end_matches(['\n', '\0']).trim();
    if text == "unconfined" {
        return Some(AppArmor { profile: text.into(), mode: None });
    }
    let (profile, mode) = text.strip_suffix(')')?.rsplit_once(" (")?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase());
    (word(mode) && !profile.is_empty()).then(|| AppArmor { profile: profile.into(), mode: Some(mode.into()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCKER_STATUS: &str = "Name:\tsh\nUmask:\t0022\nCapEff:\t00000000a80425fb\nNoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\n";

    fn parse_status(s: &str) -> (Option<u8>, Option<bool>) {
        (status_field(s, "Seccomp").and_then(|v| v.parse().ok()), cap_sys_admin(s))
    }

    #[test]
    fn status_gives_the_seccomp_mode_and_cap_sys_admin() {
        // Docker's default capabilities (no CAP_SYS_ADMIN), its filter loaded.
        assert_eq!(parse_status(DOCKER_STATUS), (Some(2), Some(false)));
        // `Seccomp_filters:` is not `Seccomp:`.
        assert_eq!(parse_status("Seccomp_filters:\t1\n"), (None, None));
        // A host's root: every capability, no filter.
        assert_eq!(parse_status("CapEff:\t000001ffffffffff\nSeccomp:\t0\n"), (Some(0), Some(true)));
    }

    #[test]
    fn gvisor_is_told_by_its_proc_version() {
        let old = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016\n";
        assert_eq!(gvisor_from(old).as_deref(), Some(old.trim()));
        assert!(gvisor_from("Linux version 4.19.0-gvisor #1 SMP Sun Jan 10 15:06:54 PST 2016\n").is_some());
        assert!(gvisor_from("Linux version 6.18.0-gvisor #1 SMP PREEMPT\n").is_some());
        let real =
            "Linux version 6.18.0-1-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-14) #1 SMP PREEMPT_DYNAMIC Debian 6.18.3-1 (2026-01-04)\n";
        assert_eq!(gvisor_from(real), None);
        assert_eq!(gvisor_from(""), None);
    }

    #[test]
    fn the_engine_comes_from_its_markers() {
        assert_eq!(engine_from(false, false, true, None), Engine::Kubernetes, "a pod on any runtime");
        assert_eq!(engine_from(true, false, false, None), Engine::Docker);
        assert_eq!(engine_from(false, true, false, None), Engine::Podman);
        assert_eq!(engine_from(false, false, false, Some("podman")), Engine::Podman);
        assert_eq!(engine_from(false, false, false, Some("lxc")), Engine::Other("lxc".into()));
        assert_eq!(engine_from(false, false, false, Some("")), Engine::None);
        assert_eq!(engine_from(false, false, false, None), Engine::None);
    }

    #[test]
    fn apparmor_labels_and_selinux_contexts() {
        let d = parse_apparmor("docker-default (enforce)\n").unwrap();
        assert_eq!((d.profile.as_str(), d.mode.as_deref(), d.enforced()), ("docker-default", Some("enforce"), true));
        assert_eq!(d.label(), "docker-default (enforce)");
        assert!(d.refuses_mounts());
        assert!(!parse_apparmor("docker-default (complain)").unwrap().refuses_mounts(), "complain mode only logs");
        assert!(!parse_apparmor("containers-default-0.50.1 (enforce)").unwrap().refuses_mounts(), "only the profile known to refuse them");
        assert!(!parse_apparmor("unconfined\n").unwrap().enforced());
        assert!(!parse_apparmor("my-profile (complain)").unwrap().enforced());
        assert!(parse_apparmor("containers-default-0.50.1 (enforce)").unwrap().enforced());
        assert_eq!(parse_apparmor("system_u:system_r:container_t:s0:c1,c2\0"), None);
        assert_eq!(parse_apparmor(""), None);
        assert_eq!(parse_apparmor("(enforce)"), None);
    }
}
