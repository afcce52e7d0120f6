//! The dependencies (bubblewrap, passt) and the distribution's package
//! manager: which one the base uses (apt, dnf, apk), what is missing, and
//! the commands that install and later remove exactly what was installed.
//! Detection reads files; `install`/`remove` run the package manager.

use super::error::InstallError;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// (package, the executable it provides) — the same names on Debian/Ubuntu,
/// Fedora and Alpine.
const NEEDED: &[(&str, &str)] = &[("bubblewrap", "bwrap"), ("passt", "pasta")];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Manager {
    Apt,
    Dnf,
    Apk,
}

impl Manager {
    pub fn name(self) -> &'static str {
        match self {
            Manager::Apt => "apt",
            Manager::Dnf => "dnf",
            Manager::Apk => "apk",
        }
    }

    pub fn from_name(s: &str) -> Option<Manager> {
        [Manager::Apt, Manager::Dnf, Manager::Apk].into_iter().find(|m| m.name() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageFacts {
    pub manager: Option<Manager>,
    /// The distribution, from os-release (for messages).
    pub os: String,
    /// Needed packages that are neither installed nor provided otherwise
    /// (their executable in a system directory).
    pub missing: Vec<String>,
}

/// Which package manager the system uses: by os-release, confirmed by the
/// tool's presence.
fn detect(os_release: &str, has: &dyn Fn(&str) -> bool) -> Option<Manager> {
    let field = |k: &str| os_release.lines().find_map(|l| l.strip_prefix(k).and_then(|v| v.strip_prefix('='))).map(|v| v.trim_matches('"').to_string());
    let ids = format!("{} {}", field("ID").unwrap_or_default(), field("ID_LIKE").unwrap_or_default());
    let by_id = if ids.split_whitespace().any(|i| i == "debian" || i == "ubuntu") {
        Some(Manager::Apt)
    } else if ids.split_whitespace().any(|i| ["fedora", "rhel", "centos"].contains(&i)) {
        Some(Manager::Dnf)
    } else if ids.split_whitespace().any(|i| i == "alpine") {
        Some(Manager::Apk)
    } else {
        None
    };
    let tool = |m: Manager| match m {
        Manager::Apt => "/usr/bin/apt-get",
        Manager::Dnf => "/usr/bin/dnf",
        Manager::Apk => "/sbin/apk",
    };
    by_id.filter(|m| has(tool(*m))).or_else(|| [Manager::Apt, Manager::Dnf, Manager::Apk].into_iter().find(|m| has(tool(*m))))
}

/// Observes the package state of the running system.
pub(super) fn gather() -> PackageFacts {
    let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let os = os_release
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "an unknown distribution".into());
    let manager = detect(&os_release, &|p| Path::new(p).exists());
    let installed = manager.map(installed_set).unwrap_or_default();
    let missing = NEEDED.iter().filter(|(pkg, exe)| !installed.contains(*pkg) && !provided(exe)).map(|(pkg, _)| pkg.to_string()).collect();
    PackageFacts { manager, os, missing }
}

/// An executable already in a system directory counts as provided.
fn provided(exe: &str) -> bool {
    crate::sysbin::SYSTEM_DIRS.iter().any(|d| Path::new(d).join(exe).is_file())
}

/// The names of installed packages.
fn installed_set(m: Manager) -> BTreeSet<String> {
    let out = match m {
        Manager::Apt => Command::new("dpkg-query").args(["-W", "-f", "${Package}\t${db:Status-Status}\n"]).output(),
        Manager::Dnf => Command::new("rpm").args(["-qa", "--qf", "%{NAME}\tinstalled\n"]).output(),
        Manager::Apk => Command::new("apk").args(["info"]).output(),
    };
    let Ok(out) = out else { return BTreeSet::new() };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let name = f.next()?.trim();
            let status = f.next().unwrap_or("installed");
            (status == "installed" && !name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

fn run(m: Manager, what: &str, cmd: &mut Command) -> Result<(), InstallError> {
    cmd.env(crate::env_vars::DEBIAN_FRONTEND, "noninteractive");
    let out = cmd.output().map_err(|e| InstallError::Packages { manager: m.name(), detail: format!("cannot run {what}: {e}") })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = err.lines().rev().take(6).collect::<Vec<_>>().into_iter().rev().collect();
    Err(InstallError::Packages { manager: m.name(), detail: format!("{what} failed ({}): {}", out.status, tail.join(" / ")) })
}

/// Files in apt's list directory other than its lock and work dirs.
fn apt_lists() -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir("/var/lib/apt/lists") else { return Vec::new() };
    rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| !matches!(p.file_name().and_then(|n| n.to_str()), Some("lock" | "partial" | "auxfiles"))).collect()
}

fn apt_archives_empty() -> bool {
    std::fs::read_dir("/var/cache/apt/archives").map(|rd| !rd.filter_map(|e| e.ok()).any(|e| e.path().extension().is_some_and(|x| x == "deb"))).unwrap_or(true)
}

/// Installs `names`; returns the packages that were newly installed
/// (dependencies included), which uninstall removes again. Leaves no
/// package lists or downloaded archives behind that were not there before,
/// so an image layer grows only by the packages themselves.
pub(super) fn install(m: Manager, names: &[String]) -> Result<Vec<String>, InstallError> {
    let before = installed_set(m);
    match m {
        Manager::Apt => {
            let lists_were_empty = apt_lists().is_empty();
            let archives_were_empty = apt_archives_empty();
            let apt_install = || {
                let mut c = Command::new("apt-get");
                c.args(["install", "-y", "-q", "--no-install-recommends"]).args(names);
                run(m, "apt-get install", &mut c)
            };
            let mut updated = false;
            if lists_were_empty {
                run(m, "apt-get update", Command::new("apt-get").args(["update", "-q"]))?;
                updated = true;
            }
            let result = match apt_install() {
                Err(_) if !updated => {
                    run(m, "apt-get update", Command::new("apt-get").args(["update", "-q"]))?;
                    apt_install()
                }
                r => r,
            };
            if archives_were_empty {
                let _ = run(m, "apt-get clean", Command::new("apt-get").arg("clean"));
            }
            if lists_were_empty {
                for p in apt_lists() {
                    let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
                }
            }
            result?;
        }
        Manager::Dnf => run(m, "dnf install", Command::new("dnf").args(["install", "-y", "--setopt=install_weak_deps=False"]).args(names))?,
        Manager::Apk => run(m, "apk add", Command::new("apk").args(["add", "--no-cache"]).args(names))?,
    }
    let after = installed_set(m);
    Ok(after.difference(&before).cloned().collect())
}

/// Removes packages the installer installed. The low-level tools refuse to
/// remove a package something else now depends on; those are kept and
/// returned (the caller reports them).
pub(super) fn remove(m: Manager, names: &[String]) -> Result<Vec<String>, InstallError> {
    let result = match m {
        Manager::Apt => run(m, "dpkg --purge", Command::new("dpkg").arg("--purge").args(names)),
        Manager::Dnf => run(m, "rpm -e", Command::new("rpm").arg("-e").args(names)),
        Manager::Apk => run(m, "apk del", Command::new("apk").arg("del").args(names)),
    };
    let now = installed_set(m);
    let kept: Vec<String> = names.iter().filter(|n| now.contains(*n)).cloned().collect();
    match result {
        // Nothing could be checked: the tool itself is missing.
        Err(e) if now.is_empty() => Err(e),
        _ => Ok(kept),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_os_release_then_tool() {
        let all = |_: &str| true;
        assert_eq!(detect("ID=debian\n", &all), Some(Manager::Apt));
        assert_eq!(detect("ID=ubuntu\nID_LIKE=debian\n", &all), Some(Manager::Apt));
        assert_eq!(detect("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", &all), Some(Manager::Dnf));
        assert_eq!(detect("ID=alpine\n", &all), Some(Manager::Apk));
        let only_apk = |p: &str| p == "/sbin/apk";
        assert_eq!(detect("ID=debian\n", &only_apk), Some(Manager::Apk));
        assert_eq!(detect("ID=arch\n", &|_| false), None);
    }
}
