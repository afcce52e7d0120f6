//! The publish path against a real registry (Debian's docker-registry on
//! localhost) and the real Dev Containers CLI: packaging layout and
//! reproducibility, the tag rule, `--json` reports, refusals that push
//! nothing, and a structural comparison with what `devcontainer features
//! publish` / `devcontainer templates publish` push from the same folders.
//! Also the feature's shell parts (install.sh option mapping, the start
//! check) in private mount namespaces.
//!
//! Needs root, curl, unshare; scripts/registry-env.sh (run once here)
//! installs and starts the rest. Nothing is skipped.

use crate::support::registry::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// The CLI in the repository root, without the variables that would make
/// it find this checkout's own static binaries (target/static/ARCH).
fn agent_sandbox() -> Command {
    let mut c = Command::new(bin());
    c.current_dir(root())
        .env_remove("AGENT_SANDBOX_STATIC_DIR")
        .env("CARGO_TARGET_DIR", "/nonexistent/agent-sandbox-test-target")
        .env_remove("SOURCE_DATE_EPOCH")
        .env("RUST_LOG", "warn");
    c
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

// ---- the sources ----------------------------------------------------------

#[test]
fn feature_and_template_versions_follow_the_crate() {
    let _machine = crate::support::share_machine();
    let feature = read_json(&root().join("feature/src/agent-sandbox/devcontainer-feature.json"));
    assert_eq!(feature["id"], "agent-sandbox");
    assert_eq!(feature["version"], version(), "set \"version\" in feature/src/agent-sandbox/devcontainer-feature.json to Cargo.toml's");
    for entry in fs::read_dir(root().join("templates/src")).unwrap() {
        let dir = entry.unwrap().path();
        let t = read_json(&dir.join("devcontainer-template.json"));
        assert_eq!(t["version"], version(), "{}: template version", dir.display());
        let config = fs::read_to_string(dir.join(".devcontainer/devcontainer.json")).unwrap();
        let reference = format!("ghcr.io/agent-sandbox/agent-sandbox/agent-sandbox:{}", major());
        assert!(config.contains(&reference), "{}: the template must use the feature's current major tag ({reference})", dir.display());
        assert!(config.contains("--device=/dev/net/tun") && config.contains("--security-opt=systempaths=unconfined"));
        for (name, _) in t["options"].as_object().unwrap() {
            assert!(config.contains(&format!("${{templateOption:{name}}}")), "option {name} is never substituted");
        }
    }
    let options: BTreeSet<&str> = feature["options"].as_object().unwrap().keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = ["agents", "egressJail", "allowIp", "allowDomains", "localPorts", "callbackPorts", "noForge", "installDependencies"].into();
    assert_eq!(options, expected);
    for (name, o) in feature["options"].as_object().unwrap() {
        assert!(o["description"].as_str().is_some_and(|d| d.len() > 30), "option {name} needs a real description");
    }
}

/// Commands started without a shell get the container's PATH, which the
/// features' `containerEnv` make in their install order: the feature puts
/// the shims first and installs after the node feature (whose nvm directory,
/// where `npm install -g` puts `claude`, it would otherwise come after), and
/// its start check is doctor's.
#[test]
fn the_feature_keeps_the_shims_first_on_the_containers_path() {
    let _machine = crate::support::share_machine();
    let feature = read_json(&root().join("feature/src/agent-sandbox/devcontainer-feature.json"));
    let path = feature["containerEnv"]["PATH"].as_str().expect("containerEnv.PATH");
    assert_eq!(path, "/usr/local/lib/agent-sandbox/bin:${PATH}");
    assert!(feature["installsAfter"].as_array().unwrap().iter().any(|f| f == "ghcr.io/devcontainers/features/node"), "{feature:#}");
    assert_eq!(feature["postStartCommand"], "/usr/local/lib/agent-sandbox/bin/agent-sandbox doctor --start-check");
}

/// A copy of the feature folder whose sandbox-install records its arguments.
fn feature_with_recording_installer() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let src = root().join("feature/src/agent-sandbox");
    for f in ["install.sh", "entrypoint.sh", "devcontainer-feature.json"] {
        fs::copy(src.join(f), d.path().join(f)).unwrap();
    }
    fs::create_dir_all(d.path().join("bin/x86_64")).unwrap();
    let fake = d.path().join("bin/x86_64/sandbox-install");
    fs::write(&fake, "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$ARGS_OUT\"\n").unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// Runs the feature's install.sh as the devcontainer CLI would (options as
/// environment variables), in a private mount namespace so its copy of the
/// start script lands on a tmpfs. Returns (success, installer args, output).
fn run_install(env: &[(&str, &str)]) -> (bool, Vec<String>, String) {
    let d = feature_with_recording_installer();
    let args_out = d.path().join("args");
    let script = format!("mount -t tmpfs tmpfs /usr/local/share && sh '{}'", d.path().join("install.sh").display());
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c", &script]).env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").env("ARGS_OUT", &args_out);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("unshare");
    let args = fs::read_to_string(&args_out).unwrap_or_default().lines().map(str::to_owned).collect();
    (out.status.success(), args, format!("{}{}", stdout(&out), stderr(&out)))
}

