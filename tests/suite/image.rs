//! The reference image end to end, with the real tools: `agent-sandbox
//! image build` (podman, from the mmdebstrap-made Debian 13 base that
//! scripts/podman-env.sh imports under the Containerfile's FROM name, agent
//! CLIs from npm), `agent-sandbox verify` inside it as root and as `vscode`,
//! `agent-sandbox image publish` to a local docker-registry, `skopeo
//! inspect` of every tag and label, `podman pull` back, and a session in
//! the pulled image.
//!
//! The image is built once per test run (`built()`); podman's layer
//! cache makes later builds with the same inputs (the publish test's) quick.
//! Agents: `AGENT_SANDBOX_IMAGE_TEST_AGENTS` (default `pi`, the smallest
//! real agent CLI; `claude,codex,pi` builds the published variant).
//!
//! The egress jail: verify runs with it on (the test containers get
//! /dev/net/tun).
//!
//! Two platforms: `image publish --platform linux/amd64,linux/arm64`
//! builds the arm64 variant under emulation (qemu-user through binfmt_misc,
//! FROM a local manifest list of the amd64 and arm64 Debian 13 bases that
//! scripts/podman-env.sh makes), checks it with `uname -m` and `agent-sandbox
//! doctor` inside (sessions cannot start under emulation), and pushes an OCI
//! index of both under the tags; both platforms pull back.
//!
//! Needs root; the scripts install podman, skopeo, docker-registry, qemu.

use crate::support::registry::*;
use serde_json::Value;
use sha2::Digest as _;
use std::process::{Command, Output};
use std::sync::OnceLock;

const AGENTS_VAR: &str = "AGENT_SANDBOX_IMAGE_TEST_AGENTS";
/// A fixed build time: the `created` label is checked, and repeated builds
/// stay identical (cached).
const EPOCH: &str = "1795863601";
const EPOCH_RFC3339: &str = "2026-11-28T11:00:01Z";
const HOST_CA: &str = "/etc/ssl/certs/ca-certificates.crt";

fn agents() -> String {
    std::env::var(AGENTS_VAR).unwrap_or_else(|_| "pi".into())
}

fn first_agent() -> Option<String> {
    agents().split(',').map(str::trim).find(|a| !a.is_empty()).map(str::to_owned)
}

/// This machine's platform, as --platform names it.
fn native_platform() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "linux/arm64"
    } else {
        "linux/amd64"
    }
}

fn podman(args: &[&str]) -> Output {
    Command::new("podman").env("CONTAINERS_CONF", containers_conf()).args(args).output().expect("run podman")
}

fn image_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.current_dir(root()).env("CONTAINERS_CONF", containers_conf()).env("SOURCE_DATE_EPOCH", EPOCH).arg("image").args(args);
    c
}

/// Runs `agent-sandbox image ARGS` (builds, publishes: they read podman's
/// image store, `support::image_store_read`).
fn run_image(args: &[&str]) -> Output {
    let _store = crate::support::image_store_read();
    image_cmd(args).output().expect("run agent-sandbox image")
}

/// The same, which must succeed.
fn ok_image(args: &[&str]) -> Output {
    let _store = crate::support::image_store_read();
    ok(&mut image_cmd(args))
}

/// The flags every build in these tests uses (so they share the cache).
fn build_flags(tag: &str) -> Vec<String> {
    let mut f: Vec<String> = ["--tag", tag, "--agents", &agents(), "--network", "host", "--bin-dir"].iter().map(|s| s.to_string()).collect();
    f.push(format!("{}={}", std::env::consts::ARCH, static_dir().display()));
    if std::path::Path::new(HOST_CA).is_file() {
        f.extend(["--extra-ca".into(), HOST_CA.into()]);
    }
    f
}

struct Built {
    tag: String,
    report: Value,
}

fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let tag = format!("localhost/agent-sandbox-test/image:{}", if agents().is_empty() { "none".into() } else { agents().replace(',', "-") });
        let run = || {
            let flags = build_flags(&tag);
            let mut args: Vec<&str> = vec!["build", "--json", "--platform", native_platform()];
            args.extend(flags.iter().map(String::as_str));
            let start = std::time::Instant::now();
            let out = run_image(&args);
            eprintln!("image build took {:.0} s", start.elapsed().as_secs_f64());
            let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            (out, report)
        };
        let (out, report) = run();
        assert!(out.status.success(), "image build failed:\n{}\n{}", stderr(&out), serde_json::to_string_pretty(&report).unwrap_or_default());
        Built { tag, report }
    })
}

