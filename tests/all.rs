//! The integration tests, in one binary: `suite` holds one module per area
//! (sandbox, jail, verify, doctor, review, protect, host_view, install,
//! publish, feature_e2e, image, arm64, docker), `support` the helpers they
//! share (the launcher driver, podman, the registry, the Docker engine and
//! the jail's lab).
//!
//! They run real sessions, namespaces, containers and a registry, as root;
//! a missing prerequisite fails a test, nothing is skipped. One area:
//! `cargo test --test all suite::jail::` (a test: `cargo test --test all
//! suite::jail::reachability_matrix`). The areas run side by side; each of
//! the jail's tests has the process to itself (`support::own_machine`), and
//! scripts/test.sh runs three processes side by side: the jail's area, the
//! areas that build images and containers (all their tests at once), and
//! the rest (what processes of the suite share is locked by file as well:
//! `support::across_processes`).

// All of this is test code: a failed expectation panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
mod support;
