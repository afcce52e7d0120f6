//! What the user's shells will put on PATH — and which entry-point names
//! they alias to a file — learnt by reading their start-up files, never by
//! running them (running a shell runs whatever its files say). The entry
//! guard (plan step 9) covers those directories too, not only the PATH of
//! the session being started: `pnpm setup` adds `PNPM_HOME` to PATH in
//! `~/.bashrc`, Claude Code's old local installer left an alias to
//! `~/.claude/local/claude`, and a session that plants a `claude` there
//! would otherwise run unsandboxed at the next interactive `claude`.
//!
//! The reader follows the forms these lines take: assignments to PATH
//! (`PATH=...`, `export PATH=...`, `PATH+=...`, zsh's `path=(...)`) built
//! from literals, `~`, `$HOME` and variables assigned earlier (`export
//! PNPM_HOME=...`), files sourced with `.`/`source`, and `alias NAME=...`
//! for the entry-point names. Every branch is taken (an `if [ -d DIR ]`
//! guard is no protection: the session could create DIR). What it cannot
//! follow — command substitution, `eval`, variables it never saw assigned,
//! shell functions named like an entry point — is listed, so `doctor` can
//! name the line and the fix.
//!
//! `parse` is pure (the reader of sourced files is passed in); `gather`
//! reads the files.

use crate::env_vars;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A user's start-up files (sh, bash, zsh), relative to the home.
const USER_FILES: &[&str] = &[".profile", ".bash_profile", ".bash_login", ".bashrc", ".zshenv", ".zprofile", ".zshrc", ".zlogin"];
/// The system's, read before the user's (they may name the user's home).
const SYSTEM_FILES: &[&str] =
    &["/etc/environment", "/etc/profile", "/etc/bash.bashrc", "/etc/zsh/zshenv", "/etc/zsh/zprofile", "/etc/zsh/zshrc", "/etc/zshenv", "/etc/zshrc"];
/// Every `*.sh` here is sourced by /etc/profile.
const SYSTEM_PROFILE_DIR: &str = "/etc/profile.d";
/// The entry-point names whose aliases matter (the plan's ENTRY_POINTS).
const ALIASED: &[&str] = &["claude", "codex", "pi", "agent-sandbox", "sandbox-install"];

/// Files larger than this are not read (a start-up file is small).
const MAX_FILE: u64 = 256 * 1024;
/// Sourced files are followed this deep, and this many files at most.
const MAX_DEPTH: usize = 4;
const MAX_FILES: usize = 64;

/// Where something was found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    pub file: PathBuf,
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// What the start-up files say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellPath {
    /// Directories put on PATH (absolute), once each, in the order found.
    pub dirs: Vec<(PathBuf, Origin)>,
    /// Entry-point names aliased to a file: (name, the file).
    pub aliases: Vec<(String, PathBuf, Origin)>,
    /// Lines whose effect on PATH or an entry point cannot be followed.
    pub unfollowed: Vec<(Origin, String)>,
}

/// The value of `$PATH` before an assignment: dropped from the result.
const OLD_PATH: &str = "\u{1}PATH\u{1}";

/// A word's value, or why it cannot be known.
type Value = Result<String, String>;

struct Reader<'a> {
    vars: BTreeMap<String, Value>,
    out: ShellPath,
    read: &'a dyn Fn(&Path) -> Option<String>,
    seen: Vec<PathBuf>,
}

/// Reads `files` (path, text) in order, following what they source.
pub fn parse(files: &[(PathBuf, String)], home: &Path, read: &dyn Fn(&Path) -> Option<String>) -> ShellPath {
    let mut vars = BTreeMap::new();
    vars.insert(env_vars::HOME.to_string(), Ok(home.display().to_string()));
    vars.insert(env_vars::PATH.to_string(), Ok(OLD_PATH.to_string()));
    let mut r = Reader { vars, out: ShellPath::default(), read, seen: Vec::new() };
    for (path, text) in files {
        // Already read where another file sourced it.
        if r.seen.contains(path) {
            continue;
        }
        r.seen.push(path.clone());
        // The installer's own snippet only reorders PATH (shims first).
        if path != Path::new(crate::layout::PROFILE_SCRIPT) {
            r.file(path, text, 0);
        }
    }
    r.out
}

