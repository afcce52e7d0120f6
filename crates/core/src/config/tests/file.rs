//! Reading the file: missing, unreadable, not a file, not UTF-8, too big.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::*;

#[test]
fn a_missing_file_means_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.json5");
    let eff = load_from(&path, &EnvMap::new()).unwrap();
    assert_eq!(eff.config, Config::default());
    assert!(!eff.file_present);
    assert_eq!(eff.path, path);
    assert!(eff.sources.values().all(|s| *s == Source::Default));
    assert_eq!(eff.sources.len(), Key::ALL.len());
    // Environment still applies without a file.
    let env = env_of(&[("AGENT_SANDBOX_GPU", "1")]);
    assert!(load_from(&path, &env).unwrap().config.gpu);
}

#[test]
fn a_file_is_read_with_lines_from_its_own_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json5");
    fs::write(&path, "{\n  localPorts: [\n    0,\n  ],\n}\n").unwrap();
    let e = load_from(&path, &EnvMap::new()).unwrap_err();
    let want = format!("{}:3: key \"localPorts\": 0 is not a valid port (1-65535)", path.display());
    assert_eq!(e.to_string(), want);
}

#[test]
fn a_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = load_from(dir.path(), &EnvMap::new()).unwrap_err();
    let ConfigError::Unreadable { message, .. } = &e else { panic!("{e:?}") };
    assert_eq!(message, "it is a directory");
}

#[test]
fn a_path_through_a_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    fs::write(&file, "").unwrap();
    let e = load_from(&file.join("config.json5"), &EnvMap::new()).unwrap_err();
    assert!(matches!(e, ConfigError::Unreadable { .. }), "{e:?}");
}

#[test]
fn permission_denied_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json5");
    fs::write(&path, "{}").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::File::open(&path).is_ok() {
        return; // running as root: permissions do not stop reads
    }
    let e = load_from(&path, &EnvMap::new()).unwrap_err();
    let ConfigError::Unreadable { hint, .. } = &e else { panic!("{e:?}") };
    assert_eq!(hint, &Hint::new(format!("make it readable: chmod 644 {}", path.display())));
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fifo");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let e = load_from(&path, &EnvMap::new()).unwrap_err();
    let ConfigError::Unreadable { message, .. } = &e else { panic!("{e:?}") };
    assert_eq!(message, "it is not a regular file");
}

#[test]
fn invalid_utf8_points_at_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json5");
    fs::write(&path, b"{\n  gpu: true, // caf\xe9\n}").unwrap();
    let e = load_from(&path, &EnvMap::new()).unwrap_err();
    let ConfigError::Syntax { line, column, message, .. } = &e else { panic!("{e:?}") };
    assert_eq!((*line, *column, message.as_str()), (2, 20, "the file is not valid UTF-8"));
}

#[test]
fn an_oversized_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json5");
    fs::write(&path, " ".repeat(2 * 1024 * 1024)).unwrap();
    let e = load_from(&path, &EnvMap::new()).unwrap_err();
    assert!(matches!(e, ConfigError::Unreadable { .. }), "{e:?}");
}
