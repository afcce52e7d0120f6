//! Unit tests of the configuration module, one file per area under
//! `tests/`, with the helpers they share here.

mod docs;
mod env;
mod file;
mod keys;
mod parse;
mod show;
mod trust;
mod values;

use std::path::{Path, PathBuf};

use super::*;

/// The path used in messages by the pure tests.
const FILE: &str = "/etc/agent-sandbox/config.json5";

fn env_of(pairs: &[(&str, &str)]) -> EnvMap {
    pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
}

/// Parses `src` as the default file with an empty environment.
fn parse(src: &str) -> Result<Effective, ConfigError> {
    from_source(Path::new(FILE), Some(src), &EnvMap::new())
}

fn parse_ok(src: &str) -> Effective {
    match parse(src) {
        Ok(eff) => eff,
        Err(e) => panic!("expected a valid config, got: {e}"),
    }
}

fn parse_err(src: &str) -> ConfigError {
    match parse(src) {
        Ok(eff) => panic!("expected an error, got {:?}", eff.config),
        Err(e) => e,
    }
}

/// With env, on top of an optional file text.
fn with_env(src: Option<&str>, pairs: &[(&str, &str)]) -> Result<Effective, ConfigError> {
    from_source(Path::new(FILE), src, &env_of(pairs))
}

fn at_file(line: usize, key: &'static str) -> At {
    At { origin: Origin::File { path: PathBuf::from(FILE), line }, key }
}

fn at_env(var: &str, key: &'static str) -> At {
    At { origin: Origin::Env { var: var.to_string() }, key }
}

fn file_source(line: usize) -> Source {
    Source::File { path: PathBuf::from(FILE), line }
}
