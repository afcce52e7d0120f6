//! Parsing and validating file text: the valid forms, and each invalid form
//! with its error, line and key.

use std::net::Ipv4Addr;

use super::*;

const FULL: &str = r#"// agent-sandbox policy
{
  /* network */
  egressJail: true,
  allowIp: ["203.0.113.7", '198.51.100.1', "203.0.113.7",],
  localPorts: [5432, 6379,],
  "callbackPorts": [1455],
  noForge: true,
  peers: false,
  allowWrite: ["/opt/cache", "/srv/data/",],
  allowDevice: ["/dev/ttyUSB0"],
  gpu: true,
  passEnv: ["AWS_REGION", "CI",],
  workspaceRoot: "/workspaces/app", // trailing comma next
  protectGitConfig: false,
  shareToolDirs: false,
  allowDomains: ["PyPI.org.", "*.github.com", "@agents", "pypi.org"],
}
"#;

#[test]
fn full_valid_file_with_comments_and_trailing_commas() {
    let eff = parse_ok(FULL);
    let expected = Config {
        egress_jail: true,
        allow_ip: vec![Ipv4Addr::new(203, 0, 113, 7), Ipv4Addr::new(198, 51, 100, 1)],
        allow_domains: vec!["pypi.org".into(), "*.github.com".into(), "@agents".into()],
        local_ports: vec![5432, 6379],
        callback_ports: vec![1455],
        no_forge: true,
        peers: false,
        allow_write: vec![PathBuf::from("/opt/cache"), PathBuf::from("/srv/data")],
        allow_write_root_owned: vec![],
        allow_device: vec![PathBuf::from("/dev/ttyUSB0")],
        gpu: true,
        pass_env: vec!["AWS_REGION".into(), "CI".into()],
        workspace_root: Some(PathBuf::from("/workspaces/app")),
        protect_devcontainer: true,
        protect_git_hooks: true,
        protect_git_config: false,
        share_tool_dirs: false,
    };
    assert_eq!(eff.config, expected);
    assert!(eff.file_present);
    assert_eq!(eff.sources["egressJail"], file_source(4));
    assert_eq!(eff.sources["callbackPorts"], file_source(7));
    assert_eq!(eff.sources["workspaceRoot"], file_source(14));
}

#[test]
fn empty_object_gives_defaults_from_the_file() {
    let eff = parse_ok("// nothing set\n{}\n");
    assert_eq!(eff.config, Config::default());
    assert!(eff.sources.values().all(|s| *s == Source::Default));
    assert!(eff.file_present);
}

#[test]
fn duplicates_in_lists_are_dropped_keeping_order() {
    let eff = parse_ok("{ localPorts: [9, 8, 9, 8, 7], passEnv: ['B', 'A', 'B'] }");
    assert_eq!(eff.config.local_ports, [9, 8, 7]);
    assert_eq!(eff.config.pass_env, ["B", "A"]);
}

#[test]
fn hex_and_plus_sign_ports_are_integers() {
    assert_eq!(parse_ok("{ localPorts: [0x50, +443] }").config.local_ports, [80, 443]);
}

#[test]
fn documented_example_message() {
    let src = "{\n\n\n\n\n  localPorts: [\n    70000,\n  ],\n}";
    let e = parse_err(src);
    assert_eq!(e.to_string(), "/etc/agent-sandbox/config.json5:7: key \"localPorts\": 70000 is not a valid port (1-65535)");
}

#[test]
fn unknown_key_near_miss_suggests_and_lists_valid_keys() {
    let e = parse_err("{\n  gpu: true,\n  allowIP: [],\n}");
    let ConfigError::UnknownKey { line, key, suggestion, .. } = &e else { panic!("{e:?}") };
    assert_eq!((*line, key.as_str(), *suggestion), (3, "allowIP", Some("allowIp")));
    let msg = e.to_string();
    assert!(
        msg.starts_with("/etc/agent-sandbox/config.json5:3: unknown key \"allowIP\" (did you mean \"allowIp\"?); valid keys: egressJail, allowIp,"),
        "{msg}"
    );
    assert!(msg.ends_with("passEnv, workspaceRoot, protectDevcontainer, protectGitHooks, protectGitConfig, shareToolDirs"), "{msg}");
}

#[test]
fn unknown_key_without_a_near_miss() {
    let e = parse_err("{ colour: 'red' }");
    assert!(matches!(&e, ConfigError::UnknownKey { suggestion: None, line: 1, .. }), "{e:?}");
    assert!(!e.to_string().contains("did you mean"));
}

#[test]
fn first_error_in_source_order_is_reported() {
    // Sorted by name, "allowWrite" would come before "zzz".
    let e = parse_err("{\n zzz: 1,\n allowWrite: ['rel'],\n}");
    assert!(matches!(e, ConfigError::UnknownKey { line: 2, .. }), "{e:?}");
}

