//! The launcher's side of the specification: facts only the outside knows
//! (its namespaces, the outer home's entries, the host's routes and
//! resolvers) and what a correct session must show, gathered into a
//! `Spec` for the probe. Reads the system; changes nothing.

use super::homeview::{allowed_rel, classify};
use super::spec::{JailSpec, ScopeSample, Spec};
use crate::agents::Agent;
use crate::config::{Config, EnvMap};
use crate::sandbox::fsview::RealFs;
use crate::sandbox::plan::{Plan, ENGINE_SOCKETS, MASKED_ETC, MASKED_ETC_DIRS, MASKED_SHARE, TOOL_DIRS};
use crate::sandbox::scope;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Variables planted in the environment the plan is decided from: each
/// looks like a secret, a socket or a loader hook and must never arrive.
use crate::env_vars::VERIFY_PLANTED as PLANTED;

/// `env` plus the planted variables, each holding the nonce.
pub(super) fn planted_env(env: &EnvMap, nonce: &str) -> EnvMap {
    let mut e = env.clone();
    for name in PLANTED {
        e.insert((*name).into(), format!("/nonexistent/agent-sandbox-verify-{nonce}").into());
    }
    e
}

/// Everything about the session's layout the probe needs, except the
/// per-run items (canary, keyring) the caller fills in.
pub(super) struct Layout<'a> {
    pub agent: Agent,
    pub config: &'a Config,
    pub env: &'a EnvMap,
    pub home: PathBuf,
    pub user: String,
    pub uid: u32,
    pub nonce: String,
}

fn rel_under(p: &Path, home: &Path) -> Option<String> {
    p.strip_prefix(home).ok().filter(|r| !r.as_os_str().is_empty()).map(|r| r.to_string_lossy().into_owned())
}

pub(super) fn spec(l: &Layout, plan: &Plan, jail: bool) -> Spec {
    let home = &l.home;
    let mut home_extra: Vec<String> = Vec::new();
    home_extra.extend(rel_under(&plan.workspace, home));
    home_extra.extend(l.config.writable().iter().filter_map(|p| rel_under(p, home)));
    if l.config.peers {
        home_extra.extend(plan.workspace.parent().and_then(|p| rel_under(p, home)));
    }
    let allowed = allowed_rel(Some(l.agent), &home_extra);
    let mut outer_home_sample: Vec<String> = crate::checks::sys::entries(home).into_iter().filter(|n| classify(n, &allowed).is_none()).collect();
    outer_home_sample.truncate(32);
    let outer_ns: BTreeMap<String, u64> = ["pid", "ipc", "uts", "mnt", "user", "cgroup", "net"]
        .iter()
        .filter_map(|ns| crate::checks::sys::ns_inode("self", ns).map(|i| (ns.to_string(), i)))
        .collect();
    let mut helpers = vec![plan.bwrap.clone()];
    if jail {
        helpers.extend(crate::sysbin::find("pasta", "").ok());
    }
    let git_config = plan.env.get(OsStr::new(crate::env_vars::GIT_CONFIG_GLOBAL)).map(PathBuf::from).unwrap_or_else(|| home.join(".gitconfig"));
    Spec {
        agent: l.agent.name().into(),
        session_id: plan.env.get(OsStr::new(crate::env_vars::SANDBOX_SESSION)).map(|v| v.to_string_lossy().into_owned()).unwrap_or_default(),
        nonce: l.nonce.clone(),
        user: l.user.clone(),
        uid: l.uid,
        home: home.clone(),
        workspace: plan.workspace.clone(),
        path: crate::sandbox::env::sanitized_path(l.env.get(OsStr::new(crate::env_vars::PATH)).map(|p| p.as_os_str())).to_string_lossy().into_owned(),
        pass_env: l.config.pass_env.clone(),
        planted_env: PLANTED.iter().map(|s| s.to_string()).collect(),
        no_forge: l.config.no_forge,
        allow_write: l.config.writable(),
        protect_devcontainer: l.config.protect_devcontainer,
        protect_git_hooks: l.config.protect_git_hooks,
        protect_git_config: l.config.protect_git_config,
        home_extra,
        outer_home_sample,
        masked_share_present: MASKED_SHARE.iter().filter(|r| home.join(r).exists()).map(|r| r.to_string()).collect(),
        share_tool_dirs: l.config.share_tool_dirs,
        outer_tool_dirs: TOOL_DIRS.iter().filter_map(|r| std::fs::metadata(home.join(r)).ok().map(|m| (r.to_string(), m.dev(), m.ino()))).collect(),
        etc_masked_present: MASKED_ETC.iter().chain(MASKED_ETC_DIRS).map(PathBuf::from).filter(|p| p.exists()).collect(),
        tmp_sockets: Vec::new(),
        run_user_sample: crate::checks::sys::entries(Path::new("/run/user")).into_iter().take(8).map(|n| Path::new("/run/user").join(n)).collect(),
        run_sample: run_sample(plan),
        root_canaries: Vec::new(),
        root_canary_error: None,
        root_canary_notes: Vec::new(),
        outer_ns,
        container_proc: plan.container_proc(),
        launcher_pid: std::process::id() as i32,
        canary_pid: 0,
        canary_port: 0,
        abstract_name: String::new(),
        key_id: None,
        keyring_id: None,
        outside_refuses: Vec::new(),
        helpers,
        launcher_dir: crate::sandbox::context::shim_dir(),
        shell_dirs: shell_dirs(home, &plan.mounts),
        git_config,
        scope: Vec::new(),
        jail: None,
    }
}