#[test]
fn install_sh_passes_the_options_to_sandbox_install() {
    let _machine = crate::support::share_machine();
    let (ok, args, out) = run_install(&[]);
    assert!(ok, "{out}");
    assert_eq!(args, vec!["--agents", "claude,codex,pi"]);

    let (ok, args, out) = run_install(&[
        ("AGENTS", "claude, codex"),
        ("EGRESSJAIL", "false"),
        ("ALLOWIP", "10.1.2.3, 192.168.1.9"),
        ("ALLOWDOMAINS", "@agents, *.github.com"),
        ("LOCALPORTS", "5432"),
        ("CALLBACKPORTS", "1455,8085"),
        ("NOFORGE", "true"),
        ("INSTALLDEPENDENCIES", "false"),
        ("_REMOTE_USER", "nobody"),
        ("_REMOTE_USER_HOME", "/home/nobody"),
    ]);
    assert!(ok, "{out}");
    let expected = [
        "--agents",
        "claude,codex",
        "--no-egress-jail",
        "--no-forge",
        "--no-deps",
        "--allow-ip",
        "10.1.2.3,192.168.1.9",
        "--allow-domain",
        "@agents,*.github.com",
        "--local-port",
        "5432",
        "--callback-port",
        "1455,8085",
        "--user",
        "nobody",
    ];
    assert_eq!(args, expected);
    assert!(out.contains("_REMOTE_USER_HOME is /home/nobody but /etc/passwd gives /nonexistent"), "{out}");

    // Empty strings (what `${templateOption:x}` gives for a false default) mean the default.
    let (ok, args, out) = run_install(&[("NOFORGE", ""), ("EGRESSJAIL", ""), ("_REMOTE_USER", "root")]);
    assert!(ok, "{out}");
    assert_eq!(args, vec!["--agents", "claude,codex,pi"]);
}

#[test]
fn install_sh_refuses_bad_options_with_the_fix() {
    let _machine = crate::support::share_machine();
    let (ok, args, out) = run_install(&[("EGRESSJAIL", "yes")]);
    assert!(!ok && args.is_empty());
    assert!(out.contains("option egressJail must be true or false, not 'yes'"), "{out}");
    let (ok, _, out) = run_install(&[("_REMOTE_USER", "no-such-user-here")]);
    assert!(!ok);
    assert!(out.contains("the remote user 'no-such-user-here' does not exist") && out.contains("overrideFeatureInstallOrder"), "{out}");
}

/// install.sh with `uname` answering `machine` (a stand-in ahead on PATH).
fn install_sh_on(d: &Path, machine: &str) -> std::process::Output {
    let fake = d.join("fake-bin");
    fs::create_dir_all(&fake).unwrap();
    fs::write(fake.join("uname"), format!("#!/bin/sh\necho {machine}\n")).unwrap();
    fs::set_permissions(fake.join("uname"), fs::Permissions::from_mode(0o755)).unwrap();
    let script = format!("mount -t tmpfs tmpfs /usr/local/share && sh '{}'", d.join("install.sh").display());
    Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .env_clear()
        .env("PATH", format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", fake.display()))
        .env("ARGS_OUT", d.join("args"))
        .output()
        .unwrap()
}

#[test]
fn install_sh_picks_the_binaries_by_uname() {
    let _machine = crate::support::share_machine();
    let d = feature_with_recording_installer();
    // The recording installer for aarch64 writes a marker too.
    fs::create_dir_all(d.path().join("bin/aarch64")).unwrap();
    let arm = d.path().join("bin/aarch64/sandbox-install");
    fs::write(&arm, "#!/bin/sh\necho aarch64 > \"$ARGS_OUT.arch\"\nprintf '%s\\n' \"$@\" > \"$ARGS_OUT\"\n").unwrap();
    fs::set_permissions(&arm, fs::Permissions::from_mode(0o755)).unwrap();
    let out = install_sh_on(d.path(), "aarch64");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("running bin/aarch64/sandbox-install --agents claude,codex,pi"), "{}", stdout(&out));
    assert_eq!(fs::read_to_string(d.path().join("args.arch")).unwrap(), "aarch64\n");
    fs::remove_file(d.path().join("args.arch")).unwrap();
    let out = install_sh_on(d.path(), "x86_64");
    assert!(out.status.success() && stdout(&out).contains("running bin/x86_64/sandbox-install"), "{}", stderr(&out));
    assert!(!d.path().join("args.arch").exists(), "x86_64 ran the x86_64 installer");
}

#[test]
fn install_sh_refuses_an_unknown_architecture_before_any_change() {
    let _machine = crate::support::share_machine();
    let d = feature_with_recording_installer();
    for machine in ["riscv64", "armv7l", "i686"] {
        let out = install_sh_on(d.path(), machine);
        assert_eq!(out.status.code(), Some(1), "{machine}");
        assert_eq!(
            stderr(&out),
            format!("agent-sandbox feature: error: this machine's architecture is '{machine}' (uname -m); agent-sandbox supports x86_64 and aarch64 only: use a linux/amd64 or linux/arm64 base image\n")
        );
        assert!(!d.path().join("args").exists(), "no installer ran");
    }
}