#[test]
fn duplicate_key_is_an_error() {
    let e = parse_err("{\n egressJail: true,\n gpu: true,\n 'egressJail': false,\n}");
    assert_eq!(e, ConfigError::DuplicateKey { file: PathBuf::from(FILE), line: 4, key: "egressJail".into(), first_line: 2 });
    // Also when spelled with an escape.
    let e = parse_err("{\n egressJail: true,\n \"egress\\u004aail\": false,\n}");
    assert!(matches!(e, ConfigError::DuplicateKey { line: 3, first_line: 2, .. }), "{e:?}");
}

fn wrong_type(src: &str) -> (At, &'static str, String, Hint) {
    match parse_err(src) {
        ConfigError::WrongType { at, expected, found, hint } => (at, expected, found, hint),
        e => panic!("{src}: {e:?}"),
    }
}

#[test]
fn wrong_type_for_a_boolean() {
    let (at, expected, found, hint) = wrong_type("{\n gpu: 'false' }");
    assert_eq!(at, at_file(2, "gpu"));
    assert_eq!(expected, "a boolean (true or false)");
    assert_eq!(found, "string \"false\"");
    assert_eq!(hint, Hint::new("write false without quotes"));
    assert_eq!(wrong_type("{ peers: 1 }").2, "number 1");
    assert_eq!(wrong_type("{ noForge: null }").2, "null");
    assert_eq!(wrong_type("{ egressJail: [true] }").2, "an array");
    assert_eq!(wrong_type("{ egressJail: NaN }").2, "number NaN");
}

#[test]
fn wrong_type_for_each_list() {
    let (at, expected, found, hint) = wrong_type("{\n\n allowIp: '10.1.2.3' }");
    assert_eq!(at, at_file(3, "allowIp"));
    assert_eq!(expected, "an array of IPv4 address strings");
    assert_eq!(found, "string \"10.1.2.3\"");
    assert_eq!(hint, Hint::new("write a list: [\"10.1.2.3\"]"));
    let (_, expected, _, hint) = wrong_type("{ localPorts: 80 }");
    assert_eq!((expected, hint), ("an array of port numbers", Hint::new("write a list: [80]")));
    assert_eq!(wrong_type("{ callbackPorts: {} }").2, "an object");
    assert_eq!(wrong_type("{ allowWrite: '/x' }").1, "an array of absolute path strings");
    assert_eq!(wrong_type("{ allowDevice: true }").1, "an array of /dev/... path strings");
    assert_eq!(wrong_type("{ passEnv: 'FOO' }").1, "an array of environment variable names");
}

#[test]
fn wrong_type_for_list_items_points_at_the_item() {
    let (at, expected, found, _) = wrong_type("{\n allowIp: [\n  '10.0.0.1',\n  1234,\n ] }");
    assert_eq!(at, at_file(4, "allowIp"));
    assert_eq!((expected, found.as_str()), ("an IPv4 address string", "number 1234"));
    assert_eq!(wrong_type("{ allowWrite: [null] }").1, "an absolute path string");
    assert_eq!(wrong_type("{ allowDevice: [[]] }").2, "an array");
    assert_eq!(wrong_type("{ passEnv: [true] }").2, "boolean true");
}

#[test]
fn wrong_type_for_the_workspace_root() {
    let (at, expected, found, _) = wrong_type("{\n workspaceRoot: false }");
    assert_eq!(at, at_file(2, "workspaceRoot"));
    assert_eq!((expected, found.as_str()), ("an absolute path string", "boolean false"));
    assert_eq!(wrong_type("{ workspaceRoot: ['/w'] }").2, "an array");
}

fn syntax(src: &str) -> (usize, usize, String) {
    match parse_err(src) {
        ConfigError::Syntax { line, column, message, .. } => (line, column, message),
        e => panic!("{src}: {e:?}"),
    }
}

#[test]
fn syntax_error_names_line_and_column() {
    let e = parse_err("{\n  gpu: true\n  peers: false,\n}");
    assert_eq!(e.to_string(), "/etc/agent-sandbox/config.json5:3:3: JSON5 syntax error: expected ',' before peers: is a comma missing?");
}

#[test]
fn structural_mistakes_are_explained() {
    let cases = [
        ("{ a: [1 2] }", (1, 9), "expected ',' before 2: is a comma missing?"),
        ("{\n a 1 }", (2, 4), "expected ':' after the key, found 1"),
        ("{ a: 1,, }", (1, 8), "expected a key or '}', found ','"),
        ("{\n a: [1, 2\n}", (3, 1), "unexpected '}': a value is missing, or a '[' before it is not closed"),
        ("{ a: 1 }}", (1, 9), "unexpected text after the end of the document"),
        ("{\n a: 1,\n", (1, 1), "this '{' is never closed (the text ends first)"),
        ("{ a: 'x }\n", (1, 6), "this string is never closed"),
        ("{ a: 1 } /* x", (1, 10), "this comment is never closed"),
        ("// only a comment\n", (2, 1), "the file is empty; write {} to use the defaults"),
        ("", (1, 1), "the file is empty; write {} to use the defaults"),
        ("{ a: : 1 }", (1, 6), "unexpected ':': expected a value"),
    ];
    for (src, (line, column), message) in cases {
        assert_eq!(syntax(src), (line, column, message.to_string()), "{src:?}");
    }
}

