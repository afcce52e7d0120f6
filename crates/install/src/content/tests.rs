//! Tests of the generated texts and the shared-file edits.

use super::*;
use crate::config::{self, EnvMap};
use std::path::Path;

fn parses(text: &str) -> config::Config {
    config::from_source(Path::new("/etc/agent-sandbox/config.json5"), Some(text), &EnvMap::new()).expect("valid config").config
}

#[test]
fn default_config_is_valid_and_all_defaults() {
    let text = default_config(&ConfigSeed::default());
    assert_eq!(parses(&text), config::Config::default());
    for key in [
        "egressJail",
        "allowIp",
        "allowDomains",
        "localPorts",
        "callbackPorts",
        "noForge",
        "peers",
        "allowWrite",
        "allowDevice",
        "gpu",
        "passEnv",
        "workspaceRoot",
    ] {
        assert!(text.contains(&format!("// {key}: ")), "{key} documented:\n{text}");
    }
}

#[test]
fn seeded_config_sets_exactly_the_seeded_keys() {
    let seed = ConfigSeed {
        egress_jail: Some(false),
        allow_ip: vec!["203.0.113.7".parse().unwrap()],
        allow_domains: vec!["*.github.com".into(), "@registries".into()],
        local_ports: vec![5432],
        callback_ports: vec![1455],
        no_forge: Some(true),
    };
    let c = parses(&default_config(&seed));
    assert!(!c.egress_jail && c.no_forge);
    assert_eq!(c.allow_ip, vec!["203.0.113.7".parse::<std::net::Ipv4Addr>().unwrap()]);
    assert_eq!(c.allow_domains, ["*.github.com", "@registries"]);
    assert_eq!((c.local_ports, c.callback_ports), (vec![5432], vec![1455]));
    assert!(!c.peers && c.allow_write.is_empty());
}

#[test]
fn blocks_are_added_replaced_and_removed_exactly() {
    let original = "# user stuff\nexport A=1\n";
    let once = with_block(original, "echo one\n");
    assert_eq!(once, format!("{original}{BLOCK_BEGIN}\necho one\n{BLOCK_END}\n"));
    assert_eq!(with_block(&once, "echo one\n"), once, "idempotent");
    let twice = with_block(&once, "echo two\n");
    assert!(twice.contains("echo two") && !twice.contains("echo one"));
    assert_eq!(without_block(&twice), original);
    // A file without a final newline gets one before the block.
    let no_nl = with_block("x=1", "b\n");
    assert!(no_nl.starts_with("x=1\n# >>> agent-sandbox"));
    // Edits around the block survive its removal.
    let edited = format!("{once}export B=2\n");
    assert_eq!(without_block(&edited), format!("{original}export B=2\n"));
}

