//! linux/arm64 under emulation: the aarch64 static binaries in a real arm64
//! Debian 13 container (mmdebstrap --arch arm64, imported into rootful
//! podman, run through qemu-user registered with binfmt_misc by
//! scripts/podman-env.sh):
//!  - `sandbox-install` installs (apt under emulation), a second run
//!    changes nothing, `--uninstall` restores every file;
//!  - the feature as packaged by default carries bin/aarch64, and its
//!    install.sh picks it by `uname -m`, with the same idempotence and a
//!    clean uninstall;
//!  - what cannot run there fails closed, with the reason: qemu-user
//!    creates no namespaces (it refuses clone() with namespace flags and
//!    keeps a helper thread, so unshare(CLONE_NEWUSER) fails with EINVAL)
//!    and loads no seccomp filter, so every session refuses to start and
//!    doctor names the emulator. Sessions on arm64 are proven only on arm64
//!    machines (docs/image.md).
//!
//! The reference image's arm64 variant (built under emulation, doctor in
//! it) is in tests/suite/image.rs. Needs root; nothing is skipped.

use crate::support::podman::{self, ok, Container};
use std::process::Command;

const INSTALL: &str = "/opt/ast/sandbox-install";
const BINARY: &str = "/usr/local/lib/agent-sandbox/bin/agent-sandbox";

/// An arm64 Debian 13 container with the session options (/dev/net/tun,
/// unmasked /proc) and the aarch64 binaries in /opt/ast; checks that it
/// really runs emulated.
fn arm64_container() -> Container {
    let c = Container::start_with(
        "host",
        podman::arm64_base(),
        &podman::static_dir_for("aarch64"),
        &["--device", "/dev/net/tun", "--security-opt", "unmask=/proc/*"],
    );
    assert_eq!(c.sh("uname -m"), "aarch64\n");
    // The kernel's own link names the emulator (the program itself cannot tell).
    let real = c.sh("readlink /proc/thread-self/exe");
    assert!(real.contains("qemu-aarch64"), "the container runs under qemu-user: {real}");
    c
}

fn sha256(path: &std::path::Path) -> String {
    let out = ok(&Command::new("sha256sum").arg(path).output().unwrap(), "sha256sum");
    out.split_whitespace().next().unwrap().to_owned()
}

/// What every session attempt in the emulated container says: fail closed.
fn assert_sessions_refuse(c: &Container) {
    c.sh("mkdir -p /work/p");
    let jailed = c.exec(&["sh", "-c", "cd /work/p && agent-sandbox run -- echo RAN"]);
    let err = String::from_utf8_lossy(&jailed.stderr).into_owned();
    assert_eq!(jailed.status.code(), Some(1), "a jailed session refuses: {err}");
    // The first thing the emulator refuses a jailed launch is reading the
    // container's routing rules over rtnetlink.
    assert!(err.contains("reading the container's routes failed") && err.contains("Not supported"), "{err}");
    assert!(err.contains("runs under the emulator") && err.contains("--platform linux/arm64"), "the emulator and the platform fix are named: {err}");
    let plain = c.exec_full("root", &["AGENT_SANDBOX_EGRESS_JAIL=0"], &["sh", "-c", "cd /work/p && agent-sandbox run -- echo RAN"]);
    let err = String::from_utf8_lossy(&plain.stderr).into_owned();
    assert_eq!(plain.status.code(), Some(1), "a session without the jail refuses too: {err}");
    // Root's launch stops first at hiding root-only entries (it needs a
    // user namespace too), naming the cause like the jail does.
    assert!(err.contains("user namespaces are not available") && err.contains("runs under the emulator"), "{err}");
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("RAN") && !String::from_utf8_lossy(&jailed.stdout).contains("RAN"), "the command never ran");
    c.sh("rm -rf /work");
}

