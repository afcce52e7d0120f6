//! The remote user an installation is made for (`--user`, or
//! `_REMOTE_USER` as set by devcontainer features), read from the target
//! system's /etc/passwd (the staged one with `--root`). Pure parsing.

use serde::Serialize;
use std::path::PathBuf;

/// The devcontainer feature convention for the user sessions run as.
pub const REMOTE_USER_ENV: &str = "_REMOTE_USER";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
    pub shell: PathBuf,
}

/// Looks `name` (or a numeric uid) up in passwd text.
pub fn lookup(passwd: &str, name: &str) -> Option<User> {
    passwd.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() < 7 {
            return None;
        }
        let user = User { name: f[0].to_string(), uid: f[2].parse().ok()?, gid: f[3].parse().ok()?, home: PathBuf::from(f[5]), shell: PathBuf::from(f[6]) };
        (user.name == name || user.uid.to_string() == name).then_some(user)
    })
}

/// The user to install for: `--user`, else `_REMOTE_USER`; root (or
/// nothing) means no remote user.
pub fn requested(flag: Option<&str>, remote_user_env: Option<&str>) -> Option<String> {
    let name = flag.or(remote_user_env).map(str::trim).filter(|n| !n.is_empty())?;
    (name != "root" && name != "0").then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n# comment\nvscode:x:1000:1000::/home/vscode:/bin/bash\nbroken:x\n";

    #[test]
    fn finds_by_name_and_uid() {
        let u = lookup(PASSWD, "vscode").unwrap();
        assert_eq!((u.uid, u.gid, u.home.to_str().unwrap()), (1000, 1000, "/home/vscode"));
        assert_eq!(lookup(PASSWD, "1000").unwrap().name, "vscode");
        assert_eq!(lookup(PASSWD, "node"), None);
        assert_eq!(lookup(PASSWD, "broken"), None);
    }

    #[test]
    fn flag_wins_and_root_means_none() {
        assert_eq!(requested(Some("node"), Some("vscode")).as_deref(), Some("node"));
        assert_eq!(requested(None, Some("vscode")).as_deref(), Some("vscode"));
        assert_eq!(requested(None, Some("root")), None);
        assert_eq!(requested(None, Some(" ")), None);
        assert_eq!(requested(None, None), None);
    }
}
