//! The route lock, run by the locker inside the jail's namespaces after
//! pasta attached: read the namespace, plan, flush the main table, install
//! the plan, read every table, rule, address and link back, and fail on
//! any difference. Then the second layer: the packet filter derived from
//! the same plan, installed and read back the same way. Netlink is spoken
//! through rtnetlink on a current-thread runtime (`netlink.rs`), requests
//! sent in chunks whose acknowledgements are awaited afterwards, so a
//! container that routes a thousand prefixes costs a thousand messages,
//! not a thousand round trips.
//!
//! Order (security-relevant):
//! 1. snapshot what pasta configured and plan from it (pure);
//! 2. flush the main table (pasta copied the container's routes in,
//!    more specific ones included, which would win over a blackhole);
//! 3. install the plan: blocks and the on-link gateway first, then the
//!    routes via the gateway;
//! 4. snapshot again and compare with the plan (pure); any difference is
//!    a refusal;
//! 5. the packet filter (`lock_filter`): installed, then every nf_tables
//!    object of the namespace read back and compared.
//!
//! `follow` moves a locked jail to a plan with more blocked destinations
//! during the session (`follow.rs`): the filter first (its set grows in
//! transactions that never open a range), then the new routes, then the
//! routes they replace; both read back.

use super::netlink::Netlink;
use super::nft;
use super::rtnl;
use crate::jail::plan::compare::compare;
use crate::jail::plan::filter;
use crate::jail::plan::readback::{self, LinkNames};
use crate::jail::plan::routes::{net_plan, observe, NetPlan, ObserveError, PlanInputs, Route, Snapshot, TABLE_MAIN};
use netlink_packet_core::{NLM_F_CREATE, NLM_F_EXCL};
use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteMessage, RouteProtocol};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use serde::{Deserialize, Serialize};

/// Why the holder stopped (sent to the launcher, which turns it into a
/// `JailError`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Failure {
    Unshare {
        errno: i32,
    },
    IdMaps {
        errno: i32,
        message: String,
    },
    Ipv6 {
        message: String,
    },
    IcmpRate {
        message: String,
    },
    Tap {
        message: String,
    },
    Netlink {
        step: String,
        message: String,
    },
    Observe(ObserveError),
    Unexpected(Vec<String>),
    /// The packet filter could not be installed or read back.
    Filter {
        step: String,
        errno: Option<i32>,
        message: String,
    },
    Exec {
        message: String,
    },
}

fn netlink(step: &str, e: impl std::fmt::Display) -> Failure {
    Failure::Netlink { step: step.into(), message: e.to_string() }
}

/// How IPv6 stands in the jail's namespace once the holder is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ipv6 {
    /// Switched off (or not in the kernel at all).
    Off,
    /// On, but no interface but the loopback gets an IPv6 address (so
    /// there is no IPv6 route out and no source to send from): where the
    /// namespace's sysctls cannot be written, under a container runtime's
    /// masked /proc, whose /proc/sys is read-only to everything in the
    /// container. The read-back allows exactly the loopback's `::1` and
    /// the kernel's multicast routes (`ipv6_kernel_defaults`).
    Unaddressed,
}

/// IPv6 off in the jail's namespace (`all` and `default`, so the interface
/// the holder makes next is born without it). A kernel without IPv6 has
/// nothing to switch off. A read-only /proc/sys (a masked /proc) leaves it
/// on: the holder then keeps every interface it makes unaddressed.
pub(crate) fn disable_ipv6() -> Result<Ipv6, Failure> {
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        match std::fs::write(&path, "1") {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ipv6::Off),
            Err(e) if e.raw_os_error() == Some(libc::EROFS) => return Ok(Ipv6::Unaddressed),
            Err(e) => return Err(Failure::Ipv6 { message: format!("{path}: {e}") }),
        }
    }
    Ok(Ipv6::Off)
}

/// Whether IPv6 is on in the current network namespace (the locker reads
/// the holder's outcome off the kernel).
pub(crate) fn ipv6_on() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv6/conf/all/disable_ipv6").is_ok_and(|v| v.trim() == "0")
}

/// The interface `name` gets no IPv6 address (`Ipv6::Unaddressed`), before
/// it is up: no link-local address, so no route through it and no source
/// address to send IPv6 from.
pub(crate) fn keep_unaddressed(name: &str) -> Result<(), Failure> {
    let fail = |e: String| Failure::Ipv6 { message: format!("keeping {name} without IPv6 addresses: {e}") };
    let index = nix::net::if_::if_nametoindex(name).map_err(|e| fail(e.to_string()))?;
    let mut nl = super::rtnl::Rtnl::open().map_err(|e| fail(e.to_string()))?;
    nl.request(super::rtnl::no_ipv6_addresses(index)).map_err(|e| fail(e.to_string()))
}

