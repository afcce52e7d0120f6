//! Maintainer verbs for the reference image: `agent-sandbox image build`
//! (build with podman, docker or buildah, then verify inside it) and
//! `agent-sandbox image publish` (the same, then push under the version's
//! tags). Flags become a `BuildRequest`; `agent_sandbox_release::image` plans and
//! executes. Only `publish` opens a registry client.

use agent_sandbox_core::agents::Agent;
use agent_sandbox_release::image::{self, exec, plan, BuildRequest, Engine, Target};
use agent_sandbox_release::oci::{auth, Registry, RegistryClient};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `NODE_EXTRA_CA_CERTS`: the default `--extra-ca` when it names a file.
use agent_sandbox_sys::env_vars::NODE_EXTRA_CA_CERTS;

#[derive(Debug, Subcommand)]
pub(crate) enum ImageCommand {
    /// Build the reference image from image/ and run `agent-sandbox verify`
    /// inside it as root and as the non-root user (exit status 1 when a
    /// check fails). With --platform, one image per platform; a platform
    /// this machine only emulates is checked with doctor (sessions cannot
    /// start under emulation).
    Build(ImageBuildArgs),
    /// Build and verify the image for linux/amd64 and linux/arm64, then push
    /// it to an OCI registry as REPOSITORY:{MAJOR, MAJOR.MINOR, latest,
    /// VERSION} (a pre-release only under its own tag): an OCI index of both
    /// platforms. Refuses to push when a check fails.
    Publish(ImagePublishArgs),
}

