//! Which kind a path is by its place and name alone (git dirs, references
//! and shared tool dirs are decided elsewhere). Pure: answers from the
//! path and from facts gathered from the listing (where the venvs and
//! cargo packages are), never from a marker file a session could delete.

use super::super::kinds::Kind;
use super::super::walk::{Listing, Ty};
use std::collections::BTreeSet;

/// Facts about the tree the place rules need.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// Venv roots: directories with `bin/python*`, `lib*/python*/site-packages`
    /// or `pyvenv.cfg`.
    pub venvs: BTreeSet<String>,
    /// Directories holding a `Cargo.toml` (their `target/` is a build cache).
    pub(crate) cargo_dirs: BTreeSet<String>,
    /// Directories holding a `build.sbt` (their `project/` is sbt's own
    /// build, compiled and run by sbt).
    pub(crate) sbt_dirs: BTreeSet<String>,
}

fn split(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}

pub(crate) fn facts(listing: &Listing) -> Facts {
    let mut f = Facts::default();
    for (key, _) in &listing.entries[listing.under("")] {
        let (parent, name) = split(key);
        let (grand, pname) = split(parent);
        if name == "Cargo.toml" {
            f.cargo_dirs.insert(parent.to_string());
        }
        if name == "build.sbt" {
            f.sbt_dirs.insert(parent.to_string());
        }
        if name == "pyvenv.cfg" {
            f.venvs.insert(parent.to_string());
        }
        if pname == "bin" && name.starts_with("python") {
            f.venvs.insert(grand.to_string());
        }
        // <venv>/lib*/python*/site-packages
        if name == "site-packages" && pname.starts_with("python") {
            let (venv, lib) = split(grand);
            if lib.starts_with("lib") {
                f.venvs.insert(venv.to_string());
            }
        }
    }
    f
}

/// Directories whose whole content is a build product or tool cache.
const CACHE_DIRS: &[&str] = &[
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".gradle",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".svelte-kit",
    ".direnv",
    ".cache",
    ".eggs",
];

/// Directories whose whole content is of one kind.
const KIND_DIRS: &[(&str, Kind)] = &[
    (".devcontainer", Kind::Devcontainer),
    // Agents' project settings, skills, commands, hooks and extensions.
    (".claude", Kind::AgentExtension),
    (".codex", Kind::AgentExtension),
    (".pi", Kind::AgentExtension),
    (".agents", Kind::AgentExtension),
    (".cursor", Kind::AgentExtension),
    (".gemini", Kind::AgentExtension),
    (".roo", Kind::AgentExtension),
    (".continue", Kind::AgentExtension),
    (".amazonq", Kind::AgentExtension),
    (".kiro", Kind::AgentExtension),
    (".windsurf", Kind::AgentExtension),
    (".clinerules", Kind::AgentExtension),
    (".husky", Kind::HookManager),
    (".lefthook", Kind::HookManager),
    (".githooks", Kind::HookManager),
    (".mise", Kind::EnvLoader),
    (".vscode", Kind::Editor),
    (".idea", Kind::Editor),
    (".zed", Kind::Editor),
    (".helix", Kind::Editor),
    (".fleet", Kind::Editor),
    (".theia", Kind::Editor),
    (".vim", Kind::Editor),
    (".nvim", Kind::Editor),
    (".emacs.d", Kind::Editor),
    (".storybook", Kind::ToolConfig),
    (".yarn", Kind::PackageManager),
    (".bundle", Kind::RubyProject),
    (".cargo", Kind::RustProject),
    (".nuke", Kind::DotnetProject),
    (".paket", Kind::DotnetProject),
    (".mvn", Kind::JvmBuild),
    ("buildSrc", Kind::JvmBuild),
    (".circleci", Kind::CiWorkflow),
    (".buildkite", Kind::CiWorkflow),
    (".woodpecker", Kind::CiWorkflow),
    (".gitlab", Kind::CiWorkflow),
    (".azure-pipelines", Kind::CiWorkflow),
    (".azuredevops", Kind::CiWorkflow),
    (".semaphore", Kind::CiWorkflow),
    (".tekton", Kind::CiWorkflow),
    (".jenkins", Kind::CiWorkflow),
    (".teamcity", Kind::CiWorkflow),
    (".harness", Kind::CiWorkflow),
];

