//! agent-sandbox: run AI coding agents inside a bubblewrap sandbox with an
//! egress jail. The library decides everything as data (config, plans) and
//! keeps side effects behind a few narrow seams (`sandbox::exec`, `jail`).

pub mod agents;
pub mod arch;
pub mod child;
pub mod config;
pub mod confinement;
pub mod container_seccomp;
pub mod doctor;
pub mod env_vars;
pub mod finding;
pub mod fixes;
pub mod idmap;
#[cfg(feature = "release-tools")]
pub mod image;
pub mod install;
pub mod jail;
pub mod jsonc;
pub mod launch;
pub mod layout;
pub mod nofollow;
#[cfg(feature = "release-tools")]
pub mod oci;
pub mod output;
#[cfg(feature = "release-tools")]
pub mod publish;
pub mod resident;
pub mod review;
pub mod sandbox;
pub mod sysbin;
pub mod terminal;
pub mod verify;
