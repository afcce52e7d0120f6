//! The start-up file reader on the lines real tools write.

use super::*;

const HOME: &str = "/home/u";

fn read(files: &[(&str, &str)]) -> ShellPath {
    let files: Vec<(PathBuf, String)> = files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect();
    parse(&files, Path::new(HOME), &|_| None)
}

fn dirs(s: &ShellPath) -> Vec<&str> {
    s.dirs.iter().map(|(d, _)| d.to_str().unwrap()).collect()
}

#[test]
fn pnpm_setup_lines_put_pnpm_home_on_path() {
    let bashrc = "# pnpm\nexport PNPM_HOME=\"/home/u/.local/share/pnpm\"\ncase \":$PATH:\" in\n  *\":$PNPM_HOME:\"*) ;;\n  *) export PATH=\"$PNPM_HOME:$PATH\" ;;\nesac\n# pnpm end\n";
    let s = read(&[("/home/u/.bashrc", bashrc)]);
    assert_eq!(dirs(&s), vec!["/home/u/.local/share/pnpm"]);
    assert_eq!(s.dirs[0].1.to_string(), "/home/u/.bashrc:5");
    assert!(s.unfollowed.is_empty(), "{:?}", s.unfollowed);
}

#[test]
fn debian_profile_and_common_forms() {
    let profile = "if [ -n \"$BASH_VERSION\" ]; then\n    if [ -f \"$HOME/.bashrc\" ]; then\n\t. \"$HOME/.bashrc\"\n    fi\nfi\n\
        if [ -d \"$HOME/bin\" ] ; then\n    PATH=\"$HOME/bin:$PATH\"\nfi\n\
        [ -d ~/.local/bin ] && PATH=~/.local/bin:$PATH\n\
        export PATH=\"${PATH}:${HOME}/go/bin\"\n\
        PATH+=\":$HOME/.cargo/bin\" # cargo\n\
        PATH=/opt/tool/bin:$PATH command_with_its_own_path\n\
        export BUN_INSTALL=\"$HOME/.bun\"; export PATH=$BUN_INSTALL/bin:$PATH\n\
        DATA=${XDG_DATA_HOME:-$HOME/.local/share}\nPATH=\"$DATA/mise/shims:$PATH\"\n";
    let s = read(&[("/home/u/.profile", profile)]);
    assert_eq!(
        dirs(&s),
        vec!["/home/u/bin", "/home/u/.local/bin", "/home/u/go/bin", "/home/u/.cargo/bin", "/home/u/.bun/bin", "/home/u/.local/share/mise/shims"]
    );
    assert!(s.unfollowed.is_empty(), "{:?}", s.unfollowed);
}

#[test]
fn zsh_path_arrays() {
    let s = read(&[("/home/u/.zshrc", "path=(\"$HOME/.claude/bin\" $path)\npath+=(/srv/tools/bin)\n")]);
    assert_eq!(dirs(&s), vec!["/home/u/.claude/bin", "/srv/tools/bin"]);
}

#[test]
fn aliases_of_entry_points_are_found() {
    let s = read(&[(
        "/home/u/.bashrc",
        "alias claude=\"~/.claude/local/claude\"\nalias ll='ls -l'\nalias codex='/workspaces/p/bin/codex --yolo'\nalias pi=$HOME/x/pi\n",
    )]);
    let got: Vec<(&str, &str)> = s.aliases.iter().map(|(n, p, _)| (n.as_str(), p.to_str().unwrap())).collect();
    assert_eq!(got, vec![("claude", "/home/u/.claude/local/claude"), ("codex", "/workspaces/p/bin/codex"), ("pi", "/home/u/x/pi")]);
}

#[test]
fn sourced_files_are_followed() {
    let files = vec![(PathBuf::from("/home/u/.bashrc"), ". \"$HOME/.cargo/env\"\nsource /home/u/.config/extra.sh\n".to_string())];
    let reader = |p: &Path| match p.to_str()? {
        "/home/u/.cargo/env" => Some("case \":${PATH}:\" in *:\"$HOME/.cargo/bin\":*) ;; *) export PATH=\"$HOME/.cargo/bin:$PATH\" ;; esac\n".to_string()),
        "/home/u/.config/extra.sh" => Some("PATH=/home/u/.config/bin:$PATH\n. /home/u/.bashrc\n".to_string()),
        _ => None,
    };
    let mut files = files;
    // Read once, though also listed itself after the file that sources it.
    files.push((PathBuf::from("/home/u/.config/extra.sh"), "eval x\n".into()));
    let s = parse(&files, Path::new(HOME), &reader);
    assert_eq!(dirs(&s), vec!["/home/u/.cargo/bin", "/home/u/.config/bin"]);
    assert!(s.unfollowed.is_empty(), "{:?}", s.unfollowed);
    assert_eq!(s.dirs[1].1.to_string(), "/home/u/.config/extra.sh:1");
}

#[test]
fn what_cannot_be_followed_is_listed() {
    let rc = "eval \"$(mise activate bash)\"\nPATH=\"$(brew --prefix)/bin:$PATH\"\nPATH=$SOMETHING_UNSET/bin:$PATH\nclaude() { ~/.claude/local/claude \"$@\"; }\nfunction codex { :; }\nalias claude=$(which claude)\n";
    let s = read(&[("/home/u/.bashrc", rc)]);
    assert!(s.dirs.is_empty(), "{:?}", s.dirs);
    let lines: Vec<(usize, &str)> = s.unfollowed.iter().map(|(o, w)| (o.line, w.as_str())).collect();
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[0].1.contains("eval") && lines[1].1.contains("a command's output") && lines[2].1.contains("$SOMETHING_UNSET"), "{lines:#?}");
    assert!(lines[3].1.contains("shell function named `claude`") && lines[4].1.contains("`codex`") && lines[5].1.contains("alias `claude`"), "{lines:#?}");
}

#[test]
fn a_fifo_or_a_huge_file_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    assert_eq!(read_file(&fifo), None);
    let big = d.path().join("big");
    std::fs::write(&big, vec![b'#'; MAX_FILE as usize + 1]).unwrap();
    assert_eq!(read_file(&big), None);
    let ok = d.path().join("ok");
    std::fs::write(&ok, "PATH=/x:$PATH\n").unwrap();
    assert_eq!(read_file(&ok).as_deref(), Some("PATH=/x:$PATH\n"));
}
