//! The Docker engine of the Docker tests and what they do with it: the
//! engine's lifetime (`host`), the docker client against it, throwaway
//! containers, and Dev Containers projects brought up with the real CLI
//! (`devcontainer up --docker-path /usr/bin/docker`), each removed with its
//! containers and images when dropped.
//!
//! The engine is private (`scripts/docker-env.sh`: its own data root,
//! socket and containerd namespace) and started once, by the first test
//! that asks for it. `docker-env.sh serve` starts it and then waits for
//! its stdin to close; the test process keeps the other end of that pipe
//! open until it ends, so the engine is stopped when the test process is
//! gone however it went: passed, failed, interrupted or killed (the kernel
//! closes the pipe). `serve` runs in a session of its own, so the Ctrl-C
//! that ends the tests does not end it before it has stopped the engine;
//! when the tests end normally the process waits for that stop before it
//! exits. The suite's test processes that run side by side (scripts/test.sh)
//! share one engine: a `serve` joins the engine another one keeps up, and
//! the last to leave stops it. A dockerd left by an earlier run (nobody
//! serving it) is stopped before a new one starts.

use super::registry::*;
use serde_json::Value;
use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

/// Debian's docker client (the engine's own version; another `docker` on
/// PATH is not used).
pub(crate) const DOCKER: &str = "/usr/bin/docker";
/// The base image `scripts/docker-env.sh` imports (also as `debian:trixie-slim`).
pub(crate) const TRIXIE: &str = "localhost/debian:trixie-slim";

/// `docker-env.sh serve`, whose stdin is this process's end of the pipe
/// that keeps the engine up.
static SERVER: Mutex<Option<Child>> = Mutex::new(None);

/// `DOCKER_HOST` of the test engine, started on the first call.
pub(crate) fn host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(start)
}

fn start() -> String {
    assert!(nix::unistd::geteuid().is_root(), "the Docker tests need root: they start dockerd");
    let _one = super::setup();
    let t = std::time::Instant::now();
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/docker-env.sh")).arg("serve").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| if libc::setsid() < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) });
    }
    let mut server = cmd.spawn().expect("run bash");
    // `serve` prints the exports, then closes its stdout (also when the
    // start fails and it exits).
    let mut text = String::new();
    let _ = server.stdout.take().expect("piped stdout").read_to_string(&mut text);
    let host = text.lines().find_map(|l| l.strip_prefix("export DOCKER_HOST=")).map(str::to_owned);
    *SERVER.lock().unwrap_or_else(|e| e.into_inner()) = Some(server);
    // SAFETY: registers a plain function to run at exit; it only locks a
    // static mutex and waits for a child process.
    unsafe { libc::atexit(stop_at_exit) };
    let host = host.unwrap_or_else(|| {
        stop_at_exit();
        panic!("scripts/docker-env.sh serve could not start the engine (it installs docker.io and starts dockerd; its log is named above)")
    });
    eprintln!("MEASURE docker engine ready in {:.1} s", t.elapsed().as_secs_f64());
    host
}

/// Closes the pipe (`serve` then stops the engine) and waits for the stop,
/// so the engine is gone when the test process has exited normally.
extern "C" fn stop_at_exit() {
    let server = SERVER.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut server) = server {
        drop(server.stdin.take());
        let _ = server.wait();
    }
}

pub(crate) fn docker_cmd() -> Command {
    let mut c = Command::new(DOCKER);
    c.env("DOCKER_HOST", host()).stdin(Stdio::null());
    c
}

pub(crate) fn docker(args: &[&str]) -> Output {
    docker_cmd().args(args).output().expect("run /usr/bin/docker")
}

/// `docker ARGS`; panics with the output when it fails, else its stdout.
pub(crate) fn docker_ok(args: &[&str]) -> String {
    stdout(&ok(docker_cmd().args(args)))
}

/// `agent-sandbox` (the binary under test) talking to the test engine.
pub(crate) fn agent_sandbox() -> Command {
    let mut c = Command::new(bin());
    c.current_dir(root()).env("DOCKER_HOST", host());
    c
}

/// A container started with `docker run --detach`, removed when dropped.
pub(crate) struct Container {
    pub name: String,
}

impl Container {
    /// `docker run --detach --name NAME OPTIONS...` (OPTIONS end with the image and command).
    pub(crate) fn run(options: &[&str]) -> Container {
        let name = unique("docker-test");
        let mut args = vec!["run", "--detach", "--name", &name];
        args.extend(options);
        docker_ok(&args);
        Container { name }
    }

