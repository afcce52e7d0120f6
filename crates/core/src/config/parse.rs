//! The config file's text → a [`Config`] and the file line of each key set.
//! The crate's JSONC parser ([`crate::jsonc`]) checks the syntax, bounds
//! the nesting and keeps every value's position; json5 then confirms the
//! text is JSON5 as documented and reads it the same way. This file checks
//! the structure (an object of known, unique keys) and each value's type,
//! then hands values to `validate`.
//! Not responsible for reading the file or for the environment.

use std::collections::BTreeMap;
use std::path::Path;

use crate::jsonc::{self, ast, SyntaxError};
use jsonc_parser::common::Ranged;

use super::error::{At, ConfigError, Hint, Origin};
use super::keys::{suggest, ItemKind, Key, Kind};
use super::validate::{self, Invalid};
use super::value::{self, Typed};
use super::{Config, Source};

type Sources = BTreeMap<&'static str, Source>;

/// Deepest `{`/`[` nesting accepted; no valid config nests deeper than two
/// levels, and json5's recursive parser runs only below this bound.
pub(crate) const MAX_DEPTH: usize = 16;

/// Parses and validates a whole document. Errors come in source order.
pub(crate) fn parse_document(path: &Path, src: &str) -> Result<(Config, Sources), ConfigError> {
    let doc = Doc { path, src };
    let Some(root) = jsonc::parse(src).map_err(|e| doc.syntax(e))? else {
        let end = SyntaxError { line: jsonc::line_of(src, src.len()), column: 1, message: "the file is empty; write {} to use the defaults".into() };
        return Err(doc.syntax(end));
    };
    doc.check_depth(&root, 0)?;
    doc.check_json5(&root)?;
    let ast::Value::Object(object) = &root else {
        return Err(ConfigError::NotAnObject { file: path.to_path_buf(), line: doc.line(&root), found: describe(&root) });
    };
    check_duplicates(&doc, object)?;
    let mut config = Config::default();
    let mut sources = Sources::new();
    for prop in &object.properties {
        let member = Member { doc, name: prop.name.as_str(), line: doc.line(prop), value: &prop.value };
        let key = member.known_key()?;
        value::assign(&mut config, key, member.typed(key)?, false);
        sources.insert(key.name(), member.source());
    }
    check_port_conflict(&doc, &config, object)?;
    Ok((config, sources))
}

/// The file being parsed: its path for messages, its text for lines.
#[derive(Clone, Copy)]
struct Doc<'a> {
    path: &'a Path,
    src: &'a str,
}

impl Doc<'_> {
    fn line(&self, node: &dyn Ranged) -> usize {
        jsonc::line_of(self.src, node.start())
    }

    fn syntax(&self, e: SyntaxError) -> ConfigError {
        ConfigError::Syntax { file: self.path.to_path_buf(), line: e.line, column: e.column, message: e.message }
    }

    fn at(&self, key: Key, line: usize) -> At {
        At { origin: Origin::File { path: self.path.to_path_buf(), line }, key: key.name() }
    }

    /// Refuses nesting deeper than [`MAX_DEPTH`] (the parser's own bound is
    /// far deeper), at the container that goes too deep.
    fn check_depth(&self, v: &ast::Value, depth: usize) -> Result<(), ConfigError> {
        let children: Vec<&ast::Value> = match v {
            ast::Value::Array(a) => a.elements.iter().collect(),
            ast::Value::Object(o) => o.properties.iter().map(|p| &p.value).collect(),
            _ => return Ok(()),
        };
        if depth >= MAX_DEPTH {
            let start = v.start();
            let column = 1 + self.src[..start].rsplit(['\n', '\r']).next().unwrap_or("").chars().count();
            let message = format!("nested deeper than {MAX_DEPTH} levels");
            return Err(self.syntax(SyntaxError { line: self.line(v), column, message }));
        }
        children.into_iter().try_for_each(|c| self.check_depth(c, depth + 1))
    }

    /// The file is documented as JSON5: json5 must accept it too (it
    /// refuses what only JSONC allows, such as a number too large for any
    /// integer or a number as a key) and read the same values: JSON5 ends
    /// a `//` comment at U+2028, the JSONC parser does not, and a key the
    /// two read differently must not pass.
    fn check_json5(&self, root: &ast::Value) -> Result<(), ConfigError> {
        match json5::from_str::<serde_json::Value>(self.src) {
            Ok(v) if v == jsonc::to_value(root) => Ok(()),
            Ok(_) => Err(self.syntax(SyntaxError {
                line: self.line(root),
                column: 1,
                message:
                    "JSON5 and JSONC readers see different values in this file (a U+2028 or U+2029 line separator in a // comment?); write plain line breaks"
                        .into(),
            })),
            Err(e) => {
                let (line, column) = e.position().map_or((self.line(root), 1), |p| (p.line + 1, p.column + 1));
                let message = e.code().map_or_else(|| e.to_string(), |c| c.to_string());
                Err(self.syntax(SyntaxError { line, column, message }))
            }
        }
    }
}

/// JSON5 keeps the last of two equal keys, while a reader sees the first:
/// refuse rather than guess which one the author meant.
fn check_duplicates(doc: &Doc, object: &ast::Object) -> Result<(), ConfigError> {
    let props = &object.properties;
    for (i, p) in props.iter().enumerate() {
        let name = p.name.as_str();
        if let Some(first) = props[..i].iter().find(|f| f.name.as_str() == name) {
            return Err(ConfigError::DuplicateKey { file: doc.path.to_path_buf(), line: doc.line(p), key: name.to_string(), first_line: doc.line(first) });
        }
    }
    Ok(())
}

