//! Reading collections: layouts, checks and their messages.

use super::*;
use std::fs;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

const META: &str = r#"{"id": "demo", "version": "1.2.3", "name": "Demo"}"#;

#[test]
fn a_collection_is_read_sorted_with_modes() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "demo/devcontainer-feature.json", META);
    write(d.path(), "demo/install.sh", "#!/bin/sh\n");
    fs::set_permissions(d.path().join("demo/install.sh"), fs::Permissions::from_mode(0o700)).unwrap();
    write(d.path(), "demo/sub/b.txt", "b");
    write(d.path(), ".hidden/devcontainer-feature.json", "{");
    write(d.path(), "other/README.md", "no metadata: skipped");
    let items = read_collection(d.path(), Kind::Feature).unwrap();
    assert_eq!(items.len(), 1);
    let item = &items[0];
    assert_eq!((item.id.as_str(), item.version.to_string().as_str()), ("demo", "1.2.3"));
    let files: Vec<(&str, bool)> = item.files.iter().map(|f| (f.path.as_str(), f.executable)).collect();
    assert_eq!(files, vec![("devcontainer-feature.json", false), ("install.sh", true), ("sub/b.txt", false)]);
}

#[test]
fn a_single_item_folder_is_a_collection_of_one() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "devcontainer-feature.json", META);
    write(d.path(), "install.sh", "");
    assert_eq!(read_collection(d.path(), Kind::Feature).unwrap()[0].id, "demo");
}

fn error_for(meta: &str, dir: &str, install: bool) -> String {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &format!("{dir}/devcontainer-feature.json"), meta);
    if install {
        write(d.path(), &format!("{dir}/install.sh"), "");
    }
    read_collection(d.path(), Kind::Feature).unwrap_err().to_string()
}

#[test]
fn bad_metadata_gets_a_clear_error() {
    let e = error_for("{\"id\": \"demo\",, }", "demo", true);
    assert!(e.contains("is not valid JSON") && e.contains("devcontainer-feature.json"), "{e}");
    let e = error_for(r#"{"id": "demo", "version": "1.2", "name": "D"}"#, "demo", true);
    assert!(e.contains("`1.2` is not a semantic version"), "{e}");
    let e = error_for(r#"{"id": "demo", "name": "D"}"#, "demo", true);
    assert!(e.contains("\"version\" is missing"), "{e}");
    let e = error_for(r#"{"id": "Demo", "version": "1.0.0", "name": "D"}"#, "Demo", true);
    assert!(e.contains("the id `Demo` must be lowercase"), "{e}");
    let e = error_for(META, "other", true);
    assert!(e.contains("differs from its folder name `other`"), "{e}");
    let e = error_for(META, "demo", false);
    assert!(e.contains("needs an install.sh"), "{e}");
    let e = error_for("[1]", "demo", true);
    assert!(e.contains("must hold a JSON object"), "{e}");
}

#[test]
fn links_are_refused_and_empty_folders_explained() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "demo/devcontainer-feature.json", META);
    write(d.path(), "demo/install.sh", "");
    std::os::unix::fs::symlink("/etc/passwd", d.path().join("demo/passwd")).unwrap();
    let e = read_collection(d.path(), Kind::Feature).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = read_collection(empty.path(), Kind::Template).unwrap_err().to_string();
    assert!(e.contains("no devcontainer-template.json"), "{e}");
}
