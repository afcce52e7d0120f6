//! Live probes of what a session needs from the host, shared by `doctor`
//! and `sandbox-install`: user namespaces, /dev/net/tun, and whether pasta
//! can really attach to a fresh user+network namespace (not only exist).
//! Each probe cleans up after itself: the throwaway namespace holder and
//! pasta are killed and reaped before it returns.

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The AppArmor switch that blocks unprivileged user namespaces (Ubuntu 23.10+).
const APPARMOR_SYSCTL: &str = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns";
/// How long pasta gets to configure the namespace.
const PASTA_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Userns {
    Works,
    /// `why`: the error, with what the sysctls say; `errno`: the error
    /// number of the failed call, when one failed.
    Fails {
        why: String,
        errno: Option<i32>,
    },
}

/// Whether mounts work in a new user + mount namespace (bubblewrap's
/// first steps: `/` made a slave, a tmpfs mounted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mounts {
    Works,
    /// `what` failed with `errno`.
    Fails {
        what: String,
        errno: Option<i32>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tun {
    /// Its mode and owner (`mode 0666, owner 0:0`).
    Usable(String),
    Missing,
    Unusable(String),
    /// The real device, which this user may not open: its mode and owner
    /// (`mode 0600, owner 0:0`), as the engine copied them from the host.
    Denied(String),
}

/// Whether the jail's packet filter (its second layer) can be installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Filter {
    Works,
    /// What failed, and the fix for it.
    Fails {
        why: String,
        fix: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attach {
    /// pasta gave the namespace an interface and a default route.
    Attached,
    Failed(String),
}

/// A throwaway process in its own user+network namespace. Dropping it
/// kills and reaps it; if this process dies first, the holder sees its
/// release pipe close and exits.
pub(crate) struct Holder {
    pub pid: nix::unistd::Pid,
    _release: OwnedFd,
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
        let _ = nix::sys::wait::waitpid(self.pid, None);
    }
}

fn sysctl(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// What the kernel switches say about user namespaces (for messages).
fn userns_switches() -> String {
    let mut parts = Vec::new();
    if let Some(v) = sysctl(APPARMOR_SYSCTL) {
        parts.push(format!("kernel.apparmor_restrict_unprivileged_userns={v}"));
    }
    if let Some(v) = sysctl("/proc/sys/kernel/unprivileged_userns_clone") {
        parts.push(format!("kernel.unprivileged_userns_clone={v}"));
    }
    if let Some(v) = sysctl("/proc/sys/user/max_user_namespaces") {
        parts.push(format!("user.max_user_namespaces={v}"));
    }
    parts.join(", ")
}

/// Why a holder could not start: the step, and the error number of the
/// failed call when one failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HolderError {
    pub what: String,
    pub errno: Option<i32>,
}

impl std::fmt::Display for HolderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

/// Starts a holder: a child that unshares a user and a network namespace,
/// maps the caller's uid to root inside, with `interface` makes the jail's
/// interface there as the jail does (`jail::run::tap`), and waits.
pub(crate) fn holder(interface: bool) -> Result<Holder, HolderError> {
    let no_errno = |what: String| HolderError { what, errno: None };
    let tap_request = crate::jail::run::tap::ifreq_for(crate::jail::JAIL_IFNAME).map_err(no_errno)?;
    let (status_r, status_w) = nix::unistd::pipe().map_err(|e| no_errno(format!("pipe: {e}")))?;
    let (release_r, release_w) = nix::unistd::pipe().map_err(|e| no_errno(format!("pipe: {e}")))?;
    // Everything the child writes is prepared before fork: the child only
    // makes raw system calls.
    let uid_map = format!("0 {} 1\n", nix::unistd::getuid());
    let gid_map = format!("0 {} 1\n", nix::unistd::getgid());
    let paths = [c"/proc/self/setgroups", c"/proc/self/uid_map", c"/proc/self/gid_map"];
    let data: [&[u8]; 3] = [b"deny\n", uid_map.as_bytes(), gid_map.as_bytes()];
    let (status_r_fd, release_w_fd, status_w_fd, release_r_fd) = (status_r.as_raw_fd(), release_w.as_raw_fd(), status_w.as_raw_fd(), release_r.as_raw_fd());
    let work = || {
        // SAFETY: raw syscalls on valid descriptors and NUL-terminated paths.
        unsafe {
            libc::close(status_r_fd);
            libc::close(release_w_fd);
            let errno = || *libc::__errno_location();
            let fail = |stage: u8, err: i32| {
                let msg = [stage, err as u8];
                libc::write(status_w_fd, msg.as_ptr().cast(), 2);
                libc::_exit(1);
            };
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
                fail(b'u', errno());
            }
            for (p, d) in paths.iter().zip(data) {
                let fd = libc::open(p.as_ptr(), libc::O_WRONLY);
                if fd < 0 || libc::write(fd, d.as_ptr().cast(), d.len()) < 0 {
                    fail(b'm', errno());
                }
                libc::close(fd);
            }
            if interface {
                if let Err((_, e)) = crate::jail::run::tap::create_persistent(&tap_request) {
                    fail(b't', e as i32);
                }
            }
            libc::write(status_w_fd, b"ok".as_ptr().cast(), 2);
            let mut b = [0u8; 1];
            libc::read(release_r_fd, b.as_mut_ptr().cast(), 1);
            0
        }
    };
    // SAFETY: the child only calls async-signal-safe functions (unshare,
    // open, write, ioctl, close, read, _exit) on data prepared above, then
    // exits.
    let child = unsafe { crate::child::run(work) }.map_err(|e| no_errno(format!("fork: {e}")))?;
    drop(status_w);
    drop(release_r);
    let holder = Holder { pid: child, _release: release_w };
    let mut msg = [0u8; 2];
    let n = std::fs::File::from(status_r).read(&mut msg).unwrap_or(0);
    match (n, msg) {
        (2, [b'o', b'k']) => Ok(holder),
        (2, [stage, errno]) => {
            let err = nix::errno::Errno::from_raw(i32::from(errno));
            let what = match stage {
                b'u' => "creating a user+network namespace",
                b't' => "making the jail's interface in it",
                _ => "mapping the user into it",
            };
            Err(HolderError { what: format!("{what} failed: {err}"), errno: Some(i32::from(errno)) })
        }
        _ => Err(no_errno("the namespace holder exited before reporting".into())),
    }
}