/// The directories beyond the session's PATH where a planted entry point
/// would run outside later: those the shells' start-up files name (on PATH,
/// or an alias's file's directory) and the vendors' install directories,
/// where the session's writes land outside (a private copy's do not).
fn shell_dirs(home: &Path, mounts: &[crate::sandbox::mounts::Planned]) -> Vec<PathBuf> {
    let found = crate::sandbox::shellrc::gather(home);
    let mut dirs: Vec<PathBuf> = found.dirs.into_iter().map(|(d, _)| d).collect();
    dirs.extend(found.aliases.into_iter().filter_map(|(_, f, _)| f.parent().map(Path::to_path_buf)));
    dirs.extend(crate::sandbox::plan::VENDOR_INSTALL_DIRS.iter().map(|r| home.join(r)));
    dirs.retain(|d| crate::sandbox::plan::writes_land_outside(mounts, d));
    dirs
}

/// What `scope` says for a sample of interesting paths, computed from the
/// plan as it will run.
pub(super) fn scope_samples(plan: &Plan, spec: &Spec) -> Vec<ScopeSample> {
    let ws = &plan.workspace;
    let mut paths: Vec<PathBuf> = vec![ws.clone(), ws.join(".git/hooks"), ws.join(".devcontainer")];
    if let Some(parent) = ws.parent() {
        paths.push(parent.to_path_buf());
        paths.extend(crate::checks::sys::entries(parent).into_iter().take(4).map(|n| parent.join(n)));
    }
    let home = &spec.home;
    paths.push(home.clone());
    paths.extend([".netrc", ".claude", ".claude.json", ".codex", ".pi", ".cache", ".config/gh", ".gitconfig"].iter().map(|r| home.join(r)));
    paths.extend(spec.outer_home_sample.iter().take(4).map(|n| home.join(n)));
    paths.extend(
        ["/etc/shadow", "/etc/hostname", "/usr/bin", "/tmp", "/var/tmp", "/run/user", "/run/secrets", "/dev/null", "/dev/sda"].iter().map(PathBuf::from),
    );
    paths.extend(ENGINE_SOCKETS.iter().map(PathBuf::from));
    // Only what exists outside: there is nothing to read at a missing path.
    paths.retain(|p| p.exists());
    let mut paths: Vec<PathBuf> = paths.iter().map(|p| scope::real_path(p, Path::new("/"))).collect();
    paths.sort();
    paths.dedup();
    let mounts = scope::effective_mounts(&plan.mounts, &RealFs, &|p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()));
    paths
        .into_iter()
        .map(|p| {
            let access = scope::access(&mounts, &p);
            let can = |mode| nix::unistd::access(&p, mode).is_ok();
            ScopeSample {
                access: serde_json::to_value(access).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
                readable_outside: can(nix::unistd::AccessFlags::R_OK),
                writable_outside: can(nix::unistd::AccessFlags::W_OK),
                path: p,
            }
        })
        .collect()
}

