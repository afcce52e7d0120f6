//! The test lab: namespaces from `lab.sh`, and the servers in them (TCP
//! banner servers, an echo server, a tiny DNS server), run as threads of
//! the test process that entered the lab's namespaces (a socket keeps the
//! namespace it was made in). `Lab` tears everything down on drop, also
//! when a test fails.

use nix::sched::{setns, CloneFlags};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub(crate) mod launch;
pub(crate) mod procs;

pub(crate) const GATEWAY: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
pub(crate) const CONTAINER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
pub(crate) const SUBNET_HOST: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);
pub(crate) const INTERNET: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 80);
pub(crate) const DNS_SERVER: Ipv4Addr = Ipv4Addr::new(10, 53, 0, 53);
pub(crate) const ALLOWED: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 7);
/// More "internet" hosts on the router (outside every blocked range,
/// reachable without allowDomains): the addresses of the lab's other
/// names.
pub(crate) const OTHER: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 81);
pub(crate) const EDGE: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 82);
pub(crate) const SHORT_LIVED: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 83);
pub(crate) const WILD: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 84);
/// An address no lab name resolves to (a literal IP's target).
pub(crate) const LITERAL: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 85);
/// `big.lab`'s addresses: more A records than a 512-byte UDP answer
/// holds, so resolvers ask again over TCP.
pub(crate) const BIG_FIRST: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 100);
pub(crate) const BIG_COUNT: u8 = 40;

/// One record of the lab's zone.
#[derive(Clone, Copy)]
pub(crate) enum Rr {
    A(Ipv4Addr),
    Cname(&'static str),
}

/// The names the DNS server answers: (name, TTL, record). `*.wild.lab`
/// answers for every name below wild.lab; `big.lab` has BIG_COUNT A
/// records from BIG_FIRST.
pub(crate) const ZONE: &[(&str, u32, Rr)] = &[
    ("internet.lab", 60, Rr::A(INTERNET)),
    ("other.lab", 60, Rr::A(OTHER)),
    ("alias.lab", 300, Rr::Cname("cdn.edge.lab")),
    ("cdn.edge.lab", 60, Rr::A(EDGE)),
    ("internal.lab", 60, Rr::A(Ipv4Addr::new(10, 1, 2, 3))),
    ("tointernal.lab", 60, Rr::Cname("internal.lab")),
    ("metadata.lab", 60, Rr::A(Ipv4Addr::new(169, 254, 169, 254))),
    ("ttl0.lab", 0, Rr::A(SHORT_LIVED)),
    ("*.wild.lab", 60, Rr::A(WILD)),
];

/// The router's addresses beyond `ROUTER_ADDRS`: the other names' hosts.
pub(crate) fn more_router_addrs() -> Vec<Ipv4Addr> {
    let mut v = vec![OTHER, EDGE, SHORT_LIVED, WILD, LITERAL];
    v.extend((0..BIG_COUNT).map(|i| Ipv4Addr::from(u32::from(BIG_FIRST) + u32::from(i))));
    v
}

/// Addresses on the router's loopback: (probe name, address). Every one
/// but `internet` and `allowed` must be unreachable from the session.
pub(crate) const ROUTER_ADDRS: &[(&str, Ipv4Addr)] = &[
    ("internet", INTERNET),
    ("allowed", ALLOWED),
    ("rfc1918_10", Ipv4Addr::new(10, 1, 2, 3)),
    ("vpn_10_8", Ipv4Addr::new(10, 8, 0, 5)),
    ("dns_server_direct", DNS_SERVER),
    ("rfc1918_172", Ipv4Addr::new(172, 16, 5, 5)),
    ("rfc1918_192", Ipv4Addr::new(192, 168, 7, 7)),
    ("cgnat", Ipv4Addr::new(100, 64, 1, 1)),
    ("metadata", Ipv4Addr::new(169, 254, 169, 254)),
    ("azure_wireserver", Ipv4Addr::new(168, 63, 129, 16)),
    // The sample addresses of `agent-sandbox verify`'s jail checks, so a
    // verify run in the lab has real hosts to (not) reach.
    ("verify_10", Ipv4Addr::new(10, 11, 12, 13)),
    ("verify_172", Ipv4Addr::new(172, 16, 0, 10)),
    ("verify_192", Ipv4Addr::new(192, 168, 1, 1)),
    ("verify_cgnat", Ipv4Addr::new(100, 64, 0, 1)),
];

/// Another address of the "devcontainer" itself (on its loopback), where
/// its all-addresses service also answers.
pub(crate) const CONTAINER_OTHER: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// Addresses of the container outside every fixed range: on its loopback
/// and on another interface (kipvs0); its all-addresses service answers
/// on both.
pub(crate) const CONTAINER_EXTRA: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 7);
pub(crate) const CONTAINER_KIPVS: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 9);
/// Hosts on the far side of the container's VPN-like link (vpn0), in
/// public-looking ranges: behind a main-table route through the VPN's
/// gateway, behind table 100 (`to` rule), behind table 101 (`ipproto tcp`
/// rule), and behind the route a test adds after the launch.
pub(crate) const FAR: &[(&str, Ipv4Addr)] =
    &[("vpn_route", Ipv4Addr::new(203, 0, 113, 10)), ("table_to_rule", Ipv4Addr::new(198, 19, 7, 10)), ("table_ipproto_rule", Ipv4Addr::new(198, 19, 8, 10))];
