//! rtnetlink on a current-thread runtime: how the locker and the follower
//! speak netlink inside the jail's namespaces. Each is a single-threaded
//! child that joined those namespaces before the runtime started (no
//! thread is ever made; the runtime lives only for one lock or one follow).
//! Requests go to rtnetlink's connection chunk by chunk: every request of
//! a chunk is queued before any answer is awaited, so a container that
//! routes a thousand prefixes costs a few round trips, not a thousand.
//!
//! The launcher's own reading of the container and its watch for changes
//! stay on the blocking socket of `rtnl.rs`: the launcher forks and its
//! children join namespaces, so it keeps no runtime.

use futures::StreamExt as _;
use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST};
use netlink_packet_route::RouteNetlinkMessage;
use std::io;
use std::time::Duration;

/// Requests queued before their answers are awaited.
const CHUNK: usize = 256;
/// A dump interrupted by a concurrent change is repeated this often.
const DUMP_TRIES: usize = 5;
/// How long the kernel may take to answer a chunk or a dump: a silent
/// kernel is an error, never a hang.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to the current network namespace's rtnetlink.
pub(crate) struct Netlink {
    rt: tokio::runtime::Runtime,
    handle: rtnetlink::Handle,
}

impl Netlink {
    pub(crate) fn open() -> io::Result<Netlink> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
        let handle = rt.block_on(async {
            let (conn, handle, _) = rtnetlink::new_connection()?;
            tokio::spawn(conn);
            io::Result::Ok(handle)
        })?;
        Ok(Netlink { rt, handle })
    }
}

fn message(req: RouteNetlinkMessage, flags: u16) -> NetlinkMessage<RouteNetlinkMessage> {
    let mut header = NetlinkHeader::default();
    header.flags = flags;
    let mut m = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(req));
    m.finalize();
    m
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("rtnetlink did not answer {what} within {ANSWER_TIMEOUT:?}"))
}

impl Netlink {
    /// Every message a dump of `req` returns, repeated when the kernel
    /// says a change interrupted it.
    pub(crate) fn dump(&mut self, req: RouteNetlinkMessage) -> io::Result<Vec<RouteNetlinkMessage>> {
        for _ in 0..DUMP_TRIES {
            let mut answers = self.handle.request(message(req.clone(), NLM_F_REQUEST | NLM_F_DUMP)).map_err(io::Error::other)?;
            let collect = async {
                let (mut out, mut interrupted) = (Vec::new(), false);
                while let Some(m) = answers.next().await {
                    interrupted |= m.header.flags & NLM_F_DUMP_INTR != 0;
                    match m.payload {
                        NetlinkPayload::InnerMessage(inner) => out.push(inner),
                        NetlinkPayload::Error(e) if e.code.is_some() => return Err(e.to_io()),
                        NetlinkPayload::Overrun(_) => return Err(io::Error::other("rtnetlink overran during a dump")),
                        _ => {}
                    }
                }
                Ok((!interrupted).then_some(out))
            };
            let got = self.rt.block_on(async { tokio::time::timeout(ANSWER_TIMEOUT, collect).await }).map_err(|_| timed_out("a dump"))??;
            if let Some(all) = got {
                return Ok(all);
            }
        }
        Err(io::Error::other(format!("a dump was interrupted by changes {DUMP_TRIES} times in a row")))
    }

    /// Sends every request (with `flags`, an acknowledgement asked for
    /// each), in order, then awaits the acknowledgements. The first refusal
    /// is returned with the index of its request; the kernel has applied
    /// the requests before it, and those after it were still tried.
    pub(crate) fn batch(&mut self, reqs: &[RouteNetlinkMessage], flags: u16) -> Result<(), (usize, io::Error)> {
        let mut first_err: Option<(usize, io::Error)> = None;
        for (chunk_no, chunk) in reqs.chunks(CHUNK).enumerate() {
            let base = chunk_no * CHUNK;
            // Every request of the chunk queued, in order (the connection
            // sends them so), before any answer is awaited.
            let mut streams = Vec::with_capacity(chunk.len());
            for (i, r) in chunk.iter().enumerate() {
                let s = self.handle.request(message(r.clone(), flags | NLM_F_REQUEST | NLM_F_ACK)).map_err(|e| (base + i, io::Error::other(e)))?;
                streams.push(s);
            }
            let acks = futures::future::join_all(streams.into_iter().map(|mut s| async move {
                let mut refused = None;
                while let Some(m) = s.next().await {
                    if let NetlinkPayload::Error(e) = m.payload {
                        if e.code.is_some() {
                            refused = Some(e.to_io());
                        }
                    }
                }
                refused
            }));
            let results = self.rt.block_on(async { tokio::time::timeout(ANSWER_TIMEOUT, acks).await }).map_err(|_| (base, timed_out("a batch of requests")))?;
            if let Some((i, e)) = results.into_iter().enumerate().find_map(|(i, r)| r.map(|e| (i, e))) {
                first_err.get_or_insert((base + i, e));
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::run::rtnl;
    use netlink_packet_route::AddressFamily;

    /// The same dump through rtnetlink and through the blocking socket:
    /// one namespace, one answer.
    #[test]
    fn a_dump_agrees_with_the_blocking_socket() {
        let mut nl = Netlink::open().unwrap();
        let mut blocking = rtnl::Rtnl::open().unwrap();
        let count = |v: Vec<RouteNetlinkMessage>| v.into_iter().filter(|m| matches!(m, RouteNetlinkMessage::NewAddress(_))).count();
        let a = count(nl.dump(rtnl::get_addresses(AddressFamily::Inet)).unwrap());
        let b = count(blocking.dump(rtnl::get_addresses(AddressFamily::Inet)).unwrap());
        assert!(a > 0, "loopback has an address");
        assert_eq!(a, b);
    }

    /// A refused request is reported with its index; the others are tried.
    #[test]
    fn a_refused_request_is_named_by_its_index() {
        let mut nl = Netlink::open().unwrap();
        // Deleting a route that does not exist (table 250, 192.0.2.77/32).
        let mut m = netlink_packet_route::route::RouteMessage::default();
        m.header.address_family = AddressFamily::Inet;
        m.header.destination_prefix_length = 32;
        m.header.table = 250;
        m.attributes.push(netlink_packet_route::route::RouteAttribute::Destination(netlink_packet_route::route::RouteAddress::Inet([192, 0, 2, 77].into())));
        let reqs = vec![rtnl::get_routes(AddressFamily::Inet), RouteNetlinkMessage::DelRoute(m)];
        let (i, _) = nl.batch(&reqs, 0).unwrap_err();
        assert_eq!(i, 1);
    }
}
