//! The reference image's build, verify and push, decided as values: the
//! build context's files, the engine command lines, the labels, the verify
//! container (started as root like a devcontainer; the battery exec'd as
//! root and as the non-root user, jail on unless asked otherwise), the tag
//! set and the push plan. Pure functions of the request and gathered
//! inputs; `exec` runs what they return. Tested as whole values
//! (plan_tests.rs).

use super::engine::{self, Engine, Export, Tools};
use super::error::ImageError;
use super::labels::{self, Provenance, REMOTE_USER};
use super::layout::LocalImage;
use super::verify::{self, VerifyRun};
use crate::agents::Agent;
use crate::oci::manifest::Artifact;
use crate::oci::push::{FileBlob, PushItem, PushPlan};
use crate::oci::reference::check_repository;
use crate::oci::semver::{tag_set, TagSet, Version};
use crate::oci::Registry;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Build arguments this command sets itself, and the flag that sets each.
pub const RESERVED_BUILD_ARGS: &[(&str, &str)] = &[("AGENTS", "--agents")];
/// The variable that switches the egress jail off for a verify run.
pub const JAIL_OFF: (&str, &str) = ("AGENT_SANDBOX_EGRESS_JAIL", "0");
/// The static binaries copied into the build context's `bin/`.
pub const BINARIES: [&str; 2] = ["agent-sandbox", "sandbox-install"];
/// Where `--extra-ca` lands in the context (bind-mounted by the npm step only).
pub const EXTRA_CA: &str = "build/extra-ca.pem";

/// What the maintainer asked for, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRequest {
    pub engine: Option<Engine>,
    pub tag: Option<String>,
    pub agents: Vec<Agent>,
    pub network: Option<String>,
    pub no_cache: bool,
    pub build_args: Vec<(String, String)>,
    pub extra_ca: Option<PathBuf>,
    /// Verify with the egress jail on (the default).
    pub egress_jail: bool,
}

/// `--agents claude,codex,pi` (any order, duplicates dropped, empty: none).
pub fn parse_agents(list: &str) -> Result<Vec<Agent>, ImageError> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let a = Agent::from_name(name).map_err(|_| ImageError::UnknownAgent(name.to_owned()))?;
        if !out.contains(&a) {
            out.push(a);
        }
    }
    Ok(out)
}

/// `--build-arg NAME=VALUE`.
pub fn parse_build_arg(s: &str) -> Result<(String, String), ImageError> {
    let (k, v) = s.split_once('=').ok_or_else(|| ImageError::BadBuildArg(s.to_owned()))?;
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(ImageError::BadBuildArg(s.to_owned()));
    }
    if let Some((_, flag)) = RESERVED_BUILD_ARGS.iter().find(|(r, _)| *r == k) {
        return Err(ImageError::ReservedBuildArg(k.to_owned(), flag));
    }
    Ok((k.to_owned(), v.to_owned()))
}

/// The local image name when no `--tag` is given.
pub fn default_tag(version: &str) -> String {
    format!("localhost/agent-sandbox:{version}")
}

fn check_tag(tag: &str) -> Result<(), ImageError> {
    if tag.is_empty() || tag.starts_with('-') || tag.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ImageError::BadTag(tag.to_owned()));
    }
    Ok(())
}

/// What `exec::gather` observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    pub tools: Tools,
    pub provenance: Provenance,
    /// The image definition folder and its regular files (relative paths).
    pub definition: PathBuf,
    pub definition_files: Vec<PathBuf>,
    /// The folder with the static binaries.
    pub bin_dir: PathBuf,
    /// A private working folder (context, export).
    pub work: PathBuf,
    /// A name no other container has, for the verify container.
    pub container: String,
}

/// One file of the build context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextFile {
    /// Relative to the context folder.
    pub dest: PathBuf,
    pub source: PathBuf,
}

/// The whole build and verify, decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildPlan {
    pub engine: Engine,
    pub runner: Engine,
    pub tag: String,
    pub agents: Vec<&'static str>,
    pub context: PathBuf,
    pub context_files: Vec<ContextFile>,
    pub build: Vec<String>,
    #[serde(serialize_with = "pairs_as_map")]
    pub labels: Vec<(String, String)>,
    pub inspect: Vec<String>,
    /// Starts the verify container (root, as a devcontainer starts).
    pub start: Vec<String>,
    /// Measures what the sandbox adds to the image (bubblewrap, passt, the binaries).
    pub measure: Vec<String>,
    /// The battery as root, then as the non-root user, in that container.
    pub verify: Vec<VerifyRun>,
    /// Removes the verify container (always, even after a failure).
    pub remove: Vec<String>,
    pub egress_jail: bool,
}

/// Serialises `(key, value)` pairs as a JSON object, in their order.
pub fn pairs_as_map<S: serde::Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap as _;
    let mut m = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// Prints the installed size of bubblewrap and passt (KiB) and of the
