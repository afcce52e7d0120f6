//! End to end: the feature and template, published with this project's
//! tool to a real registry (docker-registry on localhost), consumed by the
//! real Dev Containers CLI with podman (`devcontainer up --docker-path
//! podman`), and a sandboxed session run in the result with
//! `devcontainer exec`:
//!  - a root container from `localhost/debian:trixie-slim` with the feature
//!    from the registry (and the start warning when /dev/net/tun is missing);
//!  - a non-root `remoteUser` built from a Dockerfile;
//!  - `devcontainer templates apply` of the published template, brought up.
//!
//! Those sessions run with AGENT_SANDBOX_EGRESS_JAIL=0 (they are about
//! the feature); `jail_holds_in_a_feature_container` runs sessions and the
//! verify battery with the jail on, in a container given /dev/net/tun.
//!
//! Needs root; the scripts install podman, docker-registry and the CLI, and
//! build the static binaries when AGENT_SANDBOX_STATIC_DIR is not set.
//! Each test cleans up its containers and images. The feature is published
//! without its `installsAfter` (see `published`): the CLI would fetch the
//! features it names from ghcr.io, which this machine cannot reach.

use crate::support::registry::*;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// The feature and templates, published once per run.
struct Published {
    registry: String,
    namespace: String,
}

impl Published {
    /// `localhost:PORT/NS/agent-sandbox:MAJOR`.
    fn feature_ref(&self) -> String {
        format!("{}/{}/agent-sandbox:{}", self.registry, self.namespace, major())
    }
}

fn published() -> &'static Published {
    static P: OnceLock<Published> = OnceLock::new();
    P.get_or_init(|| {
        let env = registry_env();
        let namespace = unique("e2e");
        // The documented command: no --bin-dir, so both architectures'
        // binaries are bundled from the folders scripts/build-static.sh wrote.
        let run = |args: &[&str]| ok(Command::new(bin()).current_dir(root()).env("AGENT_SANDBOX_STATIC_DIR", static_dir()).args(args));
        let source = offline_feature_source();
        run(&["feature", "publish", "--source", source.path().to_str().unwrap(), "--registry", &env.registry, "--namespace", &namespace]);
        let m = manifest(&env.registry, &format!("{namespace}/agent-sandbox"), version());
        let layer = blob(&env.registry, &format!("{namespace}/agent-sandbox"), m["layers"][0]["digest"].as_str().unwrap());
        let mut listing = Vec::new();
        for e in tar::Archive::new(layer.as_slice()).entries().unwrap() {
            listing.push(String::from_utf8_lossy(&e.unwrap().path_bytes()).into_owned());
        }
        for arch in ["x86_64", "aarch64"] {
            assert!(listing.contains(&format!("./bin/{arch}/sandbox-install")), "the published feature carries {arch}: {listing:?}");
        }
        let feature = format!("{}/{namespace}/agent-sandbox", env.registry);
        let templates = format!("{namespace}/templates");
        run(&["templates", "publish", "--registry", &env.registry, "--namespace", &templates, "--feature", &feature]);
        Published { registry: env.registry.clone(), namespace }
    })
}

/// A project folder for `devcontainer up`; removes its containers and
/// images when dropped.
struct Project {
    dir: PathBuf,
    /// Untagged images (build layers) that appeared during this project's `up`.
    layers: Mutex<Vec<String>>,
}

fn podman(args: &[&str]) -> std::io::Result<Output> {
    Command::new("podman").env("CONTAINERS_CONF", containers_conf()).args(args).output()
}

fn untagged_images() -> Vec<String> {
    podman(&["images", "-q", "--no-trunc", "--filter", "dangling=true"]).map(|o| stdout(&o).split_whitespace().map(str::to_owned).collect()).unwrap_or_default()
}

impl Project {
    fn new(name: &str) -> Self {
        let dir = PathBuf::from("/var/lib/agent-sandbox-tests/feature-e2e").join(unique(name));
        fs::create_dir_all(dir.join(".devcontainer")).unwrap();
        Project { dir, layers: Mutex::new(Vec::new()) }
    }

