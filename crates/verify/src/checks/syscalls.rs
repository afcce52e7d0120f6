//! The session's syscall profile, checked from inside (docs/defences.md, syscalls).
//! Per group of the table: every refused call answers the profile's errno
//! on every ABI this process can reach, called with all-zero arguments
//! (which the kernel would reject differently, or which are harmless, had
//! the filter let the call through), plus a real attempt where one is
//! harmless. Personality flags and address families get their own probes.
//! What agents need and the profile keeps is `needs`'.

use super::abi::{self, Answer, LowPage};
use super::sys::{in_child, NO, OK};
use super::Ctx;
use crate::sandbox::seccomp::abi::Abi;
use crate::sandbox::seccomp::table::{self, Group, Rule, ALLOWED_FAMILIES, EAFNOSUPPORT, ENOSYS, EOPNOTSUPP, EPERM, ROWS};
use crate::Outcome;
use std::ffi::CString;
use std::time::Duration;

fn errno(e: u16) -> Answer {
    Err(i32::from(e))
}

/// The native number of `name` (every row used here has one).
fn nr(name: &str, abi: Abi) -> Option<u32> {
    table::by_name(name).and_then(|r| r.nr(abi))
}

fn native_call(name: &str, args: [u64; 6]) -> Answer {
    let native = crate::sandbox::seccomp::abi::native();
    match nr(name, native) {
        Some(n) => abi::call(native, n, args),
        None => Err(libc::ENOSYS),
    }
}

/// Every refused call of `g`, with all-zero arguments, on `abis`.
fn sweep(g: Group, abis: &[Abi]) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut bad = Vec::new();
    for row in ROWS.iter().filter(|r| r.group == g) {
        let Rule::Deny(e) = row.rule else { continue };
        for abi in abis {
            let Some(nr) = row.nr(*abi) else { continue };
            n += 1;
            let got = abi::call(*abi, nr, [0; 6]);
            if got != errno(e) {
                bad.push(format!("{} ({}) {}", row.name, abi.name(), abi::describe(got)));
            }
        }
    }
    (n, bad)
}

fn finish(bad: Vec<String>, what: String, notes: Vec<String>) -> Outcome {
    if !bad.is_empty() {
        let more = bad.len().saturating_sub(8);
        let mut shown = bad.into_iter().take(8).collect::<Vec<_>>().join("; ");
        if more > 0 {
            shown += &format!("; and {more} more");
        }
        return Outcome::fail(shown);
    }
    Outcome::pass_note(std::iter::once(what).chain(notes).collect::<Vec<_>>().join("; "))
}

fn abi_names(abis: &[Abi]) -> String {
    abis.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// The probe of one group of refusals.
pub(crate) fn group(c: &Ctx, g: Group) -> Outcome {
    let reach = abi::reachable();
    let (n, mut bad) = sweep(g, &reach.filtered);
    bad.extend(attempts(c, g));
    finish(bad, format!("{n} calls refused ({})", abi_names(&reach.filtered)), reach.notes)
}

/// Real attempts that are harmless even where they would work.
fn attempts(c: &Ctx, g: Group) -> Vec<String> {
    let mut bad = Vec::new();
    let mut expect = |what: &str, got: Answer, want: u16| {
        if got != errno(want) {
            bad.push(format!("{what} {}", abi::describe(got)));
        }
    };
    match g {
        Group::Keyrings => expect("add_key to the session's own keyring", add_key(&c.spec.nonce), EPERM),
        Group::KernelHooks => {
            // O_CLOEXEC | UFFD_USER_MODE_ONLY: allowed without privileges on 5.11+.
            expect("userfaultfd (user-mode only)", native_call("userfaultfd", [(libc::O_CLOEXEC | 1) as u64, 0, 0, 0, 0, 0]), EPERM);
            expect("perf_event_open of this process", perf_self(), EPERM);
        }
        Group::IoUring => {
            let params = [0u8; 120];
            expect("io_uring_setup", native_call("io_uring_setup", [4, params.as_ptr() as u64, 0, 0, 0, 0]), ENOSYS);
        }
        Group::FileHandles => {
            let mut fh = [0u8; 8 + 128];
            fh[0..4].copy_from_slice(&128u32.to_ne_bytes());
            let mut mount_id = 0i32;
            let path = c"/etc/hostname";
            let args = [libc::AT_FDCWD as u64, path.as_ptr() as u64, fh.as_mut_ptr() as u64, (&mut mount_id as *mut i32) as u64, 0, 0];
            expect("name_to_handle_at", native_call("name_to_handle_at", args), EOPNOTSUPP);
        }
        _ => {}
    }
    bad
}

fn add_key(nonce: &str) -> Answer {
    let desc = CString::new(format!("agent-sandbox-verify-{nonce}-own")).unwrap_or_default();
    let args = [c"user".as_ptr() as u64, desc.as_ptr() as u64, nonce.as_ptr() as u64, nonce.len() as u64, libc::KEY_SPEC_SESSION_KEYRING as u64, 0];
    native_call("add_key", args)
}

/// A software clock event on this process (kernel.perf_event_paranoid <= 2
/// allows it to anyone).
fn perf_self() -> Answer {
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes()); // PERF_TYPE_SOFTWARE
    attr[4..8].copy_from_slice(&128u32.to_ne_bytes()); // size; config 0: CPU clock
    native_call("perf_event_open", [attr.as_ptr() as u64, 0, u64::MAX /* cpu -1 */, u64::MAX /* no group */, 0, 0])
}

