//! Ownership and permission check of the default config file.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::*;
use crate::config::file::read_config;

fn untrusted(uid: u32, mode: u32) -> (String, String) {
    match check_file_trust(Path::new(FILE), uid, mode) {
        Err(ConfigError::Untrusted { problem, fix, .. }) => (problem, fix),
        other => panic!("uid {uid} mode {mode:o}: {other:?}"),
    }
}

#[test]
fn root_owned_and_not_writable_by_others_is_trusted() {
    for mode in [0o100644, 0o100600, 0o100400, 0o100755, 0o100444] {
        assert_eq!(check_file_trust(Path::new(FILE), 0, mode), Ok(()), "{mode:o}");
    }
}

#[test]
fn foreign_owner_is_refused_with_chown() {
    let (problem, fix) = untrusted(1000, 0o100644);
    assert_eq!(problem, "owned by uid 1000, not root");
    assert_eq!(fix, "chown root:root /etc/agent-sandbox/config.json5");
}

#[test]
fn group_or_world_writable_is_refused_with_chmod() {
    for mode in [0o100664, 0o100646, 0o100666, 0o100777] {
        let (problem, fix) = untrusted(0, mode);
        assert!(problem.starts_with("writable by group or others (mode 0"), "{problem}");
        assert_eq!(fix, "chmod 644 /etc/agent-sandbox/config.json5");
    }
}

#[test]
fn both_problems_are_named_together() {
    let (problem, fix) = untrusted(1000, 0o100666);
    assert_eq!(problem, "owned by uid 1000, not root, and writable by group or others (mode 0666)");
    assert_eq!(fix, "chown root:root /etc/agent-sandbox/config.json5 && chmod 644 /etc/agent-sandbox/config.json5");
    let msg = check_file_trust(Path::new(FILE), 1000, 0o100666).unwrap_err().to_string();
    assert!(msg.starts_with("/etc/agent-sandbox/config.json5: not trusted: owned by uid 1000"), "{msg}");
}

#[test]
fn read_config_checks_the_opened_file_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json5");
    fs::write(&path, "{}").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
    // Not the default path: no check, whoever owns it.
    assert_eq!(read_config(&path, false), Ok(Some("{}".into())));
    let e = read_config(&path, true).unwrap_err();
    assert!(matches!(e, ConfigError::Untrusted { .. }), "{e:?}");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let owner = fs::metadata(&path).unwrap().uid();
    let got = read_config(&path, true);
    if owner == 0 {
        assert_eq!(got, Ok(Some("{}".into())));
    } else {
        assert!(matches!(got, Err(ConfigError::Untrusted { .. })), "{got:?}");
    }
}

#[test]
fn load_from_a_non_default_path_does_not_check_ownership() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json5");
    fs::write(&path, "{ gpu: true }").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
    let eff = load_from(&path, &EnvMap::new()).unwrap();
    assert!(eff.config.gpu);
}
