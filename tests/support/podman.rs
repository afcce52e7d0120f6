//! Container helpers for the installer and doctor tests: rootful podman
//! set up by `scripts/podman-env.sh` (base images made with mmdebstrap,
//! this machine's podman settings), throwaway containers removed on drop,
//! cached derived images built once per recipe, and tree hashes for
//! "nothing changed" checks. A missing prerequisite fails the test with the
//! command that provides it; nothing is skipped.

pub(crate) use super::{containers_conf, static_dir};
use super::{root, setup};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// The base images `scripts/podman-env.sh` makes.
pub(crate) const TRIXIE: &str = "localhost/debian:trixie-slim";
pub(crate) const BOOKWORM: &str = "localhost/debian:bookworm-slim";
/// Debian 13 for arm64 (`scripts/podman-env.sh trixie:arm64`; runs under
/// qemu-user on an x86_64 machine).
pub(crate) const TRIXIE_ARM64: &str = "localhost/debian:trixie-slim-arm64";

/// The arm64 Debian 13 base: `scripts/podman-env.sh trixie:arm64` registers
/// qemu-user with binfmt_misc and makes the image (mmdebstrap --arch arm64,
/// cached like the others). Once per test run, after `containers_conf`.
pub(crate) fn arm64_base() -> &'static str {
    static DONE: OnceLock<()> = OnceLock::new();
    let _ = containers_conf();
    DONE.get_or_init(|| {
        let _one = setup();
        let out = Command::new("bash")
            .args(["-c", ". scripts/podman-env.sh trixie:arm64 >&2"])
            .current_dir(root())
            .stderr(Stdio::inherit())
            .output()
            .expect("run bash scripts/podman-env.sh trixie:arm64");
        assert!(out.status.success(), "scripts/podman-env.sh trixie:arm64 failed (it installs qemu-user-static, registers it with binfmt_misc and makes the arm64 base image); run it by hand to see why");
    });
    TRIXIE_ARM64
}

/// The static binaries of `arch` (a `uname -m` name): in the layout
/// `scripts/build-static.sh` writes, the folder beside this machine's.
pub(crate) fn static_dir_for(arch: &str) -> PathBuf {
    let native = static_dir();
    let dir = native.parent().map(|p| p.join(arch)).unwrap_or_default();
    assert!(
        native.file_name().is_some_and(|n| n == std::env::consts::ARCH),
        "AGENT_SANDBOX_STATIC_DIR={} is not the folder `bash scripts/build-static.sh` prints (…/static/{}), so the {arch} binaries cannot be found beside it",
        native.display(),
        std::env::consts::ARCH
    );
    for b in ["agent-sandbox", "sandbox-install"] {
        assert!(dir.join(b).is_file(), "{} is missing; run `bash scripts/build-static.sh` (it builds x86_64 and aarch64)", dir.join(b).display());
    }
    dir
}

pub(crate) fn podman(args: &[&str]) -> Output {
    Command::new("podman")
        .args(args)
        .env("CONTAINERS_CONF", containers_conf())
        .stdin(Stdio::null())
        .output()
        .expect("run podman (install it with scripts/podman-env.sh)")
}

pub(crate) fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{what} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    stdout
}

/// Builds `tag` from `base` by running `recipe` (sh) in a container with
/// host networking, unless an image with that tag exists. The tag carries
/// a hash of base and recipe, so a changed recipe builds a new image.
pub(crate) fn cached_image(name: &str, base: &str, recipe: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (base, recipe).hash(&mut h);
    let tag = format!("localhost/agent-sandbox-test/{name}:{:016x}", h.finish());
    // Tests run in parallel, maybe in several processes: one build at a
    // time, the others then find it.
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = super::across_processes("cached-image", true, BUILD.lock().unwrap_or_else(|e| e.into_inner()));
    let _store = super::image_store_read();
    if podman(&["image", "exists", &tag]).status.success() {
        return tag;
    }
    let tmp = format!("ast-build-{}-{}", name, std::process::id());
    let _ = podman(&["rm", "-f", &tmp]);
    let ca = host_ca_mount();
    let mut args: Vec<&str> = vec!["run", "--name", &tmp, "--network", "host", "-e", NPM_ENV];
    args.extend(ca.iter().map(String::as_str));
    args.extend([base, "sh", "-euc", recipe]);
    let out = podman(&args);
    let built = out.status.success() && podman(&["commit", "-q", &tmp, &tag]).status.success();
    let _ = podman(&["rm", "-f", &tmp]);
    ok(&out, &format!("building {tag}"));
    assert!(built, "podman commit {tag} failed");
    tag
}

/// This machine's CA bundle, which may hold an egress proxy's CA that npm
/// needs; mounted into every container at `HOST_CA` (outside the hashed trees).
const HOST_CA_SRC: &str = "/etc/ssl/certs/ca-certificates.crt";
pub(crate) const HOST_CA: &str = "/run/host-ca.crt";
/// Environment for npm inside the containers.
pub(crate) const NPM_ENV: &str = "NODE_EXTRA_CA_CERTS=/run/host-ca.crt";

