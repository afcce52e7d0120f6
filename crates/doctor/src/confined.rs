//! The findings about how the container engine confines this process
//! (`crate::confinement`): a user namespace refused by the container's
//! seccomp filter (Docker's default profile), and mounts in a new
//! namespace refused by an AppArmor profile (Docker's `docker-default`).
//! Pure: the probes' results and the facts in, a finding out.

use super::probe::Mounts;
use super::{Finding, Severity};
use crate::confinement::AppArmor;
use crate::jail::{diagnose_userns, UsernsBlocker, UsernsFacts};

/// The probe could not create a user namespace (not under emulation):
/// `userns-seccomp` when the container's seccomp filter explains it, else
/// `userns-unavailable` with the sysctl that explains it, if any.
pub(super) fn userns_failure(why: &str, errno: Option<i32>, facts: &UsernsFacts, uid: u32) -> Finding {
    let d = errno.map(|e| diagnose_userns(facts, uid, e));
    match d {
        Some(d) if d.blocker == UsernsBlocker::Seccomp => {
            Finding::new("userns", "userns-seccomp", Severity::Error, format!("user namespaces are not available: {}", d.cause), Some(&d.fix))
        }
        Some(d) if d.blocker == UsernsBlocker::GVisor => {
            Finding::new("userns", "userns-gvisor", Severity::Error, format!("user namespaces are not available: {}", d.cause), Some(&d.fix))
        }
        Some(d) if d.blocker != UsernsBlocker::Unknown => {
            Finding::new("userns", "userns-unavailable", Severity::Error, format!("user namespaces are not available: {why}: {}", d.cause), Some(&d.fix))
        }
        _ => Finding::new("userns", "userns-unavailable", Severity::Error, format!("user namespaces are not available: {why}"), Some(crate::fixes::USERNS)),
    }
}