#[test]
fn literal_mistakes_name_the_literal() {
    let (line, column, message) = syntax("{\n a: tru }");
    assert_eq!((line, column), (2, 5));
    assert_eq!(message, "tru is not a value (strings need quotes; the literals are true, false and null)");
    // Past any integer: read as a float, and so not a port.
    let e = parse_err("{\n localPorts: [\n  99999999999999999999999] }");
    assert_eq!(e.to_string(), "/etc/agent-sandbox/config.json5:3: key \"localPorts\": 1e+23 is not a valid port (1-65535)");
}

#[test]
fn what_only_jsonc_accepts_is_refused() {
    // A number as a key is JSONC's extension, not JSON5.
    let (line, _, message) = syntax("{\n gpu: true,\n 1: true }");
    assert_eq!((line, message.as_str()), (3, "expected identifier"));
    // JSON5 ends a line comment at U+2028; a JSONC reader would not.
    let (line, _, message) = syntax("{ // note\u{2028} gpu: true,\n}");
    assert_eq!(line, 1);
    assert!(message.contains("JSON5 and JSONC readers see different values"), "{message}");
}

#[test]
fn absurd_nesting_is_a_syntax_error_not_a_crash() {
    let src = format!("{{ a: {} }}", "[".repeat(1_000_000));
    let e = parse_err(&src);
    assert!(matches!(&e, ConfigError::Syntax { line: 1, .. }), "{e:?}");
    assert!(e.to_string().contains("nested deeper than"));
    let e = parse_err(&format!("{{ a: {} }}", "{b:".repeat(100_000)));
    assert!(e.to_string().contains("nested deeper than"), "{e}");
    // Below the parser's limit, the config's own bound (16 levels) holds.
    let src = format!("{{\n a: {}{} }}", "[".repeat(16), "]".repeat(16));
    assert_eq!(syntax(&src), (2, 20, "nested deeper than 16 levels".to_string()));
}

#[test]
fn top_level_must_be_an_object() {
    for (src, found) in [("[1, 2]", "an array"), ("// c\n\n'x'", "string \"x\""), ("42", "number 42"), ("null", "null")] {
        let e = parse_err(src);
        let line = if src.starts_with("//") { 3 } else { 1 };
        assert_eq!(e, ConfigError::NotAnObject { file: PathBuf::from(FILE), line, found: found.into() });
    }
    assert!(parse_err("[]").to_string().contains("the top level must be an object { ... }, found an array"));
}

#[test]
fn no_panic_on_mangled_input() {
    let text = FULL.replace("egressJail", "egress\\u004aail");
    // Every prefix of a valid document (char boundaries only: input is str).
    for (i, _) in text.char_indices() {
        let _ = parse(&text[..i]);
    }
    // Pseudo-random bytes from a fixed seed, drawn from JSON5's alphabet.
    let alphabet: Vec<char> = "{}[]:,'\"\\/*\n 0123456789.-+eExXuNaIfinty_gpu\u{2028}é".chars().collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..3000 {
        let len = (state % 40) as usize;
        let mut s = String::new();
        for _ in 0..len {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s.push(alphabet[(state >> 33) as usize % alphabet.len()]);
        }
        let _ = parse(&s);
        let _ = parse(&format!("{{ localPorts: [{s}] }}"));
    }
}

/// A bad allowDomains entry is an error at its own line, naming the key,
/// the value and the mistake.
#[test]
fn a_bad_domain_names_its_line_and_the_mistake() {
    let e = parse_err("{\n allowDomains: [\n  'pypi.org',\n  'https://github.com/org',\n ] }");
    match &e {
        ConfigError::BadDomain { at, value, reason } => {
            assert_eq!(*at, at_file(4, "allowDomains"));
            assert_eq!(value, "https://github.com/org");
            assert!(reason.contains("URL"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().starts_with("/etc/agent-sandbox/config.json5:4: key \"allowDomains\": \"https://github.com/org\" is not accepted: a URL"), "{e}");
    assert!(matches!(parse_err("{ allowDomains: '*.github.com' }"), ConfigError::WrongType { .. }));
    assert!(matches!(parse_err("{ allowDomains: [42] }"), ConfigError::WrongType { .. }));
}
