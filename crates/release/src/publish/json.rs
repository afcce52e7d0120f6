//! JSON for metadata files, in the source file's key order.
//!
//! The Dev Containers CLI puts `JSON.stringify(metadata)` into the
//! `dev.containers.metadata` annotation and pretty-prints
//! `devcontainer-collection.json` with 4 spaces, both in the source file's
//! key order. Values are serde_json's with `preserve_order` (objects keep
//! insertion order; a repeated key keeps its first position and last
//! value, as `JSON.parse` does), read from the crate's JSONC parser's AST
//! ([`crate::jsonc`], which accepts JSON5's extensions too). Numbers are
//! stored as JavaScript writes them: an integral one without a fraction.

use crate::jsonc::{self, ast};
use serde::Serialize;

pub(super) type Json = serde_json::Value;

/// Parses JSON (with comments and trailing commas); the error says where,
/// as `line:column` when the parser knows it.
pub(super) fn parse(text: &str) -> Result<Json, String> {
    match jsonc::parse(text) {
        Ok(Some(v)) => Ok(from_ast(&v)),
        Ok(None) => Err("there is no value, only blanks and comments".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The AST is at most the parser's nesting limit deep, so the recursion is
/// bounded.
fn from_ast(v: &ast::Value) -> Json {
    match v {
        ast::Value::NullKeyword(_) => Json::Null,
        ast::Value::BooleanLit(b) => Json::Bool(b.value),
        ast::Value::StringLit(s) => Json::String(s.value.to_string()),
        ast::Value::NumberLit(n) => jsonc::number(n.value).and_then(|n| n.as_f64()).map_or(Json::Null, number),
        ast::Value::Array(a) => Json::Array(a.elements.iter().map(from_ast).collect()),
        ast::Value::Object(o) => Json::Object(o.properties.iter().map(|p| (p.name.as_str().to_owned(), from_ast(&p.value))).collect()),
    }
}

/// A number as JavaScript prints it: integral doubles without a fraction;
/// what JSON cannot hold is null, as `JSON.stringify` writes it.
fn number(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        Json::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

/// Sets `key` (in place when present, else appended), as assigning a
/// property does in JavaScript. No effect on non-objects.
pub(super) fn set(v: &mut Json, key: &str, value: Json) {
    if let Some(o) = v.as_object_mut() {
        o.insert(key.to_owned(), value);
    }
}

/// `JSON.stringify(value)`.
pub(super) fn compact(v: &Json) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `JSON.stringify(value, null, 4)`.
pub(super) fn pretty(v: &Json) -> String {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    match v.serialize(&mut serde_json::Serializer::with_formatter(&mut out, fmt)) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_key_order_and_writes_like_json_stringify() {
        let j = parse("{\n // c\n \"z\": 1.0, \"a\": [true, null, \"\\u00e9\\/\"], \"m\": {}, \"z\": 2,\n}").unwrap();
        assert_eq!(compact(&j), r#"{"z":2,"a":[true,null,"é/"],"m":{}}"#);
        assert_eq!(pretty(&j), "{\n    \"z\": 2,\n    \"a\": [\n        true,\n        null,\n        \"é/\"\n    ],\n    \"m\": {}\n}");
    }

    #[test]
    fn escapes_match_javascript() {
        let j = Json::String("tab\t \"q\" \\ \u{1}".into());
        assert_eq!(compact(&j), r#""tab\t \"q\" \\ \u0001""#);
        assert_eq!(compact(&number(0.5)), "0.5");
    }

    #[test]
    fn set_replaces_in_place_or_appends() {
        let mut j = parse(r#"{"a": 1, "b": 2}"#).unwrap();
        set(&mut j, "a", "x".into());
        set(&mut j, "c", Json::Bool(false));
        assert_eq!(compact(&j), r#"{"a":"x","b":2,"c":false}"#);
    }

    #[test]
    fn errors_name_the_position() {
        let e = parse("{\n  \"a\": ,\n}").unwrap_err();
        assert!(e.starts_with("line 2, column 8: "), "{e}");
        let e = parse(&"[".repeat(100_000)).unwrap_err();
        assert!(e.contains("nested deeper than"), "{e}");
    }
}
