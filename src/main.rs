//! The `agent-sandbox` binary, also invoked through the `claude`, `codex`
//! and `pi` shims (the name it is called by selects the agent). Parses,
//! then acts; errors become one readable line and exit status 1.
//!
//! The process stays single-threaded until it execs the session: the jail's
//! namespace work needs that, so no runtime or thread starts here.

#[macro_use]
extern crate agent_sandbox;

/// musl's allocator hands freed memory back to the kernel at once: a
/// launch spent more of its time in munmap than in any other system call.
/// dlmalloc keeps it for reuse (0.3-0.6 ms off a launch of the static build).
#[global_allocator]
static ALLOC: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

mod cli;

use agent_sandbox::agents::Agent;
use clap::Parser;
use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The allocator's lock is taken around fork(2), so a child forked
    // while another thread allocates never finds it held. SAFETY: first
    // thing, before this program's own allocations, as the crate asks.
    unsafe { dlmalloc::enable_alloc_after_fork() };
    let mut argv: Vec<OsString> = std::env::args_os().collect();
    // Inside a jailed session, as its first program (nothing else runs
    // first: the gate becomes the session's command).
    if argv.first().is_some_and(|a| agent_sandbox::jail::run::gate::is_gate(a)) {
        return ExitCode::from(agent_sandbox::jail::run::gate::pass(&argv[1..]));
    }
    agent_sandbox::output::init_logging();
    let argv0 = argv.first().cloned().unwrap_or_default();
    let result = match Agent::from_argv0(&argv0) {
        // A shim: every argument belongs to the agent.
        Some(agent) => cli::run::shim(agent, argv.split_off(1)),
        None => cli::dispatch(cli::args::Cli::parse_from(argv)),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("agent-sandbox: {e:#}");
            ExitCode::from(1)
        }
    }
}
