//! docs/config.md stays true: its example file parses, and the messages and
//! table it shows are the ones the code produces.

use super::*;

const DOC: &str = include_str!("../../../../../docs/config.md");

fn assert_documented(text: &str) {
    assert!(DOC.contains(text), "docs/config.md does not show:\n{text}");
}

fn file_error(src: &str) -> String {
    parse_err(src).to_string()
}

#[test]
fn the_example_file_is_valid() {
    let start = DOC.find("```json5\n").map(|i| i + "```json5\n".len());
    let block = start.and_then(|s| DOC[s..].find("```").map(|e| &DOC[s..s + e]));
    let Some(block) = block else { panic!("no json5 block") };
    let eff = parse_ok(block);
    assert!(eff.sources.values().all(|s| matches!(s, Source::File { .. })));
}

#[test]
fn every_key_and_variable_is_documented() {
    for key in Key::ALL {
        assert_documented(&format!("| `{}` |", key.name()));
        assert_documented(&format!("`{}`", key.env_var()));
    }
}

#[test]
fn the_file_errors_shown_are_real() {
    let cases = [
        "{\n gpu: true,\n allowIP: [] }",
        "{\n gpu: 'false' }",
        "{\n\n\n allowWrite: ['build/out'] }",
        "{\n\n\n\n allowIp: ['10.0.0.0/8'] }",
        "{\n\n passEnv: ['LD_PRELOAD'] }",
        "{\n\n allowDomains: ['https://github.com'] }",
        "{\n localPorts: [9000],\n callbackPorts: [\n 1,\n 9000] }",
        "{\n egressJail: true,\n gpu: true,\n egressJail: false }",
        "[]",
        "{\n  gpu: true\n  peers: false,\n}",
    ];
    for src in cases {
        assert_documented(&file_error(src));
    }
}

#[test]
fn the_other_errors_shown_are_real() {
    for pairs in [[("AGENT_SANDBOX_LOCAL_PORTS", "70000")], [("AGENT_SANDBOX_EGRESS_JAIL", "maybe")], [("AGENT_SANDBOX_ALLOW_DOMAINS", "*.com")]] {
        match with_env(None, &pairs) {
            Err(e) => assert_documented(&e.to_string()),
            Ok(_) => panic!("{pairs:?}"),
        }
    }
    for (uid, mode) in [(1000, 0o100644), (0, 0o100664)] {
        match check_file_trust(Path::new(FILE), uid, mode) {
            Err(e) => assert_documented(&e.to_string()),
            Ok(()) => panic!("{uid} {mode:o}"),
        }
    }
}

#[test]
fn the_show_table_shown_is_real() {
    let file = "{\n  gpu: true,\n  allowIp: ['10.0.0.1'],\n  localPorts: [8080],\n}";
    let env = [("AGENT_SANDBOX_ALLOW_IP", "10.0.0.2"), ("CLAUDE_SANDBOX_PEERS", "1")];
    match with_env(Some(file), &env) {
        Ok(eff) => assert_documented(&render_show(&eff)),
        Err(e) => panic!("{e}"),
    }
}