/// Directories whose whole content is of one kind when inside another:
/// (outer, inner).
const KIND_SUBDIRS: &[(&str, &str, Kind)] = &[
    (".github", "workflows", Kind::CiWorkflow),
    (".github", "actions", Kind::CiWorkflow),
    (".gitea", "workflows", Kind::CiWorkflow),
    (".gitea", "actions", Kind::CiWorkflow),
    (".forgejo", "workflows", Kind::CiWorkflow),
    (".forgejo", "actions", Kind::CiWorkflow),
    (".config", "mise", Kind::EnvLoader),
    (".config", "fish", Kind::ShellInit),
    ("gradle", "wrapper", Kind::JvmBuild),
];

/// Names a symlink or special file may not take even where no kind
/// applies: directories that hold code of a kind above.
pub(crate) const DIR_PLACES: &[&str] =
    &[".git", "node_modules", ".bin", "site-packages", "dist-packages", ".venv", "venv", "__pycache__", ".github", "workflows", "hooks"];

/// Files of a kind by their name alone, anywhere in the tree.
const NAMES: &[(&str, Kind)] = &[
    (".devcontainer.json", Kind::Devcontainer),
    // Environments a tool starts, often on the host.
    ("Vagrantfile", Kind::DevEnvironment),
    ("Tiltfile", Kind::DevEnvironment),
    ("devbox.json", Kind::DevEnvironment),
    ("skaffold.yaml", Kind::DevEnvironment),
    ("skaffold.yml", Kind::DevEnvironment),
    ("garden.yml", Kind::DevEnvironment),
    ("project.garden.yml", Kind::DevEnvironment),
    ("devfile.yaml", Kind::DevEnvironment),
    (".devfile.yaml", Kind::DevEnvironment),
    (".gitpod.yml", Kind::DevEnvironment),
    (".gitpod.Dockerfile", Kind::DevEnvironment),
    (".replit", Kind::DevEnvironment),
    ("replit.nix", Kind::DevEnvironment),
    ("Procfile", Kind::DevEnvironment),
    // Agents' settings in a project (MCP servers, hooks, commands).
    (".mcp.json", Kind::AgentSettings),
    ("mcp.json", Kind::AgentSettings),
    ("mcp_config.json", Kind::AgentSettings),
    ("opencode.json", Kind::AgentSettings),
    ("opencode.jsonc", Kind::AgentSettings),
    (".aider.conf.yml", Kind::AgentSettings),
    (".pre-commit-config.yaml", Kind::HookManager),
    (".pre-commit-config.yml", Kind::HookManager),
    (".pre-commit-hooks.yaml", Kind::HookManager),
    ("lefthook.yml", Kind::HookManager),
    ("lefthook.yaml", Kind::HookManager),
    (".lefthook.yml", Kind::HookManager),
    (".lefthook.yaml", Kind::HookManager),
    ("lefthook-local.yml", Kind::HookManager),
    ("lefthook-local.yaml", Kind::HookManager),
    (".overcommit.yml", Kind::HookManager),
    ("grumphp.yml", Kind::HookManager),
    ("grumphp.yml.dist", Kind::HookManager),
    ("captainhook.json", Kind::HookManager),
    (".tool-versions", Kind::EnvLoader),
    (".rtx.toml", Kind::EnvLoader),
    (".python-version", Kind::EnvLoader),
    (".node-version", Kind::EnvLoader),
    (".nvmrc", Kind::EnvLoader),
    (".ruby-version", Kind::EnvLoader),
    ("flake.lock", Kind::EnvLoader),
    ("devenv.yaml", Kind::EnvLoader),
    ("devenv.lock", Kind::EnvLoader),
    // Shells, readline, REPLs and debuggers read these at start.
    (".bashrc", Kind::ShellInit),
    (".bash_profile", Kind::ShellInit),
    (".bash_login", Kind::ShellInit),
    (".bash_logout", Kind::ShellInit),
    (".bash_aliases", Kind::ShellInit),
    (".profile", Kind::ShellInit),
    (".zshrc", Kind::ShellInit),
    (".zshenv", Kind::ShellInit),
    (".zprofile", Kind::ShellInit),
    (".zlogin", Kind::ShellInit),
    (".zlogout", Kind::ShellInit),
    (".kshrc", Kind::ShellInit),
    (".mkshrc", Kind::ShellInit),
    (".cshrc", Kind::ShellInit),
    (".tcshrc", Kind::ShellInit),
    (".login", Kind::ShellInit),
    (".logout", Kind::ShellInit),
    (".inputrc", Kind::ShellInit),
    (".tmux.conf", Kind::ShellInit),
    (".screenrc", Kind::ShellInit),
    (".gdbinit", Kind::ShellInit),
    ("gdbinit", Kind::ShellInit),
    (".lldbinit", Kind::ShellInit),
    (".pdbrc", Kind::ShellInit),
    (".pdbrc.py", Kind::ShellInit),
    (".pythonrc", Kind::ShellInit),
    (".pythonrc.py", Kind::ShellInit),
    (".pythonstartup", Kind::ShellInit),
    (".irbrc", Kind::ShellInit),
    (".pryrc", Kind::ShellInit),
    (".Rprofile", Kind::ShellInit),
    ("Rprofile.site", Kind::ShellInit),
    (".octaverc", Kind::ShellInit),
    (".psqlrc", Kind::ShellInit),
    (".sqliterc", Kind::ShellInit),
    (".mongoshrc.js", Kind::ShellInit),
    (".mongorc.js", Kind::ShellInit),
    ("sitecustomize.py", Kind::PythonStartup),
    ("usercustomize.py", Kind::PythonStartup),
    (".nvim.lua", Kind::Editor),
    (".nvimrc", Kind::Editor),
    (".exrc", Kind::Editor),
    (".vimrc", Kind::Editor),
    ("_vimrc", Kind::Editor),
    (".gvimrc", Kind::Editor),
    (".lvimrc", Kind::Editor),
    (".lazy.lua", Kind::Editor),
    (".kakrc", Kind::Editor),
    (".emacs", Kind::Editor),
    (".dir-locals.el", Kind::Editor),
    (".dir-locals-2.el", Kind::Editor),
    (".vimspector.json", Kind::Editor),
    // Tool configs that load code (plugins, hooks) without a telling name.
    ("pylintrc", Kind::ToolConfig),
    ("mypy.ini", Kind::ToolConfig),
    (".mypy.ini", Kind::ToolConfig),
    (".flake8", Kind::ToolConfig),
    (".isort.cfg", Kind::ToolConfig),
    ("pyrightconfig.json", Kind::ToolConfig),
    (".rspec", Kind::ToolConfig),
    (".rubocop.yml", Kind::ToolConfig),
    (".rubocop_todo.yml", Kind::ToolConfig),
    (".golangci.yml", Kind::ToolConfig),
    (".golangci.yaml", Kind::ToolConfig),
    (".golangci.toml", Kind::ToolConfig),
    (".golangci.json", Kind::ToolConfig),
    ("package.json", Kind::PackageManager),
    ("package.json5", Kind::PackageManager),
    ("package.yaml", Kind::PackageManager),
    (".npmrc", Kind::PackageManager),
    (".yarnrc", Kind::PackageManager),
    (".yarnrc.yml", Kind::PackageManager),
    (".pnpmfile.cjs", Kind::PackageManager),
    (".pnpmfile.mjs", Kind::PackageManager),
    ("pnpm-workspace.yaml", Kind::PackageManager),
    (".pnp.cjs", Kind::PackageManager),
    (".pnp.loader.mjs", Kind::PackageManager),
    ("bunfig.toml", Kind::PackageManager),
    ("deno.json", Kind::PackageManager),
    ("deno.jsonc", Kind::PackageManager),
    ("nx.json", Kind::PackageManager),
    ("project.json", Kind::PackageManager),
    ("workspace.json", Kind::PackageManager),
    ("lerna.json", Kind::PackageManager),
    ("turbo.json", Kind::PackageManager),
    ("rush.json", Kind::PackageManager),
    ("pyproject.toml", Kind::PythonProject),
    ("setup.py", Kind::PythonProject),
    ("setup.cfg", Kind::PythonProject),
    ("tox.ini", Kind::PythonProject),
    ("pytest.ini", Kind::PythonProject),
    ("conftest.py", Kind::PythonProject),
    ("noxfile.py", Kind::PythonProject),
    ("uv.toml", Kind::PythonProject),
    ("uv.lock", Kind::PythonProject),
    ("Pipfile", Kind::PythonProject),
    ("Pipfile.lock", Kind::PythonProject),
    ("poetry.toml", Kind::PythonProject),
    ("poetry.lock", Kind::PythonProject),
    ("pdm.toml", Kind::PythonProject),
    (".pdm.toml", Kind::PythonProject),
    (".pdm-python", Kind::PythonProject),
    ("pdm.lock", Kind::PythonProject),
    ("hatch.toml", Kind::PythonProject),
    ("pixi.toml", Kind::PythonProject),
    ("pixi.lock", Kind::PythonProject),
    ("environment.yml", Kind::PythonProject),
    ("environment.yaml", Kind::PythonProject),
    ("fabfile.py", Kind::PythonProject),
    ("tasks.py", Kind::PythonProject),
    ("dodo.py", Kind::PythonProject),
    ("pavement.py", Kind::PythonProject),
    ("ipython_config.py", Kind::PythonProject),
    ("Gemfile", Kind::RubyProject),
    ("Gemfile.lock", Kind::RubyProject),
    ("gems.rb", Kind::RubyProject),
    ("gems.locked", Kind::RubyProject),
    ("Rakefile", Kind::RubyProject),
    ("rakefile", Kind::RubyProject),
    ("Rakefile.rb", Kind::RubyProject),
    ("Guardfile", Kind::RubyProject),
    ("Capfile", Kind::RubyProject),
    ("config.ru", Kind::RubyProject),
    ("Dangerfile", Kind::RubyProject),
    ("Brewfile", Kind::RubyProject),
    ("Podfile", Kind::RubyProject),
    ("Fastfile", Kind::RubyProject),
    ("Appfile", Kind::RubyProject),
    ("Berksfile", Kind::RubyProject),
    ("Thorfile", Kind::RubyProject),
    ("Steepfile", Kind::RubyProject),
    ("composer.json", Kind::PhpProject),
    ("composer.lock", Kind::PhpProject),
    ("phpunit.xml", Kind::PhpProject),
    ("phpunit.xml.dist", Kind::PhpProject),
    ("phpunit.dist.xml", Kind::PhpProject),
    (".php-cs-fixer.php", Kind::PhpProject),
    (".php-cs-fixer.dist.php", Kind::PhpProject),
    (".php_cs", Kind::PhpProject),
    (".php_cs.dist", Kind::PhpProject),
    ("phpstan.neon", Kind::PhpProject),
    ("phpstan.neon.dist", Kind::PhpProject),
    ("phpstan.dist.neon", Kind::PhpProject),
    ("psalm.xml", Kind::PhpProject),
    ("psalm.xml.dist", Kind::PhpProject),
    ("rector.php", Kind::PhpProject),
    ("ecs.php", Kind::PhpProject),
    ("behat.yml", Kind::PhpProject),
    ("codeception.yml", Kind::PhpProject),
    ("infection.json5", Kind::PhpProject),
    (".phpactor.json", Kind::PhpProject),
    ("go.mod", Kind::GoModule),
    ("go.work", Kind::GoModule),
    ("Cargo.toml", Kind::RustProject),
    ("build.rs", Kind::RustProject),
    ("rust-toolchain", Kind::RustProject),
    ("rust-toolchain.toml", Kind::RustProject),
    ("Cross.toml", Kind::RustProject),
    ("Makefile.toml", Kind::RustProject),
    ("nextest.toml", Kind::RustProject),
    ("NuGet.config", Kind::DotnetProject),
    ("nuget.config", Kind::DotnetProject),
    ("NuGet.Config", Kind::DotnetProject),
    ("global.json", Kind::DotnetProject),
    ("dotnet-tools.json", Kind::DotnetProject),
    ("omnisharp.json", Kind::DotnetProject),
    ("packages.config", Kind::DotnetProject),
    ("paket.dependencies", Kind::DotnetProject),
    ("pom.xml", Kind::JvmBuild),
    ("gradle.properties", Kind::JvmBuild),
    ("gradlew", Kind::JvmBuild),
    ("gradlew.bat", Kind::JvmBuild),
    ("gradle-wrapper.properties", Kind::JvmBuild),
    ("mvnw", Kind::JvmBuild),
    ("mvnw.cmd", Kind::JvmBuild),
    ("build.xml", Kind::JvmBuild),
    ("ivy.xml", Kind::JvmBuild),
    ("build.sc", Kind::JvmBuild),
    ("build.mill", Kind::JvmBuild),
    (".mill-version", Kind::JvmBuild),
    (".sbtopts", Kind::JvmBuild),
    (".jvmopts", Kind::JvmBuild),
    ("project.clj", Kind::JvmBuild),
    ("deps.edn", Kind::JvmBuild),
    ("build.boot", Kind::JvmBuild),
    ("bb.edn", Kind::JvmBuild),
    ("Makefile", Kind::BuildFile),
    ("makefile", Kind::BuildFile),
    ("GNUmakefile", Kind::BuildFile),
    ("Makefile.am", Kind::BuildFile),
    ("Makefile.in", Kind::BuildFile),
    ("configure", Kind::BuildFile),
    ("configure.ac", Kind::BuildFile),
    ("configure.in", Kind::BuildFile),
    ("autogen.sh", Kind::BuildFile),
    ("justfile", Kind::BuildFile),
    ("Justfile", Kind::BuildFile),
    (".justfile", Kind::BuildFile),
    ("Taskfile.yml", Kind::BuildFile),
    ("Taskfile.yaml", Kind::BuildFile),
    ("taskfile.yml", Kind::BuildFile),
    ("taskfile.yaml", Kind::BuildFile),
    ("CMakeLists.txt", Kind::BuildFile),
    ("CMakePresets.json", Kind::BuildFile),
    ("CMakeUserPresets.json", Kind::BuildFile),
    ("meson.build", Kind::BuildFile),
    ("meson_options.txt", Kind::BuildFile),
    ("meson.options", Kind::BuildFile),
    ("BUILD", Kind::BuildFile),
    ("BUILD.bazel", Kind::BuildFile),
    ("WORKSPACE", Kind::BuildFile),
    ("WORKSPACE.bazel", Kind::BuildFile),
    ("WORKSPACE.bzlmod", Kind::BuildFile),
    ("MODULE.bazel", Kind::BuildFile),
    (".bazelrc", Kind::BuildFile),
    (".bazelversion", Kind::BuildFile),
    (".bazeliskrc", Kind::BuildFile),
    ("BUCK", Kind::BuildFile),
    (".buckconfig", Kind::BuildFile),
    ("pants.toml", Kind::BuildFile),
    ("SConstruct", Kind::BuildFile),
    ("SConscript", Kind::BuildFile),
    ("wscript", Kind::BuildFile),
    ("xmake.lua", Kind::BuildFile),
    ("premake4.lua", Kind::BuildFile),
    ("premake5.lua", Kind::BuildFile),
    ("build.zig", Kind::BuildFile),
    ("build.zig.zon", Kind::BuildFile),
    ("conanfile.py", Kind::BuildFile),
    ("conanfile.txt", Kind::BuildFile),
    ("vcpkg.json", Kind::BuildFile),
    ("vcpkg-configuration.json", Kind::BuildFile),
    ("Setup.hs", Kind::BuildFile),
    ("Setup.lhs", Kind::BuildFile),
    ("cabal.project", Kind::BuildFile),
    ("cabal.project.local", Kind::BuildFile),
    ("stack.yaml", Kind::BuildFile),
    ("dune", Kind::BuildFile),
    ("dune-project", Kind::BuildFile),
    ("mix.exs", Kind::BuildFile),
    ("rebar.config", Kind::BuildFile),
    ("rebar.config.script", Kind::BuildFile),
    ("Makefile.PL", Kind::BuildFile),
    ("Build.PL", Kind::BuildFile),
    ("cpanfile", Kind::BuildFile),
    ("dist.ini", Kind::BuildFile),
    ("Package.swift", Kind::BuildFile),
    ("pubspec.yaml", Kind::BuildFile),
    ("Dockerfile", Kind::BuildFile),
    ("Containerfile", Kind::BuildFile),
    ("docker-compose.yml", Kind::BuildFile),
    ("docker-compose.yaml", Kind::BuildFile),
    ("compose.yml", Kind::BuildFile),
    ("compose.yaml", Kind::BuildFile),
    ("docker-bake.hcl", Kind::BuildFile),
    ("docker-bake.json", Kind::BuildFile),
    ("Earthfile", Kind::BuildFile),
    (".gitattributes", Kind::GitWorktreeFile),
    (".gitmodules", Kind::GitWorktreeFile),
    (".lfsconfig", Kind::GitWorktreeFile),
    (".gitlab-ci.yml", Kind::CiWorkflow),
    (".gitlab-ci.yaml", Kind::CiWorkflow),
    ("azure-pipelines.yml", Kind::CiWorkflow),
    ("azure-pipelines.yaml", Kind::CiWorkflow),
    ("Jenkinsfile", Kind::CiWorkflow),
    (".travis.yml", Kind::CiWorkflow),
    ("bitbucket-pipelines.yml", Kind::CiWorkflow),
    (".drone.yml", Kind::CiWorkflow),
    (".drone.star", Kind::CiWorkflow),
    (".woodpecker.yml", Kind::CiWorkflow),
    (".woodpecker.yaml", Kind::CiWorkflow),
    ("appveyor.yml", Kind::CiWorkflow),
    (".appveyor.yml", Kind::CiWorkflow),
    ("cloudbuild.yaml", Kind::CiWorkflow),
    ("cloudbuild.yml", Kind::CiWorkflow),
    ("buildspec.yml", Kind::CiWorkflow),
    ("buildspec.yaml", Kind::CiWorkflow),
    (".cirrus.yml", Kind::CiWorkflow),
    (".cirrus.star", Kind::CiWorkflow),
    ("codefresh.yml", Kind::CiWorkflow),
    ("wercker.yml", Kind::CiWorkflow),
    ("bitrise.yml", Kind::CiWorkflow),
    ("codemagic.yaml", Kind::CiWorkflow),
    ("action.yml", Kind::CiWorkflow),
    ("action.yaml", Kind::CiWorkflow),
    ("netlify.toml", Kind::CiWorkflow),
    ("vercel.json", Kind::CiWorkflow),
    ("render.yaml", Kind::CiWorkflow),
    ("amplify.yml", Kind::CiWorkflow),
    ("firebase.json", Kind::CiWorkflow),
    ("wrangler.toml", Kind::CiWorkflow),
    (".platform.app.yaml", Kind::CiWorkflow),
];

