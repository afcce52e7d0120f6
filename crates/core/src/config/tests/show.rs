//! Provenance and its renderings: `config show` (table, JSON) and `check`.

use serde_json::json;

use super::*;

fn mixed() -> Effective {
    let file = "{\n  gpu: true,\n  allowIp: ['10.0.0.1'],\n  localPorts: [8080],\n}";
    let env = [("AGENT_SANDBOX_ALLOW_IP", "10.0.0.2"), ("CLAUDE_SANDBOX_PEERS", "1")];
    match with_env(Some(file), &env) {
        Ok(eff) => eff,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn every_key_has_a_source_of_each_kind() {
    let eff = mixed();
    assert_eq!(eff.sources.len(), Key::ALL.len());
    assert_eq!(eff.sources["egressJail"], Source::Default);
    assert_eq!(eff.sources["gpu"], file_source(2));
    assert_eq!(eff.sources["localPorts"], file_source(4));
    assert_eq!(eff.sources["peers"], Source::Env { var: "CLAUDE_SANDBOX_PEERS".into() });
    assert_eq!(eff.sources["allowIp"], Source::FileAndEnv { path: FILE.into(), line: 3, var: "AGENT_SANDBOX_ALLOW_IP".into() });
}

#[test]
fn source_display() {
    assert_eq!(Source::Default.to_string(), "default");
    assert_eq!(file_source(3).to_string(), "/etc/agent-sandbox/config.json5:3");
    assert_eq!(Source::Env { var: "AGENT_SANDBOX_GPU".into() }.to_string(), "env AGENT_SANDBOX_GPU");
    let both = Source::FileAndEnv { path: FILE.into(), line: 3, var: "AGENT_SANDBOX_ALLOW_IP".into() };
    assert_eq!(both.to_string(), "/etc/agent-sandbox/config.json5:3 + env AGENT_SANDBOX_ALLOW_IP");
}

#[test]
fn show_table() {
    let want = "\
config file: /etc/agent-sandbox/config.json5 is valid
KEY                  VALUE                           SOURCE
egressJail           true                            default
allowIp              10.0.0.1, 10.0.0.2              /etc/agent-sandbox/config.json5:3 + env AGENT_SANDBOX_ALLOW_IP
allowDomains         (none)                          default
localPorts           8080                            /etc/agent-sandbox/config.json5:4
callbackPorts        (none)                          default
noForge              false                           default
peers                true                            env CLAUDE_SANDBOX_PEERS
allowWrite           (none)                          default
allowWriteRootOwned  (none)                          default
allowDevice          (none)                          default
gpu                  true                            /etc/agent-sandbox/config.json5:2
passEnv              (none)                          default
workspaceRoot        (unset: the current directory)  default
protectDevcontainer  true                            default
protectGitHooks      true                            default
protectGitConfig     true                            default
shareToolDirs        false                           default
";
    assert_eq!(render_show(&mixed()), want);
}

#[test]
fn show_json_shape() {
    let v = show_json(&mixed());
    assert_eq!(v["egressJail"], json!({"value": true, "source": "default"}));
    assert_eq!(v["allowIp"], json!({"value": ["10.0.0.1", "10.0.0.2"], "source": "/etc/agent-sandbox/config.json5:3 + env AGENT_SANDBOX_ALLOW_IP"}));
    assert_eq!(v["localPorts"]["value"], json!([8080]));
    assert_eq!(v["workspaceRoot"]["value"], json!(null));
    assert_eq!(v.as_object().map(|o| o.len()), Some(Key::ALL.len()));
}

#[test]
fn check_line() {
    assert_eq!(
        render_check(&mixed()),
        "OK: config /etc/agent-sandbox/config.json5 is valid; environment overrides: AGENT_SANDBOX_ALLOW_IP, CLAUDE_SANDBOX_PEERS"
    );
    let eff = with_env(None, &[]).unwrap();
    assert_eq!(render_check(&eff), "OK: config /etc/agent-sandbox/config.json5 not found, defaults apply");
}
