//! allowDomains checks (docs/jail.md, "Allowing only some domains"), by
//! behaviour: an allowed name resolves through the jail's own forwarder
//! and its address is reached; a literal IP (public DNS-over-HTTPS
//! resolvers among them), an unlisted name and a direct question to
//! pasta's forwarder are refused at once, by the jail. Skipped when the
//! allowlist is off.

use super::sys::{tcp_connect, Reach};
use super::Ctx;
use crate::jail::plan::dns;
use crate::spec::JailSpec;
use crate::Outcome;
use nix::errno::Errno;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

const FAST: Duration = Duration::from_millis(1500);
/// Literal addresses a session might try past DNS: public
/// DNS-over-HTTPS resolvers, and a documentation address nothing names.
pub(crate) const LITERALS: [Ipv4Addr; 4] = [Ipv4Addr::new(1, 1, 1, 1), Ipv4Addr::new(8, 8, 8, 8), Ipv4Addr::new(9, 9, 9, 9), Ipv4Addr::new(192, 0, 2, 1)];
pub(crate) const LITERAL_PORT: u16 = 443;

fn allowlist(c: &Ctx) -> Result<&JailSpec, Outcome> {
    let j = c.spec.jail.as_ref().ok_or_else(|| Outcome::skip(crate::JAIL_OFF))?;
    if j.allow_names.is_empty() && !j.allowlist {
        return Err(Outcome::skip("allowDomains is not set"));
    }
    Ok(j)
}

/// The session's nameserver (the jail's forwarder).
fn nameserver() -> Option<Ipv4Addr> {
    let text = std::fs::read_to_string("/etc/resolv.conf").ok()?;
    text.lines().find_map(|l| l.trim().strip_prefix("nameserver").and_then(|a| a.trim().parse().ok()))
}

/// One UDP question to `server`: the answer's bytes, or why none came.
fn ask(server: Ipv4Addr, name: &str, id: u16) -> Result<Vec<u8>, String> {
    let sock = UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    sock.connect((server, 53)).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    sock.send(&dns::query(id, name, dns::TYPE_A, true)).map_err(|e| format!("sending failed: {e}"))?;
    let mut buf = vec![0u8; 4096];
    let n = sock.recv(&mut buf).map_err(|e| format!("no answer: {e}"))?;
    buf.truncate(n);
    Ok(buf)
}

/// The addresses an answer gives for `name`.
fn addresses(answer: &[u8], name: &str, id: u16) -> Vec<Ipv4Addr> {
    let q = dns::query(id, name, dns::TYPE_A, true);
    let Ok(query) = dns::parse_query(&q) else { return vec![] };
    dns::parse_answer(answer, &query).map(|a| a.addrs.into_iter().map(|r| r.addr).collect()).unwrap_or_default()
}

/// 95: the first allowed name that resolves is reached (a connection, or
/// a refusal from the far end: the packet left; not the jail's reject).
pub(crate) fn name_connects(c: &Ctx) -> Outcome {
    let j = match allowlist(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let Some(server) = nameserver() else { return Outcome::fail("no nameserver in /etc/resolv.conf") };
    let resolved = j.allow_names.iter().enumerate().find_map(|(i, n)| {
        let id = 0x5100 + i as u16;
        let addrs = ask(server, n, id).map(|a| addresses(&a, n, id)).unwrap_or_default();
        addrs.first().map(|a| (n.clone(), *a))
    });
    let Some((name, addr)) = resolved else {
        return Outcome::pass_note("no allowed name (wildcards aside) resolved here, so none could be tried");
    };
    for port in [443, 80] {
        let started = Instant::now();
        match tcp_connect(SocketAddr::new(IpAddr::V4(addr), port), Duration::from_secs(5)) {
            Reach::Connected(_) => return Outcome::pass(),
            Reach::Failed(Errno::ECONNREFUSED | Errno::ECONNRESET) => {
                return Outcome::pass_note(format!("{name} ({addr}):{port} answered with a reset: reached"))
            }
            Reach::Blocked if started.elapsed() < Duration::from_millis(50) => {
                return Outcome::fail(format!("{name} resolved to {addr}, which the jail refused"));
            }
            _ => {}
        }
    }
    Outcome::fail(format!("{name} resolved to {addr}, but neither port 443 nor 80 answered"))
}

/// 96: literal addresses, an unlisted name and pasta's forwarder asked
/// directly are all refused, by the jail, at once.
pub(crate) fn refuses_the_rest(c: &Ctx) -> Outcome {
    let j = match allowlist(c) {
        Ok(j) => j,
        Err(o) => return o,
    };
    let mut bad = Vec::new();
    for ip in LITERALS.iter().filter(|ip| !j.allow_ip.contains(ip)) {
        let started = Instant::now();
        let dst = SocketAddr::new(IpAddr::V4(*ip), LITERAL_PORT);
        match tcp_connect(dst, FAST) {
            Reach::Failed(Errno::EHOSTUNREACH) | Reach::Blocked if started.elapsed() < Duration::from_millis(500) => {}
            other => bad.push(format!("{dst}: {}, not the jail's reject", describe(&other))),
        }
    }
    match nameserver().map(|s| ask(s, &unlisted(&c.spec.nonce), 0x5200)) {
        Some(Ok(answer)) if dns::extended_error(&answer).is_some_and(|(_, text)| text == dns::REFUSAL_TEXT) => {}
        Some(Ok(answer)) => bad.push(format!("an unlisted name got an answer not refused by the jail (rcode {})", answer.get(3).map_or(0, |b| b & 0x0f))),
        Some(Err(e)) => bad.push(format!("the jail's forwarder did not answer an unlisted name: {e}")),
        None => bad.push("no nameserver in /etc/resolv.conf".into()),
    }
    if let Some(upstream) = j.upstream {
        match ask(upstream, "example.com", 0x5300) {
            Err(e) if e.starts_with("sending failed") => {}
            Err(e) => bad.push(format!("a question sent to pasta's forwarder {upstream} directly was not refused at once ({e})")),
            Ok(_) => bad.push(format!("pasta's forwarder {upstream} answered the session directly")),
        }
    }
    Outcome::from_problems(bad)
}

/// A name no allowlist can hold (`.invalid` is reserved, and `*.invalid`
/// is too broad to configure).
pub(crate) fn unlisted(nonce: &str) -> String {
    format!("agent-sandbox-verify-{}.invalid", &nonce[..nonce.len().min(12)])
}

fn describe(r: &Reach) -> String {
    match r {
        Reach::Connected(_) => "connected".into(),
        Reach::Blocked => "refused by the route table".into(),
        Reach::Failed(e) => format!("failed with {e}"),
        Reach::TimedOut => format!("no answer within {} ms", FAST.as_millis()),
    }
}