/// installed binaries (bytes), one `NAME SIZE UNIT` per line.
pub const MEASURE_SCRIPT: &str = "dpkg-query -W -f '${Package} ${Installed-Size} KiB\\n' bubblewrap passt && \
     stat -c '%n %s B' /usr/local/lib/agent-sandbox/bin/agent-sandbox /usr/local/lib/agent-sandbox/bin/sandbox-install";

pub fn build_plan(req: &BuildRequest, inp: &Inputs) -> Result<BuildPlan, ImageError> {
    let tag = req.tag.clone().unwrap_or_else(|| default_tag(&inp.provenance.version));
    check_tag(&tag)?;
    let context = inp.work.join("context");
    let generated: Vec<PathBuf> = BINARIES.iter().map(|b| Path::new("bin").join(b)).chain(req.extra_ca.iter().map(|_| PathBuf::from(EXTRA_CA))).collect();
    let mut context_files: Vec<ContextFile> = inp
        .definition_files
        .iter()
        .filter(|f| !generated.contains(f))
        .map(|f| ContextFile { dest: f.clone(), source: inp.definition.join(f) })
        .collect();
    context_files.extend(BINARIES.iter().map(|b| ContextFile { dest: Path::new("bin").join(b), source: inp.bin_dir.join(b) }));
    if let Some(ca) = &req.extra_ca {
        context_files.push(ContextFile { dest: PathBuf::from(EXTRA_CA), source: ca.clone() });
    }

    let agent_names: Vec<&'static str> = req.agents.iter().map(|a| a.name()).collect();
    let mut build_args = vec![("AGENTS".to_owned(), agent_names.join(","))];
    build_args.extend(req.build_args.iter().cloned());
    let labels = labels::labels(&inp.provenance);
    let network = req.network.as_deref();
    let build = engine::build_argv(
        &inp.tools,
        &engine::BuildSpec { tag: &tag, context: &context, network, no_cache: req.no_cache, build_args: &build_args, labels: &labels },
    );

    let agent = req.agents.first().copied().unwrap_or(Agent::Claude).name();
    let env: Vec<(String, String)> = if req.egress_jail { Vec::new() } else { vec![(JAIL_OFF.0.to_owned(), JAIL_OFF.1.to_owned())] };
    let verify = ["root", REMOTE_USER]
        .iter()
        .map(|user| VerifyRun {
            user: user.to_string(),
            agent: agent.to_owned(),
            egress_jail: req.egress_jail,
            argv: engine::exec_argv(&inp.tools, &inp.container, user, &env, &verify::command(agent)),
        })
        .collect();
    let measure = engine::exec_argv(&inp.tools, &inp.container, "root", &[], &["sh".into(), "-c".into(), MEASURE_SCRIPT.into()]);
    Ok(BuildPlan {
        engine: inp.tools.engine,
        runner: inp.tools.runner,
        inspect: engine::inspect_argv(&inp.tools, &tag),
        start: engine::start_argv(&inp.tools, &tag, &inp.container, network),
        remove: engine::remove_argv(&inp.tools, &inp.container),
        tag,
        agents: agent_names,
        context,
        context_files,
        build,
        labels,
        verify,
        measure,
        egress_jail: req.egress_jail,
    })
}

/// Where the image goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub registry: Registry,
    pub repository: String,
}

impl Target {
    pub fn new(registry: Registry, repository: &str) -> Result<Self, ImageError> {
        let repository = repository.trim_matches('/').to_owned();
        check_repository(&repository)?;
        Ok(Target { registry, repository })
    }

    /// `REGISTRY/REPOSITORY`.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }
}

/// A publish, decided before anything is built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishPlan {
    pub reference: String,
    pub version: String,
    /// Tags to push (in order; the exact version last), or already published.
    pub tags: TagSet,
    pub build: BuildPlan,
    pub export: Vec<String>,
    pub export_to: Export,
}

pub fn publish_plan(build: BuildPlan, inp: &Inputs, target: &Target, version: &Version, existing: &[String]) -> PublishPlan {
    let (export, export_to) = engine::export_argv(&inp.tools, &build.tag, &inp.work.join("export"));
    PublishPlan { reference: target.reference(), version: version.to_string(), tags: tag_set(version, existing), build, export, export_to }
}

/// The push of an exported image: its layers stream from their files,
/// the config and the manifest (exact bytes) go as they are, then the tags.
pub fn push_plan(image: &LocalImage, target: &Target, tags: &[String]) -> (PushPlan, Vec<Vec<FileBlob>>) {
    let artifact = Artifact {
        manifest: image.manifest.clone(),
        manifest_bytes: image.manifest_bytes.clone(),
        digest: image.digest.clone(),
        blobs: vec![image.config.clone()],
    };
    let item = PushItem { repository: target.repository.clone(), artifact, tags: tags.to_vec() };
    (PushPlan { items: vec![item] }, vec![image.layers.clone()])
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
