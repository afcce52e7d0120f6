//! The classification as a pure function: a listing and a reader given as
//! tables, no file system.

use super::super::classify::{self, Reader, Scope};
use super::super::kinds::Kind;
use super::super::walk::{Entry, Listing, Meta, Ty};
use crate::nofollow::ReadError;
use std::collections::BTreeMap;
use std::path::Path;

struct Table(BTreeMap<&'static str, &'static str>);

impl Reader for Table {
    fn read(&self, key: &str) -> Result<Vec<u8>, ReadError> {
        self.0.get(key).map(|t| t.as_bytes().to_vec()).ok_or(ReadError::NotRegular("absent"))
    }
}

fn entry(ty: Ty, mode: u32) -> Entry {
    Entry { ty, meta: Meta { mode, ..Meta::default() }, target: None, unreadable: None, file_caps: false }
}

fn listing(files: &[(&str, Ty)]) -> Listing {
    Listing::from_unsorted(files.iter().map(|(k, ty)| (k.to_string(), entry(*ty, if *ty == Ty::Dir { 0o755 } else { 0o644 }))).collect())
}

fn kind(l: &Listing, c: &classify::Classified, key: &str) -> Option<Kind> {
    classify::kind_of(l, c, key)
}

#[test]
fn devcontainer_scripts_and_compose_files_are_devcontainer() {
    let l = listing(&[
        (".devcontainer", Ty::Dir),
        (".devcontainer/devcontainer.json", Ty::File),
        ("tools", Ty::Dir),
        ("tools/host-init", Ty::File),
        ("ops", Ty::Dir),
        ("ops/compose.yml", Ty::File),
        ("ops/.env", Ty::File),
        ("README.md", Ty::File),
    ]);
    let reader = Table(BTreeMap::from([
        (".devcontainer/devcontainer.json", r#"{"initializeCommand": ["sh", "-c", "cd tools && ./host-init"], "dockerComposeFile": "../ops/compose.yml"}"#),
        ("ops/compose.yml", "services:\n  a:\n    env_file: .env\n"),
    ]));
    let ws = Path::new("/w");
    let c = classify::classify(&l, &reader, &Scope { workspace: ws, shared: &[], agents: &[], home: None });
    assert_eq!(kind(&l, &c, "tools/host-init"), Some(Kind::Devcontainer));
    assert_eq!(kind(&l, &c, "ops/compose.yml"), Some(Kind::Devcontainer));
    assert_eq!(kind(&l, &c, "ops/.env"), Some(Kind::Devcontainer), "an env file the compose file names");
    assert_eq!(kind(&l, &c, "README.md"), None);
}

#[test]
fn venvs_are_known_by_layout_not_by_pyvenv_cfg() {
    let l = listing(&[
        ("env", Ty::Dir),
        ("env/bin", Ty::Dir),
        ("env/bin/python3", Ty::File),
        ("env/bin/black", Ty::File),
        ("p/.venv/lib/python3.12/site-packages", Ty::Dir),
        ("p/.venv/lib/python3.12/site-packages/a.pth", Ty::File),
        ("p/.venv/lib/python3.12/site-packages/pkg/__init__.py", Ty::File),
        ("p/.venv/bin/activate", Ty::File),
        ("bin/deploy", Ty::File),
    ]);
    let c = classify::classify(&l, &Table(BTreeMap::new()), &Scope { workspace: Path::new("/w"), shared: &[], agents: &[], home: None });
    assert_eq!(kind(&l, &c, "env/bin/black"), Some(Kind::VenvBin));
    assert_eq!(kind(&l, &c, "p/.venv/bin/activate"), Some(Kind::VenvBin));
    assert_eq!(kind(&l, &c, "p/.venv/lib/python3.12/site-packages/a.pth"), Some(Kind::PythonStartup));
    assert_eq!(kind(&l, &c, "p/.venv/lib/python3.12/site-packages/pkg/__init__.py"), Some(Kind::DependencyTree));
    assert_eq!(kind(&l, &c, "bin/deploy"), None, "a bin/ without an interpreter is no venv");
}

#[test]
fn paths_resolve_lexically_inside_the_workspace() {
    use classify::places::place;
    assert_eq!(super::super::classify::places::facts(&Listing::default()).venvs.len(), 0);
    let f = classify::places::Facts::default();
    assert_eq!(place("a/b/.git", Ty::File, &f), Some(Kind::GitPointer));
    assert_eq!(place(".github/workflows/x/y.yml", Ty::File, &f), Some(Kind::CiWorkflow));
    assert_eq!(place(".devcontainer/.vscode/settings.json", Ty::File, &f), Some(Kind::Devcontainer), "the worse kind wins");
    assert_eq!(place("src/main.rs", Ty::File, &f), None);
}
