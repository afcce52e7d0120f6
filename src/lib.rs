//! agent-sandbox: run AI coding agents inside a bubblewrap sandbox with an
//! egress jail. This library is the workspace's crates under the one name
//! the binaries (`cli`) and the integration suite use; what each holds is
//! said in its own lib.rs.

pub use agent_sandbox_core::{agents, arch, config, container_seccomp, jail, launch, layout, review, sandbox, sysbin};
pub use agent_sandbox_doctor as doctor;
pub use agent_sandbox_install as install;
pub use agent_sandbox_sys::{child, confinement, env_vars, finding, fixes, idmap, jsonc, nofollow, out, outln, output, resident, terminal};
pub use agent_sandbox_verify as verify;