    /// `docker exec --user USER NAME sh -c SCRIPT`.
    pub(crate) fn sh(&self, user: &str, script: &str) -> Output {
        docker(&["exec", "--user", user, &self.name, "sh", "-c", script])
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = docker(&["rm", "--force", &self.name]);
    }
}

/// A project folder for `devcontainer up`; its containers and the CLI's
/// images for it go when dropped.
pub(crate) struct Project {
    pub dir: PathBuf,
}

impl Project {
    pub(crate) fn new(name: &str) -> Project {
        let dir = PathBuf::from("/var/lib/agent-sandbox-tests/docker-e2e").join(unique(name));
        std::fs::create_dir_all(dir.join(".devcontainer")).unwrap();
        Project { dir }
    }

    pub(crate) fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.dir.join(rel), text).unwrap();
    }

    /// The CLI on the test engine, with a private TMPDIR (its build
    /// folders under /tmp/devcontainercli-$USER are otherwise shared).
    fn cli(&self, verb: &str) -> Command {
        let tmp = self.dir.with_extension("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let mut c = Command::new(&registry_env().devcontainer);
        c.env("DOCKER_HOST", host()).env("TMPDIR", &tmp).arg(verb).args(["--docker-path", DOCKER, "--workspace-folder"]).arg(&self.dir);
        c
    }

    /// `devcontainer up`: the outcome JSON and the log. One at a time: the
    /// CLI stages feature content in an image with a fixed name
    /// (`dev_container_feature_content_temp`) when the engine has no buildx.
    pub(crate) fn up(&self) -> (Value, String) {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let t = std::time::Instant::now();
        let out = self.cli("up").output().unwrap();
        eprintln!("MEASURE devcontainer up ({}) took {:.0} s", self.dir.display(), t.elapsed().as_secs_f64());
        let log = stderr(&out);
        let last = stdout(&out).lines().last().unwrap_or_default().to_owned();
        let outcome: Value = serde_json::from_str(&last).unwrap_or_default();
        assert!(out.status.success() && outcome["outcome"] == "success", "devcontainer up failed: {last}\n{log}");
        (outcome, log)
    }

    /// `devcontainer exec -- sh -c SCRIPT` as the remote user.
    pub(crate) fn exec(&self, script: &str) -> Output {
        self.cli("exec").args(["sh", "-c", script]).output().unwrap()
    }

    pub(crate) fn exec_ok(&self, script: &str) -> String {
        let out = self.exec(script);
        assert!(out.status.success(), "`{script}` failed in the container:\n{}{}", stdout(&out), stderr(&out));
        stdout(&out)
    }

    /// The project's running container.
    pub(crate) fn container(&self) -> String {
        let label = format!("label=devcontainer.local_folder={}", self.dir.display());
        let id = docker_ok(&["ps", "-q", "--filter", &label]);
        let id = id.trim();
        assert!(!id.is_empty() && !id.contains('\n'), "one container for {}: {id:?}", self.dir.display());
        id.to_owned()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let label = format!("label=devcontainer.local_folder={}", self.dir.display());
        for id in stdout(&docker(&["ps", "-aq", "--filter", &label])).split_whitespace() {
            let _ = docker(&["rm", "--force", id]);
        }
        // The CLI's images for this folder (`vsc-<folder>-<hash>[-uid]`).
        let name = self.dir.file_name().unwrap().to_string_lossy().into_owned();
        let reference = format!("reference=vsc-{name}-*");
        // (`rmi` also removes the untagged build layers under it.)
        for image in stdout(&docker(&["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", &reference])).split_whitespace() {
            let _ = docker(&["rmi", "--force", image]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_dir_all(self.dir.with_extension("tmp"));
    }
}

/// The report of `agent-sandbox verify --json` (whatever the command printed before it ignored).
pub(crate) fn report(text: &str) -> Value {
    let json = text.find('{').map(|i| &text[i..]).unwrap_or(text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("verify printed no JSON report ({e}):\n{text}"))
}

/// The status of check `number` in a verify report.
pub(crate) fn status(report: &Value, number: u64) -> String {
    let c = report["checks"].as_array().into_iter().flatten().find(|c| c["number"] == number);
    c.and_then(|c| c["status"].as_str()).unwrap_or("missing").to_owned()
}
