//! The forwarder's loops on a current-thread runtime (one thread: the
//! process joined namespaces before making it): the session's questions
//! over UDP and TCP, each allowed one asked of the container's resolver
//! on a socket of its own from the dialer, and the launcher's request for
//! the report. Decisions are `plan::dns` and `plan::allowlist`'s; this
//! file moves bytes and updates the set.

use super::{Dialer, Sockets, Spec, DNS_PORT};
use crate::jail::plan::allowlist::{Held, Update};
use crate::jail::plan::dns::{self, Query};
use crate::jail::plan::filter::{self, ElementState, ALLOWED_SIZE};
use crate::jail::plan::report::Tally;
use crate::jail::run::holder::{self, Report, Step};
use crate::jail::run::nft;
use std::cell::RefCell;
use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::{AsRawFd, OwnedFd};
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// UDP questions waiting for the resolver at once; more are dropped (the
/// client asks again).
const MAX_PENDING: usize = 256;
const MAX_TCP: usize = 32;
/// A TCP client's silence ends its connection.
const TCP_IDLE: Duration = Duration::from_secs(10);
/// How long the resolver may take.
const UPSTREAM_WAIT: Duration = Duration::from_secs(5);
/// The largest message read (a TCP message's length is 16 bits anyway).
const MAX_MSG: usize = 65_535;
/// The largest question taken over UDP (a question is a few dozen bytes;
/// EDNS clients offer at most 4096 for the answer).
const MAX_QUERY: usize = 4096;
/// The largest answer read over UDP (more than any EDNS size clients
/// offer in practice); with `MAX_PENDING` it bounds what waiting costs.
const MAX_UDP_ANSWER: usize = 16 * 1024;

struct State {
    spec: Spec,
    dialer: Dialer,
    held: Held,
    tally: Tally,
    nft: nft::Socket,
    allowed: filter::SetState,
    started: Instant,
    pending: usize,
    tcp_open: usize,
}

type Shared = Rc<RefCell<State>>;

impl State {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn resolver(&self) -> SocketAddr {
        SocketAddr::from(SocketAddrV4::new(self.spec.resolver, DNS_PORT))
    }

    /// Refuses `query` (bytes `m`) when its name is not allowed: the
    /// refusal to send back, counted in the tally.
    fn refuse(&mut self, m: &[u8], query: &Query) -> Option<Vec<u8>> {
        let q = &query.question;
        if q.plain && q.qclass == 1 && self.spec.allowlist.allows(&q.name) {
            return None;
        }
        let now = self.now_ms();
        self.tally.refused(&q.name, now);
        Some(dns::refusal(m, query))
    }

    /// The answer `m` to `query`, its addresses in the allowed set first;
    /// SERVFAIL when they cannot be (the set is full, the kernel refused).
    fn admit(&mut self, m: Vec<u8>, query: &Query) -> Vec<u8> {
        let Ok(answer) = dns::parse_answer(&m, query) else { return dns::reply(&m, query, dns::SERVFAIL, false) };
        let now = self.now_ms();
        let grace = self.spec.grace.as_millis() as u64;
        let Some(up) = self.held.update(now, &answer.addrs, grace, ALLOWED_SIZE as usize) else {
            self.tally.set_full();
            return dns::reply(&m, query, dns::SERVFAIL, false);
        };
        if up.is_empty() {
            return m;
        }
        let t = Instant::now();
        match self.apply(&up) {
            Ok(()) => {
                tracing::debug!(target: "agent_sandbox::timing", "DNS forwarder: {} address(es) allowed in {:?}", up.add.len(), t.elapsed());
                self.held.applied(now, &up);
                m
            }
            Err(e) => {
                tracing::warn!("egress jail: the DNS forwarder could not allow {:?}: {}", up.add, e.message);
                if e.errno == Some(libc::ENFILE) || e.errno == Some(libc::ENOSPC) {
                    self.tally.set_full();
                }
                dns::reply(&m, query, dns::SERVFAIL, false)
            }
        }
    }

