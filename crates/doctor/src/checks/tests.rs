//! Verdicts of the host checks, from hand-made facts.

use super::*;

fn healthy() -> HostFacts {
    HostFacts {
        jail_on: true,
        bwrap: Ok("/usr/bin/bwrap".into()),
        uid: 1000,
        userns: Userns::Works,
        userns_facts: crate::jail::UsernsFacts::default(),
        mounts: Some(Mounts::Works),
        emulator: None,
        tun: Tun::Usable("mode 0666, owner 0:0".into()),
        engine: crate::confinement::Engine::None,
        pasta: Ok("/usr/bin/passt".into()),
        pasta_version: Some("pasta 0^20250512".into()),
        attach: Some(Attach::Attached),
        filter: Some(Filter::Works),
        container: Ok(plain_container()),
        fresh_proc: true,
        landlock: Support::Abi(7),
        abstract_scoping: Scoping::Enforced { abi: 7 },
        installed: Installed::Yes { problems: Vec::new() },
        path: format!("{SHIM_DIR}:/usr/local/sbin:/usr/bin"),
        path_dirs: Vec::new(),
        resolutions: vec![(Agent::Claude, Resolution::Shim(format!("{SHIM_DIR}/claude").into()))],
        root: false,
        boundary: crate::boundary::Boundary { in_container: false, uid_map: "0 0 4294967295".into(), proc_sys_writable: true },
        exec: None,
        host_view: None,
    }
}

/// A container with a default route and its connected subnet.
fn plain_container() -> crate::jail::ContainerNet {
    use crate::jail::plan::container::{PolicyRule, RuleAction};
    use crate::jail::Route;
    let gw = std::net::Ipv4Addr::new(172, 17, 0, 1);
    let rule =
        |priority, table| PolicyRule { priority, table, action: RuleAction::Lookup, to: None, selectors: vec![], invert: false, suppress_prefixlen: None };
    crate::jail::ContainerNet {
        routes: vec![Route::via(crate::jail::Ipv4Net::default_route(), gw, "eth0"), Route::on_link("172.17.0.0/16".parse().unwrap(), "eth0")],
        rules: vec![rule(0, 255), rule(32766, 254), rule(32767, 253)],
        addrs: vec![],
    }
}

fn ids(f: &[Finding]) -> Vec<(&'static str, Severity)> {
    f.iter().map(|f| (f.id, f.severity)).collect()
}

#[test]
fn a_healthy_host_is_all_ok() {
    let got = assess(&healthy());
    assert_eq!(
        ids(&got),
        vec![
            ("bwrap-ok", Severity::Ok),
            ("userns-ok", Severity::Ok),
            ("tun-ok", Severity::Ok),
            ("pasta-ok", Severity::Ok),
            ("filter-ok", Severity::Ok),
            ("mounts-ok", Severity::Ok),
            ("proc-ok", Severity::Ok),
            ("jail-internet-ok", Severity::Ok),
            ("jail-routes-ok", Severity::Ok),
            ("abstract-scope-ok", Severity::Ok),
            ("install-ok", Severity::Ok),
            ("path-ok", Severity::Ok),
        ]
    );
}

#[test]
fn a_broken_container() {
    let mut h = healthy();
    h.bwrap = Err("`bwrap` was not found".into());
    h.tun = Tun::Missing;
    h.pasta = Err("`pasta` was not found".into());
    h.attach = None;
    h.filter =
        Some(Filter::Fails { why: "creating an nf_tables netlink socket: Protocol not supported".into(), fix: crate::jail::packet_filter_fix(Some(93)) });
    h.fresh_proc = false;
    h.installed = Installed::No;
    h.resolutions = vec![(Agent::Claude, Resolution::Vendor { found: "/usr/local/bin/claude".into(), shim_later: false })];
    let got = assess(&h);
    assert_eq!(
        ids(&got),
        vec![
            ("bwrap-missing", Severity::Error),
            ("userns-ok", Severity::Ok),
            ("tun-missing", Severity::Error),
            ("pasta-missing", Severity::Error),
            ("filter-unavailable", Severity::Error),
            ("mounts-ok", Severity::Ok),
            ("proc-masked", Severity::Warning),
            ("jail-internet-ok", Severity::Ok),
            ("jail-routes-ok", Severity::Ok),
            ("abstract-scope-ok", Severity::Ok),
            ("not-installed", Severity::Warning),
            ("path-vendor-first", Severity::Error),
        ]
    );
    assert!(got.iter().all(|f| f.severity == Severity::Ok || f.fix.is_some()), "every problem names its fix");
    assert!(got[2].fix.as_deref().unwrap().contains("--device=/dev/net/tun"));
    assert!(got[4].fix.as_deref().unwrap().contains("CONFIG_NF_TABLES"));
}