/// Files of a kind by their name inside a directory: (directory, name).
const NAMES_IN: &[(&str, &str, Kind)] = &[
    (".claude", "settings.json", Kind::AgentSettings),
    (".claude", "settings.local.json", Kind::AgentSettings),
    (".codex", "config.toml", Kind::AgentSettings),
    (".pi", "settings.json", Kind::AgentSettings),
    (".gemini", "settings.json", Kind::AgentSettings),
    (".continue", "config.json", Kind::AgentSettings),
    (".continue", "config.yaml", Kind::AgentSettings),
    ("hook", "build.dart", Kind::BuildFile),
];

/// JavaScript and TypeScript in every extension a tool loads a config in.
const JS_EXTS: &[&str] = &["js", "cjs", "mjs", "ts", "cts", "mts", "jsx", "tsx", "coffee"];
/// What a tool's rc file may be written in (besides no extension at all).
const RC_EXTS: &[&str] = &["js", "cjs", "mjs", "ts", "cts", "mts", "json", "json5", "jsonc", "yaml", "yml", "toml", "cfg", "ini", "conf", "rc"];
/// Extensions of whole kinds.
const EXTS: &[(&str, Kind)] = &[
    ("nix", Kind::EnvLoader),
    ("code-workspace", Kind::Editor),
    ("sublime-project", Kind::Editor),
    ("gemspec", Kind::RubyProject),
    ("rake", Kind::RubyProject),
    ("csproj", Kind::DotnetProject),
    ("fsproj", Kind::DotnetProject),
    ("vbproj", Kind::DotnetProject),
    ("vcxproj", Kind::DotnetProject),
    ("proj", Kind::DotnetProject),
    ("sln", Kind::DotnetProject),
    ("slnx", Kind::DotnetProject),
    ("props", Kind::DotnetProject),
    ("targets", Kind::DotnetProject),
    ("cake", Kind::DotnetProject),
    ("gradle", Kind::JvmBuild),
    ("sbt", Kind::JvmBuild),
    ("mk", Kind::BuildFile),
    ("cmake", Kind::BuildFile),
    ("bzl", Kind::BuildFile),
    ("bazel", Kind::BuildFile),
    ("cabal", Kind::BuildFile),
    ("opam", Kind::BuildFile),
    ("jenkinsfile", Kind::CiWorkflow),
];

