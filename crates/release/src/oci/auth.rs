//! Registry credentials: where they come from and which one applies.
//!
//! Sources, first match wins:
//!  1. `AGENT_SANDBOX_REGISTRY_USERNAME` + `AGENT_SANDBOX_REGISTRY_PASSWORD`
//!     (or `AGENT_SANDBOX_REGISTRY_TOKEN`, a bearer token), for the registry
//!     being pushed to;
//!  2. `DEVCONTAINERS_OCI_AUTH` (`host|user|secret,...`, the Dev Containers
//!     CLI's variable);
//!  3. the credential files podman and docker write on `login`, in this
//!     order: `$REGISTRY_AUTH_FILE`, `$XDG_RUNTIME_DIR/containers/auth.json`,
//!     `~/.config/containers/auth.json`, `$DOCKER_CONFIG/config.json` or
//!     `~/.docker/config.json` — per file: `credHelpers[host]`, then
//!     `auths[host]`, then `credsStore` (helpers are
//!     `docker-credential-NAME get`);
//!  4. `GITHUB_TOKEN` for `ghcr.io` (as the Dev Containers CLI does);
//!  5. anonymous.
//!
//! `lookup_*` are pure (environment and file contents in, decision out);
//! [`resolve`] reads the files and runs a helper.

use super::error::OciError;
use super::reference::Registry;
use base64::Engine as _;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::env_vars::{
    DEVCONTAINERS_OCI_AUTH, DOCKER_CONFIG, GITHUB_TOKEN, HOME, REGISTRY_AUTH_FILE, REGISTRY_PASSWORD, REGISTRY_TOKEN, REGISTRY_USERNAME, XDG_RUNTIME_DIR,
};

/// The environment, as a plain map (tests pass their own).
pub type Env = BTreeMap<String, String>;

/// A credential for one registry. `Debug` never shows a secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    Anonymous,
    Basic { username: String, password: String },
    Bearer(String),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Anonymous => f.write_str("Anonymous"),
            Credential::Basic { username, .. } => write!(f, "Basic({username}, ***)"),
            Credential::Bearer(_) => f.write_str("Bearer(***)"),
        }
    }
}

/// A credential and where it came from (shown in logs, never the secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub credential: Credential,
    pub source: String,
}

/// What one credential file says about a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileLookup {
    Credential(Found),
    /// Ask `docker-credential-<helper> get`.
    Helper {
        helper: String,
        source: String,
    },
    NotFound,
}

/// The credential files to look at, in order (they need not exist).
pub(crate) fn candidate_files(env: &Env) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(f) = env.get(REGISTRY_AUTH_FILE) {
        files.push(PathBuf::from(f));
    }
    if let Some(d) = env.get(XDG_RUNTIME_DIR) {
        files.push(Path::new(d).join("containers/auth.json"));
    }
    let home = env.get(HOME).map(PathBuf::from);
    if let Some(h) = &home {
        files.push(h.join(".config/containers/auth.json"));
    }
    match env.get(DOCKER_CONFIG) {
        Some(d) => files.push(Path::new(d).join("config.json")),
        None => files.extend(home.map(|h| h.join(".docker/config.json"))),
    }
    files
}

/// The names a registry may be filed under in a credential file.
fn aliases(registry: &Registry) -> Vec<String> {
    let name = registry.to_string();
    if name == "docker.io" || name == "index.docker.io" || name == "registry-1.docker.io" {
        vec!["docker.io".into(), "index.docker.io".into(), "registry-1.docker.io".into()]
    } else {
        vec![name]
    }
}

/// `https://host:port/v1/` → `host:port`.
fn normalise_key(key: &str) -> String {
    let k = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    k.split('/').next().unwrap_or(k).to_ascii_lowercase()
}

/// Credentials from the environment variables (sources 1, 2 and 4).
pub(crate) fn lookup_env(registry: &Registry, env: &Env) -> Option<Found> {
    if let Some(token) = env.get(REGISTRY_TOKEN).filter(|t| !t.is_empty()) {
        return Some(Found { credential: Credential::Bearer(token.clone()), source: REGISTRY_TOKEN.into() });
    }
    if let (Some(u), Some(p)) = (env.get(REGISTRY_USERNAME), env.get(REGISTRY_PASSWORD)) {
        return Some(Found {
            credential: Credential::Basic { username: u.clone(), password: p.clone() },
            source: format!("{REGISTRY_USERNAME}/{REGISTRY_PASSWORD}"),
        });
    }
    let names = aliases(registry);
    if let Some(list) = env.get(DEVCONTAINERS_OCI_AUTH) {
        for entry in list.split(',') {
            let mut parts = entry.splitn(3, '|');
            if let (Some(host), Some(user), Some(secret)) = (parts.next(), parts.next(), parts.next()) {
                if names.iter().any(|n| *n == normalise_key(host)) {
                    return Some(Found {
                        credential: Credential::Basic { username: user.into(), password: secret.into() },
                        source: DEVCONTAINERS_OCI_AUTH.into(),
                    });
                }
            }
        }
    }
    None
}

