//! The facts of the container the jail needs before launch: the TUN device,
//! a trusted pasta, the host's resolv.conf, the container's own network
//! (every IPv4 route of every table, its policy rules and addresses, read
//! over rtnetlink: `container_net`) and whether user namespaces are
//! available. Reading them is `host_facts`; judging them (parsers,
//! diagnoses, `plan/container.rs`) is pure.

use super::error::JailError;
use super::plan::container::ContainerNet;
use crate::confinement::Confinement;
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The only directories pasta is taken from (root-owned system
/// directories; never `PATH`).
pub const PASTA_DIRS: &[&str] = &["/usr/bin", "/usr/sbin", "/bin", "/sbin"];
pub const TUN_PATH: &str = "/dev/net/tun";
/// Major/minor of the TUN/TAP control device.
const TUN_DEVICE: (u64, u64) = (10, 200);

/// Where the facts are read from. `HostProbe::default()` is the real
/// system; tests point single fields elsewhere to prove each refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostProbe {
    pub tun: PathBuf,
    pub pasta_dirs: Vec<PathBuf>,
    pub resolv_conf: PathBuf,
    pub sysctl_root: PathBuf,
}

impl Default for HostProbe {
    fn default() -> Self {
        HostProbe {
            tun: TUN_PATH.into(),
            pasta_dirs: PASTA_DIRS.iter().map(PathBuf::from).collect(),
            resolv_conf: "/etc/resolv.conf".into(),
            sysctl_root: "/proc/sys".into(),
        }
    }
}

/// The sysctls that switch user namespaces off (absent ones are `None`),
/// and how the container confines this process (its seccomp filter and
/// capabilities: `crate::confinement`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsernsFacts {
    pub max_user_namespaces: Option<u64>,
    pub unprivileged_userns_clone: Option<u64>,
    pub apparmor_restrict_unprivileged_userns: Option<u64>,
    pub confinement: Confinement,
    /// The user-mode emulator this process runs under (read only when
    /// explaining a failure: `current_userns_facts`).
    pub emulator: Option<PathBuf>,
    /// The kernel is gVisor's (`crate::confinement::gvisor`): what
    /// /proc/version says.
    pub gvisor: Option<String>,
    /// Running in a Kubernetes pod (only to word the fix: a pod's seccomp
    /// profile is set in its manifest, not in runArgs).
    pub kubernetes: bool,
}

impl UsernsFacts {
    /// Whether the kernel treats this process as privileged for user
    /// namespaces: it holds CAP_SYS_ADMIN. A container's root usually does
    /// not (Docker and podman drop it), so uid 0 alone is no guide; the
    /// uid decides only when the capabilities could not be read.
    fn privileged(&self, uid: u32) -> bool {
        self.confinement.cap_sys_admin.unwrap_or(uid == 0)
    }
}

/// What stops user namespaces, as far as the facts tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsernsBlocker {
    /// `user.max_user_namespaces` is 0.
    MaxUserNamespaces,
    /// `kernel.unprivileged_userns_clone` is 0 (Debian's switch).
    UnprivilegedClone,
    /// `kernel.apparmor_restrict_unprivileged_userns` is 1 (Ubuntu 23.10+).
    AppArmorRestrict,
    /// EPERM under a seccomp filter while the sysctls allow them: the
    /// container engine's profile (Docker's default refuses them to a
    /// container without CAP_SYS_ADMIN).
    Seccomp,
    /// This process runs under a user-mode emulator (qemu-user).
    Emulated,
    /// The container runs on gVisor's application kernel (GKE Sandbox).
    GVisor,
    /// Nothing the facts name.
    Unknown,
}

/// A failure to create a user namespace, explained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsernsDiagnosis {
    pub blocker: UsernsBlocker,
    pub cause: String,
    pub fix: String,
}

/// What the jail needs to know about the container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFacts {
    /// The trusted pasta executable (symlinks resolved).
    pub pasta: PathBuf,
    /// The container's /etc/resolv.conf ("" when absent).
    pub resolv_conf: String,
    /// The container's routes, rules and addresses.
    pub container: ContainerNet,
    pub uid: u32,
    pub gid: u32,
    pub userns: UsernsFacts,
}

