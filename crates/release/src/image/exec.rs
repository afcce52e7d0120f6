//! The one executor of the image plans: runs a plan's steps in order and
//! reports (inputs come from `gather`):
//!  1. per variant (platform): write its build context into the private
//!     working folder, build (the engine's output goes to stderr, stdout
//!     stays for `--json`), inspect the image: id, size, architecture, and
//!     every planned label present;
//!  2. start one container of it as root (as a devcontainer starts), audit
//!     who may write what root runs, run its check (the verify battery as
//!     root and as the non-root user; an emulated variant: `uname -m` and
//!     doctor), remove it; any failure stops a publish;
//!  3. (publish) export each variant as an OCI layout, read it, and push
//!     blobs, the manifests (and the index of several) by digest, then the
//!     tags (`crate::oci::push`).

use super::docker_archive;
use super::emulated;
use super::engine::Export;
use super::error::ImageError;
use super::layout::{self, LocalImage};
use super::plan::{self, BuildRequest, Inputs, Target, Variant};
use super::report::{BuildReport, PlatformReport, PublishReport, VariantReport};
use super::verify;
use crate::arch::Arch;
use crate::oci::push;
use crate::oci::semver::TagSet;
use crate::oci::RegistryApi;
use std::collections::BTreeMap;
use std::os::fd::AsFd as _;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

pub use super::gather::{gather, parse_bin_dir, Sources, WorkDir};

/// Removes the check container when dropped (after a failure too).
struct Running<'a>(&'a [String]);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let _ = Command::new(&self.0[0]).args(&self.0[1..]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

fn say(msg: &str) {
    eprintln!("agent-sandbox image: {msg}");
}

/// Runs `argv`. `capture`: keep stdout and stderr; otherwise the engine's
/// output goes to our stderr (stdout stays clean for `--json`).
fn run(step: &str, argv: &[String], capture: bool) -> Result<Output, ImageError> {
    run_env(step, argv, &[], capture)
}

/// `run` with `env` added to the environment.
fn run_env(step: &str, argv: &[String], env: &[(String, String)], capture: bool) -> Result<Output, ImageError> {
    tracing::info!(step, argv = ?argv, env = ?env, "running");
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).envs(env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null());
    if !capture {
        let err = std::io::stderr().as_fd().try_clone_to_owned().map_err(|source| ImageError::Spawn { program: argv[0].clone(), source })?;
        cmd.stdout(Stdio::from(err)).stderr(Stdio::inherit());
    }
    cmd.output().map_err(|source| ImageError::Spawn { program: argv[0].clone(), source })
}

fn check(step: &str, out: &Output, captured: bool) -> Result<(), ImageError> {
    if out.status.success() {
        return Ok(());
    }
    let detail = if captured {
        let text = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = text.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect();
        lines.join("\n")
    } else {
        "see the engine's output above".to_owned()
    };
    Err(ImageError::Step { step: step.to_owned(), status: out.status.to_string(), detail })
}

/// Builds and checks every variant (steps 1–2).
pub fn build(p: &plan::BuildPlan) -> Result<BuildReport, ImageError> {
    let mut variants = Vec::new();
    for v in &p.variants {
        variants.push(build_variant(p, v)?);
    }
    Ok(BuildReport::new(p.engine, p.tag.clone(), p.agents.clone(), p.egress_jail, variants))
}

