//! Source locator: where the top-level keys of a JSON5 text, and the items
//! of their array values, start (1-based lines). json5 0.4 drops positions
//! once text becomes values, so without this an error about a value could
//! not name its line. A small tokenizer skips comments and strings, so a key
//! name inside a comment or a string never matches.
//!
//! Also bounds the nesting depth before json5 runs: its recursive parser
//! would overflow the stack on `[[[[...`, and no valid config nests deeper
//! than two levels.
//!
//! Not a validator: syntax is the json5 parser's job (with `syntax.rs` for
//! clearer messages); on text json5 rejects, what this returns does not matter.

use super::lex::{Lexer, Tok, Token};

/// Deepest `{`/`[` nesting accepted before json5 is asked to parse.
pub(crate) const MAX_DEPTH: usize = 16;

/// A top-level object member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// The key as written (quotes removed, escapes kept raw).
    pub name: String,
    pub line: usize,
    /// The value's first token (`[` for an array).
    pub value: Option<Item>,
    /// Items of an array value.
    pub items: Vec<Item>,
}

/// Where a value (or an element of an array value) starts, and its first
/// token as written: `NaN` stays `NaN` where the parsed value says null.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub line: usize,
    pub text: String,
}

/// The outline of a document: where it starts and its top-level members.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Outline {
    /// Line of the first token (1 for an empty document).
    pub first_line: usize,
    pub members: Vec<Member>,
}

impl Outline {
    /// The first member with this name.
    pub(crate) fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }
}

/// Nesting deeper than [`MAX_DEPTH`], at this line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    pub line: usize,
    pub column: usize,
}

/// The line of `key` as a top-level member name, if present. (The parser
/// uses the whole [`outline`]; this is its simplest question, for tests.)
#[cfg(test)]
pub(crate) fn locate_key(src: &str, key: &str) -> Option<usize> {
    outline(src).ok()?.member(key).map(|m| m.line)
}

/// What the previous token was, with the depth it was seen at: enough to
/// tell a key from a value from an array item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    Start,
    Open(usize),
    Comma(usize),
    Colon(usize),
    Other,
}

/// Walks the tokens once, tracking the bracket stack.
pub(crate) fn outline(src: &str) -> Result<Outline, TooDeep> {
    let mut lexer = Lexer::new(src);
    let mut out = Outline {
        first_line: 1,
        members: Vec::new(),
    };
    let mut stack: Vec<char> = Vec::new();
    let mut prev = Prev::Start;
    let mut in_array_value = false;
    while let Some(t) = lexer.next_token() {
        let depth = stack.len();
        if prev == Prev::Start {
            out.first_line = t.line;
        }
        let top_object = stack.first() == Some(&'{');
        if top_object && depth == 1 {
            if matches!(prev, Prev::Open(0) | Prev::Comma(1)) {
                if let Tok::Str(name) | Tok::Word(name) = &t.tok {
                    out.members.push(Member {
                        name: name.clone(),
                        line: t.line,
                        value: None,
                        items: Vec::new(),
                    });
                }
            } else if prev == Prev::Colon(1) {
                in_array_value = t.tok == Tok::Punct('[');
                if let Some(m) = out.members.last_mut() {
                    m.value = Some(item(&t));
                }
            }
        }
        let item_start = matches!(prev, Prev::Open(1) | Prev::Comma(2));
        if top_object && depth == 2 && in_array_value && item_start && t.tok != Tok::Punct(']') {
            if let Some(m) = out.members.last_mut() {
                m.items.push(item(&t));
            }
        }
        prev = step(&mut stack, &t)?;
    }
    Ok(out)
}

/// Applies a token to the bracket stack; returns how it counts as `prev`.
fn step(stack: &mut Vec<char>, t: &Token) -> Result<Prev, TooDeep> {
    let depth = stack.len();
    Ok(match t.tok {
        Tok::Punct(c @ ('{' | '[')) => {
            if depth >= MAX_DEPTH {
                return Err(TooDeep {
                    line: t.line,
                    column: t.column,
                });
            }
            stack.push(c);
            Prev::Open(depth)
        }
        Tok::Punct('}' | ']') => {
            stack.pop();
            Prev::Other
        }
        Tok::Punct(',') => Prev::Comma(depth),
        Tok::Punct(':') => Prev::Colon(depth),
        _ => Prev::Other,
    })
}

fn item(t: &Token) -> Item {
    let text = match &t.tok {
        Tok::Punct(c) => c.to_string(),
        Tok::Str(s) => format!("{s:?}"),
        Tok::Word(w) => w.clone(),
    };
    Item { line: t.line, text }
}