    /// One transaction; when a renewed element went away meanwhile (its
    /// removal fails), the additions alone.
    fn apply(&mut self, up: &Update) -> Result<(), nft::NftError> {
        let el = |a: &std::net::Ipv4Addr, t: Option<u64>| ElementState { timeout_ms: t, ..ElementState::new(&self.allowed, a.octets().to_vec(), false) };
        let remove: Vec<ElementState> = up.remove.iter().map(|a| el(a, None)).collect();
        let add: Vec<ElementState> = up.add.iter().map(|(a, t)| el(a, Some((*t).max(1)))).collect();
        match nft::update_set(&mut self.nft, &self.allowed, &remove, &add) {
            Err(e) if e.errno == Some(libc::ENOENT) && !remove.is_empty() => nft::update_set(&mut self.nft, &self.allowed, &[], &add),
            other => other,
        }
    }
}

/// A random question id (the kernel's generator; a clock-derived one if
/// it fails).
fn random_id() -> u16 {
    let mut b = [0u8; 2];
    // SAFETY: getrandom fills at most the 2 bytes of `b`.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n == 2 {
        u16::from_ne_bytes(b)
    } else {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos() as u16)
    }
}

/// Serves until the launcher asks for the report; returns the exit code.
pub(super) fn run(chan: &OwnedFd, socks: Sockets, spec: Spec) -> i32 {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build() else { return 1 };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let Sockets { udp, tcp, nft, dialer } = socks;
        let (Ok(udp), Ok(tcp)) = (tokio::net::UdpSocket::from_std(udp), tokio::net::TcpListener::from_std(tcp)) else {
            return 1;
        };
        let state = Rc::new(RefCell::new(State {
            spec,
            dialer,
            held: Held::default(),
            tally: Tally::default(),
            nft,
            allowed: filter::allowed_set(),
            started: Instant::now(),
            pending: 0,
            tcp_open: 0,
        }));
        tokio::task::spawn_local(clients(Rc::new(udp), state.clone()));
        tokio::task::spawn_local(accept(tcp, state.clone()));
        await_report(chan, &state).await
    })
}

/// The session's questions over UDP: refused at once, or asked.
async fn clients(udp: Rc<tokio::net::UdpSocket>, state: Shared) {
    let mut buf = vec![0u8; MAX_MSG];
    loop {
        let Ok((n, from)) = udp.recv_from(&mut buf).await else { continue };
        if n > MAX_QUERY {
            continue;
        }
        let m = buf[..n].to_vec();
        let Ok(query) = dns::parse_query(&m) else { continue };
        let refusal = state.borrow_mut().refuse(&m, &query);
        if let Some(r) = refusal {
            let _ = udp.send_to(&r, from).await;
            continue;
        }
        {
            let mut s = state.borrow_mut();
            if s.pending >= MAX_PENDING {
                continue;
            }
            s.pending += 1;
        }
        let (udp, st) = (udp.clone(), state.clone());
        tokio::task::spawn_local(async move {
            if let Ok(reply) = ask_udp(&st, m, &query).await {
                let _ = udp.send_to(&reply, from).await;
            }
            st.borrow_mut().pending -= 1;
        });
    }
}

/// Asks the resolver on a fresh socket with a random id: the admitted
/// answer, with the client's id back.
async fn ask_udp(state: &Shared, mut m: Vec<u8>, query: &Query) -> std::io::Result<Vec<u8>> {
    let (sock, to) = {
        let s = state.borrow();
        (s.dialer.udp()?, s.resolver())
    };
    sock.connect(to)?;
    sock.set_nonblocking(true)?;
    let sock = tokio::net::UdpSocket::from_std(sock)?;
    let id = random_id();
    m[..2].copy_from_slice(&id.to_be_bytes());
    sock.send(&m).await?;
    let mut buf = vec![0u8; MAX_UDP_ANSWER];
    let deadline = tokio::time::Instant::now() + UPSTREAM_WAIT;
    loop {
        let n = tokio::time::timeout_at(deadline, sock.recv(&mut buf)).await.map_err(|_| std::io::ErrorKind::TimedOut)??;
        // Only an answer with our id counts; anything else is ignored.
        if n >= 2 && buf[..2] == id.to_be_bytes() {
            let mut answer = buf[..n].to_vec();
            answer[..2].copy_from_slice(&query.id.to_be_bytes());
            return Ok(state.borrow_mut().admit(answer, query));
        }
    }
}