fn build_variant(p: &plan::BuildPlan, v: &Variant) -> Result<VariantReport, ImageError> {
    for f in &v.context_files {
        let dest = v.context.join(&f.dest);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ImageError::Write { path: parent.to_owned(), source })?;
        }
        std::fs::copy(&f.source, &dest).map_err(|source| ImageError::Read { path: f.source.clone(), source })?;
    }
    let agents = if p.agents.is_empty() { "none".to_owned() } else { p.agents.join(",") };
    let how = if v.check == plan::Check::Emulated { ", under emulation" } else { "" };
    say(&format!("building {} for {} with {} (agents: {agents}{how})", v.tag, v.platform, p.engine.name()));
    let start = Instant::now();
    let out = run_env("the image build", &v.build, &v.build_env, false)?;
    check("the image build", &out, false)?;
    let build_seconds = start.elapsed().as_secs_f64();

    let out = run("image inspect", &v.inspect, true)?;
    check("image inspect", &out, true)?;
    let inspected = parse_inspect(&out.stdout)?;
    if inspected.architecture != v.arch.oci() {
        return Err(ImageError::WrongArchitecture { tag: v.tag.clone(), expected: v.arch.oci().into(), found: inspected.architecture });
    }
    let missing: Vec<String> = p.labels.iter().filter(|(k, val)| inspected.labels.get(k) != Some(val)).map(|(k, _)| k.clone()).collect();
    if !missing.is_empty() {
        return Err(ImageError::LabelsMissing { tag: v.tag.clone(), missing: missing.join(", ") });
    }
    std::fs::write(&v.seccomp_profile, crate::container_seccomp::render()).map_err(|source| ImageError::Write { path: v.seccomp_profile.clone(), source })?;
    let start = Instant::now();
    let out = run("starting the check container", &v.start, true)?;
    let _running = Running(&v.remove);
    check("starting the check container", &out, true)?;
    let sandbox_size =
        run("measuring the sandbox", &v.measure, true).ok().filter(|o| o.status.success()).and_then(|o| parse_measure(&String::from_utf8_lossy(&o.stdout)));
    say(&format!("auditing {}: who may write what root runs", v.tag));
    let out = run("the ownership audit", &v.audit, true)?;
    let audit = super::audit::parse(&String::from_utf8_lossy(&out.stdout), &String::from_utf8_lossy(&out.stderr));
    say(&format!("{} {}", v.platform, audit.summary()));
    let mut outcomes = Vec::new();
    for r in &v.verify {
        say(&format!("verifying {} as {} (agent {}, egress jail {})", v.tag, r.user, r.agent, if r.egress_jail { "on" } else { "off" }));
        let t = Instant::now();
        let out = run("verify", &r.argv, true)?;
        let o = verify::parse(r, &String::from_utf8_lossy(&out.stdout), &String::from_utf8_lossy(&out.stderr), t.elapsed().as_secs_f64());
        say(&format!("{} {}", v.platform, o.summary()));
        outcomes.push(o);
    }
    let emulated = match &v.emulated {
        None => None,
        Some(argv) => {
            say(&format!("checking {} under emulation: uname -m and agent-sandbox doctor (sessions cannot start under qemu-user)", v.tag));
            let t = Instant::now();
            let out = run("the emulated check", argv, true)?;
            let o = emulated::parse(v.arch, &String::from_utf8_lossy(&out.stdout), &String::from_utf8_lossy(&out.stderr), t.elapsed().as_secs_f64());
            say(&o.summary());
            Some(o)
        }
    };
    let verified = audit.ok() && outcomes.iter().all(|o| o.ok(p.egress_jail)) && emulated.as_ref().is_none_or(emulated::EmulatedOutcome::ok);
    Ok(VariantReport {
        arch: v.arch,
        platform: v.platform.clone(),
        check: v.check,
        tag: v.tag.clone(),
        image_id: inspected.id,
        size: inspected.size,
        sandbox_size,
        labels: inspected.labels.into_iter().filter(|(k, _)| p.labels.iter().any(|(l, _)| l == k)).collect(),
        verify: outcomes,
        emulated,
        audit,
        verified,
        build_seconds,
        verify_seconds: start.elapsed().as_secs_f64(),
    })
}

/// What `image inspect` says about an image.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inspected {
    pub id: String,
    pub size: u64,
    /// The OCI architecture (`amd64`, `arm64`).
    pub architecture: String,
    pub labels: BTreeMap<String, String>,
}

/// `image inspect` output (podman and docker): id, size, architecture, labels.
fn parse_inspect(stdout: &[u8]) -> Result<Inspected, ImageError> {
    let bad = |why: &str| ImageError::Unexpected { step: "image inspect".into(), why: why.into() };
    let v: serde_json::Value = serde_json::from_slice(stdout).map_err(|e| bad(&format!("not JSON: {e}")))?;
    let img = &v[0];
    let id = img["Id"].as_str().ok_or_else(|| bad("no Id"))?.to_owned();
    let size = img["Size"].as_u64().unwrap_or(0);
    let labels = img["Config"]["Labels"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())
        .unwrap_or_default();
    let architecture = img["Architecture"].as_str().unwrap_or("unknown").to_owned();
    Ok(Inspected { id, size, architecture, labels })
}

/// Sums `NAME SIZE KiB|B` lines from `plan::MEASURE_SCRIPT`.
fn parse_measure(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut lines = 0;
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let [_, n, unit] = f.as_slice() else { return None };
        let n: u64 = n.parse().ok()?;
        total += match *unit {
            "KiB" => n * 1024,
            "B" => n,
            _ => return None,
        };
        lines += 1;
    }
    (lines == 4).then_some(total)
}

