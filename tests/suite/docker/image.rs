//! The reference image with Docker: `agent-sandbox image build --engine
//! docker` (BuildKit, verify inside as root and vscode), the image run the
//! way docs/image.md says, its stop time, `image publish` from Docker's
//! storage (docker 20.10's legacy `save` archive) to the registry, the
//! pushed image checked independently (skopeo, the layers against the
//! config), pulled back, and the devcontainer route with its metadata.

use crate::support::docker::*;
use crate::support::registry::*;
use serde_json::Value;
use sha2::Digest as _;
use std::io::Read as _;
use std::process::Command;
use std::time::{Duration, Instant};

const AGENTS_VAR: &str = "AGENT_SANDBOX_IMAGE_TEST_AGENTS";
const EPOCH: &str = "1795863601";
const HOST_CA: &str = "/etc/ssl/certs/ca-certificates.crt";
/// The run options docs/image.md gives for docker, with the shipped
/// seccomp profile instead of none (plus the host network of the test
/// engine, which has no bridge).
fn docs_run_options() -> Vec<String> {
    let seccomp = format!("seccomp={}", root().join("deploy/seccomp/agent-sandbox.json").display());
    [
        "--device",
        "/dev/net/tun",
        "--security-opt",
        "systempaths=unconfined",
        "--security-opt",
        &seccomp,
        "--security-opt",
        "apparmor=unconfined",
        "--network",
        "host",
    ]
    .iter()
    .map(|o| o.to_string())
    .collect()
}

fn agents() -> String {
    std::env::var(AGENTS_VAR).unwrap_or_else(|_| "pi".into())
}

fn image_cmd(args: &[&str]) -> Command {
    let mut c = agent_sandbox();
    c.env("SOURCE_DATE_EPOCH", EPOCH).arg("image").args(args);
    c
}

