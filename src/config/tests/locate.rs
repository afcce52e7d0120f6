//! The tokenizer-aware key locator.

use crate::config::locate::{locate_key, outline, Item, TooDeep, MAX_DEPTH};

#[test]
fn finds_double_single_and_bare_keys() {
    let src = "{\n  \"egressJail\": true,\n  'gpu' : false,\n  peers\t:true,\n}";
    assert_eq!(locate_key(src, "egressJail"), Some(2));
    assert_eq!(locate_key(src, "gpu"), Some(3));
    assert_eq!(locate_key(src, "peers"), Some(4));
    assert_eq!(locate_key(src, "noForge"), None);
}

#[test]
fn keys_in_comments_do_not_match() {
    let src = "// gpu: true\n/* peers: true\n   egressJail: false */\n{\n  noForge: true, // gpu: false\n  /* peers: 1 */ gpu: true,\n}";
    assert_eq!(locate_key(src, "peers"), None);
    assert_eq!(locate_key(src, "egressJail"), None);
    assert_eq!(locate_key(src, "noForge"), Some(5));
    assert_eq!(locate_key(src, "gpu"), Some(6));
}

#[test]
fn keys_in_strings_and_nested_objects_do_not_match() {
    let src = "{\n  a: \"gpu: true // x\",\n  b: 'peers: 1 /* y */',\n  c: { noForge: true },\n  d: [ { egressJail: 1 } ],\n  peers: true,\n}";
    assert_eq!(locate_key(src, "gpu"), None);
    assert_eq!(locate_key(src, "noForge"), None);
    assert_eq!(locate_key(src, "egressJail"), None);
    assert_eq!(locate_key(src, "peers"), Some(6));
}

#[test]
fn a_value_equal_to_a_key_name_is_not_a_key() {
    let src = "{ a: 'gpu', b: gpu_not_a_key,\n gpu: true }";
    assert_eq!(locate_key(src, "gpu"), Some(2));
}

#[test]
fn escaped_quotes_and_escaped_names() {
    let src = "{\n  a: \"quote \\\" gpu: 1\",\n  \"egress\\u004aail\": false,\n  'no\\'te': 1,\n}";
    assert_eq!(locate_key(src, "gpu"), None);
    assert_eq!(locate_key(src, "egressJail"), Some(3));
    assert_eq!(locate_key(src, "no'te"), Some(4));
}

#[test]
fn lines_count_through_multi_line_comments_and_strings() {
    let src = "/*\n\n*/ {\n a: 'one\\\ntwo',\n gpu: true }";
    assert_eq!(locate_key(src, "gpu"), Some(6));
    let out = outline(src).unwrap();
    assert_eq!(out.first_line, 3);
}

#[test]
fn array_items_and_value_tokens_are_located() {
    let src = "{\n  localPorts: [\n    80,\n    // 81,\n    443, NaN,\n  ],\n  gpu: NaN,\n  callbackPorts: [],\n}";
    let out = outline(src).unwrap();
    let ports = out.member("localPorts").unwrap();
    let lines: Vec<usize> = ports.items.iter().map(|i| i.line).collect();
    assert_eq!(lines, [3, 5, 5]);
    assert_eq!(ports.items[2].text, "NaN");
    let gpu = out.member("gpu").unwrap();
    assert_eq!(
        gpu.value,
        Some(Item {
            line: 7,
            text: "NaN".into()
        })
    );
    assert!(out.member("callbackPorts").unwrap().items.is_empty());
}

#[test]
fn nested_array_items_count_once() {
    let src = "{ x: [ [1, 2], {a: [3]}, 4 ] }";
    let out = outline(src).unwrap();
    assert_eq!(out.member("x").unwrap().items.len(), 3);
}

#[test]
fn depth_is_bounded() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(outline(&ok).is_ok());
    let deep = format!("{{\n a: {}", "[".repeat(100_000));
    assert_eq!(
        outline(&deep),
        Err(TooDeep {
            line: 2,
            column: 4 + MAX_DEPTH
        })
    );
}

#[test]
fn broken_text_terminates_without_panic() {
    for src in [
        "{ a: 'unterminated",
        "/* open",
        "{ \"a\\",
        "'",
        "/",
        "{ a: \\u12",
        "{ '\\u",
        "}}]]",
        "",
    ] {
        let _ = outline(src);
    }
}

#[test]
fn json5_line_terminators_end_line_comments() {
    // U+2028 ends a // comment in JSON5, so `gpu` is a real key.
    let src = "{ // note\u{2028} gpu: true,\r\n peers: true }";
    assert_eq!(locate_key(src, "gpu"), Some(1));
    assert_eq!(locate_key(src, "peers"), Some(2));
}
