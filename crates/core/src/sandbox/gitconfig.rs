//! The curated global git config a session uses instead of the user's: the
//! identity copied from the user's config, `safe.directory` for the
//! workspace, credential helpers only when forges are allowed, and nothing
//! else (no aliases, hooks paths, pagers or ssh commands from outside).
//! The system config is ignored (`GIT_CONFIG_NOSYSTEM=1`).

use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitIdentity {
    pub name: Option<String>,
    pub email: Option<String>,
}

/// Reads `user.name` / `user.email` from git config text (the small subset
/// of the format identity lines use; anything odd is skipped, not guessed).
fn identity_from(text: &str) -> GitIdentity {
    let mut id = GitIdentity::default();
    let mut in_user = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('[') {
            in_user = line.trim_start_matches('[').trim_end_matches(']').trim().eq_ignore_ascii_case("user");
            continue;
        }
        if !in_user {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        let v = v.trim().trim_matches('"').to_string();
        if !valid_value(&v) {
            continue;
        }
        match k.trim().to_ascii_lowercase().as_str() {
            "name" => id.name = Some(v),
            "email" => id.email = Some(v),
            _ => {}
        }
    }
    id
}

fn valid_value(v: &str) -> bool {
    !v.is_empty() && !v.chars().any(|c| c.is_control() || c == '"' || c == '\\')
}

/// The last `core.hooksPath` value of a git config file's text, as
/// written (unquoted).
pub(crate) fn hooks_path_value(text: &str) -> Option<String> {
    let mut in_core = false;
    let mut found = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('[') {
            in_core = line.trim_start_matches('[').trim_end_matches(']').trim().eq_ignore_ascii_case("core");
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        if in_core && k.trim().eq_ignore_ascii_case("hookspath") {
            found = Some(v.trim().trim_matches('"').to_string());
        }
    }
    found
}

/// `core.hooksPath` of a git config as a path (relative values are
/// relative to the `worktree`; `~/` ones lie outside any workspace).
pub fn hooks_path(text: &str, worktree: &Path) -> Option<std::path::PathBuf> {
    let v = hooks_path_value(text)?;
    Some(if let Some(rest) = v.strip_prefix("~/") {
        // Outside the workspace by construction; the home is masked.
        std::path::PathBuf::from("/nonexistent").join(rest)
    } else {
        worktree.join(v)
    })
}

/// The user's identity from `~/.gitconfig`, then `~/.config/git/config`.
pub(crate) fn read_identity(home: &Path) -> GitIdentity {
    let mut id = GitIdentity::default();
    for rel in [".config/git/config", ".gitconfig"] {
        if let Ok(text) = std::fs::read_to_string(home.join(rel)) {
            let found = identity_from(&text);
            id.name = found.name.or(id.name);
            id.email = found.email.or(id.email);
        }
    }
    id
}

/// The curated config text.
pub fn render(identity: &GitIdentity, workspace: &Path, forge_helpers: &[(String, std::path::PathBuf)]) -> String {
    let mut s = String::from("# Written by agent-sandbox for this session; the user's global and system configs are not read.\n");
    if identity.name.is_some() || identity.email.is_some() {
        s.push_str("[user]\n");
        if let Some(n) = &identity.name {
            s.push_str(&format!("\tname = \"{n}\"\n"));
        }
        if let Some(e) = &identity.email {
            s.push_str(&format!("\temail = \"{e}\"\n"));
        }
    }
    s.push_str(&format!("[safe]\n\tdirectory = \"{}\"\n", escape(&workspace.to_string_lossy())));
    for (host, helper) in forge_helpers {
        // gh and glab both serve git through `auth git-credential`.
        s.push_str(&format!("[credential \"{host}\"]\n\thelper = \"!{} auth git-credential\"\n", escape(&helper.to_string_lossy())));
    }
    s
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn identity_only_from_user_section() {
        let text = "[core]\n\tname = nope\n[user]\n\tname = Ada Lovelace\n\temail = ada@example.org\n[alias]\n\tx = !rm -rf /\n";
        assert_eq!(identity_from(text), GitIdentity { name: Some("Ada Lovelace".into()), email: Some("ada@example.org".into()) });
    }

    #[test]
    fn rendered_config_is_whole() {
        let id = GitIdentity { name: Some("Ada".into()), email: Some("ada@example.org".into()) };
        let got = render(&id, Path::new("/workspaces/p"), &[("https://github.com".into(), PathBuf::from("/usr/bin/gh"))]);
        assert_eq!(
            got,
            "# Written by agent-sandbox for this session; the user's global and system configs are not read.\n\
             [user]\n\tname = \"Ada\"\n\temail = \"ada@example.org\"\n\
             [safe]\n\tdirectory = \"/workspaces/p\"\n\
             [credential \"https://github.com\"]\n\thelper = \"!/usr/bin/gh auth git-credential\"\n"
        );
    }

    #[test]
    fn no_forge_means_no_helpers() {
        let got = render(&GitIdentity::default(), Path::new("/w"), &[]);
        assert!(!got.contains("credential"));
        assert!(!got.contains("[user]"));
    }
}