/// Reads the system's and `home`'s start-up files from disk.
pub fn gather(home: &Path) -> ShellPath {
    let mut names: Vec<PathBuf> = SYSTEM_FILES.iter().map(PathBuf::from).collect();
    let mut profile_d: Vec<PathBuf> = std::fs::read_dir(SYSTEM_PROFILE_DIR)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "sh")).collect())
        .unwrap_or_default();
    profile_d.sort();
    names.extend(profile_d);
    names.extend(USER_FILES.iter().map(|f| home.join(f)));
    let files: Vec<(PathBuf, String)> = names.into_iter().filter_map(|p| read_file(&p).map(|t| (p, t))).collect();
    parse(&files, home, &read_file)
}

/// A start-up file's text: a regular file (a link to one is fine: these are
/// the user's own), opened without blocking, at most `MAX_FILE` bytes.
pub fn read_file(p: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC).open(p).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    let mut s = String::new();
    f.take(MAX_FILE).read_to_string(&mut s).ok()?;
    Some(s)
}

/// One shell word as written, and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String, usize),
    /// `;`, `&&`, `||`, `|`, `&`, a newline, `(` or `)`.
    Sep,
}

/// Splits text into words and separators, keeping quotes in the words
/// (evaluated later) and `$(...)` / backquotes whole. Comments go.
fn lex(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut word, mut line, mut start) = (Vec::new(), String::new(), 1, 1);
    let mut i = 0;
    let flush = |out: &mut Vec<Tok>, word: &mut String, start: usize| {
        if !word.is_empty() {
            out.push(Tok::Word(std::mem::take(word), start));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if word.is_empty() {
            start = line;
        }
        match c {
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                line += 1;
                i += 2;
                continue;
            }
            '\\' => {
                word.push(c);
                word.extend(chars.get(i + 1));
                i += 2;
                continue;
            }
            '#' if word.is_empty() => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' | '"' | '`' => {
                let end = closing(&chars, i, c);
                line += chars[i..end].iter().filter(|&&x| x == '\n').count();
                word.extend(&chars[i..end]);
                i = end;
                continue;
            }
            '$' if chars.get(i + 1) == Some(&'(') || chars.get(i + 1) == Some(&'{') => {
                let end = balanced(&chars, i + 1);
                line += chars[i..end].iter().filter(|&&x| x == '\n').count();
                word.extend(&chars[i..end]);
                i = end;
                continue;
            }
            // `name()`: a function definition keeps its parentheses.
            '(' if chars.get(i + 1) == Some(&')') && is_name(&word) => {
                word.push_str("()");
                i += 2;
                continue;
            }
            // zsh's `path=(...)`: the array is part of the word.
            '(' if word.ends_with('=') => {
                let end = balanced(&chars, i);
                line += chars[i..end].iter().filter(|&&x| x == '\n').count();
                word.extend(&chars[i..end]);
                i = end;
                continue;
            }
            ' ' | '\t' => flush(&mut out, &mut word, start),
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                flush(&mut out, &mut word, start);
                out.push(Tok::Sep);
                if c == '\n' {
                    line += 1;
                }
            }
            _ => word.push(c),
        }
        i += 1;
    }
    flush(&mut out, &mut word, start);
    out
}