/// No setuid or setgid bit can be set, by any call that sets a mode, on any
/// reachable ABI: each call of the table's SetId group tried with S_ISUID
/// (and S_ISGID) on a scratch file of the session's /tmp, which must still
/// carry no such bit; openat2 (whose mode the filter cannot read) answers
/// ENOSYS; and a copy of a real program in the workspace cannot be made
/// setuid with the chmod a shell would use. A plain mode still works.
pub(crate) fn setid_bits(c: &Ctx) -> Outcome {
    let reach = abi::reachable();
    let dir = std::path::Path::new("/tmp").join(format!("agent-sandbox-verify-setid-{}", c.spec.nonce));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Outcome::fail(format!("cannot make {}: {e}", dir.display()));
    }
    let mut bad = Vec::new();
    for abi in &reach.filtered {
        bad.extend(setid_on(*abi, &dir));
    }
    let _ = std::fs::remove_dir_all(&dir);
    bad.extend(setid_workspace_copy(&c.spec.workspace, &c.spec.nonce));
    finish(bad, format!("setuid/setgid modes refused ({})", abi_names(&reach.filtered)), reach.notes)
}

/// Every SetId row on `abi`, against files and directories under `dir`.
fn setid_on(abi: Abi, dir: &std::path::Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut bad = Vec::new();
    let file = dir.join(format!("f-{}", abi.name()));
    if std::fs::write(&file, b"#!/bin/sh\n").is_err() {
        return vec![format!("cannot write {}", file.display())];
    }
    let Some(page) = LowPage::new() else { return vec!["no page below 4 GiB for the call's path".into()] };
    let bytes = |p: &std::path::Path| {
        let mut v: Vec<u8> = p.as_os_str().as_encoded_bytes().to_vec();
        v.resize(v.len() + 4 - v.len() % 4, 0);
        v.chunks(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect::<Vec<u32>>()
    };
    let Ok(fd) = std::fs::File::open(&file) else { return vec![format!("cannot open {}", file.display())] };
    let fd = std::os::fd::AsRawFd::as_raw_fd(&fd) as u64;
    let cwd = libc::AT_FDCWD as u32 as u64;
    let (suid, sgid) = (u64::from(libc::S_ISUID), u64::from(libc::S_ISGID));
    for row in ROWS.iter().filter(|r| r.group == Group::SetId) {
        let Some(n) = row.nr(abi) else { continue };
        // Where the call creates, a new name each time; else the file.
        let target = match row.name {
            "chmod" | "fchmod" | "fchmodat" | "fchmodat2" => file.clone(),
            other => dir.join(format!("{other}-{}", abi.name())),
        };
        let path = page.put(&bytes(&target));
        let creat = (libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC) as u64;
        for bit in [suid, sgid] {
            let mode = 0o755 | bit;
            let args = match row.name {
                "chmod" | "creat" | "mkdir" => [path, mode, 0, 0, 0, 0],
                "fchmod" => [fd, mode, 0, 0, 0, 0],
                "fchmodat" | "fchmodat2" | "mkdirat" => [cwd, path, mode, 0, 0, 0],
                "open" => [path, creat, mode, 0, 0, 0],
                "openat" => [cwd, path, creat, mode, 0, 0],
                "mknod" => [path, u64::from(libc::S_IFREG) | mode, 0, 0, 0, 0],
                "mknodat" => [cwd, path, u64::from(libc::S_IFREG) | mode, 0, 0, 0],
                // openat2 and anything new: all-zero arguments, its errno.
                _ => [cwd, path, 0, 0, 0, 0],
            };
            let got = abi::call(abi, n, args);
            let want = match row.rule {
                Rule::Deny(e) => e,
                _ => EPERM,
            };
            if got != errno(want) {
                bad.push(format!("{} ({}, mode {mode:o}) {}", row.name, abi.name(), abi::describe(got)));
            }
        }
        let left = std::fs::symlink_metadata(&target).map(|m| m.permissions().mode()).unwrap_or(0);
        if left & (libc::S_ISUID | libc::S_ISGID) != 0 {
            bad.push(format!("{} ({}) left {} with mode {left:o}", row.name, abi.name(), target.display()));
        }
    }
    // The same file takes a plain mode: the refusals above are the filter's.
    if std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o750)).is_err() {
        bad.push("a plain chmod 0750 failed too: the refusals prove nothing".into());
    }
    bad
}

