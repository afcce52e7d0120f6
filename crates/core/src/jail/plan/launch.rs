//! The jail's launch plan: a pure value computed from the configuration
//! and the host facts (forwarder address, allowed addresses, relayed
//! ports, the pasta command line, the session's resolv.conf). The route
//! plan itself needs what pasta configured and is computed inside the
//! namespace (`routes::net_plan`) from `JailPlan::route_inputs`.

use super::allowlist::Allowlist;
use super::container::{destinations, internet, Destination, Internet};
use super::filter::Shape;
use super::resolv::session_resolv_conf;
use super::routes::PlanInputs;
use crate::config::Config;
use crate::jail::error::JailError;
use crate::jail::host::HostFacts;
use crate::jail::net::{Ipv4Net, FORWARDER_CANDIDATES};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

/// How pasta is run (its argv without the pid file and the target PID,
/// which exist only at launch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PastaPlan {
    pub path: PathBuf,
    pub args: Vec<String>,
}

/// Everything the jail will do, decided before anything is done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JailPlan {
    /// In-jail address of pasta's DNS forwarder.
    pub forwarder: Ipv4Addr,
    /// Sorted, deduplicated.
    pub allow_ip: Vec<Ipv4Addr>,
    /// Jail 127.0.0.1:P → container 127.0.0.1:P. Sorted.
    pub local_ports: Vec<u16>,
    /// Container 127.0.0.1:P → the session's listener on 127.0.0.1:P. Sorted.
    pub callback_ports: Vec<u16>,
    /// What the container reaches other than through its default route
    /// (`container::destinations`), blocked in the jail.
    pub container: Vec<Destination>,
    /// What the jail treats as the internet (`container::internet`).
    pub internet: Internet,
    /// Whether the launcher follows the container's route changes during
    /// the session (`run/follow.rs`). Always true from [`plan`]; only
    /// weakened-plan tests switch it off, with `container` narrowed.
    pub follow: bool,
    /// The session's /etc/resolv.conf.
    pub resolv_conf: String,
    pub pasta: PastaPlan,
    /// The launcher's ids (the jail's maps may name others: `plan_for`).
    pub uid: u32,
    pub gid: u32,
    /// The outer ids the holder becomes before it execs the sandbox when
    /// they are not the launcher's (a root launcher's unprivileged session):
    /// the holder makes its namespaces as root, so they are root's and a
    /// root pasta may join them, and the launcher writes the maps (the
    /// holder may write only its own id's).
    pub becomes: Option<(u32, u32)>,
    /// The jail's user-namespace maps, as written to uid_map / gid_map:
    /// see `id_map`.
    pub uid_map: String,
    pub gid_map: String,
    /// How long pasta may take to configure the namespace.
    pub(crate) setup_timeout: Duration,
    /// The second layer (`filter.rs`). Always true from [`plan`]; only
    /// weakened-plan tests (`verify --weaken jail-filter`) switch it off
    /// to show the checks that prove it fail without it.
    pub packet_filter: bool,
    /// Blocked destinations are routed into the dead end
    /// (`routes::DEAD_END`), where the filter rejects and counts routed
    /// attempts. Always true from [`plan`]; `verify --weaken jail-dead-end`
    /// switches it off (blackhole routes) to show the checks that prove it
    /// fail without it.
    pub dead_end: bool,
    /// The filter counts what it refuses, for the end-of-session report.
    /// Always true from [`plan`]; `verify --weaken jail-report` switches
    /// it off.
    pub report: bool,
    /// allowDomains: the session reaches only what the jail's own DNS
    /// forwarder (`run/forwarder.rs`) resolved for these names. `None`:
    /// off (the internet open, as without the key).
    pub allowlist: Option<Allowlist>,
    /// The container's resolver (the first IPv4 nameserver of its
    /// resolv.conf, the one pasta's forwarder asks): with allowDomains, the
    /// jail's own forwarder asks it directly, from the container's network.
    pub resolver: Option<Ipv4Addr>,
    /// The filter holds the session to the allowlist. Always true from
    /// [`plan`]; `verify --weaken jail-allowlist` switches it off (the
    /// forwarder still answers) to show the checks that prove it fail.
    pub enforce_allowlist: bool,
    /// How long an allowed name's address stays reachable after its
    /// record's TTL ran out (clients cache a little longer than told).
    pub dns_grace: Duration,
}

