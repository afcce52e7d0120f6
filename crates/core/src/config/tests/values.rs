//! Validation of values in the file: ports, IPv4 addresses, paths,
//! devices, environment variable names; each error with its line and key.

use super::*;

fn wrong_type(src: &str) -> (At, &'static str, String, Hint) {
    match parse_err(src) {
        ConfigError::WrongType { at, expected, found, hint } => (at, expected, found, hint),
        e => panic!("{src}: {e:?}"),
    }
}

fn bad_port(src: &str) -> (At, String) {
    match parse_err(src) {
        ConfigError::BadPort { at, value } => (at, value),
        e => panic!("{src}: {e:?}"),
    }
}

#[test]
fn bad_ports() {
    assert_eq!(bad_port("{\n localPorts: [0] }"), (at_file(2, "localPorts"), "0".into()));
    assert_eq!(bad_port("{ localPorts: [80,\n 70000] }"), (at_file(2, "localPorts"), "70000".into()));
    assert_eq!(bad_port("{\n\n callbackPorts: [-1] }"), (at_file(3, "callbackPorts"), "-1".into()));
    assert_eq!(bad_port("{ callbackPorts: [1.5] }").1, "1.5");
    assert_eq!(bad_port("{ callbackPorts: [80.0] }").1, "80.0");
    assert_eq!(bad_port("{ localPorts: [1e3] }").1, "1000.0");
    // Infinity is no number JSON can hold: a wrong type, as NaN is.
    assert_eq!(wrong_type("{ localPorts: [-Infinity] }").2, "number -Infinity");
}

#[test]
fn port_as_string_is_a_wrong_type_with_a_hint() {
    let (at, expected, found, hint) = wrong_type("{\n localPorts: [\n \"80\"] }");
    assert_eq!(at, at_file(3, "localPorts"));
    assert_eq!(expected, "a port number (1-65535)");
    assert_eq!(found, "string \"80\"");
    assert_eq!(hint, Hint::new("write 80 without quotes"));
    assert_eq!(wrong_type("{ localPorts: ['http'] }").3, Hint::none());
    assert_eq!(wrong_type("{ localPorts: [NaN] }").2, "number NaN");
}

#[test]
fn port_in_both_lists() {
    let e = parse_err("{\n localPorts: [8080, 9000],\n callbackPorts: [\n  1455,\n  9000,\n ],\n}");
    assert_eq!(e, ConfigError::PortConflict { at: at_file(5, "callbackPorts"), port: 9000 });
    assert!(e.to_string().contains("port 9000 is in both localPorts and callbackPorts"));
}

fn bad_address(src: &str) -> (At, String, &'static str) {
    match parse_err(src) {
        ConfigError::BadAddress { at, value, reason } => (at, value, reason),
        e => panic!("{src}: {e:?}"),
    }
}

#[test]
fn bad_ipv4_forms() {
    let (at, value, reason) = bad_address("{\n allowIp: [\n '203.0.113.1',\n '2001:db8::1'] }");
    assert_eq!((at, value.as_str()), (at_file(4, "allowIp"), "2001:db8::1"));
    assert!(reason.starts_with("IPv6 addresses are not supported"), "{reason}");
    assert!(bad_address("{ allowIp: ['::ffff:10.0.0.1'] }").2.starts_with("IPv6"));
    assert!(bad_address("{ allowIp: ['10.0.0.0/8'] }").2.starts_with("a CIDR range"));
    assert!(bad_address("{ allowIp: ['10.0.0.1/32'] }").2.starts_with("a CIDR range"));
    assert!(bad_address("{ allowIp: ['example.com'] }").2.starts_with("a host name"));
    assert!(bad_address("{ allowIp: ['localhost'] }").2.starts_with("a host name"));
    for bad in ["256.1.1.1", "1.2.3", "1.2.3.4.5", "010.0.0.1", " 1.2.3.4", ""] {
        let src = format!("{{ allowIp: ['{bad}'] }}");
        assert!(bad_address(&src).2.starts_with("not an IPv4 address"), "{bad}");
    }
    assert!(bad_address("{ allowIp: ['127.0.0.1'] }").2.starts_with("loopback"));
    for bad in ["0.0.0.0", "255.255.255.255", "224.0.0.1"] {
        let src = format!("{{ allowIp: ['{bad}'] }}");
        assert!(bad_address(&src).2.starts_with("only a single unicast"), "{bad}");
    }
}

fn bad_path(src: &str) -> (At, String, &'static str, Hint) {
    match parse_err(src) {
        ConfigError::BadPath { at, value, reason, hint } => (at, value, reason, hint),
        e => panic!("{src}: {e:?}"),
    }
}

