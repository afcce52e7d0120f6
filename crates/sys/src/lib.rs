//! The floor every other crate of agent-sandbox stands on: process and
//! file-system primitives (the one child-process helper, walks that follow
//! no link, id maps, the resident-memory and terminal guards), the one
//! registry of environment variables, and the shared shapes of findings,
//! fixes and output. Nothing here knows about sessions, plans or the jail;
//! the compiler keeps it so (this crate depends on no other of ours).

pub mod child;
pub mod confinement;
pub mod env_vars;
pub mod finding;
pub mod fixes;
pub mod idmap;
pub mod jsonc;
pub mod nofollow;
pub mod output;
pub mod resident;
pub mod terminal;