/// Where the jail's own DNS forwarder listens (with allowDomains): the
/// session's loopback, which never leaves the jail.
pub const DNS_LISTEN: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 53);
/// The default of `JailPlan::dns_grace`.
pub const DNS_GRACE: Duration = Duration::from_secs(300);

impl JailPlan {
    /// The launch inputs of the route plan.
    pub(crate) fn route_inputs(&self) -> PlanInputs {
        PlanInputs {
            forwarder: self.forwarder,
            allow_ip: self.allow_ip.clone(),
            container: self.container.iter().map(|d| d.net).collect(),
            dead_end: self.dead_end,
        }
    }

    pub(crate) fn has_relays(&self) -> bool {
        !self.local_ports.is_empty() || !self.callback_ports.is_empty()
    }

    /// The packet filter's parts, or `None` without one.
    pub(crate) fn filter_shape(&self) -> Option<Shape> {
        self.packet_filter.then(|| Shape { report: self.report, allowlist: self.allowlist.is_some() && self.enforce_allowlist })
    }
}

/// The plan for `config` on `host`. Pure.
pub fn plan(config: &Config, host: &HostFacts) -> Result<JailPlan, JailError> {
    plan_for(config, host, (host.uid, host.gid))
}

/// The plan for a session whose processes are `outer` (uid, gid) on the
/// host, which may differ from the launcher's (a root launcher's
/// unprivileged session): the jail's namespace maps those. Pure.
pub fn plan_for(config: &Config, host: &HostFacts, outer: (u32, u32)) -> Result<JailPlan, JailError> {
    let allow_ip = sorted(&config.allow_ip);
    allow_ip.iter().try_for_each(|ip| check_allow_ip(*ip))?;
    let local_ports = sorted(&config.local_ports);
    let callback_ports = sorted(&config.callback_ports);
    if local_ports.first() == Some(&0) || callback_ports.first() == Some(&0) {
        return Err(JailError::BadPort);
    }
    if let Some(port) = local_ports.iter().find(|p| callback_ports.contains(p)) {
        return Err(JailError::PortConflict { port: *port });
    }
    let container = destinations(&host.container);
    let routed: Vec<Ipv4Net> = container.iter().map(|d| d.net).collect();
    let forwarder = choose_forwarder(&routed, &allow_ip)?;
    let allowlist = Allowlist::from_entries(&config.allow_domains);
    // With allowDomains the session asks the jail's own forwarder, which
    // asks pasta's; without, pasta's directly.
    let nameserver = if allowlist.is_some() { DNS_LISTEN } else { forwarder };
    let resolver = first_nameserver(&host.resolv_conf);
    if allowlist.is_some() && resolver.is_none() {
        return Err(JailError::NoResolver);
    }
    Ok(JailPlan {
        forwarder,
        allow_ip,
        local_ports,
        callback_ports,
        internet: internet(&host.container, host.uid),
        container,
        follow: true,
        resolv_conf: session_resolv_conf(&host.resolv_conf, nameserver),
        pasta: PastaPlan { path: host.pasta.clone(), args: pasta_args(host.uid, forwarder) },
        uid: host.uid,
        gid: host.gid,
        becomes: (outer != (host.uid, host.gid)).then_some(outer),
        uid_map: id_map(outer.0),
        gid_map: id_map(outer.1),
        setup_timeout: Duration::from_secs(15),
        packet_filter: true,
        dead_end: true,
        report: true,
        allowlist,
        resolver,
        enforce_allowlist: true,
        dns_grace: DNS_GRACE,
    })
}

