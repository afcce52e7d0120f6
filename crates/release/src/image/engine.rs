//! The container engines (podman, docker, buildah): which one is used, and
//! the exact command lines for each step, as pure functions of the plan's
//! values. Engines are taken only from root-owned system directories
//! (`crate::sysbin`), never through PATH.
//!
//! Not here: deciding what to build (`plan`) or running anything (`exec`).

use super::error::ImageError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Podman,
    Docker,
    Buildah,
}

impl Engine {
    /// Detection order when no `--engine` is given.
    pub const ALL: [Engine; 3] = [Engine::Podman, Engine::Docker, Engine::Buildah];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Podman => "podman",
            Engine::Docker => "docker",
            Engine::Buildah => "buildah",
        }
    }

    pub fn from_name(s: &str) -> Result<Engine, ImageError> {
        Engine::ALL.into_iter().find(|e| e.name() == s).ok_or_else(|| ImageError::UnknownEngine(s.to_owned()))
    }
}

/// The programs used: one builds, one runs the verify containers and
/// inspects the result (buildah cannot start a container with a device, so
/// podman, which shares its image store, runs for it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Tools {
    pub engine: Engine,
    pub builder: PathBuf,
    pub(crate) runner: Engine,
    pub(crate) runner_path: PathBuf,
}

/// Picks the tools from the engines found (`found`: engine → its path in a
/// system directory). `dirs` is only for messages.
pub(super) fn choose(requested: Option<Engine>, found: &BTreeMap<Engine, PathBuf>, dirs: &str) -> Result<Tools, ImageError> {
    let engine = match requested {
        Some(e) if found.contains_key(&e) => e,
        Some(e) => {
            let list: Vec<&str> = found.keys().map(|e| e.name()).collect();
            let found = if list.is_empty() { "none".to_owned() } else { list.join(", ") };
            return Err(ImageError::EngineMissing { engine: e.name(), dirs: dirs.to_owned(), found });
        }
        None => *Engine::ALL.iter().find(|e| found.contains_key(e)).ok_or_else(|| ImageError::NoEngine { dirs: dirs.to_owned() })?,
    };
    let runner = match engine {
        Engine::Buildah => Engine::Podman,
        e => e,
    };
    let runner_path = found.get(&runner).cloned().ok_or(ImageError::NoRunner)?;
    Ok(Tools { engine, builder: found[&engine].clone(), runner, runner_path })
}

/// What a build needs from the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BuildSpec<'a> {
    pub tag: &'a str,
    /// `linux/amd64` or `linux/arm64` (another architecture than this
    /// machine's builds under emulation).
    pub platform: &'a str,
    pub context: &'a Path,
    pub network: Option<&'a str>,
    pub no_cache: bool,
    pub build_args: &'a [(String, String)],
    pub labels: &'a [(String, String)],
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// `podman build` / `docker build` / `buildah build --layers` (buildah does
/// not cache layers unless asked) for one platform, with every build
/// argument and label.
pub(super) fn build_argv(tools: &Tools, b: &BuildSpec) -> Vec<String> {
    let mut a = vec![s(&tools.builder), "build".to_owned()];
    if tools.engine == Engine::Buildah {
        a.push("--layers".into());
    }
    a.extend(["--file".into(), s(&b.context.join("Containerfile")), "--tag".into(), b.tag.to_owned(), "--platform".into(), b.platform.to_owned()]);
    if let Some(n) = b.network {
        a.extend(["--network".into(), n.to_owned()]);
    }
    if b.no_cache {
        a.push("--no-cache".into());
    }
    for (k, v) in b.build_args {
        a.extend(["--build-arg".into(), format!("{k}={v}")]);
    }
    for (k, v) in b.labels {
        a.extend(["--label".into(), format!("{k}={v}")]);
    }
    a.push(s(b.context));
    a
}

/// The environment of the build command: docker before 23 builds with its
/// classic builder unless `DOCKER_BUILDKIT=1`, and the Containerfile's
/// `RUN --mount` needs BuildKit (docker 23 and later use it anyway).
pub(super) fn build_env(tools: &Tools) -> Vec<(String, String)> {
    match tools.engine {
        Engine::Docker => vec![(crate::env_vars::DOCKER_BUILDKIT.to_owned(), "1".to_owned())],
        Engine::Podman | Engine::Buildah => Vec::new(),
    }
}