/// Can this process create a user namespace (the sandbox and the jail need one)?
pub(crate) fn userns() -> Userns {
    match holder(false) {
        Ok(_h) => Userns::Works,
        Err(HolderError { what, errno }) => {
            let sw = userns_switches();
            Userns::Fails { why: if sw.is_empty() { what } else { format!("{what} ({sw})") }, errno }
        }
    }
}

pub(crate) fn tun() -> Tun {
    let p = Path::new("/dev/net/tun");
    let Ok(meta) = std::fs::metadata(p) else { return Tun::Missing };
    if !meta.file_type().is_char_device() {
        return Tun::Unusable("it is not a character device".into());
    }
    let rdev = meta.rdev();
    if (libc::major(rdev), libc::minor(rdev)) != (10, 200) {
        return Tun::Unusable(format!("it is device {}:{}, not 10:200", libc::major(rdev), libc::minor(rdev)));
    }
    match std::fs::OpenOptions::new().read(true).write(true).open(p) {
        Ok(_) => Tun::Usable(crate::jail::node_mode(&meta)),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Tun::Denied(crate::jail::node_mode(&meta)),
        Err(e) => Tun::Unusable(format!("opening it fails: {e}")),
    }
}

/// `pasta --version`'s first line.
pub(crate) fn pasta_version(pasta: &Path) -> Option<String> {
    let out = pasta_command(pasta).arg("--version").stdin(Stdio::null()).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// pasta and passt are one executable that picks its mode by the name it is
/// run as; the trusted path is the resolved one (often `passt`).
fn pasta_command(pasta: &Path) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(pasta);
    c.arg0("pasta");
    c
}

/// The first few meaningful lines of a tool's error output.
fn first_lines(err: &str) -> String {
    let lines: Vec<&str> = err.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("Failed to send")).take(3).collect();
    lines.join(" / ")
}

/// The pasta command line of the probe: the jail's own options (see
/// `jail::pasta_args`), attached to `pid`, readiness seen in its routes.
pub(crate) fn pasta_args(pid: i32, uid: u32) -> Vec<String> {
    let mut v = crate::jail::pasta_args(uid, std::net::Ipv4Addr::new(192, 0, 2, 53));
    v.push(pid.to_string());
    v
}

/// Does the holder's namespace have a default route (pasta configured it)?
fn has_default_route(pid: nix::unistd::Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/net/route")).is_ok_and(|t| crate::jail::default_route_in(&t).is_some())
}

