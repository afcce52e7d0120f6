//! Maintainer verbs: `agent-sandbox feature package|publish` and
//! `agent-sandbox templates package|publish`. Flags become plain values,
//! the library packages and plans, and only `publish` opens a registry
//! client (its own current-thread runtime; nothing here runs in `run`).

use agent_sandbox_core::arch::bins;
use agent_sandbox_release::oci::{auth, Registry, RegistryClient};
use agent_sandbox_release::publish::{self, feature, template, Kind, Package, Target};
use anyhow::Context as _;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// `SOURCE_DATE_EPOCH`: the archives' file time (reproducible builds).
use agent_sandbox_sys::env_vars::SOURCE_DATE_EPOCH;

#[derive(Debug, Subcommand)]
pub(crate) enum FeatureCommand {
    /// Package the feature collection (with the static binaries) into
    /// OUTPUT: devcontainer-feature-<id>.tgz, devcontainer-collection.json,
    /// and the staged folder src/<id>/ (usable as a local feature).
    Package(FeaturePackageArgs),
    /// Publish the feature collection to an OCI registry, as
    /// `devcontainer features publish` does: <ns>/<id>:{MAJOR, MAJOR.MINOR,
    /// VERSION, latest} and the collection at <ns>:latest.
    Publish(FeaturePublishArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum TemplatesCommand {
    /// Package the templates into OUTPUT (archives, collection file, src/<id>/).
    Package(TemplatesPackageArgs),
    /// Publish the templates to an OCI registry, as `devcontainer templates publish` does.
    Publish(TemplatesPublishArgs),
}

#[derive(Debug, Args)]
pub(crate) struct FeatureSource {
    /// The feature collection folder (src/<id>/...) or one feature folder.
    #[arg(long, value_name = "DIR", default_value = "feature/src")]
    pub source: PathBuf,
    /// Static binaries to bundle as bin/ARCH/ (sandbox-install, agent-sandbox);
    /// repeatable, ARCH is x86_64 or aarch64. Default: every architecture,
    /// from the folders `scripts/build-static.sh` writes
    /// ($AGENT_SANDBOX_STATIC_DIR and its siblings, else target/static/ARCH).
    #[arg(long = "bin-dir", value_name = "ARCH=DIR")]
    pub bin_dirs: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct TemplateSource {
    /// The template collection folder (src/<id>/...) or one template folder.
    #[arg(long, value_name = "DIR", default_value = "templates/src")]
    pub source: PathBuf,
    /// Point the templates' agent-sandbox feature at this repository (no tag;
    /// e.g. ghcr.io/OWNER/agent-sandbox/agent-sandbox), keeping each reference's tag.
    #[arg(long, value_name = "REPOSITORY")]
    pub feature: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// Where to write the package.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "output")]
    pub output: PathBuf,
    /// Write into a non-empty OUTPUT (replaces only the files packaging writes).
    #[arg(long)]
    pub force: bool,
    /// Print what was written as JSON (paths, digests, sizes).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// The registry, HOST[:PORT] (plain HTTP only for localhost/127.0.0.1/[::1]).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub registry: String,
    /// The collection's path in the registry, e.g. OWNER/agent-sandbox.
    #[arg(long, value_name = "NS")]
    pub namespace: String,
    /// Query the registry and print the plan, push nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print what was pushed as JSON (references, tags, digests).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct FeaturePackageArgs {
    #[command(flatten)]
    pub source: FeatureSource,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct FeaturePublishArgs {
    #[command(flatten)]
    pub source: FeatureSource,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
pub(crate) struct TemplatesPackageArgs {
    #[command(flatten)]
    pub source: TemplateSource,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct TemplatesPublishArgs {
    #[command(flatten)]
    pub source: TemplateSource,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub(crate) fn feature_cmd(cmd: FeatureCommand) -> anyhow::Result<u8> {
    match cmd {
        FeatureCommand::Package(a) => write(&feature_package(&a.source)?, &a.out),
        FeatureCommand::Publish(a) => {
            let target = target(&a.target)?;
            push(&feature_package(&a.source)?, &target, &a.target)
        }
    }
}

pub(crate) fn templates_cmd(cmd: TemplatesCommand) -> anyhow::Result<u8> {
    match cmd {
        TemplatesCommand::Package(a) => write(&templates_package(&a.source)?, &a.out),
        TemplatesCommand::Publish(a) => {
            let target = target(&a.target)?;
            push(&templates_package(&a.source)?, &target, &a.target)
        }
    }
}

fn mtime() -> u64 {
    publish::mtime_from(std::env::var(SOURCE_DATE_EPOCH).ok().as_deref())
}

/// A missing source folder is most often a command run outside the repository.
fn check_source(dir: &Path, kind: &str) -> anyhow::Result<()> {
    if !dir.is_dir() {
        anyhow::bail!(
            "{} is not a folder; run this in the agent-sandbox repository root or pass --source DIR (the {kind} collection's src/ folder)",
            dir.display()
        );
    }
    Ok(())
}

fn feature_package(src: &FeatureSource) -> anyhow::Result<Package> {
    check_source(&src.source, "feature")?;
    let explicit = src.bin_dirs.iter().map(|s| feature::parse_bin_dir(s)).collect::<Result<Vec<_>, _>>()?;
    let dirs = feature::default_bin_dirs(explicit, &bins::Search::from_env(), bins::has_binaries)?;
    let binaries = feature::read_binaries(&dirs)?;
    let arches: Vec<&str> = dirs.iter().map(|d| d.arch.name()).collect();
    eprintln!("agent-sandbox feature: bundling the static binaries for {}", arches.join(", "));
    let items = publish::prepare_features(&src.source, &binaries)?;
    Ok(publish::package::package(Kind::Feature, &items, mtime())?)
}

fn templates_package(src: &TemplateSource) -> anyhow::Result<Package> {
    check_source(&src.source, "template")?;
    let rewrite = src.feature.as_deref().map(template::FeatureRewrite::parse).transpose()?;
    let items = publish::prepare_templates(&src.source, rewrite.as_ref())?;
    Ok(publish::package::package(Kind::Template, &items, mtime())?)
}

fn write(pkg: &Package, out: &OutputArgs) -> anyhow::Result<u8> {
    let report = publish::write_package(pkg, &out.output, out.force)?;
    if out.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for i in &report.items {
            outln!("{} {} {} -> {} ({}, {} bytes)", report.kind, i.id, i.version, i.archive.display(), i.digest, i.size);
        }
        outln!("collection -> {}", report.collection.display());
    }
    Ok(0)
}

/// The target, checked before anything is packaged.
fn target(t: &TargetArgs) -> anyhow::Result<Target> {
    Ok(Target::new(Registry::parse(&t.registry)?, &t.namespace)?)
}

fn push(pkg: &Package, target: &Target, t: &TargetArgs) -> anyhow::Result<u8> {
    let registry = target.registry.clone();
    // vars_os: a variable that is not UTF-8 is skipped, not a panic.
    let env: auth::Env = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    let found = auth::resolve(&registry, &env)?;
    tracing::info!(registry = %registry, source = %found.source, "registry credentials");
    let client = RegistryClient::new(&registry, found.credential)?;
    let report =
        publish::publish(pkg, target, &client, t.dry_run).with_context(|| format!("publishing the {}s to {registry}/{}", pkg.kind.word(), target.namespace))?;
    if t.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    let verb = if t.dry_run { "would push" } else { "pushed" };
    for i in &report.items {
        if i.already_published {
            outln!("{} {} is already published; tags left as they are", i.reference, i.version);
        } else {
            outln!("{verb} {}:{{{}}} ({})", i.reference, i.tags.join(","), i.digest);
        }
    }
    let c = &report.collection;
    outln!("{verb} {}:latest ({}) [collection]", c.reference, c.digest);
    Ok(0)
}