/// Names matched by shape rather than in full.
fn by_shape(name: &str) -> Option<Kind> {
    let parts: Vec<&str> = name.split('.').collect();
    let ext = if parts.len() > 1 { parts[parts.len() - 1] } else { "" };
    let middle = if parts.len() > 2 { &parts[1..parts.len() - 1] } else { &[][..] };
    let lower = name.to_ascii_lowercase();
    let yaml_or_json = matches!(ext, "yml" | "yaml" | "json");
    Some(match name {
        _ if name.starts_with(".envrc") || name == ".env" || name.starts_with(".env.") => Kind::EnvLoader,
        _ if ext == "toml" && (name.starts_with("mise.") || name.starts_with(".mise.")) => Kind::EnvLoader,
        _ if name.starts_with("Procfile.") => Kind::DevEnvironment,
        _ if name.ends_with(".mcp.json") => Kind::AgentSettings,
        // Hook managers' configs in any extension.
        _ if [".lintstagedrc", "lint-staged.config.", ".commitlintrc", "commitlint.config.", ".huskyrc", ".simple-git-hooks", "simple-git-hooks."]
            .iter()
            .any(|p| name.starts_with(p)) =>
        {
            Kind::HookManager
        }
        _ if name.ends_with("-gdb.py") || name.ends_with("-gdb.gdb") || name.starts_with(".lldbinit-") || name.starts_with(".psqlrc-") => Kind::ShellInit,
        _ if name.starts_with("requirements") && matches!(ext, "txt" | "in") => Kind::PythonProject,
        _ if name.starts_with("constraints") && ext == "txt" => Kind::PythonProject,
        _ if ["-requirements.txt", "_requirements.txt", ".requirements.txt"].iter().any(|s| name.ends_with(s)) => Kind::PythonProject,
        _ if name.starts_with("jupyter_") && name.ends_with("_config.py") => Kind::PythonProject,
        _ if ["gulpfile.", "gruntfile.", "jakefile"].iter().any(|p| lower.starts_with(p)) => Kind::BuildFile,
        // `eslint.config.js`, `vite.config.ts`, `webpack.config.prod.js`,
        // `karma.conf.cjs`: a tool's config written in JS or TS.
        _ if JS_EXTS.contains(&ext) && middle.iter().any(|m| matches!(*m, "config" | "conf")) => Kind::ToolConfig,
        // `.eslintrc`, `.babelrc.json`, `.prettierrc.cjs`, `.pylintrc`,
        // `.mocharc.yml`: a tool's rc file, in whatever it is written in.
        _ if name.starts_with('.') && parts.len() >= 2 && parts[1].len() > 2 && parts[1].ends_with("rc") && (parts.len() == 2 || RC_EXTS.contains(&ext)) => {
            Kind::ToolConfig
        }
        _ if (name.starts_with("tsconfig") || name.starts_with("jsconfig")) && ext == "json" => Kind::ToolConfig,
        _ if name.starts_with(".rubocop") && yaml_or_json => Kind::ToolConfig,
        _ if name.starts_with("Jenkinsfile.") => Kind::CiWorkflow,
        _ if name.ends_with(".gradle.kts") => Kind::JvmBuild,
        _ if name.starts_with("Dockerfile.") || name.starts_with("Containerfile.") => Kind::BuildFile,
        _ if name.ends_with(".Dockerfile") || name.ends_with(".dockerfile") => Kind::BuildFile,
        _ if name.starts_with("docker-compose.") && matches!(ext, "yml" | "yaml") => Kind::BuildFile,
        _ if name.starts_with("compose.") && matches!(ext, "yml" | "yaml") => Kind::BuildFile,
        _ => return EXTS.iter().find(|(e, _)| *e == ext && parts.len() > 1 && !parts[0].is_empty()).map(|(_, k)| *k),
    })
}

