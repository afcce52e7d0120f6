//! The one registry of environment variables the product reads, sets, passes
//! into a session, or refuses to pass. Everything else refers to these
//! constants so the reference (docs/defences.md) can be checked against code;
//! a unit test (`no_variable_is_named_elsewhere`) fails when a source file
//! names one of them, or a new one, itself.

/// Set inside every session: Claude Code reads it to know it is sandboxed.
pub const IS_SANDBOX: &str = "IS_SANDBOX";
/// Set inside every session: the agent profile of the session.
pub const IS_SANDBOX_AGENT: &str = "IS_SANDBOX_AGENT";
/// Set inside every session: the session's id (also in the marker file).
pub const SANDBOX_SESSION: &str = "AGENT_SANDBOX_SESSION";

/// The session's own values, set by the launcher (also read outside: the
/// user's PATH and HOME are where a session's tools and state are found).
pub const PATH: &str = "PATH";
pub const HOME: &str = "HOME";
pub const USER: &str = "USER";
pub const LOGNAME: &str = "LOGNAME";
pub const SHELL: &str = "SHELL";
pub const TMPDIR: &str = "TMPDIR";
/// git's global config is the session's copy; the system one is not read.
pub const GIT_CONFIG_GLOBAL: &str = "GIT_CONFIG_GLOBAL";
pub const GIT_CONFIG_NOSYSTEM: &str = "GIT_CONFIG_NOSYSTEM";
/// Passed in; the launcher reads it to know how to restore the terminal.
pub const TERM: &str = "TERM";
/// A shell's working directory; verify's leak check ignores it when it is
/// the session's cwd.
pub const PWD: &str = "PWD";
/// Where review keeps its baselines when set (else ~/.local/state).
pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";

/// One configuration key's override variable and its accepted alias (the
/// seed's name); the first wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigVar {
    pub name: &'static str,
    pub alias: &'static str,
}

/// `KEY` gives `AGENT_SANDBOX_KEY` and its alias `CLAUDE_SANDBOX_KEY`
/// (literals: `concat!` takes no constants; a test holds them to
/// [`PREFIX`] and [`ALIAS_PREFIX`]).
macro_rules! config_vars {
    ($($key:ident),* $(,)?) => {
        $(pub const $key: ConfigVar =
            ConfigVar { name: concat!("AGENT_SANDBOX_", stringify!($key)), alias: concat!("CLAUDE_SANDBOX_", stringify!($key)) };)*
        /// Every configuration key's variables.
        #[cfg(test)]
        const CONFIG_VARS: &[ConfigVar] = &[$($key),*];
    };
}

config_vars!(
    EGRESS_JAIL,
    ALLOW_IP,
    ALLOW_DOMAINS,
    LOCAL_PORTS,
    CALLBACK_PORTS,
    NO_FORGE,
    PEERS,
    ALLOW_WRITE,
    ALLOW_WRITE_ROOT_OWNED,
    ALLOW_DEVICE,
    GPU,
    PASS_ENV,
    WORKSPACE_ROOT,
    PROTECT_DEVCONTAINER,
    PROTECT_GIT_HOOKS,
    PROTECT_GIT_CONFIG,
    SHARE_TOOL_DIRS,
);

/// Set in a session by its agent's profile: each turns the vendor's
/// self-update or update check off (an updater would rewrite binaries
/// outside the session's view). Claude's is also written into its settings.
pub const DISABLE_AUTOUPDATER: &str = "DISABLE_AUTOUPDATER";
pub const CODEX_DISABLE_UPDATE_CHECK: &str = "CODEX_DISABLE_UPDATE_CHECK";
pub const PI_SKIP_VERSION_CHECK: &str = "PI_SKIP_VERSION_CHECK";
pub const PI_OFFLINE_UPDATE_CHECK: &str = "PI_OFFLINE_UPDATE_CHECK";

