//! The jail's interface, made by the holder before pasta attaches.
//!
//! Why not let pasta make it: a tap device that is not persistent is
//! unregistered, synchronously, by the exit of the last process holding
//! it, and that is pasta's exit, which the launcher waits for at the end
//! of every session (nothing may be left behind). Unregistering takes the
//! kernel tens of milliseconds, more than the rest of the session's
//! teardown together. A persistent device survives pasta and goes with its
//! namespace instead, which the kernel dismantles in the background once
//! the last process in it is gone; pasta then exits in a few milliseconds.
//!
//! pasta attaches to the existing device by name (`--ns-ifname`), as it
//! would to one it made. Nobody else can: the device is in the holder's
//! network namespace, and attaching needs either pasta's slot to be free
//! (it is taken until pasta exits) or `/dev/net/tun` inside the sandbox,
//! where it is not; even then the device only leads back into the
//! session's own namespace.

use nix::errno::Errno;
use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `/dev/net/tun` (`host::TUN_PATH`) as a C string, so that making the
/// device needs no allocation.
const TUN_DEVICE: &CStr = c"/dev/net/tun";

/// The step of making the device that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TapStep {
    Open,
    Create,
    Persist,
}

/// Makes the persistent tap device `name` in the current network
/// namespace. Needs CAP_NET_ADMIN there (the holder has it in its own
/// namespaces) and `/dev/net/tun`.
pub(crate) fn make_persistent(name: &str) -> Result<(), String> {
    let req = ifreq_for(name)?;
    create_persistent(&req).map_err(|(step, e)| match step {
        TapStep::Open => format!("opening {}: {e}", TUN_DEVICE.to_string_lossy()),
        TapStep::Create => format!("creating the tap device {name}: {e}"),
        TapStep::Persist => format!("making {name} persistent: {e}"),
    })
}

/// Makes the persistent tap device `req` asks for. Raw system calls only,
/// nothing allocated: a forked child of a threaded process may call it
/// (the doctor's probe does).
pub fn create_persistent(req: &libc::ifreq) -> Result<(), (TapStep, Errno)> {
    // SAFETY: a plain open(2) of a NUL-terminated path.
    let raw = unsafe { libc::open(TUN_DEVICE.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if raw < 0 {
        return Err((TapStep::Open, Errno::last()));
    }
    // SAFETY: `raw` was just opened and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut req = *req;
    // SAFETY: TUNSETIFF reads and writes the ifreq passed by pointer; `req`
    // lives until the call returns.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req) } < 0 {
        return Err((TapStep::Create, Errno::last()));
    }
    // SAFETY: TUNSETPERSIST takes its argument by value.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETPERSIST, 1 as libc::c_ulong) } < 0 {
        return Err((TapStep::Persist, Errno::last()));
    }
    // Closing detaches the creator, which frees the slot for pasta.
    drop(fd);
    Ok(())
}

/// An `ifreq` asking for the tap device `name`, as pasta asks for it (tap,
/// no packet information header, one queue).
pub fn ifreq_for(name: &str) -> Result<libc::ifreq, String> {
    // SAFETY: ifreq is plain old data; all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    if name.is_empty() || name.len() >= req.ifr_name.len() || name.contains(['/', ' ', '\0']) {
        return Err(format!("{name:?} is not a usable interface name"));
    }
    for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_names_the_device_and_asks_for_a_plain_tap() {
        let req = ifreq_for("eth0").unwrap();
        let name: Vec<u8> = req.ifr_name.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
        assert_eq!(name, b"eth0");
        // SAFETY: the flags member is the one written above.
        let flags = unsafe { req.ifr_ifru.ifru_flags } as libc::c_int;
        assert_eq!(flags, libc::IFF_TAP | libc::IFF_NO_PI);
    }

    #[test]
    fn the_device_is_the_one_the_host_checks() {
        assert_eq!(TUN_DEVICE.to_str(), Ok(crate::jail::TUN_PATH));
    }

    #[test]
    fn unusable_names_are_refused() {
        for bad in ["", "a-name-far-too-long", "a/b", "a b"] {
            assert!(ifreq_for(bad).is_err(), "{bad:?}");
        }
    }
}
