//! The config file's text → a [`Config`] and the file line of each key set.
//! json5 checks the syntax and yields values; `locate` supplies the lines
//! json5 loses; this file checks the structure (an object of known, unique
//! keys) and each value's type, then hands values to `validate`.
//! Not responsible for reading the file or for the environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::{At, ConfigError, Hint, Origin};
use super::keys::{suggest, ItemKind, Key, Kind};
use super::locate::{self, Item, Outline, MAX_DEPTH};
use super::syntax;
use super::validate::{self, Invalid};
use super::value::{self, Typed};
use super::{Config, Source};

type Sources = BTreeMap<&'static str, Source>;

/// Parses and validates a whole document. Errors come in source order.
pub(crate) fn parse_document(path: &Path, src: &str) -> Result<(Config, Sources), ConfigError> {
    // The outline runs first: it also refuses nesting json5 could not survive.
    let outline = locate::outline(src).map_err(|deep| ConfigError::Syntax {
        file: path.to_path_buf(),
        line: deep.line,
        column: deep.column,
        message: format!("nested deeper than {MAX_DEPTH} levels"),
    })?;
    let value: Value = json5::from_str(src).map_err(|e| syntax_error(path, src, &outline, e))?;
    let Value::Object(map) = value else {
        return Err(ConfigError::NotAnObject {
            file: path.to_path_buf(),
            line: outline.first_line,
            found: describe(&value, None),
        });
    };
    check_duplicates(path, &outline)?;
    let mut config = Config::default();
    let mut sources = Sources::new();
    for (name, value) in in_source_order(&map, &outline) {
        let member = Member::new(path, name, &outline);
        let key = member.known_key()?;
        value::assign(&mut config, key, member.typed(key, value)?, false);
        sources.insert(key.name(), member.source());
    }
    check_port_conflict(path, &config, &map, &outline)?;
    Ok((config, sources))
}

/// Our own explanation of a structural mistake if there is one, else
/// json5's message and position.
fn syntax_error(path: &Path, src: &str, outline: &Outline, err: json5::Error) -> ConfigError {
    let file = path.to_path_buf();
    if let Some(p) = syntax::explain(src) {
        let (line, column, message) = (p.line, p.column, p.message);
        return ConfigError::Syntax {
            file,
            line,
            column,
            message,
        };
    }
    let json5::Error::Message { msg, location } = err;
    let (line, column) = location.map_or((outline.first_line, 1), |l| (l.line, l.column));
    ConfigError::Syntax {
        file,
        line,
        column,
        message: concise(&msg),
    }
}

/// pest's messages draw the source line with arrows; the position is
/// already in our prefix, so keep only its `= expected ...` line.
fn concise(msg: &str) -> String {
    let detail = msg.lines().rev().find_map(|l| l.trim().strip_prefix("= "));
    detail.unwrap_or(msg).trim().to_string()
}

/// JSON5 keeps the last of two equal keys, while a reader sees the first:
/// refuse rather than guess which one the author meant.
fn check_duplicates(path: &Path, outline: &Outline) -> Result<(), ConfigError> {
    for (i, m) in outline.members.iter().enumerate() {
        if let Some(first) = outline.members[..i].iter().find(|f| f.name == m.name) {
            return Err(ConfigError::DuplicateKey {
                file: path.to_path_buf(),
                line: m.line,
                key: m.name.clone(),
                first_line: first.line,
            });
        }
    }
    Ok(())
}

/// The object's members sorted by line, so the first error reported is
/// the first in the file (the map itself is sorted by name).
fn in_source_order<'a>(
    map: &'a Map<String, Value>,
    outline: &Outline,
) -> Vec<(&'a str, &'a Value)> {
    let mut members: Vec<_> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
    members.sort_by_key(|(name, _)| outline.member(name).map_or(0, |m| m.line));
    members
}

/// One top-level member and where it sits.
struct Member<'a> {
    path: &'a Path,
    name: &'a str,
    line: usize,
    value: Option<&'a Item>,
    items: &'a [Item],
}

