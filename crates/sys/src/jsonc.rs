//! JSON with comments, as the config file, devcontainer.json and
//! devcontainer-feature.json are written: one parser (jsonc-parser) with one
//! set of options for every reader in the crate. Its AST keeps each value's
//! byte range, so callers can name lines, and it refuses nesting past its
//! limit instead of overflowing the stack on `[[[[...`.
//!
//! JSON5's extensions are accepted (comments, trailing commas, single
//! quotes, unquoted keys, hex and `+` numbers, `NaN`/`Infinity`); a missing
//! comma is not, though jsonc-parser could guess one. Errors are reworded
//! in plain words with a 1-based line and column.
//! Not responsible for what a document means.

use std::fmt;

pub use jsonc_parser::ast;
use jsonc_parser::errors::{ParseError, ParseErrorKind};
use jsonc_parser::{CollectOptions, ParseOptions, ParseStringErrorKind};

/// A syntax error at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

fn options() -> ParseOptions {
    ParseOptions { allow_missing_commas: false, ..ParseOptions::default() }
}

/// The document's value; `None` for a text of only blanks and comments.
pub fn parse(text: &str) -> Result<Option<ast::Value<'_>>, SyntaxError> {
    match jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options()) {
        Ok(result) => Ok(result.value),
        Err(e) => Err(explain(text, &e)),
    }
}

/// The document as a `serde_json::Value` (an empty text is an error).
pub fn parse_value(text: &str) -> Result<serde_json::Value, SyntaxError> {
    match parse(text)? {
        Some(v) => Ok(to_value(&v)),
        None => Err(SyntaxError { line: line_of(text, text.len()), column: 1, message: "there is no value, only blanks and comments".into() }),
    }
}

/// The 1-based line of a byte offset, counted as jsonc-parser counts them
/// in its errors (`\n`, and a `\r` not followed by `\n`).
pub fn line_of(text: &str, offset: usize) -> usize {
    let before = text.get(..offset).unwrap_or(text);
    1 + before.bytes().enumerate().filter(|&(i, b)| b == b'\n' || (b == b'\r' && before.as_bytes().get(i + 1) != Some(&b'\n'))).count()
}

/// `serde_json`'s value of an AST value. Numbers keep their kind as
/// written (integer literals become integers); `NaN` and `Infinity`, which
/// JSON cannot hold, become null as `JSON.stringify` writes them.
/// The AST is at most the parser's nesting limit deep, so recursion is bounded.
pub fn to_value(v: &ast::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::BooleanLit(b) => Value::Bool(b.value),
        ast::Value::StringLit(s) => Value::String(s.value.to_string()),
        ast::Value::NumberLit(n) => number(n.value).map_or(Value::Null, Value::Number),
        ast::Value::Array(a) => Value::Array(a.elements.iter().map(to_value).collect()),
        ast::Value::Object(o) => Value::Object(o.properties.iter().map(|p| (p.name.as_str().to_string(), to_value(&p.value))).collect()),
    }
}

