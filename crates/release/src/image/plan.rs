//! The reference image's build, verify and push, decided as values: per
//! platform (linux/amd64, linux/arm64) a variant with its build context's
//! files, the engine command lines and how it is checked; the labels; the
//! tag set and the push plan (one image, or an OCI index of the variants
//! under one tag set). Pure functions of the request and gathered inputs;
//! `exec` runs what they return. Tested as whole values (plan/tests.rs).
//!
//! How a variant is checked depends on this machine ([`Check`]):
//! - its own architecture (`Native`): a container started as root like a
//!   devcontainer, the verify battery exec'd as root and as the non-root
//!   user, jail on unless asked otherwise;
//! - either way, the ownership audit (`audit`): nothing root may run is
//!   writable by anyone else;
//! - another architecture (`Emulated`, qemu-user through binfmt_misc):
//!   sessions cannot start there (no namespaces or seccomp filters under
//!   qemu-user, see `crate::arch::emulation`), so the container runs
//!   `uname -m` and `agent-sandbox doctor`: the binaries run, are this
//!   architecture's and are installed; the sandbox itself is not exercised.
//!   `image publish` pushes such a variant only with `--allow-emulated`.

use super::engine::{self, Engine, Export, Tools};
use super::error::ImageError;
use super::labels::{self, Provenance, REMOTE_USER};
use super::layout::LocalImage;
use super::verify::{self, VerifyRun};
use crate::agents::Agent;
use crate::arch::bins::BinDir;
use crate::arch::Arch;
use crate::oci::manifest::{Annotations, Artifact, Document, FileBlob, Index, IndexEntry, Platform};
use crate::oci::push::{PushItem, PushPlan};
use crate::oci::reference::check_repository;
use crate::oci::semver::{tag_set, TagSet, Version};
use crate::oci::Registry;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Build arguments this command sets itself, and the flag that sets each.
const RESERVED_BUILD_ARGS: &[(&str, &str)] = &[("AGENTS", "--agents")];
/// The variable that switches the egress jail off for a verify run.
pub const JAIL_OFF: (&str, &str) = (crate::env_vars::EGRESS_JAIL.name, "0");
/// The static binaries copied into the build context's `bin/`.
pub const BINARIES: [&str; 2] = ["agent-sandbox", "sandbox-install"];
/// Where `--extra-ca` lands in the context (bind-mounted by the npm step only).
pub(crate) const EXTRA_CA: &str = "build/extra-ca.pem";

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
    /// The platforms to build, in order (none: this machine's).
    pub platforms: Vec<Arch>,
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

/// `--platform linux/amd64,linux/arm64` (comma-separated, duplicates dropped).
pub fn parse_platforms(list: &str) -> Result<Vec<Arch>, ImageError> {
    let mut out = Vec::new();
    for p in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let arch = Arch::from_platform(p).ok_or_else(|| ImageError::UnknownPlatform(p.to_owned()))?;
        if !out.contains(&arch) {
            out.push(arch);
        }
    }
    if out.is_empty() {
        return Err(ImageError::UnknownPlatform(list.to_owned()));
    }
    Ok(out)
}

/// The local image name when no `--tag` is given.
fn default_tag(version: &str) -> String {
    format!("localhost/agent-sandbox:{version}")
}

fn check_tag(tag: &str) -> Result<(), ImageError> {
    if tag.is_empty() || tag.starts_with('-') || tag.contains('@') || tag.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ImageError::BadTag(tag.to_owned()));
    }
    Ok(())
}

/// The local name of one platform's image when several are built:
/// `NAME:TAG-ARCH` (`NAME:latest-ARCH` for a name without a tag).
pub(crate) fn variant_tag(tag: &str, arch: Arch) -> String {
    let last = tag.rsplit('/').next().unwrap_or(tag);
    if last.contains(':') {
        format!("{tag}-{}", arch.oci())
    } else {
        format!("{tag}:latest-{}", arch.oci())
    }
}

