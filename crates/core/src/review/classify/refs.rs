//! What the files of a kind name, reviewed as that kind: the scripts a
//! hook, a lifecycle command, a recipe, a task or a workflow runs; a
//! Makefile's includes; a devcontainer's compose file and Dockerfile; a
//! toolchain `path`; an in-tree Python build backend. Three levels deep (a
//! hook calling a script calling a script).
//!
//! Structured commands (devcontainer lifecycle commands, `package.json`
//! scripts, includes, named files) count any file they name; free text
//! (scripts, configs) counts what looks runnable (mode +x, a script
//! extension, or not a regular file), so a README a workflow mentions is
//! not made a workflow.

use super::super::kinds::Kind;
use super::super::walk::Ty;
use super::{name, parent, script_like, Ctx, Tag};

const DEPTH: usize = 3;
/// Words after which the next word is a file that runs.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "fish",
    ".",
    "source",
    "exec",
    "node",
    "deno",
    "bun",
    "python",
    "python3",
    "perl",
    "ruby",
    "php",
    "lua",
    "make",
    "-f",
    "--file",
    "--rcfile",
    "--init-file",
];
const MAX_TOKENS: usize = 20_000;
const LIFECYCLE: &[&str] = &["initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand", "postAttachCommand"];

/// What a file names.
#[derive(Default)]
struct Named {
    /// Command text: any file it names counts.
    commands: Vec<String>,
    /// Free text: only runnable-looking files count.
    text: Option<String>,
    /// Paths named outright (relative to the file's directory).
    files: Vec<String>,
    /// Directories whose whole content runs.
    trees: Vec<String>,
}

/// Words of a command or script that may be paths.
pub(super) fn tokens(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_whitespace() || "\"'`;|&()<>,[]{}=:".contains(c)).filter(|t| !t.is_empty() && t.len() < 1024).take(MAX_TOKENS).collect()
}

fn is_makefile(n: &str) -> bool {
    matches!(n, "Makefile" | "makefile" | "GNUmakefile") || n.ends_with(".mk")
}

impl Ctx<'_> {
    pub(super) fn references(&mut self) {
        let mut queue: Vec<(String, Kind, usize)> = self
            .listing
            .under("")
            .filter_map(|i| match (self.out.tags[i], &self.listing.entries[i]) {
                (Some(Tag::Kind(kind)), (k, e)) if kind.follows_references() && e.ty == Ty::File => Some((k.clone(), kind, 0)),
                _ => None,
            })
            .collect();
        while let Some((key, kind, depth)) = queue.pop() {
            for (target, tree) in self.named_by(&key, kind) {
                if tree {
                    self.tag_tree(&target, kind);
                } else if self.tag(&target, kind) && depth + 1 < DEPTH && self.is(&target, Ty::File) {
                    queue.push((target, kind, depth + 1));
                }
            }
        }
    }

    /// The workspace paths `key` names: (path, whole tree?).
    fn named_by(&mut self, key: &str, kind: Kind) -> Vec<(String, bool)> {
        let Some(text) = self.text(key) else { return Vec::new() };
        // Paths written relative to the workspace's own variables.
        let text = text
            .replace("${localWorkspaceFolder}", &self.ws)
            .replace("${containerWorkspaceFolder}", &self.ws)
            .replace("$(dirname \"$0\")", ".")
            .replace("$(dirname -- \"$0\")", ".")
            .replace("$(dirname $0)", ".")
            .replace("${0%/*}", ".");
        let text = flatten_substitutions(&text);
        let named = self.what_it_names(key, kind, &text);
        let dir = parent(key).to_string();
        let mut bases = vec![dir.clone(), String::new()];
        bases.extend(self.git_worktree_of(key));
        let mut out = Vec::new();
        for f in named.files.iter().filter_map(|f| self.key_of(&dir, f)) {
            out.push((f, false));
        }
        for t in named.trees.iter().filter_map(|t| self.key_of(&dir, t)) {
            out.push((t, true));
        }
        for cmd in &named.commands {
            out.extend(self.paths_in(cmd, &bases, false).into_iter().map(|p| (p, false)));
        }
        if let Some(t) = &named.text {
            out.extend(self.paths_in(t, &bases, true).into_iter().map(|p| (p, false)));
        }
        out.retain(|(p, _)| p != key && !p.is_empty());
        out
    }

    fn what_it_names(&self, key: &str, kind: Kind, text: &str) -> Named {
        let n = name(key);
        let json = n.ends_with(".json");
        let mut named = Named::default();
        if kind == Kind::Devcontainer && json {
            if let Ok(v) = crate::jsonc::parse_value(text) {
                devcontainer(&v, &mut named);
                return named;
            }
        } else if n == "package.json" {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
                let scripts = v.get("scripts").and_then(|s| s.as_object());
                named.commands.extend(scripts.into_iter().flatten().filter_map(|(_, c)| c.as_str().map(str::to_string)));
                return named;
            }
        } else if is_makefile(n) {
            named.files.extend(makefile_includes(text));
        } else if n == "rust-toolchain.toml" {
            named.trees.extend(toml_values(text, "path"));
        } else if n == "pyproject.toml" {
            named.files.extend(backend_modules(text));
        }
        // A compose file a devcontainer uses: what it names is used on the
        // host (env files, build contexts' Dockerfiles, bind sources).
        if kind == Kind::Devcontainer && (n.ends_with(".yml") || n.ends_with(".yaml") || json) {
            named.commands.push(text.to_string());
        } else {
            named.text = Some(text.to_string());
        }
        named
    }

    /// The work tree of the git dir `key` lies in: hooks and git's
    /// commands run from there.
    fn git_worktree_of(&self, key: &str) -> Option<String> {
        self.git_dirs
            .iter()
            .filter(|g| g.key.is_empty() || key.starts_with(&format!("{}/", g.key)))
            .max_by_key(|g| g.key.len())
            .and_then(|g| g.worktree.clone())
    }

    /// Paths in `text` that exist in the workspace, relative to any of
    /// `bases` or to a directory the text `cd`s into.
    fn paths_in(&self, text: &str, bases: &[String], runnable_only: bool) -> Vec<String> {
        let toks = tokens(text);
        let mut bases = bases.to_vec();
        for w in toks.windows(2).filter(|w| w[0] == "cd") {
            for b in bases.clone() {
                if let Some(d) = self.key_of(&b, w[1]).filter(|d| self.is(d, Ty::Dir)) {
                    bases.push(d);
                }
            }
        }
        let mut out = Vec::new();
        for (i, tok) in toks.iter().enumerate() {
            // What an interpreter is given runs, whatever it looks like.
            let interpreted = i > 0 && INTERPRETERS.contains(&name(toks[i - 1]));
            for t in spellings(tok) {
                for b in &bases {
                    let Some(k) = self.key_of(b, t) else { continue };
                    let Some(e) = self.entry(&k) else { continue };
                    let runnable = interpreted || e.ty != Ty::File || e.executable() || script_like(name(&k));
                    if e.ty != Ty::Dir && (runnable || !runnable_only) && !out.contains(&k) {
                        out.push(k);
                    }
                }
            }
        }
        out
    }
}

