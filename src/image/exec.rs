//! The one executor of the image plans: gathers the inputs (engines in
//! system directories, the definition folder, the static binaries, the
//! provenance), then runs a plan's steps in order and reports:
//!  1. write the build context into a private working folder;
//!  2. build (the engine's output goes to stderr, stdout stays for `--json`);
//!  3. inspect the image: id, size, and every planned label present;
//!  4. start one container of the image as root (as a devcontainer starts),
//!     exec the verify battery in it as root and as the non-root user,
//!     remove it; any failure stops a publish;
//!  5. (publish) export an OCI layout, read it, push blobs, the manifest by
//!     digest, then the tags (`crate::oci::push`).

use super::engine::{Engine, Export};
use super::error::ImageError;
use super::labels::{self, Provenance};
use super::layout;
use super::plan::{self, BuildPlan, BuildRequest, Inputs, PublishPlan, Target};
use super::verify::{self, VerifyOutcome};
use crate::oci::push;
use crate::oci::semver::TagSet;
use crate::oci::{Digest, RegistryApi};
use serde::Serialize;
use std::collections::BTreeMap;
use std::os::fd::AsFd as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// `AGENT_SANDBOX_STATIC_DIR`: the folder `scripts/build-static.sh` prints.
pub const STATIC_DIR_VAR: &str = "AGENT_SANDBOX_STATIC_DIR";
/// `SOURCE_DATE_EPOCH`: the `created` label's time when set.
pub const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";

/// A private working folder, removed when dropped.
#[derive(Debug)]
pub struct WorkDir(PathBuf);