/// What an agent would run: copy a program into the workspace and make it
/// setuid (then setgid) with chmod(1). It must fail and leave no such bit.
fn setid_workspace_copy(ws: &std::path::Path, nonce: &str) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let copy = ws.join(format!(".agent-sandbox-verify-setid-{nonce}"));
    let _ = std::fs::remove_file(&copy);
    let mut bad = Vec::new();
    if let Err(e) = std::fs::copy("/bin/true", &copy) {
        return vec![format!("cannot copy /bin/true into the workspace: {e}")];
    }
    for mode in ["u+s", "g+s", "4755", "2755"] {
        let ran = std::process::Command::new("chmod").arg(mode).arg(&copy).stderr(std::process::Stdio::null()).status();
        let left = std::fs::symlink_metadata(&copy).map(|m| m.permissions().mode()).unwrap_or(0);
        if ran.is_ok_and(|s| s.success()) || left & (libc::S_ISUID | libc::S_ISGID) != 0 {
            bad.push(format!("chmod {mode} on a copy of /bin/true in the workspace succeeded (mode {left:o})"));
        }
    }
    let _ = std::fs::remove_file(&copy);
    bad
}

/// Personality flags that weaken memory protections.
const WEAKENING_PERSONAS: &[(u64, &str)] =
    &[(0x0040_0000, "READ_IMPLIES_EXEC"), (0x0010_0000, "MMAP_PAGE_ZERO"), (0x0020_0000, "ADDR_COMPAT_LAYOUT"), (0x0800_0000, "ADDR_LIMIT_3GB")];

/// (gdb's ADDR_NO_RANDOMIZE, which must keep working, is check 80's.)
pub(crate) fn personality(_c: &Ctx) -> Outcome {
    let reach = abi::reachable();
    let mut bad = Vec::new();
    for abi in &reach.filtered {
        let Some(n) = nr("personality", *abi) else { continue };
        for (flag, name) in WEAKENING_PERSONAS {
            let got = abi::call(*abi, n, [*flag, 0, 0, 0, 0, 0]);
            if got != errno(EPERM) {
                bad.push(format!("{name} ({}) {}", abi.name(), abi::describe(got)));
            }
        }
    }
    finish(bad, format!("weakening flags refused ({})", abi_names(&reach.filtered)), reach.notes)
}

const SOCKET_TYPES: &[i32] = &[libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_SEQPACKET];
/// One past the highest address family (AF_MCTP is 45).
const AF_END: i32 = 46;

fn socket(domain: i32, ty: i32, proto: i32) -> Answer {
    // SAFETY: plain socket call; a descriptor returned is closed at once.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: closing the descriptor we just got.
    unsafe { libc::close(fd) };
    Ok(i64::from(fd))
}