pub(crate) const LATER_NET: &str = "198.19.12.0/24";
pub(crate) const LATER_FAR: Ipv4Addr = Ipv4Addr::new(198, 19, 12, 10);
/// The UDP port the sinks listen on (discard), and the multicast groups
/// (mDNS, SSDP) the router's sinks join.
pub(crate) const SINK_PORT: u16 = 9;
pub(crate) const GROUPS: &[(Ipv4Addr, u16)] = &[(Ipv4Addr::new(224, 0, 0, 251), 5353), (Ipv4Addr::new(239, 255, 255, 250), 1900)];

pub(crate) const BANNER_PORT: u16 = 80;
/// A router service that keeps its connection open, sending a line every
/// `TICK` (`TICKS` in all): a long download's shape.
pub(crate) const TICKER_PORT: u16 = 81;
pub(crate) const TICKS: u32 = 15;
/// A router service that sends zeros as fast as it can until the peer
/// closes (the throughput of allowed traffic, over a window the reader
/// chooses).
pub(crate) const BULK_PORT: u16 = 82;
pub(crate) const TICK: Duration = Duration::from_millis(200);
/// Container ports: the local-port relay's echo target, a loopback-only
/// service and a service on all addresses (both must stay unreachable).
pub(crate) const LOCAL_PORT: u16 = 18080;
pub(crate) const LOOPBACK_ONLY_PORT: u16 = 18081;
pub(crate) const ALL_ADDRS_PORT: u16 = 18082;
pub(crate) const CALLBACK_PORT: u16 = 1455;

pub(crate) struct Lab {
    pub tag: String,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// What the UDP sinks received: "NAMESPACE PORT PAYLOAD".
    arrivals: Arc<std::sync::Mutex<Vec<String>>>,
}

pub(crate) fn script(name: &str) -> PathBuf {
    super::root().join("tests/support/lab").join(name)
}

