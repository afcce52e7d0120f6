//! Checks of the session's environment (docs/defences.md, sentinel and environment):
//! the sentinels are set, every name is on the registry's allow-list
//! (`env_vars`), the variables the launcher planted never arrive, and the
//! values only the launcher sets are the launcher's.

use super::Ctx;
use crate::agents::Agent;
use crate::env_vars::{self, never_passed, passes_by_default, SET_BY_LAUNCHER};
use crate::Outcome;

fn var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

pub(crate) fn sentinel(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for (name, want) in
        [(env_vars::IS_SANDBOX, "1"), (env_vars::IS_SANDBOX_AGENT, c.spec.agent.as_str()), (env_vars::SANDBOX_SESSION, c.spec.session_id.as_str())]
    {
        match var(name) {
            Some(v) if v == want => {}
            Some(v) => bad.push(format!("{name}={v}, expected {want}")),
            None => bad.push(format!("{name} is not set")),
        }
    }
    Outcome::from_problems(bad)
}

/// Whether `name=value` may be in a session of `agent` with `pass_env`.
pub(crate) fn allowed(name: &str, value: &std::ffi::OsStr, agent: Option<Agent>, pass_env: &[String]) -> bool {
    passes_by_default(name, value)
        || SET_BY_LAUNCHER.contains(&name)
        || (pass_env.iter().any(|p| p == name) && !never_passed(name))
        || agent.is_some_and(|a| a.env().iter().any(|(k, _)| *k == name))
}

pub(crate) fn allow_list_only(c: &Ctx) -> Outcome {
    let agent = Agent::from_name(&c.spec.agent).ok();
    let cwd = std::env::current_dir().ok();
    let extra: Vec<String> = std::env::vars_os()
        // bwrap itself sets PWD to the directory it starts the command in.
        .filter(|(k, v)| !(k == env_vars::PWD && cwd.as_deref() == Some(std::path::Path::new(v))))
        .filter(|(k, v)| !allowed(&k.to_string_lossy(), v, agent, &c.spec.pass_env))
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    if extra.is_empty() {
        Outcome::pass()
    } else {
        Outcome::fail(format!("not on the allow-list: {}", extra.join(", ")))
    }
}

pub(crate) fn secrets_absent(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for (k, v) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        let planted = c.spec.planted_env.contains(&k) || v.to_string_lossy().contains(&c.spec.nonce);
        if planted || (never_passed(&k) && !SET_BY_LAUNCHER.contains(&k.as_str())) {
            bad.push(k);
        }
    }
    if bad.is_empty() {
        Outcome::pass()
    } else {
        Outcome::fail(format!("present inside: {}", bad.join(", ")))
    }
}

pub(crate) fn launcher_values(c: &Ctx) -> Outcome {
    let s = &c.spec;
    let home = s.home.to_string_lossy().into_owned();
    let mut bad = Vec::new();
    for (name, want) in [
        (env_vars::HOME, home.as_str()),
        (env_vars::USER, s.user.as_str()),
        (env_vars::LOGNAME, s.user.as_str()),
        (env_vars::PATH, s.path.as_str()),
        (env_vars::TMPDIR, "/tmp"),
    ] {
        let got = var(name);
        if got.as_deref() != Some(want) {
            bad.push(format!("{name}={}, expected {want}", got.unwrap_or_else(|| "<unset>".into())));
        }
    }
    if let Some(p) = var(env_vars::PATH) {
        if p.split(':').any(|e| !e.starts_with('/')) {
            bad.push("PATH has a relative or empty entry".into());
        }
    }
    Outcome::from_problems(bad)
}