#[derive(Debug, Args)]
pub(crate) struct BuildFlags {
    /// The engine to build with (default: the first of podman, docker,
    /// buildah found in the system directories).
    #[arg(long, value_name = "ENGINE", value_parser = ["podman", "docker", "buildah"])]
    pub engine: Option<String>,
    /// The local image name (default: localhost/agent-sandbox:VERSION).
    #[arg(long, value_name = "NAME")]
    pub tag: Option<String>,
    /// The agents' CLIs to install (comma-separated: claude, codex, pi;
    /// empty for none).
    #[arg(long, value_name = "LIST", default_value = "claude,codex,pi", value_delimiter = ',', value_parser = Agent::parse_list_entry)]
    pub agents: Vec<Option<Agent>>,
    /// The image definition folder (Containerfile and its files).
    #[arg(long, value_name = "DIR", default_value = "image")]
    pub definition: PathBuf,
    /// The static agent-sandbox and sandbox-install to copy in, as ARCH=DIR
    /// (repeatable; a plain DIR is this machine's). Default: the folders
    /// `scripts/build-static.sh` writes ($AGENT_SANDBOX_STATIC_DIR and its
    /// siblings, else target/static/ARCH), else this program's folder.
    #[arg(long = "bin-dir", value_name = "[ARCH=]DIR")]
    pub bin_dirs: Vec<String>,
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
    pub(crate) verify_without_jail: bool,
    /// The source revision for the label (default: the definition's git
    /// commit, with -dirty for uncommitted changes).
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ImageBuildArgs {
    #[command(flatten)]
    pub flags: BuildFlags,
    /// The platforms to build, comma-separated: linux/amd64, linux/arm64
    /// (default: this machine's). Another architecture than this machine's
    /// builds under emulation (qemu-user registered with binfmt_misc).
    #[arg(long, value_name = "LIST")]
    pub platform: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ImagePublishArgs {
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
    /// The platforms to publish under the tags, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "linux/amd64,linux/arm64")]
    pub platform: String,
    /// Publish platforms this machine only runs under emulation (e.g.
    /// linux/arm64 on x86_64): sessions cannot start there, so they are
    /// checked with doctor and their installed files, not the verify
    /// battery. Without it such a publish is refused.
    #[arg(long)]
    pub(crate) allow_emulated: bool,
}

fn request(f: &BuildFlags, platforms: Option<&str>) -> anyhow::Result<(BuildRequest, exec::Sources)> {
    let extra_ca = f.extra_ca.clone().or_else(|| std::env::var_os(NODE_EXTRA_CA_CERTS).map(PathBuf::from).filter(|p| p.is_file()));
    let req = BuildRequest {
        engine: f.engine.as_deref().map(Engine::from_name).transpose()?,
        tag: f.tag.clone(),
        agents: Agent::from_list(&f.agents),
        network: f.network.clone(),
        no_cache: f.no_cache,
        build_args: f.build_args.iter().map(|a| plan::parse_build_arg(a)).collect::<Result<_, _>>()?,
        extra_ca,
        egress_jail: !f.verify_without_jail,
        platforms: platforms.map(plan::parse_platforms).transpose()?.unwrap_or_default(),
    };
    let sources = exec::Sources { definition: f.definition.clone(), bin_dirs: f.bin_dirs.clone(), revision: f.revision.clone() };
    Ok((req, sources))
}

pub(crate) fn image_cmd(cmd: ImageCommand) -> anyhow::Result<u8> {
    match cmd {
        ImageCommand::Build(a) => build(&a.flags, a.platform.as_deref()),
        ImageCommand::Publish(a) => publish(&a),
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn build(f: &BuildFlags, platforms: Option<&str>) -> anyhow::Result<u8> {
    let (req, sources) = request(f, platforms)?;
    let work = exec::WorkDir::new()?;
    let inputs = exec::gather(&req, &sources, work.path())?;
    let p = plan::build_plan(&req, &inputs)?;
    let report = exec::build(&p)?;
    if f.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for v in &report.variants {
            let share = v.sandbox_size.map(|s| format!(", of which the sandbox {}", mb(s))).unwrap_or_default();
            outln!("built {} for {} ({}; {}{share}) in {:.0} s", v.tag, v.platform, v.image_id, mb(v.size), v.build_seconds);
            for line in v.summaries() {
                outln!("verify {line}");
            }
        }
        if !report.sessions_verified && report.verified {
            outln!("note: emulated platforms were checked with doctor only; sessions were not run on them (docs/image.md)");
        }
    }
    match report.failure() {
        Some(e) => Err(e.into()),
        None => Ok(0),
    }
}

fn publish(a: &ImagePublishArgs) -> anyhow::Result<u8> {
    let (req, sources) = request(&a.flags, Some(&a.platform))?;
    let registry = Registry::parse(&a.registry)?;
    let target = Target::new(registry.clone(), &a.repository)?;
    let work = exec::WorkDir::new()?;
    let inputs = exec::gather(&req, &sources, work.path())?;
    let env: auth::Env = std::env::vars().collect();
    let found = auth::resolve(&registry, &env)?;
    tracing::info!(registry = %registry, source = %found.source, "registry credentials");
    let client = RegistryClient::new(&registry, found.credential)?;
    let report = image::exec::publish(&req, &inputs, &target, &client, a.dry_run, a.allow_emulated)?;
    if a.flags.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    if report.already_published {
        outln!("{}:{} is already published; nothing built, tags left as they are", report.reference, report.version);
        return Ok(0);
    }
    if let Some(p) = &report.plan {
        for v in &p.build.variants {
            outln!("would build {} for {} with {}: {}", v.tag, v.platform, p.build.engine.name(), v.build.join(" "));
            if v.check == image::Check::Emulated {
                outln!("would check {} under emulation with uname -m and doctor (sessions cannot start there)", v.platform);
            } else {
                let users: Vec<&str> = v.verify.iter().map(|r| r.user.as_str()).collect();
                outln!("would verify {} as {} (egress jail {})", v.platform, users.join(" and "), if p.build.egress_jail { "on" } else { "off" });
            }
        }
        let what = if p.index { "an index of the platforms" } else { "the image" };
        outln!("would push {what} as {}:{{{}}}", report.reference, report.tags.join(","));
    } else {
        let digest = report.digest.as_ref().map(ToString::to_string).unwrap_or_default();
        outln!("pushed {}:{{{}}} ({digest}, {})", report.reference, report.tags.join(","), mb(report.pushed_size.unwrap_or(0)));
        for pl in &report.platforms {
            let how = if pl.check == image::Check::Emulated { "checked under emulation, sessions not run" } else { "verified" };
            outln!("  {} {} ({}, {how})", pl.platform, pl.digest, mb(pl.size));
        }
    }
    outln!("labels:");
    for (k, v) in &report.labels {
        outln!("  {k}={v}");
    }
    Ok(0)
}