/// The mount probe's verdict. A refusal under an enforcing AppArmor
/// profile is named as that profile's (`mounts-apparmor`); any other is
/// `mounts-denied`. Sessions cannot start either way: bubblewrap mounts
/// before anything else, with or without the egress jail.
pub(super) fn mounts(probe: Option<&Mounts>, apparmor: Option<&AppArmor>) -> Finding {
    let profile = apparmor.map_or("none".to_owned(), AppArmor::label);
    match probe {
        Some(Mounts::Works) => {
            Finding::new("mounts", "mounts-ok", Severity::Ok, format!("mounts work in a new user+mount namespace (AppArmor profile: {profile})"), None)
        }
        Some(Mounts::Fails { what, errno }) => {
            let err = errno.map(|e| std::io::Error::from_raw_os_error(e).to_string()).unwrap_or_default();
            let failed = format!("{what}{}", if err.is_empty() || what.contains(&err) { String::new() } else { format!(" ({err})") });
            match apparmor.filter(|a| a.enforced()) {
                Some(a) => Finding::new(
                    "mounts",
                    "mounts-apparmor",
                    Severity::Error,
                    format!("mounts are refused in a new user+mount namespace ({failed}): this container runs under the AppArmor profile `{}`, which refuses mounts (Docker's `docker-default` refuses every one), so bubblewrap cannot build a session", a.label()),
                    Some(crate::fixes::APPARMOR),
                ),
                None => Finding::new(
                    "mounts",
                    "mounts-denied",
                    Severity::Error,
                    format!("mounts are refused in a new user+mount namespace ({failed}; AppArmor profile: {profile}), so bubblewrap cannot build a session"),
                    Some("run the container without a security profile that refuses mounts in its own namespaces: on AppArmor hosts `--security-opt apparmor=unconfined`, on SELinux hosts a type that allows them; check the engine's logs for the denial"),
                ),
            }
        }
        None => Finding::new(
            "mounts",
            "mounts-not-checked",
            Severity::Warning,
            "mounts in a new namespace were not tried: they need user namespaces".into(),
            Some("fix the userns finding, then run `agent-sandbox doctor` again"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confinement::{parse_apparmor, Confinement};

    fn docker() -> UsernsFacts {
        UsernsFacts {
            max_user_namespaces: Some(15000),
            confinement: Confinement { seccomp: Some(2), cap_sys_admin: Some(false), apparmor: parse_apparmor("docker-default (enforce)") },
            ..Default::default()
        }
    }

    #[test]
    fn dockers_seccomp_profile_is_named_with_the_runargs_line() {
        let got = userns_failure("creating a user+network namespace failed: EPERM: Operation not permitted", Some(libc::EPERM), &docker(), 0);
        assert_eq!((got.id, got.severity), ("userns-seccomp", Severity::Error));
        assert!(got.message.contains("Seccomp: 2") && got.message.contains("Docker's default profile"), "{}", got.message);
        assert_eq!(got.fix.as_deref(), Some(crate::fixes::SECCOMP));
        assert!(crate::fixes::SECCOMP.starts_with("add \"--security-opt=seccomp=unconfined\" to \"runArgs\""));
    }

    #[test]
    fn gvisor_is_named_as_the_cause() {
        let f = UsernsFacts { gvisor: Some("Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016".into()), ..docker() };
        let got = userns_failure("creating a user+network namespace failed: EPERM", Some(libc::EPERM), &f, 1000);
        assert_eq!((got.id, got.severity), ("userns-gvisor", Severity::Error));
        assert_eq!(got.fix.as_deref(), Some(crate::fixes::GVISOR));
        assert!(crate::fixes::GVISOR.contains("runtimeClassName: gvisor") && crate::fixes::GVISOR.contains("Kata"));
    }

    #[test]
    fn other_userns_failures_keep_their_causes() {
        let mut sysctl = docker();
        sysctl.max_user_namespaces = Some(0);
        let got = userns_failure("creating a user+network namespace failed: ENOSPC", Some(libc::ENOSPC), &sysctl, 0);
        assert_eq!(got.id, "userns-unavailable");
        assert!(got.message.contains("user.max_user_namespaces is 0") && got.fix.as_deref().unwrap().contains("sysctl -w user.max_user_namespaces"), "{got:?}");
        assert!(got.fix.as_deref().unwrap().contains("Bottlerocket"), "the Kubernetes node case is named: {got:?}");
        let mut unfiltered = docker();
        unfiltered.confinement.seccomp = Some(0);
        let got = userns_failure("x", Some(libc::EPERM), &unfiltered, 0);
        assert_eq!((got.id, got.fix.as_deref()), ("userns-unavailable", Some(crate::fixes::USERNS)));
        assert_eq!(userns_failure("the holder exited", None, &docker(), 0).fix.as_deref(), Some(crate::fixes::USERNS));
    }

    #[test]
    fn mounts_refused_under_docker_default_name_apparmor() {
        let aa = parse_apparmor("docker-default (enforce)");
        let refused = Mounts::Fails { what: "making / a slave mount: EACCES: Permission denied".into(), errno: Some(libc::EACCES) };
        let got = mounts(Some(&refused), aa.as_ref());
        assert_eq!((got.id, got.severity), ("mounts-apparmor", Severity::Error));
        assert!(got.message.contains("`docker-default (enforce)`") && got.message.contains("Permission denied"), "{}", got.message);
        assert_eq!(got.fix.as_deref(), Some(crate::fixes::APPARMOR));
        assert!(crate::fixes::APPARMOR.starts_with("add \"--security-opt=apparmor=unconfined\" to \"runArgs\""));

        // Refused without an enforcing profile: no AppArmor claim.
        let got = mounts(Some(&refused), parse_apparmor("unconfined").as_ref());
        assert_eq!(got.id, "mounts-denied");
        assert!(got.message.contains("AppArmor profile: unconfined"), "{}", got.message);
        let got = mounts(Some(&refused), None);
        assert!(got.message.contains("AppArmor profile: none"), "{}", got.message);

        let got = mounts(Some(&Mounts::Works), aa.as_ref());
        assert_eq!((got.id, got.severity), ("mounts-ok", Severity::Ok));
        assert_eq!(mounts(None, None).id, "mounts-not-checked");
    }
}