/// The dead end (`routes::DEAD_END`): a persistent tap device nothing
/// reads, made like the jail's interface (so it needs nothing more of the
/// kernel), kept without IPv6 the same way, then up without ARP. Routes
/// into it need it up; no reader means no carrier, so what reaches it
/// past the filter is dropped.
pub(crate) fn make_dead_end(ipv6: Ipv6) -> Result<(), Failure> {
    use crate::jail::plan::routes::DEAD_END;
    super::tap::make_persistent(DEAD_END).map_err(|message| Failure::Tap { message })?;
    if ipv6 == Ipv6::Unaddressed {
        keep_unaddressed(DEAD_END)?;
    }
    let fail = |e: String| netlink(&format!("bringing {DEAD_END} up"), e);
    let index = nix::net::if_::if_nametoindex(DEAD_END).map_err(|e| fail(e.to_string()))?;
    let mut nl = super::rtnl::Rtnl::open().map_err(|e| fail(e.to_string()))?;
    nl.request(super::rtnl::up_without_arp(index)).map_err(|e| fail(e.to_string()))
}

/// `net.ipv4.icmp_ratemask` of a new namespace: destination unreachable
/// (bit 3), source quench, time exceeded, parameter problem.
const ICMP_RATEMASK_DEFAULT: u32 = (1 << 3) | (1 << 4) | (1 << 11) | (1 << 12);
/// The jail's: the filter's rejects (destination unreachable,
/// administratively prohibited) are not rate-limited. Their only receiver
/// is the jail itself (they stay on `lo`), and a rate-limited reject
/// would leave a `connect` waiting for its SYN's retransmission.
const ICMP_RATEMASK_JAIL: u32 = ICMP_RATEMASK_DEFAULT & !(1 << 3);

/// Lifts the kernel's rate limit from the filter's rejects in the jail's
/// namespace (a per-namespace setting; the container's is untouched).
/// Under a masked /proc (its /proc/sys read-only) the limit stays: the
/// kernel then answers a burst of 50 rejects at once and 1,000 a second
/// after that (`net.ipv4.icmp_msgs_burst`, `icmp_msgs_per_sec`), so only
/// a caller with more blocked attempts at once than that waits for its
/// retransmission.
pub(crate) fn unlimit_rejects() -> Result<(), Failure> {
    let path = "/proc/sys/net/ipv4/icmp_ratemask";
    match std::fs::write(path, ICMP_RATEMASK_JAIL.to_string()) {
        Err(e) if e.raw_os_error() == Some(libc::EROFS) => Ok(()),
        r => r.map_err(|e| Failure::IcmpRate { message: format!("{path}: {e}") }),
    }
}

/// Locks the routes; returns the plan now in force.
pub(crate) fn lock(inputs: &PlanInputs) -> Result<NetPlan, Failure> {
    let mut nl = Netlink::open().map_err(|e| netlink("opening netlink", e))?;
    // 1. What pasta configured, and the plan for it.
    let (before, raw) = snapshot(&mut nl)?;
    let observed = observe(&before).map_err(Failure::Observe)?;
    let plan = net_plan(&observed, inputs);
    // 2. Flush the main table.
    let flush: Vec<RouteNetlinkMessage> = raw.routes.into_iter().filter(|m| is_main(m, &raw.names)).map(RouteNetlinkMessage::DelRoute).collect();
    nl.batch(&flush, 0).map_err(|(_, e)| netlink("flushing the main table", e))?;
    // 3. Install the plan, in order.
    install(&mut nl, &plan.main, &raw.names)?;
    // 4. Read everything back.
    check(&mut nl, &plan)?;
    Ok(plan)
}

