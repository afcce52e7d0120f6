//! Validation of single values (ports, IPv4 addresses, paths, environment
//! variable names), shared by the file parser and the environment layer.
//! Validators know nothing of where a value came from: they return an
//! [`Invalid`] which the caller turns into a [`ConfigError`] at an [`At`].

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Component, Path, PathBuf};

use super::error::{At, ConfigError, Hint};

/// A rejected value, not yet tied to a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Invalid {
    Port(String),
    Address(String, &'static str),
    Path(String, &'static str, Hint),
    EnvName(String),
    NeverPassed(String),
    Domain(String, &'static str),
}

impl Invalid {
    pub(crate) fn at(self, at: At) -> ConfigError {
        match self {
            Invalid::Port(value) => ConfigError::BadPort { at, value },
            Invalid::Address(value, reason) => ConfigError::BadAddress { at, value, reason },
            Invalid::Path(value, reason, hint) => ConfigError::BadPath { at, value, reason, hint },
            Invalid::EnvName(value) => ConfigError::BadEnvName { at, value },
            Invalid::NeverPassed(name) => ConfigError::NeverPassed { at, name },
            Invalid::Domain(value, reason) => ConfigError::BadDomain { at, value, reason },
        }
    }
}

/// A relay port: 1..=65535. Taken as i64 so negatives and overflows are
/// reported with the value the user wrote.
pub(crate) fn port(n: i64) -> Result<u16, Invalid> {
    match u16::try_from(n) {
        Ok(p) if p != 0 => Ok(p),
        _ => Err(Invalid::Port(n.to_string())),
    }
}

/// A port written as decimal text (the environment form).
pub(crate) fn port_text(s: &str) -> Result<u16, Invalid> {
    match s.parse::<i64>() {
        Ok(n) => port(n),
        Err(_) => Err(Invalid::Port(s.to_string())),
    }
}

/// One IPv4 host address. Ranges are refused because `allowIp` punches a
/// /32 through the jail's blocked ranges; a range would open more
/// than the user can see in the config. Loopback, unspecified, broadcast and
/// multicast addresses make no sense as routed destinations.
pub(crate) fn ipv4(s: &str) -> Result<Ipv4Addr, Invalid> {
    let bad = |reason| Err(Invalid::Address(s.to_string(), reason));
    let Ok(ip) = s.parse::<Ipv4Addr>() else {
        return bad(why_not_ipv4(s));
    };
    match not_allowable(ip) {
        Some(reason) => bad(reason),
        None => Ok(ip),
    }
}

/// Why `ip` cannot be an allowIp entry, if it cannot: the one rule, for the
/// config's parser and the jail's own guard alike.
pub fn not_allowable(ip: Ipv4Addr) -> Option<&'static str> {
    if ip.is_loopback() {
        Some("loopback is not routed; use localPorts to reach a service on the container's 127.0.0.1")
    } else if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() {
        Some("only a single unicast IPv4 host address can be allowed")
    } else {
        None
    }
}

/// Names the likely mistake behind a string that is not an IPv4 address.
fn why_not_ipv4(s: &str) -> &'static str {
    if s.parse::<Ipv6Addr>().is_ok() {
        "IPv6 addresses are not supported (the jail is IPv4-only); list IPv4 addresses"
    } else if s.contains('/') {
        "a CIDR range is not accepted; list single IPv4 host addresses"
    } else if s.chars().any(|c| c.is_ascii_alphabetic()) {
        "a host name is not accepted (names can change address); list IPv4 addresses"
    } else {
        "not an IPv4 address (four numbers 0-255 separated by dots, no leading zeros)"
    }
}

/// Places a session may never get writable (as `allowWrite` or as the
/// workspace), with everything below them: kernel interfaces, system
/// configuration and the programs root runs.
const SYSTEM_TREES: &[&str] = &["/proc", "/sys", "/dev", "/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// Places refused themselves (what lies below them may be allowed): the
/// root, the runtime and state roots, the parents of the homes and root's
/// home, the private temporary directories, the vendor tree root.
pub(super) const SYSTEM_DIRS: &[&str] =
    &["/", "/run", "/var/run", "/var", "/var/lib", "/var/log", "/home", "/root", "/tmp", "/var/tmp", "/opt", "/srv", "/mnt", "/media"];

/// Why `path` may not be made writable, if it is a system location.
fn system_location(path: &Path) -> Option<&'static str> {
    if let Some(t) = SYSTEM_TREES.iter().find(|t| path.starts_with(t)) {
        return Some(match *t {
            "/proc" | "/sys" | "/dev" => "it is a kernel interface; a writable one reaches the host kernel",
            "/etc" => "it holds the system configuration, which root and every login read",
            _ => "it holds system programs, which run outside the sandbox (and as root)",
        });
    }
    SYSTEM_DIRS.iter().any(|d| path == Path::new(d)).then_some(match path.to_str() {
        Some("/") => "the whole file system cannot be made writable",
        Some("/run" | "/var/run") => "it holds every runtime socket (D-Bus, systemd, container engines); allow a single socket below it instead",
        Some("/home") => "it holds every user's home; allow a directory below your home instead",
        Some("/root") => "it is root's home, with its credentials; allow a directory below it instead",
        Some("/tmp" | "/var/tmp") => "sessions get a private one; the real one holds other programs' sockets (the IDE's)",
        _ => "it is a system directory; allow a directory below it instead",
    })
}