/// Publishes: reads the registry's tags, decides (refusing variants proven
/// under emulation only unless `allow_emulated`), and unless `dry_run` or
/// already published builds, checks (refusing on any failure), exports and
/// pushes.
pub fn publish(
    req: &BuildRequest,
    inp: &Inputs,
    target: &Target,
    api: &dyn RegistryApi,
    dry_run: bool,
    allow_emulated: bool,
) -> Result<PublishReport, ImageError> {
    let version = crate::oci::semver::Version::parse(&inp.provenance.version)?;
    let build_plan = plan::build_plan(req, inp)?;
    plan::check_publishable(&build_plan, inp.native, allow_emulated)?;
    let existing = api.list_tags(&target.repository)?;
    let p = plan::publish_plan(build_plan, inp, target, &version, &existing);
    let mut report = PublishReport {
        reference: p.reference.clone(),
        version: p.version.clone(),
        dry_run,
        already_published: p.tags == TagSet::AlreadyPublished,
        tags: match &p.tags {
            TagSet::Push { tags } => tags.clone(),
            TagSet::AlreadyPublished => Vec::new(),
        },
        digest: None,
        media_type: None,
        pushed_size: None,
        blobs_uploaded: 0,
        platforms: Vec::new(),
        labels: p.build.labels.clone(),
        build: None,
        plan: None,
    };
    if dry_run || report.already_published {
        report.plan = dry_run.then(|| p.clone());
        return Ok(report);
    }
    let built = build(&p.build)?;
    if let Some(e) = built.failure() {
        return Err(e);
    }
    report.build = Some(built);
    let images = export(&p)?;
    let (push_plan, files) = plan::push_plan(&images, &inp.provenance, target, &report.tags);
    let Some(tagged) = push_plan.items.last().map(|i| i.artifact.clone()) else {
        return Err(ImageError::Unexpected { step: "the push plan".into(), why: "it pushes nothing".into() });
    };
    let size: u64 = images.iter().map(|(_, i)| i.size()).sum();
    say(&format!("pushing {} ({} platform(s), {size} bytes) as {}:{{{}}}", tagged.digest, images.len(), p.reference, report.tags.join(",")));
    let pushed = push::execute_with_files(api, &push_plan, &files)?;
    report.platforms = p
        .build
        .variants
        .iter()
        .zip(&images)
        .map(|(v, (_, i))| PlatformReport { platform: v.platform.clone(), check: v.check, digest: i.digest.clone(), size: i.size() })
        .collect();
    report.digest = Some(tagged.digest.clone());
    report.media_type = Some(tagged.manifest.media_type().to_owned());
    report.pushed_size = Some(size);
    report.blobs_uploaded = pushed.iter().map(|x| x.blobs_uploaded).sum();
    Ok(report)
}

/// Exports every variant and reads its layout.
fn export(p: &plan::PublishPlan) -> Result<Vec<(Arch, LocalImage)>, ImageError> {
    let mut images = Vec::new();
    for step in &p.exports {
        say(&format!("exporting the {} image as an OCI layout", step.arch.platform()));
        let parent = step.to.dir().parent().unwrap_or(step.to.dir());
        std::fs::create_dir_all(parent).map_err(|source| ImageError::Write { path: parent.to_owned(), source })?;
        let out = run("the image export", &step.argv, true)?;
        check("the image export", &out, true)?;
        if let Export::Tar { tar, dir } = &step.to {
            docker_archive::unpack_tar(tar, dir)?;
            // The tar is no longer needed: free its space before compressing.
            let _ = std::fs::remove_file(tar);
        }
        let dir = step.to.dir();
        let image = if docker_archive::is_legacy(dir) {
            say("compressing the layers of docker's legacy archive (docker before 25)");
            docker_archive::read(dir, step.arch, &dir.with_file_name("blobs"))?
        } else {
            layout::read(dir, step.arch)?
        };
        images.push((step.arch, image));
    }
    Ok(images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_sums_packages_and_binaries() {
        let text = "bubblewrap 150 KiB\npasst 1000 KiB\n/usr/local/lib/agent-sandbox/bin/agent-sandbox 7000000 B\n/usr/local/lib/agent-sandbox/bin/sandbox-install 1700000 B\n";
        assert_eq!(parse_measure(text), Some(1150 * 1024 + 8_700_000));
        assert_eq!(parse_measure("bubblewrap 150 KiB\n"), None);
        assert_eq!(parse_measure("x y z\n"), None);
    }

    #[test]
    fn inspect_reads_id_size_architecture_and_labels() {
        let out = br#"[{"Id":"abc","Size":123,"Architecture":"arm64","Config":{"Labels":{"a":"1","devcontainer.metadata":"[]"}}}]"#;
        let i = parse_inspect(out).unwrap();
        assert_eq!((i.id.as_str(), i.size, i.architecture.as_str()), ("abc", 123, "arm64"));
        assert_eq!(i.labels.get("devcontainer.metadata").map(String::as_str), Some("[]"));
        assert!(parse_inspect(b"[]").is_err());
    }
}