#[test]
fn sandbox_install_in_arm64_debian_13_installs_is_idempotent_and_uninstalls() {
    let _machine = crate::support::share_machine();
    let c = arm64_container();
    let before = c.tree_hash(false);
    let start = std::time::Instant::now();
    let out = c.sh(INSTALL);
    eprintln!("MEASURE sandbox-install under emulation (apt included): {:.0} s", start.elapsed().as_secs_f64());
    assert!(out.contains("packages  apt install bubblewrap passt"), "{out}");
    // Its prerequisite check names the emulator and the platform fix, not a sysctl.
    assert!(out.contains("runs under the emulator") && out.contains("--platform linux/arm64"), "{out}");
    assert!(!out.contains("max_user_namespaces=15000"), "no misleading sysctl advice under emulation:\n{out}");
    assert_eq!(
        c.sh(&format!("sha256sum {BINARY} | cut -d' ' -f1")).trim(),
        sha256(&podman::static_dir_for("aarch64").join("agent-sandbox")),
        "the aarch64 binary is the one installed"
    );
    assert!(c.sh("agent-sandbox --version").starts_with("agent-sandbox "));
    let installed = c.tree_hash(true);
    let again = c.sh(INSTALL);
    assert!(again.starts_with("sandbox-install: up to date"), "{again}");
    c.assert_tree(&installed, true, "a second run changes nothing, not even mtimes");

    assert_sessions_refuse(&c);
    let doctor = c.exec(&["agent-sandbox", "doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).expect("doctor --json prints a report");
    let ids: Vec<&str> = report["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["userns-emulated"], "the one blocking finding is emulation's: {report:#}");
    assert_eq!(doctor.status.code(), Some(1));

    let out = c.sh(&format!("{INSTALL} --uninstall"));
    assert!(out.contains("packages  apt remove"), "{out}");
    c.sh("rm -rf /root/.local /root/.claude");
    c.assert_tree(&before, false, "uninstall leaves the container as it was");
}

#[test]
fn the_default_feature_package_installs_in_arm64_debian_13() {
    let _machine = crate::support::share_machine();
    // The documented command, without --bin-dir: both architectures.
    let out_dir = tempfile::tempdir().unwrap();
    let packaged = Command::new(env!("CARGO_BIN_EXE_agent-sandbox"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SANDBOX_STATIC_DIR", podman::static_dir())
        .args(["feature", "package", "--force", "--output"])
        .arg(out_dir.path())
        .output()
        .unwrap();
    ok(&packaged, "agent-sandbox feature package");
    assert!(String::from_utf8_lossy(&packaged.stderr).contains("bundling the static binaries for x86_64, aarch64"));
    let feature = out_dir.path().join("src/agent-sandbox");
    assert_eq!(sha256(&feature.join("bin/aarch64/sandbox-install")), sha256(&podman::static_dir_for("aarch64").join("sandbox-install")));

    let c = arm64_container();
    let before = c.tree_hash(false);
    c.copy_in(&feature, "/tmp/feature");
    // As the Dev Containers CLI runs a feature: root, options as variables.
    let run = || ok(&c.exec_full("root", &["AGENTS=claude", "NOFORGE=true", "_REMOTE_USER=root"], &["sh", "/tmp/feature/install.sh"]), "install.sh");
    let out = run();
    assert!(out.contains("running bin/aarch64/sandbox-install --agents claude --no-forge"), "{out}");
    assert!(out.contains("packages  apt install bubblewrap passt"), "{out}");
    assert_eq!(c.sh(&format!("sha256sum {BINARY} | cut -d' ' -f1")).trim(), sha256(&feature.join("bin/aarch64/agent-sandbox")));
    assert_eq!(c.sh("ls /usr/local/share/agent-sandbox-feature"), "entrypoint.sh\n");
    let installed = c.tree_hash(true);
    let again = run();
    assert!(again.contains("sandbox-install: up to date"), "{again}");
    c.assert_tree(&installed, true, "a second install.sh run changes nothing, not even mtimes");
    assert_sessions_refuse(&c);

    // A feature has no uninstall hook: the installer removes what it
    // installed; the start scripts are the feature's own.
    let out = c.sh("/usr/local/sbin/sandbox-install --uninstall && rm -r /usr/local/share/agent-sandbox-feature /tmp/feature");
    assert!(out.contains("uninstalled") && out.contains("packages  apt remove"), "{out}");
    c.sh("rm -rf /root/.local /root/.claude");
    c.assert_tree(&before, false, "uninstall leaves the container as it was");
}