/// Trees where what a session writes becomes code that root or the system
/// runs later: package and service state (dpkg's maintainer scripts,
/// systemd's units, every service's plugins), root's home (its shell
/// start-up files and tools), the spools cron and at run.
const CODE_TREES: &[&str] = &["/var/lib", "/root", "/var/spool"];

/// Why a session may not write `path` because root or the system runs
/// what it finds there later, if so.
fn code_place(path: &Path) -> Option<&'static str> {
    if path.components().any(|c| c.as_os_str() == "lost+found") {
        return Some("it is a file system's lost+found, which root's fsck fills and root reads");
    }
    CODE_TREES.iter().find(|t| path.starts_with(t)).map(|t| match *t {
        "/var/lib" => "it holds package and service state (dpkg's maintainer scripts, systemd's units, services' plugins), which root runs",
        "/root" => "it is root's home, whose start-up files, tools and credentials root uses",
        _ => "it holds the spools cron and at run programs from",
    })
}

const OWN_DIRECTORY: &str = "name a directory of your own, e.g. /srv/data or /home/USER/shared";

/// An absolute path for `workspaceRoot` (and the start of `allowWrite`'s
/// checks): not a system location (`system_location`), not a place whose
/// contents root runs later (`code_place`), also where a link leads.
pub(crate) fn abs_path(s: &str) -> Result<PathBuf, Invalid> {
    let path = checked_abs(s)?;
    let path = normalized(&path);
    if let Some(reason) = system_location(&path).or_else(|| code_place(&path)) {
        return Err(Invalid::Path(s.to_string(), reason, Hint::new(OWN_DIRECTORY)));
    }
    // bwrap binds what a link leads to: judge that too.
    if let Ok(real) = std::fs::canonicalize(&path) {
        if real != path && (system_location(&real).is_some() || code_place(&real).is_some()) {
            return Err(Invalid::Path(s.to_string(), "it is a symbolic link (or lies under one) into a system location", Hint::new(OWN_DIRECTORY)));
        }
    }
    Ok(path)
}

/// An `allowWrite` path: `abs_path`'s rules, and not a directory root owns
/// (what a session leaves in a place of root's may run as root later);
/// `allowWriteRootOwned` names those deliberately.
pub(crate) fn write_path(s: &str) -> Result<PathBuf, Invalid> {
    use std::os::unix::fs::MetadataExt;
    let path = abs_path(s)?;
    match std::fs::metadata(&path) {
        Ok(m) if m.uid() == 0 => Err(Invalid::Path(
            s.to_string(),
            "root owns it, so what a session leaves there may run as root later",
            Hint::new("list it under allowWriteRootOwned instead to accept that, or allow a directory another user owns"),
        )),
        _ => Ok(path),
    }
}

/// `/a//b/./c/` as `/a/b/c` (no `..`: `checked_abs` refused those).
fn normalized(p: &Path) -> PathBuf {
    p.components().filter(|c| *c != Component::CurDir).collect()
}

/// A device path: absolute, no `..`, strictly below /dev.
pub(crate) fn device_path(s: &str) -> Result<PathBuf, Invalid> {
    let path = checked_abs(s)?;
    if path.starts_with("/dev") && path != Path::new("/dev") {
        return Ok(path);
    }
    let hint = Hint::new("list devices such as /dev/ttyUSB0; use allowWrite for other paths");
    Err(Invalid::Path(s.to_string(), "not a device under /dev/", hint))
}

/// Non-empty, no NUL, absolute, no `..` (which could climb out of the
/// directory the user thinks they are allowing).
fn checked_abs(s: &str) -> Result<PathBuf, Invalid> {
    let bad = |reason, hint| Err(Invalid::Path(s.to_string(), reason, hint));
    if s.is_empty() {
        return bad("the path is empty", Hint::none());
    }
    if s.contains('\0') {
        return bad("the path contains a NUL byte", Hint::none());
    }
    if !s.starts_with('/') {
        let hint = if s.starts_with('~') {
            Hint::new("~ is not expanded; write the full path, e.g. /home/USER/...")
        } else {
            Hint::new("write an absolute path starting with /")
        };
        return bad("the path is relative", hint);
    }
    let path = PathBuf::from(s);
    if path.components().any(|c| c == Component::ParentDir) {
        return bad("the path contains a .. component", Hint::new("write the resolved path"));
    }
    Ok(path)
}

/// A name for `passEnv`: a shell-compatible variable name that is not on
/// the never-passed list.
pub(crate) fn env_name(s: &str) -> Result<String, Invalid> {
    let mut chars = s.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Invalid::EnvName(s.to_string()));
    }
    if never_passed(s) {
        return Err(Invalid::NeverPassed(s.to_string()));
    }
    Ok(s.to_string())
}

/// True for environment variables that must never enter the sandbox,
/// whatever the configuration says (the list lives in `env_vars`, the one
/// registry of variables). Case-insensitive on purpose: refusing
/// `ld_preload` costs nothing, and a security list should not hinge on the
/// spelling.
pub fn never_passed(name: &str) -> bool {
    crate::env_vars::never_passed(&name.to_ascii_uppercase())
}