fn socketpair(domain: i32) -> Answer {
    let mut fds = [0i32; 2];
    // SAFETY: socketpair fills the two-element array; both are closed at once.
    if unsafe { libc::socketpair(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: closing the descriptors we just got.
    unsafe { libc::close(fds[0]) };
    // SAFETY: as above.
    unsafe { libc::close(fds[1]) };
    Ok(0)
}

fn refused_families() -> impl Iterator<Item = i32> {
    (0..AF_END).filter(|f| !ALLOWED_FAMILIES.contains(&(*f as u32)))
}

pub(crate) fn families(_c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for fam in refused_families() {
        for ty in SOCKET_TYPES {
            let got = socket(fam, *ty, 0);
            if got != errno(EAFNOSUPPORT) {
                bad.push(format!("socket({fam}, {ty}) {}", abi::describe(got)));
            }
        }
        let got = socketpair(fam);
        if got != errno(EAFNOSUPPORT) {
            bad.push(format!("socketpair({fam}) {}", abi::describe(got)));
        }
    }
    let mut reach = abi::reachable();
    bad.extend(compat_sockets(&reach.filtered));
    bad.extend(packet_in_nested_netns(&mut reach.notes));
    bad.extend(allowed_families_open(&mut reach.notes));
    finish(bad, format!("families other than unix, inet, inet6, netlink refused ({})", abi_names(&reach.filtered)), reach.notes)
}

/// vsock through x32's and i386's socket calls, and i386's socketcall.
fn compat_sockets(abis: &[Abi]) -> Vec<String> {
    let vsock = libc::AF_VSOCK as u64;
    let mut bad = Vec::new();
    for abi in abis.iter().filter(|a| **a != crate::sandbox::seccomp::abi::native()) {
        let Some(n) = nr("socket", *abi) else { continue };
        let got = abi::call(*abi, n, [vsock, libc::SOCK_STREAM as u64, 0, 0, 0, 0]);
        if got != errno(EAFNOSUPPORT) {
            bad.push(format!("socket(AF_VSOCK) ({}) {}", abi.name(), abi::describe(got)));
        }
    }
    if let (true, Some(n), Some(page)) = (abis.contains(&Abi::I386), nr("socketcall", Abi::I386), LowPage::new()) {
        let args = page.put(&[libc::AF_VSOCK as u32, libc::SOCK_STREAM as u32, 0]);
        let got = abi::call(Abi::I386, n, [1 /* SYS_SOCKET */, args, 0, 0, 0, 0]);
        if got != errno(ENOSYS) {
            bad.push(format!("socketcall(SYS_SOCKET, AF_VSOCK) (i386) {}", abi::describe(got)));
        }
    }
    bad
}

/// In a new user + network namespace the capability checks of packet
/// sockets pass; only the profile stops them.
fn packet_in_nested_netns(notes: &mut Vec<String>) -> Vec<String> {
    let r = in_child(Duration::from_secs(5), || {
        if nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER | nix::sched::CloneFlags::CLONE_NEWNET).is_err() {
            return 2;
        }
        match socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from((libc::ETH_P_ALL as u16).to_be())) {
            Err(e) if e == i32::from(EAFNOSUPPORT) => OK,
            _ => NO,
        }
    });
    match r {
        Ok(OK) => vec![],
        Ok(2) => {
            notes.push("no nested user namespace here for the packet-socket attempt".into());
            vec![]
        }
        Ok(_) => vec!["an AF_PACKET socket opened in a nested user + network namespace".into()],
        Err(e) => vec![format!("the nested packet-socket attempt {e}")],
    }
}

fn allowed_families_open(notes: &mut Vec<String>) -> Vec<String> {
    let mut bad = Vec::new();
    let ipv6 = std::path::Path::new("/proc/net/if_inet6").exists();
    for (fam, ty, proto, name) in [
        (libc::AF_UNIX, libc::SOCK_STREAM, 0, "unix"),
        (libc::AF_INET, libc::SOCK_DGRAM, 0, "inet"),
        (libc::AF_INET6, libc::SOCK_DGRAM, 0, "inet6"),
        (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE, "netlink"),
    ] {
        match socket(fam, ty, proto) {
            Ok(_) => {}
            Err(e) if fam == libc::AF_INET6 && !ipv6 && e == i32::from(EAFNOSUPPORT) => notes.push("the kernel has IPv6 off".into()),
            got => bad.push(format!("a {name} socket {} (sessions need it)", abi::describe(got))),
        }
    }
    bad
}
