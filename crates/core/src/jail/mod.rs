//! The egress jail (docs/jail.md): the session runs in its own network
//! namespace, owned by a user namespace the sandbox's namespaces descend
//! from, connected to the outside by pasta, with a locked route table that
//! blackholes internal networks and cloud metadata.
//!
//! Decide as data, act once — the tree shows which is which:
//! - `net`: IPv4 prefixes and the blocked ranges, the vocabulary of both
//!   halves and of the host facts;
//! - `host` (`host_facts`) reads the container (TUN device, trusted pasta,
//!   resolv.conf, its routes, rules and addresses, user-namespace sysctls);
//! - `plan/`: pure values only. `container` derives what the container
//!   reaches other than by its default route (blocked) and what the jail
//!   treats as the internet; `launch` turns config + facts into a
//!   `JailPlan`; `routes` plans the locked route table, `filter` the packet
//!   filter below it; `readback` normalises
//!   the kernel's dumps, `compare` checks them against the plan; `nftwire`
//!   encodes and decodes the nf_tables messages; `resolv` writes the
//!   session's resolv.conf;
//! - `run/`: the effects. `run_jailed` (`session`) executes the plan: the
//!   holder (`holder`, which also makes the interface, `tap`), pasta
//!   (`pasta`), the child that joins the jail's namespaces from outside
//!   (`join`) and locks them there (`lockdown`: routes, then the packet
//!   filter, sent by `nft`, each read back), the relays (`relay`,
//!   `fdpass`), the gate (`gate`), then the sandbox; during the session
//!   the watch on the container's routes (`follow`); `netlink` is how
//!   the locker and the follower speak rtnetlink (a current-thread
//!   runtime, inside the namespaces), `rtnl` the launcher's blocking
//!   client, `sys` the process plumbing they share.
//!
//! Not here: the sandbox itself (bwrap argv, `sandbox`), the config
//! parser (`config`), deciding whether the jail is on (the launcher).

mod error;
mod host;
mod net;
pub mod plan;
pub mod run;

pub use error::{packet_filter_fix, JailError};
pub use host::{
    container_net, current_userns_facts, diagnose_userns, host_facts, host_facts_with, node_mode, tun_permission_fix, userns_diagnosis, userns_preflight,
    HostFacts, HostProbe, UsernsBlocker, UsernsDiagnosis, UsernsFacts, PASTA_DIRS, TUN_PATH,
};
pub use net::{blocked_ranges, default_route_in, Block, Ipv4Net, BLOCKED_RANGES, FORWARDER_CANDIDATES};
pub use plan::allowlist::Allowlist;
pub use plan::compare::{compare, Difference};
pub use plan::container::{connected_only, covers_everything, destinations, internet, ContainerNet, Destination, Internet, PolicyRule, Source};
pub use plan::launch::{id_map, inner_id, pasta_args, pasta_argv, plan, plan_for, JailPlan, PastaPlan, DNS_GRACE, DNS_LISTEN, JAIL_IFNAME};
pub use plan::report::JailReport;
pub use plan::resolv::session_resolv_conf;
pub use plan::routes::{net_plan, observe, Family, IfAddr, NetPlan, ObserveError, Observed, PlanInputs, Route, RouteKind, Rule, Scope, Snapshot};
pub use run::gate::{GATE_FD, GATE_PATH};
pub use run::lockdown::probe_filter;
pub use run::nft::{try_create_probe_table, PROBE_TABLE};
pub use run::session::{run_jailed, Ended};
pub(crate) use run::sys::{close_fds_except, die_with_parent, fork_child, ignored as signal_ignored};