/// The jail's expected shape: the planned resolv.conf, the host facts and
/// what the jail's plan found the container to route (decided before any
/// weakening, so a weakened plan is checked against the real container).
pub(super) fn jail_spec(plan: &Plan, config: &Config, jail: &crate::jail::JailPlan) -> JailSpec {
    let planned = plan
        .data
        .iter()
        .find(|d| d.purpose == crate::sandbox::plan::Purpose::ResolvConf)
        .map(|d| String::from_utf8_lossy(&d.bytes).into_owned())
        .unwrap_or_default();
    let host = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    let field = |text: &str, key: &str| -> Vec<String> {
        text.lines().filter(|l| l.split_whitespace().next() == Some(key)).map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string()).collect()
    };
    let kept_lines = host
        .lines()
        .map(|l| l.trim_end().to_string())
        .filter(|l| ["search", "domain", "options"].contains(&l.split_whitespace().next().unwrap_or("")))
        .collect();
    let v6 = nix::ifaddrs::getifaddrs()
        .map(|it| {
            it.filter_map(|i| i.address.and_then(|a| a.as_sockaddr_in6().map(|s| s.ip())))
                .filter(|a| !a.is_loopback() && (a.segments()[0] & 0xffc0) != 0xfe80)
                .collect()
        })
        .unwrap_or_default();
    let (connected, routes, addrs) = container_samples(&jail.container);
    JailSpec {
        nameservers: field(&planned, "nameserver").iter().filter_map(|a| a.parse().ok()).collect(),
        kept_lines,
        outer_connected: connected,
        container_total: (routes.len(), addrs.len()),
        container_routes: routes.into_iter().take(super::spec::SAMPLED).collect(),
        container_addrs: addrs.into_iter().take(super::spec::SAMPLED).collect(),
        outer_resolvers: field(&host, "nameserver").iter().filter_map(|a| a.parse::<IpAddr>().ok()).collect(),
        outer_v6: v6,
        allow_ip: config.allow_ip.clone(),
        allowlist: jail.allowlist.is_some(),
        allow_names: jail.allowlist.iter().flat_map(|l| l.names.iter().cloned()).collect(),
        upstream: jail.allowlist.is_some().then_some(jail.forwarder),
    }
}

/// Prefixes as (network, length).
type Prefixes = Vec<(Ipv4Addr, u8)>;

/// The container's destinations the jail blocks, split for the checks:
/// connected subnets (40), other routed prefixes (91), addresses (92).
fn container_samples(all: &[crate::jail::Destination]) -> (Prefixes, Prefixes, Vec<Ipv4Addr>) {
    use crate::jail::Source;
    let (mut connected, mut routes, mut addrs) = (Vec::new(), Vec::new(), Vec::new());
    for d in all {
        match d.source {
            Source::Connected => connected.push((d.net.network(), d.net.prefix())),
            Source::Address if d.net.prefix() == 32 => addrs.push(d.net.network()),
            _ => routes.push((d.net.network(), d.net.prefix())),
        }
    }
    (connected, routes, addrs)
}

/// Top-level names of the outer /run, but those the plan binds something
/// under (resolv.conf's directory).
fn run_sample(plan: &Plan) -> Vec<String> {
    let kept: Vec<String> = plan
        .mounts
        .iter()
        .filter_map(|m| m.dest().strip_prefix("/run").ok().and_then(|r| r.components().next()).map(|c| c.as_os_str().to_string_lossy().into_owned()))
        .collect();
    let mut v: Vec<String> = crate::checks::sys::entries(Path::new("/run")).into_iter().filter(|n| !kept.contains(n)).collect();
    v.truncate(32);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_destinations_are_split_by_source() {
        use crate::jail::{Destination, Source};
        let d = |net: &str, source| Destination { net: net.parse().unwrap(), source, why: String::new() };
        let all = [
            d("192.0.2.0/24", Source::Connected),
            d("203.0.113.0/24", Source::Route),
            d("198.19.7.0/24", Source::Rule),
            d("198.51.100.7/32", Source::Address),
            d("10.9.0.0/16", Source::Address),
        ];
        let (c, r, a) = container_samples(&all);
        assert_eq!(c, [(Ipv4Addr::new(192, 0, 2, 0), 24)]);
        assert_eq!(r, [(Ipv4Addr::new(203, 0, 113, 0), 24), (Ipv4Addr::new(198, 19, 7, 0), 24), (Ipv4Addr::new(10, 9, 0, 0), 16)]);
        assert_eq!(a, [Ipv4Addr::new(198, 51, 100, 7)]);
    }

    #[test]
    fn planted_values_carry_the_nonce() {
        let e = planted_env(&EnvMap::new(), "n0nce");
        assert_eq!(e.len(), PLANTED.len());
        assert!(e.values().all(|v| v.to_string_lossy().contains("n0nce")));
    }
}
