//! Egress-jail checks (docs/jail.md), by behaviour: a connection to an address
//! of each blocked range is refused by the local stack at once; routes
//! cannot be changed (also from a new user namespace); DNS answers only
//! through the jail's forwarder; the container's loopback and the host's
//! resolvers are out of reach; nothing is forwarded inwards; IPv6 is closed;
//! what the container routes other than by its default route (other
//! gateways, other tables, policy rules' targets) and its own addresses
//! are refused; and the second layer: a socket that names its interface,
//! multicast and broadcast still cannot send to a blocked destination, and
//! the packet filter cannot be changed.

use super::sys::{self, in_child, route_add, tcp_connect, Reach, NO, OK};
use super::Ctx;
use crate::egress;
use crate::spec::JailSpec;
use crate::Outcome;
use nix::errno::Errno;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::Duration;

const FAST: Duration = Duration::from_millis(1500);

fn jail(c: &Ctx) -> Result<&JailSpec, Outcome> {
    c.spec.jail.as_ref().ok_or_else(|| Outcome::skip(crate::JAIL_OFF))
}

/// Fails unless a connection to `ip` is refused before any packet leaves.
/// EHOSTUNREACH later than "at once" is the filter's reject all the same
/// (pasta never answers so): under a masked /proc the kernel's limit on
/// ICMP errors stays, and past its burst a reject waits for the SYN's
/// retransmission (docs/jail.md).
fn refused_fast(ip: IpAddr) -> Result<(), String> {
    match tcp_connect(SocketAddr::new(ip, 443), FAST) {
        Reach::Blocked | Reach::Failed(Errno::EHOSTUNREACH) => Ok(()),
        Reach::Connected(_) => Err(format!("{ip}: connected")),
        Reach::Failed(e) => Err(format!("{ip}: packets left the jail ({e})")),
        Reach::TimedOut => Err(format!("{ip}: no refusal within {} ms", FAST.as_millis())),
    }
}

pub(crate) fn blocked(c: &Ctx, ip: [u8; 4]) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    Outcome::from_problems(refused_fast(IpAddr::from(ip)).err().into_iter().collect())
}

pub(crate) fn own_netns(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    let mut bad = Vec::new();
    if sys::ns_inode("self", "net") == c.spec.outer_ns.get("net").copied() {
        bad.push("the network namespace is the launcher's".to_string());
    }
    // NS_GET_USERNS: the user namespace that owns our network namespace
    // must not be ours (it must be an ancestor we hold no capability in).
    match std::fs::File::open("/proc/self/ns/net") {
        Ok(f) => {
            use std::os::fd::AsRawFd;
            const NS_GET_USERNS: libc::c_ulong = 0xb701;
            // SAFETY: NS_GET_USERNS on a namespace descriptor returns a new descriptor or -1.
            let owner = unsafe { libc::ioctl(f.as_raw_fd(), NS_GET_USERNS as _) };
            if owner >= 0 {
                // SAFETY: a new descriptor owned only here.
                let owner = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(owner) };
                let ino = std::fs::File::from(owner).metadata().map(|m| std::os::unix::fs::MetadataExt::ino(&m)).ok();
                if ino.is_some() && ino == sys::ns_inode("self", "user") {
                    bad.push("the session's own user namespace owns its network namespace".into());
                }
            }
        }
        Err(e) => bad.push(format!("/proc/self/ns/net: {e}")),
    }
    Outcome::from_problems(bad)
}

/// A host address of `net/prefix` that is neither the gateway nor ours.
fn sample_in(net: Ipv4Addr, prefix: u8, avoid: &[Ipv4Addr]) -> Option<Ipv4Addr> {
    let base = u32::from(net);
    let size = if prefix >= 32 { 1 } else { 1u64 << (32 - prefix) };
    let candidates = (1..size.min(12)).chain([size.saturating_sub(2)]);
    candidates.map(|o| Ipv4Addr::from(base.wrapping_add(o as u32))).find(|a| !avoid.contains(a))
}

fn own_addrs() -> Vec<Ipv4Addr> {
    let mut v: Vec<Ipv4Addr> =
        nix::ifaddrs::getifaddrs().map(|it| it.filter_map(|i| i.address.and_then(|a| a.as_sockaddr_in().map(|s| s.ip()))).collect()).unwrap_or_default();
    v.extend(default_gateway());
    v
}