impl Lab {
    /// Builds the lab and starts its servers; panics (failing the test)
    /// with the reason when it cannot.
    pub(crate) fn up() -> Lab {
        let tag = format!("{}{}", std::process::id() % 100_000, next_id());
        let mut lab = Lab { tag, stop: Arc::new(AtomicBool::new(false)), threads: vec![], arrivals: Default::default() };
        let addrs: Vec<String> = ROUTER_ADDRS.iter().map(|(_, a)| *a).chain(more_router_addrs()).map(|a| a.to_string()).collect();
        let out = std::process::Command::new("sh")
            .arg(script("lab.sh"))
            .args(["up", &lab.tag])
            .args(&addrs)
            .output()
            .expect("running tests/support/lab/lab.sh (needs sh and iproute2)");
        assert!(out.status.success(), "lab.sh up failed (root and iproute2 needed): {}", String::from_utf8_lossy(&out.stderr));
        lab.serve(&lab.router(), ([0, 0, 0, 0], BANNER_PORT).into(), Server::Banner);
        lab.serve(&lab.router(), ([0, 0, 0, 0], TICKER_PORT).into(), Server::Ticker);
        lab.serve(&lab.router(), ([0, 0, 0, 0], BULK_PORT).into(), Server::Bulk);
        lab.serve_dns();
        lab.serve_dns_tcp();
        let dc = lab.container();
        lab.serve(&dc, ([127, 0, 0, 1], LOCAL_PORT).into(), Server::Echo);
        lab.serve(&dc, ([127, 0, 0, 1], LOOPBACK_ONLY_PORT).into(), Server::Fixed("container-loopback-secret"));
        lab.serve(&dc, ([0, 0, 0, 0], ALL_ADDRS_PORT).into(), Server::Fixed("container-service-secret"));
        let rt = lab.router();
        lab.sink(&rt, SINK_PORT, None);
        for (group, port) in GROUPS {
            lab.sink(&rt, *port, Some(*group));
        }
        lab.sink(&dc, SINK_PORT, None);
        let vp = lab.far();
        lab.serve(&vp, ([0, 0, 0, 0], BANNER_PORT).into(), Server::Banner);
        lab.sink(&vp, SINK_PORT, None);
        lab
    }

    /// Runs `ip -n CONTAINER ARGS...` (a change of the container's network).
    pub(crate) fn ip_in_container(&self, args: &[&str]) {
        let out = std::process::Command::new("ip").arg("-n").arg(self.container()).args(args).output().expect("running ip");
        assert!(out.status.success(), "ip {args:?} in the lab's container: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// A UDP sink on 0.0.0.0:`port` in `ns` (joined to `group` on the
    /// router's interface), recording every datagram.
    fn sink(&mut self, ns: &str, port: u16, group: Option<Ipv4Addr>) {
        let (stop, seen, ns) = (self.stop.clone(), self.arrivals.clone(), ns.to_string());
        let (tx, rx) = std::sync::mpsc::channel();
        self.threads.push(std::thread::spawn(move || {
            enter(&ns);
            let sock = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, port)).expect("binding a lab UDP sink");
            if let Some(g) = group {
                sock.join_multicast_v4(&g, &GATEWAY).expect("joining a multicast group in the lab");
            }
            sock.set_read_timeout(Some(Duration::from_millis(50))).ok();
            tx.send(()).ok();
            let mut buf = [0u8; 2048];
            while !stop.load(Ordering::Relaxed) {
                if let Ok((n, _)) = sock.recv_from(&mut buf) {
                    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                    seen.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{ns} {port} {text}"));
                }
            }
        }));
        rx.recv_timeout(Duration::from_secs(5)).expect("lab UDP sink did not start");
    }

