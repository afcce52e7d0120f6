//! The registry of configuration keys: their camelCase names, value kinds,
//! environment variables (and `CLAUDE_SANDBOX_*` aliases) and one-line docs.
//! Every other file of the module looks keys up here instead of repeating
//! string literals. Not responsible for parsing or validating values.

use crate::env_vars::{self as var, ConfigVar};

/// What type of value a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// One absolute path.
    Path,
    /// A list; the environment adds to it instead of replacing it.
    List(ItemKind),
}

/// The element type of a list key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Ip,
    Port,
    /// An absolute path a session may write (`validate::write_path`).
    Path,
    /// The same, root's own directories allowed (`allowWriteRootOwned`).
    RootOwnedPath,
    /// A path under /dev/.
    Device,
    /// An environment variable name.
    Name,
    /// A host name, a `*.` wildcard or a preset (`domains::domain`).
    Domain,
}

impl Kind {
    /// How the expected type reads in an error message.
    pub fn expected(self) -> &'static str {
        match self {
            Kind::Bool => "a boolean (true or false)",
            Kind::Path => "an absolute path string",
            Kind::List(ItemKind::Ip) => "an array of IPv4 address strings",
            Kind::List(ItemKind::Port) => "an array of port numbers",
            Kind::List(ItemKind::Path | ItemKind::RootOwnedPath) => "an array of absolute path strings",
            Kind::List(ItemKind::Device) => "an array of /dev/... path strings",
            Kind::List(ItemKind::Name) => "an array of environment variable names",
            Kind::List(ItemKind::Domain) => "an array of host name strings",
        }
    }
}

impl ItemKind {
    /// How one element reads in an error message.
    pub fn expected(self) -> &'static str {
        match self {
            ItemKind::Ip => "an IPv4 address string",
            ItemKind::Port => "a port number (1-65535)",
            ItemKind::Path | ItemKind::RootOwnedPath => "an absolute path string",
            ItemKind::Device => "a /dev/... path string",
            ItemKind::Name => "an environment variable name string",
            ItemKind::Domain => "a host name string",
        }
    }
}

/// One configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    EgressJail,
    AllowIp,
    AllowDomains,
    LocalPorts,
    CallbackPorts,
    NoForge,
    Peers,
    AllowWrite,
    AllowWriteRootOwned,
    AllowDevice,
    Gpu,
    PassEnv,
    WorkspaceRoot,
    ProtectDevcontainer,
    ProtectGitHooks,
    ProtectGitConfig,
    ShareToolDirs,
}

/// Static facts about a key; one row per key in [`SPECS`], in the order
/// of the enum (a unit test checks that every row maps back to its key).
struct Spec {
    name: &'static str,
    var: ConfigVar,
    kind: Kind,
    doc: &'static str,
}