fn host_ca_mount() -> Vec<String> {
    if Path::new(HOST_CA_SRC).is_file() {
        vec!["-v".into(), format!("{HOST_CA_SRC}:{HOST_CA}:ro")]
    } else {
        Vec::new()
    }
}

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A running container, removed on drop.
pub(crate) struct Container {
    pub name: String,
}

impl Container {
    /// `podman run -d` with host networking (apt, npm), /proc unmasked
    /// (sessions mount their own /proc) and the static binaries in /opt/ast.
    pub(crate) fn start(image: &str, extra: &[&str]) -> Container {
        Container::start_with("host", image, static_dir(), extra)
    }

    /// The same on `network` (podman's `--network` value, e.g.
    /// `ns:/run/netns/NAME` to share a test's network namespace).
    pub(crate) fn start_on(network: &str, image: &str, extra: &[&str]) -> Container {
        Container::start_with(network, image, static_dir(), extra)
    }

    /// On `network`, with the binaries from `bins` in /opt/ast.
    pub(crate) fn start_with(network: &str, image: &str, bins: &Path, extra: &[&str]) -> Container {
        let name = format!("ast-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::SeqCst));
        let vol = format!("{}:/opt/ast:ro", bins.display());
        let ca = host_ca_mount();
        let mut args = vec!["run", "-d", "--name", &name, "--network", network, "-v", &vol];
        args.extend(ca.iter().map(String::as_str));
        args.extend(extra);
        args.extend([image, "sleep", "infinity"]);
        ok(&podman(&args), "podman run");
        Container { name }
    }

    /// With the settings a session needs: /dev/net/tun and an unmasked /proc.
    pub(crate) fn start_for_sessions(image: &str) -> Container {
        Container::start(image, &["--device", "/dev/net/tun", "--security-opt", "unmask=/proc/*"])
    }

    /// `podman exec` with `env` (NAME=VALUE) as `user`.
    pub(crate) fn exec_full(&self, user: &str, env: &[&str], args: &[&str]) -> Output {
        let mut a = vec!["exec", "-u", user];
        for e in env {
            a.extend(["-e", e]);
        }
        a.push(&self.name);
        a.extend(args);
        podman(&a)
    }

    pub(crate) fn exec(&self, args: &[&str]) -> Output {
        self.exec_full("root", &[], args)
    }

    /// `sh -c script` as root; panics with the output on failure.
    pub(crate) fn sh(&self, script: &str) -> String {
        ok(&self.exec(&["sh", "-c", script]), script)
    }

    pub(crate) fn sh_as(&self, user: &str, script: &str) -> String {
        ok(&self.exec_full(user, &[], &["sh", "-c", script]), script)
    }

    pub(crate) fn copy_in(&self, src: &Path, dst: &str) {
        ok(&podman(&["cp", &src.display().to_string(), &format!("{}:{dst}", self.name)]), "podman cp");
    }

    /// A digest of the trees an installation may touch: paths, types,
    /// modes, owners, link targets and file contents (`mtimes`: also
    /// modification times, to prove files were not even rewritten).
    pub(crate) fn tree_hash(&self, mtimes: bool) -> String {
        let fmt = if mtimes { "%p %y %m %U %G %l %T@\\n" } else { "%p %y %m %U %G %l\\n" };
        let script = format!(
            "cd / && find usr/local etc home root var/lib/agent-sandbox opt -xdev \\( -path opt/ast -o -name .bash_history -o -name .npm \\) -prune -o -printf '{fmt}' 2>/dev/null | sort > /tmp/.tree && \
             find usr/local etc home root var/lib/agent-sandbox -xdev -type f ! -name .bash_history ! -path '*/.npm/*' -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum >> /tmp/.tree; \
             h=$(sha256sum < /tmp/.tree | cut -d' ' -f1) && cp /tmp/.tree /tmp/.tree.$h && echo $h"
        );
        self.sh(&script).trim().to_string()
    }

    /// What changed since the listing behind an earlier `tree_hash`.
    pub(crate) fn tree_diff(&self, earlier: &str) -> String {
        String::from_utf8_lossy(&self.exec(&["sh", "-c", &format!("diff /tmp/.tree.{earlier} /tmp/.tree")]).stdout).into_owned()
    }

    /// Panics with the differences unless the tree hashes as `earlier`.
    pub(crate) fn assert_tree(&self, earlier: &str, mtimes: bool, what: &str) {
        let now = self.tree_hash(mtimes);
        if now != earlier {
            panic!("{what}; changes:\n{}", self.tree_diff(earlier));
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = podman(&["rm", "-f", "-t", "0", &self.name]);
    }
}