#[test]
fn install_sh_names_the_missing_architecture() {
    let _machine = crate::support::share_machine();
    let d = feature_with_recording_installer();
    fs::rename(d.path().join("bin/x86_64"), d.path().join("bin/aarch64")).unwrap();
    let out = install_sh_on(d.path(), "x86_64");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("no sandbox-install for x86_64 (it has: aarch64); it was packaged without x86_64 binaries")
            && err.contains("bash scripts/build-static.sh"),
        "{err}"
    );
}

/// Runs the feature's postStartCommand (`agent-sandbox doctor
/// --start-check`, this build's) after `setup` (shell commands) in a
/// private mount namespace.
fn start_check(setup: &str, env: &[(&str, &str)]) -> (bool, String) {
    let feature: Value = serde_json::from_str(&fs::read_to_string(root().join("feature/src/agent-sandbox/devcontainer-feature.json")).unwrap()).unwrap();
    let command = feature["postStartCommand"].as_str().expect("a postStartCommand").to_string();
    let installed = "/usr/local/lib/agent-sandbox/bin/agent-sandbox ";
    let args = command.strip_prefix(installed).unwrap_or_else(|| panic!("the start check runs the installed binary: {command}"));
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c", &format!("{setup} exec '{}' {args}", bin().display())]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(stdout(&out).is_empty(), "the start check prints to stderr only: {}", stdout(&out));
    (out.status.success(), stderr(&out))
}

#[test]
fn start_check_warns_about_the_tun_device_masked_proc_and_the_jail_off_but_never_fails() {
    let _machine = crate::support::share_machine();
    assert!(Path::new("/dev/net/tun").exists(), "this test needs /dev/net/tun on the test machine");
    let (ok, err) = start_check("", &[]);
    assert!(ok, "{err}");
    assert!(!err.contains("[tun-") && !err.contains("[proc-masked]") && !err.contains("[jail-off]"), "{err}");
    let (ok, err) = start_check("mount -t tmpfs tmpfs /dev/net &&", &[]);
    assert!(ok, "{err}");
    assert!(err.contains("agent-sandbox: WARNING: /dev/net/tun is missing") && err.contains("add \"--device=/dev/net/tun\" to \"runArgs\""), "{err}");
    let (ok, err) = start_check("mount -t tmpfs tmpfs /dev/net &&", &[("AGENT_SANDBOX_EGRESS_JAIL", "0")]);
    assert!(ok, "{err}");
    assert!(!err.contains("/dev/net/tun is missing"), "the jail is off, so no tun warning: {err}");
    assert!(err.contains("the egress jail is off (AGENT_SANDBOX_EGRESS_JAIL is set in the environment)"), "the jail off is said: {err}");
    let (ok, err) = start_check("mount --bind /proc/sys /proc/sys &&", &[]);
    assert!(ok, "{err}");
    assert!(err.contains("/proc has paths masked") && err.contains("systempaths=unconfined"), "{err}");
}

// ---- packaging --------------------------------------------------------------

fn package(out: &Path, bins: &Path, extra_env: &[(&str, &str)]) -> Value {
    let mut c = agent_sandbox();
    c.args(["feature", "package", "--json", "--output"]).arg(out).arg("--bin-dir").arg(format!("x86_64={}", bins.display()));
    for (k, v) in extra_env {
        c.env(k, v);
    }
    serde_json::from_str(&stdout(&ok(&mut c))).unwrap()
}

fn tar_listing(archive: &[u8]) -> Vec<(String, u32)> {
    let mut a = tar::Archive::new(archive);
    a.entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (String::from_utf8_lossy(&e.path_bytes()).into_owned(), e.header().mode().unwrap())
        })
        .collect()
}

