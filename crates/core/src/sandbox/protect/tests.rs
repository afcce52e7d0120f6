use super::*;
use crate::sandbox::fsview::{Kind, TableFs};

const WS: &str = "/w";

fn on() -> Config {
    Config::default()
}

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

fn repo() -> TableFs {
    TableFs::default()
        .with("/w/.git/HEAD", Kind::File)
        .with_text("/w/.git/config", "[core]\n\tbare = false\n")
        .with("/w/.git/hooks/pre-commit", Kind::File)
        .with("/w/.devcontainer/devcontainer.json", Kind::File)
        .with("/w/src/main.rs", Kind::File)
}

fn ro(items: &[(&str, bool)]) -> Vec<(PathBuf, bool)> {
    let mut v: Vec<(PathBuf, bool)> = items.iter().map(|(s, d)| (p(s), *d)).collect();
    v.sort();
    v
}

#[test]
fn a_plain_repository() {
    let got = plan(&repo(), Path::new(WS), &on()).unwrap();
    assert_eq!(got.pinned, vec![p(".git")]);
    assert_eq!(got.read_only, ro(&[(".devcontainer", true), (".git/config", false), (".git/hooks", true)]));
    assert!(got.empty.is_empty());
}

#[test]
fn missing_hooks_get_an_empty_directory() {
    let fs = TableFs::default().with_text("/w/.git/config", "");
    let got = plan(&fs, Path::new(WS), &on()).unwrap();
    assert_eq!(got.empty, vec![p(".git/hooks")]);
}

#[test]
fn symlinks_and_special_files_at_protected_places_refuse() {
    let cases = [
        (repo().with_symlink("/w/.devcontainer2", "x").with_symlink("/w/.devcontainer.json", "../../root/.ssh/config"), ".devcontainer.json", "symbolic link"),
        (TableFs::default().with_symlink("/w/.devcontainer", "../../root"), ".devcontainer", "symbolic link to ../../root"),
        (TableFs::default().with_symlink("/w/.git", "/tmp"), ".git", "symbolic link"),
        (TableFs::default().with("/w/.git/HEAD", Kind::File).with_symlink("/w/.git/config", "/etc/gitconfig"), ".git/config", "symbolic link"),
        (TableFs::default().with("/w/.git/HEAD", Kind::File).with_symlink("/w/.git/hooks", "../../run/user"), ".git/hooks", "symbolic link"),
        (TableFs::default().with("/w/.git/HEAD", Kind::File).with("/w/.git/config", Kind::Other), ".git/config", "FIFO"),
        (TableFs::default().with("/w/.git/hooks", Kind::File), ".git/hooks", "regular file"),
    ];
    for (fs, path, found) in cases {
        let e = plan(&fs, Path::new(WS), &on()).unwrap_err();
        assert_eq!(e.path, p(path), "{e}");
        assert!(e.found.contains(found), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("agent-sandbox review") && msg.contains("remove it"), "{msg}");
    }
}

#[test]
fn a_gitdir_file_inside_the_workspace_is_followed_without_symlinks() {
    let fs = TableFs::default()
        .with_text("/w/.git", "gitdir: .realgit\n")
        .with_text("/w/.realgit/config", "[core]\n\thooksPath = tools/hooks\n")
        .with("/w/.realgit/HEAD", Kind::File);
    let got = plan(&fs, Path::new(WS), &on()).unwrap();
    assert!(got.pinned.is_empty());
    assert_eq!(got.read_only, ro(&[(".git", false), (".realgit/config", false)]));
    assert_eq!(got.empty, vec![p(".realgit/hooks"), p("tools/hooks")]);
    // Pointing outside: only the pointer file is protected.
    let fs = TableFs::default().with_text("/w/.git", "gitdir: /elsewhere/repo/.git/worktrees/w\n");
    assert_eq!(plan(&fs, Path::new(WS), &on()).unwrap().read_only, ro(&[(".git", false)]));
    let fs = TableFs::default().with_text("/w/.git", "gitdir: ../outside\n");
    assert_eq!(plan(&fs, Path::new(WS), &on()).unwrap().read_only, ro(&[(".git", false)]));
    // Through a symlink: refused (git would follow it, the plan would not).
    let fs = TableFs::default().with_text("/w/.git", "gitdir: link/inner\n").with_symlink("/w/link", "/w/other");
    let e = plan(&fs, Path::new(WS), &on()).unwrap_err();
    assert_eq!(e.path, p("link"));
    assert!(e.found.contains("named by .git"), "{e}");
}