/// The facts of the running system.
pub fn host_facts() -> Result<HostFacts, JailError> {
    host_facts_with(&HostProbe::default())
}

/// The facts, read from where `probe` says; fails closed on each missing
/// prerequisite, naming its fix.
pub fn host_facts_with(probe: &HostProbe) -> Result<HostFacts, JailError> {
    let uid = nix::unistd::geteuid().as_raw();
    let gid = nix::unistd::getegid().as_raw();
    check_tun(&probe.tun)?;
    let pasta = find_pasta(&probe.pasta_dirs)?;
    let userns = read_userns(&probe.sysctl_root);
    if let Some((cause, fix)) = userns_preflight(&userns, uid) {
        return Err(JailError::UserNamespaces { cause, fix });
    }
    let resolv_conf = read_optional(&probe.resolv_conf, "reading resolv.conf")?;
    // qemu-user refuses some rtnetlink requests (EOPNOTSUPP): the emulator
    // is the cause to name, as it is for the namespaces that would fail next.
    let container = container_net().map_err(|e| match (e, crate::arch::emulation::emulator()) {
        (JailError::ContainerNetwork { message }, Some(emulator)) => JailError::Emulated {
            failed: format!("reading the container's routes failed ({message})"),
            arch: crate::arch::Arch::native().to_string(),
            emulator,
        },
        (e, _) => e,
    })?;
    Ok(HostFacts { pasta, resolv_conf, container, uid, gid, userns })
}

/// The network of the namespace this process is in (the container's), as
/// rtnetlink reports it; fails closed: a jail that cannot see what the
/// container routes cannot block it.
pub fn container_net() -> Result<ContainerNet, JailError> {
    super::run::rtnl::container_net().map_err(|e| JailError::ContainerNetwork { message: e.to_string() })
}

/// The TUN device must be the real character device, usable by us.
fn check_tun(path: &Path) -> Result<(), JailError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(JailError::TunMissing { path: path.into() }),
        Err(e) => return Err(JailError::TunUnusable { path: path.into(), why: e.to_string() }),
    };
    let dev = (libc::major(meta.rdev()) as u64, libc::minor(meta.rdev()) as u64);
    if !meta.file_type().is_char_device() || dev != TUN_DEVICE {
        let why = format!("not the TUN character device 10:200 (found {}:{})", dev.0, dev.1);
        return Err(JailError::TunUnusable { path: path.into(), why });
    }
    let rw = nix::unistd::AccessFlags::R_OK | nix::unistd::AccessFlags::W_OK;
    nix::unistd::access(path, rw).map_err(|e| JailError::TunPermission {
        path: path.into(),
        why: format!("not readable and writable by uid {}: {e}; it is {}", nix::unistd::geteuid(), node_mode(&meta)),
        fix: tun_permission_fix(&crate::confinement::engine()),
    })
}

/// A node's mode and owner, for messages: `mode 0600, owner 0:0`.
pub fn node_mode(meta: &std::fs::Metadata) -> String {
    format!("mode 0{:o}, owner {}:{}", meta.mode() & 0o7777, meta.uid(), meta.gid())
}

/// The fix for a TUN node the user may not open, for where it is.
pub fn tun_permission_fix(engine: &crate::confinement::Engine) -> String {
    use crate::confinement::Engine;
    match engine {
        Engine::Docker | Engine::Podman => format!(
            "the engine gave the container the host's mode. Start the container through its entrypoint (the reference image's and the feature's make the node usable when they start as root; `--entrypoint` or an `exec` into a container started otherwise skips it), or run `{} exec -u root CONTAINER chmod 0666 /dev/net/tun`, or make the host's node 0666 (`chmod 0666 /dev/net/tun` on the host; udev does this on desktop and server distributions)",
            if *engine == Engine::Docker { "docker" } else { "podman" }
        ),
        Engine::Kubernetes => "give the pod a node its user may open: a device plugin that sets the mode (docs/kubernetes.md), or an init container that runs as root and `chmod 0666 /dev/net/tun` where the node is the pod's own".into(),
        Engine::Other(what) => format!("in this container ({what}), run `chmod 0666 /dev/net/tun` as root at its start, or make the host's node 0666"),
        Engine::None => "as root: `chmod 0666 /dev/net/tun`, and for every boot a udev rule (`KERNEL==\"tun\", MODE=\"0666\"` in /etc/udev/rules.d/)".into(),
    }
}