/// The routes of a locked jail moved to the plan for `inputs` (which
/// blocks at least what the plan in force blocks), the filter (of this
/// shape) first. Returns the new plan.
pub(crate) fn follow(inputs: &PlanInputs, filter: Option<filter::Shape>) -> Result<NetPlan, Failure> {
    let mut nl = Netlink::open().map_err(|e| netlink("opening netlink", e))?;
    let (now, raw) = snapshot(&mut nl)?;
    let observed = observe(&now).map_err(Failure::Observe)?;
    let plan = net_plan(&observed, inputs);
    if let Some(shape) = filter {
        grow_filter(&filter::filter_plan(&plan, shape))?;
    }
    let current: Vec<&Route> = now.routes.iter().filter(|r| r.table == TABLE_MAIN).collect();
    let added: Vec<Route> = plan.main.iter().filter(|r| !current.contains(r)).cloned().collect();
    install(&mut nl, &added, &raw.names)?;
    let obsolete: Vec<RouteNetlinkMessage> = raw
        .routes
        .into_iter()
        .filter(|m| readback::route_v4(m, &raw.names).is_some_and(|r| r.table == TABLE_MAIN && !plan.main.contains(&r)))
        .map(RouteNetlinkMessage::DelRoute)
        .collect();
    nl.batch(&obsolete, 0).map_err(|(_, e)| netlink("removing routes a wider block replaced", e))?;
    check(&mut nl, &plan)?;
    Ok(plan)
}

/// Step 4: every table, rule, address and link against the plan.
fn check(nl: &mut Netlink, plan: &NetPlan) -> Result<(), Failure> {
    let (after, _) = snapshot(nl)?;
    let differences = compare(plan, &after);
    if differences.is_empty() {
        Ok(())
    } else {
        Err(Failure::Unexpected(differences.iter().map(|d| d.to_string()).collect()))
    }
}

fn nft_failed(e: nft::NftError) -> Failure {
    Failure::Filter { step: e.step.into(), errno: e.errno, message: e.message }
}

/// The second layer (`plan/filter.rs`): installs the packet filter derived
/// from the locked route plan, reads every nf_tables object back and
/// fails on any difference. Returns the number of filter rules.
pub(crate) fn lock_filter(net: &NetPlan, shape: filter::Shape) -> Result<usize, Failure> {
    let plan = filter::filter_plan(net, shape);
    nft::install(&plan).map_err(nft_failed)?;
    read_back_filter(&plan)?;
    Ok(plan.rules.len())
}

/// The filter in force grown to `plan` (same rules, more blocked ranges),
/// then read back.
fn grow_filter(plan: &filter::FilterPlan) -> Result<(), Failure> {
    let now = nft::read_back().map_err(nft_failed)?;
    let in_force: Vec<(std::net::Ipv4Addr, std::net::Ipv4Addr)> = filter::ranges_of(&now);
    nft::grow_set(&filter::set_changes(&in_force, &plan.blocked)).map_err(nft_failed)?;
    read_back_filter(plan)
}

fn read_back_filter(plan: &filter::FilterPlan) -> Result<(), Failure> {
    let actual = nft::read_back().map_err(nft_failed)?;
    let differences = filter::compare(plan, &actual);
    if differences.is_empty() {
        Ok(())
    } else {
        Err(Failure::Unexpected(differences))
    }
}

/// What `doctor` asks of a fresh user + network namespace it is in: can
/// the jail's filter (for a typical container network) be installed and
/// read back exactly? The error carries the refusal's errno, if any.
pub fn probe_filter() -> Result<(), (String, Option<i32>)> {
    use crate::jail::plan::routes::{IfAddr, Observed};
    use std::net::Ipv4Addr;
    let observed = Observed {
        dev: crate::jail::JAIL_IFNAME.into(),
        addrs: vec![IfAddr::new(crate::jail::JAIL_IFNAME, Ipv4Addr::new(10, 0, 2, 15), 24)],
        gateway: Ipv4Addr::new(10, 0, 2, 2),
    };
    let inputs = PlanInputs { forwarder: Ipv4Addr::new(192, 0, 2, 53), allow_ip: Vec::new(), container: Vec::new(), dead_end: true };
    match lock_filter(&net_plan(&observed, &inputs), filter::Shape { report: true, allowlist: false }) {
        Ok(_) => Ok(()),
        Err(Failure::Filter { step, errno, message }) => Err((format!("{step}: {message}"), errno)),
        Err(Failure::Unexpected(d)) => Err((format!("the filter read back differently: {}", d.join("; ")), None)),
        Err(other) => Err((format!("{other:?}"), None)),
    }
}

fn is_main(msg: &RouteMessage, names: &LinkNames) -> bool {
    readback::route_v4(msg, names).is_some_and(|r| r.table == TABLE_MAIN)
}