/// `$(...)` as one word, `$SUB`: review cannot run it, and what follows
/// (`$(git rev-parse --show-toplevel)/x`) is then one word `$SUB/x` after
/// the word before (`sh`). What was inside is kept, on lines of its own.
fn flatten_substitutions(text: &str) -> String {
    let (mut out, mut inner) = (String::with_capacity(text.len()), String::new());
    let (mut depth, mut chars) = (0usize, text.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                if depth == 0 {
                    out.push_str("$SUB");
                }
                depth += 1;
            }
            '(' if depth > 0 => {
                depth += 1;
                inner.push(c);
            }
            ')' if depth > 0 => {
                depth -= 1;
                inner.push(if depth == 0 { '\n' } else { c });
            }
            c if depth > 0 => inner.push(c),
            c => out.push(c),
        }
    }
    out.push('\n');
    out + &inner
}

/// The ways a word may name a workspace path: as written, and with a
/// leading variable (`$ROOT/x`, `${DIR}/x`) or command substitution
/// (`$(git rev-parse --show-toplevel)/x`, split into `/x`) taken for a
/// directory review cannot evaluate: the rest is tried from each base.
fn spellings(t: &str) -> Vec<&str> {
    let mut v = vec![t];
    if let Some(rest) = t.strip_prefix('$').and_then(|r| r.split_once('/')).map(|(_, r)| r) {
        v.push(rest);
    }
    if let Some(rest) = t.strip_prefix('/') {
        v.push(rest);
    }
    v
}

/// A devcontainer.json's lifecycle commands and the files it names.
fn devcontainer(v: &serde_json::Value, named: &mut Named) {
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    for key in LIFECYCLE {
        if let Some(c) = v.get(key) {
            strings(c, &mut named.commands);
        }
    }
    for f in [v.get("dockerComposeFile"), v.get("dockerFile"), v.pointer("/build/dockerfile")].into_iter().flatten() {
        strings(f, &mut named.files);
    }
}

/// `include`, `-include` and `sinclude` lines (variables left out).
fn makefile_includes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim_start();
        let rest = ["include ", "-include ", "sinclude "].iter().find_map(|p| l.strip_prefix(p));
        if let Some(rest) = rest {
            out.extend(rest.split_whitespace().filter(|t| !t.contains('$')).map(str::to_string));
        }
    }
    out
}

/// The values of `key = "..."` lines of a TOML file.
fn toml_values(text: &str, key: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.trim() == key)
        .flat_map(|(_, v)| v.split(',').map(|s| s.trim().trim_matches(['[', ']', ' ']).trim_matches(['"', '\'']).to_string()).collect::<Vec<_>>())
        .filter(|v| !v.is_empty())
        .collect()
}

/// An in-tree PEP 517 backend: `build-backend = "pkg.mod:obj"` found in a
/// `backend-path` directory.
fn backend_modules(text: &str) -> Vec<String> {
    let dirs = toml_values(text, "backend-path");
    let Some(backend) = toml_values(text, "build-backend").into_iter().next() else { return Vec::new() };
    let module = backend.split(':').next().unwrap_or("").replace('.', "/");
    dirs.iter().flat_map(|d| [format!("{d}/{module}.py"), format!("{d}/{module}/__init__.py")]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_toml_values_and_backends() {
        assert_eq!(makefile_includes("all:\ninclude a.mk b.mk\n-include $(X).mk\n  sinclude c/d.mk\n"), ["a.mk", "b.mk", "c/d.mk"]);
        assert_eq!(toml_values("[toolchain]\npath = \"./tc\"\n", "path"), ["./tc"]);
        assert_eq!(
            backend_modules("[build-system]\nrequires = []\nbuild-backend = \"backend.build:api\"\nbackend-path = [\"_custom\"]\n"),
            ["_custom/backend/build.py", "_custom/backend/build/__init__.py"]
        );
        assert_eq!(tokens("cd tools && ./run.sh --x=\"a b\""), ["cd", "tools", "./run.sh", "--x", "a", "b"]);
    }
}