async fn accept(tcp: tokio::net::TcpListener, state: Shared) {
    loop {
        let Ok((conn, _)) = tcp.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        {
            let mut s = state.borrow_mut();
            if s.tcp_open >= MAX_TCP {
                continue;
            }
            s.tcp_open += 1;
        }
        let st = state.clone();
        tokio::task::spawn_local(async move {
            let _ = tcp_client(conn, &st).await;
            st.borrow_mut().tcp_open -= 1;
        });
    }
}

async fn read_msg(s: &mut tokio::net::TcpStream, wait: Duration) -> std::io::Result<Vec<u8>> {
    let len = tokio::time::timeout(wait, s.read_u16()).await.map_err(|_| std::io::ErrorKind::TimedOut)??;
    let mut m = vec![0u8; usize::from(len)];
    tokio::time::timeout(wait, s.read_exact(&mut m)).await.map_err(|_| std::io::ErrorKind::TimedOut)??;
    Ok(m)
}

async fn write_msg(s: &mut tokio::net::TcpStream, m: &[u8]) -> std::io::Result<()> {
    let m = &m[..m.len().min(MAX_MSG)];
    let mut out = (m.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(m);
    s.write_all(&out).await
}

/// One TCP client: its questions in turn, each allowed one over a TCP
/// connection to the resolver (made on the first, kept for the rest).
async fn tcp_client(mut conn: tokio::net::TcpStream, state: &Shared) -> std::io::Result<()> {
    let mut upstream: Option<tokio::net::TcpStream> = None;
    loop {
        let m = read_msg(&mut conn, TCP_IDLE).await?;
        let Ok(query) = dns::parse_query(&m) else { return Ok(()) };
        let refusal = state.borrow_mut().refuse(&m, &query);
        if let Some(r) = refusal {
            write_msg(&mut conn, &r).await?;
            continue;
        }
        if upstream.is_none() {
            upstream = Some(connect_upstream(state).await?);
        }
        let Some(up) = upstream.as_mut() else { return Ok(()) };
        write_msg(up, &m).await?;
        let answer = read_msg(up, UPSTREAM_WAIT).await?;
        if answer.get(..2) != m.get(..2) {
            return Ok(());
        }
        let reply = state.borrow_mut().admit(answer, &query);
        write_msg(&mut conn, &reply).await?;
    }
}

/// A TCP connection to the resolver, on a socket of the container's
/// network from the dialer.
async fn connect_upstream(state: &Shared) -> std::io::Result<tokio::net::TcpStream> {
    let (fd, to) = {
        let s = state.borrow();
        (s.dialer.tcp()?, s.resolver())
    };
    let stream = std::net::TcpStream::from(fd);
    stream.set_nonblocking(true)?;
    let sock = tokio::net::TcpSocket::from_std_stream(stream);
    tokio::time::timeout(UPSTREAM_WAIT, sock.connect(to)).await.map_err(|_| std::io::ErrorKind::TimedOut)?
}

/// Waits for `Step::Report` on the launcher's channel; sends the tally.
async fn await_report(chan: &OwnedFd, state: &Shared) -> i32 {
    let Ok(fd) = chan.try_clone() else { return 1 };
    if nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK)).is_err() {
        return 1;
    }
    // SAFETY: `fd` is an OwnedFd moved into the AsyncFd, so it stays open
    // and names the same socket for the AsyncFd's whole life.
    let Ok(afd) = (unsafe { tokio::io::unix::AsyncFd::register(fd) }) else { return 1 };
    loop {
        let Ok(mut guard) = afd.readable().await else { return 1 };
        let mut b = [0u8; 1];
        match nix::sys::socket::recv(afd.get_ref().as_raw_fd(), &mut b, nix::sys::socket::MsgFlags::empty()) {
            Ok(1) if b[0] == Step::Report as u8 => {
                let s = state.borrow();
                let tally = s.tally.at(s.now_ms());
                return i32::from(holder::report(chan, &Report::Names(tally)).is_err());
            }
            // The launcher is gone (or said something else): stop.
            Ok(_) => return 0,
            Err(nix::errno::Errno::EAGAIN) => guard.clear_ready(),
            Err(_) => return 1,
        }
    }
}
