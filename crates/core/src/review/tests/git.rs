//! Every git dir, wherever git would look: found by content and pointers,
//! with what their configs point at.

use super::super::kinds::Kind;
use super::super::report::{compare, Change};
use super::{kind_of, plant, take};
use std::path::Path;

fn git_dir(root: &Path, rel: &str) {
    plant(root, &format!("{rel}/HEAD"), "ref: refs/heads/main\n", 0o644);
    std::fs::create_dir_all(root.join(rel).join("objects/ab")).unwrap();
    std::fs::create_dir_all(root.join(rel).join("refs/heads")).unwrap();
}

#[test]
fn submodules_worktrees_nested_and_pointed_to_git_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    git_dir(ws, ".git");
    git_dir(ws, ".git/modules/lib");
    plant(ws, ".git/modules/lib/config", "[core]\n\tworktree = ../../../lib\n\tfsmonitor = evil\n", 0o644);
    plant(ws, ".git/modules/lib/hooks/post-checkout", "#!/bin/sh\n", 0o755);
    plant(ws, "lib/.git", "gitdir: ../.git/modules/lib\n", 0o644);
    // A linked worktree: HEAD and commondir, no objects of its own.
    plant(ws, ".git/worktrees/wt/HEAD", "ref: refs/heads/x\n", 0o644);
    plant(ws, ".git/worktrees/wt/commondir", "../..\n", 0o644);
    plant(ws, ".git/worktrees/wt/config.worktree", "[core]\n\tsshCommand = evil\n", 0o644);
    plant(ws, ".git/worktrees/wt/gitdir", &format!("{}/wt/.git\n", ws.display()), 0o644);
    // A nested repository and a bare one under any name.
    git_dir(ws, "vendor/x/.git");
    plant(ws, "vendor/x/.git/config", "[alias]\n\tst = !evil\n", 0o644);
    git_dir(ws, "mirror");
    plant(ws, "mirror/config", "[core]\n\tbare = true\n", 0o644);
    // commondir pointing at a directory with no git layout of its own.
    plant(ws, ".git/commondir", "../shadow\n", 0o644);
    plant(ws, "shadow/config", "[core]\n\tfsmonitor = evil\n", 0o644);
    plant(ws, "shadow/hooks/pre-commit", "#!/bin/sh\n", 0o755);
    plant(ws, ".git/objects/ab/cdef", "blob", 0o444);
    plant(ws, ".git/refs/heads/main", "0000\n", 0o644);
    plant(ws, ".git/index", "DIRC", 0o644);
    let now = take(ws);
    for (rel, kind) in [
        (".git/modules/lib/config", Kind::GitConfig),
        (".git/modules/lib/hooks/post-checkout", Kind::GitHook),
        ("lib/.git", Kind::GitPointer),
        (".git/worktrees/wt/commondir", Kind::GitPointer),
        (".git/worktrees/wt/gitdir", Kind::GitPointer),
        (".git/worktrees/wt/config.worktree", Kind::GitConfig),
        ("vendor/x/.git/config", Kind::GitConfig),
        ("mirror/config", Kind::GitConfig),
        (".git/commondir", Kind::GitPointer),
        ("shadow/config", Kind::GitConfig),
        ("shadow/hooks/pre-commit", Kind::GitHook),
    ] {
        assert_eq!(kind_of(&now, rel), Some(kind), "{rel}");
    }
    // Git's data is left to git (and objects are not even walked).
    for rel in [".git/objects/ab/cdef", ".git/refs/heads/main", ".git/index", ".git/HEAD"] {
        assert!(now.snapshot.get(rel).is_none(), "{rel}");
    }
}

/// A `core.hooksPath` (in `config.worktree` or an included file too) makes
/// its directory hooks, even one created after the baseline; hooks' own
/// scripts elsewhere (husky-style) are hooks too.
#[test]
fn hooks_path_includes_and_scripts_hooks_call() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    git_dir(ws, ".git");
    plant(ws, ".git/config", "[extensions]\n\tworktreeConfig = true\n[include]\n\tpath = ../.gitconfig.local\n", 0o644);
    plant(ws, ".gitconfig.local", "x", 0o644);
    let base = take(ws).snapshot;
    plant(ws, ".gitconfig.local", "[core]\n\thooksPath = .config/hooks\n", 0o644);
    plant(ws, ".config/hooks/pre-push", "#!/bin/sh\n. \"$(dirname \"$0\")/common.sh\"\nnode scripts/check.js\n", 0o755);
    plant(ws, ".config/hooks/common.sh", "run() { :; }\n", 0o644);
    plant(ws, "scripts/check.js", "require('child_process')\n", 0o644);
    plant(ws, ".git/config.worktree", "[core]\n\tfsmonitor = evil\n", 0o644);
    // Paths behind what review cannot evaluate, tried from the work tree.
    plant(ws, ".config/hooks/post-merge", "#!/bin/sh\nsh \"$(git rev-parse --show-toplevel)/tools/merge\" && $ROOT/tools/also\n", 0o755);
    plant(ws, "tools/merge", "curl evil\n", 0o644);
    plant(ws, "tools/also", "curl evil\n", 0o755);
    let now = take(ws);
    assert_eq!(kind_of(&now, ".gitconfig.local"), Some(Kind::GitConfig));
    let r = compare(Some(&base), &now);
    let got: Vec<(Change, Kind, &str)> = r.findings.iter().map(|f| (f.change, f.kind, f.path.as_str())).collect();
    assert_eq!(
        got,
        vec![
            (Change::Added, Kind::GitConfig, ".git/config.worktree"),
            (Change::Changed, Kind::GitConfig, ".gitconfig.local"),
            (Change::Added, Kind::GitHook, ".config/hooks/common.sh"),
            (Change::Added, Kind::GitHook, ".config/hooks/post-merge"),
            (Change::Added, Kind::GitHook, ".config/hooks/pre-push"),
            (Change::Added, Kind::GitHook, "scripts/check.js"),
            (Change::Added, Kind::GitHook, "tools/also"),
            (Change::Added, Kind::GitHook, "tools/merge"),
        ]
    );
}