/// The kind `comps` (a path's components) has by its name.
fn by_name(comps: &[&str]) -> Option<Kind> {
    let name = comps[comps.len() - 1];
    let dir = if comps.len() > 1 { comps[comps.len() - 2] } else { "" };
    // `requirements/base.txt`: pip requirements files kept in a directory.
    if dir == "requirements" && (name.ends_with(".txt") || name.ends_with(".in")) {
        return Some(Kind::PythonProject);
    }
    NAMES_IN
        .iter()
        .find(|(d, n, _)| *d == dir && *n == name)
        .map(|(_, _, k)| *k)
        .or_else(|| NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k))
        .or_else(|| by_shape(name))
}

/// The kind of a workspace path by place, or None for ordinary files.
pub(crate) fn place(key: &str, ty: Ty, facts: &Facts) -> Option<Kind> {
    let comps: Vec<&str> = key.split('/').collect();
    let name = comps[comps.len() - 1];
    if name == ".git" && ty != Ty::Dir {
        return Some(Kind::GitPointer);
    }
    if let Some(k) = node_modules(&comps) {
        return Some(k);
    }
    if let Some(k) = venv(key, facts) {
        return Some(k);
    }
    if let Some(k) = packages_or_cache(&comps, facts) {
        return Some(k);
    }
    if let Some(k) = sbt_project(&comps, facts) {
        return Some(k);
    }
    let dirs = kind_dirs(&comps);
    // The most dangerous of the directory's and the name's kinds.
    match (dirs, by_name(&comps)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `project/*.scala`, `*.sbt` and `build.properties` beside a `build.sbt`:
/// sbt's own build, which sbt compiles and runs.
fn sbt_project(comps: &[&str], facts: &Facts) -> Option<Kind> {
    let at = comps.len().checked_sub(2)?;
    let name = comps[comps.len() - 1];
    let code = name.ends_with(".scala") || name.ends_with(".sbt") || name == "build.properties";
    (comps[at] == "project" && code && facts.sbt_dirs.contains(&comps[..at].join("/"))).then_some(Kind::JvmBuild)
}

/// `node_modules/.bin/*` are the commands `npm run`/`npx` run; the rest is
/// the dependency tree.
fn node_modules(comps: &[&str]) -> Option<Kind> {
    let last = comps.iter().rposition(|c| *c == "node_modules")?;
    Some(if comps.len() == last + 3 && comps[last + 1] == ".bin" { Kind::PackageManager } else { Kind::DependencyTree })
}

fn venv(key: &str, facts: &Facts) -> Option<Kind> {
    let (root, rest) = facts
        .venvs
        .iter()
        .filter_map(|v| if v.is_empty() { Some((v, key)) } else { key.strip_prefix(v.as_str())?.strip_prefix('/').map(|r| (v, r)) })
        .max_by_key(|(v, _)| v.len())?;
    let _ = root;
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        // pip reads the venv's own pip.conf (its index: what it downloads and runs).
        ["pyvenv.cfg"] | ["pip.conf"] | ["bin"] | ["bin", _] => Some(Kind::VenvBin),
        [lib, py, "site-packages", file] if lib.starts_with("lib") && py.starts_with("python") && file.ends_with(".pth") => Some(Kind::PythonStartup),
        [lib, py, ..] if lib.starts_with("lib") && py.starts_with("python") => {
            let name = parts[parts.len() - 1];
            Some(if matches!(name, "sitecustomize.py" | "usercustomize.py") { Kind::PythonStartup } else { Kind::DependencyTree })
        }
        _ => None,
    }
}

/// Packages installed outside a venv (`pip --target`, `__pypackages__`),
/// yarn's cache, and build caches.
fn packages_or_cache(comps: &[&str], facts: &Facts) -> Option<Kind> {
    if let Some(i) = comps.iter().position(|c| matches!(*c, "site-packages" | "dist-packages")) {
        let name = comps[comps.len() - 1];
        return Some(if (comps.len() == i + 2 && name.ends_with(".pth")) || matches!(name, "sitecustomize.py" | "usercustomize.py") {
            Kind::PythonStartup
        } else {
            Kind::DependencyTree
        });
    }
    for (i, c) in comps.iter().enumerate() {
        if *c == ".yarn" && matches!(comps.get(i + 1), Some(&"cache" | &"unplugged")) {
            return Some(Kind::DependencyTree);
        }
        if CACHE_DIRS.contains(c) || c.ends_with(".egg-info") || (*c == "target" && facts.cargo_dirs.contains(&comps[..i].join("/"))) {
            return Some(Kind::BuildCache);
        }
    }
    None
}

fn kind_dirs(comps: &[&str]) -> Option<Kind> {
    let mut best: Option<Kind> = None;
    // The entry itself counts too: a symlink where such a directory
    // belongs is then a special file.
    for (i, c) in comps.iter().enumerate() {
        let k = KIND_DIRS.iter().find(|(n, _)| n == c).map(|(_, k)| *k).or_else(|| {
            let next = comps.get(i + 1)?;
            KIND_SUBDIRS.iter().find(|(o, n, _)| o == c && n == next).map(|(_, _, k)| *k)
        });
        best = match (best, k) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    best
}