#[test]
fn submodules_worktrees_and_nested_repositories() {
    let fs = repo()
        .with("/w/.git/modules/lib/HEAD", Kind::File)
        .with_text("/w/.git/modules/lib/config", "")
        .with("/w/.git/modules/lib/hooks", Kind::Dir)
        .with("/w/.git/modules/deep/path/HEAD", Kind::File)
        .with_text("/w/.git/modules/deep/path/config", "")
        .with("/w/.git/modules/lib/modules/inner/HEAD", Kind::File)
        .with_text("/w/.git/worktrees/wt/commondir", "../..\n")
        .with_text("/w/.git/worktrees/wt/gitdir", "/w2/wt/.git\n")
        .with_text("/w/.git/worktrees/wt/config.worktree", "")
        .with("/w/.git/worktrees/wt/HEAD", Kind::File)
        .with_text("/w/lib/.git", "gitdir: ../.git/modules/lib\n")
        .with("/w/nested/.git/HEAD", Kind::File)
        .with_text("/w/nested/.git/config", "[core]\n\thooksPath = .hooks\n")
        .with("/w/node_modules/dep/.git/config", Kind::File);
    let got = plan(&fs, Path::new(WS), &on()).unwrap();
    assert_eq!(got.pinned, vec![p(".git"), p("nested/.git")]);
    assert_eq!(
        got.read_only,
        ro(&[
            (".devcontainer", true),
            (".git/config", false),
            (".git/hooks", true),
            (".git/modules/deep/path/config", false),
            (".git/modules/lib/config", false),
            (".git/modules/lib/hooks", true),
            (".git/worktrees/wt/commondir", false),
            (".git/worktrees/wt/config.worktree", false),
            (".git/worktrees/wt/gitdir", false),
            ("lib/.git", false),
            ("nested/.git/config", false),
        ])
    );
    assert_eq!(got.empty, vec![p(".git/modules/deep/path/hooks"), p(".git/modules/lib/modules/inner/hooks"), p("nested/.git/hooks"), p("nested/.hooks")]);
    assert!(!got.pinned.iter().any(|p| p.starts_with("node_modules")), "dependency trees are not searched");
}

#[test]
fn a_hooks_path_is_protected_whether_or_not_it_exists() {
    let fs = repo().with_text("/w/.git/config", "[core]\n\thooksPath = .husky/_\n").with("/w/.husky/_/pre-commit", Kind::File);
    assert!(plan(&fs, Path::new(WS), &on()).unwrap().read_only.contains(&(p(".husky/_"), true)));
    let fs = repo().with_text("/w/.git/config", "[core]\n\thookspath = \"/w/ci/hooks\"\n");
    assert!(plan(&fs, Path::new(WS), &on()).unwrap().empty.contains(&p("ci/hooks")));
    // Outside the workspace (or in the home): read-only anyway, nothing to do.
    let fs = repo().with_text("/w/.git/config", "[core]\n\thooksPath = ~/.githooks\n");
    assert_eq!(plan(&fs, Path::new(WS), &on()).unwrap().empty, Vec::<PathBuf>::new());
}

#[test]
fn switches_turn_protections_off() {
    let off = Config { protect_devcontainer: false, protect_git_hooks: false, protect_git_config: false, ..Config::default() };
    assert_eq!(plan(&repo().with_symlink("/w/.devcontainer.json", "/x"), Path::new(WS), &off).unwrap(), Protected::default());
    let hooks_only = Config { protect_devcontainer: false, protect_git_config: false, ..Config::default() };
    let got = plan(&repo(), Path::new(WS), &hooks_only).unwrap();
    assert_eq!(got.read_only, ro(&[(".git/hooks", true)]));
}

#[test]
fn the_nested_repository_scan_is_bounded() {
    let mut fs = TableFs::default();
    let mut deep = String::from("/w");
    for i in 0..NESTED_REPO_DEPTH + 2 {
        deep.push_str(&format!("/d{i}"));
    }
    fs = fs.with(&format!("{deep}/.git/HEAD"), Kind::File);
    for i in 0..NESTED_REPO_DIRS + 10 {
        fs = fs.with(&format!("/w/wide/w{i:04}/x"), Kind::Dir);
    }
    let got = plan(&fs, Path::new(WS), &on()).unwrap();
    assert!(got.pinned.is_empty(), "{:?}", got.pinned);
}