impl WorkDir {
    pub fn new() -> Result<WorkDir, ImageError> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("agent-sandbox-image-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|source| ImageError::Write { path: dir.clone(), source })?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(|source| ImageError::Write { path: dir.clone(), source })?;
        Ok(WorkDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where the inputs come from (flags; `None` means the default).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub definition: PathBuf,
    pub bin_dir: Option<PathBuf>,
    pub revision: Option<String>,
}

/// Observes what the plan needs.
pub fn gather(req: &BuildRequest, src: &Sources, work: &Path) -> Result<Inputs, ImageError> {
    let mut found = BTreeMap::new();
    for e in Engine::ALL {
        match crate::sysbin::find(e.name(), "") {
            Ok(p) => {
                found.insert(e, p);
            }
            Err(crate::sysbin::SysbinError::Missing { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let tools = super::engine::choose(req.engine, &found, &crate::sysbin::SYSTEM_DIRS.join(", "))?;
    if !src.definition.join("Containerfile").is_file() {
        return Err(ImageError::NoDefinition { path: src.definition.clone() });
    }
    let mut definition_files = Vec::new();
    list_files(&src.definition, Path::new(""), &mut definition_files)?;
    definition_files.sort();
    let bin_dir = bin_dir(src.bin_dir.as_deref())?;
    if let Some(ca) = &req.extra_ca {
        let meta = std::fs::metadata(ca).map_err(|e| ImageError::BadExtraCa { path: ca.clone(), why: e.to_string() })?;
        if !meta.is_file() || meta.len() == 0 {
            return Err(ImageError::BadExtraCa { path: ca.clone(), why: "not a non-empty file".into() });
        }
    }
    let revision = match &src.revision {
        Some(r) => r.clone(),
        None => git_revision(&src.definition),
    };
    let created = match std::env::var(SOURCE_DATE_EPOCH).ok().and_then(|s| s.trim().parse::<u64>().ok()) {
        Some(t) => t,
        None => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    };
    let provenance = Provenance {
        source: env!("CARGO_PKG_REPOSITORY").to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        revision,
        created: labels::rfc3339(created),
    };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let container = format!("agent-sandbox-verify-{}-{nanos:x}", std::process::id());
    Ok(Inputs { tools, provenance, definition: src.definition.clone(), definition_files, bin_dir, work: work.to_owned(), container })
}

/// Removes the verify container when dropped (after a failure too).
struct Running<'a>(&'a [String]);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let _ = Command::new(&self.0[0]).args(&self.0[1..]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

fn list_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<(), ImageError> {
    let dir = root.join(rel);
    let entries = std::fs::read_dir(&dir).map_err(|source| ImageError::Read { path: dir.clone(), source })?;
    for entry in entries {
        let entry = entry.map_err(|source| ImageError::Read { path: dir.clone(), source })?;
        let kind = entry.file_type().map_err(|source| ImageError::Read { path: entry.path(), source })?;
        let rel = rel.join(entry.file_name());
        if kind.is_dir() {
            list_files(root, &rel, out)?;
        } else if kind.is_file() {
            out.push(rel);
        }
    }
    Ok(())
}

/// `--bin-dir`, else `$AGENT_SANDBOX_STATIC_DIR`, else this program's own
/// folder when it holds both static binaries.
fn bin_dir(explicit: Option<&Path>) -> Result<PathBuf, ImageError> {
    let dir = match explicit.map(Path::to_path_buf).or_else(|| std::env::var_os(STATIC_DIR_VAR).map(PathBuf::from)) {
        Some(d) => d,
        None => {
            let own = std::env::current_exe().ok().and_then(|p| p.parent().map(Path::to_path_buf));
            match own.filter(|d| plan::BINARIES.iter().all(|b| check_binary(d, b).is_ok())) {
                Some(d) => d,
                None => return Err(ImageError::NoBinaries),
            }
        }
    };
    for b in plan::BINARIES {
        check_binary(&dir, b)?;
    }
    Ok(dir)
}

fn check_binary(dir: &Path, name: &'static str) -> Result<(), ImageError> {
    let path = dir.join(name);
    if !path.is_file() {
        return Err(ImageError::MissingBinary { dir: dir.to_owned(), name });
    }
    let data = std::fs::read(&path).map_err(|source| ImageError::Read { path: path.clone(), source })?;
    crate::publish::feature::check_static_elf(&data, std::env::consts::ARCH).map_err(|why| ImageError::NotStatic { path, why })
}

/// The git commit of the definition's checkout (`-dirty` with uncommitted
/// changes), or `unknown` outside a checkout.
fn git_revision(dir: &Path) -> String {
    let Ok(git) = crate::sysbin::find("git", "") else { return "unknown".into() };
    let run = |args: &[&str]| Command::new(&git).arg("-C").arg(dir).args(args).stderr(Stdio::null()).output().ok().filter(|o| o.status.success());
    let Some(head) = run(&["rev-parse", "HEAD"]) else { return "unknown".into() };
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let dirty = run(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|o| !o.stdout.is_empty());
    if dirty {
        format!("{head}-dirty")
    } else {
        head
    }
}

fn say(msg: &str) {
    eprintln!("agent-sandbox image: {msg}");
}

/// Runs `argv`. `capture`: keep stdout and stderr; otherwise the engine's
/// output goes to our stderr (stdout stays clean for `--json`).
fn run(step: &str, argv: &[String], capture: bool) -> Result<Output, ImageError> {
    tracing::info!(step, argv = ?argv, "running");
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::null());
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

/// What a build (with its verify) produced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildReport {
    pub engine: Engine,
    pub tag: String,
    pub image_id: String,
    /// The image's size as the engine reports it (uncompressed).
    pub size: u64,
    /// What the sandbox adds: bubblewrap, passt and the two binaries.
    pub sandbox_size: Option<u64>,
    pub agents: Vec<&'static str>,
    pub labels: BTreeMap<String, String>,
    pub egress_jail: bool,
    pub verify: Vec<VerifyOutcome>,
    pub verified: bool,
    pub build_seconds: f64,
    pub verify_seconds: f64,
}

impl BuildReport {
    /// The verify failure as an error (None when every run passed).
    pub fn failure(&self) -> Option<ImageError> {
        if self.verified {
            return None;
        }
        let summary = self.verify.iter().map(VerifyOutcome::summary).collect::<Vec<_>>().join("; ");
        let details = self.verify.iter().flat_map(|v| v.problems(self.egress_jail)).map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n");
        Some(ImageError::VerifyFailed { tag: self.tag.clone(), summary, details })
    }
}

/// Builds, inspects and verifies (steps 1–4).
pub fn build(p: &BuildPlan) -> Result<BuildReport, ImageError> {
    for f in &p.context_files {
        let dest = p.context.join(&f.dest);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ImageError::Write { path: parent.to_owned(), source })?;
        }
        std::fs::copy(&f.source, &dest).map_err(|source| ImageError::Read { path: f.source.clone(), source })?;
    }
    say(&format!("building {} with {} (agents: {})", p.tag, p.engine.name(), if p.agents.is_empty() { "none".to_owned() } else { p.agents.join(",") }));
    let start = Instant::now();
    let out = run("the image build", &p.build, false)?;
    check("the image build", &out, false)?;
    let build_seconds = start.elapsed().as_secs_f64();

    let out = run("image inspect", &p.inspect, true)?;
    check("image inspect", &out, true)?;
    let (image_id, size, found) = parse_inspect(&out.stdout)?;
    let missing: Vec<String> = p.labels.iter().filter(|(k, v)| found.get(k) != Some(v)).map(|(k, _)| k.clone()).collect();
    if !missing.is_empty() {
        return Err(ImageError::LabelsMissing { tag: p.tag.clone(), missing: missing.join(", ") });
    }
    let start = Instant::now();
    let out = run("starting the verify container", &p.start, true)?;
    let _running = Running(&p.remove);
    check("starting the verify container", &out, true)?;
    let sandbox_size = run("measuring the sandbox", &p.measure, true).ok().filter(|o| o.status.success()).and_then(|o| parse_measure(&String::from_utf8_lossy(&o.stdout)));
    let mut outcomes = Vec::new();
    for v in &p.verify {
        say(&format!("verifying {} as {} (agent {}, egress jail {})", p.tag, v.user, v.agent, if v.egress_jail { "on" } else { "off" }));
        let t = Instant::now();
        let out = run("verify", &v.argv, true)?;
        let o = verify::parse(v, &String::from_utf8_lossy(&out.stdout), &String::from_utf8_lossy(&out.stderr), t.elapsed().as_secs_f64());
        say(&o.summary());
        outcomes.push(o);
    }
    let verified = outcomes.iter().all(|o| o.ok(p.egress_jail));
    Ok(BuildReport {
        engine: p.engine,
        tag: p.tag.clone(),
        image_id,
        size,
        sandbox_size,
        agents: p.agents.clone(),
        labels: found.into_iter().filter(|(k, _)| p.labels.iter().any(|(l, _)| l == k)).collect(),
        egress_jail: p.egress_jail,
        verify: outcomes,
        verified,
        build_seconds,
        verify_seconds: start.elapsed().as_secs_f64(),
    })
}

/// `image inspect` output (podman and docker): id, size, labels.
pub fn parse_inspect(stdout: &[u8]) -> Result<(String, u64, BTreeMap<String, String>), ImageError> {
    let bad = |why: &str| ImageError::Unexpected { step: "image inspect".into(), why: why.into() };
    let v: serde_json::Value = serde_json::from_slice(stdout).map_err(|e| bad(&format!("not JSON: {e}")))?;
    let img = &v[0];
    let id = img["Id"].as_str().ok_or_else(|| bad("no Id"))?.to_owned();
    let size = img["Size"].as_u64().unwrap_or(0);
    let labels = img["Config"]["Labels"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())
        .unwrap_or_default();
    Ok((id, size, labels))
}

/// Sums `NAME SIZE KiB|B` lines from `plan::MEASURE_SCRIPT`.
pub fn parse_measure(text: &str) -> Option<u64> {
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

/// What a publish did (or, dry-run, would do).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishReport {
    pub reference: String,
    pub version: String,
    pub dry_run: bool,
    pub already_published: bool,
    pub tags: Vec<String>,
    pub digest: Option<Digest>,
    /// Bytes a pull downloads (compressed layers and config).
    pub pushed_size: Option<u64>,
    pub blobs_uploaded: usize,
    #[serde(serialize_with = "plan::pairs_as_map")]
    pub labels: Vec<(String, String)>,
    pub build: Option<BuildReport>,
    /// The whole plan, with `--dry-run`.
    pub plan: Option<PublishPlan>,
}

/// Publishes: reads the registry's tags, decides, and unless `dry_run` or
/// already published builds, verifies (refusing on any failure), exports
/// and pushes.
pub fn publish(
    req: &BuildRequest,
    inp: &Inputs,
    target: &Target,
    api: &dyn RegistryApi,
    dry_run: bool,
) -> Result<PublishReport, ImageError> {
    let version = crate::oci::semver::Version::parse(&inp.provenance.version)?;
    let existing = api.list_tags(&target.repository)?;
    let build_plan = plan::build_plan(req, inp)?;
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
        pushed_size: None,
        blobs_uploaded: 0,
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
    say(&format!("exporting {} as an OCI layout", p.build.tag));
    let export_parent = p.export_to.dir().parent().unwrap_or(&inp.work);
    std::fs::create_dir_all(export_parent).map_err(|source| ImageError::Write { path: export_parent.to_owned(), source })?;
    let out = run("the image export", &p.export, true)?;
    check("the image export", &out, true)?;
    if let Export::Tar { tar, dir } = &p.export_to {
        layout::unpack_tar(tar, dir)?;
    }
    let image = layout::read(p.export_to.dir(), std::env::consts::ARCH)?;
    let (push_plan, files) = plan::push_plan(&image, target, &report.tags);
    say(&format!("pushing {} ({} layers, {} bytes) as {}:{{{}}}", image.digest, image.layers.len(), image.size(), p.reference, report.tags.join(",")));
    let pushed = push::execute_with_files(api, &push_plan, &files)?;
    report.digest = Some(image.digest.clone());
    report.pushed_size = Some(image.size());
    report.blobs_uploaded = pushed.iter().map(|x| x.blobs_uploaded).sum();
    Ok(report)
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
    fn a_failed_verify_names_every_problem() {
        let outcome = |user: &str, failures: Vec<String>, jail: bool| VerifyOutcome {
            user: user.into(),
            agent: "claude".into(),
            egress_jail: jail,
            passed: 40,
            failed: failures.len() as u64,
            blocked: 16,
            escaped: 0,
            skipped: 0,
            failures,
            error: None,
            seconds: 1.0,
        };
        let mut r = BuildReport {
            engine: Engine::Podman,
            tag: "t".into(),
            image_id: "id".into(),
            size: 1,
            sandbox_size: None,
            agents: vec!["claude"],
            labels: BTreeMap::new(),
            egress_jail: true,
            verify: vec![outcome("root", vec!["FAIL 25 workspace-writable: EACCES".into()], true), outcome("vscode", vec![], false)],
            verified: false,
            build_seconds: 1.0,
            verify_seconds: 1.0,
        };
        assert_eq!(
            r.failure().unwrap().to_string(),
            "verify failed in the built image t (root/claude: 40 passed, 1 failed, 16 blocked, 0 escaped, 0 skipped (jail on); \
             vscode/claude: 40 passed, 0 failed, 16 blocked, 0 escaped, 0 skipped (jail off)); publish refuses such an image. \
             Fix the failing checks (see docs/verify.md) and build again:\n  root: FAIL 25 workspace-writable: EACCES\n  \
             vscode: the egress jail was off, verify asked for it on (check /etc/agent-sandbox/config.json5 in the image)"
        );
        r.verified = true;
        assert!(r.failure().is_none());
    }

    #[test]
    fn inspect_reads_id_size_and_labels() {
        let out = br#"[{"Id":"abc","Size":123,"Config":{"Labels":{"a":"1","devcontainer.metadata":"[]"}}}]"#;
        let (id, size, labels) = parse_inspect(out).unwrap();
        assert_eq!((id.as_str(), size), ("abc", 123));
        assert_eq!(labels.get("devcontainer.metadata").map(String::as_str), Some("[]"));
        assert!(parse_inspect(b"[]").is_err());
    }
}
