//! A JSON5 tokenizer that knows just enough to skip whitespace, comments
//! and strings and to see punctuation: the shared front end of the key
//! locator (`locate.rs`) and the syntax explainer (`syntax.rs`). It never
//! fails; an unterminated string or comment is recorded in `unterminated`.
//! Lines count `\n` only, as the json5 parser (pest) does.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Punct(char),
    Str(String),
    Word(String),
}

#[derive(Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: usize,
    pub column: usize,
}

/// Where an unterminated string or block comment starts, and which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unterminated {
    pub line: usize,
    pub column: usize,
    pub what: &'static str,
}

pub(crate) struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    column: usize,
    /// The first unterminated string or comment met, if any.
    pub unterminated: Option<Unterminated>,
}

impl Lexer {
    pub(crate) fn new(src: &str) -> Lexer {
        Lexer {
            chars: src.chars().collect(),
            pos: 0,
            line: 1,
            column: 1,
            unterminated: None,
        }
    }

    /// The current line and column (at the end: where the input ends).
    pub(crate) fn position(&self) -> (usize, usize) {
        (self.line, self.column)
    }

    fn flag(&mut self, line: usize, column: usize, what: &'static str) {
        self.unterminated
            .get_or_insert(Unterminated { line, column, what });
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_at(0)?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    pub(crate) fn next_token(&mut self) -> Option<Token> {
        self.skip_blanks();
        let (line, column) = (self.line, self.column);
        let c = self.peek_at(0)?;
        let tok = match c {
            '{' | '}' | '[' | ']' | ':' | ',' => {
                self.bump();
                Tok::Punct(c)
            }
            '"' | '\'' => Tok::Str(self.string()),
            _ => Tok::Word(self.word()),
        };
        Some(Token { tok, line, column })
    }

    /// Skips whitespace (JSON5 allows the BOM and Unicode spaces) and comments.
    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek_at(0) {
            match (c, self.peek_at(1)) {
                ('/', Some('/')) => {
                    while self.peek_at(0).is_some_and(|c| !is_line_terminator(c)) {
                        self.bump();
                    }
                }
                ('/', Some('*')) => {
                    let (line, column) = (self.line, self.column);
                    self.bump();
                    self.bump();
                    if !self.skip_until("*/") {
                        self.flag(line, column, "comment");
                    }
                }
                (c, _) if c.is_whitespace() || c == '\u{FEFF}' => {
                    self.bump();
                }
                _ => return,
            }
        }
    }

    /// Consumes up to and including `end`; false if the input ran out.
    fn skip_until(&mut self, end: &str) -> bool {
        let end: Vec<char> = end.chars().collect();
        while self.peek_at(0).is_some() {
            if self.chars[self.pos..].starts_with(&end) {
                end.iter().for_each(|_| {
                    self.bump();
                });
                return true;
            }
            self.bump();
        }
        false
    }

    /// A quoted string, escapes decoded so that `"egress\u004aail"` is
    /// found as `egressJail`, the name json5 gives it.
    /// A raw line break ends an unterminated string, as it does in JSON5.
    fn string(&mut self) -> String {
        let (line, column) = (self.line, self.column);
        let quote = self.bump();
        let mut raw = String::new();
        loop {
            match self.peek_at(0) {
                None => {
                    self.flag(line, column, "string");
                    break;
                }
                Some(c) if is_line_terminator(c) => {
                    self.flag(line, column, "string");
                    break;
                }
                Some(c) if Some(c) == quote => {
                    self.bump();
                    break;
                }
                Some(c) => {
                    self.bump();
                    raw.push(c);
                    if c == '\\' {
                        raw.extend(self.bump());
                    }
                }
            }
        }
        unescape(&raw)
    }

    /// Identifiers, numbers, `true`, ...: everything up to a delimiter.
    /// Always consumes at least one character, so lexing terminates.
    fn word(&mut self) -> String {
        let mut text: String = self.bump().into_iter().collect();
        while let Some(c) = self.peek_at(0) {
            let delimiter = "{}[]:,\"'/".contains(c) || c.is_whitespace() || c == '\u{FEFF}';
            if delimiter {
                break;
            }
            text.push(c);
            self.bump();
        }
        // JSON5 identifiers may contain \uXXXX escapes too.
        unescape(&text)
    }
}

/// JSON5's line terminators: they end line comments and strings.
fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Decodes JSON5 string escapes; malformed ones are kept as written (the
/// json5 parser reports them).
fn unescape(raw: &str) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' || i >= chars.len() {
            out.push(c);
            continue;
        }
        let e = chars[i];
        i += 1;
        match e {
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '0' => out.push('\0'),
            '\n' | '\u{2028}' | '\u{2029}' => {}
            '\r' => i += usize::from(chars.get(i) == Some(&'\n')),
            'x' => i += push_hex(&chars[i..], 2, &mut out),
            'u' => i += push_unicode(&chars[i..], &mut out),
            other => out.push(other),
        }
    }
    out
}

/// Pushes the character of `n` hex digits; returns how many were used.
fn push_hex(chars: &[char], n: usize, out: &mut String) -> usize {
    match hex(chars, n).and_then(char::from_u32) {
        Some(c) => {
            out.push(c);
            n
        }
        None => 0,
    }
}

/// `XXXX`, or a `XXXX\uYYYY` surrogate pair.
fn push_unicode(chars: &[char], out: &mut String) -> usize {
    let Some(high) = hex(chars, 4) else {
        return 0;
    };
    let low = (chars.get(4..6) == Some(&['\\', 'u'][..]))
        .then(|| hex(&chars[6..], 4))
        .flatten()
        .filter(|low| (0xD800..0xDC00).contains(&high) && (0xDC00..0xE000).contains(low));
    match low {
        Some(low) => {
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            out.extend(char::from_u32(code));
            10
        }
        None => {
            out.extend(char::from_u32(high));
            4
        }
    }
}

fn hex(chars: &[char], n: usize) -> Option<u32> {
    let digits = chars.get(..n)?;
    // from_str_radix alone would accept a leading '+'.
    if !digits.iter().all(char::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(&digits.iter().collect::<String>(), 16).ok()
}