    /// Waits until whatever a session sent before it ended has reached
    /// the sinks, instead of for a fixed time a slow machine can outlast.
    /// Call it once the sender is gone (the launcher exited, so its pasta
    /// sent everything it was handed). From the container's namespace,
    /// where pasta sent from, one datagram goes along each of the paths a
    /// leak would take (the router's link and its multicast groups, the
    /// VPN link to the far side, the container's own addresses, and
    /// `extra`); each path and each sink's socket deliver in order, so once
    /// every one of them has arrived, so has anything sent earlier. The
    /// datagrams are then dropped from the arrivals.
    pub(crate) fn settle(&self, extra: &[SocketAddrV4]) {
        let nonce = format!("SETTLE {}-{}", std::process::id(), next_id());
        let mut paths = vec![SocketAddrV4::new(GATEWAY, SINK_PORT), SocketAddrV4::new(FAR[0].1, SINK_PORT), SocketAddrV4::new(Ipv4Addr::LOCALHOST, SINK_PORT)];
        paths.extend(GROUPS.iter().map(|(g, p)| SocketAddrV4::new(*g, *p)));
        paths.extend(extra);
        let tagged: Vec<(SocketAddrV4, String)> = paths.iter().enumerate().map(|(i, a)| (*a, format!("{nonce} {i}"))).collect();
        let (ns, send) = (self.container(), tagged.clone());
        std::thread::spawn(move || {
            enter(&ns);
            let sock = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).expect("a socket in the lab's container");
            for (to, text) in &send {
                sock.send_to(text.as_bytes(), to).unwrap_or_else(|e| panic!("sending to {to} from the lab's container: {e}"));
            }
        })
        .join()
        .expect("the settling datagrams were sent");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let seen = self.arrivals();
            let missing: Vec<&SocketAddrV4> = tagged.iter().filter(|(_, t)| !seen.iter().any(|a| a.ends_with(t.as_str()))).map(|(a, _)| a).collect();
            if missing.is_empty() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "the lab's sinks did not hear from {missing:?} within 10 s: {seen:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
        self.arrivals.lock().unwrap_or_else(|e| e.into_inner()).retain(|a| !a.contains(&nonce));
    }

    pub(crate) fn clear_arrivals(&self) {
        self.arrivals.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Every datagram the sinks received so far.
    pub(crate) fn arrivals(&self) -> Vec<String> {
        self.arrivals.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn container(&self) -> String {
        format!("jdc{}", self.tag)
    }

    pub(crate) fn router(&self) -> String {
        format!("jrt{}", self.tag)
    }

    /// The far side of the container's VPN-like link.
    pub(crate) fn far(&self) -> String {
        format!("jvp{}", self.tag)
    }

    /// A TCP server in namespace `ns`.
    pub(crate) fn serve(&mut self, ns: &str, addr: SocketAddr, kind: Server) {
        let stop = self.stop.clone();
        let ns = ns.to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        self.threads.push(std::thread::spawn(move || {
            enter(&ns);
            let l = TcpListener::bind(addr).expect("binding a lab listener");
            l.set_nonblocking(true).expect("nonblocking");
            tx.send(()).ok();
            while !stop.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((s, _)) => {
                        std::thread::spawn(move || kind.handle(s));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }));
        rx.recv_timeout(Duration::from_secs(5)).expect("lab listener did not start");
    }

    fn serve_dns(&mut self) {
        let stop = self.stop.clone();
        let ns = self.router();
        let (tx, rx) = std::sync::mpsc::channel();
        self.threads.push(std::thread::spawn(move || {
            enter(&ns);
            let sock = UdpSocket::bind((DNS_SERVER, 53)).expect("binding the lab DNS server");
            sock.set_read_timeout(Some(Duration::from_millis(50))).ok();
            tx.send(()).ok();
            let mut buf = [0u8; 512];
            while !stop.load(Ordering::Relaxed) {
                if let Ok((n, from)) = sock.recv_from(&mut buf) {
                    if let Some(reply) = dns_reply(&buf[..n], false) {
                        let _ = sock.send_to(&reply, from);
                    }
                }
            }
        }));
        rx.recv_timeout(Duration::from_secs(5)).expect("lab DNS server did not start");
    }

    /// The same zone over TCP (length-prefixed messages, RFC 1035 4.2.2).
    fn serve_dns_tcp(&mut self) {
        let stop = self.stop.clone();
        let ns = self.router();
        let (tx, rx) = std::sync::mpsc::channel();
        self.threads.push(std::thread::spawn(move || {
            enter(&ns);
            let l = TcpListener::bind((DNS_SERVER, 53)).expect("binding the lab DNS server (TCP)");
            l.set_nonblocking(true).expect("nonblocking");
            tx.send(()).ok();
            while !stop.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((mut s, _)) => {
                        std::thread::spawn(move || {
                            let _ = s.set_nonblocking(false);
                            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                            let mut len = [0u8; 2];
                            while s.read_exact(&mut len).is_ok() {
                                let mut q = vec![0u8; usize::from(u16::from_be_bytes(len))];
                                if s.read_exact(&mut q).is_err() {
                                    break;
                                }
                                let Some(r) = dns_reply(&q, true) else { break };
                                let mut out = (r.len() as u16).to_be_bytes().to_vec();
                                out.extend_from_slice(&r);
                                if s.write_all(&out).is_err() {
                                    break;
                                }
                            }
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }));
        rx.recv_timeout(Duration::from_secs(5)).expect("lab DNS server (TCP) did not start");
    }

    /// Connects from inside namespace `ns` (on a short-lived thread).
    pub(crate) fn connect_from(&self, ns: &str, addr: SocketAddr) -> std::io::Result<String> {
        let ns = ns.to_string();
        std::thread::spawn(move || {
            enter(&ns);
            let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(3))?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            let mut out = String::new();
            s.read_to_string(&mut out)?;
            Ok(out)
        })
        .join()
        .expect("connect thread panicked")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let _ = std::process::Command::new("sh").arg(script("lab.sh")).args(["down", &self.tag]).status();
    }
}

/// A root-owned directory holding Debian 13's pasta (2025-05) for
/// `HostProbe.pasta_dirs`: the real program, run by Debian 13's own C
/// library (`lab/debian13-pasta.sh`, which fetches both once from Debian's
/// archive). With it the lab tests run against both supported pastas on
/// this Debian 12 machine.
pub(crate) fn debian13_pasta() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let cache = super::root().join("target/tmp/debian13-pasta");
        // One fixed place (rewritten by each run), so no run leaves one behind.
        let dir = PathBuf::from("/run/agent-sandbox-jailtest-debian13");
        let out = std::process::Command::new("sh").arg(script("debian13-pasta.sh")).arg(&cache).arg(&dir).output().expect("running lab/debian13-pasta.sh");
        assert!(
            out.status.success(),
            "fetching Debian 13's pasta failed (apt-get download from deb.debian.org, dpkg-deb): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let version = std::process::Command::new(dir.join("pasta")).arg("--version").output().expect("running Debian 13's pasta");
        let text = String::from_utf8_lossy(&version.stdout).into_owned() + &String::from_utf8_lossy(&version.stderr);
        assert!(version.status.success(), "Debian 13's pasta does not run here: {text}");
        dir
    })
    .clone()
}

fn next_id() -> u32 {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Moves the calling thread into the lab namespace `ns`.
pub(crate) fn enter(ns: &str) {
    let f = std::fs::File::open(format!("/run/netns/{ns}")).expect("opening the lab namespace");
    setns(f, CloneFlags::CLONE_NEWNET).expect("entering the lab namespace");
}

#[derive(Clone, Copy)]
pub(crate) enum Server {
    /// Sends "lab <the address it was reached on>".
    Banner,
    /// Sends a fixed text.
    Fixed(&'static str),
    /// Echoes everything.
    Echo,
    /// "tick N" lines, `TICKS` of them, `TICK` apart.
    Ticker,
    /// Zeros until the peer closes.
    Bulk,
}

impl Server {
    fn handle(self, mut s: TcpStream) {
        let _ = s.set_nonblocking(false);
        match self {
            Server::Banner => {
                let local = s.local_addr().map(|a| a.ip().to_string()).unwrap_or_default();
                let _ = writeln!(s, "lab {local}");
            }
            Server::Fixed(text) => {
                let _ = writeln!(s, "{text}");
            }
            Server::Bulk => {
                let chunk = vec![0u8; 1 << 16];
                while s.write_all(&chunk).is_ok() {}
            }
            Server::Ticker => {
                for i in 0..TICKS {
                    if writeln!(s, "tick {i}").is_err() {
                        return;
                    }
                    std::thread::sleep(TICK);
                }
            }
            Server::Echo => {
                let mut r = match s.try_clone() {
                    Ok(r) => r,
                    Err(_) => return,
                };
                let _ = std::io::copy(&mut r, &mut s);
            }
        }
    }
}

/// The records of `name` in the zone (a wildcard's for the names below
/// it; big.lab's many).
fn lookup(name: &str) -> Vec<(u32, Rr)> {
    if name == "big.lab" {
        return (0..BIG_COUNT).map(|i| (60, Rr::A(Ipv4Addr::from(u32::from(BIG_FIRST) + u32::from(i))))).collect();
    }
    let exact: Vec<(u32, Rr)> = ZONE.iter().filter(|(n, _, _)| *n == name).map(|(_, t, r)| (*t, *r)).collect();
    if !exact.is_empty() {
        return exact;
    }
    ZONE.iter().filter(|(n, _, _)| n.strip_prefix('*').is_some_and(|suffix| name.ends_with(suffix))).map(|(_, t, r)| (*t, *r)).collect()
}

fn wire(name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in name.split('.') {
        v.push(l.len() as u8);
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

/// An answer to a DNS query: for type A, the CNAME chain from the name
/// and the A records at its end; NOERROR without answers for other types
/// of a known name; NXDOMAIN otherwise. Over UDP an answer longer than
/// 512 bytes is cut to its question, with TC set.
pub(crate) fn dns_reply(q: &[u8], tcp: bool) -> Option<Vec<u8>> {
    if q.len() < 12 {
        return None;
    }
    let mut i = 12;
    let mut labels = Vec::new();
    while *q.get(i)? != 0 {
        let len = usize::from(q[i]);
        labels.push(String::from_utf8_lossy(q.get(i + 1..i + 1 + len)?).to_lowercase());
        i += 1 + len;
    }
    let qtype = u16::from_be_bytes([*q.get(i + 1)?, *q.get(i + 2)?]);
    let question_end = i + 5;
    let mut name = labels.join(".");
    let known = !lookup(&name).is_empty();
    let mut r = q.get(..question_end)?.to_vec();
    r[2] = 0x81 | (q[2] & 0x01); // QR, opcode 0, RD copied
    r[3] = if known { 0x80 } else { 0x83 }; // RA, NOERROR / NXDOMAIN
    r[4..12].copy_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    let mut answers: Vec<Vec<u8>> = Vec::new();
    let mut owner = vec![0xc0, 0x0c];
    for _ in 0..8 {
        if qtype != 1 {
            break;
        }
        let recs = lookup(&name);
        let mut next = None;
        for (ttl, rr) in recs {
            let (rtype, data) = match rr {
                Rr::A(a) => (1u16, a.octets().to_vec()),
                Rr::Cname(t) => {
                    next = Some(t.to_string());
                    (5u16, wire(t))
                }
            };
            let mut rec = owner.clone();
            rec.extend_from_slice(&rtype.to_be_bytes());
            rec.extend_from_slice(&[0, 1]);
            rec.extend_from_slice(&ttl.to_be_bytes());
            rec.extend_from_slice(&(data.len() as u16).to_be_bytes());
            rec.extend_from_slice(&data);
            answers.push(rec);
        }
        match next {
            Some(t) => {
                owner = wire(&t);
                name = t;
            }
            None => break,
        }
    }
    let body: usize = answers.iter().map(Vec::len).sum();
    if !tcp && r.len() + body > 512 {
        r[2] |= 0x02; // TC
        return Some(r);
    }
    r[6..8].copy_from_slice(&(answers.len() as u16).to_be_bytes());
    answers.iter().for_each(|a| r.extend_from_slice(a));
    Some(r)
}
