//! The route lock, run by the locker inside the jail's namespaces after
//! pasta attached: read the namespace, plan, flush the main table, install
//! the plan, read every table, rule, address and link back, and fail on
//! any difference. Then the second layer: the packet filter derived from
//! the same plan, installed and read back the same way. rtnetlink runs on
//! a current-thread tokio runtime made here, after the fork (never before:
//! the locker had to be single-threaded to join the namespaces).
//!
//! Order (security-relevant):
//! 1. snapshot what pasta configured and plan from it (pure);
//! 2. flush the main table (pasta copied the container's routes in,
//!    more specific ones included, which would win over a blackhole);
//! 3. install the plan: blocks and the on-link gateway first, then the
//!    routes via the gateway;
//! 4. snapshot again and compare with the plan (pure); any difference is
//!    a refusal;
//! 5. the packet filter (`lock_filter`): installed in one transaction, then
//!    every nf_tables object of the namespace read back and compared.

use super::nft;
use crate::jail::plan::compare::compare;
use crate::jail::plan::filter;
use crate::jail::plan::readback::{self, LinkNames};
use crate::jail::plan::routes::{net_plan, observe, NetPlan, ObserveError, PlanInputs, Route, Snapshot, TABLE_MAIN};
use futures::TryStreamExt;
use netlink_packet_route::route::RouteMessage;
use rtnetlink::{Handle, IpVersion};
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

/// IPv6 off in the jail's namespace (`all` and `default`, so the interface
/// pasta creates later is born without it). A kernel without IPv6 has
/// nothing to switch off.
pub(crate) fn disable_ipv6() -> Result<(), Failure> {
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        match std::fs::write(&path, "1") {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Failure::Ipv6 { message: format!("{path}: {e}") }),
        }
    }
    Ok(())
}

/// Locks the routes; returns the plan now in force.
pub(crate) fn lock(inputs: &PlanInputs) -> Result<NetPlan, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build().map_err(|e| netlink("starting the netlink runtime", e))?;
    rt.block_on(lock_async(inputs))
}

async fn lock_async(inputs: &PlanInputs) -> Result<NetPlan, Failure> {
    let (conn, handle, _) = rtnetlink::new_connection().map_err(|e| netlink("opening netlink", e))?;
    tokio::spawn(conn);
    // 1. What pasta configured, and the plan for it.
    let (before, raw) = snapshot(&handle).await?;
    let observed = observe(&before).map_err(Failure::Observe)?;
    let plan = net_plan(&observed, inputs);
    let names = raw.names.clone();
    // 2. Flush the main table.
    for msg in raw.routes.into_iter().filter(|m| is_main(m, &names)) {
        handle.route().del(msg).execute().await.map_err(|e| netlink("flushing the main table", e))?;
    }
    // 3. Install the plan, in order.
    for route in &plan.main {
        install(&handle, route, &names).await?;
    }
    // 4. Read everything back.
    let (after, _) = snapshot(&handle).await?;
    let differences = compare(&plan, &after);
    if differences.is_empty() {
        Ok(plan)
    } else {
        Err(Failure::Unexpected(differences.iter().map(|d| d.to_string()).collect()))
    }
}

/// The second layer (`plan/filter.rs`): installs the packet filter derived
/// from the locked route plan, reads every nf_tables object back and
/// fails on any difference. Returns the number of filter rules.
pub(crate) fn lock_filter(net: &NetPlan) -> Result<usize, Failure> {
    let plan = filter::filter_plan(net);
    let failed = |e: nft::NftError| Failure::Filter { step: e.step.into(), errno: e.errno, message: e.message };
    nft::install(&plan).map_err(failed)?;
    let actual = nft::read_back().map_err(failed)?;
    let differences = filter::compare(&plan, &actual);
    if differences.is_empty() {
        Ok(plan.rules.len())
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
    let inputs = PlanInputs { forwarder: Ipv4Addr::new(192, 0, 2, 53), allow_ip: Vec::new(), outer_connected: Vec::new() };
    match lock_filter(&net_plan(&observed, &inputs)) {
        Ok(_) => Ok(()),
        Err(Failure::Filter { step, errno, message }) => Err((format!("{step}: {message}"), errno)),
        Err(Failure::Unexpected(d)) => Err((format!("the filter read back differently: {}", d.join("; ")), None)),
        Err(other) => Err((format!("{other:?}"), None)),
    }
}

fn is_main(msg: &RouteMessage, names: &LinkNames) -> bool {
    readback::route_v4(msg, names).is_some_and(|r| r.table == TABLE_MAIN)
}

async fn install(handle: &Handle, route: &Route, names: &LinkNames) -> Result<(), Failure> {
    let step = format!("adding {route}");
    let mut req = handle
        .route()
        .add()
        .v4()
        .table_id(route.table)
        .destination_prefix(route.dst.network(), route.dst.prefix())
        .kind(readback::route_type_of(&route.kind))
        .scope(readback::route_scope_of(&route.scope));
    if let Some(dev) = &route.dev {
        let index = names.iter().find(|(_, n)| *n == dev).map(|(i, _)| *i);
        let index = index.ok_or_else(|| netlink(&step, format!("no interface {dev}")))?;
        req = req.output_interface(index);
    }
    if let Some(gw) = route.gateway {
        req = req.gateway(gw);
    }
    req.execute().await.map_err(|e| netlink(&step, e))
}

/// The raw IPv4 routes (kept for the flush) and the interface names.
struct Raw {
    routes: Vec<RouteMessage>,
    names: LinkNames,
}

/// Links, addresses, routes of every table and rules, both families.
async fn snapshot(handle: &Handle) -> Result<(Snapshot, Raw), Failure> {
    let names = links()?;
    let mut snap = Snapshot { links: names.values().cloned().collect(), ..Snapshot::default() };
    snap.links.sort();
    let addrs: Vec<_> = handle.address().get().execute().try_collect().await.map_err(|e| netlink("dumping addresses", e))?;
    for msg in &addrs {
        match readback::address(msg, &names) {
            Ok(a) => snap.addrs.push(a),
            Err(other) => snap.addrs6.push(other),
        }
    }
    snap.addrs.sort();
    let routes: Vec<RouteMessage> = dump_routes(handle, IpVersion::V4).await?;
    snap.routes = routes.iter().filter_map(|m| readback::route_v4(m, &names)).collect();
    snap.routes.sort();
    snap.routes6 = dump_routes(handle, IpVersion::V6).await?.iter().map(readback::describe_route).collect();
    for version in [IpVersion::V4, IpVersion::V6] {
        let rules: Vec<_> = handle.rule().get(version).execute().try_collect().await.map_err(|e| netlink("dumping rules", e))?;
        snap.rules.extend(rules.iter().filter_map(readback::rule));
    }
    snap.rules.sort();
    Ok((snap, Raw { routes, names }))
}

async fn dump_routes(handle: &Handle, version: IpVersion) -> Result<Vec<RouteMessage>, Failure> {
    handle.route().get(version).execute().try_collect().await.map_err(|e| netlink("dumping routes", e))
}

/// Interface names by index (if_nameindex: a netlink dump of the current
/// namespace, without the per-family link statistics rtnetlink would
/// have to parse).
fn links() -> Result<LinkNames, Failure> {
    let list = nix::net::if_::if_nameindex().map_err(|e| netlink("listing interfaces", e))?;
    Ok(list.iter().map(|i| (i.index(), i.name().to_string_lossy().into_owned())).collect())
}
