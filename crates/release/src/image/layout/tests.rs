//! Reading OCI layouts written by hand in a temporary folder.

use super::*;
use crate::arch::Arch;
use serde_json::json;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("blobs/sha256")).unwrap();
        Fixture { dir }
    }

    fn blob(&self, data: &[u8]) -> (Digest, u64) {
        let d = Digest::of(data);
        std::fs::write(self.dir.path().join("blobs/sha256").join(&d.as_str()[7..]), data).unwrap();
        (d, data.len() as u64)
    }

    fn json_blob(&self, v: &serde_json::Value) -> (Digest, u64, Vec<u8>) {
        let bytes = serde_json::to_vec(v).unwrap();
        let (d, n) = self.blob(&bytes);
        (d, n, bytes)
    }

    fn index(&self, manifests: serde_json::Value) {
        std::fs::write(self.dir.path().join("index.json"), json!({"schemaVersion": 2, "manifests": manifests}).to_string()).unwrap();
    }

    /// An amd64 image manifest with one layer; returns its descriptor JSON, bytes and layer digest.
    fn image(&self, layer: &[u8]) -> (serde_json::Value, Vec<u8>, Digest) {
        self.image_for(layer, "amd64")
    }

    fn image_for(&self, layer: &[u8], arch: &str) -> (serde_json::Value, Vec<u8>, Digest) {
        let (cd, cn, _) = self.json_blob(&json!({"architecture": arch, "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}));
        let (ld, ln) = self.blob(layer);
        let m = json!({"schemaVersion": 2,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cn},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": ld, "size": ln}]});
        let (md, mn, bytes) = self.json_blob(&m);
        (json!({"mediaType": OCI_MANIFEST, "digest": md, "size": mn}), bytes, ld)
    }
}

#[test]
fn a_single_image_is_read_with_its_exact_manifest_bytes() {
    let f = Fixture::new();
    let (desc, bytes, layer) = f.image(b"layer-bytes");
    f.index(json!([desc]));
    let img = read(f.dir.path(), Arch::X86_64).unwrap();
    assert_eq!(img.manifest_bytes, bytes);
    assert_eq!(img.digest, Digest::of(&bytes));
    assert_eq!(img.manifest.media_type, OCI_MANIFEST);
    assert_eq!(img.layers.len(), 1);
    assert_eq!(img.layers[0].digest, layer);
    assert_eq!(img.layers[0].size, 11);
    assert_eq!(img.layers[0].path, f.dir.path().join("blobs/sha256").join(&layer.as_str()[7..]));
    assert_eq!(img.config.media_type, "application/vnd.oci.image.config.v1+json");
    assert_eq!(img.size(), 11 + img.config.data.len() as u64);
}

#[test]
fn a_nested_index_resolves_to_this_platform() {
    let f = Fixture::new();
    let (amd, bytes, _) = f.image(b"amd");
    let (arm, arm_bytes, _) = f.image_for(b"arm", "arm64");
    let mut amd = amd;
    amd["platform"] = json!({"os": "linux", "architecture": "amd64"});
    let mut arm = arm;
    arm["platform"] = json!({"os": "linux", "architecture": "arm64"});
    let attestation = json!({"mediaType": OCI_MANIFEST, "digest": Digest::of(b"x"), "size": 1, "platform": {"os": "unknown", "architecture": "unknown"}});
    let (nd, nn, _) = f.json_blob(&json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [arm, amd, attestation]}));
    f.index(json!([{"mediaType": OCI_INDEX, "digest": nd, "size": nn}]));
    assert_eq!(read(f.dir.path(), Arch::X86_64).unwrap().manifest_bytes, bytes);
    assert_eq!(read(f.dir.path(), Arch::Aarch64).unwrap().manifest_bytes, arm_bytes);
    f.index(json!([desc_of(&f, b"amd")]));
    let e = read(f.dir.path(), Arch::Aarch64).unwrap_err().to_string();
    assert!(e.contains("the image is for amd64, not arm64"), "an unlabelled manifest is checked by its config: {e}");
}

fn desc_of(f: &Fixture, layer: &[u8]) -> serde_json::Value {
    f.image(layer).0
}

#[test]
fn damaged_layouts_are_refused_with_the_reason() {
    let f = Fixture::new();
    let (desc, _, layer) = f.image(b"layer-bytes");
    f.index(json!([desc]));
    std::fs::write(f.dir.path().join("blobs/sha256").join(&layer.as_str()[7..]), b"short").unwrap();
    let e = read(f.dir.path(), Arch::X86_64).unwrap_err().to_string();
    assert!(e.contains("has 5 bytes, the manifest says 11"), "{e}");

    let f = Fixture::new();
    let (mut desc, _, _) = f.image(b"l");
    desc["digest"] = json!(Digest::of(b"other"));
    std::fs::write(f.dir.path().join("blobs/sha256").join(&Digest::of(b"other").as_str()[7..]), b"not it").unwrap();
    f.index(json!([desc]));
    let e = read(f.dir.path(), Arch::X86_64).unwrap_err().to_string();
    assert!(e.contains("does not match its digest"), "{e}");

    let f = Fixture::new();
    let (a, _, _) = f.image(b"a");
    let (b, _, _) = f.image(b"b");
    f.index(json!([a, b]));
    let e = read(f.dir.path(), Arch::X86_64).unwrap_err().to_string();
    assert!(e.contains("2 manifests"), "{e}");
}
