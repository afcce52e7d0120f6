//! Kubernetes and the container's seccomp profile, with the real tools:
//!
//! - the manifests under deploy/kubernetes validated against the
//!   Kubernetes API schemas (kubernetes-validate, strict, for 1.33 and
//!   1.37) and the SandboxTemplate against the agent-sandbox CRD's fields
//!   (tests/kubernetes/validate.py; scripts/k8s-env.sh installs it), then
//!   held to what docs/kubernetes.md promises of them;
//! - the shipped seccomp profile (deploy/seccomp/agent-sandbox.json) loaded
//!   by podman and by the real Docker engine with `--security-opt
//!   seccomp=FILE`, with `agent-sandbox verify` run inside as the non-root
//!   user: every check passes, and with the session's own filter removed
//!   the container's profile alone still refuses what the engine's default
//!   refuses;
//! - a pod's settings (devcontainer.yaml's) emulated with podman:
//!   its own user namespace (`--uidmap`), the profile, every capability dropped, no new
//!   privileges, the non-root user, the runtime's default masked /proc and
//!   the tun device, with verify inside as that user, the jail on and
//!   off: nothing fails, and exactly the checks docs/defences.md names
//!   for a masked /proc are degraded; the same in a rootful container with
//!   the default /proc, as root and as the non-root user.
//!
//! Needs root (rootful podman, dockerd). No cluster: none can run here.

use crate::support::docker;
use crate::support::podman::{self, Container};
use crate::support::{root, static_dir};
use agent_sandbox::container_seccomp::{self, LOCALHOST_PROFILE, REPO_PATH};
use serde_json::Value;
use std::net::Ipv4Addr;
use std::process::Command;

/// Kubernetes versions the manifests are validated for: the first with
/// user namespaces in pods on by default, and the newest the validator has.
const K8S_VERSIONS: &str = "1.33,1.37";

