//! The jail's effects: the processes, namespaces, netlink sockets and
//! descriptors that carry out the plan (`super::plan`), in the order
//! `session` fixes. Decisions stay in `plan`; what is read here is handed
//! back to it (`readback`, `compare`) to judge.

pub(super) mod fdpass;
pub(super) mod follow;
pub(super) mod forwarder;
pub mod gate;
pub(super) mod holder;
pub(super) mod join;
pub(crate) mod lockdown;
pub(super) mod netlink;
pub(crate) mod nft;
pub(super) mod pasta;
pub(super) mod relay;
pub mod rtnl;
pub(super) mod session;
pub(super) mod sys;
pub mod tap;
