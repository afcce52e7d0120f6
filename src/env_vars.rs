//! The one registry of environment variables the product reads, sets, passes
//! into a session, or refuses to pass. Everything else refers to these
//! constants so the reference (docs/defences.md) can be checked against code.

/// Set inside every session: Claude Code reads it to know it is sandboxed.
pub const IS_SANDBOX: &str = "IS_SANDBOX";
/// Set inside every session: the agent profile of the session.
pub const IS_SANDBOX_AGENT: &str = "IS_SANDBOX_AGENT";
/// Set inside every session: the session's id (also in the marker file).
pub const SANDBOX_SESSION: &str = "AGENT_SANDBOX_SESSION";

/// Override of the config file path, honoured only for tests and only when
/// the binary is run by root or the file is root-owned (see `config`).
pub const CONFIG_PATH: &str = "AGENT_SANDBOX_CONFIG";

/// Publishing (maintainer verbs): registry credentials, and where the
/// static binaries to bundle are (default for `--bin-dir`).
pub const REGISTRY_USERNAME: &str = "AGENT_SANDBOX_REGISTRY_USERNAME";
pub const REGISTRY_PASSWORD: &str = "AGENT_SANDBOX_REGISTRY_PASSWORD";
pub const REGISTRY_TOKEN: &str = "AGENT_SANDBOX_REGISTRY_TOKEN";
pub const STATIC_DIR: &str = "AGENT_SANDBOX_STATIC_DIR";
/// Reproducible archives: the timestamp written into packaged files.
pub const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";

/// The log filter (`tracing`'s directives), read by every binary.
pub const RUST_LOG: &str = "RUST_LOG";

/// Prefix of the configuration overrides, and the seed's alias prefix.
pub const PREFIX: &str = "AGENT_SANDBOX_";
pub const ALIAS_PREFIX: &str = "CLAUDE_SANDBOX_";

/// Names passed into a session unchanged when set outside.
pub const PASSED: &[&str] = &[
    "TERM",
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
    "UV_PROJECT_ENVIRONMENT",
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
pub const PASSED_WITHOUT_CREDENTIALS: &[&str] =
    &["UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"];

/// Whether any URL in `value` (URLs separated by spaces or commas, each
/// maybe `name=URL`) has a user or password before its host.
pub fn has_url_credentials(value: &str) -> bool {
    value.split(|c: char| c.is_whitespace() || c == ',').any(|item| {
        let Some((_, rest)) = item.split_once("://") else { return false };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.contains('@')
    })
}

/// Prefixes passed into a session (locale categories).
pub const PASSED_PREFIXES: &[&str] = &["LC_"];

/// Names set by the launcher itself; a `passEnv` entry can never replace them.
pub const SET_BY_LAUNCHER: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", IS_SANDBOX, IS_SANDBOX_AGENT, SANDBOX_SESSION, "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"];

/// Names that never reach a session, whatever the config says: loader and
/// shell start-up hooks, desktop/IDE/agent sockets.
pub const NEVER_PASSED: &[&str] = &[
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
    "XDG_RUNTIME_DIR",
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
pub const NEVER_PASSED_PREFIXES: &[&str] = &["LD_", "VSCODE_", "GIT_CONFIG", "BASH_FUNC_", "REMOTE_CONTAINERS_"];

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
