//! The session's environment: cleared, then the allow-list, the config's
//! `passEnv` names, the agent's update-check switches, and the variables
//! the launcher sets itself. Nothing on the never-passed list gets through.

use crate::config::Config;
use crate::env_vars::{self, never_passed, passes_by_default};
use crate::sandbox::context::Context;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The outer PATH with relative and empty entries dropped (a relative entry
/// would resolve against whatever directory the agent is in).
pub fn sanitized_path(outer: Option<&OsStr>) -> OsString {
    let Some(outer) = outer else { return DEFAULT_PATH.into() };
    let kept: Vec<&[u8]> = outer.as_bytes().split(|b| *b == b':').filter(|e| e.starts_with(b"/")).collect();
    if kept.is_empty() {
        return DEFAULT_PATH.into();
    }
    OsStr::from_bytes(&kept.join(&b':')).to_os_string()
}

/// The directories of a PATH value, in order.
pub fn path_dirs(path: &OsStr) -> Vec<std::path::PathBuf> {
    path.as_bytes().split(|b| *b == b':').filter(|e| e.starts_with(b"/")).map(|e| Path::new(OsStr::from_bytes(e)).to_path_buf()).collect()
}

/// The whole environment of the session, sorted by name.
pub fn session_env(ctx: &Context, config: &Config, git_config: &Path) -> BTreeMap<OsString, OsString> {
    let mut env = BTreeMap::new();
    for (k, v) in &ctx.env {
        let Some(name) = k.to_str() else { continue };
        let allowed = passes_by_default(name, v) || config.pass_env.iter().any(|p| p == name);
        if allowed && !never_passed(name) {
            env.insert(k.clone(), v.clone());
        }
    }
    for (k, v) in ctx.agent.env() {
        env.insert((*k).into(), (*v).into());
    }
    let set = |env: &mut BTreeMap<OsString, OsString>, k: &str, v: &OsStr| {
        env.insert(k.into(), v.to_os_string());
    };
    set(&mut env, env_vars::PATH, &sanitized_path(ctx.env.get(OsStr::new(env_vars::PATH)).map(OsString::as_os_str)));
    set(&mut env, env_vars::HOME, ctx.home.as_os_str());
    set(&mut env, env_vars::USER, ctx.user.as_ref());
    set(&mut env, env_vars::LOGNAME, ctx.user.as_ref());
    set(&mut env, env_vars::SHELL, ctx.shell.as_os_str());
    set(&mut env, env_vars::TMPDIR, "/tmp".as_ref());
    set(&mut env, env_vars::IS_SANDBOX, "1".as_ref());
    set(&mut env, env_vars::IS_SANDBOX_AGENT, ctx.agent.name().as_ref());
    set(&mut env, env_vars::SANDBOX_SESSION, ctx.session_id.as_ref());
    set(&mut env, env_vars::GIT_CONFIG_GLOBAL, git_config.as_os_str());
    set(&mut env, env_vars::GIT_CONFIG_NOSYSTEM, "1".as_ref());
    env
}