#[test]
fn claude_settings_merge_keeps_other_keys() {
    assert_eq!(claude_managed(None).unwrap(), "{\n  \"env\": {\n    \"DISABLE_AUTOUPDATER\": \"1\"\n  }\n}\n");
    let merged = claude_managed(Some(r#"{"permissions": {"deny": ["Bash(rm:*)"]}, "env": {"FOO": "bar"}}"#)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
    assert_eq!(v["env"]["FOO"], "bar");
    assert_eq!(v["env"]["DISABLE_AUTOUPDATER"], "1");
    assert_eq!(v["permissions"]["deny"][0], "Bash(rm:*)");
    assert_eq!(claude_managed(Some(&merged)).unwrap(), merged, "idempotent");
    assert!(claude_managed(Some("[1]")).unwrap_err().contains("not a JSON object"));
    assert!(claude_managed(Some("{nope")).unwrap_err().contains("not valid JSON"));
}

#[test]
fn codex_setting_goes_before_tables() {
    let fresh = codex_system(None).unwrap();
    assert!(fresh.ends_with("check_for_update_on_startup = false\n"));
    let merged = codex_system(Some("model = \"o3\"\n[mcp_servers.x]\ncommand = \"y\"\n")).unwrap();
    let key = merged.find("check_for_update_on_startup = false").unwrap();
    assert!(key < merged.find("[mcp_servers.x]").unwrap());
    assert!(merged.ends_with("model = \"o3\"\n[mcp_servers.x]\ncommand = \"y\"\n"));
    assert_eq!(codex_system(Some(&merged)).unwrap(), merged, "idempotent");
    assert!(codex_system(Some("check_for_update_on_startup = true\n")).is_err());
    // The key inside a table is another key.
    assert!(codex_system(Some("[x]\ncheck_for_update_on_startup = true\n")).is_ok());
}

/// Runs the profile snippet in a real sh as `uid` with `path`; PATH after.
fn profile_path(uid: u32, path: &str) -> String {
    use std::os::unix::process::CommandExt;
    let out = std::process::Command::new("/bin/sh")
        .args(["-c", &format!("{}\nprintf %s \"$PATH\"", profile_script())])
        .env("PATH", path)
        .current_dir("/")
        .uid(uid)
        .output()
        .expect("run /bin/sh");
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The profile snippet, run by a real sh: shim directory first, system
/// directories next, the rest (venvs, user dirs) after, duplicates gone.
#[test]
fn profile_script_orders_path_in_sh() {
    assert!(nix::unistd::geteuid().is_root(), "this test runs sh as another user: run it as root");
    let run = |path: &str| profile_path(65534, path);
    assert_eq!(
        run("/opt/venv/bin:/home/u/.local/bin:/usr/local/bin:/usr/bin:/bin:/usr/bin:/opt/venv/bin"),
        format!("{SHIM_DIR}:/usr/local/bin:/usr/bin:/bin:/opt/venv/bin:/home/u/.local/bin")
    );
    // Idempotent, and an existing shim entry is moved to the front.
    let once = run(&format!("/usr/bin:{SHIM_DIR}:/bin"));
    assert_eq!(once, format!("{SHIM_DIR}:/usr/bin:/bin"));
    assert_eq!(run(&once), once);
    // Empty entries (the current directory) are dropped.
    assert_eq!(run("::/usr/bin:"), format!("{SHIM_DIR}:/usr/bin"));
}

/// A directory on PATH that is kept for root.
struct Dir(std::path::PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Root's PATH keeps no directory another user can write (owned by them,
/// group- or world-writable, or below such a directory), nor a relative
/// one; its own directories stay, after the system ones.
#[test]
fn profile_script_keeps_user_writable_directories_off_roots_path() {
    use std::os::unix::fs::PermissionsExt;
    assert!(nix::unistd::geteuid().is_root(), "this test makes root-owned directories: run it as root");
    // Under /run (root-owned, 0755), not /tmp (world-writable).
    let top = Dir(std::path::PathBuf::from(format!("/run/agent-sandbox-profile-test-{}", std::process::id())));
    let mk = |name: &str, mode: u32, uid: u32| {
        let d = top.0.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
        std::os::unix::fs::chown(&d, Some(uid), Some(uid)).unwrap();
        d.display().to_string()
    };
    std::fs::create_dir(&top.0).unwrap();
    std::fs::set_permissions(&top.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root_bin = mk("root-bin", 0o755, 0);
    let user_bin = mk("user-bin", 0o755, 1000);
    let group_w = mk("group-w", 0o775, 0);
    let under_user = mk("user-bin/inner", 0o755, 0);
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let in_tmp = tmp.path().display().to_string();
    let path = format!("{user_bin}:/usr/local/bin:{root_bin}:/usr/bin:{group_w}:{under_user}:{in_tmp}:.:/usr/bin");
    assert_eq!(profile_path(0, &path), format!("{SHIM_DIR}:/usr/local/bin:/usr/bin:{root_bin}"));
    // Another user keeps them all (after the system directories).
    assert_eq!(profile_path(65534, &path), format!("{SHIM_DIR}:/usr/local/bin:/usr/bin:{user_bin}:{root_bin}:{group_w}:{under_user}:{in_tmp}:."));
}

#[test]
fn hashes_are_sha256() {
    assert_eq!(hash(b""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/// The launcher reads the shells' start-up files for PATH entries
/// (`sandbox::shellrc`): the snippet this installer writes, with Debian's
/// /etc/profile, gives it nothing it cannot follow.
#[test]
fn the_installers_own_snippet_and_debians_profile_add_no_noise() {
    let own = super::profile_script();
    let etc_profile = "if [ \"$(id -u)\" -eq 0 ]; then\n  PATH=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\nelse\n  PATH=\"/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games\"\nfi\nexport PATH\n\
        if [ -d /etc/profile.d ]; then\n  for i in /etc/profile.d/*.sh; do\n    if [ -r $i ]; then\n      . $i\n    fi\n  done\n  unset i\nfi\n";
    let files = [(std::path::PathBuf::from(crate::layout::PROFILE_SCRIPT), own), ("/etc/profile".into(), etc_profile.to_string())];
    let s = agent_sandbox_core::sandbox::shellrc::parse(&files, std::path::Path::new("/home/u"), &|_| None);
    assert!(s.unfollowed.is_empty(), "{:?}", s.unfollowed);
    let dirs: Vec<&str> = s.dirs.iter().map(|(d, _)| d.to_str().unwrap()).collect();
    assert_eq!(dirs, vec!["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/games", "/usr/games"]);
}
