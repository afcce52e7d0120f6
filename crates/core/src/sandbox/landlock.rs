//! Landlock's abstract unix socket scoping (ABI 6, Linux 6.12+): a session
//! reaches only abstract sockets made by its own processes. Abstract
//! sockets have no file to mask; they belong to a network namespace, so
//! with the egress jail the session already has its own, but with the jail
//! off it shares the container's, where X11 (`@/tmp/.X11-unix/X0`), D-Bus,
//! containerd shims and IDE helpers listen.
//!
//! `decide` says, from the kernel's facts, whether sessions get it (pure);
//! `scope_abstract_sockets` applies it to the calling process right before
//! it execs bwrap (the one exec seam, `exec.rs`), so the whole session and
//! nothing outside it is in the domain. The ruleset handles no file-system
//! or network access: nothing else changes. Reported as "fully enforced"
//! or "not enforced" with the reason — never pretended.

use std::io::Error;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask for the ABI version.
const CREATE_RULESET_VERSION: libc::c_uint = 1;
/// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1;
/// The first ABI with scoping.
const SCOPING_ABI: u32 = 6;

/// What the kernel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Landlock is on; its ABI version.
    Abi(u32),
    /// Built in but not enabled (not in the `lsm=` list).
    Disabled,
    /// No Landlock in this kernel, or the container's seccomp profile
    /// refuses its calls.
    Missing,
}

/// What sessions get on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scoping {
    Enforced { abi: u32 },
    NotEnforced(String),
}

/// Asks the kernel (changes nothing).
pub fn kernel_support() -> Support {
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call
    // only returns the ABI version.
    let r = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, CREATE_RULESET_VERSION) };
    match r {
        v if v > 0 => Support::Abi(v as u32),
        _ if Error::last_os_error().raw_os_error() == Some(libc::EOPNOTSUPP) => Support::Disabled,
        _ => Support::Missing,
    }
}

/// Whether `bwrap` is a setuid-root executable (it then needs its setuid
/// to work, which no-new-privs would cancel).
pub fn setuid_root(bwrap: &Path) -> bool {
    std::fs::metadata(bwrap).is_ok_and(|m| m.uid() == 0 && m.mode() & libc::S_ISUID != 0)
}

/// The decision. Landlock needs no-new-privs (or CAP_SYS_ADMIN, which a
/// root launcher has); a setuid bwrap run by another user cannot take it.
pub fn decide(support: Support, bwrap_setuid: bool, root: bool) -> Scoping {
    match support {
        Support::Abi(abi) if abi >= SCOPING_ABI && (root || !bwrap_setuid) => Scoping::Enforced { abi },
        Support::Abi(abi) if abi >= SCOPING_ABI => Scoping::NotEnforced(
            "bwrap is setuid-root here, and Landlock needs no_new_privs, which would stop bwrap from using its setuid; install a bwrap that is not setuid (user namespaces enabled)".into(),
        ),
        Support::Abi(abi) => Scoping::NotEnforced(format!("the kernel's Landlock is ABI {abi}; abstract-socket scoping needs ABI {SCOPING_ABI} (Linux 6.12 or later)")),
        Support::Disabled => Scoping::NotEnforced("Landlock is built into the kernel but not enabled (add `landlock` to the `lsm=` boot parameter)".into()),
        Support::Missing => Scoping::NotEnforced("the kernel has no Landlock (or a container's seccomp profile refuses its calls); abstract-socket scoping needs Linux 6.12 or later".into()),
    }
}

/// Restricts the calling process and its future children to abstract unix
/// sockets made inside its new Landlock domain. Returns what was applied;
/// an error only when the kernel offers scoping and applying it failed
/// (the launch must then stop: nothing half-applied).
pub fn scope_abstract_sockets(bwrap: &Path) -> Result<Scoping, Error> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let setuid = setuid_root(bwrap);
    let decision = decide(kernel_support(), setuid, root);
    if let Scoping::NotEnforced(_) = decision {
        return Ok(decision);
    }
    restrict(!setuid).map_err(|e| {
        let msg = format!(
            "cannot scope the session's abstract unix sockets with Landlock ({e}), although the kernel offers it; \
             a seccomp profile or security module refuses landlock_create_ruleset/landlock_restrict_self: allow them (Docker's and podman's default profiles do)"
        );
        Error::new(e.kind(), msg)
    })?;
    Ok(decision)
}