/// The default route's gateway from /proc/net/route.
fn default_gateway() -> Option<Ipv4Addr> {
    crate::jail::default_route_in(&std::fs::read_to_string("/proc/net/route").ok()?)
}

pub(crate) fn connected_subnets(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let avoid = own_addrs();
    let mut bad = Vec::new();
    for (net, prefix) in &j.outer_connected {
        if let Some(a) = sample_in(*net, *prefix, &avoid) {
            bad.extend(refused_fast(IpAddr::V4(a)).err());
        }
    }
    if j.outer_connected.is_empty() {
        return Outcome::pass_note("the container has no connected subnet");
    }
    Outcome::from_problems(bad)
}

/// What a sample of a container destination must not be: the jail's own
/// addresses (the session's, not the container's) and gateway, the
/// forwarder, an allowIp (the user's explicit choice).
fn not_sampled(j: &JailSpec) -> Vec<Ipv4Addr> {
    let mut avoid = own_addrs();
    avoid.extend(j.nameservers.iter().copied());
    avoid.extend(j.allow_ip.iter().copied());
    avoid
}

fn sampled_note(passed: usize, total: usize, what: &str) -> Option<String> {
    (total > passed).then(|| format!("{passed} of the container's {total} {what} sampled"))
}

/// A sample address of every container route that is not a default route
/// (another gateway, another table, the local table, a policy rule's
/// target) is refused at once.
pub(crate) fn container_routes(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    if j.container_routes.is_empty() {
        return Outcome::pass_note("the container routes nothing but its default route and connected subnets");
    }
    let avoid = not_sampled(j);
    let bad: Vec<String> = j
        .container_routes
        .iter()
        .filter_map(|(net, prefix)| sample_in(*net, *prefix, &avoid).map(|a| (a, *net, *prefix)))
        .filter_map(|(a, net, prefix)| refused_fast(IpAddr::V4(a)).err().map(|e| format!("{e} (the container routes {net}/{prefix})")))
        .collect();
    with_note(Outcome::from_problems(bad), sampled_note(j.container_routes.len(), j.container_total.0, "routes"))
}

/// Every address of the container (but the jail's own, which pasta gave
/// the session) is refused at once: a service of the container bound to
/// all addresses must not be reachable through another of them.
pub(crate) fn container_addrs(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let avoid = not_sampled(j);
    let targets: Vec<Ipv4Addr> = j.container_addrs.iter().copied().filter(|a| !avoid.contains(a)).collect();
    if targets.is_empty() {
        return Outcome::pass_note("the container has no address besides the one the jail shares");
    }
    let bad: Vec<String> = targets.iter().filter_map(|a| refused_fast(IpAddr::V4(*a)).err().map(|e| format!("{e} (an address of the container)"))).collect();
    with_note(Outcome::from_problems(bad), sampled_note(j.container_addrs.len(), j.container_total.1, "addresses"))
}

fn with_note(o: Outcome, note: Option<String>) -> Outcome {
    match note {
        Some(n) if o.status == crate::Status::Pass => Outcome::pass_note(n),
        _ => o,
    }
}

/// A harmless route (TEST-NET-3) nobody else uses.
const PROBE_ROUTE: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 201);

fn route_refused(r: Result<(), Errno>) -> Outcome {
    match r {
        Err(Errno::EPERM | Errno::EACCES) => Outcome::pass(),
        Err(e) => Outcome::fail(format!("adding a route failed with {e}, not a permission refusal")),
        Ok(()) => Outcome::fail(format!("added (and removed) a route to {PROBE_ROUTE}")),
    }
}

pub(crate) fn routes_locked(_c: &Ctx) -> Outcome {
    route_refused(route_add(PROBE_ROUTE))
}

pub(crate) fn routes_locked_new_userns(_c: &Ctx) -> Outcome {
    refused_from_a_new_userns(|| route_add(PROBE_ROUTE), "the session's routes")
}

fn resolv_conf() -> (Vec<IpAddr>, Vec<String>) {
    let text = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    let mut ns = Vec::new();
    let mut other = Vec::new();
    for l in text.lines().map(str::trim) {
        if let Some(a) = l.strip_prefix("nameserver") {
            ns.extend(a.trim().parse::<IpAddr>().ok());
        } else if !l.is_empty() && !l.starts_with('#') && !l.starts_with(';') {
            other.push(l.to_string());
        }
    }
    (ns, other)
}