/// What `exec::gather` observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    pub tools: Tools,
    pub provenance: Provenance,
    /// The image definition folder and its regular files (relative paths).
    pub definition: PathBuf,
    pub(crate) definition_files: Vec<PathBuf>,
    /// Each platform's static binaries.
    pub bin_dirs: Vec<BinDir>,
    /// A private working folder (contexts, exports).
    pub work: PathBuf,
    /// A name no other container has, for the verify containers (each
    /// variant's gets its architecture appended).
    pub container: String,
    /// This machine's architecture: other platforms build under emulation.
    pub native: Arch,
}

/// One file of the build context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ContextFile {
    /// Relative to the context folder.
    pub dest: PathBuf,
    pub source: PathBuf,
}

/// How a variant is proven (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Check {
    /// This machine's architecture: the verify battery in real sessions.
    Native,
    /// Another architecture under emulation: `uname -m` and doctor only.
    Emulated,
}

/// The whole build and check, decided: one variant per platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildPlan {
    pub engine: Engine,
    pub(crate) runner: Engine,
    /// The requested image name (one platform: the image's own).
    pub tag: String,
    pub agents: Vec<&'static str>,
    #[serde(serialize_with = "pairs_as_map")]
    pub labels: Vec<(String, String)>,
    pub egress_jail: bool,
    pub variants: Vec<Variant>,
}

impl BuildPlan {
    /// The variants this machine only runs under emulation.
    pub fn emulated(&self) -> Vec<&Variant> {
        self.variants.iter().filter(|v| v.check == Check::Emulated).collect()
    }
}

/// One platform's image: how it is built and checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    pub arch: Arch,
    /// `linux/amd64` or `linux/arm64`.
    pub platform: String,
    pub check: Check,
    /// Its local name.
    pub tag: String,
    pub context: PathBuf,
    pub(crate) context_files: Vec<ContextFile>,
    pub build: Vec<String>,
    /// Environment of the build command (`engine::build_env`).
    #[serde(serialize_with = "pairs_as_map")]
    pub(crate) build_env: Vec<(String, String)>,
    pub inspect: Vec<String>,
    /// Starts the check container (root, as a devcontainer starts).
    pub start: Vec<String>,
    /// Where the container's seccomp profile is written before `start`
    /// (docker's check container loads it: `engine::docker_run_options`).
    pub seccomp_profile: PathBuf,
    /// Measures what the sandbox adds to the image (bubblewrap, passt, the binaries).
    pub(crate) measure: Vec<String>,
    /// The ownership audit (`audit`), as root.
    pub audit: Vec<String>,
    /// Native: the battery as root, then as the non-root user, in that container.
    pub verify: Vec<VerifyRun>,
    /// Emulated: `uname -m` and `agent-sandbox doctor --json` as root.
    pub emulated: Option<Vec<String>>,
    /// Removes the check container (always, even after a failure).
    pub remove: Vec<String>,
}

/// Serialises `(key, value)` pairs as a JSON object, in their order.
pub(crate) fn pairs_as_map<S: serde::Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap as _;
    let mut m = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// Prints the installed size of bubblewrap and passt (KiB) and of the
/// installed binaries (bytes), one `NAME SIZE UNIT` per line.
pub(crate) const MEASURE_SCRIPT: &str = "dpkg-query -W -f '${Package} ${Installed-Size} KiB\\n' bubblewrap passt && \
     stat -c '%n %s B' /usr/local/lib/agent-sandbox/bin/agent-sandbox /usr/local/lib/agent-sandbox/bin/sandbox-install";

