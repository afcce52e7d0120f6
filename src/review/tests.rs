use super::items::Kind;
use super::*;
use std::os::unix::fs::PermissionsExt;

fn write(ws: &Path, rel: &str, text: &str, mode: u32) {
    let p = ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn every_kind_is_collected_and_ordered_by_danger() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, ".devcontainer/devcontainer.json", "{ // jsonc\n initializeCommand: 'curl x | sh', postCreateCommand: ['make'], }", 0o644);
    write(ws, ".git/config", "[core]\n\tfsmonitor = .git/fsm.sh\n", 0o644);
    write(ws, ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755);
    write(ws, ".git/hooks/pre-commit.sample", "#!/bin/sh\n", 0o755);
    write(ws, ".envrc", "export A=1\n", 0o644);
    write(ws, ".venv/pyvenv.cfg", "home = /usr/bin\n", 0o644);
    write(ws, ".venv/bin/ls", "#!/bin/sh\n", 0o755);
    write(ws, ".venv/bin/activate", "# activate\n", 0o644);
    write(ws, ".venv/bin/my-tool", "#!/bin/sh\n", 0o755);
    write(ws, ".venv/lib/python3.11/site-packages/evil.pth", "import os; os.system('x')\n", 0o644);
    write(ws, ".vscode/tasks.json", "{}", 0o644);
    write(ws, "package.json", r#"{"scripts": {"postinstall": "node x.js"}}"#, 0o644);
    write(ws, "Makefile", "all:\n\ttrue\n", 0o644);
    let items = collect::collect(ws);
    let kinds: Vec<(Kind, &str)> = items.iter().map(|i| (i.kind, i.path.as_str())).collect();
    assert_eq!(
        kinds,
        vec![
            (Kind::DevcontainerHostCommand, ".devcontainer/devcontainer.json"),
            (Kind::GitConfigKey, ".git/config"),
            (Kind::GitHook, ".git/hooks/pre-commit"),
            (Kind::Envrc, ".envrc"),
            (Kind::PthFile, ".venv/lib/python3.11/site-packages/evil.pth"),
            (Kind::VenvShadow, ".venv/bin/ls"),
            (Kind::VenvActivate, ".venv/bin/activate"),
            (Kind::VscodeTask, ".vscode/tasks.json"),
            (Kind::Devcontainer, ".devcontainer/devcontainer.json"),
            (Kind::Devcontainer, ".devcontainer/devcontainer.json"),
            (Kind::PackageScript, "package.json"),
            (Kind::Makefile, "Makefile"),
        ]
    );
    assert_eq!(items[0].runs, "initializeCommand: curl x | sh");
    assert_eq!(items[4].runs, "import os; os.system('x')");
}

#[test]
fn diff_reports_added_changed_removed() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let store = dir.path().join("store");
    write(&ws, "Makefile", "all:\n", 0o644);
    write(&ws, ".envrc", "x\n", 0o644);
    let b = record(&store, "s1", &ws).unwrap();
    assert_eq!(load(&store, &ws, None).unwrap(), Some(b.clone()));
    assert!(diff(Some(&b), &collect::collect(&ws)).is_empty());

    write(&ws, "Makefile", "all:\n\tcurl x | sh\n", 0o644);
    std::fs::remove_file(ws.join(".envrc")).unwrap();
    write(&ws, ".git/hooks/post-checkout", "#!/bin/sh\n", 0o755);
    let f = diff(Some(&b), &collect::collect(&ws));
    let got: Vec<(Change, &str)> = f.iter().map(|f| (f.change, f.item.path.as_str())).collect();
    assert_eq!(got, vec![(Change::Added, ".git/hooks/post-checkout"), (Change::Removed, ".envrc"), (Change::Changed, "Makefile")]);
    let h = hint(&f).unwrap();
    assert!(h.contains("2 place(s)") && h.contains(".git/hooks/post-checkout"), "{h}");

    // Mode changes count: a hook made executable starts running.
    write(&ws, "Makefile", "all:\n", 0o755);
    let f = diff(Some(&b), &collect::collect(&ws));
    assert!(f.iter().any(|f| f.change == Change::Changed && f.item.path == "Makefile"));
}

#[test]
fn sessions_are_per_workspace_and_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let store = dir.path().join("store");
    record(&store, "sa", &a).unwrap();
    record(&store, "sb", &b).unwrap();
    assert_eq!(load(&store, &a, None).unwrap().unwrap().session, "sa");
    assert_eq!(load(&store, &b, Some("sb")).unwrap().unwrap().session, "sb");
    assert!(matches!(load(&store, &a, Some("sb")), Err(ReviewError::NoSession(_, _))));
    assert!(diff(None, &[]).is_empty());
    assert_eq!(store_dir(Path::new("/home/u"), None), PathBuf::from("/home/u/.local/state/agent-sandbox/baselines"));
}
