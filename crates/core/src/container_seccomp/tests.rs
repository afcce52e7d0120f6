use super::table::{Group, Rule, Source, GROUPS};
use super::*;
use crate::sandbox::seccomp::table as session;

/// The committed file is what the table generates: neither can change
/// without the other. (After a table change: `agent-sandbox
/// seccomp-profile --output deploy/seccomp/agent-sandbox.json`.)
#[test]
fn the_committed_file_is_the_generated_one() {
    let committed = include_str!("../../../../deploy/seccomp/agent-sandbox.json");
    assert!(
        committed == render(),
        "{REPO_PATH} differs from what crates/core/src/container_seccomp/table.rs generates; regenerate it with `agent-sandbox seccomp-profile --output {REPO_PATH}`"
    );
}

#[test]
fn the_file_has_the_shared_format() {
    let p = profile();
    assert_eq!(p["defaultAction"], "SCMP_ACT_ERRNO");
    assert_eq!(p["defaultErrnoRet"], 1);
    assert!(p.get("archMap").is_none(), "the OCI decoders (containerd, CRI-O) read only `architectures`");
    for e in p["syscalls"].as_array().unwrap() {
        assert_eq!(e["action"], "SCMP_ACT_ALLOW");
        assert!(e.get("includes").is_none() && e.get("excludes").is_none(), "conditions the OCI decoders would drop: {e}");
        assert!(!e["names"].as_array().unwrap().is_empty());
        for a in e.get("args").and_then(|a| a.as_array()).into_iter().flatten() {
            assert_eq!(a["index"], 0);
            assert!(a["op"] == "SCMP_CMP_EQ" || a["op"] == "SCMP_CMP_NE", "{a}");
        }
    }
}

/// Each call has one rule: a name in two unconditional groups, or in an
/// unconditional and a conditional one, would be a mistake in the table.
#[test]
fn every_call_is_decided_once() {
    let mut seen: Vec<(&str, bool)> = Vec::new();
    for g in GROUPS {
        let conditional = !matches!(g.rule, Rule::Allow);
        for n in g.names {
            for (m, c) in &seen {
                assert!(!(m == n && (!c || !conditional)), "{n} is in more than one group");
            }
            seen.push((n, conditional));
        }
    }
}

/// What the engine's default refuses and no session needs stays refused
/// (the list: keyrings, bpf, perf, modules, kexec, ...).
#[test]
fn the_engines_refusals_stay() {
    let allowed = allowed_names();
    for n in [
        "add_key",
        "request_key",
        "keyctl",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "init_module",
        "finit_module",
        "delete_module",
        "kexec_load",
        "kexec_file_load",
        "swapon",
        "swapoff",
        "reboot",
        "acct",
        "quotactl",
        "quotactl_fd",
        "syslog",
        "vhangup",
        "settimeofday",
        "clock_settime",
        "clock_settime64",
        "stime",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "open_by_handle_at",
        "fanotify_init",
        "pidfd_getfd",
        "process_madvise",
        "migrate_pages",
        "move_pages",
        "lookup_dcookie",
        "iopl",
        "ioperm",
        "uselib",
        "ustat",
        "sysfs",
        "_sysctl",
        "nfsservctl",
        "vm86",
        "vm86old",
        "mbind",
        "set_mempolicy",
        "get_mempolicy",
        "set_mempolicy_home_node",
        "create_module",
        "query_module",
        "get_kernel_syms",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
    ] {
        assert!(!allowed.contains(&n), "{n} must stay refused");
    }
}

/// Every addition is a call the session's own filter keeps on purpose:
/// the container grants nothing a session's filter would refuse, and what
/// it adds is what sessions are promised (docs/defences.md, syscalls).
#[test]
fn additions_are_calls_the_session_filter_keeps() {
    for n in added_names() {
        let row = session::by_name(n).unwrap_or_else(|| panic!("{n}: added, but the session table has no row for it"));
        let kept = matches!(row.rule, session::Rule::Keep) || (n == "personality" && matches!(row.rule, session::Rule::Arg { .. }));
        assert!(kept, "{n}: added for the container, but the session's filter refuses it ({:?})", row.rule);
    }
    // The additions named in the module's documentation, no more.
    assert_eq!(
        added_names(),
        [
            "chroot",
            "clone",
            "clone3",
            "kcmp",
            "mount",
            "mount_setattr",
            "move_mount",
            "open_tree",
            "personality",
            "pivot_root",
            "setdomainname",
            "sethostname",
            "setns",
            "umount",
            "umount2",
            "unshare"
        ]
    );
}

/// No call the session's filter refuses outright is added; the engine's
/// default may allow some (name_to_handle_at), and sessions still refuse
/// them under their own filter.
#[test]
fn no_addition_is_refused_by_sessions() {
    let added = added_names();
    for row in session::ROWS.iter().filter(|r| matches!(r.rule, session::Rule::Deny(_))) {
        assert!(!added.contains(&row.name), "{} is refused in sessions but added for the container", row.name);
    }
}

#[test]
fn personalities_are_the_sessions() {
    let mut values: Vec<u32> = GROUPS
        .iter()
        .filter(|g| g.names == ["personality"])
        .flat_map(|g: &Group| match g.rule {
            Rule::AllowArg0In(v) => v.to_vec(),
            _ => Vec::new(),
        })
        .collect();
    values.sort_unstable();
    let mut session = session::ALLOWED_PERSONALITIES.to_vec();
    session.sort_unstable();
    assert_eq!(values, session);
}

#[test]
fn vsock_sockets_are_refused() {
    let g = GROUPS.iter().find(|g| g.names == ["socket"]).unwrap();
    assert_eq!(g.rule, Rule::AllowArg0Not(libc::AF_VSOCK as u64));
    assert_eq!(g.source, Source::EngineDefault);
}