pub fn build_plan(req: &BuildRequest, inp: &Inputs) -> Result<BuildPlan, ImageError> {
    let tag = req.tag.clone().unwrap_or_else(|| default_tag(&inp.provenance.version));
    check_tag(&tag)?;
    let platforms = if req.platforms.is_empty() { vec![inp.native] } else { req.platforms.clone() };
    let agent_names: Vec<&'static str> = req.agents.iter().map(|a| a.name()).collect();
    let mut build_args = vec![("AGENTS".to_owned(), agent_names.join(","))];
    build_args.extend(req.build_args.iter().cloned());
    let labels = labels::labels(&inp.provenance);
    let build_labels: Vec<(String, String)> = labels.iter().filter(|(k, _)| !labels::FROM_CONTAINERFILE.contains(&k.as_str())).cloned().collect();
    let variants = platforms
        .iter()
        .map(|arch| {
            let tag = if platforms.len() == 1 { tag.clone() } else { variant_tag(&tag, *arch) };
            variant(req, inp, *arch, tag, &build_args, &build_labels)
        })
        .collect::<Result<_, _>>()?;
    Ok(BuildPlan { engine: inp.tools.engine, runner: inp.tools.runner, tag, agents: agent_names, labels, egress_jail: req.egress_jail, variants })
}

/// The build context of `arch`: the definition's files (minus what is
/// generated), that architecture's binaries in `bin/`, the extra CA.
fn context_files(req: &BuildRequest, inp: &Inputs, bin_dir: &Path) -> Vec<ContextFile> {
    let generated: Vec<PathBuf> = BINARIES.iter().map(|b| Path::new("bin").join(b)).chain(req.extra_ca.iter().map(|_| PathBuf::from(EXTRA_CA))).collect();
    let mut files: Vec<ContextFile> =
        inp.definition_files.iter().filter(|f| !generated.contains(f)).map(|f| ContextFile { dest: f.clone(), source: inp.definition.join(f) }).collect();
    files.extend(BINARIES.iter().map(|b| ContextFile { dest: Path::new("bin").join(b), source: bin_dir.join(b) }));
    if let Some(ca) = &req.extra_ca {
        files.push(ContextFile { dest: PathBuf::from(EXTRA_CA), source: ca.clone() });
    }
    files
}

