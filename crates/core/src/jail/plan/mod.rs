//! The jail's pure half: values computed from the configuration, the host
//! facts and what the kernel reports, and the checks of one against the
//! other. Nothing here touches the system; tests build and compare whole
//! values. Executing them is `super::run`.

pub mod allowlist;
pub(super) mod compare;
pub mod container;
pub mod dns;
pub mod filter;
pub(super) mod launch;
pub mod nftwire;
pub(crate) mod readback;
pub mod report;
pub(super) mod resolv;
pub(super) mod routes;