#[test]
fn packaging_is_reproducible_and_bundles_the_binaries() {
    let _machine = crate::support::share_machine();
    let bins = fake_bin_dir();
    let work = tempfile::tempdir().unwrap();
    let a = package(&work.path().join("a"), bins.path(), &[]);
    let b = package(&work.path().join("b"), bins.path(), &[]);
    assert_eq!(a["items"][0]["digest"], b["items"][0]["digest"], "same tree, same digest");
    let c = package(&work.path().join("c"), bins.path(), &[("SOURCE_DATE_EPOCH", "1")]);
    assert_ne!(a["items"][0]["digest"], c["items"][0]["digest"], "SOURCE_DATE_EPOCH sets the file times");

    let archive = fs::read(a["items"][0]["archive"].as_str().unwrap()).unwrap();
    assert_eq!(a["items"][0]["archive"].as_str().unwrap(), work.path().join("a/devcontainer-feature-agent-sandbox.tgz").to_str().unwrap());
    let listing = tar_listing(&archive);
    let expected: Vec<(String, u32)> = [
        ("./", 0o755),
        ("./NOTES.md", 0o644),
        ("./bin/", 0o755),
        ("./bin/x86_64/", 0o755),
        ("./bin/x86_64/agent-sandbox", 0o755),
        ("./bin/x86_64/sandbox-install", 0o755),
        ("./devcontainer-feature.json", 0o644),
        ("./entrypoint.sh", 0o755),
        ("./install.sh", 0o755),
    ]
    .iter()
    .map(|(p, m)| (p.to_string(), *m))
    .collect();
    assert_eq!(listing, expected);
    let staged = work.path().join("a/src/agent-sandbox");
    assert_eq!(fs::read(staged.join("bin/x86_64/sandbox-install")).unwrap(), fs::read(bins.path().join("sandbox-install")).unwrap());
    assert_eq!(fs::metadata(staged.join("install.sh")).unwrap().permissions().mode() & 0o777, 0o755);
    let collection = read_json(&work.path().join("a/devcontainer-collection.json"));
    assert_eq!(collection["features"][0], read_json(&root().join("feature/src/agent-sandbox/devcontainer-feature.json")));

    // A second package into a non-empty folder needs --force.
    let mut again = agent_sandbox();
    again.args(["feature", "package", "--output"]).arg(work.path().join("a")).arg("--bin-dir").arg(format!("x86_64={}", bins.path().display()));
    let out = again.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("already exists and is not empty"), "{}", stderr(&out));
}