fn restrict(set_no_new_privs: bool) -> Result<(), Error> {
    // struct landlock_ruleset_attr { handled_access_fs, handled_access_net, scoped }
    let attr: [u64; 3] = [0, 0, SCOPE_ABSTRACT_UNIX_SOCKET];
    // SAFETY: the attribute is a live, correctly sized array; the result is checked.
    let fd = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, attr.as_ptr(), std::mem::size_of_val(&attr), 0u32) };
    if fd < 0 {
        return Err(Error::last_os_error());
    }
    // SAFETY: the descriptor was just returned and is owned only here.
    let fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) };
    // bwrap sets no_new_privs for the session anyway; setting it one exec
    // earlier changes nothing for a bwrap that is not setuid.
    // SAFETY: prctl with integer arguments only.
    if set_no_new_privs && unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(Error::last_os_error());
    }
    // SAFETY: restricts only this process (single-threaded here) with a ruleset we own.
    let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, std::os::fd::AsRawFd::as_raw_fd(&fd), 0u32) };
    if r != 0 {
        return Err(Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions() {
        assert_eq!(decide(Support::Abi(6), false, false), Scoping::Enforced { abi: 6 });
        assert_eq!(decide(Support::Abi(7), true, true), Scoping::Enforced { abi: 7 });
        for (s, setuid, root, says) in [
            (Support::Abi(7), true, false, "setuid"),
            (Support::Abi(5), false, true, "ABI 5"),
            (Support::Disabled, false, true, "lsm="),
            (Support::Missing, false, true, "no Landlock"),
        ] {
            match decide(s, setuid, root) {
                Scoping::NotEnforced(why) => assert!(why.contains(says), "{why}"),
                other => panic!("{s:?}: {other:?}"),
            }
        }
    }

    /// On this kernel (the project's machines run Linux 6.12+), a process
    /// scoped as sessions are cannot connect to an abstract socket made
    /// outside, and still can to one made inside.
    #[test]
    fn a_scoped_child_reaches_only_its_own_abstract_sockets() {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
        let support = kernel_support();
        assert!(matches!(support, Support::Abi(n) if n >= SCOPING_ABI), "this test needs Landlock ABI {SCOPING_ABI}+ (Linux 6.12+): {support:?}");
        let outer = format!("agent-sandbox-landlock-test-{}", std::process::id());
        let _l = UnixListener::bind_addr(&SocketAddr::from_abstract_name(outer.as_bytes()).unwrap()).unwrap();
        let inner = format!("{outer}-inner");
        let (outer_a, inner_a) = (SocketAddr::from_abstract_name(outer.as_bytes()).unwrap(), SocketAddr::from_abstract_name(inner.as_bytes()).unwrap());
        // SAFETY: the child only restricts itself, makes socket calls and _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = (|| {
                if restrict(true).is_err() {
                    return 1;
                }
                match UnixStream::connect_addr(&outer_a) {
                    Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
                    _ => return 2,
                }
                let Ok(_mine) = UnixListener::bind_addr(&inner_a) else { return 3 };
                if UnixStream::connect_addr(&inner_a).is_err() {
                    return 4;
                }
                0
            })();
            // SAFETY: end the child without unwinding into the test harness.
            unsafe { libc::_exit(code) }
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "{status:#x}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "1: restrict failed, 2: the outer socket was reachable, 3/4: an inner socket failed");
        // Outside the domain nothing changed.
        assert!(UnixStream::connect_addr(&outer_a).is_ok());
    }
}
