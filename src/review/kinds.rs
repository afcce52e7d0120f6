//! The kinds of place that run code later, outside the sandbox, as one
//! table: name, when it runs, where review finds it. The enum's order is the
//! danger order (most dangerous first); `docs/review.md` carries the same
//! table (a test keeps the two equal).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    SpecialFile,
    Unreadable,
    Devcontainer,
    GitPointer,
    GitConfig,
    GitHook,
    GitInternal,
    HookManager,
    DirenvApproval,
    EnvLoader,
    PythonStartup,
    VenvBin,
    SharedExecutable,
    Editor,
    PackageManager,
    PythonProject,
    RustProject,
    BuildFile,
    GitWorktreeFile,
    CiWorkflow,
    DependencyTree,
    BuildCache,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Info {
    pub kind: Kind,
    /// As in `--json` and the docs.
    pub name: &'static str,
    /// When it runs, in the user's words.
    pub when: &'static str,
    /// Where review finds it (place and content), for the docs.
    pub places: &'static str,
}

const fn row(kind: Kind, name: &'static str, when: &'static str, places: &'static str) -> Info {
    Info { kind, name, when, places }
}

/// Most dangerous first, in the enum's order.
pub const TABLE: &[Info] = &[
    row(Kind::SpecialFile, "special-file", "whenever a tool opens it: a symlink redirects it, a FIFO or device hangs or feeds it",
        "a symlink, FIFO, socket or device where any kind below (or a directory holding them: `.git`, `.git/hooks`, `.devcontainer`, `.vscode`, a venv, `node_modules`...) is expected; never followed"),
    row(Kind::Unreadable, "unreadable", "unknown: its contents cannot be reviewed",
        "a directory or file review cannot open (e.g. `chmod 000`), or a walk cut short (too deep, too many entries)"),
    row(Kind::Devcontainer, "devcontainer", "on the HOST (initializeCommand) or in the container at the next rebuild",
        "`.devcontainer/**` and `.devcontainer.json` anywhere, and what they name: `dockerComposeFile`, `build.dockerfile`, scripts in lifecycle commands"),
    row(Kind::GitPointer, "git-pointer", "on every git command: git reads its config and hooks from where it points",
        "a `.git` file (`gitdir:`), `commondir` and `gitdir` in any git dir"),
    row(Kind::GitConfig, "git-config", "on git commands (`core.fsmonitor` on every `git status`, which editors run on their own)",
        "`config` and `config.worktree` of every git dir (`.git`, `.git/modules/**`, `.git/worktrees/*`, nested and bare repositories, found by content), files they `include`, scripts their keys name"),
    row(Kind::GitHook, "git-hook", "on git commit, checkout, merge, rebase, push",
        "`hooks/*` of every git dir, every file in a `core.hooksPath` directory in the workspace, and scripts the hooks call"),
    row(Kind::GitInternal, "git-internal", "when git reads it (attributes, sparse-checkout, a rebase todo's `exec` lines, alternates)",
        "any other file in a git dir (`info/*`, `rebase-merge/*`, `objects/info/*`...), except objects, refs, logs and the index"),
    row(Kind::HookManager, "hook-manager", "on git commit, through the hook manager",
        "`.pre-commit-config.yaml`, `.husky/**`, `lefthook.yml`, `.lefthook/**`, `.githooks/**`, and scripts they call"),
    row(Kind::DirenvApproval, "direnv-approval", "on cd into the approved directory, with no prompt",
        "new or changed files in `~/.local/share/direnv/allow` (when tool data dirs are shared with sessions)"),
    row(Kind::EnvLoader, "env-loader", "on cd into the directory (direnv, mise, asdf, nix) or when a version manager picks a tool",
        "`.envrc`, `.env*`, `.tool-versions`, `.mise.toml`, `mise.toml`, `mise.*.toml`, `.mise/**`, `.config/mise/**`, `.rtx.toml`, `.python-version`, `.node-version`, `.nvmrc`, `.ruby-version`, `shell.nix`, `flake.nix`, and scripts they source"),
    row(Kind::PythonStartup, "python-startup", "at every start of Python (`.pth` import lines, sitecustomize, usercustomize)",
        "`*.pth` in any `site-packages`/`dist-packages`, `sitecustomize.py` and `usercustomize.py` anywhere"),
    row(Kind::VenvBin, "venv-bin", "when the venv is used or on PATH (its interpreter and commands)",
        "`bin/*` and `pyvenv.cfg` of every venv: a directory with `bin/python*` or `lib/python*/site-packages` (with or without `pyvenv.cfg`)"),
    row(Kind::SharedExecutable, "shared-executable", "when a tool outside runs it from its cache or data dir",
        "executable content (mode +x, scripts, `.pth`, libraries, symlinks) added or changed in `~/.cache` or `~/.local/share` when they are shared with sessions"),
    row(Kind::Editor, "editor", "when the editor opens the folder, runs a task or starts a debug session",
        "`.vscode/**`, `.idea/**`, `.zed/**`, `*.code-workspace`, `.nvim.lua`, `.nvimrc`, `.exrc`, and scripts tasks call"),
    row(Kind::PackageManager, "package-manager", "on npm/yarn/pnpm/bun install, run, exec (and `corepack yarn`)",
        "`package.json`, `.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.yarn/**` (not its cache), `.pnpmfile.cjs`, `pnpm-workspace.yaml`, `.pnp.cjs`, `.pnp.loader.mjs`, `bunfig.toml`, `deno.json(c)`, `node_modules/.bin/*`, and scripts they call"),
    row(Kind::PythonProject, "python-project", "on uv run/sync, pip install, pytest, tox, nox, pdb",
        "`pyproject.toml`, `setup.py`, `setup.cfg`, `tox.ini`, `pytest.ini`, `conftest.py`, `noxfile.py`, `uv.toml`, `.pdbrc` anywhere, and in-tree build backends"),
    row(Kind::RustProject, "rust-project", "on cargo build/run/test and rustup (build scripts, runners, toolchains)",
        "`Cargo.toml`, `build.rs`, `.cargo/**`, `rust-toolchain`, `rust-toolchain.toml` anywhere, and a toolchain `path` they name"),
    row(Kind::BuildFile, "build-file", "on make, just, task, cmake, gradle, maven, bazel, docker build/compose",
        "`Makefile`, `makefile`, `GNUmakefile`, `*.mk` and the files they `include`, `justfile`, `Taskfile.yml`, `CMakeLists.txt`, `*.cmake`, `meson.build`, `build.gradle(.kts)`, `settings.gradle(.kts)`, `gradlew`, `gradle-wrapper.properties`, `mvnw`, `.mvn/**`, `Rakefile`, Bazel files, `Dockerfile`, `Containerfile`, compose files, and scripts they call"),
    row(Kind::GitWorktreeFile, "git-worktree-file", "on git commands that use attributes' filters and diff drivers, and on submodule update",
        "`.gitattributes`, `.gitmodules`, `.lfsconfig` anywhere"),
    row(Kind::CiWorkflow, "ci-workflow", "on CI after a push, with the CI's secrets",
        "`.github/workflows/**`, `.github/actions/**`, `.gitlab-ci.yml`, `.circleci/**`, `.buildkite/**`, `azure-pipelines.yml`, `Jenkinsfile`, `.travis.yml`, `bitbucket-pipelines.yml`, `.drone.yml`, `.woodpecker/**`, and scripts they call"),
    row(Kind::DependencyTree, "dependency-tree", "when the project imports or requires the dependency",
        "everything else in `node_modules`, a venv (`site-packages`...), `.yarn/cache`"),
    row(Kind::BuildCache, "build-cache", "when the cached build product runs instead of a rebuild",
        "`__pycache__`, `target/` beside a `Cargo.toml`, `.pytest_cache`, `.mypy_cache`, `.ruff_cache`, `.tox`, `.nox`, `.gradle`, `.next`, `.turbo`, `.parcel-cache`, `.direnv`, `.cache`, `*.egg-info` in the workspace"),
];

