use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

#[test]
fn names_round_trip_and_unknown_lists_valid() {
    for a in ALL {
        assert_eq!(Agent::from_name(a.name()), Ok(a));
    }
    let err = Agent::from_name("gemini").unwrap_err().to_string();
    assert_eq!(err, "unknown agent `gemini`; valid agents are: claude, codex, pi");
}

#[test]
fn argv0_selects_profile() {
    assert_eq!(Agent::from_argv0(OsStr::new("/usr/local/bin/claude")), Some(Agent::Claude));
    assert_eq!(Agent::from_argv0(OsStr::new("codex")), Some(Agent::Codex));
    assert_eq!(Agent::from_argv0(OsStr::new("agent-sandbox")), None);
}

#[test]
fn claude_drops_chrome_and_injects_no_chrome() {
    let args: Vec<OsString> = ["--chrome", "-p", "hi there", "--no-chrome"].iter().map(OsString::from).collect();
    assert_eq!(Agent::Claude.rewrite_args(&args), vec![OsString::from("--no-chrome"), "-p".into(), "hi there".into()]);
}

#[test]
fn codex_and_pi_update_checks_off() {
    assert_eq!(Agent::Codex.rewrite_args(&["exec".into()]), vec![OsString::from("-c"), "check_for_update_on_startup=false".into(), "exec".into()]);
    assert!(Agent::Pi.env().iter().any(|(k, _)| *k == "PI_SKIP_VERSION_CHECK"));
    assert!(Agent::Claude.env().iter().any(|(k, _)| *k == "DISABLE_AUTOUPDATER"));
}

#[test]
fn state_paths_per_agent() {
    let home = Path::new("/home/dev");
    assert_eq!(
        Agent::Claude.state_paths(home),
        vec![(PathBuf::from("/home/dev/.claude"), StateKind::Dir), (PathBuf::from("/home/dev/.claude.json"), StateKind::File)]
    );
    assert_eq!(Agent::Codex.state_paths(home), vec![(PathBuf::from("/home/dev/.codex"), StateKind::Dir)]);
    assert_eq!(Agent::Pi.state_paths(home), vec![(PathBuf::from("/home/dev/.pi"), StateKind::Dir)]);
}

fn write_exec(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn vendor_skips_own_exe_and_shim_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let shims = dir.path().join("shims");
    let shim_script = dir.path().join("scripts");
    let vendor = dir.path().join("vendor");
    for d in [&shims, &shim_script, &vendor] {
        std::fs::create_dir(d).unwrap();
    }
    // A shim that is (a hard link to) our own binary.
    write_exec(&dir.path().join("own"), "#!/bin/sh\n");
    std::fs::hard_link(dir.path().join("own"), shims.join("claude")).unwrap();
    write_exec(&shim_script.join("claude"), "#!/bin/sh\n# agent-sandbox shim\nexec agent-sandbox run\n");
    write_exec(&vendor.join("claude"), "#!/bin/sh\necho vendor\n");
    let own = std::fs::metadata(dir.path().join("own")).unwrap();
    let search = VendorSearch { path_dirs: vec![shims, shim_script, vendor.clone()], home: dir.path().join("home"), own_exe: Some((own.dev(), own.ino())) };
    assert_eq!(locate_vendor(Agent::Claude, &search).unwrap(), vendor.join("claude"));
}

#[test]
fn vendor_missing_says_how_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let search = VendorSearch { path_dirs: vec![dir.path().to_path_buf()], home: dir.path().to_path_buf(), own_exe: None };
    let msg = locate_vendor(Agent::Pi, &search).unwrap_err().to_string();
    assert!(msg.contains("npm install -g @mariozechner/pi-coding-agent"), "{msg}");
}

#[test]
fn agent_lists_read_like_the_flag_says() {
    let parse = |list: &str| -> Result<Vec<Agent>, String> {
        let entries = list.split(',').map(Agent::parse_list_entry).collect::<Result<Vec<_>, _>>()?;
        Ok(Agent::from_list(&entries))
    };
    assert_eq!(parse("pi,claude,pi"), Ok(vec![Agent::Pi, Agent::Claude]), "first appearance, once");
    assert_eq!(parse(" claude , codex"), Ok(vec![Agent::Claude, Agent::Codex]), "spaces around names");
    assert_eq!(parse(""), Ok(vec![]), "empty: none");
    assert_eq!(parse(" , "), Ok(vec![]));
    let err = parse("claude,gpt").unwrap_err();
    assert!(err.starts_with("unknown agent `gpt`: the agents are claude, codex and pi"), "{err}");
    assert!(parse("Claude").is_err(), "names are lower case, as the shims are");
}