pub(crate) fn dns_forwarder_only(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let (ns, other) = resolv_conf();
    let want: Vec<IpAddr> = j.nameservers.iter().map(|a| IpAddr::V4(*a)).collect();
    let mut bad = Vec::new();
    if ns != want || ns.is_empty() {
        bad.push(format!("nameservers are {ns:?}, expected only the forwarder {want:?}"));
    }
    bad.extend(ns.iter().filter(|a| j.outer_resolvers.contains(a)).map(|a| format!("the host's resolver {a} is named")));
    bad.extend(j.kept_lines.iter().filter(|l| !other.contains(l)).map(|l| format!("the host's `{l}` line was dropped")));
    Outcome::from_problems(bad)
}

/// A query for `example.com. A`; true when any answer with our id returns.
fn dns_answers(server: IpAddr, timeout: Duration) -> bool {
    let bind = if server.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
    let Ok(sock) = UdpSocket::bind(bind) else { return false };
    if sock.connect(SocketAddr::new(server, 53)).is_err() || sock.set_read_timeout(Some(timeout)).is_err() {
        return false;
    }
    let mut q = vec![0x5a, 0x17, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    q.extend_from_slice(b"\x07example\x03com\x00\x00\x01\x00\x01");
    if sock.send(&q).is_err() {
        return false;
    }
    let mut buf = [0u8; 512];
    matches!(sock.recv(&mut buf), Ok(n) if n >= 12 && buf[0] == 0x5a && buf[1] == 0x17 && buf[2] & 0x80 != 0)
}

pub(crate) fn dns_resolves(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    let (ns, _) = resolv_conf();
    let Some(server) = ns.first() else { return Outcome::fail("no nameserver in /etc/resolv.conf") };
    if (0..2).any(|_| dns_answers(*server, Duration::from_secs(3))) {
        Outcome::pass()
    } else {
        Outcome::fail(format!("no DNS answer from the forwarder {server}"))
    }
}

pub(crate) fn host_resolvers_unreachable(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let forwarders: Vec<IpAddr> = j.nameservers.iter().map(|a| IpAddr::V4(*a)).collect();
    let bad: Vec<String> = j
        .outer_resolvers
        .iter()
        .filter(|r| !forwarders.contains(r) && dns_answers(**r, FAST))
        .map(|r| format!("the host's resolver {r} answers directly"))
        .collect();
    Outcome::from_problems(bad)
}

/// Whether a connection to `ip:port` reaches the canary (which greets
/// with the nonce).
fn reaches_canary(ip: IpAddr, port: u16, nonce: &str) -> bool {
    match tcp_connect(SocketAddr::new(ip, port), FAST) {
        Reach::Connected(fd) => String::from_utf8_lossy(&sys::read_some(&fd, FAST)).contains(nonce),
        _ => false,
    }
}

pub(crate) fn container_loopback(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    if reaches_canary(IpAddr::V4(Ipv4Addr::LOCALHOST), c.spec.canary_port, &crate::canary_secret(&c.spec.nonce)) {
        return Outcome::fail(format!("127.0.0.1:{} reached the container's loopback", c.spec.canary_port));
    }
    Outcome::pass()
}

pub(crate) fn gateway_not_host_loopback(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    let Some(gw) = default_gateway() else { return Outcome::pass_note("no default route") };
    if reaches_canary(IpAddr::V4(gw), c.spec.canary_port, &crate::canary_secret(&c.spec.nonce)) {
        return Outcome::fail(format!("the gateway {gw} is mapped to the container's loopback"));
    }
    Outcome::pass()
}

/// Listens on all addresses, asks the launcher to connect to that port on
/// the container's loopback, and fails if the connection arrives.
pub(crate) fn no_inbound_forwarding(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    let Ok(l) = std::net::TcpListener::bind("0.0.0.0:0") else { return Outcome::fail("cannot listen") };
    let Ok(port) = l.local_addr().map(|a| a.port()) else { return Outcome::fail("no local port") };
    crate::protocol::request_connect(port);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&l);
    if sys::poll_one(fd, libc::POLLIN, Duration::from_secs(2)) {
        return Outcome::fail(format!("a connection to the container's 127.0.0.1:{port} reached the session"));
    }
    Outcome::pass()
}