impl Kind {
    pub fn info(self) -> &'static Info {
        &TABLE[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn when(self) -> &'static str {
        self.info().when
    }

    /// Bulk kinds are listed by count in the human report: a session that
    /// builds or installs changes thousands of files there.
    pub fn bulk(self) -> bool {
        matches!(self, Kind::DependencyTree | Kind::BuildCache | Kind::SharedExecutable)
    }

    /// Files of this kind run other files they name (scripts, includes):
    /// those are reviewed as this kind too.
    pub fn follows_references(self) -> bool {
        !matches!(
            self,
            Kind::SpecialFile | Kind::Unreadable | Kind::GitInternal | Kind::DirenvApproval | Kind::SharedExecutable | Kind::DependencyTree | Kind::BuildCache
        )
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        TABLE.iter().find(|i| i.name == name).map(|i| i.kind)
    }

    pub fn all() -> impl Iterator<Item = Kind> {
        TABLE.iter().map(|i| i.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_enum_and_serde_names() {
        for (i, info) in TABLE.iter().enumerate() {
            assert_eq!(info.kind as usize, i, "{} out of order", info.name);
            let json = serde_json::to_string(&info.kind).unwrap();
            assert_eq!(json, format!("\"{}\"", info.name));
        }
        assert_eq!(Kind::all().count(), Kind::BuildCache as usize + 1);
    }

    /// docs/review.md lists exactly the kinds of this table, in this order.
    #[test]
    fn the_docs_table_lists_every_kind_in_order() {
        let docs = include_str!("../../docs/review.md");
        let listed: Vec<&str> = docs
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once("` |").map(|(name, _)| name))
            .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
            .collect();
        let names: Vec<&str> = TABLE.iter().map(|i| i.name).collect();
        assert_eq!(listed, names);
        for i in TABLE {
            let row = format!("| `{}` | {} | {} |", i.name, i.places, i.when);
            assert!(docs.lines().any(|l| l == row), "docs/review.md lacks the row\n{row}");
        }
    }
}