/// `image inspect`: the image's id, size and labels as JSON.
pub(super) fn inspect_argv(tools: &Tools, tag: &str) -> Vec<String> {
    vec![s(&tools.runner_path), "image".into(), "inspect".into(), tag.to_owned()]
}

/// The run options a session needs, in the form both podman and docker
/// accept: the tun device for the egress jail and an unmasked /proc (the
/// launcher mounts a fresh /proc for each session).
const SESSION_RUN_OPTIONS: &[&str] = &["--device", "/dev/net/tun", "--security-opt", "systempaths=unconfined"];

/// What docker needs on top (docs/image.md): its default seccomp profile
/// refuses bubblewrap's namespaces without CAP_SYS_ADMIN, so the container
/// gets the shipped profile (`crate::container_seccomp`, written to
/// `seccomp_profile`: the engine reads it here, unlike a feature's or an
/// image's request) instead of none; and its AppArmor profile refuses the
/// mounts. podman's defaults allow both.
fn docker_run_options(seccomp_profile: &Path) -> Vec<String> {
    vec!["--security-opt".into(), format!("seccomp={}", seccomp_profile.display()), "--security-opt".into(), "apparmor=unconfined".into()]
}

/// The run options for sessions with `runner`.
fn session_run_options(runner: Engine, seccomp_profile: &Path) -> Vec<String> {
    let mut a: Vec<String> = SESSION_RUN_OPTIONS.iter().map(|x| x.to_string()).collect();
    if runner == Engine::Docker {
        a.extend(docker_run_options(seccomp_profile));
    }
    a
}

/// A long-running container of `tag` named `name`, started as root the way
/// a devcontainer is (the image's entrypoint runs), with the session options.
pub(super) fn start_argv(tools: &Tools, tag: &str, name: &str, network: Option<&str>, seccomp_profile: &Path) -> Vec<String> {
    let mut a = vec![s(&tools.runner_path), "run".into(), "--detach".into(), "--name".into(), name.to_owned()];
    a.extend(session_run_options(tools.runner, seccomp_profile));
    if let Some(n) = network {
        a.extend(["--network".into(), n.to_owned()]);
    }
    a.extend([tag.to_owned(), "sleep".into(), "infinity".into()]);
    a
}

/// `command` as `user` in the running container `name` (as the Dev
/// Containers CLI runs the remote user's commands).
pub(super) fn exec_argv(tools: &Tools, name: &str, user: &str, env: &[(String, String)], command: &[String]) -> Vec<String> {
    let mut a = vec![s(&tools.runner_path), "exec".into(), "--user".into(), user.to_owned()];
    for (k, v) in env {
        a.extend(["--env".into(), format!("{k}={v}")]);
    }
    a.push(name.to_owned());
    a.extend(command.iter().cloned());
    a
}

/// Removes the container at once (podman would wait 10 s for `sleep`).
pub(super) fn remove_argv(tools: &Tools, name: &str) -> Vec<String> {
    let mut a = vec![s(&tools.runner_path), "rm".into(), "--force".into()];
    if tools.runner == Engine::Podman {
        a.extend(["--time".into(), "0".into()]);
    }
    a.push(name.to_owned());
    a
}

/// Where an exported image lands: an OCI layout folder, or (docker) a tar
/// of one that is unpacked into `dir` first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Export {
    Dir { dir: PathBuf },
    Tar { tar: PathBuf, dir: PathBuf },
}

impl Export {
    pub fn dir(&self) -> &Path {
        match self {
            Export::Dir { dir } | Export::Tar { dir, .. } => dir,
        }
    }
}

/// Exports `tag` as an OCI image layout under `work` (layers compressed
/// by podman and buildah; docker ≥ 25 writes an OCI layout in its tar).
pub(super) fn export_argv(tools: &Tools, tag: &str, work: &Path) -> (Vec<String>, Export) {
    let dir = work.join("oci");
    match tools.engine {
        Engine::Podman => {
            (vec![s(&tools.builder), "save".into(), "--format".into(), "oci-dir".into(), "--output".into(), s(&dir), tag.to_owned()], Export::Dir { dir })
        }
        Engine::Buildah => (vec![s(&tools.builder), "push".into(), tag.to_owned(), format!("oci:{}", dir.display())], Export::Dir { dir }),
        Engine::Docker => {
            let tar = work.join("image.tar");
            (vec![s(&tools.builder), "save".into(), "--output".into(), s(&tar), tag.to_owned()], Export::Tar { tar, dir })
        }
    }
}

#[cfg(test)]
mod tests;
