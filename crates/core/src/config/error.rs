//! Configuration errors. Each one says where the bad value is (file and
//! line, or environment variable), which key it belongs to, what is wrong,
//! and where useful how to fix it. Not responsible for detecting errors.

use std::fmt;
use std::path::PathBuf;

/// Where a value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A line (1-based) of the config file.
    File { path: PathBuf, line: usize },
    /// An environment variable.
    Env { var: String },
}

/// A key at an origin: the prefix of most error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub origin: Origin,
    /// The camelCase key.
    pub key: &'static str,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::File { path, line } => {
                write!(f, "{}:{line}: key \"{}\"", path.display(), self.key)
            }
            Origin::Env { var } => write!(f, "{var} (key \"{}\")", self.key),
        }
    }
}

/// An optional fix, printed after the message as `; fix`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hint(pub Option<String>);

impl Hint {
    pub fn none() -> Hint {
        Hint(None)
    }

    pub fn new(text: impl Into<String>) -> Hint {
        Hint(Some(text.into()))
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(text) => write!(f, "; {text}"),
            None => Ok(()),
        }
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file exists but cannot be read (permissions, a directory, ...).
    #[error("{}: cannot read the config file: {message}{hint}", file.display())]
    Unreadable { file: PathBuf, message: String, hint: Hint },

    /// The default config file could be changed by someone other than root.
    #[error("{}: not trusted: {problem}; fix: {fix}", file.display())]
    Untrusted { file: PathBuf, problem: String, fix: String },

    /// Not valid JSON5 (or not UTF-8, or nested absurdly deep).
    #[error("{}:{line}:{column}: JSON5 syntax error: {message}", file.display())]
    Syntax { file: PathBuf, line: usize, column: usize, message: String },

    /// The top-level value is not an object.
    #[error("{}:{line}: the top level must be an object {{ ... }}, found {found}", file.display())]
    NotAnObject { file: PathBuf, line: usize, found: String },

    #[error("{}:{line}: unknown key \"{key}\"{}; valid keys: {valid}",
        file.display(), did_you_mean(suggestion))]
    UnknownKey { file: PathBuf, line: usize, key: String, suggestion: Option<&'static str>, valid: String },

    /// JSON5 keeps the last of duplicate keys; a reader may see the first.
    #[error("{}:{line}: key \"{key}\" appears again (first on line {first_line}); keep one", file.display())]
    DuplicateKey { file: PathBuf, line: usize, key: String, first_line: usize },

    #[error("{at}: expected {expected}, found {found}{hint}")]
    WrongType { at: At, expected: &'static str, found: String, hint: Hint },

    /// An environment boolean that is not 1/0/true/false/yes/no/on/off.
    #[error("{at}: {value:?} is not a boolean; use 1/0, true/false, yes/no or on/off")]
    BadBool { at: At, value: String },

    #[error("{at}: {value} is not a valid port (1-65535)")]
    BadPort { at: At, value: String },

    #[error("{at}: {value:?} is not accepted: {reason}")]
    BadAddress { at: At, value: String, reason: &'static str },

    #[error("{at}: {value:?} is not accepted: {reason}{hint}")]
    BadPath { at: At, value: String, reason: &'static str, hint: Hint },

    #[error("{at}: {value:?} is not accepted: {reason}")]
    BadDomain { at: At, value: String, reason: &'static str },

    #[error("{at}: {value:?} is not an environment variable name (letters, digits and _, not starting with a digit)")]
    BadEnvName { at: At, value: String },

    #[error("{at}: {name} can never be passed into the sandbox (it would undo an isolation defence); remove it")]
    NeverPassed { at: At, name: String },

    #[error("{at}: port {port} is in both localPorts and callbackPorts; a port relays one way only, remove it from one list")]
    PortConflict { at: At, port: u16 },

    #[error("{var}: the value is not valid UTF-8")]
    NotUtf8 { var: String },
}

fn did_you_mean(suggestion: &Option<&'static str>) -> String {
    match suggestion {
        Some(name) => format!(" (did you mean \"{name}\"?)"),
        None => String::new(),
    }
}