pub(crate) fn ipv6_closed(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let mut targets: Vec<Ipv6Addr> = ["fd00::1", "fe80::1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "64:ff9b::a00:1"]
        .iter()
        .filter_map(|s| s.parse().ok())
        .collect();
    targets.extend(j.outer_v6.iter().copied());
    let bad: Vec<String> = targets.into_iter().filter_map(|a| refused_fast(IpAddr::V6(a)).err()).collect();
    Outcome::from_problems(bad)
}

/// Each allowIp address must be routed: a UDP connect (a route lookup, no
/// packet sent) succeeds.
pub(crate) fn allow_ip_routed(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    if j.allow_ip.is_empty() {
        return Outcome::pass_note("no allowIp configured");
    }
    let bad: Vec<String> =
        j.allow_ip.iter().filter(|a| UdpSocket::bind("0.0.0.0:0").and_then(|s| s.connect((**a, 53))).is_err()).map(|a| format!("{a} has no route")).collect();
    Outcome::from_problems(bad)
}

// ------------------------------------------------ the second layer (filter)

/// The jail's interface, as the holder names it.
const IFNAME: &str = crate::jail::JAIL_IFNAME;

/// What a datagram to a blocked address may meet: the filter's reject
/// (EPERM: it also drops the packet) or a blocked route (EINVAL blackhole, EHOSTUNREACH/ENETUNREACH
/// unreachable). Anything else is not the jail's doing.
fn jail_refusal(e: Errno) -> bool {
    matches!(e, Errno::EPERM | Errno::EINVAL | Errno::EHOSTUNREACH | Errno::ENETUNREACH)
}

/// The jail's own IPv4 address and prefix on its interface.
fn jail_subnet() -> Option<(Ipv4Addr, u8)> {
    let it = nix::ifaddrs::getifaddrs().ok()?;
    it.filter(|i| i.interface_name == IFNAME).find_map(|i| {
        let addr = i.address.and_then(|a| a.as_sockaddr_in().map(|s| s.ip()))?;
        let mask = i.netmask.and_then(|a| a.as_sockaddr_in().map(|s| s.ip()))?;
        Some((addr, u32::from(mask).count_ones() as u8))
    })
}

/// Interface-bound datagrams go to at most this many of the container's
/// routes and addresses each.
const NAMED_SAMPLES: usize = 64;

/// One address in each fixed blocked unicast range.
fn fixed_samples() -> Vec<Ipv4Addr> {
    [[10, 11, 12, 13], [172, 16, 0, 10], [192, 168, 1, 1], [100, 64, 0, 1], [169, 254, 169, 254], [168, 63, 129, 16]].into_iter().map(Ipv4Addr::from).collect()
}

/// Unicast destinations a session must never reach: a sample of every
/// blocked range, of every connected subnet (the container's and the
/// jail's own, gateway excluded), of the container's other routes and its
/// addresses.
fn blocked_unicast(j: &JailSpec) -> Vec<Ipv4Addr> {
    let mut v = fixed_samples();
    let avoid = not_sampled(j);
    let subnets = j.outer_connected.iter().copied().chain(jail_subnet()).chain(j.container_routes.iter().take(NAMED_SAMPLES).copied());
    v.extend(subnets.filter_map(|(net, prefix)| sample_in(net, prefix, &avoid)));
    v.extend(j.container_addrs.iter().take(NAMED_SAMPLES).filter(|a| !avoid.contains(a)));
    v.retain(|a| !j.allow_ip.contains(a));
    v.sort();
    v.dedup();
    v
}

/// Sends one datagram to each of `targets` by `method`; every one must be
/// refused by the jail. Returns what was not.
fn datagrams_refused(method: egress::Method, targets: &[SocketAddrV4]) -> Vec<String> {
    if nix::net::if_::if_nametoindex(IFNAME).is_err() {
        return vec![format!("the jail's interface {IFNAME} is not there to name")];
    }
    let mut bad = Vec::new();
    for dst in targets {
        match egress::udp(method, IFNAME, *dst, b"agent-sandbox verify: must not leave the jail") {
            egress::Attempt::Refused(e) if jail_refusal(e) => {}
            egress::Attempt::Refused(e) => bad.push(format!("{dst} via {}: failed with {e}, not the jail's refusal", method.name())),
            other => bad.push(format!("{dst} via {}: {other:?} (the datagram was handed to an interface; through the jail's, it leaves)", method.name())),
        }
    }
    bad
}

/// A socket that names the jail's interface (`method`) still cannot send
/// to any blocked address.
pub(crate) fn interface_named(c: &Ctx, method: egress::Method) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let targets: Vec<SocketAddrV4> = blocked_unicast(j).into_iter().map(|a| SocketAddrV4::new(a, 9)).collect();
    Outcome::from_problems(datagrams_refused(method, &targets))
}