/// pasta from the fixed directories only, root-owned and not writable by
/// group or others (the file and every directory above it).
fn find_pasta(dirs: &[PathBuf]) -> Result<PathBuf, JailError> {
    let dirs: Vec<&str> = dirs.iter().filter_map(|d| d.to_str()).collect();
    crate::sysbin::find_in("pasta", &dirs, "install passt").map_err(|e| match e {
        crate::sysbin::SysbinError::Missing { dirs, .. } => JailError::PastaMissing { dirs },
        other => JailError::PastaUntrusted { why: other.to_string() },
    })
}

fn read_optional(path: &Path, step: &'static str) -> Result<String, JailError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(s),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(JailError::sys(step, e)),
    }
}

fn read_userns(sysctl_root: &Path) -> UsernsFacts {
    let read = |rel: &str| -> Option<u64> { std::fs::read_to_string(sysctl_root.join(rel)).ok()?.trim().parse().ok() };
    UsernsFacts {
        max_user_namespaces: read("user/max_user_namespaces"),
        unprivileged_userns_clone: read("kernel/unprivileged_userns_clone"),
        apparmor_restrict_unprivileged_userns: read("kernel/apparmor_restrict_unprivileged_userns"),
        confinement: crate::confinement::read(),
        emulator: None,
        gvisor: crate::confinement::gvisor(),
        kubernetes: crate::confinement::engine() == crate::confinement::Engine::Kubernetes,
    }
}

/// The sysctls as currently set (for diagnosing a failure after launch).
pub fn current_userns_facts() -> UsernsFacts {
    UsernsFacts { emulator: crate::arch::emulation::emulator(), ..read_userns(Path::new("/proc/sys")) }
}

/// A sysctl that certainly stops the jail, as (cause, fix).
pub fn userns_preflight(f: &UsernsFacts, uid: u32) -> Option<(String, String)> {
    sysctl_blocker(f, uid).map(|d| (d.cause, d.fix))
}

fn sysctl_blocker(f: &UsernsFacts, uid: u32) -> Option<UsernsDiagnosis> {
    if f.max_user_namespaces == Some(0) {
        return Some(UsernsDiagnosis {
            blocker: UsernsBlocker::MaxUserNamespaces,
            cause: "the sysctl user.max_user_namespaces is 0".into(),
            fix: crate::fixes::MAX_USER_NAMESPACES.into(),
        });
    }
    if !f.privileged(uid) && f.unprivileged_userns_clone == Some(0) {
        return Some(UsernsDiagnosis {
            blocker: UsernsBlocker::UnprivilegedClone,
            cause: "the sysctl kernel.unprivileged_userns_clone is 0".into(),
            fix: "set it to 1 on the host (`sysctl -w kernel.unprivileged_userns_clone=1`)".into(),
        });
    }
    None
}

/// Why creating or using the user namespace failed with `errno`, as
/// (cause, fix), naming the sysctl or the container's seccomp filter that
/// explains it when one does.
pub fn userns_diagnosis(f: &UsernsFacts, uid: u32, errno: i32) -> (String, String) {
    let d = diagnose_userns(f, uid, errno);
    (d.cause, d.fix)
}

