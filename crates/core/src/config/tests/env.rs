//! Environment overrides: each kind, aliases and precedence, list extension.

use std::net::Ipv4Addr;
use std::os::unix::ffi::OsStringExt;

use super::*;

fn env_ok(src: Option<&str>, pairs: &[(&str, &str)]) -> Effective {
    match with_env(src, pairs) {
        Ok(eff) => eff,
        Err(e) => panic!("{pairs:?}: {e}"),
    }
}

fn env_err(src: Option<&str>, pairs: &[(&str, &str)]) -> ConfigError {
    match with_env(src, pairs) {
        Ok(eff) => panic!("{pairs:?}: expected an error, got {:?}", eff.config),
        Err(e) => e,
    }
}

#[test]
fn booleans_accept_the_usual_spellings() {
    for (text, want) in
        [("1", true), ("true", true), ("YES", true), ("On", true), (" yes ", true), ("0", false), ("False", false), ("no", false), ("OFF", false)]
    {
        let eff = env_ok(None, &[("AGENT_SANDBOX_EGRESS_JAIL", text)]);
        assert_eq!(eff.config.egress_jail, want, "{text}");
    }
    let eff = env_ok(None, &[("AGENT_SANDBOX_NO_FORGE", "1"), ("AGENT_SANDBOX_PEERS", "yes"), ("AGENT_SANDBOX_GPU", "on")]);
    assert!(eff.config.no_forge && eff.config.peers && eff.config.gpu);
}

#[test]
fn a_bad_boolean_names_the_variable_and_value() {
    for text in ["2", "", "enable", "y"] {
        let e = env_err(None, &[("AGENT_SANDBOX_EGRESS_JAIL", text)]);
        let at = at_env("AGENT_SANDBOX_EGRESS_JAIL", "egressJail");
        assert_eq!(e, ConfigError::BadBool { at, value: text.into() });
    }
    let e = env_err(None, &[("AGENT_SANDBOX_GPU", "maybe")]);
    assert_eq!(e.to_string(), "AGENT_SANDBOX_GPU (key \"gpu\"): \"maybe\" is not a boolean; use 1/0, true/false, yes/no or on/off");
}

#[test]
fn a_scalar_overrides_the_file() {
    let file = "{\n egressJail: true,\n workspaceRoot: '/a',\n}";
    let eff = env_ok(Some(file), &[("AGENT_SANDBOX_EGRESS_JAIL", "0"), ("AGENT_SANDBOX_WORKSPACE_ROOT", " /b ")]);
    assert!(!eff.config.egress_jail);
    assert_eq!(eff.config.workspace_root, Some(PathBuf::from("/b")));
    let var = |v: &str| Source::Env { var: v.into() };
    assert_eq!(eff.sources["egressJail"], var("AGENT_SANDBOX_EGRESS_JAIL"));
    assert_eq!(eff.sources["workspaceRoot"], var("AGENT_SANDBOX_WORKSPACE_ROOT"));
}

#[test]
fn the_claude_alias_is_accepted() {
    let eff = env_ok(None, &[("CLAUDE_SANDBOX_EGRESS_JAIL", "0")]);
    assert!(!eff.config.egress_jail);
    assert_eq!(eff.sources["egressJail"], Source::Env { var: "CLAUDE_SANDBOX_EGRESS_JAIL".into() });
    let eff = env_ok(None, &[("CLAUDE_SANDBOX_ALLOW_IP", "10.1.1.1")]);
    assert_eq!(eff.config.allow_ip, [Ipv4Addr::new(10, 1, 1, 1)]);
}

#[test]
fn the_agent_name_wins_over_the_alias() {
    let pairs = [("AGENT_SANDBOX_EGRESS_JAIL", "1"), ("CLAUDE_SANDBOX_EGRESS_JAIL", "0")];
    let eff = env_ok(None, &pairs);
    assert!(eff.config.egress_jail);
    assert_eq!(eff.sources["egressJail"], Source::Env { var: "AGENT_SANDBOX_EGRESS_JAIL".into() });
    // The losing alias is not even parsed.
    let pairs = [("AGENT_SANDBOX_GPU", "1"), ("CLAUDE_SANDBOX_GPU", "bogus")];
    assert!(env_ok(None, &pairs).config.gpu);
    // For lists too: the alias adds nothing when the AGENT_ name is set.
    let pairs = [("AGENT_SANDBOX_LOCAL_PORTS", "80"), ("CLAUDE_SANDBOX_LOCAL_PORTS", "81")];
    assert_eq!(env_ok(None, &pairs).config.local_ports, [80]);
}

