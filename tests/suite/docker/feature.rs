//! The feature on Docker, as a user meets it: published with this
//! project's tool to a real registry, brought up by the real Dev
//! Containers CLI from a Dockerfile-built Debian 13 image, with nothing but
//! the tun device in runArgs (and the host network: see docker.rs).

use crate::support::docker::*;
use crate::support::registry::*;
use serde_json::Value;
use std::process::Command;

/// Verify's syscall checks (docs/verify.md): the session's own seccomp
/// filter (68-78), what agents still need from it (79, 80), abstract
/// sockets inside a session (81).
const SYSCALL_CHECKS: std::ops::RangeInclusive<u64> = 68..=81;
/// Those that probe calls the filter refuses (an escape without it).
const FILTER_PROBES: std::ops::RangeInclusive<u64> = 68..=78;

/// Publishes the feature to the registry; its reference (`:MAJOR`).
fn publish() -> String {
    let env = registry_env();
    let namespace = unique("docker");
    let source = offline_feature_source();
    let source = source.path().to_str().unwrap();
    ok(Command::new(bin()).current_dir(root()).env("AGENT_SANDBOX_STATIC_DIR", static_dir()).args([
        "feature",
        "publish",
        "--source",
        source,
        "--registry",
        &env.registry,
        "--namespace",
        &namespace,
    ]));
    format!("{}/{namespace}/agent-sandbox:{}", env.registry, major())
}