/// One top-level member and where it sits.
struct Member<'a> {
    doc: Doc<'a>,
    name: &'a str,
    line: usize,
    value: &'a ast::Value<'a>,
}

impl Member<'_> {
    fn known_key(&self) -> Result<Key, ConfigError> {
        Key::from_name(self.name).ok_or_else(|| ConfigError::UnknownKey {
            file: self.doc.path.to_path_buf(),
            line: self.line,
            key: self.name.to_string(),
            suggestion: suggest(self.name).map(Key::name),
            valid: Key::valid_names(),
        })
    }

    fn source(&self) -> Source {
        Source::File { path: self.doc.path.to_path_buf(), line: self.line }
    }

    fn typed(&self, key: Key) -> Result<Typed, ConfigError> {
        let at = self.doc.at(key, self.line);
        match (key.kind(), self.value) {
            (Kind::Bool, ast::Value::BooleanLit(b)) => Ok(Typed::Bool(b.value)),
            (Kind::Path, ast::Value::StringLit(s)) => validate::abs_path(&s.value).map(Typed::Path).map_err(|e| e.at(at)),
            (Kind::List(ItemKind::Port), ast::Value::Array(a)) => self.ports(key, &a.elements),
            (Kind::List(kind), ast::Value::Array(a)) => self.texts(key, kind, &a.elements),
            (kind, other) => Err(wrong_type(at, kind, other)),
        }
    }

    fn ports(&self, key: Key, items: &[ast::Value]) -> Result<Typed, ConfigError> {
        let ports = items.iter().map(|v| {
            let at = self.doc.at(key, self.doc.line(v));
            match v {
                ast::Value::NumberLit(n) => match jsonc::number(n.value) {
                    Some(number) => match number.as_i64() {
                        Some(n) => validate::port(n).map_err(|e| e.at(at)),
                        // A float, or past i64: not a port either way.
                        None => Err(Invalid::Port(number.to_string()).at(at)),
                    },
                    // NaN and Infinity are not numbers JSON can hold.
                    None => Err(wrong_item(at, ItemKind::Port, v)),
                },
                other => Err(wrong_item(at, ItemKind::Port, other)),
            }
        });
        Ok(Typed::Ports(ports.collect::<Result<_, _>>()?))
    }

    fn texts(&self, key: Key, kind: ItemKind, items: &[ast::Value]) -> Result<Typed, ConfigError> {
        let mut texts = Vec::new();
        for v in items {
            let at = self.doc.at(key, self.doc.line(v));
            match v {
                ast::Value::StringLit(s) => texts.push((s.value.as_ref(), at)),
                other => return Err(wrong_item(at, kind, other)),
            }
        }
        value::text_list(kind, texts)
    }
}

fn wrong_type(at: At, kind: Kind, found: &ast::Value) -> ConfigError {
    let hint = match (kind, found) {
        (Kind::Bool, ast::Value::StringLit(s)) if s.value == "true" || s.value == "false" => Hint::new(format!("write {} without quotes", s.value)),
        (Kind::List(_), ast::Value::StringLit(_) | ast::Value::NumberLit(_)) => Hint::new(format!("write a list: [{}]", jsonc::to_value(found))),
        _ => Hint::none(),
    };
    ConfigError::WrongType { at, expected: kind.expected(), found: describe(found), hint }
}

fn wrong_item(at: At, kind: ItemKind, found: &ast::Value) -> ConfigError {
    let hint = match (kind, found) {
        (ItemKind::Port, ast::Value::StringLit(s)) if s.value.trim().parse::<u16>().is_ok() => Hint::new(format!("write {} without quotes", s.value.trim())),
        _ => Hint::none(),
    };
    ConfigError::WrongType { at, expected: kind.expected(), found: describe(found), hint }
}

/// A number as JSON writes it (`0x50` is 80), or as written where JSON
/// has none (`NaN`, `Infinity`).
fn shown_number(raw: &str) -> String {
    jsonc::number(raw).map_or_else(|| raw.to_string(), |n| n.to_string())
}

/// "string \"80\"", "number 1.5", "an array", ...
fn describe(value: &ast::Value) -> String {
    match value {
        ast::Value::NullKeyword(_) => "null".to_string(),
        ast::Value::BooleanLit(b) => format!("boolean {}", b.value),
        ast::Value::NumberLit(n) => format!("number {}", shown_number(n.value)),
        ast::Value::StringLit(s) if s.value.chars().count() > 60 => format!("string {:?}...", s.value.chars().take(60).collect::<String>()),
        ast::Value::StringLit(s) => format!("string {:?}", s.value),
        ast::Value::Array(_) => "an array".to_string(),
        ast::Value::Object(_) => "an object".to_string(),
    }
}

/// A port cannot be both a local and a callback relay; blame the
/// callbackPorts element that repeats a localPorts one.
fn check_port_conflict(doc: &Doc, config: &Config, object: &ast::Object) -> Result<(), ConfigError> {
    let Some(port) = value::port_conflict(config) else {
        return Ok(());
    };
    let key = Key::CallbackPorts;
    let prop = object.properties.iter().find(|p| p.name.as_str() == key.name());
    let items = prop.and_then(|p| p.value.as_array()).map_or(&[][..], |a| &a.elements[..]);
    let item = items.iter().find(|v| v.as_number_lit().and_then(|n| jsonc::number(n.value)).and_then(|n| n.as_i64()) == Some(i64::from(port)));
    let line = match (item, prop) {
        (Some(item), _) => doc.line(item),
        (None, Some(prop)) => doc.line(prop),
        (None, None) => 1,
    };
    Err(ConfigError::PortConflict { at: doc.at(key, line), port })
}