    fn write(&self, rel: &str, text: &str) {
        fs::write(self.dir.join(rel), text).unwrap();
    }

    /// The CLI, with a private TMPDIR: concurrent `devcontainer up` runs
    /// otherwise share build folders under /tmp/devcontainercli-$USER.
    fn devcontainer(&self) -> Command {
        let tmp = self.dir.with_extension("tmp");
        fs::create_dir_all(&tmp).unwrap();
        let mut c = Command::new(&registry_env().devcontainer);
        c.env("CONTAINERS_CONF", containers_conf()).env("TMPDIR", &tmp);
        c
    }

    /// `devcontainer up`; the outcome JSON and the log. One at a time (see
    /// `podman_up_turn`).
    fn up(&self) -> (Value, String) {
        let _turn = podman_up_turn();
        let before = untagged_images();
        let out = {
            let _store = crate::support::image_store_read();
            self.devcontainer().args(["up", "--docker-path", "podman", "--workspace-folder"]).arg(&self.dir).output().unwrap()
        };
        let new_layers = untagged_images().into_iter().filter(|i| !before.contains(i));
        self.layers.lock().unwrap_or_else(|e| e.into_inner()).extend(new_layers);
        let log = stderr(&out);
        let last = stdout(&out).lines().last().unwrap_or_default().to_owned();
        let outcome: Value = serde_json::from_str(&last).unwrap_or_default();
        assert!(out.status.success() && outcome["outcome"] == "success", "devcontainer up failed: {last}\n{log}");
        (outcome, log)
    }

    /// `devcontainer exec -- sh -c SCRIPT` in the running container.
    fn exec(&self, script: &str) -> Output {
        self.devcontainer().args(["exec", "--docker-path", "podman", "--workspace-folder"]).arg(&self.dir).args(["sh", "-c", script]).output().unwrap()
    }

    fn exec_ok(&self, script: &str) -> String {
        let out = self.exec(script);
        assert!(out.status.success(), "`{script}` failed in the container:\n{}{}", stdout(&out), stderr(&out));
        stdout(&out)
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _turn = podman_up_turn();
        let _store = crate::support::image_store_write();
        let label = format!("label=devcontainer.local_folder={}", self.dir.display());
        if let Ok(out) = podman(&["ps", "-aq", "--filter", &label]) {
            for id in stdout(&out).split_whitespace() {
                let _ = podman(&["rm", "-f", "-t", "0", id]);
            }
        }
        let name = self.dir.file_name().unwrap().to_string_lossy().into_owned();
        if let Ok(out) = podman(&["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", &format!("reference=localhost/vsc-{name}-*")]) {
            for image in stdout(&out).split_whitespace() {
                let _ = podman(&["rmi", "-f", image]);
            }
        }
        // A layer goes once its children are gone (`podman images` lists newest first).
        let layers = self.layers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for layer in layers.iter().chain(layers.iter()) {
            let _ = podman(&["rmi", layer]);
        }
        let _ = fs::remove_dir_all(&self.dir);
        let _ = fs::remove_dir_all(self.dir.with_extension("tmp"));
    }
}

/// A session with the jail off (see the module comment).
const SESSION: &str = "AGENT_SANDBOX_EGRESS_JAIL=0 agent-sandbox run --";

fn assert_sandboxed_session(p: &Project, expect_home: &str) {
    let script = format!(
        r#"{SESSION} sh -c 'echo "IS_SANDBOX=$IS_SANDBOX HOME=$HOME"; grep CapEff /proc/self/status; touch /etc/probe 2>/dev/null && echo WROTE-ETC; touch ./probe && echo WROTE-WORKSPACE'"#
    );
    let out = p.exec_ok(&script);
    assert!(out.contains(&format!("IS_SANDBOX=1 HOME={expect_home}")), "{out}");
    assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(!out.contains("WROTE-ETC") && out.contains("WROTE-WORKSPACE"), "/ read-only, workspace writable:\n{out}");
    // The shims resolve to the sandbox, and the battery passes in this container.
    let shim = p.exec_ok("readlink -f \"$(command -v claude)\"");
    assert!(shim.trim().ends_with("/agent-sandbox"), "claude is not the shim: {shim}");
    let report: Value = serde_json::from_str(&p.exec_ok("AGENT_SANDBOX_EGRESS_JAIL=0 agent-sandbox verify --json --allow-jail-off || true")).unwrap();
    let s = &report["summary"];
    assert!(s["failures"] == 0 && s["escaped"] == 0 && s["passed"].as_u64().unwrap_or(0) > 10, "verify in the container: {report:#}");
}