#[test]
fn jail_prerequisites_do_not_block_without_the_jail() {
    let mut h = healthy();
    h.jail_on = false;
    h.tun = Tun::Missing;
    h.attach = None;
    let got = prerequisites(&h);
    assert!(got.iter().any(|f| f.id == "tun-missing" && f.severity == Severity::Info));
}

#[test]
fn a_tun_node_the_user_may_not_open_names_its_mode_and_the_engines_fix() {
    use crate::confinement::Engine;
    let mut h = healthy();
    h.uid = 1000;
    h.tun = Tun::Denied("mode 0600, owner 0:0".into());
    h.attach = None;
    for (engine, says) in
        [(Engine::Docker, "docker exec -u root"), (Engine::Podman, "podman exec -u root"), (Engine::Kubernetes, "init container"), (Engine::None, "udev rule")]
    {
        h.engine = engine;
        let f = prerequisites(&h).into_iter().find(|f| f.check == "tun").unwrap();
        assert_eq!((f.id, f.severity), ("tun-permission", Severity::Error));
        assert!(f.message.contains("uid 1000") && f.message.contains("mode 0600, owner 0:0"), "{}", f.message);
        assert!(f.fix.as_deref().unwrap().contains(says), "{:?}", f.fix);
    }
}

#[test]
fn a_pasta_that_cannot_attach_names_the_newer_passt() {
    let mut h = healthy();
    h.attach = Some(Attach::Failed("pasta exited (exit status: 1)".into()));
    let f = prerequisites(&h).into_iter().find(|f| f.id == "pasta-cannot-attach").unwrap();
    assert_eq!(f.severity, Severity::Error);
    assert!(f.fix.unwrap().contains("Debian 13"));
}

#[test]
fn exec_path_findings_for_image_paths() {
    let python_image = "/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    let got = exec_path_findings(python_image, &[]);
    assert_eq!(ids(&got), vec![("exec-path-shadowed", Severity::Warning)]);
    assert!(got[0].fix.as_deref().unwrap().contains(&format!("ENV PATH={SHIM_DIR}:/usr/local/bin:/usr/local/sbin")));
    let venv = vec![
        DirInfo { dir: "/opt/venv/bin".into(), exists: true, writable: false, venv: true },
        DirInfo { dir: "/usr/bin".into(), exists: true, writable: false, venv: false },
    ];
    let got = exec_path_findings("/opt/venv/bin:/usr/bin", &venv);
    assert_eq!(ids(&got), vec![("exec-path-no-shims", Severity::Warning), ("exec-path-order", Severity::Warning)]);
    assert!(exec_path_findings("/usr/local/sbin:/usr/local/bin:/usr/bin", &[]).is_empty());
}

#[test]
fn abstract_scoping_says_what_sessions_get() {
    let mut h = healthy();
    assert!(abstract_scoping(&h).message.contains("Landlock ABI 7"));
    h.landlock = Support::Abi(4);
    h.abstract_scoping = crate::sandbox::landlock::decide(h.landlock, false, false);
    let f = abstract_scoping(&h);
    assert_eq!((f.id, f.severity), ("abstract-scope-unavailable", Severity::Info));
    assert!(f.message.contains("ABI 4") && f.message.contains("own network namespace"), "{}", f.message);
    h.jail_on = false;
    let f = abstract_scoping(&h);
    assert_eq!((f.id, f.severity), ("abstract-scope-unavailable", Severity::Warning));
    assert!(f.message.contains("X11") && f.fix.as_deref().unwrap().contains("6.12"), "{f:?}");
}

#[test]
fn under_emulation_the_userns_finding_names_the_emulator_and_the_platform_fix() {
    let mut h = healthy();
    h.userns = Userns::Fails { why: "creating a user+network namespace failed: EINVAL: Invalid argument".into(), errno: Some(libc::EINVAL) };
    h.emulator = Some("/usr/bin/qemu-aarch64-static".into());
    h.attach = None;
    let got = prerequisites(&h);
    let userns = got.iter().find(|f| f.check == "userns").unwrap();
    assert_eq!((userns.id, userns.severity), ("userns-emulated", Severity::Error));
    assert!(
        userns.message.contains("runs under the emulator /usr/bin/qemu-aarch64-static")
            && userns.message.contains("cannot create namespaces or load seccomp filters"),
        "{}",
        userns.message
    );
    assert_eq!(userns.fix.as_deref(), Some(crate::fixes::EMULATED));
    assert!(!got.iter().any(|f| f.id == "emulated"), "one finding says it");

    // Without an emulator the same failure keeps the sysctl advice.
    h.emulator = None;
    let got = prerequisites(&h);
    assert_eq!(got.iter().find(|f| f.check == "userns").unwrap().fix.as_deref(), Some(crate::fixes::USERNS));

    // An emulator that allows namespaces is still named.
    h.userns = Userns::Works;
    h.emulator = Some("/run/rosetta/rosetta".into());
    let got = prerequisites(&h);
    assert!(got.iter().any(|f| f.id == "userns-ok"));
    let e = got.iter().find(|f| f.id == "emulated").unwrap();
    assert_eq!(e.severity, Severity::Warning);
    assert!(e.message.contains("/run/rosetta/rosetta"), "{}", e.message);
}

