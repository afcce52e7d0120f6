//! Which paths under the home (relative) a session may see: the rule the
//! launcher applies to its sample of the outer home (`facts`) and the
//! inside check applies to the session's home (`checks::home`), kept here
//! so both read the same list and neither imports the other.

use crate::agents::Agent;
use crate::sandbox::plan::{FORGE_DIRS, MASKED_DOTFILES, SHARED_HOME_DIRS, TOOL_DIRS};

/// Paths under the home (relative) a session of `agent` may see: the
/// agent's state, shared skills and caches, forge stores, the masked
/// dotfiles, the curated git config, plus `extra`.
pub(super) fn allowed_rel(agent: Option<Agent>, extra: &[String]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    if let Some(a) = agent {
        v.extend(a.state().iter().map(|(p, _)| p.to_string()));
    }
    v.extend(SHARED_HOME_DIRS.iter().chain(TOOL_DIRS).chain(FORGE_DIRS).chain(MASKED_DOTFILES).map(|s| s.to_string()));
    v.push(".gitconfig".into());
    v.extend(extra.iter().cloned());
    v
}

/// Whether `rel` is allowed itself (Some(true)), lies on the way to an
/// allowed path (Some(false): look inside), or is not allowed (None).
pub(super) fn classify(rel: &str, allowed: &[String]) -> Option<bool> {
    if allowed.iter().any(|a| a == rel) {
        Some(true)
    } else if allowed.iter().any(|a| a.starts_with(&format!("{rel}/"))) {
        Some(false)
    } else {
        None
    }
}