/// The flags of every build here (so publish reuses the build's cache).
fn build_flags(tag: &str) -> Vec<String> {
    let mut f: Vec<String> = ["--engine", "docker", "--platform", "linux/amd64", "--tag", tag, "--agents", &agents(), "--network", "host", "--bin-dir"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    f.push(format!("{}={}", std::env::consts::ARCH, static_dir().display()));
    if std::path::Path::new(HOST_CA).is_file() {
        f.extend(["--extra-ca".into(), HOST_CA.into()]);
    }
    f
}

#[test]
fn builds_runs_stops_and_publishes() {
    let _machine = crate::support::share_machine();
    assert_eq!(std::env::consts::ARCH, "x86_64", "the Docker image test builds linux/amd64");
    let tag = format!("localhost/agent-sandbox-test/docker-image:{}", if agents().is_empty() { "none".into() } else { agents().replace(',', "-") });
    build(&tag);
    run_as_the_docs_say(&tag);
    a_0600_tun_node_as_users_meet_it(&tag);
    publish(&tag);
    devcontainer_route(&tag);
}

fn build(tag: &str) {
    let mut args = vec!["build".to_owned(), "--json".to_owned()];
    args.extend(build_flags(tag));
    let t = Instant::now();
    let out = image_cmd(&args.iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap();
    eprintln!("MEASURE image build --engine docker: {:.0} s", t.elapsed().as_secs_f64());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(out.status.success(), "image build --engine docker failed:\n{}\n{report:#}", stderr(&out));
    assert_eq!(
        (report["engine"].as_str(), report["verified"].as_bool(), report["sessionsVerified"].as_bool()),
        (Some("docker"), Some(true), Some(true)),
        "{report:#}"
    );
    let v = &report["variants"][0];
    let users: Vec<&str> = v["verify"].as_array().unwrap().iter().map(|r| r["user"].as_str().unwrap()).collect();
    assert_eq!(users, ["root", "vscode"]);
    for r in v["verify"].as_array().unwrap() {
        assert_eq!(
            (r["failed"].as_u64(), r["escaped"].as_u64(), r["skipped"].as_u64(), r["egressJail"].as_bool()),
            (Some(0), Some(0), Some(crate::support::SKIPPED_WITHOUT_ALLOWLIST), Some(true)),
            "{r:#}"
        );
    }
}

/// docs/image.md's docker route: started as root with the run options, the
/// agent and a session exec'd as `vscode` in a mounted checkout; PID 1 is
/// tini, so the container stops at once.
fn run_as_the_docs_say(tag: &str) {
    let ws = tempfile::Builder::new().prefix("docker-ws").tempdir_in("/var/lib/agent-sandbox-tests").unwrap();
    ok(Command::new("chown").args(["1000:1000"]).arg(ws.path()));
    let mount = format!("{}:/workspaces/project", ws.path().display());
    let docs = docs_run_options();
    let mut opts: Vec<&str> = docs.iter().map(String::as_str).collect();
    opts.extend(["-v", &mount, tag, "sleep", "infinity"]);
    let c = Container::run(&opts);
    let agent = agents().split(',').next().unwrap_or_default().trim().to_owned();
    let vendor = if agent.is_empty() { String::new() } else { format!(" && readlink -f \"$(command -v {agent})\" && {agent} --version") };
    let script = format!(
        r#"cd /workspaces/project && agent-sandbox run -- sh -c 'echo "IS_SANDBOX=$IS_SANDBOX"; grep -E "^(CapEff|Seccomp):" /proc/self/status; touch ./x && echo WROTE-WORKSPACE'{vendor}"#
    );
    let out = c.sh("vscode", &script);
    let text = stdout(&out);
    assert!(out.status.success(), "a session as vscode:\n{text}{}", stderr(&out));
    assert!(
        text.contains("IS_SANDBOX=1") && text.contains("CapEff:\t0000000000000000") && text.contains("Seccomp:\t2") && text.contains("WROTE-WORKSPACE"),
        "{text}"
    );
    if !agent.is_empty() {
        assert!(text.contains("/usr/local/lib/agent-sandbox/bin/agent-sandbox"), "{agent} is the shim:\n{text}");
    }
    assert_eq!(stdout(&c.sh("root", "cat /proc/1/comm")), "tini\n");
    let t = Instant::now();
    docker_ok(&["stop", &c.name]);
    let took = t.elapsed();
    eprintln!("MEASURE docker stop of `sleep infinity` in the image: {:.2} s", took.as_secs_f64());
    assert!(took < Duration::from_secs(2), "docker stop took {took:?}: PID 1 must pass SIGTERM on");
}

/// A host without udev has `/dev/net/tun` at 0600 and Docker gives the
/// container a node with the host's mode. The test makes such nodes itself
/// (a private 10:200 node at 0600, and a 0600 node of another device under
/// the name) so the result does not depend on this machine's node:
/// - through the entrypoint (root), the container's own node becomes 0666,
///   the log says so once, a session as vscode is jailed, and the host's
///   node is untouched;
/// - a node at that name that is not the TUN device is left as it is;
/// - with the entrypoint skipped, vscode's session refuses with the node's
///   mode and the docker command that fixes it, and doctor reports it.
fn a_0600_tun_node_as_users_meet_it(tag: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::Builder::new().prefix("docker-tun").tempdir_in("/var/lib/agent-sandbox-tests").unwrap();
    let node = |name: &str, major: u32, minor: u32| {
        let p = dir.path().join(name);
        nix::sys::stat::mknod(
            &p,
            nix::sys::stat::SFlag::S_IFCHR,
            nix::sys::stat::Mode::from_bits_truncate(0o600),
            nix::sys::stat::makedev(major.into(), minor.into()),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        p.display().to_string()
    };
    let (tun, other) = (node("tun", 10, 200), node("other", 1, 3));
    let docs = docs_run_options();
    let run = |device: &str, entrypoint: Option<&str>| {
        let mapping = format!("{device}:/dev/net/tun");
        let mut opts: Vec<&str> = vec!["--device", &mapping];
        opts.extend(docs.iter().skip(2).map(String::as_str));
        if let Some(e) = entrypoint {
            opts.extend(["--entrypoint", e]);
        }
        opts.extend([tag, "sleep", "infinity"]);
        let c = Container::run(&opts);
        let mode = stdout(&c.sh("root", "stat -c %a /dev/net/tun")).trim().to_owned();
        (c, mode)
    };
    let logs = |c: &Container| {
        let out = docker(&["logs", &c.name]);
        format!("{}{}", stdout(&out), stderr(&out))
    };

    let (c, mode) = run(&tun, None);
    assert_eq!(mode, "666", "the entrypoint makes the container's own TUN node usable");
    let log = logs(&c);
    assert_eq!(log.matches("agent-sandbox: made /dev/net/tun usable").count(), 1, "said once: {log}");
    assert!(log.contains("it was mode 0600"), "{log}");
    // The jail is on by default and a session refuses without it.
    let out = c.sh("vscode", "mkdir -p ~/w && cd ~/w && agent-sandbox run -- sh -c 'echo IS_SANDBOX=$IS_SANDBOX'");
    assert!(out.status.success() && stdout(&out) == "IS_SANDBOX=1\n", "{}{}", stdout(&out), stderr(&out));
    drop(c);
    let host = std::fs::metadata(&tun).unwrap().permissions().mode() & 0o7777;
    assert_eq!(host, 0o600, "the host's node is not touched");

    let (c, mode) = run(&other, None);
    assert_eq!(mode, "600", "a node at that name that is not the TUN device is left alone");
    assert!(!logs(&c).contains("made /dev/net/tun usable"));
    drop(c);

    let (c, mode) = run(&tun, Some("/usr/bin/tini"));
    assert_eq!(mode, "600", "no entrypoint, no change");
    let out = c.sh("vscode", "mkdir -p ~/w && cd ~/w && agent-sandbox run -- true");
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("/dev/net/tun is the TUN device") && err.contains("mode 0600, owner 0:0") && err.contains("docker exec -u root"), "{err}");
    let doctor = stdout(&c.sh("vscode", "agent-sandbox doctor --json"));
    let v: Value = serde_json::from_str(&doctor).unwrap_or(Value::Null);
    let f = v["findings"].as_array().into_iter().flatten().find(|f| f["check"] == "tun").cloned().unwrap_or(Value::Null);
    assert_eq!(f["id"], "tun-permission", "{doctor}");
    assert!(f["message"].as_str().unwrap_or_default().contains("mode 0600"), "{f:#}");
}

fn publish(tag: &str) {
    let env = registry_env();
    let repository = unique("docker-image");
    let mut args: Vec<String> = ["publish", "--json", "--registry", &env.registry, "--repository", &repository].iter().map(|s| s.to_string()).collect();
    args.extend(build_flags(tag));
    let t = Instant::now();
    let out = image_cmd(&args.iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap();
    eprintln!("MEASURE image publish --engine docker: {:.0} s", t.elapsed().as_secs_f64());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(out.status.success(), "image publish --engine docker failed:\n{}\n{report:#}", stderr(&out));
    assert!(stderr(&out).contains("compressing the layers of docker's legacy archive"), "docker 20.10 writes the legacy archive:\n{}", stderr(&out));
    assert_eq!(report["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    let (major, minor) = (major().to_owned(), version().rsplit_once('.').unwrap().0.to_owned());
    assert_eq!(report["tags"], serde_json::json!([major.as_str(), minor.as_str(), "latest", version()]));
    let reference = format!("{}/{repository}:{}", env.registry, version());

    // Independently of the code under test: the tag names the pushed
    // manifest, skopeo copies every blob (checking its digest), and each
    // layer unpacks to the content the image config names.
    let raw = ok(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &format!("docker://{reference}")])).stdout;
    assert_eq!(report["digest"], format!("sha256:{:x}", sha2::Sha256::digest(&raw)).as_str());
    let copy = tempfile::tempdir().unwrap();
    ok(Command::new("skopeo")
        .args(["copy", "--quiet", "--src-tls-verify=false", &format!("docker://{reference}")])
        .arg(format!("dir:{}", copy.path().display())));
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    let blob = |d: &Value| copy.path().join(d.as_str().unwrap().trim_start_matches("sha256:"));
    let config: Value = serde_json::from_slice(&std::fs::read(blob(&manifest["config"]["digest"])).unwrap()).unwrap();
    let diff_ids = config["rootfs"]["diff_ids"].as_array().unwrap();
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), diff_ids.len());
    for (layer, diff_id) in layers.iter().zip(diff_ids) {
        assert_eq!(layer["mediaType"], "application/vnd.oci.image.layer.v1.tar+gzip");
        let mut plain = sha2::Sha256::new();
        let mut gz = flate2::read::GzDecoder::new(std::fs::File::open(blob(&layer["digest"])).unwrap());
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = gz.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            plain.update(&buf[..n]);
        }
        assert_eq!(format!("sha256:{:x}", plain.finalize()), diff_id.as_str().unwrap(), "a pushed layer unpacks to what the config names");
    }
    let labels = &config["config"]["Labels"];
    assert_eq!(labels["org.opencontainers.image.version"], version());
    let meta: Value = serde_json::from_str(labels["devcontainer.metadata"].as_str().unwrap()).unwrap();
    assert_eq!(meta[0]["securityOpt"], serde_json::json!(["systempaths=unconfined", "seccomp=unconfined", "apparmor=unconfined"]));

    // Docker pulls it back, and a session runs in the pulled image.
    docker_ok(&["pull", "--quiet", &reference]);
    let docs = docs_run_options();
    let mut opts: Vec<&str> = docs.iter().map(String::as_str).collect();
    opts.extend([reference.as_str(), "sleep", "infinity"]);
    let c = Container::run(&opts);
    let out = c.sh("vscode", "mkdir -p ~/w && cd ~/w && agent-sandbox run -- sh -c 'echo IS_SANDBOX=$IS_SANDBOX'");
    assert_eq!(stdout(&out), "IS_SANDBOX=1\n", "{}", stderr(&out));
    drop(c);
    let _ = docker(&["rmi", &reference]);
}

