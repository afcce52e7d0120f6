//! The kinds of place that run code later, outside the sandbox, as one
//! table: name, when it runs, where review finds it. The enum's order is the
//! danger order (most dangerous first); `docs/review.md` carries the same
//! table (a test keeps the two equal).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    SetId,
    SpecialFile,
    Unreadable,
    Devcontainer,
    DevEnvironment,
    GitPointer,
    GitConfig,
    GitHook,
    AgentSettings,
    AgentExtension,
    GitInternal,
    HookManager,
    DirenvApproval,
    EnvLoader,
    ShellInit,
    PythonStartup,
    VenvBin,
    SharedExecutable,
    Executable,
    Editor,
    ToolConfig,
    PackageManager,
    PythonProject,
    RubyProject,
    PhpProject,
    GoModule,
    RustProject,
    DotnetProject,
    JvmBuild,
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
pub(crate) const TABLE: &[Info] = &[
    row(Kind::SetId, "set-id", "whenever another account runs it: with its owner's or group's ids (root's, for a file root owns), or the capabilities it carries",
        "any file in the workspace with the setuid or setgid bit, or an executable one with a file capability (`security.capability`), whoever made it and whatever else it is (sessions cannot set the bits: this finds what came otherwise)"),
    row(Kind::SpecialFile, "special-file", "whenever a tool opens it: a symlink redirects it, a FIFO or device hangs or feeds it",
        "a symlink, FIFO, socket or device where any kind below (or a directory holding them: `.git`, `.git/hooks`, `.devcontainer`, `.vscode`, a venv, `node_modules`...) is expected; never followed"),
    row(Kind::Unreadable, "unreadable", "unknown: its contents cannot be reviewed",
        "a directory or file review cannot open (e.g. `chmod 000`), or a walk cut short (too deep, too many entries)"),
    row(Kind::Devcontainer, "devcontainer", "on the HOST (initializeCommand) or in the container at the next rebuild",
        "`.devcontainer/**` and `.devcontainer.json` anywhere, and what they name: `dockerComposeFile`, `build.dockerfile`, scripts in lifecycle commands"),
    row(Kind::DevEnvironment, "dev-environment", "when you start the environment it defines, often on the host: vagrant up, tilt up, devbox shell, skaffold dev, garden, foreman or heroku local, a cloud IDE's start",
        "`Vagrantfile`, `Tiltfile`, `devbox.json`, `skaffold.y(a)ml`, `garden.yml`, `devfile.yaml`, `.gitpod.yml`, `.gitpod.Dockerfile`, `.replit`, `replit.nix`, `Procfile(.*)` anywhere, and scripts they call"),
    row(Kind::GitPointer, "git-pointer", "on every git command: git reads its config and hooks from where it points",
        "a `.git` file (`gitdir:`), `commondir` and `gitdir` in any git dir"),
    row(Kind::GitConfig, "git-config", "on git commands (`core.fsmonitor` on every `git status`, which editors run on their own)",
        "`config` and `config.worktree` of every git dir (`.git`, `.git/modules/**`, `.git/worktrees/*`, nested and bare repositories, found by content), files they `include`, scripts their keys name"),
    row(Kind::GitHook, "git-hook", "on git commit, checkout, merge, rebase, push",
        "`hooks/*` of every git dir, every file in a `core.hooksPath` directory in the workspace, and scripts the hooks call"),
    row(Kind::AgentSettings, "agent-settings", "wherever the agent starts next, an IDE extension starting the vendor binary outside the sandbox included: hooks on its tool calls, MCP servers, notify, helper and status-line commands, environment, plugins, permissions",
        "each agent's settings in the home: `~/.claude.json`, the `.json` files at the top of `~/.claude` (`settings.json`), `~/.codex` (`config.toml`: `notify`, `mcp_servers`, profiles, providers, projects' trust) and `~/.pi/agent` (`settings.json`: packages, extensions, skills; `models.json`), judged by the keys that run or allow commands (`hooks`, `mcpServers`, `statusLine`, `apiKeyHelper` and every `*Helper`/`*Command`/`command`, `notify`, `env`, plugins, marketplaces, permissions, sandbox and approval modes, URLs, trust), each added or removed value named against the baseline (credentials shown as `<hidden>`), and what a symlinked settings file leads to; in the workspace `.claude/settings*.json`, `.mcp.json`, `*.mcp.json`, `mcp.json`, `.codex/config.toml`, `.pi/settings.json`, `.gemini/settings.json`, `.continue/config.*`, `opencode.json(c)`, `.aider.conf.yml`, and scripts they call"),
    row(Kind::AgentExtension, "agent-extension", "when the agent loads it, wherever it starts next: skills, plugins, extensions, slash commands, subagents, hooks' scripts, rules, instructions",
        "in `~/.claude`, `~/.codex`, `~/.pi` and the shared `~/.agents/skills`: every file under a `skills`, `plugins`, `extensions`, `commands`, `agents`, `hooks`, `rules`, `prompts`, `output-styles`, `themes`, `tools`, `bin`, `scripts` or Pi's `git` directory, instruction files (`CLAUDE.md`, `AGENTS.md`, `AGENTS.override.md`, `SYSTEM.md`, `APPEND_SYSTEM.md`), every executable, script or symlink, the config and hooks of git checkouts there (plugin marketplaces), and any file (there or in the workspace) a setting's command names; in the workspace `.claude/**`, `.codex/**`, `.pi/**`, `.agents/**`, `.cursor/**`, `.gemini/**`, `.roo/**`, `.continue/**`, `.amazonq/**`, `.kiro/**`, `.windsurf/**`, `.clinerules`"),
    row(Kind::GitInternal, "git-internal", "when git reads it (attributes, sparse-checkout, a rebase todo's `exec` lines, alternates)",
        "any other file in a git dir (`info/*`, `rebase-merge/*`, `objects/info/*`...), except objects, refs, logs and the index"),
    row(Kind::HookManager, "hook-manager", "on git commit, through the hook manager",
        "`.pre-commit-config.yaml`, `.husky/**`, `lefthook.yml`, `.lefthook/**`, `.githooks/**`, `.lintstagedrc*`, `lint-staged.config.*`, `.commitlintrc*`, `commitlint.config.*`, `.huskyrc*`, `simple-git-hooks.*`, `.overcommit.yml`, `grumphp.yml`, `captainhook.json`, and scripts they call"),
    row(Kind::DirenvApproval, "direnv-approval", "on cd into the approved directory, with no prompt",
        "new or changed files in `~/.local/share/direnv/allow` (when tool data dirs are shared with sessions)"),
    row(Kind::EnvLoader, "env-loader", "on cd into the directory (direnv, mise, asdf, nix) or when a version manager picks a tool; nix files on nix develop, nix-shell, nix build",
        "`.envrc`, `.env*`, `.tool-versions`, `.mise.toml`, `mise.toml`, `mise.*.toml`, `.mise/**`, `.config/mise/**`, `.rtx.toml`, `.python-version`, `.node-version`, `.nvmrc`, `.ruby-version`, every `*.nix` (`shell.nix`, `flake.nix`, `default.nix`), `flake.lock`, `devenv.yaml`, and scripts they source"),
    row(Kind::ShellInit, "shell-init", "when a shell, readline, REPL or debugger starts there or takes it as its start-up file (a dotfiles checkout linked into your home): bash, zsh, fish, tmux, gdb, lldb, pdb, python, irb, pry, R, octave, psql, sqlite, mongosh",
        "`.bashrc`, `.bash_profile`, `.bash_login`, `.bash_logout`, `.bash_aliases`, `.profile`, `.zshrc`, `.zshenv`, `.zprofile`, `.zlogin`, `.zlogout`, `.kshrc`, `.mkshrc`, `.cshrc`, `.tcshrc`, `.login`, `.logout`, `.inputrc`, `.config/fish/**`, `.tmux.conf`, `.screenrc`, `.gdbinit`, `gdbinit`, `*-gdb.py`, `*-gdb.gdb`, `.lldbinit(-*)`, `.pdbrc(.py)`, `.pythonrc(.py)`, `.pythonstartup`, `.irbrc`, `.pryrc`, `.Rprofile`, `Rprofile.site`, `.octaverc`, `.psqlrc(-*)`, `.sqliterc`, `.mongoshrc.js`, `.mongorc.js` anywhere"),
    row(Kind::PythonStartup, "python-startup", "at every start of Python (`.pth` import lines, sitecustomize, usercustomize)",
        "`*.pth` in any `site-packages`/`dist-packages`, `sitecustomize.py` and `usercustomize.py` anywhere"),
    row(Kind::VenvBin, "venv-bin", "when the venv is used or on PATH (its interpreter and commands; pip's index from its `pip.conf`)",
        "`bin/*`, `pyvenv.cfg` and `pip.conf` of every venv: a directory with `bin/python*` or `lib/python*/site-packages` (with or without `pyvenv.cfg`)"),
    row(Kind::SharedExecutable, "shared-executable", "when a tool outside runs it from its cache or data dir",
        "executable content (mode +x, scripts, `.pth`, libraries, symlinks) added or changed in `~/.cache` or `~/.local/share` when they are shared with sessions"),
    row(Kind::Executable, "executable", "when you or a tool run it by name or path (a `bin/git` where `bin` is on PATH shadows git)",
        "any other file in the workspace that is executable or a symlink: new, made executable, or changed (judged by metadata: binaries are not read; setuid and setgid bits named)"),
    row(Kind::Editor, "editor", "when the editor opens the folder, runs a task or starts a debug session",
        "`.vscode/**`, `.idea/**`, `.zed/**`, `.helix/**`, `.fleet/**`, `.theia/**`, `.vim/**`, `.nvim/**`, `.emacs.d/**`, `*.code-workspace`, `*.sublime-project`, `.nvim.lua`, `.nvimrc`, `.exrc`, `.vimrc`, `_vimrc`, `.gvimrc`, `.lvimrc`, `.lazy.lua`, `.kakrc`, `.emacs`, `.dir-locals(-2).el`, `.vimspector.json`, and scripts tasks call"),
    row(Kind::ToolConfig, "tool-config", "when the tool loads its config, often an editor extension as soon as the folder is open: eslint, prettier, stylelint, babel, jest, vitest, vite, webpack, rollup, tailwind, postcss, next, nuxt, svelte, astro, playwright, storybook, tsserver plugins, pylint, mypy, coverage, flake8, pyright, rubocop, rspec, golangci-lint",
        "a tool's config written in JS or TS, in every extension (`js`, `cjs`, `mjs`, `ts`, `cts`, `mts`, `jsx`, `tsx`, `coffee`) named `*.config.*` or `*.conf.*` (`eslint.config.js`, `vite.config.ts`, `jest.config.mjs`, `webpack.config.prod.js`, `karma.conf.js`), every dotted rc file in any or no extension (`.eslintrc(.js)`, `.babelrc`, `.prettierrc.json`, `.mocharc.yml`, `.pylintrc`, `.coveragerc`), `tsconfig*.json`, `jsconfig*.json`, `.storybook/**`, `pylintrc`, `mypy.ini`, `.flake8`, `.isort.cfg`, `pyrightconfig.json`, `.rubocop*.yml`, `.rspec`, `.golangci.*`, and scripts they call"),
    row(Kind::PackageManager, "package-manager", "on npm/yarn/pnpm/bun install, run, exec (and `corepack yarn`), and nx, lerna, turbo, rush tasks",
        "`package.json(5)`, `package.yaml`, `.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.yarn/**` (not its cache), `.pnpmfile.cjs`, `pnpm-workspace.yaml`, `.pnp.cjs`, `.pnp.loader.mjs`, `bunfig.toml`, `deno.json(c)`, `nx.json`, `project.json`, `workspace.json`, `lerna.json`, `turbo.json`, `rush.json`, `node_modules/.bin/*`, and scripts they call"),
    row(Kind::PythonProject, "python-project", "on uv run/sync, pip install (`--index-url`, `-e`, URLs in requirements), pipenv, poetry, pdm, hatch, pixi, conda, pytest, tox, nox, invoke, fabric, doit, jupyter",
        "`pyproject.toml`, `setup.py`, `setup.cfg`, `tox.ini`, `pytest.ini`, `conftest.py`, `noxfile.py`, `uv.toml`, `uv.lock`, `requirements*.txt`/`.in`, `requirements/*.txt`, `*-requirements.txt`, `constraints*.txt`, `Pipfile(.lock)`, `poetry.toml`, `poetry.lock`, `pdm.toml`, `.pdm.toml`, `.pdm-python`, `pdm.lock`, `hatch.toml`, `pixi.toml`, `pixi.lock`, `environment.y(a)ml`, `fabfile.py`, `tasks.py`, `dodo.py`, `pavement.py`, `jupyter_*_config.py`, `ipython_config.py` anywhere, and in-tree build backends"),
    row(Kind::RubyProject, "ruby-project", "on bundle install/exec, rake, rackup, cap, guard, danger, pod install, fastlane, brew bundle: the Ruby they evaluate and the gem sources they name",
        "`Gemfile(.lock)`, `gems.rb`, `gems.locked`, `*.gemspec`, `.bundle/**`, `Rakefile`, `*.rake`, `Guardfile`, `Capfile`, `config.ru`, `Dangerfile`, `Brewfile`, `Podfile`, `Fastfile`, `Appfile`, `Berksfile`, `Thorfile`, `Steepfile` anywhere, and scripts they call"),
    row(Kind::PhpProject, "php-project", "on composer install/update (scripts, plugins), phpunit, phpstan, psalm, php-cs-fixer, rector, behat, codeception: the PHP they include",
        "`composer.json`, `composer.lock`, `phpunit.xml(.dist)`, `phpunit.dist.xml`, `.php-cs-fixer(.dist).php`, `.php_cs(.dist)`, `phpstan.neon(.dist)`, `phpstan.dist.neon`, `psalm.xml(.dist)`, `rector.php`, `ecs.php`, `behat.yml`, `codeception.yml`, `infection.json5`, `.phpactor.json` anywhere, and scripts they call"),
    row(Kind::GoModule, "go-module", "on go build, test, run, generate, and by gopls when the editor opens the folder: the `toolchain` line downloads and runs that Go, `replace` and `tool` lines pick what is compiled and run",
        "`go.mod` and `go.work` anywhere"),
    row(Kind::RustProject, "rust-project", "on cargo build/run/test and rustup (build scripts, runners, toolchains), cargo-make, cross, nextest",
        "`Cargo.toml`, `build.rs`, `.cargo/**`, `rust-toolchain`, `rust-toolchain.toml`, `Cross.toml`, `Makefile.toml`, `nextest.toml` anywhere, and a toolchain `path` they name"),
    row(Kind::DotnetProject, "dotnet-project", "on dotnet build, restore, test, and when the IDE loads the project: MSBuild targets and `Exec` tasks, analyzers, NuGet sources, the SDK `global.json` picks, cake scripts",
        "`*.csproj`, `*.fsproj`, `*.vbproj`, `*.vcxproj`, `*.proj`, `*.sln(x)`, `*.props`, `*.targets` (`Directory.Build.*`), `NuGet.config`, `global.json`, `dotnet-tools.json`, `omnisharp.json`, `packages.config`, `paket.dependencies`, `*.cake`, `.nuke/**`, `.paket/**` anywhere"),
    row(Kind::JvmBuild, "jvm-build", "on gradle, maven, sbt, ant, mill, lein and clojure builds, and when the IDE imports the project (Gradle and sbt scripts run at import; the wrappers download and run the build tool they name)",
        "`pom.xml`, `*.gradle`, `*.gradle.kts`, `gradle.properties`, `gradlew(.bat)`, `gradle/wrapper/**`, `gradle-wrapper.properties`, `buildSrc/**`, `mvnw(.cmd)`, `.mvn/**`, `*.sbt`, sbt's `project/*.scala`, `project/*.sbt` and `project/build.properties` beside a `build.sbt`, `.sbtopts`, `.jvmopts`, `build.xml`, `ivy.xml`, `build.sc`, `build.mill`, `.mill-version`, `project.clj`, `deps.edn`, `build.boot`, `bb.edn` anywhere, and scripts they call"),
    row(Kind::BuildFile, "build-file", "on make, just, task, cmake, meson, autotools, bazel (and bazelisk's download), buck, pants, scons, waf, xmake, premake, zig, conan, vcpkg, cabal, stack, dune, mix, rebar, perl's Makefile.PL, swift build, dart, gulp, grunt, docker build/compose/bake, earthly",
        "`Makefile`, `makefile`, `GNUmakefile`, `*.mk` and the files they `include`, `Makefile.am`, `Makefile.in`, `configure(.ac)`, `autogen.sh`, `justfile`, `Taskfile.yml`, `CMakeLists.txt`, `*.cmake`, `CMakePresets.json`, `meson.build`, `meson_options.txt`, Bazel files (`BUILD`, `WORKSPACE`, `MODULE.bazel`, `*.bzl`, `*.bazel`, `.bazelrc`, `.bazelversion`, `.bazeliskrc`), `BUCK`, `.buckconfig`, `pants.toml`, `SConstruct`, `SConscript`, `wscript`, `xmake.lua`, `premake*.lua`, `build.zig(.zon)`, `conanfile.*`, `vcpkg*.json`, `Setup.hs`, `*.cabal`, `cabal.project`, `stack.yaml`, `dune(-project)`, `*.opam`, `mix.exs`, `rebar.config`, `Makefile.PL`, `Build.PL`, `cpanfile`, `dist.ini`, `Package.swift`, `pubspec.yaml`, `hook/build.dart`, `gulpfile.*`, `Gruntfile.*`, `Jakefile`, `Dockerfile`, `Containerfile`, compose files, `docker-bake.*`, `Earthfile`, and scripts they call"),
    row(Kind::GitWorktreeFile, "git-worktree-file", "on git commands that use attributes' filters and diff drivers, and on submodule update",
        "`.gitattributes`, `.gitmodules`, `.lfsconfig` anywhere"),
    row(Kind::CiWorkflow, "ci-workflow", "on CI after a push and on deploys, with the CI's secrets",
        "`.github/workflows/**`, `.github/actions/**`, `.gitea/` and `.forgejo/` workflows and actions, `.gitlab-ci.y(a)ml`, `.gitlab/**`, `.circleci/**`, `.buildkite/**`, `azure-pipelines.y(a)ml`, `.azure-pipelines/**`, `Jenkinsfile(.*)`, `*.jenkinsfile`, `.jenkins/**`, `.travis.yml`, `bitbucket-pipelines.yml`, `.drone.yml`, `.drone.star`, `.woodpecker/**`, `appveyor.yml`, `cloudbuild.y(a)ml`, `buildspec.y(a)ml`, `.cirrus.yml`, `.semaphore/**`, `.tekton/**`, `.teamcity/**`, `.harness/**`, `codefresh.yml`, `bitrise.yml`, `codemagic.yaml`, `action.y(a)ml`, deploy configs (`netlify.toml`, `vercel.json`, `render.yaml`, `amplify.yml`, `firebase.json`, `wrangler.toml`), and scripts they call"),
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

    /// Judged by metadata even though it is a finding: executables may be
    /// big binaries, and any write, chmod or replacement changes the
    /// metadata anyway.
    pub(crate) fn by_metadata(self) -> bool {
        self.bulk() || self == Kind::Executable
    }

    /// Files of this kind run other files they name (scripts, includes):
    /// those are reviewed as this kind too.
    pub(crate) fn follows_references(self) -> bool {
        !matches!(
            self,
            Kind::SpecialFile
                | Kind::Unreadable
                | Kind::GitInternal
                | Kind::DirenvApproval
                | Kind::SharedExecutable
                | Kind::Executable
                | Kind::DependencyTree
                | Kind::BuildCache
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
        let docs = include_str!("../../../../docs/review.md");
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