/// Attaches `pasta` to a throwaway namespace and checks that it configured
/// it; everything is killed and reaped before returning.
pub(crate) fn pasta_attach(pasta: &Path) -> Attach {
    let holder = match holder(true) {
        Ok(h) => h,
        Err(e) => return Attach::Failed(format!("no namespace to attach to: {e}")),
    };
    let child = pasta_command(pasta)
        .args(pasta_args(holder.pid.as_raw(), nix::unistd::geteuid().as_raw()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Attach::Failed(format!("cannot run {}: {e}", pasta.display())),
    };
    let start = Instant::now();
    let result = loop {
        if has_default_route(holder.pid) {
            break Attach::Attached;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                let _ = s.read_to_string(&mut err);
            }
            let err = first_lines(&err);
            break Attach::Failed(format!(
                "pasta exited ({status}) without configuring the namespace{}",
                if err.is_empty() { String::new() } else { format!(": {err}") }
            ));
        }
        if start.elapsed() > PASTA_TIMEOUT {
            break Attach::Failed(format!("pasta did not configure the namespace within {} s", PASTA_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    drop(holder);
    result
}

/// Makes `/` a slave and mounts a tmpfs in a throwaway user + mount
/// namespace (a forked child, gone before this returns), as bubblewrap
/// does first: an AppArmor profile such as Docker's `docker-default`
/// refuses exactly this, while creating the namespaces still works.
pub(crate) fn mounts() -> Mounts {
    match answer_from_child(mount_in_new_namespace) {
        Err(what) => Mounts::Fails { what, errno: None },
        Ok(msg) => parse_answer(&msg).map_or(Mounts::Works, |(errno, what)| Mounts::Fails { what, errno }),
    }
}

/// A probe child's answer: "ok", or "ERRNO WHAT" (ERRNO `-` when none).
fn parse_answer(msg: &str) -> Option<(Option<i32>, String)> {
    if msg == "ok" {
        return None;
    }
    match msg.split_once(' ') {
        Some((errno, what)) => Some((errno.parse().ok(), what.to_string())),
        None => Some((None, "the probe exited without an answer".into())),
    }
}

/// In the forked child: "ok", or "ERRNO WHAT".
fn mount_in_new_namespace(uid_map: &str, gid_map: &str) -> String {
    use nix::mount::{mount, MsFlags};
    use nix::sched::CloneFlags;
    if let Err(e) = nix::sched::unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS) {
        return format!("{} creating a user+mount namespace: {e}", e as i32);
    }
    if let Err(e) = crate::idmap::write(crate::idmap::Whose::This, uid_map, gid_map, crate::idmap::Setgroups::Deny) {
        return format!("- {e}");
    }
    // Only this child's mount namespace changes; it ends with the child.
    if let Err(e) = mount(None::<&str>, "/", None::<&str>, MsFlags::MS_SLAVE | MsFlags::MS_REC, None::<&str>) {
        return format!("{} making / a slave mount: {e}", e as i32);
    }
    match mount(Some("tmpfs"), "/tmp", Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, None::<&str>) {
        Ok(()) => "ok".into(),
        Err(e) => format!("{} mounting a tmpfs: {e}", e as i32),
    }
}

/// Installs the jail's packet filter in a throwaway user + network
/// namespace (a forked child, gone before this returns) and reads it back,
/// as the jail does at every launch.
pub(crate) fn packet_filter() -> Filter {
    match answer_from_child(filter_in_new_namespace) {
        Err(why) => Filter::Fails { why, fix: String::new() },
        Ok(msg) => match msg.split_once(' ') {
            _ if msg == "ok" => Filter::Works,
            Some((errno, why)) => Filter::Fails { why: why.to_string(), fix: crate::jail::packet_filter_fix(errno.parse().ok()) },
            None => Filter::Fails { why: "the probe exited without an answer".into(), fix: crate::jail::packet_filter_fix(None) },
        },
    }
}

/// Runs `work` (given the uid and gid maps that make this user root in a
/// new user namespace) in a forked child and returns what it answered.
/// Err: the pipe or the fork failed.
fn answer_from_child(work: fn(&str, &str) -> String) -> Result<String, String> {
    let (r, w) = nix::unistd::pipe().map_err(|_| "pipe failed".to_string())?;
    let uid_map = format!("0 {} 1\n", nix::unistd::getuid());
    let gid_map = format!("0 {} 1\n", nix::unistd::getgid());
    let r_fd = r.as_raw_fd();
    let work = move || {
        let _ = nix::unistd::close(r_fd);
        let msg = work(&uid_map, &gid_map);
        let _ = nix::unistd::write(&w, msg.as_bytes());
        0
    };
    // SAFETY: doctor is single-threaded; the child works and writes one
    // message.
    let child = unsafe { crate::child::run(work) }.map_err(|e| format!("fork: {e}"))?;
    let mut msg = String::new();
    let _ = std::fs::File::from(r).read_to_string(&mut msg);
    let _ = crate::child::wait(child);
    Ok(msg)
}

/// In the forked child: "ok", or "ERRNO WHY" (ERRNO `-` when none).
fn filter_in_new_namespace(uid_map: &str, gid_map: &str) -> String {
    if let Err(e) = nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER | nix::sched::CloneFlags::CLONE_NEWNET) {
        return format!("{} creating a user+network namespace: {e}", e as i32);
    }
    if let Err(e) = crate::idmap::write(crate::idmap::Whose::This, uid_map, gid_map, crate::idmap::Setgroups::Deny) {
        return format!("- {e}");
    }
    match crate::jail::probe_filter() {
        Ok(()) => "ok".into(),
        Err((why, errno)) => format!("{} {why}", errno.map_or("-".to_string(), |e| e.to_string())),
    }
}
