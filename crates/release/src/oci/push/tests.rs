//! The push order, checked against a recording registry.

use super::*;
use crate::oci::manifest::{Annotations, Blob};
use std::cell::RefCell;

#[derive(Default)]
struct Recorder {
    calls: RefCell<Vec<String>>,
    existing_blobs: Vec<Digest>,
    refuse: Option<String>,
}

impl Recorder {
    fn check(&self, call: String) -> Result<(), OciError> {
        let refused = self.refuse.as_ref().is_some_and(|r| call.starts_with(r.as_str()));
        self.calls.borrow_mut().push(call.clone());
        if refused {
            return Err(OciError::Registry { registry: "r".into(), action: call, why: "denied".into() });
        }
        Ok(())
    }
}

impl RegistryApi for Recorder {
    fn registry(&self) -> String {
        "r".into()
    }
    fn list_tags(&self, _: &str) -> Result<Vec<String>, OciError> {
        Ok(vec![])
    }
    fn blob_exists(&self, _: &str, d: &Digest) -> Result<bool, OciError> {
        Ok(self.existing_blobs.contains(d))
    }
    fn push_blob(&self, repo: &str, b: &Blob) -> Result<(), OciError> {
        self.check(format!("blob {repo} {}", &b.digest.as_str()[7..11]))
    }
    fn push_manifest(&self, repo: &str, reference: &str, _: &[u8], _: &str) -> Result<(), OciError> {
        let r = reference.strip_prefix("sha256:").map(|h| format!("@{}", &h[..4])).unwrap_or_else(|| format!(":{reference}"));
        self.check(format!("manifest {repo}{r}"))
    }
    fn pull_manifest(&self, _: &str, _: &str) -> Result<(Vec<u8>, Digest), OciError> {
        unreachable!()
    }
}

fn item(repo: &str, content: &[u8], tags: &[&str]) -> PushItem {
    let artifact = Artifact::new(Blob::new("c", b"{}".to_vec()), vec![(Blob::new("l", content.to_vec()), Some(Annotations::new()))], None);
    PushItem { repository: repo.into(), artifact, tags: tags.iter().map(|s| s.to_string()).collect() }
}

fn short(d: &Digest) -> String {
    d.as_str()[7..11].to_owned()
}

#[test]
fn blobs_then_digests_then_tags() {
    let a = item("ns/a", b"A", &["1", "latest", "1.0.0"]);
    let b = item("ns", b"B", &["latest"]);
    let (ad, bd) = (a.artifact.digest.clone(), b.artifact.digest.clone());
    let (cfg, la, lb) = (short(&a.artifact.blobs[0].digest), short(&a.artifact.blobs[1].digest), short(&b.artifact.blobs[1].digest));
    let rec = Recorder::default();
    let done = execute(&rec, &PushPlan { items: vec![a, b] }).unwrap();
    let expected: Vec<String> = vec![
        format!("blob ns/a {cfg}"),
        format!("blob ns/a {la}"),
        format!("blob ns {cfg}"),
        format!("blob ns {lb}"),
        format!("manifest ns/a@{}", &ad.as_str()[7..11]),
        format!("manifest ns@{}", &bd.as_str()[7..11]),
        "manifest ns/a:1".into(),
        "manifest ns/a:latest".into(),
        "manifest ns/a:1.0.0".into(),
        "manifest ns:latest".into(),
    ];
    assert_eq!(*rec.calls.borrow(), expected);
    assert_eq!(done.iter().map(|p| (p.repository.as_str(), p.blobs_uploaded)).collect::<Vec<_>>(), vec![("ns/a", 2), ("ns", 2)]);
}

#[test]
fn existing_blobs_are_not_uploaded_again() {
    let a = item("ns/a", b"A", &["1"]);
    let rec = Recorder { existing_blobs: a.artifact.blobs.iter().map(|b| b.digest.clone()).collect(), ..Default::default() };
    let done = execute(&rec, &PushPlan { items: vec![a] }).unwrap();
    assert!(rec.calls.borrow().iter().all(|c| c.starts_with("manifest")));
    assert_eq!(done[0].blobs_uploaded, 0);
}

#[test]
fn a_refused_blob_moves_no_tag() {
    let a = item("ns/a", b"A", &["1", "1.0.0"]);
    let b = item("ns", b"B", &["latest"]);
    let rec = Recorder { refuse: Some("blob ns ".into()), ..Default::default() };
    let err = execute(&rec, &PushPlan { items: vec![a, b] }).unwrap_err();
    assert!(err.to_string().contains("denied"));
    assert!(rec.calls.borrow().iter().all(|c| !c.starts_with("manifest")), "{:?}", rec.calls.borrow());
}

#[test]
fn a_refused_tag_reports_what_was_already_tagged() {
    let a = item("ns/a", b"A", &["1", "latest", "1.0.0"]);
    let rec = Recorder { refuse: Some("manifest ns/a:latest".into()), ..Default::default() };
    let err = execute(&rec, &PushPlan { items: vec![a] }).unwrap_err().to_string();
    assert!(err.contains("tags pushed before it: ns/a:1"), "{err}");
    assert!(!rec.calls.borrow().iter().any(|c| c == "manifest ns/a:1.0.0"));
}

#[test]
fn an_index_is_pushed_after_the_manifests_it_names_and_only_it_is_tagged() {
    use crate::oci::manifest::{Index, IndexEntry, Platform};
    let amd = item("img", b"AMD", &[]);
    let arm = item("img", b"ARM", &[]);
    let entry = |i: &PushItem, arch: &str| IndexEntry {
        media_type: i.artifact.manifest.media_type().to_owned(),
        digest: i.artifact.digest.clone(),
        size: i.artifact.manifest_bytes.len() as u64,
        platform: Platform { architecture: arch.into(), os: "linux".into(), variant: None },
    };
    let index = Artifact::from_index(Index::new(vec![entry(&amd, "amd64"), entry(&arm, "arm64")], Annotations::new()));
    let at = |d: &Digest| format!("manifest img@{}", &d.as_str()[7..11]);
    let expected_manifests = vec![at(&amd.artifact.digest), at(&arm.artifact.digest), at(&index.digest), "manifest img:1".into(), "manifest img:1.0.0".into()];
    let plan = PushPlan { items: vec![amd, arm, PushItem { repository: "img".into(), artifact: index, tags: vec!["1".into(), "1.0.0".into()] }] };
    let rec = Recorder::default();
    execute(&rec, &plan).unwrap();
    let manifests: Vec<String> = rec.calls.borrow().iter().filter(|c| c.starts_with("manifest")).cloned().collect();
    assert_eq!(manifests, expected_manifests);
    assert!(
        rec.calls.borrow().iter().position(|c| c.starts_with("manifest")) > rec.calls.borrow().iter().rposition(|c| c.starts_with("blob")),
        "every blob before any manifest"
    );
}