#[test]
fn packaging_refuses_missing_or_dynamic_binaries() {
    let _machine = crate::support::share_machine();
    let out = agent_sandbox().args(["feature", "package", "--output", "/nonexistent/x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no static binaries for the feature") && stderr(&out).contains("scripts/build-static.sh"), "{}", stderr(&out));
    let dir = tempfile::tempdir().unwrap();
    fs::copy(bin(), dir.path().join("sandbox-install")).unwrap();
    fs::copy(bin(), dir.path().join("agent-sandbox")).unwrap();
    let out = agent_sandbox()
        .args(["feature", "package", "--output", "/nonexistent/x", "--bin-dir"])
        .arg(format!("x86_64={}", dir.path().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is not a static executable"), "{}", stderr(&out));
    let out = agent_sandbox().args(["feature", "package", "--bin-dir", "arm=/x"]).output().unwrap();
    assert!(stderr(&out).contains("is not ARCH=DIR with ARCH one of x86_64, aarch64"), "{}", stderr(&out));
}

/// The program every session execs (the one the feature and the image
/// ship) links no registry client and no TLS: the maintainer verbs live in
/// agent-sandbox-release, which `agent-sandbox feature|templates|image`
/// runs from its own folder with the arguments unchanged. The marks are
/// the TLS stack's and the HTTP client's source paths (panic locations) and
/// the registry protocol's media type, all in the release program, so the
/// check would see them. (A few of the registry client's own string
/// literals can ride along in a merged string section without any of its
/// code: not a mark.) A copy of agent-sandbox alone names the fix.
#[test]
fn the_session_program_links_no_registry_client_and_hands_the_verbs_over() {
    let _machine = crate::support::share_machine();
    let dir = crate::support::static_dir();
    let read = |name: &str| fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}; bash scripts/build-static.sh builds it", dir.join(name).display()));
    let (session, release) = (read("agent-sandbox"), read("agent-sandbox-release"));
    let has = |bin: &[u8], mark: &str| bin.windows(mark.len()).any(|w| w == mark.as_bytes());
    for mark in ["/rustls-", "/ring-", "/hyper-", "application/vnd.oci.image.manifest.v1+json"] {
        assert!(has(&release, mark), "agent-sandbox-release shows no {mark}: the check cannot see a linked library");
        assert!(!has(&session, mark), "agent-sandbox links {mark} (a registry client or TLS)");
    }
    println!("MEASURE static binaries: agent-sandbox {} bytes, agent-sandbox-release {} bytes", session.len(), release.len());
    // The other architecture's folder: built without the release tools.
    let other = dir.parent().unwrap().join(if cfg!(target_arch = "x86_64") { "aarch64" } else { "x86_64" });
    let other_session = fs::read(other.join("agent-sandbox")).unwrap_or_else(|e| panic!("{}: {e}; bash scripts/build-static.sh builds it", other.display()));
    for mark in ["/rustls-", "/ring-", "/hyper-", "application/vnd.oci.image.manifest.v1+json"] {
        assert!(!has(&other_session, mark), "{}/agent-sandbox links {mark}", other.display());
    }
    assert!(!other.join("agent-sandbox-release").exists(), "the maintainers' program is built for this machine's architecture only");
    let out = agent_sandbox().args(["image", "--help"]).output().unwrap();
    assert!(
        out.status.success() && stdout(&out).contains("agent-sandbox-release image") && stdout(&out).contains("publish"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let alone = tempfile::tempdir().unwrap();
    fs::copy(bin(), alone.path().join("agent-sandbox")).unwrap();
    let out = Command::new(alone.path().join("agent-sandbox")).args(["feature", "package", "--output", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("agent-sandbox-release, which is not beside this program") && stderr(&out).contains("scripts/build-static.sh"),
        "{}",
        stderr(&out)
    );
}

/// The bin/ entries of a packaged feature archive.
fn bundled(report: &Value) -> Vec<String> {
    let archive = fs::read(report["items"][0]["archive"].as_str().unwrap()).unwrap();
    tar_listing(&archive).into_iter().map(|(p, _)| p).filter(|p| p.starts_with("./bin/")).collect()
}

/// Without --bin-dir, both architectures come from the layout
/// scripts/build-static.sh writes: through AGENT_SANDBOX_STATIC_DIR (this
/// machine's folder and its siblings) or CARGO_TARGET_DIR/static.
#[test]
fn packaging_bundles_every_architecture_by_default() {
    let _machine = crate::support::share_machine();
    let fake = fake_static_root();
    let both = [
        "./bin/",
        "./bin/aarch64/",
        "./bin/aarch64/agent-sandbox",
        "./bin/aarch64/sandbox-install",
        "./bin/x86_64/",
        "./bin/x86_64/agent-sandbox",
        "./bin/x86_64/sandbox-install",
    ];
    let work = tempfile::tempdir().unwrap();
    let via_static_dir = |out: &str| {
        let mut c = agent_sandbox();
        c.args(["feature", "package", "--json", "--output"]).arg(work.path().join(out)).env("AGENT_SANDBOX_STATIC_DIR", fake.path().join("static/x86_64"));
        c.output().unwrap()
    };
    let out = via_static_dir("a");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("bundling the static binaries for x86_64, aarch64"), "{}", stderr(&out));
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(bundled(&a), both);
    let staged = work.path().join("a/src/agent-sandbox/bin");
    assert_eq!(fs::read(staged.join("aarch64/sandbox-install")).unwrap(), fs::read(fake.path().join("static/aarch64/sandbox-install")).unwrap());

    let mut c = agent_sandbox();
    c.args(["feature", "package", "--json", "--output"]).arg(work.path().join("b")).env("CARGO_TARGET_DIR", fake.path());
    let b: Value = serde_json::from_slice(&ok(&mut c).stdout).unwrap();
    assert_eq!(bundled(&b), both);
    assert_eq!(a["items"][0]["digest"], b["items"][0]["digest"], "the same binaries either way");

    // One architecture missing: refused, nothing written.
    fs::remove_dir_all(fake.path().join("static/aarch64")).unwrap();
    let out = via_static_dir("c");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the feature ships for x86_64 and aarch64, but only x86_64 binaries were found"), "{}", stderr(&out));
    assert!(!work.path().join("c").exists());
    // A binary of the wrong architecture in a folder: refused by name.
    fs::create_dir_all(fake.path().join("static/aarch64")).unwrap();
    for name in ["sandbox-install", "agent-sandbox"] {
        fs::copy(fake.path().join("static/x86_64").join(name), fake.path().join("static/aarch64").join(name)).unwrap();
    }
    let out = via_static_dir("d");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("static/aarch64/sandbox-install is not a static executable (built for x86_64, bundled as aarch64)"), "{}", stderr(&out));
}

// ---- publishing ---------------------------------------------------------------

/// A one-feature collection `demo` at `version` (no binaries: not the project's feature).
fn demo_feature(version: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("demo");
    fs::create_dir_all(&f).unwrap();
    fs::write(f.join("devcontainer-feature.json"), format!(r#"{{"id": "demo", "version": "{version}", "name": "Demo"}}"#)).unwrap();
    fs::write(f.join("install.sh"), "#!/bin/sh\necho demo\n").unwrap();
    d
}

fn publish(kind: &str, source: &Path, namespace: &str, extra: &[&str]) -> std::process::Output {
    let bins = fake_bin_dir();
    let mut c = agent_sandbox();
    c.args([kind, "publish", "--json", "--registry", &registry_env().registry, "--namespace", namespace, "--source"]).arg(source).args(extra);
    if kind == "feature" {
        c.arg("--bin-dir").arg(format!("x86_64={}", bins.path().display()));
    }
    c.output().unwrap()
}

fn publish_ok(kind: &str, source: &Path, namespace: &str, extra: &[&str]) -> Value {
    let out = publish(kind, source, namespace, extra);
    assert!(out.status.success(), "{kind} publish failed:\n{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn tags_move_only_when_the_version_is_the_highest_in_its_range() {
    let _machine = crate::support::share_machine();
    let reg = &registry_env().registry;
    let ns = unique("tags");
    let repo = format!("{ns}/demo");
    let step = |version: &str, expect_pushed: &[&str], expect_all: &[&str]| {
        let report = publish_ok("feature", demo_feature(version).path(), &ns, &[]);
        assert_eq!(report["items"][0]["tags"], json!(expect_pushed), "publishing {version}");
        assert_eq!(tags(reg, &repo), expect_all, "after publishing {version}");
    };
    step("1.2.3", &["1", "1.2", "latest", "1.2.3"], &["1", "1.2", "1.2.3", "latest"]);
    step("1.2.4", &["1", "1.2", "latest", "1.2.4"], &["1", "1.2", "1.2.3", "1.2.4", "latest"]);
    step("2.0.0", &["2", "2.0", "latest", "2.0.0"], &["1", "1.2", "1.2.3", "1.2.4", "2", "2.0", "2.0.0", "latest"]);
    // A backport moves its own ranges only.
    step("1.1.0", &["1.1", "1.1.0"], &["1", "1.1", "1.1.0", "1.2", "1.2.3", "1.2.4", "2", "2.0", "2.0.0", "latest"]);
    let latest = manifest(reg, &repo, "latest");
    assert_eq!(latest, manifest(reg, &repo, "2.0.0"), "latest stays on 2.0.0");
    assert_eq!(manifest(reg, &repo, "1"), manifest(reg, &repo, "1.2.4"));
    // Publishing an existing version changes nothing.
    let report = publish_ok("feature", demo_feature("1.2.4").path(), &ns, &[]);
    assert_eq!(report["items"][0]["alreadyPublished"], true);
    assert_eq!(report["items"][0]["tags"], json!([]));
    assert_eq!(manifest(reg, &repo, "latest"), latest);
}

#[test]
fn the_project_feature_publishes_reproducibly_with_a_json_report() {
    let _machine = crate::support::share_machine();
    let reg = &registry_env().registry;
    let ns = unique("proj");
    let source = root().join("feature/src");
    let first = publish_ok("feature", &source, &ns, &[]);
    let item = &first["items"][0];
    let v = version();
    let minor = v.rsplit_once('.').unwrap().0;
    assert_eq!(item["tags"], json!([major(), minor, "latest", v]));
    assert_eq!(item["reference"], format!("{reg}/{ns}/agent-sandbox"));
    assert_eq!(first["collection"]["reference"], format!("{reg}/{ns}"));
    assert_eq!(tags(reg, &format!("{ns}/agent-sandbox")), {
        let mut t = vec![major().to_string(), minor.to_string(), v.to_string(), "latest".into()];
        t.sort();
        t
    });
    // The digest in the report is the manifest the registry serves.
    let bytes = manifest_bytes(reg, &format!("{ns}/agent-sandbox"), v);
    assert_eq!(item["digest"].as_str().unwrap(), agent_sandbox_release::oci::Digest::of(&bytes).as_str());

    // Same tree into a fresh namespace: identical digests (reproducible).
    let again = publish_ok("feature", &source, &unique("proj"), &[]);
    assert_eq!(again["items"][0]["digest"], item["digest"]);
    assert_eq!(again["collection"]["digest"], first["collection"]["digest"]);

    // --dry-run reports and pushes nothing.
    let ns2 = unique("dry");
    let dry = publish_ok("feature", &source, &ns2, &["--dry-run"]);
    assert_eq!(dry["dryRun"], true);
    assert_eq!(dry["items"][0]["digest"], item["digest"]);
    assert!(tags(reg, &format!("{ns2}/agent-sandbox")).is_empty());
}

#[test]
fn bad_input_and_refusing_registries_push_nothing() {
    let _machine = crate::support::share_machine();
    let reg = &registry_env().registry;
    let expect_refusal = |source: &Path, ns: &str, needle: &str, registry: Option<&str>| {
        let bins = fake_bin_dir();
        let out = agent_sandbox()
            .args(["feature", "publish", "--registry", registry.unwrap_or(reg), "--namespace", ns, "--source"])
            .arg(source)
            .arg("--bin-dir")
            .arg(format!("x86_64={}", bins.path().display()))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(needle), "expected `{needle}` in:\n{}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
        assert!(tags(reg, &format!("{ns}/demo")).is_empty() && tags(reg, ns).is_empty(), "nothing may be pushed");
    };
    let d = demo_feature("1.0.0");
    fs::write(d.path().join("demo/devcontainer-feature.json"), "{\"id\": \"demo\", \"version\": \"1.0.0\",, }").unwrap();
    expect_refusal(d.path(), &unique("bad"), "devcontainer-feature.json is not valid JSON", None);
    expect_refusal(demo_feature("1.0").path(), &unique("bad"), "`1.0` is not a semantic version", None);
    expect_refusal(demo_feature("1.0.0+build.1").path(), &unique("bad"), "without +BUILD", None);

    // The project's feature must carry the crate's version.
    let copy = tempfile::tempdir().unwrap();
    let f = copy.path().join("agent-sandbox");
    fs::create_dir_all(&f).unwrap();
    for name in ["install.sh", "devcontainer-feature.json"] {
        fs::copy(root().join("feature/src/agent-sandbox").join(name), f.join(name)).unwrap();
    }
    let meta = fs::read_to_string(f.join("devcontainer-feature.json")).unwrap().replace(&format!("\"version\": \"{}\"", version()), "\"version\": \"9.9.9\"");
    fs::write(f.join("devcontainer-feature.json"), meta).unwrap();
    expect_refusal(copy.path(), &unique("bad"), "differs from agent-sandbox", None);

    // A registry that refuses writes (docker-registry in read-only mode).
    let ro = TestRegistry::read_only();
    let ns = unique("ro");
    expect_refusal(demo_feature("1.0.0").path(), &ns, &format!("the registry {} refused", ro.addr), Some(&ro.addr));
    assert!(tags(&ro.addr, &format!("{ns}/demo")).is_empty());
    // Nothing listening at all.
    expect_refusal(demo_feature("1.0.0").path(), &unique("down"), "refused", Some("localhost:1"));
}

/// A private docker-registry on a free port, with extra `storage`/`auth`
/// configuration (read-only mode, htpasswd), stopped when dropped.
struct TestRegistry {
    addr: String,
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl TestRegistry {
    fn start(storage_extra: &str, auth: &str) -> Self {
        registry_env(); // installs docker-registry
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n{storage_extra}{auth}http:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("data").display()
        );
        fs::write(dir.path().join("config.yml"), config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.path().join("config.yml"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("docker-registry");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        TestRegistry { addr: format!("localhost:{port}"), child, _dir: dir }
    }

    fn read_only() -> Self {
        Self::start("  maintenance:\n    readonly:\n      enabled: true\n", "")
    }

    /// Basic auth for `user`:`password` (htpasswd wants bcrypt; python's crypt
    /// gives it, at the lowest cost: the registry checks it on every request).
    fn with_login(user: &str, password: &str) -> Self {
        let hash = ok(Command::new("python3").args([
            "-W",
            "ignore",
            "-c",
            &format!("import crypt; print(crypt.crypt('{password}', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))"),
        ]));
        let htpasswd = tempfile::NamedTempFile::new().unwrap();
        fs::write(htpasswd.path(), format!("{user}:{}", stdout(&hash).trim())).unwrap();
        let (_, path) = htpasswd.keep().unwrap();
        Self::start("", &format!("auth:\n  htpasswd:\n    realm: test\n    path: {}\n", path.display()))
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn credentials_come_from_docker_config_files_or_the_environment() {
    let _machine = crate::support::share_machine();
    use base64::Engine as _;
    let reg = TestRegistry::with_login("pub", "s3cret");
    let home = tempfile::tempdir().unwrap();
    let run = |ns: &str, env: &[(&str, &str)]| {
        let mut c = agent_sandbox();
        for v in [
            "XDG_RUNTIME_DIR",
            "REGISTRY_AUTH_FILE",
            "DOCKER_CONFIG",
            "GITHUB_TOKEN",
            "DEVCONTAINERS_OCI_AUTH",
            "AGENT_SANDBOX_REGISTRY_USERNAME",
            "AGENT_SANDBOX_REGISTRY_PASSWORD",
            "AGENT_SANDBOX_REGISTRY_TOKEN",
        ] {
            c.env_remove(v);
        }
        let (source, bins) = (demo_feature("1.0.0"), fake_bin_dir());
        c.env("HOME", home.path()).envs(env.iter().copied());
        c.args(["feature", "publish", "--registry", &reg.addr, "--namespace", ns, "--source"]).arg(source.path());
        c.arg("--bin-dir").arg(format!("x86_64={}", bins.path().display()));
        c.output().unwrap()
    };
    let tags_with_login = |repo: &str| {
        let out = ok(Command::new("curl").args(["-sS", "-u", "pub:s3cret", &format!("http://{}/v2/{repo}/tags/list", reg.addr)]));
        stdout(&out)
    };
    let out = run("anon", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&format!("the registry {} refused", reg.addr)) && stderr(&out).contains("docker login"), "{}", stderr(&out));
    assert!(!tags_with_login("anon/demo").contains("1.0.0"));

    fs::create_dir_all(home.path().join(".docker")).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode("pub:s3cret");
    fs::write(home.path().join(".docker/config.json"), format!(r#"{{"auths": {{"{}": {{"auth": "{auth}"}}}}}}"#, reg.addr)).unwrap();
    let out = run("docker", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(tags_with_login("docker/demo").contains("1.0.0"));
    fs::remove_dir_all(home.path().join(".docker")).unwrap();

    let out = run("env", &[("AGENT_SANDBOX_REGISTRY_USERNAME", "pub"), ("AGENT_SANDBOX_REGISTRY_PASSWORD", "s3cret")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(tags_with_login("env/demo").contains("1.0.0"));
}

#[test]
fn templates_publish_with_the_cli_fields_and_an_optional_feature_rewrite() {
    let _machine = crate::support::share_machine();
    let reg = &registry_env().registry;
    let ns = unique("tpl");
    let feature = format!("{reg}/{ns}/agent-sandbox");
    let report = publish_ok("templates", &root().join("templates/src"), &format!("{ns}/templates"), &["--feature", &feature]);
    let id = report["items"][0]["id"].as_str().unwrap().to_owned();
    let m = manifest(reg, &format!("{ns}/templates/{id}"), version());
    let meta: Value = serde_json::from_str(m["annotations"]["dev.containers.metadata"].as_str().unwrap()).unwrap();
    assert_eq!(meta["type"], "image");
    assert_eq!(meta["featureIds"], json!([feature]));
    assert_eq!(meta["fileCount"], meta["files"].as_array().unwrap().len());
    let layer = blob(reg, &format!("{ns}/templates/{id}"), m["layers"][0]["digest"].as_str().unwrap());
    let mut a = tar::Archive::new(layer.as_slice());
    let config = a
        .entries()
        .unwrap()
        .map(|e| e.unwrap())
        .find(|e| e.path_bytes().as_ref() == b"./.devcontainer/devcontainer.json")
        .map(|mut e| {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut e, &mut s).unwrap();
            s
        })
        .expect("the template's devcontainer.json is in the archive");
    assert!(config.contains(&format!("\"{feature}:{}\"", major())), "{config}");
    assert!(!config.contains("ghcr.io/agent-sandbox"), "{config}");
}

// ---- the same folders through the real Dev Containers CLI -------------------

/// What both tools must agree on for one artifact.
fn shape(m: &Value) -> Value {
    let mut m = m.clone();
    for layer in m["layers"].as_array_mut().unwrap() {
        layer["digest"] = json!("<content>");
        layer["size"] = json!("<content>");
    }
    if let Some(meta) = m["annotations"].get("dev.containers.metadata").and_then(Value::as_str) {
        let mut meta: Value = serde_json::from_str(meta).unwrap();
        if let Some(files) = meta.get_mut("files") {
            let mut f: Vec<String> = files.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_owned()).collect();
            f.sort();
            *files = json!(f);
        }
        m["annotations"]["dev.containers.metadata"] = meta;
    }
    m
}

fn devcontainer_publish(kind: &str, folder: &Path, namespace: &str) {
    let env = registry_env();
    ok(Command::new(&env.devcontainer).args([kind, "publish", "--registry", &env.registry, "--namespace", namespace, "--log-level", "info"]).arg(folder));
}

fn compare_with_cli(kind: &str, ours_ns: &str, cli_ns: &str, id: &str) {
    let reg = &registry_env().registry;
    let (ours_repo, cli_repo) = (format!("{ours_ns}/{id}"), format!("{cli_ns}/{id}"));
    assert_eq!(tags(reg, &ours_repo), tags(reg, &cli_repo), "{kind} tag sets");
    let ours = manifest(reg, &ours_repo, version());
    let cli = manifest(reg, &cli_repo, version());
    assert_eq!(shape(&ours), shape(&cli), "{kind} manifests (layer content aside)");
    assert_eq!(ours["config"], cli["config"]);
    if kind == "feature" {
        // Byte for byte: the metadata annotation is JSON.stringify of the file, key order kept.
        assert_eq!(ours["annotations"], cli["annotations"]);
    }
    // The archives hold the same paths with the same modes (only the CLI's file times differ).
    let listing = |repo: &str, m: &Value| {
        let mut l = tar_listing(&blob(reg, repo, m["layers"][0]["digest"].as_str().unwrap()));
        l.sort();
        l
    };
    assert_eq!(listing(&ours_repo, &ours), listing(&cli_repo, &cli), "{kind} archive contents");
    // Collections: same manifest shape; same content except who wrote it.
    assert_eq!(tags(reg, ours_ns), vec!["latest"]);
    assert_eq!(tags(reg, cli_ns), vec!["latest"]);
    let (oc, cc) = (manifest(reg, ours_ns, "latest"), manifest(reg, cli_ns, "latest"));
    assert_eq!(shape(&oc), shape(&cc), "{kind} collection manifests");
    let content = |ns: &str, m: &Value| -> Value {
        let mut v: Value = serde_json::from_slice(&blob(reg, ns, m["layers"][0]["digest"].as_str().unwrap())).unwrap();
        v["sourceInformation"]["source"] = json!("<tool>");
        for item in v[format!("{kind}s")].as_array_mut().unwrap() {
            if let Some(files) = item.get_mut("files") {
                let mut f: Vec<String> = files.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_owned()).collect();
                f.sort();
                *files = json!(f);
            }
        }
        v
    };
    assert_eq!(content(ours_ns, &oc), content(cli_ns, &cc), "{kind} collection content");
}

#[test]
fn feature_output_matches_devcontainer_features_publish() {
    let _machine = crate::support::share_machine();
    let work = tempfile::tempdir().unwrap();
    let bins = fake_bin_dir();
    package(&work.path().join("pkg"), bins.path(), &[]);
    let (ours, cli) = (unique("cmp-ours"), unique("cmp-cli"));
    // Ours from the source tree (adding the binaries); the CLI from the packaged folder.
    publish_ok("feature", &root().join("feature/src"), &ours, &[]);
    devcontainer_publish("features", &work.path().join("pkg/src"), &cli);
    compare_with_cli("feature", &ours, &cli, "agent-sandbox");
}

#[test]
fn template_output_matches_devcontainer_templates_publish() {
    let _machine = crate::support::share_machine();
    let (ours, cli) = (unique("cmp-ours"), unique("cmp-cli"));
    let report = publish_ok("templates", &root().join("templates/src"), &ours, &[]);
    devcontainer_publish("templates", &root().join("templates/src"), &cli);
    for item in report["items"].as_array().unwrap() {
        compare_with_cli("template", &ours, &cli, item["id"].as_str().unwrap());
    }
}