#[test]
fn build_is_verified_as_root_and_as_the_non_root_user() {
    let _machine = crate::support::share_machine();
    let b = built();
    let top = &b.report;
    assert_eq!((top["verified"].as_bool(), top["sessionsVerified"].as_bool(), top["egressJail"].as_bool()), (Some(true), Some(true), Some(true)));
    assert_eq!(top["variants"].as_array().map(Vec::len), Some(1), "one platform: {top:#}");
    let r = &top["variants"][0];
    eprintln!(
        "image {}: {} bytes, sandbox {} bytes, build {:.0} s, verify {:.0} s",
        b.tag,
        r["size"],
        r["sandboxSize"],
        r["buildSeconds"].as_f64().unwrap_or(0.0),
        r["verifySeconds"].as_f64().unwrap_or(0.0)
    );
    assert_eq!((r["tag"].as_str(), r["platform"].as_str(), r["check"].as_str()), (Some(b.tag.as_str()), Some(native_platform()), Some("native")));
    assert_eq!(r["verified"], true);
    let users: Vec<&str> = r["verify"].as_array().unwrap().iter().map(|v| v["user"].as_str().unwrap()).collect();
    assert_eq!(users, ["root", "vscode"]);
    for v in r["verify"].as_array().unwrap() {
        assert_eq!((v["failed"].as_u64(), v["escaped"].as_u64()), (Some(0), Some(0)), "{v:#}");
        assert!(v["passed"].as_u64().unwrap() > 30, "{v:#}");
        assert_eq!(v["egressJail"], true);
        assert_eq!(v["skipped"], crate::support::SKIPPED_WITHOUT_ALLOWLIST, "nothing but the allowlist's checks skipped with the jail on: {v:#}");
    }
    assert_eq!(r["labels"]["org.opencontainers.image.version"], version());
    assert_eq!(r["labels"]["org.opencontainers.image.created"], EPOCH_RFC3339);
    assert!(r["sandboxSize"].as_u64().unwrap() > 1_000_000, "bubblewrap + passt + binaries: {}", r["sandboxSize"]);
}