/// The python of scripts/k8s-env.sh (kubernetes-validate installed).
fn validator_python() -> String {
    static PY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        let _one = crate::support::setup();
        let out = Command::new("bash").arg("scripts/k8s-env.sh").current_dir(root()).output().expect("run bash scripts/k8s-env.sh");
        assert!(
            out.status.success(),
            "scripts/k8s-env.sh failed (it installs python3-venv and kubernetes-validate from PyPI):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    })
    .clone()
}

fn manifests() -> Vec<String> {
    let dir = root().join("deploy/kubernetes");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    files
}

/// Runs the validator over `files`: Ok(documents) or Err(its problems).
fn validate(files: &[String]) -> Result<Vec<Value>, String> {
    let out = Command::new(validator_python())
        .arg(root().join("tests/kubernetes/validate.py"))
        .arg(K8S_VERSIONS)
        .args(files)
        .current_dir(root())
        .output()
        .expect("run the validator");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let docs: Value = serde_json::from_slice(&out.stdout).expect("the validator's JSON");
    Ok(docs.as_array().unwrap().iter().map(|d| d["doc"].clone()).collect())
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter().find(|d| d["kind"] == kind && d["metadata"]["name"] == name).unwrap_or_else(|| panic!("no {kind} {name} in deploy/kubernetes"))
}

fn cidr(s: &str) -> Option<(Ipv4Addr, u8)> {
    let (a, p) = s.split_once('/')?;
    Some((a.parse().ok()?, p.parse().ok()?))
}

fn covers(outer: (Ipv4Addr, u8), inner: (Ipv4Addr, u8)) -> bool {
    let mask = |p: u8| if p == 0 { 0 } else { u32::MAX << (32 - u32::from(p)) };
    outer.1 <= inner.1 && (u32::from(outer.0) & mask(outer.1)) == (u32::from(inner.0) & mask(outer.1))
}

/// What docs/kubernetes.md promises of the devcontainer's pod spec.
fn assert_pod_spec(spec: &Value, what: &str) {
    assert_eq!(spec["hostUsers"], false, "{what}: its own user namespace");
    assert_eq!(spec["automountServiceAccountToken"], false, "{what}: no API token");
    let sc = &spec["securityContext"];
    assert_eq!(sc["seccompProfile"]["type"], "Localhost", "{what}");
    assert_eq!(sc["seccompProfile"]["localhostProfile"], LOCALHOST_PROFILE, "{what}");
    assert_eq!(sc["runAsNonRoot"], true, "{what}");
    assert!(sc["runAsUser"].as_u64().is_some_and(|u| u != 0), "{what}");
    for c in spec["containers"].as_array().unwrap() {
        let csc = &c["securityContext"];
        assert_eq!(csc["allowPrivilegeEscalation"], false, "{what}");
        assert_eq!(csc["capabilities"]["drop"], serde_json::json!(["ALL"]), "{what}");
        assert!(csc.get("capabilities").and_then(|c| c.get("add")).is_none(), "{what}: no capability added");
        assert!(csc.get("privileged").is_none() && csc.get("procMount").is_none(), "{what}: neither privileged nor an unmasked /proc");
        assert_eq!(c["resources"]["limits"]["squat.ai/tun"], "1", "{what}: the tun device from the device plugin");
    }
    for v in spec["volumes"].as_array().into_iter().flatten() {
        assert!(v.get("hostPath").is_none(), "{what}: no hostPath ({v})");
    }
}

#[test]
fn the_manifests_are_valid_kubernetes_and_keep_the_promised_settings() {
    let _machine = crate::support::share_machine();
    let docs = validate(&manifests()).unwrap_or_else(|e| panic!("the manifests do not validate:\n{e}"));

    let deployment = find(&docs, "Deployment", "agent-devcontainer");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_pod_spec(pod, "devcontainer.yaml");
    let template = find(&docs, "SandboxTemplate", "agent-devcontainer");
    assert_eq!(&template["spec"]["podTemplate"]["spec"], pod, "the SandboxTemplate's pod is devcontainer.yaml's");
    assert_eq!(template["spec"]["podTemplate"]["metadata"]["labels"], deployment["spec"]["template"]["metadata"]["labels"]);

    let policy = find(&docs, "NetworkPolicy", "agent-devcontainer");
    assert_eq!(policy["spec"]["podSelector"]["matchLabels"], deployment["spec"]["selector"]["matchLabels"], "the policy selects the devcontainer");
    assert_eq!(policy["spec"]["policyTypes"], serde_json::json!(["Ingress", "Egress"]));
    assert_eq!(template["spec"]["networkPolicy"]["egress"], policy["spec"]["egress"], "the SandboxTemplate's policy is networkpolicy.yaml's");
    assert_eq!(template["spec"]["networkPolicyManagement"], "Managed");
    // Every range the egress jail blocks is refused to the whole pod too,
    // and nothing but DNS (to the cluster's DNS pods) and the internet is allowed.
    let egress = policy["spec"]["egress"].as_array().unwrap();
    let v4: Vec<&Value> = egress.iter().flat_map(|r| r["to"].as_array().unwrap()).filter(|t| t["ipBlock"]["cidr"] == "0.0.0.0/0").collect();
    assert_eq!(v4.len(), 1, "{egress:?}");
    let except: Vec<(Ipv4Addr, u8)> = v4[0]["ipBlock"]["except"].as_array().unwrap().iter().map(|e| cidr(e.as_str().unwrap()).unwrap()).collect();
    for (addr, prefix, _, why) in agent_sandbox::jail::BLOCKED_RANGES {
        assert!(except.iter().any(|e| covers(*e, (*addr, *prefix))), "{addr}/{prefix} ({why}) is not refused by the NetworkPolicy");
    }
    for rule in egress {
        for to in rule["to"].as_array().unwrap() {
            if to.get("ipBlock").is_none() {
                assert_eq!(to["podSelector"]["matchLabels"]["k8s-app"], "kube-dns", "only DNS by selector: {rule}");
                assert_eq!(rule["ports"].as_array().unwrap().iter().map(|p| p["port"].as_u64()).collect::<Vec<_>>(), [Some(53), Some(53)]);
            }
        }
    }

    let installer = find(&docs, "DaemonSet", "agent-sandbox-seccomp-profile");
    let install = &installer["spec"]["template"]["spec"]["initContainers"][0]["command"];
    assert!(install.as_array().unwrap().iter().any(|a| a.as_str().is_some_and(|a| a.ends_with(&format!("/{LOCALHOST_PROFILE}")))), "{install}");
    assert!(install.as_array().unwrap().iter().any(|a| a == "seccomp-profile"), "{install}");
    let ns = find(&docs, "Namespace", "agent-sandbox");
    assert_eq!(ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted");
}

/// The validator is not vacuous: a misspelt field, a wrong enum value and
/// a malformed network rule are each refused, with where.
#[test]
fn the_validator_refuses_a_misspelt_manifest() {
    let _machine = crate::support::share_machine();
    let dir = tempfile::tempdir().unwrap();
    let read = |f: &str| std::fs::read_to_string(root().join("deploy/kubernetes").join(f)).unwrap();
    let cases = [
        ("devcontainer.yaml", "\n      hostUsers: false", "\n      hostUser: false", "'hostUser' was unexpected"),
        ("sandboxtemplate.yaml", "networkPolicyManagement: Managed", "networkPolicyManagement: Auto", "'Auto' is not one of"),
        ("sandboxtemplate.yaml", "seccompProfile:", "seccompProfiles:", "'seccompProfiles' was unexpected"),
        ("networkpolicy.yaml", "cidr: 0.0.0.0/0", "cidrs: 0.0.0.0/0", "'cidr' is a required property"),
    ];
    for (file, from, to, says) in cases {
        let text = read(file);
        assert!(text.contains(from), "{file}: {from}");
        let path = dir.path().join(file);
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        let err = validate(&[path.display().to_string()]).err().unwrap_or_else(|| panic!("{file} with {to} validated"));
        assert!(err.contains(says), "{file} with {to}: {err}");
    }
}

/// The image the profile tests run in: Debian 13 with bubblewrap and pasta
/// and a non-root user `dev` (uid 1000), the static binaries in /opt/ast.
fn trixie_image() -> String {
    let recipe = "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                  bubblewrap passt ca-certificates >/dev/null && useradd -m -u 1000 dev";
    podman::cached_image("jail-trixie", podman::TRIXIE, recipe)
}

fn profile_path() -> String {
    root().join(REPO_PATH).display().to_string()
}

/// Verify's report from `verify --json` run by `user` in `dir`.
fn verify_as(exec: impl Fn(&str) -> std::process::Output, extra: &str) -> (Option<i32>, Value, String) {
    let out = exec(&format!("/opt/ast/agent-sandbox verify --json {extra}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("verify --json printed no report ({e}):\n{text}\n{stderr}"));
    (out.status.code(), v, stderr)
}

fn check(report: &Value, number: u64) -> (String, String) {
    let c = report["checks"].as_array().and_then(|a| a.iter().find(|c| c["number"] == number));
    (
        c.and_then(|c| c["status"].as_str()).unwrap_or("missing").to_owned(),
        c.map(|c| format!("{} {}", c["name"].as_str().unwrap_or(""), c["detail"].as_str().unwrap_or(""))).unwrap_or_default(),
    )
}

/// Probes of calls the engine's default profile refuses too (keyrings,
/// bpf/perf/userfaultfd, modules and kexec, host administration, the clock,
/// other processes, obsolete calls, personality flags): with the session's
/// own filter removed (`--weaken seccomp`), the container's profile alone
/// must still block them. (73 io_uring and 74 file handles expect the
/// session filter's ENOSYS and EOPNOTSUPP; 78 address families: the
/// engine's default allows every family but vsock.)
const ENGINE_REFUSALS: [u64; 8] = [68, 69, 70, 71, 72, 75, 76, 77];

/// The profile's promises, in a running container reached by `exec`
/// (`sh -c` as the non-root user, in a writable directory).
fn assert_profile_holds(exec: &dyn Fn(&str) -> std::process::Output, engine: &str) {
    let (code, v, stderr) = verify_as(exec, "");
    assert_eq!(code, Some(0), "{engine}: verify as the non-root user under the shipped profile must pass in full:\n{v:#}\n{stderr}");
    assert_eq!(v["egressJail"], true, "{engine}");
    let (_, weak, _) = verify_as(exec, "--weaken seccomp");
    for n in ENGINE_REFUSALS {
        let (status, what) = check(&weak, n);
        assert_eq!(status, "blocked", "{engine}: probe {n} ({what}) escaped with only the container's profile: the profile lost an engine default refusal");
    }
    // The container's own processes (outside any session) are under it too.
    let status = String::from_utf8_lossy(&exec("grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status").stdout).into_owned();
    assert!(status.contains("Seccomp:\t2"), "{engine}: {status}");
}

#[test]
fn the_seccomp_profile_runs_sessions_under_podman() {
    let _machine = crate::support::share_machine();
    let image = trixie_image();
    let seccomp = format!("seccomp={}", profile_path());
    let c = Container::start(&image, &["--device", "/dev/net/tun", "--security-opt", "unmask=/proc/*", "--security-opt", &seccomp]);
    c.sh("chmod 666 /dev/net/tun && mkdir -p /work/dev && chown dev /work/dev");
    let exec = |script: &str| c.exec_full("dev", &[], &["sh", "-c", &format!("cd /work/dev && {script}")]);
    assert_profile_holds(&exec, "podman");
}

/// The image of `trixie_image` in the test Docker engine (cached by tag).
fn docker_trixie_image() -> String {
    let tag = "localhost/agent-sandbox-test/jail-trixie:docker-1";
    if docker::docker(&["image", "inspect", tag]).status.success() {
        return tag.into();
    }
    let name = crate::support::unique("build-trixie");
    docker::docker_ok(&[
        "run",
        "--name",
        &name,
        "--network",
        "host",
        docker::TRIXIE,
        "sh",
        "-euc",
        "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap passt ca-certificates >/dev/null && useradd -m -u 1000 dev",
    ]);
    docker::docker_ok(&["commit", &name, tag]);
    let _ = docker::docker(&["rm", "--force", &name]);
    tag.into()
}

/// Docker's default profile refuses sessions their user namespaces; the
/// shipped file lets them start, and keeps the default's refusals.
#[test]
fn the_seccomp_profile_runs_sessions_under_docker() {
    let _machine = crate::support::share_machine();
    let image = docker_trixie_image();
    let bins = format!("{}:/opt/ast:ro", static_dir().display());
    let seccomp = format!("seccomp={}", profile_path());
    let c = docker::Container::run(&[
        "--network",
        "host",
        "--device",
        "/dev/net/tun",
        "--security-opt",
        "systempaths=unconfined",
        "--security-opt",
        &seccomp,
        "-v",
        &bins,
        &image,
        "sleep",
        "infinity",
    ]);
    let root_sh = c.sh("root", "chmod 666 /dev/net/tun && mkdir -p /work/dev && chown dev /work/dev");
    assert!(root_sh.status.success(), "{root_sh:?}");
    let exec = |script: &str| c.sh("dev", &format!("cd /work/dev && {script}"));
    assert_profile_holds(&exec, "docker");

    // Without it (Docker's default profile), the same container refuses
    // sessions and names the cause: the control for the above.
    let plain = docker::Container::run(&[
        "--network",
        "host",
        "--device",
        "/dev/net/tun",
        "--security-opt",
        "systempaths=unconfined",
        "-v",
        &bins,
        &image,
        "sleep",
        "infinity",
    ]);
    assert!(plain.sh("root", "chmod 666 /dev/net/tun").status.success());
    let out = plain.sh("dev", "cd /tmp && /opt/ast/agent-sandbox run -- true");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("seccomp"), "under Docker's default profile sessions must refuse, naming seccomp: {out:?}");
}

/// The pod of deploy/kubernetes/devcontainer.yaml, as podman runs it: its
/// own user namespace (hostUsers: false: explicit maps onto outer ids no
/// account has, as the kubelet gives a pod; not `--userns=auto`: once,
/// beside the suite's other podman commands, such a run sat in a futex
/// wait holding the store's image and layer locks, and every other podman
/// command, an exec's cleanup among them, waited on it), the shipped
/// profile (Localhost), every capability dropped, no privilege escalation,
/// uid 1000, the runtime's default masked /proc (no procMount), and the tun
/// device as the device plugin gives it (the node's, mode 0666). Verify as
/// that user, the jail on and off: no failure, and degraded exactly what
/// docs/defences.md ("Under a masked /proc") names for the pod's own user:
/// 19 (the container's processes visible) and 102 (settings of those of
/// its uid writable).
#[test]
fn a_pods_settings_run_sessions_under_podman() {
    let _machine = crate::support::own_machine();
    let docs = validate(&[root().join("deploy/kubernetes/devcontainer.yaml").display().to_string()]).unwrap_or_else(|e| panic!("{e}"));
    let pod = &docs[0]["spec"]["template"]["spec"];
    assert_pod_spec(pod, "devcontainer.yaml");
    let uid = pod["securityContext"]["runAsUser"].as_u64().unwrap();
    let gid = pod["securityContext"]["runAsGroup"].as_u64().unwrap();
    // The pod's settings as podman options, read from the manifest.
    let user = format!("{uid}:{gid}");
    let seccomp = format!("seccomp={}", profile_path());
    let options: Vec<&str> = vec![
        "--uidmap",
        "0:400000:65536",
        "--gidmap",
        "0:400000:65536",
        "--user",
        &user,
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--security-opt",
        &seccomp,
        "--device",
        "/dev/net/tun",
        // The tests' containers share the machine's network namespace,
        // where a container in its own user namespace may not mount a
        // fresh sysfs (a pod has its own network namespace and may): the
        // machine's, read-only, instead. Sessions do not depend on it.
        "-v",
        "/sys:/sys:ro",
    ];
    // Nothing of the pod asks for more.
    assert!(!options.iter().any(|o| o.contains("privileged") || o.contains("unmask") || o.contains("systempaths")));

    // In a user namespace the node's /dev/net/tun arrives as it is: it must
    // be 0666, as udev makes it (a fresh machine here has 0600). Restored after.
    let _tun = TunMode::set(0o666);
    let image = trixie_image();
    let c = Container::start(&image, &options);
    // The workspace: a project directory in the user's home (dev, uid 1000).
    let exec = |script: &str| c.exec_full(&user, &[], &["sh", "-c", &format!("mkdir -p /home/dev/work && cd /home/dev/work && {script}")]);
    let status = String::from_utf8_lossy(&exec("grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; cat /proc/self/uid_map").stdout).into_owned();
    assert!(status.contains("CapEff:\t0000000000000000") && status.contains("NoNewPrivs:\t1") && status.contains("Seccomp:\t2"), "{status}");
    assert!(!status.contains("         0          0 "), "the container has its own user namespace: {status}");
    assert_masked_sessions(&exec, "the pod");
}

/// Verify run by `exec`'s user in a container whose /proc keeps the
/// runtime's masks, the jail on and off: nothing fails, and degraded are
/// exactly the checks docs/defences.md ("Under a masked /proc") names for
/// a session whose uid on host files owns outer processes: 19 (the
/// container's processes visible) and 102 (settings of those of its uid
/// writable); 100 and 101 see the canary and are refused.
fn assert_masked_sessions(exec: &dyn Fn(&str) -> std::process::Output, who: &str) {
    let masked = String::from_utf8_lossy(&exec("grep -c ' /proc/' /proc/self/mountinfo").stdout).trim().parse::<u32>().unwrap_or(0);
    assert!(masked > 0, "{who}: the container's /proc keeps the runtime's masks");
    for (what, prefix, extra) in [("the jail on", "", ""), ("the jail off", "AGENT_SANDBOX_EGRESS_JAIL=0 ", "--allow-jail-off")] {
        let (code, v, stderr) = verify_as(|s: &str| exec(&format!("{prefix}{s}")), extra);
        let failed: Vec<String> = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "fail" || c["status"] == "escaped")
            .map(|c| format!("{} {}: {}", c["number"], c["name"].as_str().unwrap_or(""), c["detail"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(failed, Vec::<String>::new(), "{who}, {what}: verify fails nothing:\n{stderr}");
        assert_eq!(code, Some(0), "{who}, {what}:\n{v:#}\n{stderr}");
        let degraded: Vec<u64> = v["checks"].as_array().unwrap().iter().filter(|c| c["status"] == "degraded").filter_map(|c| c["number"].as_u64()).collect();
        assert_eq!(degraded, vec![19, 102], "{who}, {what}: the checks docs/defences.md names as degraded under a masked /proc:\n{v:#}");
        assert_eq!(v["summary"]["degraded"], 2, "{who}, {what}");
        assert_eq!(v["egressJail"], prefix.is_empty(), "{who}, {what}");
        for n in [100, 101] {
            let (status, detail) = check(&v, n);
            assert!(status == "blocked" && detail.contains("is visible"), "{who}, {what}: {n}: {status} {detail}");
        }
    }
}

/// The same in a rootful podman container (no user namespace of its own)
/// with the runtime's default /proc and the shipped profile: verify as
/// root and as the non-root user. Root's session here acts on host files
/// as root (no idmapped mounts without CAP_SYS_ADMIN: the scan), so the
/// outer processes of root are its own, as docs/defences.md says.
#[test]
fn sessions_run_under_a_rootful_containers_masked_proc() {
    let _machine = crate::support::share_machine();
    let image = trixie_image();
    let seccomp = format!("seccomp={}", profile_path());
    let c = Container::start(&image, &["--device", "/dev/net/tun", "--security-opt", &seccomp]);
    c.sh("chmod 666 /dev/net/tun && mkdir -p /work/dev /work/root && chown dev /work/dev");
    for (user, dir) in [("root", "/work/root"), ("dev", "/work/dev")] {
        let exec = |script: &str| c.exec_full(user, &[], &["sh", "-c", &format!("cd {dir} && {script}")]);
        assert_masked_sessions(&exec, user);
    }
}

/// /dev/net/tun's mode on this machine, set for a test and restored.
struct TunMode(u32);

impl TunMode {
    fn set(mode: u32) -> TunMode {
        use std::os::unix::fs::PermissionsExt;
        let was = std::fs::metadata("/dev/net/tun").unwrap().permissions().mode() & 0o7777;
        std::fs::set_permissions("/dev/net/tun", std::fs::Permissions::from_mode(mode)).unwrap();
        TunMode(was)
    }
}

impl Drop for TunMode {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions("/dev/net/tun", std::fs::Permissions::from_mode(self.0));
    }
}

/// Every name in the profile is a system call libseccomp knows on one of
/// its architectures: engines skip unknown names silently, so a misspelt
/// one would be a call silently refused.
#[test]
fn every_name_in_the_profile_is_a_system_call() {
    let _machine = crate::support::share_machine();
    // scripts/k8s-env.sh installs Debian's seccomp package with the validator.
    let _ = validator_python();
    let resolver = "/usr/bin/scmp_sys_resolver";
    assert!(std::path::Path::new(resolver).exists(), "{resolver} is missing: scripts/k8s-env.sh installs it (Debian's seccomp package)");
    let arches = ["x86_64", "x86", "x32", "aarch64", "arm"];
    for name in container_seccomp::allowed_names() {
        let known = arches.iter().any(|a| {
            let out = Command::new(resolver).args(["-a", a, name]).output().unwrap();
            let n = String::from_utf8_lossy(&out.stdout).trim().parse::<i64>().unwrap_or(-1);
            out.status.success() && n >= 0
        });
        assert!(known, "{name} is no system call on {arches:?} (scmp_sys_resolver)");
    }
}
