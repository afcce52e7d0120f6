//! Engine choice and command lines, as whole values.

use super::*;

fn found(list: &[Engine]) -> BTreeMap<Engine, PathBuf> {
    list.iter().map(|e| (*e, PathBuf::from(format!("/usr/bin/{}", e.name())))).collect()
}

fn tools(engine: Engine) -> Tools {
    choose(Some(engine), &found(&Engine::ALL), "/usr/bin").unwrap()
}

fn v(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn detection_prefers_podman_then_docker_then_buildah() {
    assert_eq!(choose(None, &found(&Engine::ALL), "d").unwrap().engine, Engine::Podman);
    assert_eq!(choose(None, &found(&[Engine::Docker, Engine::Buildah]), "d").unwrap().engine, Engine::Docker);
    let t = choose(None, &found(&[Engine::Buildah, Engine::Podman]), "d").unwrap();
    assert_eq!(t.engine, Engine::Podman);
}

#[test]
fn buildah_builds_and_podman_runs() {
    let t = choose(Some(Engine::Buildah), &found(&[Engine::Buildah, Engine::Podman]), "d").unwrap();
    assert_eq!(t, Tools { engine: Engine::Buildah, builder: "/usr/bin/buildah".into(), runner: Engine::Podman, runner_path: "/usr/bin/podman".into() });
    let e = choose(Some(Engine::Buildah), &found(&[Engine::Buildah]), "d").unwrap_err();
    assert!(matches!(e, ImageError::NoRunner), "{e}");
}

#[test]
fn missing_engines_name_the_fix() {
    let e = choose(None, &found(&[]), "/usr/bin, /bin").unwrap_err().to_string();
    assert!(e.contains("apt-get install podman") && e.contains("/usr/bin, /bin"), "{e}");
    let e = choose(Some(Engine::Docker), &found(&[Engine::Podman]), "/usr/bin").unwrap_err().to_string();
    assert_eq!(e, "--engine docker was asked for but `docker` is not in /usr/bin; install it or pick one that is here (podman)");
    assert!(Engine::from_name("nerdctl").unwrap_err().to_string().contains("podman, docker or buildah"));
}

#[test]
fn build_argv_whole() {
    let args = vec![("AGENTS".to_owned(), "pi".to_owned())];
    let labels = vec![("a".to_owned(), "1 2".to_owned())];
    let spec = BuildSpec {
        tag: "localhost/x:1",
        platform: "linux/arm64",
        context: Path::new("/w/context"),
        network: Some("host"),
        no_cache: true,
        build_args: &args,
        labels: &labels,
    };
    assert_eq!(
        build_argv(&tools(Engine::Podman), &spec),
        v(&[
            "/usr/bin/podman",
            "build",
            "--file",
            "/w/context/Containerfile",
            "--tag",
            "localhost/x:1",
            "--platform",
            "linux/arm64",
            "--network",
            "host",
            "--no-cache",
            "--build-arg",
            "AGENTS=pi",
            "--label",
            "a=1 2",
            "/w/context"
        ])
    );
    let spec = BuildSpec { network: None, no_cache: false, ..spec };
    assert_eq!(
        build_argv(&tools(Engine::Buildah), &spec),
        v(&[
            "/usr/bin/buildah",
            "build",
            "--layers",
            "--file",
            "/w/context/Containerfile",
            "--tag",
            "localhost/x:1",
            "--platform",
            "linux/arm64",
            "--build-arg",
            "AGENTS=pi",
            "--label",
            "a=1 2",
            "/w/context"
        ])
    );
    assert_eq!(build_argv(&tools(Engine::Docker), &spec)[..2], v(&["/usr/bin/docker", "build"]));
    // docker 20.10 (Debian 12's) needs BuildKit asked for: the Containerfile uses RUN --mount.
    assert_eq!(build_env(&tools(Engine::Docker)), [("DOCKER_BUILDKIT".to_owned(), "1".to_owned())]);
    assert_eq!(build_env(&tools(Engine::Podman)), []);
    assert_eq!(build_env(&tools(Engine::Buildah)), []);
}

#[test]
fn verify_containers_start_as_root_and_exec_as_each_user() {
    assert_eq!(
        start_argv(&tools(Engine::Podman), "img", "ctr", Some("host"), Path::new("/w/seccomp.json")),
        v(&[
            "/usr/bin/podman",
            "run",
            "--detach",
            "--name",
            "ctr",
            "--device",
            "/dev/net/tun",
            "--security-opt",
            "systempaths=unconfined",
            "--network",
            "host",
            "img",
            "sleep",
            "infinity"
        ])
    );
    let env = vec![("AGENT_SANDBOX_EGRESS_JAIL".to_owned(), "0".to_owned())];
    assert_eq!(
        exec_argv(&tools(Engine::Docker), "ctr", "vscode", &env, &v(&["true"])),
        v(&["/usr/bin/docker", "exec", "--user", "vscode", "--env", "AGENT_SANDBOX_EGRESS_JAIL=0", "ctr", "true"])
    );
    assert_eq!(remove_argv(&tools(Engine::Podman), "ctr"), v(&["/usr/bin/podman", "rm", "--force", "--time", "0", "ctr"]));
    assert_eq!(remove_argv(&tools(Engine::Docker), "ctr"), v(&["/usr/bin/docker", "rm", "--force", "ctr"]));
    assert_eq!(
        start_argv(&tools(Engine::Docker), "img", "ctr", None, Path::new("/w/seccomp.json")),
        v(&[
            "/usr/bin/docker",
            "run",
            "--detach",
            "--name",
            "ctr",
            "--device",
            "/dev/net/tun",
            "--security-opt",
            "systempaths=unconfined",
            "--security-opt",
            "seccomp=/w/seccomp.json",
            "--security-opt",
            "apparmor=unconfined",
            "img",
            "sleep",
            "infinity",
        ])
    );
    // buildah's verify containers run with podman.
    assert_eq!(start_argv(&tools(Engine::Buildah), "img", "ctr", None, Path::new("/w/seccomp.json"))[0], "/usr/bin/podman");
}

#[test]
fn export_per_engine() {
    let w = Path::new("/w/export");
    assert_eq!(
        export_argv(&tools(Engine::Podman), "img", w),
        (v(&["/usr/bin/podman", "save", "--format", "oci-dir", "--output", "/w/export/oci", "img"]), Export::Dir { dir: "/w/export/oci".into() })
    );
    assert_eq!(
        export_argv(&tools(Engine::Buildah), "img", w),
        (v(&["/usr/bin/buildah", "push", "img", "oci:/w/export/oci"]), Export::Dir { dir: "/w/export/oci".into() })
    );
    let (argv, to) = export_argv(&tools(Engine::Docker), "img", w);
    assert_eq!(argv, v(&["/usr/bin/docker", "save", "--output", "/w/export/image.tar", "img"]));
    assert_eq!(to, Export::Tar { tar: "/w/export/image.tar".into(), dir: "/w/export/oci".into() });
    assert_eq!(inspect_argv(&tools(Engine::Buildah), "img"), v(&["/usr/bin/podman", "image", "inspect", "img"]));
}