/// A TCP connection bound to the jail's interface (SO_BINDTODEVICE) to
/// each blocked sample is refused at once with EHOSTUNREACH: the filter's
/// ICMP "administratively prohibited" (or by the local stack before any
/// packet, as for a subnet's broadcast address). A connection, a reset (a host, or
/// pasta for a connection it could not open outside, answered: the SYN
/// left) or a wait (a dropped SYN) is a failure. In parallel: without the
/// filter each one could wait the whole `FAST`.
pub(crate) fn bound_tcp_rejected(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    if nix::net::if_::if_nametoindex(IFNAME).is_err() {
        return Outcome::from_problems(vec![format!("the jail's interface {IFNAME} is not there to name")]);
    }
    let tries: Vec<_> = blocked_unicast(j)
        .into_iter()
        .take(NAMED_SAMPLES)
        .map(|a| {
            let dst = SocketAddrV4::new(a, 443);
            std::thread::spawn(move || (dst, egress::tcp(egress::Method::BindToDevice, IFNAME, dst, FAST)))
        })
        .collect();
    let mut bad = Vec::new();
    for t in tries {
        match t.join() {
            Ok((_, egress::Attempt::Refused(e))) if jail_refusal(e) => {}
            Ok((dst, other)) => bad.push(format!("{dst} bound with SO_BINDTODEVICE: {other:?}, not the jail's reject")),
            Err(_) => bad.push("a connection attempt's thread panicked".into()),
        }
    }
    Outcome::from_problems(bad)
}

/// Check 98's TCP destinations besides `blocked_unicast`'s: the one check
/// 97 looks for in the report, and the metadata service's own port.
pub(crate) const ROUTED_SAMPLE: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(172, 16, 0, 10), 5432);
const METADATA_HTTP: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(169, 254, 169, 254), 80);
const MDNS: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(224, 0, 0, 251), 5353);