/// The same as a value that says which blocker it found.
pub fn diagnose_userns(f: &UsernsFacts, uid: u32, errno: i32) -> UsernsDiagnosis {
    if let Some(found) = sysctl_blocker(f, uid) {
        return found;
    }
    let what = std::io::Error::from_raw_os_error(errno);
    // qemu-user refuses clone() with namespace flags and runs a helper
    // thread, so the kernel refuses unshare(CLONE_NEWUSER): no sysctl helps.
    if let Some(emu) = &f.emulator {
        return UsernsDiagnosis {
            blocker: UsernsBlocker::Emulated,
            cause: format!(
                "creating a user namespace failed: {what}; this agent-sandbox ({}) runs under the emulator {}, and user-mode \
                 emulators such as qemu-user cannot create namespaces or load seccomp filters",
                crate::arch::Arch::native(),
                emu.display()
            ),
            fix: crate::fixes::EMULATED.into(),
        };
    }
    // gVisor implements Linux itself: what refuses is its kernel, which
    // no sysctl or profile of the container changes.
    if let Some(version) = &f.gvisor {
        return UsernsDiagnosis {
            blocker: UsernsBlocker::GVisor,
            cause: format!("creating a user namespace failed: {what}; this container runs on gVisor ({version}), whose application kernel lacks what bubblewrap and the egress jail need"),
            fix: crate::fixes::GVISOR.into(),
        };
    }
    let seccomp = errno == libc::EPERM && f.confinement.seccomp_filtered();
    if !f.privileged(uid) && f.apparmor_restrict_unprivileged_userns == Some(1) {
        let mut fix = "set `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` on the host, or give pasta and the launcher an AppArmor profile that allows `userns`".to_owned();
        if seccomp {
            fix += &format!("; this container also runs under a seccomp filter, which may refuse them too: {}", crate::fixes::SECCOMP);
        }
        return UsernsDiagnosis {
            blocker: UsernsBlocker::AppArmorRestrict,
            cause: "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)".into(),
            fix,
        };
    }
    if seccomp {
        return UsernsDiagnosis {
            blocker: UsernsBlocker::Seccomp,
            cause: format!(
                "creating a user namespace failed: {what}, under the container's seccomp filter (`Seccomp: 2` in /proc/self/status) \
                 while the kernel's switches allow user namespaces: the container engine's seccomp profile refuses them \
                 (Docker's default profile does, to a container without CAP_SYS_ADMIN)"
            ),
            fix: if f.kubernetes { crate::fixes::SECCOMP_KUBERNETES } else { crate::fixes::SECCOMP }.into(),
        };
    }
    UsernsDiagnosis {
        blocker: UsernsBlocker::Unknown,
        cause: format!("creating a user namespace failed: {what}"),
        fix: "allow user namespaces in the container: with docker/podman, run it without a seccomp profile that blocks \
              `unshare`/`clone` of user namespaces (e.g. `--security-opt seccomp=unconfined` in runArgs), and check \
              the sysctls user.max_user_namespaces and kernel.unprivileged_userns_clone on the host"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emulator_is_named_before_any_other_cause() {
        let f = UsernsFacts { emulator: Some("/usr/libexec/qemu-binfmt/aarch64-binfmt-P".into()), ..Default::default() };
        let d = diagnose_userns(&f, 0, libc::EINVAL);
        assert_eq!(d.blocker, UsernsBlocker::Emulated);
        assert!(d.cause.contains("runs under the emulator /usr/libexec/qemu-binfmt/aarch64-binfmt-P"), "{}", d.cause);
        assert_eq!(d.fix, crate::fixes::EMULATED);
        assert_eq!(diagnose_userns(&UsernsFacts::default(), 0, libc::EINVAL).blocker, UsernsBlocker::Unknown);
    }

    #[test]
    fn gvisor_is_named_with_its_fix() {
        let f = UsernsFacts { gvisor: Some("Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016".into()), ..Default::default() };
        let d = diagnose_userns(&f, 1000, libc::EPERM);
        assert_eq!(d.blocker, UsernsBlocker::GVisor);
        assert!(d.cause.contains("gVisor (Linux version 4.4.0"), "{}", d.cause);
        assert_eq!(d.fix, crate::fixes::GVISOR);
        // A zero limit is named first: it is the node's, and explains it too.
        let zero = UsernsFacts { max_user_namespaces: Some(0), ..f };
        assert_eq!(diagnose_userns(&zero, 1000, libc::ENOSPC).blocker, UsernsBlocker::MaxUserNamespaces);
    }

    #[test]
    fn userns_preflight_names_the_sysctl() {
        let off = UsernsFacts { max_user_namespaces: Some(0), ..Default::default() };
        assert!(userns_preflight(&off, 0).unwrap().0.contains("user.max_user_namespaces"));
        let clone_off = UsernsFacts { unprivileged_userns_clone: Some(0), ..Default::default() };
        assert_eq!(userns_preflight(&clone_off, 0), None, "root is not affected");
        assert!(userns_preflight(&clone_off, 1000).unwrap().0.contains("kernel.unprivileged_userns_clone"));
        assert_eq!(userns_preflight(&UsernsFacts::default(), 1000), None);
    }

    #[test]
    fn userns_diagnosis_names_apparmor_for_users() {
        let aa = UsernsFacts { apparmor_restrict_unprivileged_userns: Some(1), ..Default::default() };
        let (cause, fix) = userns_diagnosis(&aa, 1000, libc::EPERM);
        assert!(cause.contains("kernel.apparmor_restrict_unprivileged_userns"), "{cause}");
        assert!(fix.contains("apparmor_restrict_unprivileged_userns=0"), "{fix}");
        let (cause, _) = userns_diagnosis(&aa, 0, libc::EPERM);
        assert!(cause.contains("Operation not permitted"), "{cause}");
    }

    /// A container's root as Docker starts it: no CAP_SYS_ADMIN, its
    /// default seccomp filter loaded, the kernel's switches open.
    fn docker_root() -> UsernsFacts {
        let confinement = Confinement { seccomp: Some(2), cap_sys_admin: Some(false), apparmor: None };
        UsernsFacts { max_user_namespaces: Some(15000), unprivileged_userns_clone: Some(1), confinement, ..Default::default() }
    }

    #[test]
    fn docker_seccomp_is_named_with_its_runargs_fix() {
        let d = diagnose_userns(&docker_root(), 0, libc::EPERM);
        assert_eq!(d.blocker, UsernsBlocker::Seccomp);
        assert!(d.cause.contains("Operation not permitted") && d.cause.contains("Seccomp: 2") && d.cause.contains("Docker's default profile"), "{}", d.cause);
        assert_eq!(d.fix, crate::fixes::SECCOMP);
        assert!(d.fix.contains("\"--security-opt=seccomp=unconfined\" to \"runArgs\""), "{}", d.fix);
        // In a pod, the fix is the pod's profile.
        let pod = UsernsFacts { kubernetes: true, ..docker_root() };
        assert_eq!(diagnose_userns(&pod, 1000, libc::EPERM).fix, crate::fixes::SECCOMP_KUBERNETES);
        // Another errno, or no filter: not seccomp's doing.
        assert_eq!(diagnose_userns(&docker_root(), 0, libc::ENOSPC).blocker, UsernsBlocker::Unknown);
        let mut unfiltered = docker_root();
        unfiltered.confinement.seccomp = Some(0);
        assert_eq!(diagnose_userns(&unfiltered, 0, libc::EPERM).blocker, UsernsBlocker::Unknown);
        // A sysctl that stops them is named first.
        let mut off = docker_root();
        off.max_user_namespaces = Some(0);
        assert_eq!(diagnose_userns(&off, 0, libc::EPERM).blocker, UsernsBlocker::MaxUserNamespaces);
    }

    #[test]
    fn a_containers_root_without_cap_sys_admin_is_unprivileged() {
        // Debian's switch and Ubuntu's AppArmor restriction test
        // CAP_SYS_ADMIN, not the uid: a container's root is refused too.
        let mut f = docker_root();
        f.unprivileged_userns_clone = Some(0);
        assert!(userns_preflight(&f, 0).unwrap().0.contains("kernel.unprivileged_userns_clone"));
        f.confinement.cap_sys_admin = Some(true);
        assert_eq!(userns_preflight(&f, 0), None, "a process with CAP_SYS_ADMIN is not affected");
        let mut aa = docker_root();
        aa.apparmor_restrict_unprivileged_userns = Some(1);
        let d = diagnose_userns(&aa, 0, libc::EPERM);
        assert_eq!(d.blocker, UsernsBlocker::AppArmorRestrict);
        assert!(d.fix.contains("apparmor_restrict_unprivileged_userns=0") && d.fix.contains("seccomp=unconfined"), "both are named: {}", d.fix);
    }

    #[test]
    fn missing_tun_and_pasta_are_named() {
        let probe = HostProbe { tun: "/nonexistent/tun".into(), ..Default::default() };
        let e = host_facts_with(&probe).unwrap_err();
        assert!(matches!(e, JailError::TunMissing { .. }), "{e}");
        assert!(e.to_string().contains("--device=/dev/net/tun"), "{e}");

        let probe = HostProbe { tun: "/dev/null".into(), ..Default::default() };
        let e = host_facts_with(&probe).unwrap_err();
        assert!(matches!(e, JailError::TunUnusable { .. }), "{e}");
    }
}
