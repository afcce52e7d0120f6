//! Installs the jail's packet filter (`plan/filter.rs`), grows its blocked
//! set, and reads the whole nf_tables state back, over a plain
//! NETLINK_NETFILTER socket in the jail's namespace (run by the locker,
//! which has joined it). The messages themselves are built and parsed in
//! `plan/nftwire.rs`.

use crate::jail::plan::filter::{self, ElementState, FilterPlan, Ruleset, SetChange, SetState};
use crate::jail::plan::nftwire::{self, Dump, ElemOp, Obj, Reply};
use nix::sys::socket::{recv, send, MsgFlags};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// How long the kernel may take to answer (a module load on first use
/// included); a silent kernel is a failure, never a hang.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the filter could not be installed or read.
#[derive(Debug)]
pub(crate) struct NftError {
    pub step: &'static str,
    pub errno: Option<i32>,
    pub message: String,
}

impl NftError {
    fn new(step: &'static str, errno: Option<i32>, message: impl Into<String>) -> NftError {
        NftError { step, errno, message: message.into() }
    }
}

/// A NETLINK_NETFILTER socket of the current network namespace.
pub(crate) struct Socket {
    fd: OwnedFd,
    seq: u32,
}

impl Socket {
    pub(crate) fn open() -> Result<Socket, NftError> {
        // SAFETY: plain socket(2); the result is checked and owned below.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, nftwire::NETLINK_NETFILTER) };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            return Err(NftError::new("opening an nf_tables netlink socket", e.raw_os_error(), e.to_string()));
        }
        // SAFETY: `fd` is a new descriptor owned only here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let tv = libc::timeval { tv_sec: ANSWER_TIMEOUT.as_secs() as _, tv_usec: 0 };
        // SAFETY: SO_RCVTIMEO with a valid timeval of the size given.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(NftError::new("setting the netlink receive timeout", e.raw_os_error(), e.to_string()));
        }
        // A transaction is one datagram: room for the largest the jail
        // sends (the kernel caps this at net.core.wmem_max; see
        // `ELEMENTS_PER_TRANSACTION`).
        let size: libc::c_int = 1 << 20;
        // SAFETY: SO_SNDBUF with a valid int of the size given; failing
        // leaves the default, which still holds a transaction.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        Ok(Socket { fd, seq: 1 })
    }

    fn send(&self, step: &'static str, bytes: &[u8]) -> Result<(), NftError> {
        match send(self.fd.as_raw_fd(), bytes, MsgFlags::empty()) {
            Ok(n) if n == bytes.len() => Ok(()),
            Ok(n) => Err(NftError::new(step, None, format!("sent {n} of {} bytes", bytes.len()))),
            Err(e) => Err(NftError::new(step, Some(e as i32), e.desc())),
        }
    }

    /// The next datagram's messages.
    fn receive(&self, step: &'static str) -> Result<Vec<Reply>, NftError> {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match recv(self.fd.as_raw_fd(), &mut buf, MsgFlags::empty()) {
                Ok(n) => return nftwire::parse_replies(&buf[..n]).map_err(|m| NftError::new(step, None, m)),
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e @ nix::errno::Errno::EAGAIN) => {
                    return Err(NftError::new(step, Some(e as i32), format!("the kernel did not answer within {} s", ANSWER_TIMEOUT.as_secs())))
                }
                Err(e) => return Err(NftError::new(step, Some(e as i32), e.desc())),
            }
        }
    }
}

/// Elements per transaction: about 24 bytes each, so a transaction stays
/// well under the default socket send buffer (208 KiB).
const ELEMENTS_PER_TRANSACTION: usize = 4 * nftwire::ELEMENTS_PER_MESSAGE;

/// Creates the filter: the table, its sets, the blocked set's first
/// elements, the chains and the rules in one transaction; a set too large
/// for one gets the rest of its elements in further ones (the launch has
/// not opened the gate yet, so nothing runs in between).
pub(crate) fn install(plan: &FilterPlan) -> Result<(), NftError> {
    let want = filter::expected(plan);
    let blocked = filter::blocked_set();
    let mut chunks = want.elements.chunks(ELEMENTS_PER_TRANSACTION);
    let first = chunks.next().unwrap_or_default();
    let mut objs: Vec<Obj<'_>> = want.tables.iter().map(Obj::Table).collect();
    objs.extend(want.sets.iter().map(Obj::Set));
    if !first.is_empty() {
        objs.push(Obj::Elements { set: &blocked, elements: first, op: ElemOp::Add });
    }
    objs.extend(want.chains.iter().map(Obj::Chain));
    objs.extend(want.rules.iter().map(Obj::Rule));
    transact_objs(&objs)?;
    for chunk in chunks {
        transact_objs(&[Obj::Elements { set: &blocked, elements: chunk, op: ElemOp::Add }])?;
    }
    Ok(())
}