/// Plain routed attempts, no interface named, as nearly every program
/// makes them: each blocked sample's TCP connection (each after a
/// multicast send on its thread) fails at once with EHOSTUNREACH and its
/// datagram with EPERM, the filter's reject in the dead end (so the report
/// counts them). A blackhole route's EINVAL, an
/// unreachable route's answer without EPERM for the datagram, a reset, a
/// connection or a wait are failures: the attempt either never reached
/// the filter or left.
pub(crate) fn routed_rejected(c: &Ctx) -> Outcome {
    let j = match jail(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    // The fixed ranges and the jail's own subnet: what the main table
    // routes into the dead end. (A sample of the container's routes may be
    // a broadcast address the local table refuses before any route: checks
    // 91 and 92 judge those.)
    let avoid = not_sampled(j);
    let own = jail_subnet().and_then(|(net, prefix)| sample_in(net, prefix, &avoid));
    let mut tcp: Vec<SocketAddrV4> = vec![ROUTED_SAMPLE, METADATA_HTTP];
    tcp.extend(fixed_samples().into_iter().chain(own).map(|a| SocketAddrV4::new(a, 443)));
    tcp.retain(|d| !j.allow_ip.contains(d.ip()));
    let tries: Vec<_> = tcp
        .iter()
        .map(|dst| {
            let dst = *dst;
            std::thread::spawn(move || {
                // A multicast send into the dead end first, on the same
                // thread: the kernel must not hand its cached multicast
                // route to the connection (`routes::Route::dead_end`).
                let _ = egress::udp(egress::Method::Routed, IFNAME, MDNS, b"agent-sandbox verify: must not leave the jail");
                (dst, egress::tcp(egress::Method::Routed, IFNAME, dst, FAST))
            })
        })
        .collect();
    let mut bad = Vec::new();
    for t in tries {
        match t.join() {
            Ok((_, egress::Attempt::Refused(Errno::EHOSTUNREACH))) => {}
            Ok((dst, egress::Attempt::Refused(e))) => {
                bad.push(format!("{dst} (tcp): {e}, not the filter's reject (the attempt never reached it, so it is not counted)"))
            }
            Ok((dst, other)) => bad.push(format!("{dst} (tcp): {other:?}, not the filter's reject")),
            Err(_) => bad.push("a connection attempt's thread panicked".into()),
        }
    }
    for dst in tcp.iter().map(|d| SocketAddrV4::new(*d.ip(), 9)) {
        match egress::udp(egress::Method::Routed, IFNAME, dst, b"agent-sandbox verify: must not leave the jail") {
            egress::Attempt::Refused(Errno::EPERM) => {}
            other => bad.push(format!("{dst} (udp): {other:?}, not the filter's reject (EPERM)")),
        }
    }
    Outcome::from_problems(bad)
}

/// mDNS and SSDP groups (and one more) do not leave, routed or with the
/// multicast interface named.
pub(crate) fn multicast_blocked(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    let targets = [
        SocketAddrV4::new(Ipv4Addr::new(224, 0, 0, 251), 5353),
        SocketAddrV4::new(Ipv4Addr::new(239, 255, 255, 250), 1900),
        SocketAddrV4::new(Ipv4Addr::new(224, 0, 0, 1), 9),
    ];
    let methods = [egress::Method::Routed, egress::Method::MulticastIf, egress::Method::BindToDevice];
    Outcome::from_problems(methods.iter().flat_map(|m| datagrams_refused(*m, &targets)).collect())
}

/// The limited broadcast and the jail subnet's broadcast do not leave.
pub(crate) fn broadcast_blocked(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    let mut targets = vec![SocketAddrV4::new(Ipv4Addr::BROADCAST, 9)];
    if let Some(net) = jail_subnet().and_then(|(a, p)| crate::jail::Ipv4Net::new(a, p)).filter(|n| n.prefix() < 31) {
        targets.push(SocketAddrV4::new(net.broadcast(), 9));
    }
    let methods = [egress::Method::Routed, egress::Method::BindToDevice];
    Outcome::from_problems(methods.iter().flat_map(|m| datagrams_refused(*m, &targets)).collect())
}

/// Whether this process may write nf_tables in its network namespace.
fn filter_change() -> Result<(), Errno> {
    crate::jail::try_create_probe_table().map_err(Errno::from_raw)
}

fn filter_refused(r: Result<(), Errno>) -> Outcome {
    match r {
        Err(Errno::EPERM | Errno::EACCES) => Outcome::pass(),
        Err(e) => Outcome::fail(format!("creating an nf_tables table failed with {e}, not a permission refusal")),
        Ok(()) => Outcome::fail("created an nf_tables table in the jail's namespace"),
    }
}

/// The packet filter cannot be changed, also from a new user namespace.
pub(crate) fn filter_locked(c: &Ctx) -> Outcome {
    if let Err(o) = jail(c) {
        return o;
    }
    let here = filter_refused(filter_change());
    if here.status != crate::Status::Pass {
        return here;
    }
    refused_from_a_new_userns(filter_change, "the jail's packet filter")
}

/// `change` tried from a new user namespace (whose root holds every
/// capability there) in a child: it must be refused for lack of permission.
fn refused_from_a_new_userns(change: fn() -> Result<(), Errno>, what: &str) -> Outcome {
    let r = in_child(Duration::from_secs(5), || {
        if nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER).is_err() {
            return 2;
        }
        match change() {
            Err(Errno::EPERM | Errno::EACCES) => OK,
            Err(_) => 3,
            Ok(()) => NO,
        }
    });
    match r {
        Ok(OK) => Outcome::pass(),
        Ok(2) => Outcome::pass_note("a new user namespace cannot even be created"),
        Ok(NO) => Outcome::fail(format!("a new user namespace changed {what}")),
        Ok(c) => Outcome::fail(format!("unexpected result {c}")),
        Err(e) => Outcome::fail(e),
    }
}
