//! The `sandbox-install` binary: parses the options into
//! `install::Options`, runs the installer, prints the plan or the outcome.
//! Exit status: 0 done (or up to date), 1 failed, 2 usage error.

use agent_sandbox::agents::Agent;
use agent_sandbox::doctor;
use agent_sandbox::install::{self, content::ConfigSeed, users};
use clap::Parser;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "sandbox-install",
    version,
    about = "Install agent-sandbox: the binary, the claude/codex/pi shims, PATH order, the default config, the agents' managed settings and the dependencies",
    after_help = "Runs as root (except --dry-run and --root). A second run changes nothing; --uninstall removes what it installed and restores what it replaced. See docs/install.md."
)]
struct Cli {
    /// Agents whose shims and managed settings to install (comma-separated).
    #[arg(long, value_name = "LIST", default_value = "claude,codex,pi", value_delimiter = ',', value_parser = Agent::parse_list_entry)]
    agents: Vec<Option<Agent>>,
    /// The user sessions run as (e.g. vscode, node); default: $_REMOTE_USER.
    #[arg(long, value_name = "NAME")]
    user: Option<String>,
    /// The agent-sandbox binary to install (default: the one beside sandbox-install).
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Stage into this directory instead of / (no packages, no checks).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Print the plan and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Remove what an earlier run installed and restore what it replaced.
    #[arg(long)]
    uninstall: bool,
    /// Do not install (or, with --uninstall, remove) packages.
    #[arg(long)]
    no_deps: bool,
    /// Print the plan and outcome as JSON.
    #[arg(long)]
    json: bool,
    /// New config: turn the egress jail off (egressJail: false).
    #[arg(long)]
    no_egress_jail: bool,
    /// New config: an IPv4 address reachable despite the jail (repeatable, or comma-separated).
    #[arg(long = "allow-ip", value_name = "IP", value_delimiter = ',')]
    allow_ip: Vec<Ipv4Addr>,
    /// New config: a host name, `*.` wildcard or preset (`@agents`, `@registries`) sessions may reach; with any, only those (allowDomains; repeatable, or comma-separated).
    #[arg(long = "allow-domain", value_name = "NAME", value_delimiter = ',', value_parser = allow_domain)]
    allow_domains: Vec<String>,
    /// New config: a loopback port relayed into the jail (repeatable).
    #[arg(long = "local-port", value_name = "PORT", value_delimiter = ',')]
    local_ports: Vec<u16>,
    /// New config: a loopback port relayed to the agent, for OAuth callbacks (repeatable).
    #[arg(long = "callback-port", value_name = "PORT", value_delimiter = ',')]
    callback_ports: Vec<u16>,
    /// New config: hide forge tokens from sessions (noForge: true).
    #[arg(long)]
    no_forge: bool,
}

/// An `--allow-domain` value, checked and normalised as the configuration
/// would take it.
fn allow_domain(s: &str) -> Result<String, String> {
    agent_sandbox::config::domains::normalise(s)
}

fn options(cli: &Cli) -> Result<install::Options, install::InstallError> {
    let mut agents = Agent::from_list(&cli.agents);
    agents.sort();
    let env_user = std::env::var(users::REMOTE_USER_ENV).ok();
    let user = users::requested(cli.user.as_deref(), env_user.as_deref()).map(|n| (n, if cli.user.is_some() { "--user" } else { users::REMOTE_USER_ENV }));
    Ok(install::Options {
        agents,
        root: cli.root.clone(),
        dry_run: cli.dry_run,
        uninstall: cli.uninstall,
        no_deps: cli.no_deps,
        user,
        binary: cli.binary.clone(),
        seed: ConfigSeed {
            egress_jail: cli.no_egress_jail.then_some(false),
            allow_ip: cli.allow_ip.clone(),
            allow_domains: cli.allow_domains.clone(),
            local_ports: cli.local_ports.clone(),
            callback_ports: cli.callback_ports.clone(),
            no_forge: cli.no_forge.then_some(true),
        },
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let start = std::time::Instant::now();
    let result = options(&cli).and_then(|o| install::run(&o, doctor::after_install).map(|out| (o, out)));
    match result {
        Ok((opts, out)) => {
            if cli.json {
                write_out(&format!("{}\n", serde_json::to_string_pretty(&out).unwrap_or_default()));
            } else {
                let root = opts.root.unwrap_or_else(|| PathBuf::from("/"));
                write_out(&install::render::outcome(&out, &root, start.elapsed().as_secs_f64()));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("sandbox-install: {e}");
            ExitCode::from(1)
        }
    }
}

/// The report on stdout; a reader that went away (`| head`) is not an error
/// worth a panic: the install already happened, the exit status says so.
fn write_out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
}
