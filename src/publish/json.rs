//! An order-preserving JSON value for metadata files.
//!
//! The Dev Containers CLI puts `JSON.stringify(metadata)` into the
//! `dev.containers.metadata` annotation and pretty-prints
//! `devcontainer-collection.json` with 4 spaces, both in the source file's
//! key order. This type is read from the crate's JSONC parser's AST
//! ([`crate::jsonc`], which accepts JSON5's extensions too), keeps key
//! order (a repeated key keeps its first position and last value, as
//! `JSON.parse` does) and writes those two forms byte for byte through
//! serde_json: integral numbers are written without a fraction, as
//! JavaScript does.

use crate::jsonc::{self, ast};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parses JSON (with comments and trailing commas); the error says
    /// where, as `line:column` when the parser knows it.
    pub fn parse(text: &str) -> Result<Json, String> {
        match jsonc::parse(text) {
            Ok(Some(v)) => Ok(Json::from_ast(&v)),
            Ok(None) => Err("there is no value, only blanks and comments".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The AST is at most the parser's nesting limit deep, so the
    /// recursion is bounded.
    fn from_ast(v: &ast::Value) -> Json {
        match v {
            ast::Value::NullKeyword(_) => Json::Null,
            ast::Value::BooleanLit(b) => Json::Bool(b.value),
            ast::Value::StringLit(s) => Json::String(s.value.to_string()),
            ast::Value::NumberLit(n) => jsonc::number(n.value).and_then(|n| n.as_f64()).map_or(Json::Null, Json::Number),
            ast::Value::Array(a) => Json::Array(a.elements.iter().map(Json::from_ast).collect()),
            ast::Value::Object(o) => {
                let mut obj = Json::Object(Vec::new());
                for p in &o.properties {
                    obj.set(p.name.as_str(), Json::from_ast(&p.value));
                }
                obj
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(e) => Some(e),
            _ => None,
        }
    }

    /// Sets `key` (in place when present, else appended), as assigning a
    /// property does in JavaScript. No effect on non-objects.
    pub fn set(&mut self, key: &str, value: Json) {
        if let Json::Object(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value,
                None => entries.push((key.to_owned(), value)),
            }
        }
    }

    /// `JSON.stringify(value)`.
    pub fn compact(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// `JSON.stringify(value, null, 4)`.
    pub fn pretty(&self) -> String {
        let mut out = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
        match self.serialize(&mut ser) {
            Ok(()) => String::from_utf8(out).unwrap_or_default(),
            Err(_) => String::new(),
        }
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::String(s.to_owned())
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => {
                // JavaScript prints integral doubles without a fraction.
                if n.fract() == 0.0 && n.abs() < 1e15 {
                    s.serialize_i64(*n as i64)
                } else if n.is_finite() {
                    s.serialize_f64(*n)
                } else {
                    s.serialize_unit()
                }
            }
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_key_order_and_writes_like_json_stringify() {
        let j = Json::parse("{\n // c\n \"z\": 1.0, \"a\": [true, null, \"\\u00e9\\/\"], \"m\": {}, \"z\": 2,\n}").unwrap();
        assert_eq!(j.compact(), r#"{"z":2,"a":[true,null,"é/"],"m":{}}"#);
        assert_eq!(j.pretty(), "{\n    \"z\": 2,\n    \"a\": [\n        true,\n        null,\n        \"é/\"\n    ],\n    \"m\": {}\n}");
    }

    #[test]
    fn escapes_match_javascript() {
        let j = Json::String("tab\t \"q\" \\ \u{1}".into());
        assert_eq!(j.compact(), r#""tab\t \"q\" \\ \u0001""#);
        assert_eq!(Json::Number(0.5).compact(), "0.5");
    }

    #[test]
    fn set_replaces_in_place_or_appends() {
        let mut j = Json::parse(r#"{"a": 1, "b": 2}"#).unwrap();
        j.set("a", "x".into());
        j.set("c", Json::Bool(false));
        assert_eq!(j.compact(), r#"{"a":"x","b":2,"c":false}"#);
    }

    #[test]
    fn errors_name_the_position() {
        let e = Json::parse("{\n  \"a\": ,\n}").unwrap_err();
        assert!(e.starts_with("line 2, column 8: "), "{e}");
        let e = Json::parse(&"[".repeat(100_000)).unwrap_err();
        assert!(e.contains("nested deeper than"), "{e}");
    }
}