/// Installs `routes` in order (one batch: the kernel takes the requests
/// one after the other, so a gateway route is in place before the routes
/// through it).
fn install(nl: &mut Netlink, routes: &[Route], names: &LinkNames) -> Result<(), Failure> {
    let msgs = routes.iter().map(|r| add_message(r, names)).collect::<Result<Vec<_>, _>>()?;
    let flags = NLM_F_CREATE | NLM_F_EXCL;
    nl.batch(&msgs, flags).map_err(|(i, e)| netlink(&format!("adding {}", routes.get(i).map(ToString::to_string).unwrap_or_default()), e))
}

fn add_message(route: &Route, names: &LinkNames) -> Result<RouteNetlinkMessage, Failure> {
    let mut m = RouteMessage::default();
    m.header.address_family = AddressFamily::Inet;
    m.header.destination_prefix_length = route.dst.prefix();
    m.header.protocol = RouteProtocol::Static;
    m.header.scope = readback::route_scope_of(&route.scope);
    m.header.kind = readback::route_type_of(&route.kind);
    match u8::try_from(route.table) {
        Ok(t) => m.header.table = t,
        Err(_) => m.attributes.push(RouteAttribute::Table(route.table)),
    }
    if route.dst.prefix() > 0 {
        m.attributes.push(RouteAttribute::Destination(RouteAddress::Inet(route.dst.network())));
    }
    if let Some(dev) = &route.dev {
        let index = names.iter().find(|(_, n)| *n == dev).map(|(i, _)| *i);
        let index = index.ok_or_else(|| netlink(&format!("adding {route}"), format!("no interface {dev}")))?;
        m.attributes.push(RouteAttribute::Oif(index));
    }
    if let Some(gw) = route.gateway {
        m.attributes.push(RouteAttribute::Gateway(RouteAddress::Inet(gw)));
    }
    if route.metric != 0 {
        m.attributes.push(RouteAttribute::Priority(route.metric));
    }
    Ok(RouteNetlinkMessage::NewRoute(m))
}

/// The raw IPv4 routes (kept for the flush) and the interface names.
struct Raw {
    routes: Vec<RouteMessage>,
    names: LinkNames,
}

/// Links, addresses, routes of every table and rules, both families.
/// Where IPv6 is on but unaddressed (`Ipv6::Unaddressed`), the loopback's
/// `::1` and the kernel's own routes for it are left out of the IPv6 part,
/// which must otherwise be empty.
fn snapshot(nl: &mut Netlink) -> Result<(Snapshot, Raw), Failure> {
    let v6_on = ipv6_on();
    let names = rtnl::link_names().map_err(|e| netlink("listing interfaces", e))?;
    let mut snap = Snapshot { links: names.values().cloned().collect(), ..Snapshot::default() };
    snap.links.sort();
    for m in nl.dump(rtnl::get_addresses(AddressFamily::Unspec)).map_err(|e| netlink("dumping addresses", e))? {
        if let RouteNetlinkMessage::NewAddress(a) = m {
            match readback::address(&a, &names) {
                Ok(a) => snap.addrs.push(a),
                Err(other) if v6_on && other == readback::IPV6_LOOPBACK_ADDRESS => {}
                Err(other) => snap.addrs6.push(other),
            }
        }
    }
    snap.addrs.sort();
    let routes = dump_routes(nl, AddressFamily::Inet)?;
    snap.routes = routes.iter().filter_map(|m| readback::route_v4(m, &names)).collect();
    snap.routes.sort();
    let routes6 = dump_routes(nl, AddressFamily::Inet6)?;
    snap.routes6 = routes6.iter().filter(|r| !(v6_on && readback::ipv6_kernel_default(r, &names))).map(readback::describe_route).collect();
    for family in [AddressFamily::Inet, AddressFamily::Inet6] {
        for m in nl.dump(rtnl::get_rules(family)).map_err(|e| netlink("dumping rules", e))? {
            if let RouteNetlinkMessage::NewRule(r) = m {
                snap.rules.extend(readback::rule(&r));
            }
        }
    }
    snap.rules.sort();
    Ok((snap, Raw { routes, names }))
}

fn dump_routes(nl: &mut Netlink, family: AddressFamily) -> Result<Vec<RouteMessage>, Failure> {
    let msgs = nl.dump(rtnl::get_routes(family)).map_err(|e| netlink("dumping routes", e))?;
    Ok(msgs
        .into_iter()
        .filter_map(|m| match m {
            RouteNetlinkMessage::NewRoute(r) => Some(r),
            _ => None,
        })
        .collect())
}