#[test]
fn relative_paths() {
    let (at, value, reason, hint) = bad_path("{\n allowWrite: [\n '/ok',\n 'build/out'] }");
    assert_eq!((at, value.as_str(), reason), (at_file(4, "allowWrite"), "build/out", "the path is relative"));
    assert_eq!(hint, Hint::new("write an absolute path starting with /"));
    let hint = bad_path("{ allowWrite: ['~/.cache'] }").3;
    assert_eq!(hint, Hint::new("~ is not expanded; write the full path, e.g. /home/USER/..."));
    assert_eq!(bad_path("{ workspaceRoot: 'ws' }").0, at_file(1, "workspaceRoot"));
    assert_eq!(bad_path("{ allowDevice: ['dev/null'] }").2, "the path is relative");
}

#[test]
fn dot_dot_empty_nul_and_root_paths() {
    let msg = "the path contains a .. component";
    assert_eq!(bad_path("{ allowWrite: ['/srv/../etc'] }").2, msg);
    assert_eq!(bad_path("{ allowWrite: ['/srv/..'] }").2, msg);
    assert_eq!(bad_path("{ workspaceRoot: '/w/../..' }").2, msg);
    assert_eq!(bad_path("{ allowDevice: ['/dev/../etc/shadow'] }").2, msg);
    assert_eq!(bad_path("{ allowWrite: [''] }").2, "the path is empty");
    assert_eq!(bad_path("{ allowWrite: ['/a\\u0000b'] }").2, "the path contains a NUL byte");
    assert_eq!(bad_path("{ allowWrite: ['/'] }").2, "the whole file system cannot be made writable");
    assert_eq!(bad_path("{ workspaceRoot: '//' }").2, "the whole file system cannot be made writable");
    // "..." is a name, not a parent reference.
    assert_eq!(parse_ok("{ allowWrite: ['/srv/...'] }").config.allow_write, [PathBuf::from("/srv/...")]);
}

#[test]
fn devices_must_be_under_dev() {
    let (at, value, reason, _) = bad_path("{\n allowDevice: ['/etc/passwd'] }");
    assert_eq!((at, value.as_str(), reason), (at_file(2, "allowDevice"), "/etc/passwd", "not a device under /dev/"));
    for bad in ["/dev", "/dev/", "/devices/x", "/", "/sys/class"] {
        let src = format!("{{ allowDevice: ['{bad}'] }}");
        assert_eq!(bad_path(&src).2, "not a device under /dev/", "{bad}");
    }
    let ok = parse_ok("{ allowDevice: ['/dev/dri/renderD128', '/dev/./kvm'] }");
    assert_eq!(ok.config.allow_device, [PathBuf::from("/dev/dri/renderD128"), PathBuf::from("/dev/kvm")]);
}

#[test]
fn bad_environment_variable_names() {
    for bad in ["1FOO", "FOO-BAR", "", "A B", "FOO=1", "BASH_FUNC_x%%", "ÄRGER"] {
        let src = format!("{{\n passEnv: ['{bad}'] }}");
        match parse_err(&src) {
            ConfigError::BadEnvName { at, value } => {
                assert_eq!((at, value.as_str()), (at_file(2, "passEnv"), bad));
            }
            e => panic!("{bad}: {e:?}"),
        }
    }
    assert_eq!(parse_ok("{ passEnv: ['_X1', 'aws_region'] }").config.pass_env, ["_X1", "aws_region"]);
}

#[test]
fn never_passed_names_are_refused() {
    for name in [
        "PATH",
        "HOME",
        "IFS",
        "ENV",
        "BASH_ENV",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DISPLAY",
        "SSH_AUTH_SOCK",
        "DBUS_SESSION_BUS_ADDRESS",
        "VSCODE_IPC_HOOK_CLI",
        "SHELL",
        "USER",
        "LOGNAME",
        "IS_SANDBOX",
        "IS_SANDBOX_AGENT",
        "GIT_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_PARAMETERS",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "NODE_OPTIONS",
        "PROMPT_COMMAND",
        "ld_preload",
        "Path",
    ] {
        let src = format!("{{\n\n passEnv: ['CI', '{name}'] }}");
        let e = parse_err(&src);
        assert_eq!(e, ConfigError::NeverPassed { at: at_file(3, "passEnv"), name: name.into() });
        assert!(e.to_string().contains("can never be passed"), "{e}");
    }
}

#[test]
fn never_passed_is_exact_about_prefixes() {
    assert!(never_passed("LD_AUDIT"));
    assert!(never_passed("VSCODE_GIT_ASKPASS_MAIN"));
    for ok in ["PATHS", "HOMEBREW_PREFIX", "LDFLAGS", "USERNAME_X", "GIT_AUTHOR_NAME", "ENVIRONMENT", "TERM"] {
        assert!(!never_passed(ok), "{ok}");
    }
}