/// The index after the quote opened at `at` closes (or the end).
fn closing(chars: &[char], at: usize, q: char) -> usize {
    let mut i = at + 1;
    while i < chars.len() {
        if chars[i] == '\\' && q != '\'' {
            i += 2;
            continue;
        }
        if chars[i] == q {
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

/// The index after the bracket opened at `at` (`(` or `{`) closes.
fn balanced(chars: &[char], at: usize) -> usize {
    let (open, close) = if chars[at] == '{' { ('{', '}') } else { ('(', ')') };
    let mut depth = 0;
    let mut i = at;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '\'' | '"' => {
                i = closing(chars, i, chars[i]);
                continue;
            }
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `NAME=VALUE` or `NAME+=VALUE`: (name, appends, raw value).
fn assignment(word: &str) -> Option<(&str, bool, &str)> {
    let eq = word.find('=')?;
    let (name, append) = match word[..eq].strip_suffix('+') {
        Some(n) => (n, true),
        None => (&word[..eq], false),
    };
    is_name(name).then(|| (name, append, &word[eq + 1..]))
}

impl Reader<'_> {
    fn file(&mut self, path: &Path, text: &str, depth: usize) {
        let toks = lex(text);
        let mut cmd: Vec<(String, usize)> = Vec::new();
        for t in toks.into_iter().chain([Tok::Sep]) {
            match t {
                Tok::Word(w, line) => cmd.push((w, line)),
                Tok::Sep => {
                    if !cmd.is_empty() {
                        self.command(path, &std::mem::take(&mut cmd), depth);
                    }
                }
            }
        }
    }

    fn origin(path: &Path, line: usize) -> Origin {
        Origin { file: path.to_path_buf(), line }
    }

    fn unfollowed(&mut self, path: &Path, line: usize, what: String) {
        self.out.unfollowed.push((Self::origin(path, line), what));
    }

    /// One simple command (keywords and `export`-like builtins skipped).
    fn command(&mut self, path: &Path, words: &[(String, usize)], depth: usize) {
        const KEYWORDS: &[&str] = &["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "esac", ";;"];
        let mut i = words.iter().position(|(w, _)| !KEYWORDS.contains(&w.as_str())).unwrap_or(words.len());
        let Some((first, line)) = words.get(i) else { return };
        let line = *line;
        match first.as_str() {
            "export" | "declare" | "typeset" | "readonly" | "local" => {
                i += 1;
                for (w, _) in words[i..].iter().filter(|(w, _)| !w.starts_with('-')) {
                    self.assign(path, line, w);
                }
            }
            "." | "source" => {
                if let Some((w, _)) = words.get(i + 1) {
                    self.source(w, depth);
                }
            }
            "alias" => {
                for (w, _) in &words[i + 1..] {
                    self.alias(path, line, w);
                }
            }
            "eval" => {
                let text: Vec<&str> = words[i..].iter().map(|(w, _)| w.as_str()).collect();
                self.unfollowed(path, line, format!("`{}` runs code whose effect on PATH cannot be read", text.join(" ")));
            }
            "function" => self.function(path, line, words.get(i + 1).map(|(w, _)| w.as_str())),
            _ if first.ends_with("()") => self.function(path, line, Some(first)),
            _ => {
                // Assignments alone persist; before a command they are its own.
                let n = words[i..].iter().take_while(|(w, _)| assignment(w).is_some()).count();
                if i + n == words.len() {
                    for (w, _) in &words[i..] {
                        self.assign(path, line, w);
                    }
                }
            }
        }
    }

    fn function(&mut self, path: &Path, line: usize, name: Option<&str>) {
        let name = name.unwrap_or("").trim_end_matches("()");
        if ALIASED.contains(&name) {
            self.unfollowed(path, line, format!("a shell function named `{name}` decides what `{name}` runs"));
        }
    }

    fn assign(&mut self, path: &Path, line: usize, word: &str) {
        let Some((name, append, raw)) = assignment(word) else { return };
        if name == "path" && raw.starts_with('(') {
            return self.zsh_path(path, line, raw);
        }
        let mut value = self.eval(raw);
        if append {
            let old = self.vars.get(name).cloned().unwrap_or(Ok(String::new()));
            value = old.and_then(|o| value.map(|v| o + &v));
        }
        if name == env_vars::PATH {
            match &value {
                Ok(v) => self.add_dirs(path, line, v.split(':')),
                Err(why) => self.unfollowed(path, line, format!("PATH is set from {why}")),
            }
            // Later `$PATH` references mean "the PATH so far" again.
            value = Ok(OLD_PATH.to_string());
        }
        self.vars.insert(name.to_string(), value);
    }

    /// zsh's `path=(DIR... $path)` (or `path+=(...)`).
    fn zsh_path(&mut self, path: &Path, line: usize, raw: &str) {
        let inner = raw.trim_start_matches('(').trim_end_matches(')');
        for t in lex(inner) {
            let Tok::Word(w, _) = t else { continue };
            if w == "$path" || w == "${path[@]}" || w == "\"$path[@]\"" {
                continue;
            }
            match self.eval(&w) {
                Ok(v) => self.add_dirs(path, line, std::iter::once(v.as_str())),
                Err(why) => self.unfollowed(path, line, format!("zsh's path array gets {why}")),
            }
        }
    }

    fn add_dirs<'v>(&mut self, path: &Path, line: usize, entries: impl Iterator<Item = &'v str>) {
        for e in entries {
            if e.is_empty() || e.contains(OLD_PATH) || !e.starts_with('/') {
                continue;
            }
            let dir = PathBuf::from(e);
            if !self.out.dirs.iter().any(|(d, _)| *d == dir) {
                self.out.dirs.push((dir, Self::origin(path, line)));
            }
        }
    }

    fn alias(&mut self, path: &Path, line: usize, word: &str) {
        let Some((name, _, raw)) = assignment(word).or_else(|| word.split_once('=').map(|(n, v)| (n, false, v))) else { return };
        if !ALIASED.contains(&name) {
            return;
        }
        match self.eval(raw) {
            Ok(v) => {
                let target = v.split_whitespace().next().unwrap_or("");
                let target = target.strip_prefix("~/").map(|r| format!("{}/{r}", self.home())).unwrap_or_else(|| target.to_string());
                if target.starts_with('/') {
                    self.out.aliases.push((name.to_string(), PathBuf::from(target), Self::origin(path, line)));
                }
            }
            Err(why) => self.unfollowed(path, line, format!("the alias `{name}` is set from {why}")),
        }
    }

    fn source(&mut self, word: &str, depth: usize) {
        // A name that cannot be read (`. $i` in /etc/profile's loop over
        // /etc/profile.d, which is read anyway) is passed over.
        let Ok(target) = self.eval(word) else { return };
        let target = PathBuf::from(target);
        if !target.is_absolute() || self.seen.contains(&target) || depth >= MAX_DEPTH || self.seen.len() >= MAX_FILES {
            return;
        }
        self.seen.push(target.clone());
        if let Some(text) = (self.read)(&target) {
            self.file(&target, &text, depth + 1);
        }
    }

    fn home(&self) -> String {
        self.vars.get(env_vars::HOME).cloned().and_then(Result::ok).unwrap_or_default()
    }

    /// A word's value: quotes removed, `~`, `$NAME`, `${NAME}` and
    /// `${NAME:-word}` expanded from what is known; anything else
    /// (command substitution, an unknown variable) is an error saying what.
    fn eval(&self, raw: &str) -> Value {
        let chars: Vec<char> = raw.chars().collect();
        let (mut out, mut i, mut quote) = (String::new(), 0, None::<char>);
        while i < chars.len() {
            let c = chars[i];
            match (c, quote) {
                ('\'', None) => {
                    let end = closing(&chars, i, '\'');
                    out.extend(&chars[i + 1..end.saturating_sub(1).max(i + 1)]);
                    i = end;
                    continue;
                }
                ('"', None) => quote = Some('"'),
                ('"', Some(_)) => quote = None,
                ('\\', _) => {
                    out.extend(chars.get(i + 1));
                    i += 2;
                    continue;
                }
                ('`', _) => return Err(format!("a command's output ({raw})")),
                ('~', None) if i == 0 || chars[i - 1] == ':' => {
                    if chars.get(i + 1).is_none_or(|&n| n == '/' || n == ':') {
                        out += &self.home();
                    } else {
                        return Err(format!("another user's home ({raw})"));
                    }
                }
                ('$', _) => {
                    let (value, end) = self.expand(&chars, i, raw)?;
                    out += &value;
                    i = end;
                    continue;
                }
                _ => out.push(c),
            }
            i += 1;
        }
        Ok(out)
    }

    /// `$...` at `at`: its value and the index after it.
    fn expand(&self, chars: &[char], at: usize, raw: &str) -> Result<(String, usize), String> {
        match chars.get(at + 1) {
            Some('(') => Err(format!("a command's output ({raw})")),
            Some('{') => {
                let end = balanced(chars, at + 1);
                let inner: String = chars[at + 2..end.saturating_sub(1)].iter().collect();
                let split = ["-", "+"].iter().find_map(|op| inner.split_once(&format!(":{op}")).or_else(|| inner.split_once(op)).map(|(n, w)| (n, *op, w)));
                let (name, op, word) = split.map_or((inner.as_str(), "", ""), |(n, op, w)| (n, op, w));
                if !is_name(name) {
                    return Err(format!("an expansion it cannot read (${{{inner}}})"));
                }
                let known = self.vars.get(name);
                match (op, known) {
                    // ${NAME:+word}: word when NAME is set and not empty.
                    ("+", Some(Ok(v))) if !v.is_empty() => self.eval(word).map(|w| (w, end)),
                    ("+", Some(Ok(_)) | None) => Ok((String::new(), end)),
                    (_, Some(v)) => v.clone().map(|v| (v, end)),
                    ("-", None) => self.eval(word).map(|v| (v, end)),
                    _ => Err(format!("${name}, which is not set in the start-up files")),
                }
            }
            _ => {
                let name: String = chars[at + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').collect();
                if name.is_empty() {
                    return Ok(("$".into(), at + 1));
                }
                let end = at + 1 + name.chars().count();
                match self.vars.get(&name) {
                    Some(v) => v.clone().map(|v| (v, end)),
                    None => Err(format!("${name}, which is not set in the start-up files")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