/// Verify's canary: planted outside, it must not be seen inside.
pub const VERIFY_CANARY: &str = "AGENT_SANDBOX_VERIFY_CANARY";
/// What verify plants outside with fake values and expects a session not
/// to see: secrets, sockets and loader or shell hooks.
pub const VERIFY_PLANTED: &[&str] =
    &["AWS_SECRET_ACCESS_KEY", GITHUB_TOKEN, "SSH_AUTH_SOCK", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "VSCODE_IPC_HOOK_CLI", "BASH_ENV", "LD_LIBRARY_PATH"];

/// Set in every Kubernetes pod: where the confinement is judged.
pub(crate) const KUBERNETES_SERVICE_HOST: &str = "KUBERNETES_SERVICE_HOST";
/// apt's questions off, for the installer's package installs.
pub const DEBIAN_FRONTEND: &str = "DEBIAN_FRONTEND";

/// Publishing (maintainer verbs): registry credentials, and where the
/// static binaries to bundle are (default for `--bin-dir`).
pub const REGISTRY_USERNAME: &str = "AGENT_SANDBOX_REGISTRY_USERNAME";
pub const REGISTRY_PASSWORD: &str = "AGENT_SANDBOX_REGISTRY_PASSWORD";
pub const REGISTRY_TOKEN: &str = "AGENT_SANDBOX_REGISTRY_TOKEN";
pub const STATIC_DIR: &str = "AGENT_SANDBOX_STATIC_DIR";
/// Cargo's build folder when set (else `target`): where the static
/// binaries are looked for.
pub const CARGO_TARGET_DIR: &str = "CARGO_TARGET_DIR";
/// The other credentials publishing reads, in the tools' own names: the
/// Dev Containers CLI's, GitHub's token, the containers auth file, and
/// Docker's config folder; the containers auth file also lies under
/// `XDG_RUNTIME_DIR`.
pub const DEVCONTAINERS_OCI_AUTH: &str = "DEVCONTAINERS_OCI_AUTH";
pub const GITHUB_TOKEN: &str = "GITHUB_TOKEN";
pub const REGISTRY_AUTH_FILE: &str = "REGISTRY_AUTH_FILE";
pub const DOCKER_CONFIG: &str = "DOCKER_CONFIG";
pub const XDG_RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";
/// Reproducible archives: the timestamp written into packaged files.
pub const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";
/// The image build: the CA file npm trusts (`--extra-ca`'s default), and
/// BuildKit on for docker before 23.
pub const NODE_EXTRA_CA_CERTS: &str = "NODE_EXTRA_CA_CERTS";
pub const DOCKER_BUILDKIT: &str = "DOCKER_BUILDKIT";
/// The reference image's project venv, set in its devcontainer metadata.
pub const UV_PROJECT_ENVIRONMENT: &str = "UV_PROJECT_ENVIRONMENT";

/// The log filter (`tracing`'s directives), read by every binary.
pub const RUST_LOG: &str = "RUST_LOG";

/// Prefix of the configuration overrides, and the seed's alias prefix.
pub const PREFIX: &str = "AGENT_SANDBOX_";
pub const ALIAS_PREFIX: &str = "CLAUDE_SANDBOX_";

/// Names passed into a session unchanged when set outside.
const PASSED: &[&str] = &[
    TERM,
    "COLORTERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    // Project venv / uv / pre-commit: the session must find the same tools.
    "VIRTUAL_ENV",
    "VIRTUAL_ENV_PROMPT",
    "UV_CACHE_DIR",
    UV_PROJECT_ENVIRONMENT,
    "UV_PYTHON",
    "UV_PYTHON_INSTALL_DIR",
    "UV_TOOL_DIR",
    "UV_TOOL_BIN_DIR",
    "UV_LINK_MODE",
    "UV_NO_SYNC",
    "UV_FROZEN",
    "PRE_COMMIT_HOME",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
];

/// Package-index addresses the session's pip/uv need too; they often carry
/// a token in the URL (`https://user:TOKEN@host/simple`), so each passes
/// only when none of its URLs has credentials (`passEnv` can still name
/// it, passing it whole).
const PASSED_WITHOUT_CREDENTIALS: &[&str] =
    &["UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"];

