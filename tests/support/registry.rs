//! Set-up for the publish, devcontainer end-to-end, image and Docker
//! tests: the real registry and Dev Containers CLI (scripts/registry-env.sh,
//! run once per test run), podman (scripts/podman-env.sh), registry reads over plain HTTP
//! with curl (independent of the code under test), and fake static
//! binaries for packaging tests that do not run them.
//!
//! A missing prerequisite that the scripts cannot install fails the test
//! with the command to run; nothing is skipped.

pub(crate) use super::{bin, containers_conf, root, static_dir, unique};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The registry and CLI from scripts/registry-env.sh.
pub(crate) struct RegistryEnv {
    /// `localhost:PORT` (the Dev Containers CLI uses plain HTTP for `localhost` only).
    pub registry: String,
    pub devcontainer: PathBuf,
}

/// Parses `export NAME=VALUE` lines.
fn exports(text: &str) -> Vec<(String, String)> {
    text.lines().filter_map(|l| l.strip_prefix("export ")).filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
}

pub(crate) fn registry_env() -> &'static RegistryEnv {
    static ENV: OnceLock<RegistryEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let _one = super::setup();
        let out = Command::new("bash").arg(root().join("scripts/registry-env.sh")).output().expect("cannot run bash");
        assert!(
            out.status.success(),
            "scripts/registry-env.sh failed (it installs docker-registry and @devcontainers/cli and starts the registry):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let vars = exports(&String::from_utf8_lossy(&out.stdout));
        let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_else(|| panic!("registry-env.sh printed no {k}"));
        let registry = get("AGENT_SANDBOX_REGISTRY");
        RegistryEnv { registry, devcontainer: PathBuf::from(get("AGENT_SANDBOX_DEVCONTAINER")) }
    })
}

/// Held around every `devcontainer up --docker-path podman` (the
/// devcontainer and image areas) and every removal of images those areas
/// made: with podman the CLI stages feature content in an image with a
/// fixed name (`dev_container_feature_content_temp`), the devcontainer area
/// counts the untagged images an `up` leaves as its own, and a build that
/// reuses a cached layer while another test removes it fails ("layer not
/// known"), so none of these may overlap.
pub(crate) fn podman_up_turn() -> super::Locked<std::sync::MutexGuard<'static, ()>> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    super::across_processes("podman-up", true, ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Runs a command; panics with its output when it fails.
pub(crate) fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `GET /v2/<repo>/manifests/<reference>` over plain HTTP; the raw bytes.
pub(crate) fn manifest_bytes(registry: &str, repo: &str, reference: &str) -> Vec<u8> {
    let url = format!("http://{registry}/v2/{repo}/manifests/{reference}");
    ok(Command::new("curl").args(["-fsS", "-H", "Accept: application/vnd.oci.image.manifest.v1+json", &url])).stdout
}

pub(crate) fn manifest(registry: &str, repo: &str, reference: &str) -> serde_json::Value {
    serde_json::from_slice(&manifest_bytes(registry, repo, reference)).expect("manifest is not JSON")
}

/// `GET /v2/<repo>/blobs/<digest>`.
pub(crate) fn blob(registry: &str, repo: &str, digest: &str) -> Vec<u8> {
    ok(Command::new("curl").args(["-fsSL", &format!("http://{registry}/v2/{repo}/blobs/{digest}")])).stdout
}

/// The repository's tags, sorted (none when it does not exist).
pub(crate) fn tags(registry: &str, repo: &str) -> Vec<String> {
    let out = Command::new("curl").args(["-sS", &format!("http://{registry}/v2/{repo}/tags/list")]).output().expect("curl");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let mut t: Vec<String> = v["tags"].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect()).unwrap_or_default();
    t.sort();
    t
}

/// A minimal 64-bit ELF header for `machine` (62 = x86_64) with one
/// PT_LOAD and no interpreter: passes the packager's static check, runs nowhere.
pub(crate) fn fake_static_elf(machine: u16, marker: &str) -> Vec<u8> {
    let mut d = vec![0u8; 64 + 56];
    d[..6].copy_from_slice(b"\x7fELF\x02\x01");
    d[0x12..0x14].copy_from_slice(&machine.to_le_bytes());
    d[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
    d[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
    d[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
    d[64..68].copy_from_slice(&1u32.to_le_bytes());
    d.extend_from_slice(marker.as_bytes());
    d
}

/// A folder with fake `sandbox-install` and `agent-sandbox` for x86_64.
pub(crate) fn fake_bin_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for name in ["sandbox-install", "agent-sandbox"] {
        std::fs::write(d.path().join(name), fake_static_elf(62, name)).unwrap();
    }
    d
}

/// The layout `scripts/build-static.sh` writes, with fake binaries:
/// `static/x86_64/` and `static/aarch64/` under the returned folder.
pub(crate) fn fake_static_root() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (arch, machine) in [("x86_64", 62u16), ("aarch64", 183)] {
        let dir = d.path().join("static").join(arch);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["sandbox-install", "agent-sandbox"] {
            std::fs::write(dir.join(name), fake_static_elf(machine, &format!("{arch}/{name}"))).unwrap();
        }
    }
    d
}

/// The crate's version and its major tag (the feature's floating tag).
pub(crate) fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

pub(crate) fn major() -> &'static str {
    version().split('.').next().unwrap_or("0")
}

/// The feature's source as published in the tests: a copy without its
/// `installsAfter`, since the Dev Containers CLI fetches the features it
/// names (ghcr.io) at every `up`, and test machines have no route there.
/// Where the install order matters the tests set it explicitly
/// (`the_shims_stay_first_for_commands_run_without_a_shell`);
/// tests/suite/publish.rs checks the real file.
pub(crate) fn offline_feature_source() -> tempfile::TempDir {
    let source = tempfile::tempdir().unwrap();
    copy_tree(&crate::support::root().join("feature/src"), source.path());
    let json = source.path().join("agent-sandbox/devcontainer-feature.json");
    let mut feature: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(feature.as_object_mut().unwrap().remove("installsAfter").is_some(), "the feature names installsAfter");
    std::fs::write(&json, serde_json::to_string_pretty(&feature).unwrap()).unwrap();
    source
}

/// Copies the folder `from` into `to` (files and folders, modes kept).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}