impl<'a> Member<'a> {
    fn new(path: &'a Path, name: &'a str, outline: &'a Outline) -> Member<'a> {
        let located = outline.member(name);
        Member {
            path,
            name,
            // Only if the locator and json5 disagree on a name; never seen.
            line: located.map_or(outline.first_line, |m| m.line),
            value: located.and_then(|m| m.value.as_ref()),
            items: located.map_or(&[], |m| m.items.as_slice()),
        }
    }

    fn known_key(&self) -> Result<Key, ConfigError> {
        Key::from_name(self.name).ok_or_else(|| ConfigError::UnknownKey {
            file: self.path.to_path_buf(),
            line: self.line,
            key: self.name.to_string(),
            suggestion: suggest(self.name).map(Key::name),
            valid: Key::valid_names(),
        })
    }

    fn source(&self) -> Source {
        Source::File {
            path: self.path.to_path_buf(),
            line: self.line,
        }
    }

    fn at(&self, key: Key, line: usize) -> At {
        let path: PathBuf = self.path.to_path_buf();
        At {
            origin: Origin::File { path, line },
            key: key.name(),
        }
    }

    /// The place of array element `i`, falling back to the key's line.
    fn at_item(&self, key: Key, i: usize) -> At {
        self.at(key, self.items.get(i).map_or(self.line, |item| item.line))
    }

    fn typed(&self, key: Key, value: &Value) -> Result<Typed, ConfigError> {
        let at = self.at(key, self.line);
        match (key.kind(), value) {
            (Kind::Bool, Value::Bool(b)) => Ok(Typed::Bool(*b)),
            (Kind::Path, Value::String(s)) => {
                validate::abs_path(s).map(Typed::Path).map_err(|e| e.at(at))
            }
            (Kind::List(ItemKind::Port), Value::Array(items)) => self.ports(key, items),
            (Kind::List(kind), Value::Array(items)) => self.texts(key, kind, items),
            (kind, other) => Err(wrong_type(at, kind, other, self.value)),
        }
    }

    fn ports(&self, key: Key, items: &[Value]) -> Result<Typed, ConfigError> {
        let ports = items.iter().enumerate().map(|(i, v)| {
            let at = self.at_item(key, i);
            match v {
                Value::Number(n) => match n.as_i64() {
                    Some(n) => validate::port(n).map_err(|e| e.at(at)),
                    // A float, or past i64: not a port either way.
                    None => Err(Invalid::Port(n.to_string()).at(at)),
                },
                other => Err(wrong_item(at, ItemKind::Port, other, self.items.get(i))),
            }
        });
        Ok(Typed::Ports(ports.collect::<Result<_, _>>()?))
    }

    fn texts(&self, key: Key, kind: ItemKind, items: &[Value]) -> Result<Typed, ConfigError> {
        let mut texts = Vec::new();
        for (i, v) in items.iter().enumerate() {
            let at = self.at_item(key, i);
            match v {
                Value::String(s) => texts.push((s.as_str(), at)),
                other => return Err(wrong_item(at, kind, other, self.items.get(i))),
            }
        }
        value::text_list(kind, texts)
    }
}

fn wrong_type(at: At, kind: Kind, found: &Value, raw: Option<&Item>) -> ConfigError {
    let hint = match (kind, found) {
        (Kind::Bool, Value::String(s)) if s == "true" || s == "false" => {
            Hint::new(format!("write {s} without quotes"))
        }
        (Kind::List(_), Value::String(_) | Value::Number(_)) => {
            Hint::new(format!("write a list: [{found}]"))
        }
        _ => Hint::none(),
    };
    ConfigError::WrongType {
        at,
        expected: kind.expected(),
        found: describe(found, raw),
        hint,
    }
}

fn wrong_item(at: At, kind: ItemKind, found: &Value, raw: Option<&Item>) -> ConfigError {
    let hint = match (kind, found) {
        (ItemKind::Port, Value::String(s)) if s.trim().parse::<u16>().is_ok() => {
            Hint::new(format!("write {} without quotes", s.trim()))
        }
        _ => Hint::none(),
    };
    ConfigError::WrongType {
        at,
        expected: kind.expected(),
        found: describe(found, raw),
        hint,
    }
}

/// "string \"80\"", "number 1.5", "an array", ... `raw` recovers what was
/// written where json5 turned it into null (`NaN`, `Infinity`).
fn describe(value: &Value, raw: Option<&Item>) -> String {
    match value {
        Value::Null => match raw.map(|r| r.text.as_str()) {
            Some(text) if text != "null" => format!("number {text}"),
            _ => "null".to_string(),
        },
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() > 60 => {
            format!("string {:?}...", s.chars().take(60).collect::<String>())
        }
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// A port cannot be both a local and a callback relay; blame the
/// callbackPorts element that repeats a localPorts one.
fn check_port_conflict(
    path: &Path,
    config: &Config,
    map: &Map<String, Value>,
    outline: &Outline,
) -> Result<(), ConfigError> {
    let Some(port) = value::port_conflict(config) else {
        return Ok(());
    };
    let key = Key::CallbackPorts;
    let member = Member::new(path, key.name(), outline);
    let index = map
        .get(key.name())
        .and_then(Value::as_array)
        .and_then(|items| {
            items
                .iter()
                .position(|v| v.as_i64() == Some(i64::from(port)))
        });
    Err(ConfigError::PortConflict {
        at: member.at_item(key, index.unwrap_or(usize::MAX)),
        port,
    })
}
