//! The agents' state in the home (`~/.claude`, `~/.claude.json`, `~/.codex`,
//! `~/.pi`, the shared `~/.agents/skills`): sessions write it, and the
//! vendor binaries read it wherever they start next, an IDE extension
//! outside the sandbox included. What in it runs or is loaded as code is a
//! finding: the settings (`agent-settings`, judged by what in them runs
//! commands: `settings`), and skills, plugins, extensions, commands,
//! subagents, rules, instruction files, executables and scripts, the git
//! config and hooks of checkouts there, and files a setting names
//! (`agent-extension`). The rest (transcripts, logs, todos, caches) is left
//! out: the agents rewrite it all the time and never run it.

use super::super::kinds::Kind;
use super::super::walk::{Entry, Ty};
use super::{name, script_like, Ctx, Tag};
use std::path::{Path, PathBuf};

/// Directories (anywhere in an agent's state) whose every file is code or
/// instructions the agent loads.
const CODE_DIRS: &[&str] =
    &["skills", "plugins", "extensions", "commands", "agents", "hooks", "rules", "prompts", "output-styles", "themes", "tools", "bin", "scripts"];

/// Instruction files at the top of an agent's state (or Pi's `agent`).
const INSTRUCTIONS: &[&str] = &["CLAUDE.md", "AGENTS.md", "AGENTS.override.md", "SYSTEM.md", "APPEND_SYSTEM.md"];

/// Rewritten by the agent for each session and sourced only by the process
/// that wrote it (Claude Code's shell snapshots): never run later.
const OWN_SCRATCH: &[&str] = &["shell-snapshots"];

/// Settings files: the JSON at the top of `~/.claude` and Pi's `agent`,
/// Codex's TOML and JSON, `~/.claude.json`; not the credential stores.
fn settings_file(comps: &[&str]) -> bool {
    match comps {
        [".claude.json"] => true,
        [".claude", n] => n.ends_with(".json") && *n != ".credentials.json",
        [".codex", n] => (n.ends_with(".toml") || n.ends_with(".json")) && *n != "auth.json",
        [".pi", "agent", n] | [".pi", n] => n.ends_with(".json") && *n != "auth.json",
        _ => false,
    }
}

/// The tag of `rel` (a path relative to the home) in an agent's state.
fn agent_place(rel: &str, e: &Entry) -> Tag {
    let comps: Vec<&str> = rel.split('/').collect();
    let n = comps[comps.len() - 1];
    if e.unreadable.is_some() {
        return Tag::Kind(Kind::Unreadable);
    }
    if comps.contains(&"node_modules") {
        return Tag::Kind(Kind::DependencyTree);
    }
    // A git checkout (a plugin marketplace, a Pi package): what git runs
    // when the agent updates it; its data is left to git.
    if let Some(g) = comps.iter().position(|c| *c == ".git") {
        return match &comps[g + 1..] {
            ["config"] | ["config.worktree"] | ["hooks", ..] => Tag::Kind(Kind::AgentExtension),
            _ => Tag::Ignore,
        };
    }
    if e.ty == Ty::Dir || comps.iter().any(|c| OWN_SCRATCH.contains(c)) {
        return Tag::Ignore;
    }
    if settings_file(&comps) {
        return Tag::Kind(Kind::AgentSettings);
    }
    let top = matches!(comps.as_slice(), [_, _] | [".pi", "agent", _]);
    let code_dir = comps[1..comps.len() - 1].iter().any(|c| CODE_DIRS.contains(c)) || (comps.len() > 3 && comps[..3] == [".pi", "agent", "git"]);
    let code = comps[0] == ".agents" || code_dir || (top && INSTRUCTIONS.contains(&n));
    if code || e.ty == Ty::Symlink || (e.ty == Ty::File && (e.executable() || script_like(n))) {
        return Tag::Kind(Kind::AgentExtension);
    }
    Tag::Ignore
}

/// `~/x`, `$HOME/x`, `${HOME}/x` and absolute paths in a command, as paths.
fn named_paths(text: &str, home: &Path) -> Vec<PathBuf> {
    text.split(|c: char| c.is_whitespace() || "\"'`;|&()<>,=".contains(c))
        .filter(|t| !t.is_empty() && t.len() < 1024)
        .filter_map(|t| {
            let rest = ["~/", "$HOME/", "${HOME}/"].iter().find_map(|p| t.strip_prefix(p));
            match rest {
                Some(r) => Some(home.join(r)),
                None => t.starts_with('/').then(|| PathBuf::from(t)),
            }
        })
        .collect()
}