/// The first IPv4 `nameserver` of a resolv.conf.
fn first_nameserver(text: &str) -> Option<Ipv4Addr> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some("nameserver")).then(|| w.next().and_then(|a| a.parse().ok())).flatten()
    })
}

/// The overflow id ("nobody").
pub(crate) const NOBODY: u32 = 65534;

/// The id the launcher's id has inside the jail's user namespace (what
/// bwrap runs as): itself, except root, which is `nobody` there.
pub fn inner_id(outer: u32) -> u32 {
    if outer == 0 {
        NOBODY
    } else {
        outer
    }
}

/// The jail's id map for the launcher's id `outer` (one "inside outside 1"
/// line). No id is 0 inside, so the holder, which has every capability in
/// its namespace until it execs, keeps none after the exec of the sandbox
/// (execve grants capabilities only to uid 0): bwrap's long-lived monitor
/// process holds no capability over the jail's network.
pub fn id_map(outer: u32) -> String {
    format!("{} {outer} 1\n", inner_id(outer))
}

fn sorted<T: Ord + Clone>(items: &[T]) -> Vec<T> {
    let mut v = items.to_vec();
    v.sort();
    v.dedup();
    v
}

/// allowIp must name one unicast host: the config parser's rule, checked
/// again here for a config value made some other way.
fn check_allow_ip(ip: Ipv4Addr) -> Result<(), JailError> {
    match crate::config::not_allowable(ip) {
        Some(why) => Err(JailError::BadAllowIp { ip, why: why.into() }),
        None => Ok(()),
    }
}

/// The first candidate outside everything the container routes other than
/// by its default route (the forwarder's /32 is routed out, so it would
/// shadow such a destination) and not allowed explicitly.
fn choose_forwarder(connected: &[Ipv4Net], allow_ip: &[Ipv4Addr]) -> Result<Ipv4Addr, JailError> {
    FORWARDER_CANDIDATES
        .iter()
        .copied()
        .find(|c| !allow_ip.contains(c) && connected.iter().all(|n| !n.contains(*c)))
        .ok_or_else(|| JailError::NoForwarderAddress { candidates: FORWARDER_CANDIDATES.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ") })
}

/// The name of the jail's interface: the holder makes it (`run/tap.rs`), pasta
/// attaches to it.
pub const JAIL_IFNAME: &str = "eth0";

/// pasta's options (docs/jail.md, "How it works"): configure the namespace, IPv4 only, no port
/// forwarding in any direction, no gateway-to-loopback mapping, DNS
/// through the forwarder, in the foreground (so it is our child and dies
/// with us), errors on stderr (not only syslog), on the interface the
/// holder made, not watching the namespace for its end (we stop pasta
/// ourselves; the watch is an inotify descriptor whose release makes
/// pasta's exit wait for the kernel for tens of milliseconds). As root, `--runas 0` keeps pasta from dropping to `nobody`,
/// which could not open the namespaces.
pub fn pasta_args(uid: u32, forwarder: Ipv4Addr) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    if uid == 0 {
        args.extend(["--runas".into(), "0".into()]);
    }
    let fixed = [
        "--foreground",
        "--quiet",
        "--stderr",
        "--no-netns-quit",
        "--config-net",
        "--ipv4-only",
        "--no-map-gw",
        "-t",
        "none",
        "-u",
        "none",
        "-T",
        "none",
        "-U",
        "none",
        "--ns-ifname",
        JAIL_IFNAME,
        "--dns-forward",
    ];
    args.extend(fixed.iter().map(|s| s.to_string()));
    args.push(forwarder.to_string());
    args
}

/// The complete pasta argv for the namespaces of the process `target`,
/// reporting readiness through the pid file `pid_file`.
pub fn pasta_argv(p: &PastaPlan, pid_file: &str, target: i32) -> Vec<String> {
    let mut argv = vec!["pasta".to_string()];
    argv.extend(p.args.iter().cloned());
    argv.extend(["--pid".into(), pid_file.into(), target.to_string()]);
    argv
}

#[cfg(test)]
mod tests;
