//! The configuration's verdict: whether it loads, and whether what it says
//! weakens sessions — the egress jail off, a value that comes from the
//! environment of whoever started the command rather than the root-owned
//! file, an `allowWrite` path that opens the home or a system directory.
//! Pure over the loaded configuration; the caller passes the home.

use super::{Finding, Severity};
use crate::config::{Effective, Key, Source};
use crate::layout::SYSTEM_PATH_DIRS;
use std::path::Path;

const CHECK: &str = "config";

/// Directories `allowWrite` must never name: the system's (and the
/// directories of commands, `SYSTEM_PATH_DIRS`, and their parents), the
/// home and its parents.
const SYSTEM_DIRS: &[&str] = &["/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/root", "/run", "/sbin", "/sys", "/usr", "/var"];

fn f(id: &'static str, severity: Severity, message: String, fix: Option<String>) -> Finding {
    Finding { check: CHECK, id, severity, message, fix }
}

/// Every configuration finding. `home`: the home of the user doctor runs
/// as (sessions mask it; allowWrite must not open it).
pub(crate) fn findings(config: &Result<Effective, String>, home: &Path) -> Vec<Finding> {
    let e = match config {
        Ok(e) => e,
        Err(e) => {
            return vec![f(
                "config-invalid",
                Severity::Error,
                format!("the configuration cannot be used: {e}"),
                Some("fix the file as the message says (`agent-sandbox config check` re-checks it)".into()),
            )]
        }
    };
    let mut out = vec![if e.file_present {
        f("config-ok", Severity::Ok, format!("{} is valid", e.path.display()), None)
    } else {
        f("config-ok", Severity::Ok, format!("{} does not exist; the defaults apply", e.path.display()), None)
    }];
    if !e.config.egress_jail {
        out.push(jail_off(e));
    }
    out.extend(from_environment(e));
    out.extend(allow_write(e, home));
    out.extend(allow_domains(e));
    out
}

/// With allowDomains, say what sessions can reach (nothing else does: the
/// default without it is the internet minus the blocked ranges).
fn allow_domains(e: &Effective) -> Option<Finding> {
    let d = &e.config.allow_domains;
    if d.is_empty() {
        return None;
    }
    let jail = if e.config.egress_jail { "" } else { " (but the egress jail is off, so nothing enforces it)" };
    Some(f(
        "allow-domains",
        if e.config.egress_jail { Severity::Ok } else { Severity::Warning },
        format!("allowDomains holds sessions to {} ({}), the gateway and allowIp{jail}", plural_names(d.len()), d.join(", ")),
        (!e.config.egress_jail).then(|| "turn the egress jail on (egressJail: true) for allowDomains to hold".to_string()),
    ))
}

fn plural_names(n: usize) -> String {
    if n == 1 {
        "the addresses of 1 entry".into()
    } else {
        format!("the addresses of {n} entries")
    }
}

fn source_of(e: &Effective, key: Key) -> &Source {
    static DEFAULT: Source = Source::Default;
    e.sources.get(key.name()).unwrap_or(&DEFAULT)
}

fn jail_off(e: &Effective) -> Finding {
    let (whence, fix) = match source_of(e, Key::EgressJail) {
        Source::Env { var } | Source::FileAndEnv { var, .. } => (format!("{var} is set in the environment"), format!("unset {var}")),
        Source::File { path, line } => {
            (format!("egressJail is false at {}:{line}", path.display()), format!("remove `egressJail: false` from {}", path.display()))
        }
        Source::Default => ("egressJail is false".into(), format!("set egressJail to true in {}", e.path.display())),
    };
    f(
        "jail-off",
        Severity::Warning,
        format!("the egress jail is off ({whence}): sessions reach the container's network as it is, private ranges, cloud metadata and the container's own services included"),
        Some(format!("{fix} to have every session jailed again")),
    )
}

/// A value taken from `AGENT_SANDBOX_*` (or its `CLAUDE_SANDBOX_*` alias):
/// whoever starts the command chose it, not the root-owned file.
fn from_environment(e: &Effective) -> Vec<Finding> {
    let mut out = Vec::new();
    for key in Key::ALL {
        let var = match source_of(e, key) {
            Source::Env { var } | Source::FileAndEnv { var, .. } => var,
            _ => continue,
        };
        // The jail's own finding already names its variable.
        if key == Key::EgressJail && !e.config.egress_jail {
            continue;
        }
        out.push(f(
            "env-override",
            Severity::Warning,
            format!("{} comes from the environment ({var}), not from {}: every session started from here gets it", key.name(), e.path.display()),
            Some(format!("unset {var}; if the setting is meant, put it in {} (root-owned, where it is reviewed)", e.path.display())),
        ));
    }
    out
}