impl Ctx<'_> {
    /// Tags the agents' state under `roots` (each a directory or a file in
    /// `home`), then what their settings name there.
    pub(super) fn agents(&mut self, roots: &[PathBuf], home: &Path) {
        let home_key = super::shared_prefix(home);
        let mut settings = Vec::new();
        for root in roots {
            let prefix = super::shared_prefix(root);
            let range = self.listing.under(&prefix);
            let own = self.listing.index(&prefix).filter(|i| !range.contains(i));
            for i in own.into_iter().chain(range) {
                let (key, e) = &self.listing.entries[i];
                let Some(rel) = key.strip_prefix(&home_key).and_then(|r| r.strip_prefix('/')) else { continue };
                let tag = agent_place(rel, e);
                if tag == Tag::Kind(Kind::AgentSettings) && e.ty == Ty::File {
                    settings.push(key.clone());
                }
                self.out.tags[i] = Some(tag);
            }
        }
        // A setting or extension that is a symlink: what it leads to (in
        // the workspace, or elsewhere in the agents' state) is reviewed as
        // that kind, or a later change there would pass unseen.
        let mut linked = Vec::new();
        for root in roots {
            let prefix = super::shared_prefix(root);
            for i in self.listing.under(&prefix).chain(self.listing.index(&prefix)) {
                let (key, e) = &self.listing.entries[i];
                let (Some(Tag::Kind(k @ (Kind::AgentSettings | Kind::AgentExtension))), Some(t)) = (self.out.tags[i], e.target.as_deref()) else { continue };
                let abs = if t.starts_with('/') { t.to_string() } else { format!("{}/{t}", super::parent(key)) };
                let Some(abs) = super::resolve("", &abs).map(|r| format!("/{r}")) else { continue };
                linked.extend(self.key_of("", &abs).or(Some(abs)).map(|target| (target, k)));
            }
        }
        for (target, k) in linked {
            self.mark(&target, k);
        }
        // A hook or server a setting runs from the agent's own state is
        // reviewed as code, whatever its name.
        for key in settings {
            let Ok(bytes) = self.reader.read_capped(&key, super::super::settings::CAP) else { continue };
            self.out.contents.insert(key.clone(), Ok(std::rc::Rc::from(bytes.clone())));
            for item in super::super::settings::extract(name(&key), &bytes) {
                for p in named_paths(&item.shown, home) {
                    let abs = super::shared_prefix(&p);
                    let target = self.key_of("", &abs).unwrap_or(abs);
                    self.mark(&target, Kind::AgentExtension);
                }
            }
        }
    }

    /// `target` (a workspace key, or an absolute one in the agents' state
    /// or the shared dirs) reviewed as `kind`: over what the agents' pass
    /// left out there, else if more dangerous than its kind.
    fn mark(&mut self, target: &str, kind: Kind) {
        let Some(i) = self.listing.index(target).filter(|i| self.listing.entries[*i].1.ty != Ty::Dir) else { return };
        if self.out.tags[i] == Some(Tag::Ignore) && target.starts_with('/') {
            self.out.tags[i] = Some(Tag::Kind(kind));
        } else {
            self.tag(target, kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::walk::Meta;

    fn file(mode: u32) -> Entry {
        Entry { ty: Ty::File, meta: Meta { mode, ..Meta::default() }, target: None, unreadable: None, file_caps: false }
    }

    #[test]
    fn what_in_an_agents_state_is_code() {
        let kind = |rel: &str, mode: u32| match agent_place(rel, &file(mode)) {
            Tag::Kind(k) => Some(k),
            Tag::Ignore => None,
        };
        for (rel, want) in [
            (".claude.json", Some(Kind::AgentSettings)),
            (".claude/settings.json", Some(Kind::AgentSettings)),
            (".claude/settings.local.json", Some(Kind::AgentSettings)),
            (".claude/.credentials.json", None),
            (".codex/config.toml", Some(Kind::AgentSettings)),
            (".codex/auth.json", None),
            (".pi/agent/settings.json", Some(Kind::AgentSettings)),
            (".pi/agent/models.json", Some(Kind::AgentSettings)),
            (".claude/skills/pdf/SKILL.md", Some(Kind::AgentExtension)),
            (".claude/commands/deploy.md", Some(Kind::AgentExtension)),
            (".claude/agents/reviewer.md", Some(Kind::AgentExtension)),
            (".claude/plugins/marketplaces/m/plugin.json", Some(Kind::AgentExtension)),
            (".claude/plugins/marketplaces/m/.git/config", Some(Kind::AgentExtension)),
            (".claude/plugins/marketplaces/m/.git/hooks/post-merge", Some(Kind::AgentExtension)),
            (".claude/plugins/marketplaces/m/.git/packed-refs", None),
            (".claude/CLAUDE.md", Some(Kind::AgentExtension)),
            (".claude/projects/p/CLAUDE.md", None),
            (".claude/projects/p/x.jsonl", None),
            (".claude/statusline.sh", Some(Kind::AgentExtension)),
            (".claude/shell-snapshots/snapshot-bash-1.sh", None),
            (".claude/todos/t.json", None),
            (".codex/rules/default.rules", Some(Kind::AgentExtension)),
            (".codex/prompts/p.md", Some(Kind::AgentExtension)),
            (".codex/AGENTS.md", Some(Kind::AgentExtension)),
            (".codex/sessions/2026/x.jsonl", None),
            (".pi/agent/extensions/e.ts", Some(Kind::AgentExtension)),
            (".pi/agent/git/github.com/x/y/index.ts", Some(Kind::AgentExtension)),
            (".pi/agent/npm/node_modules/pkg/index.js", Some(Kind::DependencyTree)),
            (".pi/agent/AGENTS.md", Some(Kind::AgentExtension)),
            (".pi/agent/sessions/s.jsonl", None),
            (".agents/skills/x/SKILL.md", Some(Kind::AgentExtension)),
        ] {
            assert_eq!(kind(rel, 0o644), want, "{rel}");
        }
        assert_eq!(kind(".claude/data/run", 0o755), Some(Kind::AgentExtension), "an executable anywhere");
        assert_eq!(kind(".claude/data/run", 0o644), None);
    }

    #[test]
    fn paths_a_command_names() {
        let home = Path::new("/home/u");
        assert_eq!(
            named_paths("bash ~/.claude/data/run; node $HOME/.pi/x.js ${HOME}/y /abs/z rel", home),
            [PathBuf::from("/home/u/.claude/data/run"), "/home/u/.pi/x.js".into(), "/home/u/y".into(), "/abs/z".into()]
        );
    }
}