/// Whether any URL in `value` (URLs separated by spaces or commas, each
/// maybe `name=URL`) has a user or password before its host.
fn has_url_credentials(value: &str) -> bool {
    value.split(|c: char| c.is_whitespace() || c == ',').any(|item| {
        let Some((_, rest)) = item.split_once("://") else { return false };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.contains('@')
    })
}

/// Prefixes passed into a session (locale categories).
const PASSED_PREFIXES: &[&str] = &["LC_"];

/// Names set by the launcher itself; a `passEnv` entry can never replace them.
pub const SET_BY_LAUNCHER: &[&str] =
    &[PATH, HOME, USER, LOGNAME, SHELL, TMPDIR, IS_SANDBOX, IS_SANDBOX_AGENT, SANDBOX_SESSION, GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM];

/// Names that never reach a session, whatever the config says: loader and
/// shell start-up hooks, desktop/IDE/agent sockets.
const NEVER_PASSED: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "IFS",
    "CDPATH",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "GLOBIGNORE",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    XDG_RUNTIME_DIR,
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "NODE_OPTIONS",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_DIR",
    "GIT_WORK_TREE",
];

/// Prefixes that never reach a session.
const NEVER_PASSED_PREFIXES: &[&str] = &["LD_", "VSCODE_", "GIT_CONFIG", "BASH_FUNC_", "REMOTE_CONTAINERS_"];

