//! Which kind a path is by its place and name alone (git dirs, references
//! and shared tool dirs are decided elsewhere). Pure: answers from the
//! path and from facts gathered from the listing (where the venvs and
//! cargo packages are), never from a marker file a session could delete.

use super::super::kinds::Kind;
use super::super::walk::{Listing, Ty};
use std::collections::BTreeSet;

/// Facts about the tree the place rules need.
#[derive(Debug, Default)]
pub struct Facts {
    /// Venv roots: directories with `bin/python*`, `lib*/python*/site-packages`
    /// or `pyvenv.cfg`.
    pub venvs: BTreeSet<String>,
    /// Directories holding a `Cargo.toml` (their `target/` is a build cache).
    pub cargo_dirs: BTreeSet<String>,
}

fn split(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}

pub fn facts(listing: &Listing) -> Facts {
    let mut f = Facts::default();
    for (key, _) in &listing.entries[listing.under("")] {
        let (parent, name) = split(key);
        let (grand, pname) = split(parent);
        if name == "Cargo.toml" {
            f.cargo_dirs.insert(parent.to_string());
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
    (".husky", Kind::HookManager),
    (".lefthook", Kind::HookManager),
    (".githooks", Kind::HookManager),
    (".mise", Kind::EnvLoader),
    (".vscode", Kind::Editor),
    (".idea", Kind::Editor),
    (".zed", Kind::Editor),
    (".yarn", Kind::PackageManager),
    (".cargo", Kind::RustProject),
    (".mvn", Kind::BuildFile),
    (".circleci", Kind::CiWorkflow),
    (".buildkite", Kind::CiWorkflow),
    (".woodpecker", Kind::CiWorkflow),
];

/// Names a symlink or special file may not take even where no kind
/// applies: directories that hold code of a kind above.
pub const DIR_PLACES: &[&str] =
    &[".git", "node_modules", ".bin", "site-packages", "dist-packages", ".venv", "venv", "__pycache__", ".github", "workflows", "hooks"];

const NAMES: &[(&str, Kind)] = &[
    (".devcontainer.json", Kind::Devcontainer),
    (".pre-commit-config.yaml", Kind::HookManager),
    (".pre-commit-config.yml", Kind::HookManager),
    (".pre-commit-hooks.yaml", Kind::HookManager),
    ("lefthook.yml", Kind::HookManager),
    ("lefthook.yaml", Kind::HookManager),
    (".lefthook.yml", Kind::HookManager),
    (".lefthook.yaml", Kind::HookManager),
    ("lefthook-local.yml", Kind::HookManager),
    ("lefthook-local.yaml", Kind::HookManager),
    (".tool-versions", Kind::EnvLoader),
    (".rtx.toml", Kind::EnvLoader),
    (".python-version", Kind::EnvLoader),
    (".node-version", Kind::EnvLoader),
    (".nvmrc", Kind::EnvLoader),
    (".ruby-version", Kind::EnvLoader),
    ("shell.nix", Kind::EnvLoader),
    ("flake.nix", Kind::EnvLoader),
    ("devenv.nix", Kind::EnvLoader),
    ("sitecustomize.py", Kind::PythonStartup),
    ("usercustomize.py", Kind::PythonStartup),
    (".nvim.lua", Kind::Editor),
    (".nvimrc", Kind::Editor),
    (".exrc", Kind::Editor),
    ("package.json", Kind::PackageManager),
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
    ("pyproject.toml", Kind::PythonProject),
    ("setup.py", Kind::PythonProject),
    ("setup.cfg", Kind::PythonProject),
    ("tox.ini", Kind::PythonProject),
    ("pytest.ini", Kind::PythonProject),
    ("conftest.py", Kind::PythonProject),
    ("noxfile.py", Kind::PythonProject),
    ("uv.toml", Kind::PythonProject),
    (".pdbrc", Kind::PythonProject),
    ("Cargo.toml", Kind::RustProject),
    ("build.rs", Kind::RustProject),
    ("rust-toolchain", Kind::RustProject),
    ("rust-toolchain.toml", Kind::RustProject),
    ("Makefile", Kind::BuildFile),
    ("makefile", Kind::BuildFile),
    ("GNUmakefile", Kind::BuildFile),
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
    ("build.gradle", Kind::BuildFile),
    ("build.gradle.kts", Kind::BuildFile),
    ("settings.gradle", Kind::BuildFile),
    ("settings.gradle.kts", Kind::BuildFile),
    ("gradlew", Kind::BuildFile),
    ("gradle-wrapper.properties", Kind::BuildFile),
    ("mvnw", Kind::BuildFile),
    ("Rakefile", Kind::BuildFile),
    ("BUILD", Kind::BuildFile),
    ("BUILD.bazel", Kind::BuildFile),
    ("WORKSPACE", Kind::BuildFile),
    ("WORKSPACE.bazel", Kind::BuildFile),
    ("MODULE.bazel", Kind::BuildFile),
    (".bazelrc", Kind::BuildFile),
    ("Dockerfile", Kind::BuildFile),
    ("Containerfile", Kind::BuildFile),
    ("docker-compose.yml", Kind::BuildFile),
    ("docker-compose.yaml", Kind::BuildFile),
    ("compose.yml", Kind::BuildFile),
    ("compose.yaml", Kind::BuildFile),
    (".gitattributes", Kind::GitWorktreeFile),
    (".gitmodules", Kind::GitWorktreeFile),
    (".lfsconfig", Kind::GitWorktreeFile),
    (".gitlab-ci.yml", Kind::CiWorkflow),
    ("azure-pipelines.yml", Kind::CiWorkflow),
    ("Jenkinsfile", Kind::CiWorkflow),
    (".travis.yml", Kind::CiWorkflow),
    ("bitbucket-pipelines.yml", Kind::CiWorkflow),
    (".drone.yml", Kind::CiWorkflow),
    (".woodpecker.yml", Kind::CiWorkflow),
    (".woodpecker.yaml", Kind::CiWorkflow),
];

/// Names matched by shape rather than in full.
fn by_shape(name: &str) -> Option<Kind> {
    let toml = name.ends_with(".toml");
    Some(match name {
        _ if name.starts_with(".envrc") || name == ".env" || name.starts_with(".env.") => Kind::EnvLoader,
        _ if toml && (name.starts_with("mise.") || name.starts_with(".mise.")) => Kind::EnvLoader,
        _ if name.ends_with(".code-workspace") => Kind::Editor,
        _ if name.ends_with(".mk") || name.ends_with(".cmake") => Kind::BuildFile,
        _ if name.starts_with("Dockerfile.") || name.starts_with("Containerfile.") => Kind::BuildFile,
        _ if name.ends_with(".Dockerfile") || name.ends_with(".dockerfile") => Kind::BuildFile,
        _ if name.starts_with("docker-compose.") && (name.ends_with(".yml") || name.ends_with(".yaml")) => Kind::BuildFile,
        _ => return None,
    })
}

fn by_name(name: &str) -> Option<Kind> {
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k).or_else(|| by_shape(name))
}

/// The kind of a workspace path by place, or None for ordinary files.
pub fn place(key: &str, ty: Ty, facts: &Facts) -> Option<Kind> {
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
    let dirs = kind_dirs(&comps);
    // The most dangerous of the directory's and the name's kinds.
    match (dirs, by_name(name)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
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
        ["pyvenv.cfg"] | ["bin"] | ["bin", _] => Some(Kind::VenvBin),
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
    for (i, c) in comps.iter().enumerate() {
        let k = KIND_DIRS.iter().find(|(n, _)| n == c).map(|(_, k)| *k).or_else(|| match (*c, comps.get(i + 1)) {
            (".github", Some(&"workflows" | &"actions")) => Some(Kind::CiWorkflow),
            (".config", Some(&"mise")) => Some(Kind::EnvLoader),
            _ => None,
        });
        best = match (best, k) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    best
}
