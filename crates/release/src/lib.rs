//! The maintainers' program's library (`agent-sandbox-release`): OCI
//! artifacts and the registry client, publishing the devcontainer feature
//! and templates, building and publishing the reference image. Its own
//! crate so the registry client and its TLS stack are linked into this
//! program only, never into the launcher sessions exec.

// The crates below, under the names this crate has always used.
use agent_sandbox_core::{agents, arch, container_seccomp, sysbin};
use agent_sandbox_sys::{env_vars, jsonc};

pub mod image;
pub mod oci;
pub mod publish;