fn dir(d: &str, writable: bool) -> DirInfo {
    DirInfo { dir: d.into(), exists: true, writable, venv: false }
}

/// Another feature's containerEnv puts its directory first: commands run
/// without a shell get the vendor's `claude`, although doctor's own
/// (login-shell) PATH has the shim first.
#[test]
fn a_vendor_first_on_the_containers_path_is_an_error() {
    let mut h = healthy();
    let path = "/usr/local/share/nvm/current/bin:/usr/local/sbin:/usr/local/bin:/usr/bin";
    h.exec = Some(ExecPath {
        path: path.into(),
        from: "the container's first process (pid 1)".into(),
        dirs: vec![dir("/usr/local/share/nvm/current/bin", false), dir("/usr/local/sbin", false)],
        root: false,
        resolutions: vec![(Agent::Claude, Resolution::Vendor { found: "/usr/local/share/nvm/current/bin/claude".into(), shim_later: true })],
    });
    let got = assess(&h);
    let f = got.iter().find(|f| f.id == "exec-path-vendor-first").expect("the exec PATH is judged");
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.message.contains("`docker exec CTR claude`") && f.message.contains(path) && f.message.contains("runs /usr/local/share/nvm/current/bin/claude"),
        "{}",
        f.message
    );
    assert!(f.fix.as_deref().unwrap().contains("overrideFeatureInstallOrder"));
    assert!(!got.iter().any(|f| f.id == "path-ok"));
}

/// Root's PATH holds no directory a user can write, wherever it stands:
/// "after the system directories" only protects the names they have.
#[test]
fn user_writable_directories_on_roots_path_are_named() {
    let mut h = healthy();
    h.path = "/usr/local/sbin:/usr/bin:/opt/venv/bin".into();
    h.path_dirs = vec![dir("/usr/local/sbin", false), dir("/usr/bin", false), dir("/opt/venv/bin", true)];
    assert!(!assess(&h).iter().any(|f| f.id == "path-root-writable"), "a non-root user's own directories are theirs");
    h.root = true;
    let got = assess(&h);
    let f = got.iter().find(|f| f.id == "path-root-writable").expect("root's PATH is judged");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.message.contains("/opt/venv/bin") && f.message.contains("as root"), "{}", f.message);
    // The container's PATH, when root's commands get it.
    let mut h = healthy();
    h.exec = Some(ExecPath {
        path: "/usr/bin:/opt/venv/bin".into(),
        from: "pid 1".into(),
        dirs: vec![dir("/usr/bin", false), dir("/opt/venv/bin", true)],
        root: true,
        resolutions: vec![],
    });
    assert!(assess(&h).iter().any(|f| f.id == "exec-path-writable" && f.message.contains("/opt/venv/bin")));
}

/// At image build time the installer names a user-writable directory on
/// the image's PATH, even after the system directories.
#[test]
fn the_installer_names_a_user_writable_directory_on_the_images_path() {
    let dirs = vec![dir("/usr/local/sbin", false), dir("/usr/bin", false), dir("/opt/venv/bin", true)];
    let got = exec_path_findings("/usr/local/sbin:/usr/bin:/opt/venv/bin", &dirs);
    assert_eq!(ids(&got), vec![("exec-path-writable", Severity::Warning)]);
    assert!(got[0].fix.as_deref().unwrap().contains("take /opt/venv/bin off the image's ENV PATH"));
}

/// A root doctor names the host view root's sessions get; another user's
/// gets no such finding.
#[test]
fn the_host_view_of_root_sessions_is_reported() {
    let id = |h: &HostFacts| assess(h).into_iter().find(|f| f.id.starts_with("host-view")).map(|f| (f.id, f.severity, f.message, f.fix.clone()));
    assert_eq!(id(&healthy()), None);
    let mut h = healthy();
    h.host_view = Some(Ok(()));
    let (i, sev, msg, fix) = id(&h).unwrap();
    assert_eq!((i, sev, fix), ("host-view-kernel", Severity::Ok, None));
    assert!(msg.contains("uid 65533"), "{msg}");
    h.host_view = Some(Err("/workspaces/app cannot be mounted idmapped (EINVAL)".into()));
    let (i, sev, msg, fix) = id(&h).unwrap();
    assert_eq!((i, sev), ("host-view-scan", Severity::Info));
    assert!(msg.contains("cannot be mounted idmapped (EINVAL)") && fix.unwrap().contains("SYS_ADMIN"), "{msg}");
}