/// `GITHUB_TOKEN` for ghcr.io (source 4), after the files.
pub(crate) fn lookup_github(registry: &Registry, env: &Env) -> Option<Found> {
    let token = env.get(GITHUB_TOKEN).filter(|t| !t.is_empty())?;
    (registry.to_string() == "ghcr.io")
        .then(|| Found { credential: Credential::Basic { username: "USERNAME".into(), password: token.clone() }, source: GITHUB_TOKEN.into() })
}

/// What the credential file at `path` (with `contents`) says about `registry`.
pub(crate) fn lookup_file(registry: &Registry, path: &Path, contents: &str) -> Result<FileLookup, OciError> {
    let bad = |why: String| OciError::CredentialFile { path: path.to_owned(), why };
    let doc: serde_json::Value = serde_json::from_str(contents).map_err(|e| bad(format!("not JSON ({e})")))?;
    let names = aliases(registry);
    let source = path.display().to_string();
    let find = |section: &str| -> Option<&serde_json::Value> {
        let map = doc.get(section)?.as_object()?;
        map.iter().find(|(k, _)| names.contains(&normalise_key(k))).map(|(_, v)| v)
    };
    if let Some(helper) = find("credHelpers").and_then(|v| v.as_str()) {
        return Ok(FileLookup::Helper { helper: helper.into(), source });
    }
    if let Some(entry) = find("auths") {
        if let Some(token) = entry.get("registrytoken").and_then(|v| v.as_str()) {
            return Ok(FileLookup::Credential(Found { credential: Credential::Bearer(token.into()), source }));
        }
        if let Some(encoded) = entry.get("auth").and_then(|v| v.as_str()).filter(|s| !s.is_empty()) {
            let raw =
                base64::engine::general_purpose::STANDARD.decode(encoded.trim()).map_err(|_| bad(format!("the `auth` entry for {registry} is not base64")))?;
            let text = String::from_utf8(raw).map_err(|_| bad(format!("the `auth` entry for {registry} is not UTF-8")))?;
            let (u, p) = text.split_once(':').ok_or_else(|| bad(format!("the `auth` entry for {registry} is not `user:password`")))?;
            return Ok(FileLookup::Credential(Found { credential: Credential::Basic { username: u.into(), password: p.into() }, source }));
        }
        if let (Some(u), Some(p)) = (entry.get("username").and_then(|v| v.as_str()), entry.get("password").and_then(|v| v.as_str())) {
            return Ok(FileLookup::Credential(Found { credential: Credential::Basic { username: u.into(), password: p.into() }, source }));
        }
    }
    if let Some(store) = doc.get("credsStore").and_then(|v| v.as_str()).filter(|s| !s.is_empty()) {
        return Ok(FileLookup::Helper { helper: store.into(), source });
    }
    Ok(FileLookup::NotFound)
}

/// Parses a credential helper's `get` answer.
pub(crate) fn parse_helper_output(out: &str) -> Option<Credential> {
    let v: serde_json::Value = serde_json::from_str(out).ok()?;
    let user = v.get("Username")?.as_str()?;
    let secret = v.get("Secret")?.as_str()?;
    Some(if user == "<token>" { Credential::Bearer(secret.into()) } else { Credential::Basic { username: user.into(), password: secret.into() } })
}

/// Finds the credential for `registry`: reads the candidate files and runs
/// a credential helper when a file names one.
pub fn resolve(registry: &Registry, env: &Env) -> Result<Found, OciError> {
    if let Some(found) = lookup_env(registry, env) {
        return Ok(found);
    }
    for path in candidate_files(env) {
        let contents = match std::fs::read_to_string(&path) {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(OciError::CredentialFile { path, why: e.to_string() }),
        };
        match lookup_file(registry, &path, &contents)? {
            FileLookup::Credential(found) => return Ok(found),
            FileLookup::Helper { helper, source } => {
                if let Some(credential) = run_helper(&helper, registry)? {
                    return Ok(Found { credential, source: format!("{source} (docker-credential-{helper})") });
                }
            }
            FileLookup::NotFound => {}
        }
    }
    Ok(lookup_github(registry, env).unwrap_or(Found { credential: Credential::Anonymous, source: "anonymous".into() }))
}

/// `docker-credential-<helper> get`; `None` when it has nothing for us.
fn run_helper(helper: &str, registry: &Registry) -> Result<Option<Credential>, OciError> {
    let err = |why: String| OciError::CredentialHelper { helper: helper.into(), registry: registry.to_string(), why };
    if !helper.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) {
        return Err(err("the helper name has characters a helper name cannot have".into()));
    }
    let mut child = Command::new(format!("docker-credential-{helper}"))
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| err(format!("cannot run it ({e})")))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(registry.to_string().as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| err(e.to_string()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        // "credentials not found in native keychain": nothing stored.
        let text = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        if text.to_ascii_lowercase().contains("not found") {
            return Ok(None);
        }
        return Err(err(text.trim().to_owned()));
    }
    parse_helper_output(&stdout).map(Some).ok_or_else(|| err("its answer is not the expected JSON".into()))
}

#[cfg(test)]
mod tests;