/// Applies each change to the blocked set in a transaction of its own.
pub(crate) fn grow_set(changes: &[SetChange]) -> Result<(), NftError> {
    let set = filter::blocked_set();
    for c in changes {
        if c.remove.len() + c.add.len() > ELEMENTS_PER_TRANSACTION {
            return Err(NftError::new(
                "growing the blocked set",
                None,
                format!("one change replaces {} elements, more than one transaction holds", c.remove.len()),
            ));
        }
        let mut objs = Vec::new();
        if !c.remove.is_empty() {
            objs.push(Obj::Elements { set: &set, elements: &c.remove, op: ElemOp::Remove });
        }
        if !c.add.is_empty() {
            objs.push(Obj::Elements { set: &set, elements: &c.add, op: ElemOp::Add });
        }
        transact_objs(&objs)?;
    }
    Ok(())
}

/// The name `verify` tries to create from inside a session (never the
/// filter's own: creating that would fail as a duplicate even where the
/// session had the right to change the filter).
pub const PROBE_TABLE: &str = "agent_sandbox_probe";

/// Tries to create an empty table: what a session must not be able to do.
/// Returns the errno of the refusal.
pub fn try_create_probe_table() -> Result<(), i32> {
    let t = filter::TableState { family: filter::FAMILY_IPV4, name: PROBE_TABLE.into(), flags: 0 };
    transact_objs(&[Obj::Table(&t)]).map_err(|e| e.errno.unwrap_or(libc::EIO))
}

/// One transaction on the set `set` (the DNS forwarder's updates of the
/// allowed set): `remove` then `add`, all or nothing, on `sock`.
pub(crate) fn update_set(sock: &mut Socket, set: &SetState, remove: &[ElementState], add: &[ElementState]) -> Result<(), NftError> {
    let mut objs = Vec::new();
    if !remove.is_empty() {
        objs.push(Obj::Elements { set, elements: remove, op: ElemOp::Remove });
    }
    if !add.is_empty() {
        objs.push(Obj::Elements { set, elements: add, op: ElemOp::Ensure });
    }
    if objs.is_empty() {
        return Ok(());
    }
    transact_on(sock, &objs)
}

/// The elements of one of the jail's sets (the seen set's, after the
/// session).
pub(crate) fn elements_of(set: &SetState) -> Result<Vec<ElementState>, NftError> {
    let mut sock = Socket::open()?;
    sock.seq += 1;
    let mut state = Ruleset::default();
    dump(&sock, &nftwire::elements_request(set, sock.seq), &mut state)?;
    Ok(state.elements)
}

fn transact_objs(objs: &[Obj<'_>]) -> Result<(), NftError> {
    let mut sock = Socket::open()?;
    transact_on(&mut sock, objs)
}

/// Sends one transaction and awaits its acknowledgements (only its own:
/// on a socket used before, a late answer to an earlier one is skipped).
fn transact_on(sock: &mut Socket, objs: &[Obj<'_>]) -> Result<(), NftError> {
    sock.seq = sock.seq.wrapping_add(1 << 16);
    let first = sock.seq;
    let (bytes, n) = nftwire::batch(objs, first);
    // The batch's own begin and end count too: a refusal of the whole
    // batch (EPERM without CAP_NET_ADMIN) is the begin message's.
    let ours = |seq: u32| seq.wrapping_sub(first) <= n + 1;
    let step = "installing the packet filter";
    sock.send(step, &bytes)?;
    let mut acked = 0;
    while acked < n {
        for reply in sock.receive(step)? {
            match reply {
                Reply::Ack { error: 0, seq } if ours(seq) => acked += 1,
                Reply::Ack { error, seq } if ours(seq) => {
                    let errno = -error;
                    let msg = std::io::Error::from_raw_os_error(errno).to_string();
                    return Err(NftError::new(step, Some(errno), msg));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Every table, chain, set (with its elements) and rule of every family
/// in the namespace.
pub(crate) fn read_back() -> Result<Ruleset, NftError> {
    let mut sock = Socket::open()?;
    let mut state = Ruleset::default();
    for what in [Dump::Tables, Dump::Chains, Dump::Sets, Dump::Rules] {
        sock.seq += 1;
        let req = nftwire::dump_request(what, sock.seq);
        dump(&sock, &req, &mut state)?;
    }
    for set in state.sets.clone() {
        sock.seq += 1;
        let req = nftwire::elements_request(&set, sock.seq);
        dump(&sock, &req, &mut state)?;
    }
    Ok(state)
}

const READ_BACK: &str = "reading the packet filter back";

fn dump(sock: &Socket, req: &[u8], state: &mut Ruleset) -> Result<(), NftError> {
    sock.send(READ_BACK, req)?;
    loop {
        for reply in sock.receive(READ_BACK)? {
            match reply {
                Reply::Done { .. } => return Ok(()),
                Reply::Ack { error, .. } if error != 0 => {
                    let errno = -error;
                    return Err(NftError::new(READ_BACK, Some(errno), std::io::Error::from_raw_os_error(errno).to_string()));
                }
                Reply::Table(t) => state.tables.push(t),
                Reply::Chain(c) => state.chains.push(c),
                Reply::Set(s) => state.sets.push(s),
                Reply::Elements(e) => state.elements.extend(e),
                Reply::Rule(r) => state.rules.push(r),
                Reply::Unknown { kind } => {
                    return Err(NftError::new(READ_BACK, None, format!("an nf_tables message of unknown type {kind:#x}")));
                }
                Reply::Ack { .. } => {}
            }
        }
    }
}
