//! Plain-words explanations of structural JSON5 mistakes: a missing comma
//! or colon, an unclosed bracket, an unterminated string, text after the
//! end. Consulted only after json5 has rejected a text, because its (pest)
//! messages name grammar rules ("expected null" for a missing comma).
//! Literals (`tru`, `0x`) are not checked here: json5's message stays.

use super::lex::{Lexer, Tok, Token};

/// A syntax problem at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// What the innermost open container expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A key, or the closing brace (after `{` or `,`).
    Key,
    Colon,
    Value,
    /// An element, or the closing bracket (after `[` or `,`).
    Item,
    /// A comma or the closer.
    After,
}

struct Frame {
    open: char,
    line: usize,
    state: State,
}

/// The first structural problem in `src`, if there is one.
pub(crate) fn explain(src: &str) -> Option<Problem> {
    let mut lexer = Lexer::new(src);
    let mut stack: Vec<Frame> = Vec::new();
    let mut top_done = false;
    loop {
        let token = lexer.next_token();
        if let Some(u) = lexer.unterminated {
            let message = format!("this {} is never closed", u.what);
            return Some(problem(u.line, u.column, message));
        }
        let Some(t) = token else {
            return at_end(&stack, top_done, lexer.position());
        };
        let result = if !stack.is_empty() {
            advance(&mut stack, &t)
        } else if top_done {
            Err(format!(
                "unexpected {} after the end of the document",
                shown(&t.tok)
            ))
        } else {
            top_done = true;
            start_value(&mut stack, &t)
        };
        if let Err(message) = result {
            return Some(problem(t.line, t.column, message));
        }
    }
}

/// Feeds one token to the innermost open container.
fn advance(stack: &mut Vec<Frame>, t: &Token) -> Result<(), String> {
    let Some(frame) = stack.last_mut() else {
        return Ok(());
    };
    let closer = if frame.open == '{' { '}' } else { ']' };
    let wants_value = match frame.state {
        State::Value => true,
        State::Item => t.tok != Tok::Punct(']'),
        _ => false,
    };
    if wants_value {
        frame.state = State::After;
        return start_value(stack, t);
    }
    match (frame.state, &t.tok) {
        (_, Tok::Punct(c)) if *c == closer && frame.state != State::Colon => {
            stack.pop();
        }
        (State::Key, Tok::Str(_) | Tok::Word(_)) => frame.state = State::Colon,
        (State::Key, tok) => return Err(format!("expected a key or '}}', found {}", shown(tok))),
        (State::Colon, Tok::Punct(':')) => frame.state = State::Value,
        (State::Colon, tok) => {
            return Err(format!("expected ':' after the key, found {}", shown(tok)))
        }
        (State::After, Tok::Punct(',')) => {
            frame.state = if frame.open == '{' {
                State::Key
            } else {
                State::Item
            };
        }
        (_, Tok::Punct(c @ ('}' | ']'))) => {
            let (open, line) = (frame.open, frame.line);
            return Err(format!(
                "found '{c}' but the '{open}' opened on line {line} is not closed"
            ));
        }
        (_, tok) => {
            return Err(format!(
                "expected ',' or '{closer}' before {}: is a comma missing?",
                shown(tok)
            ))
        }
    }
    Ok(())
}

/// A value starts here: a scalar, or a container to push.
fn start_value(stack: &mut Vec<Frame>, t: &Token) -> Result<(), String> {
    let state = match &t.tok {
        Tok::Punct('{') => State::Key,
        Tok::Punct('[') => State::Item,
        Tok::Punct(c) => return Err(format!("expected a value, found '{c}'")),
        Tok::Str(_) | Tok::Word(_) => return Ok(()),
    };
    let open = if state == State::Key { '{' } else { '[' };
    stack.push(Frame {
        open,
        line: t.line,
        state,
    });
    Ok(())
}

fn at_end(stack: &[Frame], top_done: bool, (line, column): (usize, usize)) -> Option<Problem> {
    if let Some(frame) = stack.last() {
        let message = format!(
            "the file ends before the '{}' opened on line {} is closed",
            frame.open, frame.line
        );
        return Some(problem(line, column, message));
    }
    (!top_done).then(|| {
        problem(
            line,
            column,
            "the file is empty; write {} to use the defaults".to_string(),
        )
    })
}

fn problem(line: usize, column: usize, message: String) -> Problem {
    Problem {
        line,
        column,
        message,
    }
}

fn shown(tok: &Tok) -> String {
    match tok {
        Tok::Punct(c) => format!("'{c}'"),
        Tok::Str(s) => format!("{s:?}"),
        Tok::Word(w) => w.clone(),
    }
}