/// allowWrite paths that open the home (where sessions see an empty one),
/// a parent of it, or a system directory.
fn allow_write(e: &Effective, home: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &e.config.allow_write {
        let what = if home.starts_with(p) {
            format!("your home {} (or a parent of it)", home.display())
        } else if SYSTEM_DIRS.iter().any(|s| p.as_path() == Path::new(s)) || SYSTEM_PATH_DIRS.iter().any(|d| Path::new(d).starts_with(p)) {
            "a system directory".to_string()
        } else {
            continue;
        };
        let whence = match source_of(e, Key::AllowWrite) {
            Source::Env { var } | Source::FileAndEnv { var, .. } => format!(" (from {var})"),
            _ => String::new(),
        };
        out.push(f(
            "allow-write-unsafe",
            Severity::Error,
            format!("allowWrite{whence} makes {} writable in sessions: that is {what}, so a session can change shell start-up files, credentials or programs that run outside the sandbox", p.display()),
            Some("list only the project directories sessions need (never the home, its parents or system directories)".into()),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{from_source, EnvMap};

    fn load(text: Option<&str>, env: &[(&str, &str)]) -> Result<Effective, String> {
        let env: EnvMap = env.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        from_source(Path::new("/etc/agent-sandbox/config.json5"), text, &env).map_err(|e| e.to_string())
    }

    fn ids(f: &[Finding]) -> Vec<(&'static str, Severity)> {
        f.iter().map(|f| (f.id, f.severity)).collect()
    }

    const HOME: &str = "/home/vscode";

    #[test]
    fn allow_domains_says_what_sessions_reach_and_warns_when_nothing_enforces_it() {
        let got = findings(&load(Some("{ allowDomains: [\"@agents\", \"*.github.com\"] }"), &[]), Path::new(HOME));
        let f = got.iter().find(|f| f.id == "allow-domains").expect("an allowDomains line");
        assert_eq!(f.severity, Severity::Ok);
        assert_eq!(f.message, "allowDomains holds sessions to the addresses of 2 entries (@agents, *.github.com), the gateway and allowIp");
        let got = findings(&load(Some("{ allowDomains: [\"github.com\"], egressJail: false }"), &[]), Path::new(HOME));
        let f = got.iter().find(|f| f.id == "allow-domains").expect("an allowDomains line");
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.message.contains("nothing enforces it") && f.fix.is_some(), "{f:?}");
        assert!(!findings(&load(None, &[]), Path::new(HOME)).iter().any(|f| f.id == "allow-domains"));
    }

    #[test]
    fn the_defaults_are_ok() {
        assert_eq!(ids(&findings(&load(None, &[]), Path::new(HOME))), vec![("config-ok", Severity::Ok)]);
    }

    #[test]
    fn the_jail_off_is_a_warning_naming_where_it_was_switched_off() {
        let got = findings(&load(None, &[("AGENT_SANDBOX_EGRESS_JAIL", "0")]), Path::new(HOME));
        assert_eq!(ids(&got), vec![("config-ok", Severity::Ok), ("jail-off", Severity::Warning)]);
        assert!(got[1].message.contains("AGENT_SANDBOX_EGRESS_JAIL is set in the environment"), "{}", got[1].message);
        assert_eq!(got[1].fix.as_deref(), Some("unset AGENT_SANDBOX_EGRESS_JAIL to have every session jailed again"));
        let got = findings(&load(None, &[("CLAUDE_SANDBOX_EGRESS_JAIL", "false")]), Path::new(HOME));
        assert!(got[1].message.contains("CLAUDE_SANDBOX_EGRESS_JAIL"), "the alias is named: {}", got[1].message);
        let got = findings(&load(Some("{\n  egressJail: false,\n}\n"), &[]), Path::new(HOME));
        assert_eq!(ids(&got), vec![("config-ok", Severity::Ok), ("jail-off", Severity::Warning)]);
        assert!(got[1].message.contains("egressJail is false at /etc/agent-sandbox/config.json5:2"), "{}", got[1].message);
    }

    #[test]
    fn every_value_from_the_environment_is_named() {
        let got =
            findings(&load(Some("{ allowIp: [\"10.1.2.3\"] }"), &[("AGENT_SANDBOX_ALLOW_IP", "10.9.9.9"), ("AGENT_SANDBOX_NO_FORGE", "1")]), Path::new(HOME));
        assert_eq!(ids(&got), vec![("config-ok", Severity::Ok), ("env-override", Severity::Warning), ("env-override", Severity::Warning)]);
        assert!(got[1].message.starts_with("allowIp comes from the environment (AGENT_SANDBOX_ALLOW_IP)"), "{}", got[1].message);
        assert!(got[2].message.starts_with("noForge comes from the environment (AGENT_SANDBOX_NO_FORGE)"), "{}", got[2].message);
        assert_eq!(got[1].fix.as_deref().map(|f| f.starts_with("unset AGENT_SANDBOX_ALLOW_IP;")), Some(true));
    }

    #[test]
    fn allow_write_of_the_home_or_a_system_directory_is_an_error() {
        let got = findings(&load(None, &[("AGENT_SANDBOX_ALLOW_WRITE", HOME)]), Path::new(HOME));
        assert_eq!(ids(&got), vec![("config-ok", Severity::Ok), ("env-override", Severity::Warning), ("allow-write-unsafe", Severity::Error)]);
        assert!(
            got[2].message.contains("allowWrite (from AGENT_SANDBOX_ALLOW_WRITE) makes /home/vscode writable") && got[2].message.contains("your home"),
            "{}",
            got[2].message
        );
        for bad in ["/home", "/etc", "/usr/local", "/usr/local/bin", "/usr"] {
            let got = findings(&load(Some(&format!("{{ allowWrite: [\"{bad}\"] }}")), &[]), Path::new(HOME));
            // The configuration refuses the system's own locations itself
            // (config-invalid); doctor names the rest.
            let named = |f: &Finding| f.severity == Severity::Error && matches!(f.id, "allow-write-unsafe" | "config-invalid") && f.message.contains(bad);
            assert!(got.iter().any(named), "{bad}: {got:?}");
        }
        for fine in ["/srv/data", "/home/vscode/project", "/opt/venv", "/workspaces/x", "/var/cache/x"] {
            let got = findings(&load(Some(&format!("{{ allowWrite: [\"{fine}\"] }}")), &[]), Path::new(HOME));
            assert_eq!(ids(&got), vec![("config-ok", Severity::Ok)], "{fine}");
        }
    }

    #[test]
    fn an_invalid_configuration_blocks() {
        let got = findings(&Err("bad".into()), Path::new(HOME));
        assert_eq!(ids(&got), vec![("config-invalid", Severity::Error)]);
    }
}