/// A project as the issue describes it: a Dockerfile FROM Debian 13 (with
/// a `vscode` user for `remote_user`), the feature with its defaults, the
/// tun device in runArgs.
fn project(feature: &str, remote_user: Option<&str>) -> Project {
    let p = Project::new(remote_user.unwrap_or("root"));
    let user = remote_user.map(|u| format!("RUN useradd --create-home --uid 1000 --shell /bin/bash {u}\n")).unwrap_or_default();
    p.write(".devcontainer/Dockerfile", &format!("FROM {TRIXIE}\n{user}"));
    let remote = remote_user.map(|u| format!(r#""remoteUser": "{u}", "#)).unwrap_or_default();
    p.write(
        ".devcontainer/devcontainer.json",
        &format!(
            r#"{{"build": {{"dockerfile": "Dockerfile", "options": ["--network=host"]}}, "features": {{"{feature}": {{}}}}, {remote}"runArgs": ["--device=/dev/net/tun", "--network=host"]}}"#
        ),
    );
    // The workspace belongs to the remote user, as a bind-mounted checkout
    // would (a root session, which has no capabilities, writes only what
    // root owns).
    if remote_user.is_some() {
        ok(Command::new("chown").args(["-R", "1000:1000"]).arg(&p.dir));
    }
    p
}

#[test]
fn sessions_are_jailed_for_root_and_vscode() {
    let _machine = crate::support::share_machine();
    let feature = publish();
    let root_project = project(&feature, None);
    let vscode_project = project(&feature, Some("vscode"));
    // `up` is serialised (engine.rs); the checks of each run in parallel.
    std::thread::scope(|s| {
        let a = s.spawn(|| check_project(&root_project, "root", "/root"));
        let b = s.spawn(|| {
            check_project(&vscode_project, "vscode", "/home/vscode");
            session_filter_is_what_holds(&vscode_project);
            without_the_features_options_the_fix_is_named(&vscode_project);
        });
        let (a, b) = (a.join(), b.join());
        if let Err(e) = a.and(b) {
            std::panic::resume_unwind(e);
        }
    });
}

/// Up, with the feature's security options on `docker run`, then a
/// sandboxed session, doctor and the verify battery with the jail on.
fn check_project(p: &Project, user: &str, home: &str) {
    let (outcome, log) = p.up();
    assert_eq!(outcome["remoteUser"], user);
    let run = log.lines().find(|l| l.contains("Run: /usr/bin/docker run")).unwrap_or_else(|| panic!("no docker run in the log:\n{log}"));
    for opt in ["--security-opt systempaths=unconfined", "--security-opt seccomp=unconfined", "--security-opt apparmor=unconfined"] {
        assert!(run.contains(opt), "the feature's `{opt}` reaches docker run (runArgs have only the device and the network):\n{run}");
    }
    assert!(!run.contains("--privileged") && !run.contains("--cap-add"), "{run}");
    // A rootful engine without a user namespace: the container boundary's
    // warning, and nothing else.
    crate::support::assert_only_boundary_warning(&log);

    let out = p.exec_ok(
        r#"id -un; grep '^Seccomp:' /proc/self/status; agent-sandbox run -- sh -c 'echo "IS_SANDBOX=$IS_SANDBOX HOME=$HOME"; grep -E "^(CapEff|Seccomp):" /proc/self/status; touch /etc/probe 2>/dev/null && echo WROTE-ETC; touch ./probe && echo WROTE-WORKSPACE'"#,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], [user, "Seccomp:\t0"], "the container has no seccomp filter (seccomp=unconfined):\n{out}");
    assert!(out.contains(&format!("IS_SANDBOX=1 HOME={home}")) && out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(lines.contains(&"Seccomp:\t2"), "the session runs under its own filter:\n{out}");
    assert!(!out.contains("WROTE-ETC") && out.contains("WROTE-WORKSPACE"), "/ read-only, workspace writable:\n{out}");

    // doctor agrees (the project's devcontainer.json is linted too).
    let doctor: Value = serde_json::from_str(&p.exec_ok("agent-sandbox doctor --json || true")).unwrap();
    // The one warning: the container boundary (a rootful engine without userns-remap).
    let problems: Vec<&Value> = doctor["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error" || f["severity"] == "warning").collect();
    assert!(problems.iter().all(|f| f["id"] == "container-host-root"), "doctor in the feature container: {problems:#?}");
    for id in ["userns-ok", "mounts-ok", "pasta-ok", "filter-ok", "devcontainer-ok"] {
        assert!(doctor["findings"].as_array().unwrap().iter().any(|f| f["id"] == id), "{id} missing: {doctor:#}");
    }

    let t = std::time::Instant::now();
    let v = report(&p.exec_ok("agent-sandbox verify --json || true"));
    eprintln!("MEASURE verify as {user} on docker: {:.1} s", t.elapsed().as_secs_f64());
    let s = &v["summary"];
    assert!(
        s["failed"] == 0 && s["escaped"] == 0 && s["skipped"] == crate::support::SKIPPED_WITHOUT_ALLOWLIST && s["passed"].as_u64().unwrap_or(0) > 30,
        "verify as {user}: {v:#}"
    );
    assert_eq!(v["egressJail"], true);
    for n in SYSCALL_CHECKS {
        assert!(matches!(status(&v, n).as_str(), "pass" | "blocked"), "check {n} as {user}: {}", status(&v, n));
    }
}

/// The container has no seccomp filter of its own, so the syscall probes
/// are stopped by the session's filter alone: without it they escape.
fn session_filter_is_what_holds(p: &Project) {
    let v = report(&p.exec_ok("agent-sandbox verify --weaken seccomp --json || true"));
    for n in FILTER_PROBES {
        assert_eq!(status(&v, n), "escaped", "check {n} without the session's filter: {v:#}");
    }
}

/// The same image started by hand without the feature's options (Docker's
/// default seccomp profile): the jail refuses and doctor reports it, both
/// naming the runArgs line.
fn without_the_features_options_the_fix_is_named(p: &Project) {
    let image = docker_ok(&["inspect", "--format", "{{.Config.Image}}", &p.container()]);
    let c = Container::run(&["--network", "host", "--device", "/dev/net/tun", "--security-opt", "systempaths=unconfined", image.trim(), "sleep", "infinity"]);
    // What the CLI does at start: the feature's entrypoint, as root (it
    // opens the container's tun node to the user).
    let entry = c.sh("root", "/usr/local/share/agent-sandbox-feature/entrypoint.sh");
    assert!(entry.status.success(), "{}", stderr(&entry));
    let out = c.sh("vscode", "mkdir -p ~/w && cd ~/w && agent-sandbox run -- true");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("egress jail: user namespaces are not available") && err.contains("Seccomp: 2") && err.contains(agent_sandbox::fixes::SECCOMP),
        "{err}"
    );
    let doctor: Value = serde_json::from_str(&stdout(&c.sh("vscode", "cd ~/w && agent-sandbox doctor --json"))).unwrap();
    let f = doctor["findings"].as_array().unwrap().iter().find(|f| f["check"] == "userns").cloned().unwrap_or_default();
    assert_eq!(
        (f["id"].as_str(), f["severity"].as_str(), f["fix"].as_str()),
        (Some("userns-seccomp"), Some("error"), Some(agent_sandbox::fixes::SECCOMP)),
        "{doctor:#}"
    );
}
