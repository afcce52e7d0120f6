//! The egress jail (SPEC §4): the session runs in its own network
//! namespace, owned by a user namespace the sandbox's namespaces descend
//! from, connected to the outside by pasta, with a locked route table that
//! blackholes internal networks and cloud metadata.
//!
//! Decide as data, act once:
//! - `host_facts` reads the container (TUN device, trusted pasta,
//!   resolv.conf, connected subnets, user-namespace sysctls);
//! - `plan` turns config + facts into a `JailPlan` (pure);
//! - `run_jailed` executes it: holder (`holder.rs`, which also makes the
//!   interface, `tap.rs`), pasta (`pasta.rs`),
//!   route lock (`lock.rs`, planned by `routes.rs`, checked by
//!   `compare.rs`) and the packet filter below it (planned and checked by
//!   `filter.rs`, spoken to the kernel by `nft.rs` in `nftwire.rs`'s
//!   messages), relays (`relay.rs`, `fdpass.rs`), then the sandbox.
//!
//! Not here: the sandbox itself (bwrap argv, `sandbox`), the config
//! parser (`config`), deciding whether the jail is on (the launcher).

mod compare;
mod error;
mod fdpass;
pub mod filter;
pub mod gate;
mod holder;
mod host;
pub(crate) mod lock;
mod locker;
mod net;
mod nft;
pub mod nftwire;
mod pasta;
mod plan;
mod readback;
mod relay;
mod resolv;
mod routes;
mod session;
mod sys;
pub(crate) mod tap;

pub use compare::{compare, Difference};
pub use error::{packet_filter_fix, JailError};
pub use lock::probe_filter;
pub use gate::{GATE_FD, GATE_PATH};
pub use host::{
    connected_subnets, current_userns_facts, diagnose_userns, host_facts, host_facts_with, userns_diagnosis, userns_preflight,
    HostFacts, HostProbe, UsernsBlocker, UsernsDiagnosis, UsernsFacts, PASTA_DIRS, TUN_PATH,
};
pub use nft::{try_create_probe_table, PROBE_TABLE};
pub use net::{blocked_ranges, Block, Ipv4Net, BLOCKED_RANGES, FORWARDER_CANDIDATES};
pub use plan::{inner_id, pasta_args, pasta_argv, plan, JailPlan, PastaPlan, JAIL_IFNAME};
pub use resolv::session_resolv_conf;
pub use routes::{
    net_plan, observe, Family, IfAddr, NetPlan, ObserveError, Observed, PlanInputs, Route, RouteKind, Rule, Scope,
    Snapshot,
};
pub use session::run_jailed;