#[test]
fn the_image_has_its_user_path_and_start_check() {
    let _machine = crate::support::share_machine();
    let b = built();
    let inspect: Value =
        serde_json::from_slice(&ok(Command::new("podman").env("CONTAINERS_CONF", containers_conf()).args(["image", "inspect", &b.tag])).stdout).unwrap();
    let env: Vec<&str> = inspect[0]["Config"]["Env"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let path = env.iter().find_map(|e| e.strip_prefix("PATH=")).expect("PATH is set");
    assert_eq!(
        path, "/usr/local/lib/agent-sandbox/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "the shims first; no user-writable directory (root gets this PATH too)"
    );

    let out = podman(&["run", "--rm", &b.tag, "sh", "-c", "id -u vscode; stat -c '%U %a' /opt/venv; ls -l /usr/local/sbin/agent-sandbox | sed 's/.*-> //'"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "1000\nvscode 755\n../lib/agent-sandbox/bin/agent-sandbox\n");

    // The venv is on vscode's PATH (after the system directories) in its
    // login and interactive shells, and on no shell's PATH of root's.
    let shell_path = |user: &str, flag: &str| {
        stdout(&podman(&["run", "--rm", "--user", user, &b.tag, "bash", flag, "printf %s \"$PATH\""])).lines().last().unwrap_or("").to_string()
    };
    for flag in ["-lc", "-ic"] {
        let p = shell_path("vscode", flag);
        let entries: Vec<&str> = p.split(':').collect();
        let system = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/games", "/usr/games"];
        assert!(
            entries.first() == Some(&"/usr/local/lib/agent-sandbox/bin")
                && entries.last() == Some(&"/opt/venv/bin")
                && entries[1..entries.len() - 1].iter().all(|e| system.contains(e)),
            "vscode, bash {flag}: the shims, the system directories, then the venv: {p}"
        );
        let p = shell_path("root", flag);
        assert!(!p.contains("/opt/venv"), "root, bash {flag}: {p}");
    }

    // Nothing root runs is the user's: the build's audit passed, and npm's
    // global tree (the agents' CLIs) is root's alone.
    assert_eq!(
        (b.report["variants"][0]["audit"]["offenders"].as_u64(), b.report["variants"][0]["audit"]["error"].is_null()),
        (Some(0), true),
        "{:#}",
        b.report
    );
    let out = podman(&["run", "--rm", &b.tag, "sh", "-c", "find \"$(npm root -g)\" /usr/local/bin \\( ! -uid 0 -o -perm -0002 \\) ! -type l | head -5"]);
    assert_eq!((out.status.success(), stdout(&out)), (true, String::new()), "{}", stderr(&out));

    // Without the device, the start check warns and does not fail.
    let start_check = ["/usr/local/lib/agent-sandbox/bin/agent-sandbox", "doctor", "--start-check"];
    let mut args = vec!["run", "--rm", &b.tag];
    args.extend(start_check);
    let out = podman(&args);
    assert!(out.status.success());
    assert!(stderr(&out).contains("/dev/net/tun is missing"), "{}", stderr(&out));
    assert!(stderr(&out).contains("systempaths=unconfined"), "masked /proc is reported: {}", stderr(&out));
    // Started as root, the entrypoint opens the container's tun node to the
    // non-root user; the host's node keeps its mode.
    let host_mode = || std::fs::metadata("/dev/net/tun").map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777).unwrap();
    let before = host_mode();
    let out = podman(&["run", "--rm", "--device", "/dev/net/tun", &b.tag, "stat", "-c", "%a", "/dev/net/tun"]);
    assert_eq!(stdout(&out), "666\n", "{}", stderr(&out));
    assert_eq!(host_mode(), before, "the host's /dev/net/tun is untouched");
    // With the run options, all it says is the container boundary's cost:
    // this container's root is the host's, with /proc unmasked (a user
    // namespace would lift that, but this machine's /dev/net/tun is 0600,
    // which a user-namespaced container cannot open).
    let mut args = vec!["run", "--rm", "--device", "/dev/net/tun", "--security-opt", "systempaths=unconfined", &b.tag];
    args.extend(start_check);
    let out = podman(&args);
    // Before it, the entrypoint's one line about the tun node, where the
    // engine copied a mode other than 0666 from the host.
    let mut lines: Vec<String> = stderr(&out).lines().map(str::to_owned).collect();
    if before != 0o666 {
        assert!(
            !lines.is_empty() && lines.remove(0).contains(&format!("made /dev/net/tun usable by every user of this container (it was mode 0{before:o})")),
            "{lines:#?}"
        );
    }
    assert!(out.status.success() && lines.len() == 1 && lines[0].contains("[container-host-root]") && lines[0].contains("--userns=auto"), "{lines:#?}");
}

/// A container of `image` started as root with the session options (the
/// image's entrypoint runs, as in a devcontainer); removed when dropped.
struct Running {
    name: String,
}

impl Running {
    fn start(image: &str) -> Running {
        let name = unique("image-session");
        let out = podman(&[
            "run",
            "--detach",
            "--name",
            &name,
            "--device",
            "/dev/net/tun",
            "--security-opt",
            "systempaths=unconfined",
            "--network",
            "host",
            image,
            "sleep",
            "infinity",
        ]);
        assert!(out.status.success(), "podman run {image}: {}", stderr(&out));
        Running { name }
    }

    fn exec(&self, user: &str, script: &str) -> Output {
        let mut args = vec!["exec", "--user", user];
        args.extend([self.name.as_str(), "sh", "-c", script]);
        podman(&args)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = podman(&["rm", "--force", "--time", "0", &self.name]);
    }
}

/// A session in `image` as `user`: sandboxed shell facts, then the agent's
/// own CLI through its shim (`agent`: the first one the image has, if any).
fn assert_session(image: &str, users: &[&str]) {
    assert_session_with(image, users, first_agent())
}

fn assert_session_with(image: &str, users: &[&str], agent: Option<String>) {
    let vendor = agent.as_deref().map(|a| format!(" && readlink -f \"$(command -v {a})\" && {a} --version")).unwrap_or_default();
    let script = format!(
        r#"mkdir -p ~/w && cd ~/w && agent-sandbox run -- sh -c 'echo "IS_SANDBOX=$IS_SANDBOX"; grep CapEff /proc/self/status; touch /etc/x 2>/dev/null && echo WROTE-ETC; touch ./x && echo WROTE-WORKSPACE'{vendor}"#
    );
    let c = Running::start(image);
    for user in users {
        let out = c.exec(user, &script);
        let text = stdout(&out);
        assert!(out.status.success(), "session as {user} in {image} failed:\n{text}\n{}", stderr(&out));
        assert!(text.contains("IS_SANDBOX=1") && text.contains("CapEff:\t0000000000000000"), "{text}");
        assert!(!text.contains("WROTE-ETC") && text.contains("WROTE-WORKSPACE"), "/ read-only, workspace writable:\n{text}");
        if agent.is_some() {
            assert!(text.contains("/usr/local/lib/agent-sandbox/bin/agent-sandbox"), "the agent command is the shim:\n{text}");
        }
    }
}

/// `sleep infinity` as the command: tini is PID 1 and passes the engine's
/// SIGTERM on, so `podman stop` (10 s before it kills) returns at once.
/// The same on Docker: tests/suite/docker/image.rs.
#[test]
fn the_image_stops_at_once() {
    let _machine = crate::support::share_machine();
    let b = built();
    let name = unique("image-stop");
    let out = podman(&["run", "--detach", "--name", &name, "--network", "host", &b.tag, "sleep", "infinity"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pid1 = podman(&["exec", &name, "cat", "/proc/1/comm"]);
    // The proof is how the container ended, not how long podman took (on a
    // loaded machine podman alone can take seconds): a PID 1 that passes
    // SIGTERM on ends with the child's signal, 128 + 15; one that does not
    // sits out the grace period and is killed, 128 + 9.
    let start = std::time::Instant::now();
    let stop = podman(&["stop", "--time", "30", &name]);
    let took = start.elapsed();
    let code = podman(&["inspect", "--format", "{{.State.ExitCode}}", &name]);
    let _ = podman(&["rm", "--force", "--time", "0", &name]);
    assert_eq!(stdout(&pid1), "tini\n", "{}", stderr(&pid1));
    assert!(stop.status.success(), "{}", stderr(&stop));
    eprintln!("MEASURE podman stop of `sleep infinity` in the image: {:.2} s", took.as_secs_f64());
    assert_eq!(
        stdout(&code).trim(),
        "143",
        "the container must end by the forwarded SIGTERM (143), not the grace period's SIGKILL (137); podman stop took {took:?}"
    );
    assert!(took < std::time::Duration::from_secs(30), "podman stop took {took:?}: the grace period ran out");
}

#[test]
fn sessions_run_in_the_built_image() {
    let _machine = crate::support::share_machine();
    let b = built();
    assert_session(&b.tag, &["vscode", "root"]);
}

fn skopeo_inspect(reference: &str) -> Value {
    let out = ok(Command::new("skopeo").args(["inspect", "--tls-verify=false", &format!("docker://{reference}")]));
    serde_json::from_slice(&out.stdout).expect("skopeo inspect prints JSON")
}

#[test]
fn publish_pushes_every_tag_to_one_digest_and_the_image_pulls_back() {
    let _machine = crate::support::share_machine();
    let b = built();
    let env = registry_env();
    let repository = unique("image");
    let mut args: Vec<String> = ["publish", "--json", "--platform", native_platform(), "--registry", &env.registry, "--repository", &repository]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(build_flags(&b.tag));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // Dry run: the tags and labels, nothing pushed.
    let mut dry = args.clone();
    dry.push("--dry-run");
    let plan: Value = serde_json::from_slice(&ok_image(&dry).stdout).unwrap();
    let (major, minor) = (major().to_owned(), version().rsplit_once('.').unwrap().0.to_owned());
    let expected_tags = [major.as_str(), minor.as_str(), "latest", version()];
    assert_eq!(plan["tags"], serde_json::json!(expected_tags));
    assert_eq!(plan["dryRun"], true);
    assert_eq!(plan["labels"]["org.opencontainers.image.version"], version());
    assert!(plan["plan"]["build"]["variants"][0]["build"].as_array().unwrap().iter().any(|a| a == "--label"), "{plan:#}");
    assert_eq!(plan["plan"]["index"], false, "one platform: the image itself under the tags");
    assert!(tags(&env.registry, &repository).is_empty(), "a dry run pushes nothing");

    let start = std::time::Instant::now();
    let report: Value = serde_json::from_slice(&ok_image(&args).stdout).unwrap();
    eprintln!("image publish took {:.0} s; pushed {} bytes", start.elapsed().as_secs_f64(), report["pushedSize"]);
    assert_eq!(report["tags"], serde_json::json!(expected_tags));
    assert_eq!(report["build"]["verified"], true);
    assert_eq!(report["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    let digest = report["digest"].as_str().unwrap().to_owned();

    let mut sorted: Vec<String> = expected_tags.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    assert_eq!(tags(&env.registry, &repository), sorted);
    let reference = format!("{}/{repository}", env.registry);
    for tag in expected_tags {
        let info = skopeo_inspect(&format!("{reference}:{tag}"));
        assert_eq!(info["Digest"], digest.as_str(), "{tag} points at the pushed manifest");
        let labels = &info["Labels"];
        assert_eq!(labels["org.opencontainers.image.version"], version());
        assert_eq!(labels["org.opencontainers.image.source"], env!("CARGO_PKG_REPOSITORY"));
        assert_eq!(labels["org.opencontainers.image.created"], EPOCH_RFC3339);
        assert!(labels["org.opencontainers.image.revision"].as_str().is_some_and(|r| r.len() >= 7), "{labels:#}");
        let meta: Value = serde_json::from_str(labels["devcontainer.metadata"].as_str().unwrap()).unwrap();
        assert_eq!(meta[0]["remoteUser"], "vscode");
        assert_eq!(meta[0]["securityOpt"], serde_json::json!(["systempaths=unconfined", "seccomp=unconfined", "apparmor=unconfined"]));
        assert_eq!(meta[0]["postStartCommand"], "/usr/local/lib/agent-sandbox/bin/agent-sandbox doctor --start-check");
        assert_eq!(meta[0]["entrypoint"], "/usr/local/share/agent-sandbox-image/entrypoint.sh");
    }

    // Publishing the same version again changes nothing.
    let again: Value = serde_json::from_slice(&ok_image(&args).stdout).unwrap();
    assert_eq!(again["alreadyPublished"], true);
    assert_eq!(tags(&env.registry, &repository), sorted);

    // Pull it back and run a session from the pulled image.
    let pulled = format!("{reference}:{}", version());
    {
        let _store = crate::support::image_store_read();
        ok(Command::new("podman").env("CONTAINERS_CONF", containers_conf()).args(["pull", "-q", "--tls-verify=false", &pulled]));
    }
    assert_session(&pulled, &["vscode"]);
    drop_image(&pulled);
}

/// `devcontainer up` with the image: the CLI applies its devcontainer.metadata.
struct DevProject {
    dir: std::path::PathBuf,
}

impl DevProject {
    fn new(config: &str) -> Self {
        let dir = std::path::PathBuf::from("/var/lib/agent-sandbox-tests/image-devcontainer").join(unique("dc"));
        std::fs::create_dir_all(dir.join(".devcontainer")).unwrap();
        std::fs::write(dir.join(".devcontainer/devcontainer.json"), config).unwrap();
        // The workspace belongs to the remote user, as a checkout would.
        ok(Command::new("chown").args(["-R", "1000:1000"]).arg(&dir));
        DevProject { dir }
    }

    fn cli(&self, args: &[&str]) -> Output {
        let tmp = self.dir.with_extension("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        Command::new(&registry_env().devcontainer)
            .env("CONTAINERS_CONF", containers_conf())
            .env("TMPDIR", &tmp)
            .args(args)
            .args(["--docker-path", "podman", "--workspace-folder"])
            .arg(&self.dir)
            .output()
            .unwrap()
    }

    fn up(&self) -> (Value, String) {
        let _turn = podman_up_turn();
        let out = {
            let _store = crate::support::image_store_read();
            self.cli(&["up"])
        };
        let last = stdout(&out).lines().last().unwrap_or_default().to_owned();
        let outcome: Value = serde_json::from_str(&last).unwrap_or_default();
        assert!(out.status.success() && outcome["outcome"] == "success", "devcontainer up failed: {last}\n{}", stderr(&out));
        (outcome, stderr(&out))
    }

    fn exec(&self, script: &str) -> String {
        let tmp = self.dir.with_extension("tmp");
        let out = Command::new(&registry_env().devcontainer)
            .env("CONTAINERS_CONF", containers_conf())
            .env("TMPDIR", &tmp)
            .args(["exec", "--docker-path", "podman", "--workspace-folder"])
            .arg(&self.dir)
            .args(["sh", "-c", script])
            .output()
            .unwrap();
        assert!(out.status.success(), "`{script}` failed:\n{}{}", stdout(&out), stderr(&out));
        stdout(&out)
    }
}

impl Drop for DevProject {
    fn drop(&mut self) {
        let _turn = podman_up_turn();
        let _store = crate::support::image_store_write();
        let label = format!("label=devcontainer.local_folder={}", self.dir.display());
        for id in stdout(&podman(&["ps", "-aq", "--filter", &label])).split_whitespace() {
            let _ = podman(&["rm", "-f", "-t", "0", id]);
        }
        // The CLI's per-project images (`vsc-<folder>-...-uid`, made for a
        // non-root remoteUser) go with the project.
        let name = self.dir.file_name().unwrap().to_string_lossy().into_owned();
        let reference = format!("reference=localhost/vsc-{name}-*");
        for image in stdout(&podman(&["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", &reference])).split_whitespace() {
            let _ = podman(&["rmi", "-f", image]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_dir_all(self.dir.with_extension("tmp"));
    }
}

#[test]
fn the_devcontainer_cli_applies_the_image_metadata() {
    let _machine = crate::support::share_machine();
    let b = built();
    // --userns=host: for a non-root remoteUser the CLI adds --userns=keep-id,
    // which rootful podman rejects; a later --userns wins (docs/image.md).
    let p = DevProject::new(&format!(r#"{{"image": "{}", "runArgs": ["--device=/dev/net/tun", "--userns=host", "--network=host"]}}"#, b.tag));
    let (outcome, log) = p.up();
    assert_eq!(outcome["remoteUser"], "vscode", "remoteUser from the image label");
    assert!(log.contains("--security-opt systempaths=unconfined"), "securityOpt from the image label:\n{log}");
    // With the device present, the start check's only warning is the
    // container boundary's (rootful podman: the container's root is the host's).
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("agent-sandbox: WARNING")).collect();
    assert!(warnings.iter().all(|w| w.contains("[container-host-root]")), "no other start warning with the device present:\n{log}");
    let out = p.exec("id -un; echo \"$UV_PROJECT_ENVIRONMENT\"; agent-sandbox run -- sh -c 'echo IS_SANDBOX=$IS_SANDBOX; touch ./x && echo WROTE-WORKSPACE'");
    assert_eq!(out, "vscode\n/opt/venv\nIS_SANDBOX=1\nWROTE-WORKSPACE\n");
    // The remote user's commands get the venv (remoteEnv), after the system.
    let path = p.exec("printf '%s\\n' \"$PATH\"");
    assert!(path.trim_end().ends_with(":/opt/venv/bin") && path.starts_with("/usr/local/lib/agent-sandbox/bin:"), "{path}");

    // Without the device: the container starts, the image's postStartCommand warns.
    let q = DevProject::new(&format!(r#"{{"image": "{}", "runArgs": ["--userns=host"]}}"#, b.tag));
    let (_, log) = q.up();
    assert!(log.contains("agent-sandbox: WARNING: /dev/net/tun is missing"), "{log}");
}

/// The bases of both platforms (this machine's and arm64) under one local
/// manifest list, which a multi-platform build's FROM resolves per platform.
/// (`scripts/podman-env.sh trixie:arm64` makes it with the arm64 base.)
fn multiarch_base() -> &'static str {
    crate::support::podman::arm64_base();
    "localhost/debian:trixie-slim-multiarch"
}

/// `skopeo inspect` of one platform of a multi-platform reference.
fn skopeo_inspect_arch(reference: &str, arch: &str) -> Value {
    let out = ok(Command::new("skopeo").args(["inspect", "--tls-verify=false", "--override-arch", arch, &format!("docker://{reference}")]));
    serde_json::from_slice(&out.stdout).expect("skopeo inspect prints JSON")
}

#[test]
fn two_platforms_publish_as_one_index_with_labels_on_each() {
    let _machine = crate::support::share_machine();
    assert_eq!(
        std::env::consts::ARCH,
        "x86_64",
        "this test builds linux/arm64 under emulation on an x86_64 machine (the CI's); on an arm64 machine the roles swap and it needs an amd64 base"
    );
    let env = registry_env();
    let base = multiarch_base();
    let repository = unique("multiarch");
    // No agents here: what this proves is the index, the labels and the
    // emulated check; the agents' install is the same script on both
    // platforms (built() installs them natively), and npm under emulation
    // alone took most of this test's ten minutes.
    let tag = "localhost/agent-sandbox-test/multiarch:none";
    let mut args: Vec<String> = ["publish", "--json", "--registry", &env.registry, "--repository", &repository].iter().map(|s| s.to_string()).collect();
    let mut flags = build_flags(tag);
    let at = flags.iter().position(|f| f == "--agents").expect("build_flags names the agents") + 1;
    flags[at] = String::new();
    args.extend(flags);
    args.extend(["--bin-dir".into(), format!("aarch64={}", static_dir().parent().unwrap().join("aarch64").display())]);
    args.extend(["--build-arg".into(), format!("BASE_IMAGE={base}")]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // Both platforms are the default; arm64 is emulated here, so without
    // --allow-emulated nothing is built or pushed.
    let refused = run_image(&args);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("linux/arm64 can only run under emulation on this linux/amd64 machine") && stderr(&refused).contains("--allow-emulated"),
        "{}",
        stderr(&refused)
    );
    assert!(tags(&env.registry, &repository).is_empty());

    let mut allowed = args.clone();
    allowed.push("--allow-emulated");
    let start = std::time::Instant::now();
    let out = run_image(&allowed);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    eprintln!("MEASURE two-platform publish (arm64 built under emulation): {:.0} s", start.elapsed().as_secs_f64());
    assert!(out.status.success(), "publish failed:\n{}\n{report:#}", stderr(&out));
    let build = &report["build"];
    for v in build["variants"].as_array().unwrap() {
        eprintln!(
            "MEASURE {} build {:.0} s, check {:.0} s, {} bytes",
            v["platform"],
            v["buildSeconds"].as_f64().unwrap_or(0.0),
            v["verifySeconds"].as_f64().unwrap_or(0.0),
            v["size"]
        );
    }
    let (amd, arm) = (&build["variants"][0], &build["variants"][1]);
    assert_eq!((amd["platform"].as_str(), amd["check"].as_str(), amd["verified"].as_bool()), (Some("linux/amd64"), Some("native"), Some(true)), "{amd:#}");
    for run in amd["verify"].as_array().unwrap() {
        assert_eq!((run["failed"].as_u64(), run["escaped"].as_u64(), run["egressJail"].as_bool()), (Some(0), Some(0), Some(true)), "{run:#}");
    }
    assert_eq!((arm["platform"].as_str(), arm["check"].as_str(), arm["verified"].as_bool()), (Some("linux/arm64"), Some("emulated"), Some(true)), "{arm:#}");
    assert_eq!(arm["verify"], serde_json::json!([]), "no sessions under emulation");
    // doctor ran in the arm64 image: its binaries are aarch64 and installed,
    // and the only blocking finding is the emulator's.
    let emulated = &arm["emulated"];
    assert_eq!(emulated["machine"], "aarch64");
    assert_eq!(emulated["problems"], serde_json::json!([]));
    let errors: Vec<&str> = emulated["findings"].as_array().unwrap().iter().filter_map(Value::as_str).filter(|f| f.starts_with("error ")).collect();
    assert_eq!(errors, ["error userns-emulated"]);
    assert!(emulated["findings"].as_array().unwrap().iter().any(|f| f == "ok install-ok"), "{emulated:#}");
    assert_eq!((build["verified"].as_bool(), build["sessionsVerified"].as_bool()), (Some(true), Some(false)));
    assert_eq!(arm["labels"], amd["labels"], "the same labels on each platform's image");

    // The tags name one OCI index listing both platforms' manifests.
    let (major, minor) = (major().to_owned(), version().rsplit_once('.').unwrap().0.to_owned());
    let expected_tags = [major.as_str(), minor.as_str(), "latest", version()];
    assert_eq!(report["tags"], serde_json::json!(expected_tags));
    assert_eq!(report["mediaType"], "application/vnd.oci.image.index.v1+json");
    let reference = format!("{}/{repository}", env.registry);
    let raw = ok(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &format!("docker://{reference}:{}", version())])).stdout;
    let digest = format!("sha256:{:x}", sha2::Sha256::digest(&raw));
    assert_eq!(report["digest"], digest.as_str(), "the tag names the pushed index");
    let index: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(index["mediaType"], "application/vnd.oci.image.index.v1+json");
    let platforms: Vec<(&str, &str)> = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["platform"]["os"].as_str().unwrap(), m["platform"]["architecture"].as_str().unwrap()))
        .collect();
    assert_eq!(platforms, [("linux", "amd64"), ("linux", "arm64")]);
    for (i, p) in report["platforms"].as_array().unwrap().iter().enumerate() {
        assert_eq!(index["manifests"][i]["digest"], p["digest"], "{p:#}");
    }
    assert_eq!(index["annotations"]["org.opencontainers.image.version"], version());
    assert_eq!(index["annotations"]["org.opencontainers.image.source"], env!("CARGO_PKG_REPOSITORY"));
    for tag in expected_tags {
        let raw_tag = ok(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &format!("docker://{reference}:{tag}")])).stdout;
        assert_eq!(raw_tag, raw, "{tag} names the same index");
    }
    for arch in ["amd64", "arm64"] {
        let info = skopeo_inspect_arch(&format!("{reference}:latest"), arch);
        assert_eq!(info["Architecture"], arch);
        let labels = &info["Labels"];
        assert_eq!(labels["org.opencontainers.image.version"], version(), "{arch}");
        assert_eq!(labels["org.opencontainers.image.created"], EPOCH_RFC3339, "{arch}");
        assert!(labels["org.opencontainers.image.revision"].as_str().is_some_and(|r| r.len() >= 7), "{arch}: {labels:#}");
        let meta: Value = serde_json::from_str(labels["devcontainer.metadata"].as_str().unwrap()).unwrap();
        assert_eq!(meta[0]["remoteUser"], "vscode", "{arch}");
    }

    // Each platform pulls back: arm64 runs (emulated) as aarch64; this
    // machine's runs a session.
    let pulled = format!("{reference}:{}", version());
    {
        let _store = crate::support::image_store_read();
        ok(Command::new("podman").env("CONTAINERS_CONF", containers_conf()).args(["pull", "-q", "--tls-verify=false", "--platform", "linux/arm64", &pulled]));
    }
    let out = podman(&["run", "--rm", &pulled, "sh", "-c", "uname -m; agent-sandbox --version"]);
    assert_eq!(stdout(&out), format!("aarch64\nagent-sandbox {}\n", version()), "{}", stderr(&out));
    drop_image(&pulled);
    {
        let _store = crate::support::image_store_read();
        ok(Command::new("podman").env("CONTAINERS_CONF", containers_conf()).args([
            "pull",
            "-q",
            "--tls-verify=false",
            "--platform",
            native_platform(),
            &pulled,
        ]));
    }
    assert_session_with(&pulled, &["vscode"], None);
    drop_image(&pulled);
}

#[test]
fn bad_flags_are_refused_before_anything_runs() {
    let _machine = crate::support::share_machine();
    let run = |args: &[&str]| Command::new(bin()).current_dir(root()).arg("image").args(args).output().unwrap();
    let out = run(&["build", "--agents", "claude,gpt"]);
    assert_eq!(out.status.code(), Some(2), "usage error, like any bad flag value");
    assert!(stderr(&out).contains("for '--agents <LIST>': unknown agent `gpt`: the agents are claude, codex and pi"), "{}", stderr(&out));
    let out = run(&["build", "--build-arg", "AGENTS=pi"]);
    assert!(stderr(&out).contains("--build-arg AGENTS=... is set by this command; use --agents instead"), "{}", stderr(&out));
    let out = run(&["build", "--engine", "nerdctl"]);
    assert_eq!(out.status.code(), Some(2), "usage error");
    let out = run(&["build", "--platform", "linux/riscv64"]);
    assert!(stderr(&out).contains("unknown platform `linux/riscv64` in --platform: the image is built for linux/amd64 and linux/arm64"), "{}", stderr(&out));
    let out = run(&["publish", "--registry", "https://ghcr.io", "--repository", "o/a"]);
    assert!(stderr(&out).contains("write the host without a scheme"), "{}", stderr(&out));
    let out = run(&["build", "--definition", "/nonexistent"]);
    assert!(stderr(&out).contains("no Containerfile there") || stderr(&out).contains("no container engine"), "{}", stderr(&out));
}

/// Removes an image this area pulled, in the image turn (`podman_up_turn`).
fn drop_image(reference: &str) {
    let _turn = podman_up_turn();
    let _store = crate::support::image_store_write();
    let _ = podman(&["rmi", reference]);
}