/// True when `name` may never be passed into a session (neither by the
/// allow-list nor by `passEnv`).
pub fn never_passed(name: &str) -> bool {
    NEVER_PASSED.contains(&name) || SET_BY_LAUNCHER.contains(&name) || NEVER_PASSED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// True when `name` passes by default (before `passEnv`), whatever its
/// value.
pub fn passed_by_default(name: &str) -> bool {
    !never_passed(name) && (PASSED.contains(&name) || PASSED_PREFIXES.iter().any(|p| name.starts_with(p)))
}

/// True when `name=value` passes by default: the names above, and the
/// package-index ones when their URLs carry no credentials.
pub fn passes_by_default(name: &str, value: &std::ffi::OsStr) -> bool {
    if passed_by_default(name) {
        return true;
    }
    PASSED_WITHOUT_CREDENTIALS.contains(&name) && value.to_str().is_some_and(|v| !has_url_credentials(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn config_vars_carry_both_prefixes_and_one_key() {
        for v in CONFIG_VARS {
            let key = v.name.strip_prefix(PREFIX).unwrap_or_else(|| panic!("{} lacks {PREFIX}", v.name));
            assert_eq!(v.alias.strip_prefix(ALIAS_PREFIX), Some(key), "{v:?}");
        }
    }

    /// The string literals of `text` with the line each is on, leaving out
    /// comments and attributes (clap's `value_name = "PATH"` is no variable).
    fn literals(text: &str) -> Vec<(usize, String, String)> {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") || code.starts_with("#[") {
                continue;
            }
            let code = code.split(" // ").next().unwrap_or(code);
            let mut rest = code;
            let mut before = String::new();
            while let Some(open) = rest.find('"') {
                before.push_str(&rest[..open]);
                let tail = &rest[open + 1..];
                let Some(close) = tail.find('"') else { break };
                out.push((n + 1, before.clone(), tail[..close].to_string()));
                before.push_str(&tail[..=close]);
                rest = &tail[close + 1..];
            }
        }
        out
    }

    /// A file's code without its unit tests (the module at its end, or a
    /// file of tests), which may spell out the names they test.
    fn code_of(path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?;
        if name == "tests.rs" || path.components().any(|c| c.as_os_str() == "tests") {
            return None;
        }
        let text = std::fs::read_to_string(path).ok()?;
        Some(match text.find("#[cfg(test)]\nmod ") {
            Some(at) => text[..at].to_string(),
            None => text,
        })
    }

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    fn is_name(s: &str) -> bool {
        s.len() > 1 && s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    }

    /// Every use goes through this file: no other source file spells a
    /// variable named here, an `AGENT_SANDBOX_*`/`CLAUDE_SANDBOX_*` name,
    /// a literal name given to the environment calls, or a constant that
    /// is a variable's name.
    #[test]
    fn no_variable_is_named_elsewhere() {
        // Every crate of the workspace and the binaries.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
        let here = root.join("crates/sys/src/env_vars.rs");
        let registry: std::collections::BTreeSet<String> = literals(&code_of(&here).unwrap()).into_iter().map(|(_, _, l)| l).filter(|l| is_name(l)).collect();
        assert!(registry.contains(PATH) && registry.contains(EGRESS_JAIL.name.strip_suffix("EGRESS_JAIL").unwrap()), "the scan reads this file");
        let calls = ["var(", "var_os(", ".env(", "env_remove(", "set_var(", "remove_var("];
        let mut files = Vec::new();
        rust_files(&root.join("src"), &mut files);
        rust_files(&root.join("crates"), &mut files);
        assert!(
            files.iter().any(|f| f.ends_with("crates/core/src/launch.rs")) && files.iter().any(|f| f.ends_with("src/main.rs")),
            "the scan reads every crate"
        );
        let mut found = Vec::new();
        for file in files.iter().filter(|f| **f != here) {
            let Some(code) = code_of(file) else { continue };
            for (line, before, lit) in literals(&code) {
                let before = before.trim_end();
                let named = registry.contains(&lit)
                    || lit.starts_with(PREFIX)
                    || lit.starts_with(ALIAS_PREFIX)
                    || (is_name(&lit) && calls.iter().any(|c| before.ends_with(c)))
                    || (is_name(&lit) && before.ends_with(&format!("const {lit}: &str =")));
                if named {
                    found.push(format!("{}:{line}: \"{lit}\"", file.strip_prefix(&root).unwrap().display()));
                }
            }
        }
        assert!(found.is_empty(), "environment variables named outside crates/sys/src/env_vars.rs (add a constant there and use it):\n{}", found.join("\n"));
    }

    #[test]
    fn loader_and_socket_names_never_pass() {
        for n in ["LD_PRELOAD", "LD_LIBRARY_PATH", "BASH_ENV", "ENV", "IFS", "PATH", "HOME"] {
            assert!(never_passed(n), "{n}");
        }
        for n in ["DISPLAY", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "VSCODE_IPC_HOOK_CLI"] {
            assert!(never_passed(n), "{n}");
            assert!(!passed_by_default(n), "{n}");
        }
    }

    #[test]
    fn locale_and_terminal_pass() {
        for n in ["TERM", "LANG", "LC_ALL", "LC_CTYPE", "VIRTUAL_ENV", "UV_CACHE_DIR"] {
            assert!(passed_by_default(n), "{n}");
        }
        assert!(!passed_by_default("AWS_SECRET_ACCESS_KEY"));
        assert!(!passed_by_default("GITHUB_TOKEN"));
    }

    #[test]
    fn package_indexes_pass_only_without_credentials() {
        use std::ffi::OsStr;
        for (name, value, passes) in [
            ("PIP_INDEX_URL", "https://pypi.example.org/simple", true),
            ("PIP_INDEX_URL", "https://user:s3cret@pypi.example.org/simple", false),
            ("PIP_INDEX_URL", "https://__token__@pypi.example.org/simple", false),
            ("PIP_EXTRA_INDEX_URL", "https://a.example/simple https://u:p@b.example/simple", false),
            ("PIP_EXTRA_INDEX_URL", "https://a.example/simple https://b.example/simple?x=a@b", true),
            ("UV_INDEX", "internal=https://u:t@idx.example/simple", false),
            ("UV_INDEX", "internal=https://idx.example/simple,other=https://x.example/", true),
            ("UV_EXTRA_INDEX_URL", "https://idx.example/a@b/simple", true),
        ] {
            assert_eq!(passes_by_default(name, OsStr::new(value)), passes, "{name}={value}");
        }
        assert!(!passes_by_default("AWS_SECRET_ACCESS_KEY", OsStr::new("x")));
    }
}