/// A number literal as written (`80`, `-1.5e3`, `0x50`, `+443`, `.5`);
/// `None` for `NaN` and `Infinity`.
pub fn number(raw: &str) -> Option<serde_json::Number> {
    let (negative, digits) = match raw.as_bytes().first() {
        Some(b'-') => (true, &raw[1..]),
        Some(b'+') => (false, &raw[1..]),
        _ => (false, raw),
    };
    let hex = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X"));
    let integer = match hex {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None if digits.bytes().all(|b| b.is_ascii_digit()) => digits.parse::<u64>().ok(),
        None => None,
    };
    match (integer, negative) {
        (Some(u), false) => return Some(u.into()),
        (Some(u), true) if u <= i64::MAX as u64 + 1 => return Some((0i64.wrapping_sub_unsigned(u)).into()),
        _ => {}
    }
    let magnitude = match hex {
        Some(h) => h.chars().try_fold(0f64, |acc, c| Some(acc * 16.0 + f64::from(c.to_digit(16)?)))?,
        None => digits.parse::<f64>().ok().filter(|f| f.is_finite() && digits.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.'))?,
    };
    serde_json::Number::from_f64(if negative { -magnitude } else { magnitude })
}

/// jsonc-parser's error in plain words, at its 1-based line and column. A
/// missing comma is reported at the token after the gap, where the reader
/// looks for it.
fn explain(text: &str, e: &ParseError) -> SyntaxError {
    let (mut line, mut column) = (e.line_display(), e.column_display());
    let message = match e.kind() {
        ParseErrorKind::ExpectedComma => {
            let gap = e.range().start;
            let rest = text.get(gap..).unwrap_or("");
            let next = rest.trim_start();
            let at = gap + (rest.len() - next.len());
            line = line_of(text, at);
            column = 1 + text[..at].rsplit(['\n', '\r']).next().unwrap_or("").chars().count();
            format!("expected ',' before {}: is a comma missing?", found(text, at))
        }
        ParseErrorKind::ExpectedColonAfterObjectKey => format!("expected ':' after the key, found {}", found(text, e.range().start)),
        ParseErrorKind::ExpectedObjectValue => "expected a value after ':'".into(),
        ParseErrorKind::UnexpectedComma => "unexpected ',': a value or key is missing before it".into(),
        ParseErrorKind::UnexpectedColon => "unexpected ':': expected a value".into(),
        ParseErrorKind::UnexpectedCloseBrace => "unexpected '}': a value is missing, or a '[' before it is not closed".into(),
        ParseErrorKind::UnexpectedCloseBracket => "unexpected ']': a value is missing, or a '{' before it is not closed".into(),
        ParseErrorKind::UnexpectedWord => {
            format!("{} is not a value (strings need quotes; the literals are true, false and null)", found(text, e.range().start))
        }
        ParseErrorKind::UnexpectedTokenInObject => format!("expected a key or '}}', found {}", found(text, e.range().start)),
        ParseErrorKind::UnterminatedObject => "this '{' is never closed (the text ends first)".into(),
        ParseErrorKind::UnterminatedArray => "this '[' is never closed (the text ends first)".into(),
        ParseErrorKind::UnterminatedCommentBlock => "this comment is never closed".into(),
        ParseErrorKind::String(ParseStringErrorKind::UnterminatedStringLiteral) => "this string is never closed".into(),
        ParseErrorKind::MultipleRootJsonValues => "unexpected text after the end of the document".into(),
        ParseErrorKind::NestingDepthExceeded => "nested deeper than the parser's limit".into(),
        other => lower_first(&other.to_string()),
    };
    SyntaxError { line, column, message }
}

/// The token at `offset` as written, for messages: one punctuation
/// character, or the word or quoted text up to the next delimiter.
fn found(text: &str, offset: usize) -> String {
    let rest = text.get(offset..).unwrap_or("");
    match rest.chars().next() {
        None => "the end of the text".into(),
        Some(c) if "{}[]:,".contains(c) => format!("'{c}'"),
        Some(_) => rest.chars().take_while(|c| !"{}[]:,".contains(*c) && !c.is_whitespace()).take(40).collect(),
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json5_extensions_parse_to_the_same_values() {
        let v = parse_value("// c\n{ a: 'x', \"b\": [0x50, +443, .5, 1.0, -2, NaN,], /* d */ }").unwrap();
        assert_eq!(v, serde_json::json!({"a": "x", "b": [80, 443, 0.5, 1.0, -2, null]}));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let e = parse_value(&"[".repeat(100_000)).unwrap_err();
        assert_eq!((e.line, e.message.as_str()), (1, "nested deeper than the parser's limit"));
        let e = parse_value(&"{a:".repeat(100_000)).unwrap_err();
        assert_eq!(e.message, "nested deeper than the parser's limit");
    }

    #[test]
    fn errors_name_line_and_column_in_plain_words() {
        let e = parse_value("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!(e.to_string(), "line 3, column 3: expected ',' before \"b\": is a comma missing?");
        assert_eq!(parse_value("{\n a 1 }").unwrap_err().to_string(), "line 2, column 4: expected ':' after the key, found 1");
        assert_eq!(parse_value("").unwrap_err().message, "there is no value, only blanks and comments");
    }

    #[test]
    fn lines_of_offsets() {
        assert_eq!(line_of("a\nb\r\nc\rd", 0), 1);
        assert_eq!(line_of("a\nb\r\nc\rd", 2), 2);
        assert_eq!(line_of("a\nb\r\nc\rd", 5), 3);
        assert_eq!(line_of("a\nb\r\nc\rd", 7), 4);
    }
}