const SPECS: [Spec; 17] = [
    Spec { name: "egressJail", var: var::EGRESS_JAIL, kind: Kind::Bool, doc: "run the agent in the network egress jail" },
    Spec { name: "allowIp", var: var::ALLOW_IP, kind: Kind::List(ItemKind::Ip), doc: "IPv4 addresses reachable through the jail's blocked ranges" },
    Spec {
        name: "allowDomains",
        var: var::ALLOW_DOMAINS,
        kind: Kind::List(ItemKind::Domain),
        doc: "when set, the jail reaches only these host names (*.example.com wildcards, @agents and @registries presets), enforced by its filter",
    },
    Spec {
        name: "localPorts",
        var: var::LOCAL_PORTS,
        kind: Kind::List(ItemKind::Port),
        doc: "ports whose jail 127.0.0.1:P reaches the container's 127.0.0.1:P",
    },
    Spec {
        name: "callbackPorts",
        var: var::CALLBACK_PORTS,
        kind: Kind::List(ItemKind::Port),
        doc: "ports whose container 127.0.0.1:P reaches the agent's listener (OAuth callbacks)",
    },
    Spec { name: "noForge", var: var::NO_FORGE, kind: Kind::Bool, doc: "hide forge token stores (gh, glab) and git credential helpers" },
    Spec { name: "peers", var: var::PEERS, kind: Kind::Bool, doc: "make sibling checkouts readable (not writable)" },
    Spec {
        name: "allowWrite",
        var: var::ALLOW_WRITE,
        kind: Kind::List(ItemKind::Path),
        doc: "extra writable paths (not system locations, package or service state, root's home, or directories root owns)",
    },
    Spec {
        name: "allowWriteRootOwned",
        var: var::ALLOW_WRITE_ROOT_OWNED,
        kind: Kind::List(ItemKind::RootOwnedPath),
        doc: "extra writable paths that root owns, accepting that what a session leaves there may run as root",
    },
    Spec { name: "allowDevice", var: var::ALLOW_DEVICE, kind: Kind::List(ItemKind::Device), doc: "devices under /dev passed into the sandbox" },
    Spec { name: "gpu", var: var::GPU, kind: Kind::Bool, doc: "pass NVIDIA and DRI GPU devices" },
    Spec { name: "passEnv", var: var::PASS_ENV, kind: Kind::List(ItemKind::Name), doc: "extra environment variables passed into the sandbox" },
    Spec { name: "workspaceRoot", var: var::WORKSPACE_ROOT, kind: Kind::Path, doc: "the writable workspace (default: the current directory)" },
    Spec {
        name: "protectDevcontainer",
        var: var::PROTECT_DEVCONTAINER,
        kind: Kind::Bool,
        doc: "make the workspace's .devcontainer/ and .devcontainer.json read-only in sessions",
    },
    Spec {
        name: "protectGitHooks",
        var: var::PROTECT_GIT_HOOKS,
        kind: Kind::Bool,
        doc: "make the workspace's .git/hooks (and a core.hooksPath directory) read-only in sessions",
    },
    Spec { name: "protectGitConfig", var: var::PROTECT_GIT_CONFIG, kind: Kind::Bool, doc: "make the workspace's .git/config read-only in sessions" },
    Spec {
        name: "shareToolDirs",
        var: var::SHARE_TOOL_DIRS,
        kind: Kind::Bool,
        doc: "give sessions your own ~/.cache and ~/.local/share instead of the sandbox's private ones",
    },
];

impl Key {
    /// Every key, in the order documentation and `config show` list them.
    pub const ALL: [Key; 17] = [
        Key::EgressJail,
        Key::AllowIp,
        Key::AllowDomains,
        Key::LocalPorts,
        Key::CallbackPorts,
        Key::NoForge,
        Key::Peers,
        Key::AllowWrite,
        Key::AllowWriteRootOwned,
        Key::AllowDevice,
        Key::Gpu,
        Key::PassEnv,
        Key::WorkspaceRoot,
        Key::ProtectDevcontainer,
        Key::ProtectGitHooks,
        Key::ProtectGitConfig,
        Key::ShareToolDirs,
    ];

    fn spec(self) -> &'static Spec {
        // SPECS is declared in the same order as the enum.
        &SPECS[self as usize]
    }

    /// The camelCase name used in the file, in `sources` and in messages.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// `AGENT_SANDBOX_<KEY>`.
    pub(crate) fn env_var(self) -> &'static str {
        self.spec().var.name
    }

    /// `CLAUDE_SANDBOX_<KEY>`, the accepted alias.
    pub(crate) fn alias_var(self) -> &'static str {
        self.spec().var.alias
    }

    pub fn kind(self) -> Kind {
        self.spec().kind
    }

    /// One line for docs and help.
    pub fn doc(self) -> &'static str {
        self.spec().doc
    }

    /// Exact (case-sensitive) lookup of a file key.
    pub fn from_name(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The valid key names, comma separated, for "unknown key" messages.
    pub(crate) fn valid_names() -> String {
        Key::ALL.map(Key::name).join(", ")
    }
}

/// The key a near-miss probably meant: same letters ignoring case and
/// `_`/`-` (so `allowIP`, `allow_ip`, `allow-ip` all map to `allowIp`), or
/// within two edits.
pub fn suggest(unknown: &str) -> Option<Key> {
    let folded = fold(unknown);
    if let Some(k) = Key::ALL.into_iter().find(|k| fold(k.name()) == folded) {
        return Some(k);
    }
    Key::ALL.into_iter().map(|k| (strsim::levenshtein(&folded, &fold(k.name())), k)).filter(|(d, _)| *d <= 2).min_by_key(|(d, _)| *d).map(|(_, k)| k)
}

fn fold(s: &str) -> String {
    s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}