#[test]
fn system_locations_are_refused_for_writing_and_as_the_workspace() {
    for (key, path) in [
        ("workspaceRoot", "/proc"),
        ("workspaceRoot", "/dev"),
        ("workspaceRoot", "/etc"),
        ("workspaceRoot", "/usr"),
        ("workspaceRoot", "/home"),
        ("allowWrite", "/root"),
        ("allowWrite", "/etc"),
        ("allowWrite", "/etc/profile.d"),
        ("allowWrite", "/proc/sys"),
        ("allowWrite", "/run"),
        ("allowWrite", "/var/run"),
        ("allowWrite", "/usr/local/bin"),
        ("allowWrite", "/boot"),
        ("allowWrite", "/sys/fs/cgroup"),
        ("allowWrite", "/tmp"),
        ("allowWrite", "/var/lib"),
        ("allowWrite", "/var/lib/dpkg/info"),
        ("allowWrite", "/run/"),
        ("allowWrite", "/etc/./cron.d"),
    ] {
        let src = if key == "allowWrite" { format!("{{\n allowWrite: ['{path}'] }}") } else { format!("{{\n workspaceRoot: '{path}' }}") };
        let (at, value, reason, hint) = bad_path(&src);
        assert_eq!((at, value.as_str()), (at_file(2, key), path), "{src}");
        assert!(!reason.is_empty() && !hint.to_string().is_empty(), "{src}: {reason}");
    }
    assert!(bad_path("{ allowWrite: ['/run'] }").2.contains("allow a single socket below it"));
    assert!(bad_path("{ allowWrite: ['/proc/sys'] }").2.contains("kernel interface"));
    // Below the refused directories (not the trees) is allowed.
    for ok in ["/run/app/agent.sock", "/srv/data", "/home/dev/shared", "/opt/models"] {
        assert_eq!(parse_ok(&format!("{{ allowWrite: ['{ok}'] }}")).config.allow_write, [PathBuf::from(ok)], "{ok}");
    }
}

/// Places whose contents root or the system runs later are refused for
/// writing and as the workspace, whole trees, whoever owns them, also when
/// allowWriteRootOwned names them.
#[test]
fn places_that_root_runs_code_from_are_refused() {
    for path in [
        "/var/lib/dpkg/info",
        "/var/lib/systemd/system",
        "/var/lib/myapp",
        "/root/work",
        "/root/.bashrc",
        "/var/spool/cron/crontabs",
        "/srv/x/lost+found",
        "/lost+found",
    ] {
        for key in ["allowWrite", "allowWriteRootOwned", "workspaceRoot"] {
            let src = if key == "workspaceRoot" { format!("{{\n {key}: '{path}' }}") } else { format!("{{\n {key}: ['{path}'] }}") };
            let (at, value, reason, hint) = bad_path(&src);
            assert_eq!((at, value.as_str()), (at_file(2, key), path), "{src}");
            assert!(!reason.is_empty() && !hint.to_string().is_empty(), "{src}: {reason}");
        }
    }
    assert!(bad_path("{ allowWrite: ['/var/lib/dpkg/info'] }").2.contains("maintainer scripts"));
    assert!(bad_path("{ allowWrite: ['/root/work'] }").2.contains("root's home"));
    assert!(bad_path("{ allowWrite: ['/srv/lost+found'] }").2.contains("lost+found"));
}

/// A directory root owns needs the explicit key; a link is judged by
/// where it leads.
#[test]
fn root_owned_directories_need_the_explicit_key_and_links_are_followed() {
    let dir = tempfile::Builder::new().prefix("cfg-root-owned").tempdir_in("/var/tmp").unwrap();
    let owned = dir.path().join("cache");
    std::fs::create_dir(&owned).unwrap();
    let owned_s = owned.display().to_string();
    let root = nix::unistd::geteuid().is_root();
    if root {
        let (_, value, reason, hint) = bad_path(&format!("{{ allowWrite: ['{owned_s}'] }}"));
        assert_eq!(value, owned_s);
        assert!(reason.contains("root owns it") && hint.to_string().contains("allowWriteRootOwned"), "{reason} {hint}");
    }
    let c = parse_ok(&format!("{{ allowWriteRootOwned: ['{owned_s}'] }}")).config;
    assert_eq!((c.allow_write.clone(), c.allow_write_root_owned.clone()), (vec![], vec![owned.clone()]));
    assert_eq!(c.writable(), vec![owned.clone()]);
    // Owned by another user: allowWrite takes it.
    nix::unistd::chown(&owned, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap_or_else(|e| assert!(!root, "{e}"));
    assert_eq!(parse_ok(&format!("{{ allowWrite: ['{owned_s}'] }}")).config.allow_write, std::slice::from_ref(&owned));
    // A link into a system tree or root's state is refused as what it is.
    for target in ["/etc", "/var/lib/dpkg"] {
        let link = dir.path().join(format!("link{}", target.replace('/', "-")));
        std::os::unix::fs::symlink(target, &link).unwrap();
        let (_, _, reason, _) = bad_path(&format!("{{ allowWriteRootOwned: ['{}'] }}", link.display()));
        assert!(reason.contains("symbolic link"), "{target}: {reason}");
    }
}