fn variant(
    req: &BuildRequest,
    inp: &Inputs,
    arch: Arch,
    tag: String,
    build_args: &[(String, String)],
    labels: &[(String, String)],
) -> Result<Variant, ImageError> {
    let bin_dir = inp.bin_dirs.iter().find(|b| b.arch == arch).ok_or(ImageError::NoBinaries { arch: arch.name(), searched: "the gathered folders".into() })?;
    let context = inp.work.join(format!("context-{}", arch.oci()));
    let platform = arch.platform();
    let network = req.network.as_deref();
    let build = engine::build_argv(
        &inp.tools,
        &engine::BuildSpec { tag: &tag, platform: &platform, context: &context, network, no_cache: req.no_cache, build_args, labels },
    );
    let container = format!("{}-{}", inp.container, arch.oci());
    let seccomp_profile = inp.work.join("seccomp-profile.json");
    let check = if arch == inp.native { Check::Native } else { Check::Emulated };
    let agent = req.agents.first().copied().unwrap_or(Agent::Claude).name();
    let env: Vec<(String, String)> = if req.egress_jail { Vec::new() } else { vec![(JAIL_OFF.0.to_owned(), JAIL_OFF.1.to_owned())] };
    let verify = match check {
        Check::Emulated => Vec::new(),
        Check::Native => ["root", REMOTE_USER]
            .iter()
            .map(|user| VerifyRun {
                user: user.to_string(),
                agent: agent.to_owned(),
                egress_jail: req.egress_jail,
                argv: engine::exec_argv(&inp.tools, &container, user, &env, &verify::command(agent, req.egress_jail)),
            })
            .collect(),
    };
    let emulated = (check == Check::Emulated).then(|| engine::exec_argv(&inp.tools, &container, "root", &[], &super::emulated::command()));
    Ok(Variant {
        arch,
        platform,
        check,
        context_files: context_files(req, inp, &bin_dir.dir),
        context,
        build,
        build_env: engine::build_env(&inp.tools),
        inspect: engine::inspect_argv(&inp.tools, &tag),
        start: engine::start_argv(&inp.tools, &tag, &container, network, &seccomp_profile),
        seccomp_profile,
        measure: engine::exec_argv(&inp.tools, &container, "root", &[], &["sh".into(), "-c".into(), MEASURE_SCRIPT.into()]),
        audit: engine::exec_argv(&inp.tools, &container, "root", &[], &super::audit::command()),
        verify,
        emulated,
        remove: engine::remove_argv(&inp.tools, &container),
        tag,
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

/// One variant's export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportStep {
    pub arch: Arch,
    pub argv: Vec<String>,
    pub to: Export,
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
    /// Each variant exported as an OCI layout, in the variants' order.
    pub exports: Vec<ExportStep>,
    /// Several platforms: the tags name an index of the variants.
    pub index: bool,
}

/// Refuses a publish with variants proven under emulation only, unless
/// `allow_emulated` (see the module comment).
pub(crate) fn check_publishable(build: &BuildPlan, native: Arch, allow_emulated: bool) -> Result<(), ImageError> {
    let emulated: Vec<&str> = build.emulated().iter().map(|v| v.platform.as_str()).collect();
    if emulated.is_empty() || allow_emulated {
        return Ok(());
    }
    Err(ImageError::EmulatedUnverified { platforms: emulated.join(", "), machine: native.platform() })
}

pub(crate) fn publish_plan(build: BuildPlan, inp: &Inputs, target: &Target, version: &Version, existing: &[String]) -> PublishPlan {
    let exports = build
        .variants
        .iter()
        .map(|v| {
            let (argv, to) = engine::export_argv(&inp.tools, &v.tag, &inp.work.join(format!("export-{}", v.arch.oci())));
            ExportStep { arch: v.arch, argv, to }
        })
        .collect();
    let index = build.variants.len() > 1;
    PublishPlan { reference: target.reference(), version: version.to_string(), tags: tag_set(version, existing), build, exports, index }
}

/// One exported image as a push item (untagged: `tags` empty), its layers
/// streaming from their files, the config and the manifest (the engine's
/// exact bytes) as they are.
fn image_item(image: &LocalImage, target: &Target, tags: &[String]) -> PushItem {
    let artifact = Artifact {
        manifest: Document::Image(image.manifest.clone()),
        manifest_bytes: image.manifest_bytes.clone(),
        digest: image.digest.clone(),
        blobs: vec![image.config.clone()],
    };
    PushItem { repository: target.repository.clone(), artifact, tags: tags.to_vec() }
}

/// The index of several platforms' images, with the image annotations.
pub fn index(images: &[(Arch, LocalImage)], annotations: Annotations) -> Index {
    let manifests = images
        .iter()
        .map(|(arch, image)| IndexEntry {
            media_type: image.manifest.media_type.clone(),
            digest: image.digest.clone(),
            size: image.manifest_bytes.len() as u64,
            platform: Platform { architecture: arch.oci().to_owned(), os: "linux".to_owned(), variant: None },
        })
        .collect();
    Index::new(manifests, annotations)
}

/// The push: one image goes under the tags itself; several go by digest,
/// then their index (annotated from `provenance`) under the tags.
/// `files[i]` are item i's layers.
pub(crate) fn push_plan(images: &[(Arch, LocalImage)], provenance: &Provenance, target: &Target, tags: &[String]) -> (PushPlan, Vec<Vec<FileBlob>>) {
    let files: Vec<Vec<FileBlob>> = images.iter().map(|(_, i)| i.layers.clone()).collect();
    if let [(_, image)] = images {
        return (PushPlan { items: vec![image_item(image, target, tags)] }, files);
    }
    let mut items: Vec<PushItem> = images.iter().map(|(_, i)| image_item(i, target, &[])).collect();
    let index = Artifact::from_index(index(images, labels::index_annotations(provenance)));
    items.push(PushItem { repository: target.repository.clone(), artifact: index, tags: tags.to_vec() });
    (PushPlan { items }, files)
}

#[cfg(test)]
mod tests;