/// `"image"` in devcontainer.json with only the device (and the host
/// network) in runArgs: the image's metadata gives the remote user and the
/// security options, and the battery passes as `vscode`.
fn devcontainer_route(tag: &str) {
    let p = Project::new("image");
    p.write(".devcontainer/devcontainer.json", &format!(r#"{{"image": "{tag}", "runArgs": ["--device=/dev/net/tun", "--network=host"]}}"#));
    ok(Command::new("chown").args(["-R", "1000:1000"]).arg(&p.dir));
    let (outcome, log) = p.up();
    assert_eq!(outcome["remoteUser"], "vscode", "remoteUser from the image label");
    let run = log.lines().find(|l| l.contains("Run: /usr/bin/docker run")).unwrap_or_default();
    for opt in ["--security-opt systempaths=unconfined", "--security-opt seccomp=unconfined", "--security-opt apparmor=unconfined"] {
        assert!(run.contains(opt), "`{opt}` from the image label:\n{run}");
    }
    // A rootful engine without a user namespace: the container boundary's
    // warning, and nothing else.
    crate::support::assert_only_boundary_warning(&log);
    let v = report(&p.exec_ok("agent-sandbox verify --json || true"));
    let s = &v["summary"];
    assert!(
        s["failed"] == 0 && s["escaped"] == 0 && s["skipped"] == crate::support::SKIPPED_WITHOUT_ALLOWLIST && v["egressJail"] == true,
        "verify as vscode: {v:#}"
    );
}
