//! The `agent-sandbox` binary, also invoked through the `claude`, `codex`
//! and `pi` shims (the name it is called by selects the agent). Parses,
//! then acts; errors become one readable line and exit status 1.
//!
//! The process stays single-threaded until it execs the session: the jail's
//! namespace work needs that, so no runtime or thread starts here.

#[macro_use]
extern crate agent_sandbox;

mod cli;

use agent_sandbox::agents::Agent;
use clap::Parser;
use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
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
