//! What the launcher tells the probe: the values a correct session must
//! show (agent, home, PATH, allowed names) and facts only the outside knows
//! (its namespaces, the canary's pid and sockets, the host's resolvers).
//! Plain data, serialised as one JSON argument of `__probe`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spec {
    pub agent: String,
    pub session_id: String,
    /// A random token: the canary's secret and the planted variables' value.
    pub nonce: String,
    pub user: String,
    pub uid: u32,
    pub home: PathBuf,
    pub workspace: PathBuf,
    /// The PATH the session must have (the outer one, sanitised).
    pub path: String,
    pub pass_env: Vec<String>,
    /// Secret-like and never-passed variables the launcher planted in the
    /// environment it handed to the plan.
    pub(crate) planted_env: Vec<String>,
    pub no_forge: bool,
    /// The configuration's allowWrite paths (writable by design).
    pub allow_write: Vec<PathBuf>,
    /// Which host-executed parts of the workspace the configuration keeps
    /// read-only: the devcontainer definition, git hooks, .git/config.
    pub protect_devcontainer: bool,
    pub protect_git_hooks: bool,
    pub protect_git_config: bool,
    /// Paths under the home (relative) a session may see besides the
    /// registry's: the workspace, allowWrite paths, peers.
    pub(crate) home_extra: Vec<String>,
    /// Top-level entries of the outer home that must not be visible.
    pub(crate) outer_home_sample: Vec<String>,
    /// Credential corners of the home (relative) that exist outside.
    pub(crate) masked_share_present: Vec<String>,
    /// Whether sessions get the user's own tool dirs (`shareToolDirs`).
    pub share_tool_dirs: bool,
    /// The outer tool dirs that exist: (relative path, device, inode).
    pub(crate) outer_tool_dirs: Vec<(String, u64, u64)>,
    /// /etc secrets that exist outside.
    pub(crate) etc_masked_present: Vec<PathBuf>,
    /// The canary's sockets in the outer /tmp and /var/tmp.
    pub(crate) tmp_sockets: Vec<PathBuf>,
    /// Entries of the outer /run/user.
    pub(crate) run_user_sample: Vec<PathBuf>,
    /// Top-level entries of the outer /run (none may be visible inside but
    /// what is bound back).
    pub(crate) run_sample: Vec<String>,
    /// For a root launcher: files, a directory and a socket only root may
    /// use, planted outside for this run (or why they could not be).
    pub(crate) root_canaries: Vec<PathBuf>,
    pub(crate) root_canary_error: Option<String>,
    /// Canaries that could not be planted here (a read-only `/`, a file
    /// system without ACLs): named by the check.
    #[serde(default)]
    pub(crate) root_canary_notes: Vec<String>,
    /// Whether the plan binds the container's /proc (its masked /proc
    /// refuses a fresh one): outer processes are visible there, by the
    /// container's numbers.
    pub container_proc: bool,
    /// Inode of each of the launcher's namespaces (`pid`, `net`, ...).
    pub(crate) outer_ns: BTreeMap<String, u64>,
    pub(crate) launcher_pid: i32,
    pub(crate) canary_pid: i32,
    /// The canary's TCP listener on the outer 127.0.0.1.
    pub(crate) canary_port: u16,
    /// The canary's abstract unix socket name (without the leading NUL).
    pub(crate) abstract_name: String,
    /// A key in the launcher's session keyring holding the nonce (readable
    /// by its owner), and that keyring's own id.
    pub(crate) key_id: Option<i32>,
    pub(crate) keyring_id: Option<i32>,
    /// Operations agents need that fail outside the session too (the
    /// container's own seccomp profile): notes, not failures, inside.
    pub(crate) outside_refuses: Vec<String>,
    /// Helpers the launcher runs (bwrap, pasta).
    pub helpers: Vec<PathBuf>,
    /// The launcher's own directory (where the shims live).
    pub(crate) launcher_dir: Option<PathBuf>,
    /// Directories the user's shell start-up files put on PATH or alias an
    /// entry point into, and the vendors' install directories: where they
    /// are writable inside, the entry guard must hold there too.
    pub(crate) shell_dirs: Vec<PathBuf>,
    pub git_config: PathBuf,
    /// What `scope` says about a sample of paths, with the outer facts.
    pub scope: Vec<ScopeSample>,
    pub jail: Option<JailSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeSample {
    pub path: PathBuf,
    /// `hidden`, `empty`, `read`, `write` or `private`.
    pub access: String,
    /// Whether the launcher's user can read / write it outside (file modes
    /// still apply inside; scope only describes the mounts).
    pub(crate) readable_outside: bool,
    pub writable_outside: bool,
}

/// What the egress jail must look like from inside.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct JailSpec {
    /// The nameservers of the session's planned resolv.conf.
    pub(crate) nameservers: Vec<Ipv4Addr>,
    /// The host's `search`/`domain`/`options` lines, kept inside.
    pub(crate) kept_lines: Vec<String>,
    /// The container's connected IPv4 subnets (address, prefix).
    pub(crate) outer_connected: Vec<(Ipv4Addr, u8)>,
    /// Every other destination the container routes other than by its
    /// default route: routes through other gateways, of other tables, of
    /// the local table, policy rules' targets (address, prefix). At most
    /// `SAMPLED` (the spec is one command-line argument).
    pub(crate) container_routes: Vec<(Ipv4Addr, u8)>,
    /// The container's own addresses, on every interface (at most `SAMPLED`).
    pub(crate) container_addrs: Vec<Ipv4Addr>,
    /// How many of each there were in all (when more than were passed).
    pub(crate) container_total: (usize, usize),
    /// The host's real resolvers.
    pub(crate) outer_resolvers: Vec<IpAddr>,
    /// The container's own global IPv6 addresses.
    pub(crate) outer_v6: Vec<std::net::Ipv6Addr>,
    /// The configuration's allowIp addresses.
    pub allow_ip: Vec<Ipv4Addr>,
    /// allowDomains is on (with `--weaken jail-allowlist` too: the checks
    /// must then fail).
    pub allowlist: bool,
    /// Its names that are not wildcards, presets expanded.
    pub(crate) allow_names: Vec<String>,
    /// pasta's forwarder, which only the jail's own may ask (allowlist).
    pub upstream: Option<Ipv4Addr>,
}

/// The most container routes (and addresses) passed to the probe.
pub(crate) const SAMPLED: usize = 512;

impl Spec {
    pub(crate) fn to_arg(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub(crate) fn from_arg(s: &str) -> Result<Spec, String> {
        serde_json::from_str(s).map_err(|e| format!("bad probe specification: {e}"))
    }
}
