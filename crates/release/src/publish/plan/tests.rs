//! Publish plans and artifacts, as whole values.

use super::*;
use crate::oci::archive::FileEntry;
use crate::oci::semver::Version;
use crate::publish::package::{package, Packaged};
use crate::publish::source::{Item, Kind};
use std::path::PathBuf;

fn feature(id: &str, version: &str) -> Item {
    let meta = format!(r#"{{"id": "{id}", "version": "{version}", "name": "N é"}}"#);
    Item {
        kind: Kind::Feature,
        dir: PathBuf::from(format!("/src/{id}")),
        id: id.into(),
        version: Version::parse(version).unwrap(),
        metadata: crate::publish::json::parse(&meta).unwrap(),
        files: vec![FileEntry::new("devcontainer-feature.json", meta, false), FileEntry::new("install.sh", "#!/bin/sh\n", true)],
    }
}

fn target(registry: &str) -> Target {
    Target::new(Registry::parse(registry).unwrap(), "/my-org/tools/").unwrap()
}

fn pkg() -> Package {
    package(Kind::Feature, &[feature("a", "1.2.3"), feature("b", "0.1.0")], 0).unwrap()
}

#[test]
fn feature_manifest_is_byte_for_byte_the_cli_layout() {
    let p: &Packaged = &pkg().items[0];
    let a = crate::publish::package::item_artifact(Kind::Feature, p, &Registry::parse("localhost:5000").unwrap());
    let expected = format!(
        concat!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","#,
            r#""config":{{"mediaType":"application/vnd.devcontainers","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2}},"#,
            r#""layers":[{{"mediaType":"application/vnd.devcontainers.layer.v1+tar","digest":"{}","size":{},"annotations":{{"org.opencontainers.image.title":"devcontainer-feature-a.tgz"}}}}],"#,
            r#""annotations":{{"dev.containers.metadata":"{{\"id\":\"a\",\"version\":\"1.2.3\",\"name\":\"N é\"}}"}}}}"#
        ),
        Digest::of(&p.archive),
        p.archive.len()
    );
    assert_eq!(String::from_utf8(a.manifest_bytes.clone()).unwrap(), expected);
    let on_ghcr = crate::publish::package::item_artifact(Kind::Feature, p, &Registry::parse("ghcr.io").unwrap());
    assert_eq!(on_ghcr.manifest.image().unwrap().annotations.as_ref().unwrap().get("com.github.package.type"), Some("devcontainer_feature"));
}

#[test]
fn collection_file_and_manifest() {
    let pkg = pkg();
    assert_eq!(
        pkg.collection,
        "{\n    \"sourceInformation\": {\n        \"source\": \"agent-sandbox\"\n    },\n    \"features\": [\n        {\n            \"id\": \"a\",\n            \"version\": \"1.2.3\",\n            \"name\": \"N é\"\n        },\n        {\n            \"id\": \"b\",\n            \"version\": \"0.1.0\",\n            \"name\": \"N é\"\n        }\n    ]\n}"
    );
    let a = crate::publish::package::collection_artifact(&pkg, &Registry::parse("localhost:5000").unwrap());
    let text = String::from_utf8(a.manifest_bytes).unwrap();
    assert!(text.contains(r#""layers":[{"mediaType":"application/vnd.devcontainers.collection.layer.v1+json""#), "{text}");
    assert!(text.ends_with(r#""annotations":{"org.opencontainers.image.title":"devcontainer-collection.json"}}]}"#), "{text}");
}

#[test]
fn first_publication_plan() {
    let pkg = pkg();
    let t = target("localhost:5000");
    assert_eq!(repositories(&pkg, &t), vec!["my-org/tools/a", "my-org/tools/b"]);
    let plan = plan(&pkg, &t, &BTreeMap::new());
    let pushes: Vec<(String, Vec<String>)> = plan.push.items.iter().map(|i| (i.repository.clone(), i.tags.clone())).collect();
    let tags = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        pushes,
        vec![
            ("my-org/tools/a".into(), tags(&["1", "1.2", "latest", "1.2.3"])),
            ("my-org/tools/b".into(), tags(&["0", "0.1", "latest", "0.1.0"])),
            ("my-org/tools".into(), tags(&["latest"])),
        ]
    );
    let r = &plan.report;
    assert_eq!((r.kind, r.registry.as_str(), r.namespace.as_str(), r.dry_run), ("feature", "localhost:5000", "my-org/tools", false));
    assert_eq!(r.items[0].reference, "localhost:5000/my-org/tools/a");
    assert_eq!(r.items[0].digest, plan.push.items[0].artifact.digest);
    assert_eq!(r.collection.reference, "localhost:5000/my-org/tools");
}

#[test]
fn already_published_versions_are_skipped_but_the_collection_is_refreshed() {
    let pkg = pkg();
    let t = target("localhost:5000");
    let existing: BTreeMap<String, Vec<String>> = [
        ("my-org/tools/a".to_string(), vec!["1.2.3".to_string(), "latest".into()]),
        ("my-org/tools/b".to_string(), vec!["0.2.0".to_string(), "0".into(), "latest".into()]),
    ]
    .into_iter()
    .collect();
    let plan = plan(&pkg, &t, &existing);
    let pushes: Vec<(&str, Vec<&str>)> = plan.push.items.iter().map(|i| (i.repository.as_str(), i.tags.iter().map(String::as_str).collect())).collect();
    assert_eq!(pushes, vec![("my-org/tools/b", vec!["0.1", "0.1.0"]), ("my-org/tools", vec!["latest"])]);
    assert!(plan.report.items[0].already_published && plan.report.items[0].tags.is_empty());
}

#[test]
fn same_input_same_digests() {
    let (a, b) = (pkg(), pkg());
    let t = target("localhost:5000");
    assert_eq!(plan(&a, &t, &BTreeMap::new()), plan(&b, &t, &BTreeMap::new()));
}

#[test]
fn bad_namespaces_are_refused() {
    assert!(Target::new(Registry::parse("localhost").unwrap(), "My Org").is_err());
}
