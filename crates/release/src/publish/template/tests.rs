//! Template additions and the feature rewrite, as whole values.

use super::*;
use crate::oci::semver::Version;
use crate::publish::source::Kind;
use std::path::PathBuf;

const CONFIG: &str = r#"{
    // a comment
    "name": "x",
    "image": "debian:trixie-slim",
    "features": {
        "ghcr.io/agent-sandbox/agent-sandbox/agent-sandbox:1": {},
        "./local-feature": {}
    }
}
"#;

fn item(meta: &str) -> Item {
    Item {
        kind: Kind::Template,
        dir: PathBuf::from("/t/demo"),
        id: "demo".into(),
        version: Version::parse("1.0.0").unwrap(),
        metadata: crate::publish::json::parse(meta).unwrap(),
        files: vec![
            FileEntry::new(".devcontainer/devcontainer.json", CONFIG, false),
            FileEntry::new("NOTES.md", "n", false),
            FileEntry::new("devcontainer-template.json", meta, false),
            FileEntry::new("extra/only.txt", "o", false),
        ],
    }
}

#[test]
fn metadata_gets_the_cli_fields_in_order() {
    let mut t = item(r#"{"id": "demo", "version": "1.0.0", "name": "Demo", "optionalPaths": ["extra/*", ".github/*"]}"#);
    prepare(&mut t, None).unwrap();
    assert_eq!(
        json::compact(&t.metadata),
        concat!(
            r#"{"id":"demo","version":"1.0.0","name":"Demo","optionalPaths":["extra/only.txt",".github/*"],"type":"image","#,
            r#""files":[".devcontainer/devcontainer.json","NOTES.md","devcontainer-template.json","extra/only.txt"],"fileCount":4,"#,
            r#""featureIds":["ghcr.io/agent-sandbox/agent-sandbox/agent-sandbox"]}"#
        )
    );
    let written = String::from_utf8(t.file("devcontainer-template.json").unwrap().data.clone()).unwrap();
    assert_eq!(written, json::pretty(&t.metadata));
    assert_eq!(t.file(".devcontainer/devcontainer.json").unwrap().data, CONFIG.as_bytes());
}

#[test]
fn the_feature_reference_can_point_at_another_registry() {
    let mut t = item(r#"{"id": "demo", "version": "1.0.0", "name": "Demo"}"#);
    let rw = FeatureRewrite::parse("localhost:5050/my/ns/agent-sandbox").unwrap();
    prepare(&mut t, Some(&rw)).unwrap();
    let config = String::from_utf8(t.file(".devcontainer/devcontainer.json").unwrap().data.clone()).unwrap();
    assert_eq!(config, CONFIG.replace("ghcr.io/agent-sandbox/agent-sandbox/agent-sandbox:1", "localhost:5050/my/ns/agent-sandbox:1"));
    assert_eq!(t.metadata.get("featureIds"), Some(&Json::Array(vec!["localhost:5050/my/ns/agent-sandbox".into()])));
}

#[test]
fn feature_refs_split_like_the_cli() {
    assert_eq!(feature_resource("GHCR.io/a/b/c:1.2"), Some(("ghcr.io/a/b/c".into(), Some("1.2".into()))));
    assert_eq!(feature_resource("localhost:5000/a/b"), Some(("localhost:5000/a/b".into(), None)));
    assert_eq!(feature_resource("ghcr.io/a/b@sha256:00"), Some(("ghcr.io/a/b".into(), None)));
    assert_eq!(feature_resource("./local"), None);
    assert_eq!(feature_resource("ghcr.io/b"), None);
    for bad in ["ghcr.io/x:1", "localhost:5000/ns/x:1", "ftp://x/y/z", "x/y/z@sha256"] {
        assert!(FeatureRewrite::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_template_without_a_usable_config_is_refused() {
    let mut t = item(r#"{"id": "demo", "version": "1.0.0", "name": "Demo"}"#);
    t.files.retain(|f| f.path != ".devcontainer/devcontainer.json");
    assert!(prepare(&mut t, None).unwrap_err().to_string().contains("needs .devcontainer/devcontainer.json"));
    let mut t = item(r#"{"id": "demo", "version": "1.0.0", "name": "Demo"}"#);
    t.put(FileEntry::new(".devcontainer/devcontainer.json", r#"{"name": "x"}"#, false));
    assert!(prepare(&mut t, None).unwrap_err().to_string().contains("none of \"image\""));
}