fn base_config(feature: &str, options: &str, extra: &str) -> String {
    format!(r#"{{"image": "localhost/debian:trixie-slim", "features": {{"{feature}": {options}}}{extra}}}"#)
}

#[test]
fn feature_from_the_registry_sandboxes_root_sessions() {
    let _machine = crate::support::share_machine();
    let p = published();
    let a = Project::new("root");
    a.write(".devcontainer/devcontainer.json", &base_config(&p.feature_ref(), r#"{"agents": "claude"}"#, r#", "runArgs": ["--device=/dev/net/tun"]"#));
    let (outcome, log) = a.up();
    assert_eq!(outcome["remoteUser"], "root");
    assert!(log.contains("running bin/x86_64/sandbox-install --agents claude"), "{log}");
    crate::support::assert_only_boundary_warning(&log);
    // The feature's securityOpt reached the engine (the project did not ask);
    // podman accepts Docker's spellings (tests/suite/docker.rs: the same on Docker).
    for opt in ["--security-opt systempaths=unconfined", "--security-opt seccomp=unconfined", "--security-opt apparmor=unconfined"] {
        assert!(log.contains(opt), "{opt}:\n{log}");
    }
    assert_sandboxed_session(&a, "/root");

    // Without the device the container still starts, with the warning.
    let d = Project::new("notun");
    d.write(".devcontainer/devcontainer.json", &base_config(&p.feature_ref(), r#"{"agents": "claude"}"#, ""));
    let (_, log) = d.up();
    assert!(log.contains("agent-sandbox: WARNING: /dev/net/tun is missing") && log.contains("--device=/dev/net/tun"), "{log}");
}

#[test]
fn feature_supports_a_non_root_remote_user() {
    let _machine = crate::support::share_machine();
    let p = published();
    let b = Project::new("user");
    b.write(".devcontainer/Dockerfile", "FROM localhost/debian:trixie-slim\nRUN useradd -m -s /bin/bash dev\n");
    // --userns=host: with a non-root remoteUser the Dev Containers CLI adds
    // --userns=keep-id for podman, which rootful podman rejects; a later
    // --userns wins. (Docker and rootless podman need nothing.)
    b.write(
        ".devcontainer/devcontainer.json",
        &format!(
            r#"{{"build": {{"dockerfile": "Dockerfile"}}, "features": {{"{}": {{"agents": "claude,codex"}}}}, "remoteUser": "dev", "runArgs": ["--device=/dev/net/tun", "--userns=host"]}}"#,
            p.feature_ref()
        ),
    );
    // The workspace belongs to the user, as a bind-mounted checkout would.
    ok(Command::new("chown").args(["-R", "1000:1000"]).arg(&b.dir));
    let (outcome, log) = b.up();
    assert_eq!(outcome["remoteUser"], "dev");
    assert!(log.contains("--user dev"), "install.sh passes the remote user: {log}");
    assert_sandboxed_session(&b, "/home/dev");
    // The installer made each agent's state in the user's home; a claude
    // session sees only its own.
    let out = b.exec_ok("id -un; ls -d ~/.claude ~/.codex");
    assert!(out.contains("dev\n") && out.contains("/home/dev/.claude") && out.contains("/home/dev/.codex"), "{out}");
    let out = b.exec_ok(&format!("{SESSION} sh -c 'id -un; ls -d ~/.claude; ls -d ~/.codex 2>&1 || true'"));
    assert!(out.contains("dev\n") && out.contains("/home/dev/.claude\n") && out.contains("No such file"), "{out}");
}

#[test]
fn template_applies_and_comes_up() {
    let _machine = crate::support::share_machine();
    let p = published();
    let c = Project::new("tpl");
    let template = format!("{}/{}/templates/agent-sandbox-debian:{}", p.registry, p.namespace, major());
    let args = r#"{"imageVariant": "localhost/debian:trixie-slim", "agents": "claude"}"#;
    ok(c.devcontainer().args(["templates", "apply", "--workspace-folder"]).arg(&c.dir).args(["-t", &template, "--template-args", args]));
    let applied = fs::read_to_string(c.dir.join(".devcontainer/devcontainer.json")).unwrap();
    assert!(!applied.contains("${templateOption"), "{applied}");
    for needle in
        [&p.feature_ref(), "\"localhost/debian:trixie-slim\"", "\"agents\": \"claude\"", "--device=/dev/net/tun", "--security-opt=systempaths=unconfined"]
    {
        assert!(applied.contains(needle), "`{needle}` missing in the applied devcontainer.json:\n{applied}");
    }
    assert!(!Path::new(&c.dir.join("devcontainer-template.json")).exists() && !c.dir.join("NOTES.md").exists());
    let (_, log) = c.up();
    crate::support::assert_only_boundary_warning(&log);
    assert_sandboxed_session(&c, "/root");
}

/// A feature whose containerEnv puts a vendor `claude` first on PATH (as
/// the node feature does with nvm's directory), installed before or after
/// agent-sandbox: installed after it, commands run without a shell
/// (`podman exec CTR claude`) get the vendor binary, and the start check
/// says so; installed before it (what installsAfter arranges for the
/// common language features), the shim wins there too.
#[test]
fn the_shims_stay_first_for_commands_run_without_a_shell() {
    let _machine = crate::support::share_machine();
    let p = published();
    let ours = format!("{}/{}/agent-sandbox", p.registry, p.namespace);
    for (order, shim_wins) in [(["./fake-node", ours.as_str()], true), ([ours.as_str(), "./fake-node"], false)] {
        let x = Project::new(if shim_wins { "path-ok" } else { "path-bad" });
        fs::create_dir_all(x.dir.join(".devcontainer/fake-node")).unwrap();
        x.write(
            ".devcontainer/fake-node/devcontainer-feature.json",
            r#"{"id": "fake-node", "version": "1.0.0", "name": "a language feature that puts its bin directory first", "containerEnv": {"PATH": "/usr/local/share/fake-node/bin:${PATH}"}}"#,
        );
        x.write(
            ".devcontainer/fake-node/install.sh",
            "#!/bin/sh
set -e
mkdir -p /usr/local/share/fake-node/bin
printf '#!/bin/sh\necho VENDOR-CLAUDE-UNSANDBOXED\n' > /usr/local/share/fake-node/bin/claude
chmod 755 /usr/local/share/fake-node/bin/claude
",
        );
        x.write(
            ".devcontainer/devcontainer.json",
            &format!(
                r#"{{"image": "localhost/debian:trixie-slim", "features": {{"./fake-node": {{}}, "{}": {{"agents": "claude"}}}}, "overrideFeatureInstallOrder": ["{}", "{}"], "runArgs": ["--device=/dev/net/tun"]}}"#,
                p.feature_ref(),
                order[0],
                order[1]
            ),
        );
        let (outcome, log) = x.up();
        let id = outcome["containerId"].as_str().expect("containerId");
        // Without a shell: the container's own PATH.
        let out = podman(&["exec", id, "sh", "-c", "command -v claude"]).unwrap();
        let found = stdout(&out).trim().to_string();
        let warned = log.contains("[exec-path-vendor-first]");
        if shim_wins {
            assert_eq!(found, "/usr/local/lib/agent-sandbox/bin/claude", "{order:?}\n{log}");
            assert!(!warned, "{log}");
        } else {
            assert_eq!(found, "/usr/local/share/fake-node/bin/claude", "{order:?}");
            assert!(
                warned && log.contains("runs /usr/local/share/fake-node/bin/claude there, outside the sandbox"),
                "the start check names the vendor binary that wins:\n{log}"
            );
        }
    }
}

/// The jail inside a feature container: a route change refused, the
/// container's own address on the podman bridge (its connected subnet)
/// unreachable from the session but reachable from the container itself,
/// the bridge gateway reachable (SPEC: the gateway stays reachable), and
/// the verify battery with the jail on.
#[test]
fn jail_holds_in_a_feature_container() {
    let _machine = crate::support::share_machine();
    let p = published();
    let j = Project::new("jail");
    j.write(
        ".devcontainer/Dockerfile",
        "FROM localhost/debian:trixie-slim\nRUN apt-get update -qq && apt-get install -y -qq --no-install-recommends iproute2 socat >/dev/null\n",
    );
    j.write(
        ".devcontainer/devcontainer.json",
        &format!(r#"{{"build": {{"dockerfile": "Dockerfile"}}, "features": {{"{}": {{}}}}, "runArgs": ["--device=/dev/net/tun"]}}"#, p.feature_ref()),
    );
    j.up();
    // A listener on the container's own bridge address: a host on its
    // connected subnet, which the jail must blackhole.
    let addr = j.exec_ok("ip -4 -o addr show scope global | awk '{split($4, a, \"/\"); print a[1]; exit}'");
    let addr = addr.trim();
    assert!(!addr.is_empty(), "the container has no bridge address");
    j.exec_ok("(setsid socat TCP-LISTEN:7777,bind=0.0.0.0,fork,reuseaddr EXEC:/bin/true >/dev/null 2>&1 &) ; sleep 0.5");
    let gw = stdout(&ok(Command::new("podman").env("CONTAINERS_CONF", containers_conf()).args([
        "network",
        "inspect",
        "podman",
        "--format",
        "{{range .Subnets}}{{.Gateway}}{{end}}",
    ])));
    let listener = std::net::TcpListener::bind((gw.trim(), 0)).expect("bind on the podman bridge gateway");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in listener.incoming() {});
    // One probe script in the workspace, run outside (control) and inside a session.
    j.write(
        "probe.sh",
        &format!(
            "echo IS_SANDBOX=${{IS_SANDBOX:-}}\n\
             timeout 5 bash -c 'exec 3<>/dev/tcp/{addr}/7777' 2>/dev/null && echo SUBNET-CONNECTED || echo SUBNET-BLOCKED\n\
             timeout 5 bash -c 'exec 3<>/dev/tcp/{}/{port}' 2>/dev/null && echo GATEWAY-CONNECTED || echo GATEWAY-BLOCKED\n\
             ip route add 192.0.2.0/24 dev lo 2>&1 && echo ROUTE-ADDED\n",
            gw.trim()
        ),
    );
    let outside = j.exec_ok("bash ./probe.sh; ip route del 192.0.2.0/24 dev lo 2>/dev/null; true");
    assert!(outside.contains("SUBNET-CONNECTED"), "control: the container reaches its own address:\n{outside}");
    let inside = j.exec("agent-sandbox run -- bash ./probe.sh");
    let inside = format!("{}{}", stdout(&inside), stderr(&inside));
    assert!(inside.contains("IS_SANDBOX=1"), "{inside}");
    assert!(inside.contains("SUBNET-BLOCKED"), "the jail must block the connected subnet:\n{inside}");
    assert!(inside.contains("GATEWAY-CONNECTED"), "the gateway stays reachable:\n{inside}");
    assert!(inside.contains("Operation not permitted") && !inside.contains("ROUTE-ADDED"), "a route change must be refused:\n{inside}");
    let report: Value = serde_json::from_str(&j.exec_ok("agent-sandbox verify --json || true")).unwrap();
    let s = &report["summary"];
    assert!(s["failed"] == 0 && s["escaped"] == 0 && s["skipped"] == crate::support::SKIPPED_WITHOUT_ALLOWLIST, "verify with the jail: {report:#}");
}
