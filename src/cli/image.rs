//! Maintainer verbs for the reference image: `agent-sandbox image build`
//! (build with podman, docker or buildah, then verify inside it) and
//! `agent-sandbox image publish` (the same, then push under the version's
//! tags). Flags become a `BuildRequest`; `agent_sandbox::image` plans and
//! executes. Only `publish` opens a registry client.

use agent_sandbox::image::{self, exec, plan, BuildRequest, Engine, Target};
use agent_sandbox::oci::{auth, Registry, RegistryClient};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `NODE_EXTRA_CA_CERTS`: the default `--extra-ca` when it names a file.
pub const NODE_EXTRA_CA_CERTS: &str = "NODE_EXTRA_CA_CERTS";

#[derive(Debug, Subcommand)]
pub enum ImageCommand {
    /// Build the reference image from image/ and run `agent-sandbox verify`
    /// inside it as root and as the non-root user (exit status 1 when a
    /// check fails).
    Build(ImageBuildArgs),
    /// Build and verify the image, then push it to an OCI registry as
    /// REPOSITORY:{MAJOR, MAJOR.MINOR, latest, VERSION} (a pre-release only
    /// under its own tag). Refuses to push when verify fails.
    Publish(ImagePublishArgs),
}

#[derive(Debug, Args)]
pub struct BuildFlags {
    /// The engine to build with (default: the first of podman, docker,
    /// buildah found in the system directories).
    #[arg(long, value_name = "ENGINE", value_parser = ["podman", "docker", "buildah"])]
    pub engine: Option<String>,
    /// The local image name (default: localhost/agent-sandbox:VERSION).
    #[arg(long, value_name = "NAME")]
    pub tag: Option<String>,
    /// The agents' CLIs to install (comma-separated: claude, codex, pi;
    /// empty for none).
    #[arg(long, value_name = "LIST", default_value = "claude,codex,pi")]
    pub agents: String,
    /// The image definition folder (Containerfile and its files).
    #[arg(long, value_name = "DIR", default_value = "image")]
    pub definition: PathBuf,
    /// The static agent-sandbox and sandbox-install to copy in (default:
    /// $AGENT_SANDBOX_STATIC_DIR, else this program's folder).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Network mode for the build and the verify containers (e.g. host).
    #[arg(long, value_name = "MODE")]
    pub network: Option<String>,
    /// Rebuild every layer (fresh packages and agent CLIs).
    #[arg(long)]
    pub no_cache: bool,
    /// Extra build argument, e.g. CLAUDE_CODE_VERSION=2.1.0 or
    /// BASE_IMAGE=NAME (repeatable).
    #[arg(long = "build-arg", value_name = "NAME=VALUE")]
    pub build_args: Vec<String>,
    /// A PEM file npm trusts while installing the agents (a TLS-intercepting
    /// proxy's CA); bind-mounted for that step only, never in the image.
    /// Default: $NODE_EXTRA_CA_CERTS when it names a file.
    #[arg(long, value_name = "FILE")]
    pub extra_ca: Option<PathBuf>,
    /// Verify with the egress jail switched off (AGENT_SANDBOX_EGRESS_JAIL=0);
    /// only for a build whose jail cannot run. Reports say so.
    #[arg(long)]
    pub verify_without_jail: bool,
    /// The source revision for the label (default: the definition's git
    /// commit, with -dirty for uncommitted changes).
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImageBuildArgs {
    #[command(flatten)]
    pub flags: BuildFlags,
}

#[derive(Debug, Args)]
pub struct ImagePublishArgs {
    #[command(flatten)]
    pub flags: BuildFlags,
    /// The registry, HOST[:PORT] (plain HTTP only for localhost/127.0.0.1/[::1]).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub registry: String,
    /// The image's path in the registry, e.g. OWNER/agent-sandbox.
    #[arg(long, value_name = "NAME")]
    pub repository: String,
    /// Query the registry and print the tags, labels and commands; build
    /// and push nothing.
    #[arg(long)]
    pub dry_run: bool,
}

fn request(f: &BuildFlags) -> anyhow::Result<(BuildRequest, exec::Sources)> {
    let extra_ca = f.extra_ca.clone().or_else(|| std::env::var_os(NODE_EXTRA_CA_CERTS).map(PathBuf::from).filter(|p| p.is_file()));
    let req = BuildRequest {
        engine: f.engine.as_deref().map(Engine::from_name).transpose()?,
        tag: f.tag.clone(),
        agents: plan::parse_agents(&f.agents)?,
        network: f.network.clone(),
        no_cache: f.no_cache,
        build_args: f.build_args.iter().map(|a| plan::parse_build_arg(a)).collect::<Result<_, _>>()?,
        extra_ca,
        egress_jail: !f.verify_without_jail,
    };
    let sources = exec::Sources { definition: f.definition.clone(), bin_dir: f.bin_dir.clone(), revision: f.revision.clone() };
    Ok((req, sources))
}

pub fn image_cmd(cmd: ImageCommand) -> anyhow::Result<u8> {
    match cmd {
        ImageCommand::Build(a) => build(&a.flags),
        ImageCommand::Publish(a) => publish(&a),
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn build(f: &BuildFlags) -> anyhow::Result<u8> {
    let (req, sources) = request(f)?;
    let work = exec::WorkDir::new()?;
    let inputs = exec::gather(&req, &sources, work.path())?;
    let p = plan::build_plan(&req, &inputs)?;
    let report = exec::build(&p)?;
    if f.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let share = report.sandbox_size.map(|s| format!(", of which the sandbox {}", mb(s))).unwrap_or_default();
        println!("built {} ({}; {}{share}) in {:.0} s", report.tag, report.image_id, mb(report.size), report.build_seconds);
        for v in &report.verify {
            println!("verify {}", v.summary());
        }
    }
    match report.failure() {
        Some(e) => Err(e.into()),
        None => Ok(0),
    }
}

fn publish(a: &ImagePublishArgs) -> anyhow::Result<u8> {
    let (req, sources) = request(&a.flags)?;
    let registry = Registry::parse(&a.registry)?;
    let target = Target::new(registry.clone(), &a.repository)?;
    let work = exec::WorkDir::new()?;
    let inputs = exec::gather(&req, &sources, work.path())?;
    let env: auth::Env = std::env::vars().collect();
    let found = auth::resolve(&registry, &env)?;
    tracing::info!(registry = %registry, source = %found.source, "registry credentials");
    let client = RegistryClient::new(&registry, found.credential)?;
    let report = image::exec::publish(&req, &inputs, &target, &client, a.dry_run)?;
    if a.flags.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    if report.already_published {
        println!("{}:{} is already published; nothing built, tags left as they are", report.reference, report.version);
        return Ok(0);
    }
    if let Some(p) = &report.plan {
        println!("would build {} with {}: {}", p.build.tag, p.build.engine.name(), p.build.build.join(" "));
        let users: Vec<&str> = p.build.verify.iter().map(|v| v.user.as_str()).collect();
        println!("would verify as {} (egress jail {})", users.join(" and "), if p.build.egress_jail { "on" } else { "off" });
        println!("would push {}:{{{}}}", report.reference, report.tags.join(","));
    } else {
        let digest = report.digest.as_ref().map(ToString::to_string).unwrap_or_default();
        println!("pushed {}:{{{}}} ({digest}, {})", report.reference, report.tags.join(","), mb(report.pushed_size.unwrap_or(0)));
    }
    println!("labels:");
    for (k, v) in &report.labels {
        println!("  {k}={v}");
    }
    Ok(0)
}