#[test]
fn lists_add_to_the_file() {
    let file = "{\n allowIp: ['10.0.0.1'],\n localPorts: [80],\n allowWrite: ['/a'],\n passEnv: ['CI'],\n}";
    let eff = env_ok(
        Some(file),
        &[
            ("AGENT_SANDBOX_ALLOW_IP", "10.0.0.2, 10.0.0.1 10.0.0.3"),
            ("AGENT_SANDBOX_LOCAL_PORTS", "443,80\t8080"),
            ("AGENT_SANDBOX_ALLOW_WRITE", "/b:/a,/c"),
            ("AGENT_SANDBOX_PASS_ENV", "AWS_REGION TZ"),
            ("AGENT_SANDBOX_ALLOW_DEVICE", "/dev/kvm:/dev/ttyUSB0"),
            ("AGENT_SANDBOX_CALLBACK_PORTS", "1455"),
        ],
    );
    let c = &eff.config;
    let ips: Vec<String> = c.allow_ip.iter().map(|ip| ip.to_string()).collect();
    assert_eq!(ips, ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    assert_eq!(c.local_ports, [80, 443, 8080]);
    assert_eq!(c.callback_ports, [1455]);
    let paths = |v: &[PathBuf]| v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
    assert_eq!(paths(&c.allow_write), ["/a", "/b", "/c"]);
    assert_eq!(paths(&c.allow_device), ["/dev/kvm", "/dev/ttyUSB0"]);
    assert_eq!(c.pass_env, ["CI", "AWS_REGION", "TZ"]);
    let both = |line: usize, var: &str| Source::FileAndEnv { path: FILE.into(), line, var: var.into() };
    assert_eq!(eff.sources["allowIp"], both(2, "AGENT_SANDBOX_ALLOW_IP"));
    assert_eq!(eff.sources["passEnv"], both(5, "AGENT_SANDBOX_PASS_ENV"));
    assert_eq!(eff.sources["callbackPorts"], Source::Env { var: "AGENT_SANDBOX_CALLBACK_PORTS".into() });
}

#[test]
fn an_empty_list_variable_adds_nothing() {
    let eff = env_ok(Some("{\n allowIp: ['10.0.0.1'] }"), &[("AGENT_SANDBOX_ALLOW_IP", " , ")]);
    assert_eq!(eff.config.allow_ip.len(), 1);
    assert_eq!(eff.sources["allowIp"], file_source(2));
    assert_eq!(env_ok(None, &[("AGENT_SANDBOX_PASS_ENV", "")]).sources["passEnv"], Source::Default);
}

#[test]
fn list_items_are_validated_and_name_the_variable() {
    let e = env_err(None, &[("AGENT_SANDBOX_LOCAL_PORTS", "80 70000")]);
    assert_eq!(e.to_string(), "AGENT_SANDBOX_LOCAL_PORTS (key \"localPorts\"): 70000 is not a valid port (1-65535)");
    for bad in ["0", "-1", "1.5", "http", "0x50"] {
        let e = env_err(None, &[("CLAUDE_SANDBOX_CALLBACK_PORTS", bad)]);
        let at = at_env("CLAUDE_SANDBOX_CALLBACK_PORTS", "callbackPorts");
        assert_eq!(e, ConfigError::BadPort { at, value: bad.into() });
    }
    let e = env_err(None, &[("AGENT_SANDBOX_ALLOW_IP", "10.0.0.0/8")]);
    assert!(matches!(e, ConfigError::BadAddress { ref at, .. } if *at == at_env("AGENT_SANDBOX_ALLOW_IP", "allowIp")));
    let e = env_err(None, &[("AGENT_SANDBOX_ALLOW_WRITE", "/ok:rel")]);
    assert!(matches!(e, ConfigError::BadPath { reason: "the path is relative", .. }), "{e:?}");
    let e = env_err(None, &[("AGENT_SANDBOX_ALLOW_DEVICE", "/etc/shadow")]);
    assert!(matches!(e, ConfigError::BadPath { reason: "not a device under /dev/", .. }), "{e:?}");
    let e = env_err(None, &[("AGENT_SANDBOX_PASS_ENV", "CI,LD_PRELOAD")]);
    let at = at_env("AGENT_SANDBOX_PASS_ENV", "passEnv");
    assert_eq!(e, ConfigError::NeverPassed { at, name: "LD_PRELOAD".into() });
    let e = env_err(None, &[("AGENT_SANDBOX_PASS_ENV", "FOO-BAR")]);
    assert!(matches!(e, ConfigError::BadEnvName { .. }), "{e:?}");
}

#[test]
fn workspace_root_from_the_environment_is_validated() {
    for (bad, reason) in [("", "the path is empty"), ("ws", "the path is relative"), ("/a/../b", "the path contains a .. component")] {
        let e = env_err(None, &[("AGENT_SANDBOX_WORKSPACE_ROOT", bad)]);
        assert!(matches!(e, ConfigError::BadPath { reason: r, .. } if r == reason), "{bad}: {e:?}");
    }
}

#[test]
fn a_port_conflict_through_the_environment_blames_the_variable() {
    let e = env_err(Some("{ localPorts: [1455] }"), &[("AGENT_SANDBOX_CALLBACK_PORTS", "1455")]);
    let at = at_env("AGENT_SANDBOX_CALLBACK_PORTS", "callbackPorts");
    assert_eq!(e, ConfigError::PortConflict { at, port: 1455 });
    let e = env_err(Some("{ callbackPorts: [1455] }"), &[("CLAUDE_SANDBOX_LOCAL_PORTS", "1455")]);
    let at = at_env("CLAUDE_SANDBOX_LOCAL_PORTS", "localPorts");
    assert_eq!(e, ConfigError::PortConflict { at, port: 1455 });
}

#[test]
fn non_utf8_values_are_errors() {
    let mut env = EnvMap::new();
    env.insert("AGENT_SANDBOX_ALLOW_WRITE".into(), OsString::from_vec(b"/a\xff".to_vec()));
    let e = from_source(Path::new(FILE), None, &env).unwrap_err();
    assert_eq!(e, ConfigError::NotUtf8 { var: "AGENT_SANDBOX_ALLOW_WRITE".into() });
}

#[test]
fn unknown_variables_are_ignored() {
    let mut env = env_of(&[("AGENT_SANDBOX_CONFIG", "/x"), ("AGENT_SANDBOX_EGRES_JAIL", "0"), ("CLAUDE_SANDBOX_WHATEVER", "?"), ("agent_sandbox_gpu", "1")]);
    env.insert(OsString::from_vec(b"AGENT_SANDBOX_\xff".to_vec()), "1".into());
    let eff = from_source(Path::new(FILE), None, &env).unwrap();
    assert_eq!(eff.config, Config::default());
}

/// AGENT_SANDBOX_ALLOW_DOMAINS adds to the file's list (commas or
/// spaces); the alias works; a bad entry names the variable.
#[test]
fn allow_domains_from_the_environment() {
    let eff = env_ok(Some("{\n allowDomains: ['pypi.org'] }"), &[("AGENT_SANDBOX_ALLOW_DOMAINS", "*.github.com, @registries PyPI.org")]);
    assert_eq!(eff.config.allow_domains, ["pypi.org", "*.github.com", "@registries"]);
    assert_eq!(eff.sources["allowDomains"], Source::FileAndEnv { path: FILE.into(), line: 2, var: "AGENT_SANDBOX_ALLOW_DOMAINS".into() });
    let eff = env_ok(None, &[("CLAUDE_SANDBOX_ALLOW_DOMAINS", "api.anthropic.com")]);
    assert_eq!(eff.config.allow_domains, ["api.anthropic.com"]);
    let e = env_err(None, &[("AGENT_SANDBOX_ALLOW_DOMAINS", "github.com,10.1.2.3")]);
    assert_eq!(
        e.to_string(),
        "AGENT_SANDBOX_ALLOW_DOMAINS (key \"allowDomains\"): \"10.1.2.3\" is not accepted: an address is not a name; list it under allowIp"
    );
    assert!(matches!(env_err(None, &[("AGENT_SANDBOX_ALLOW_DOMAINS", "*.com")]), ConfigError::BadDomain { .. }));
}
