//! The legacy `docker save` archive, from hand-made archives.

use super::*;

fn sha(data: &[u8]) -> String {
    format!("sha256:{}", Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// A small tar holding one file.
fn layer_tar(name: &str, content: &[u8]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(content.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(&mut h, name, content).unwrap();
    b.into_inner().unwrap()
}

/// An unpacked archive as docker 20.10 writes it: two layers, the config
/// naming their digests, `manifest.json`.
fn archive(arch: &str) -> (tempfile::TempDir, Vec<Vec<u8>>, Vec<u8>) {
    let d = tempfile::tempdir().unwrap();
    let layers = vec![layer_tar("etc/a", b"first"), layer_tar("usr/b", b"second layer")];
    let diff_ids: Vec<String> = layers.iter().map(|l| sha(l)).collect();
    let config = serde_json::to_vec(&serde_json::json!({"architecture": arch, "os": "linux", "rootfs": {"type": "layers", "diff_ids": diff_ids}})).unwrap();
    let id = sha(&config)[7..].to_owned();
    std::fs::write(d.path().join(format!("{id}.json")), &config).unwrap();
    let mut names = Vec::new();
    for (i, l) in layers.iter().enumerate() {
        let dir = d.path().join(format!("l{i}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("layer.tar"), l).unwrap();
        names.push(format!("l{i}/layer.tar"));
    }
    let toc = serde_json::json!([{"Config": format!("{id}.json"), "RepoTags": ["localhost/x:1"], "Layers": names}]);
    std::fs::write(d.path().join(MANIFEST_JSON), serde_json::to_vec(&toc).unwrap()).unwrap();
    (d, layers, config)
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut out).unwrap();
    out
}

#[test]
fn a_legacy_archive_becomes_an_oci_image_with_gzip_layers() {
    let (d, layers, config) = archive("amd64");
    assert!(is_legacy(d.path()));
    let blobs = d.path().join("blobs");
    let img = read(d.path(), Arch::X86_64, &blobs).unwrap();
    // The config is pushed byte for byte: its digest stays the image id.
    assert_eq!((img.config.media_type.as_str(), img.config.data.as_slice()), (OCI_CONFIG, config.as_slice()));
    assert_eq!(img.layers.len(), 2);
    for (file, plain) in img.layers.iter().zip(&layers) {
        assert_eq!(file.media_type, OCI_LAYER_GZIP);
        assert_eq!(gunzip(&file.path), *plain, "the blob is the layer, compressed");
        let stored = std::fs::read(&file.path).unwrap();
        assert_eq!((sha(&stored), stored.len() as u64), (file.digest.to_string(), file.size));
        assert_eq!(file.path, blobs.join(&file.digest.as_str()[7..]));
    }
    let layer_descs: Vec<Descriptor> =
        img.layers.iter().map(|l| Descriptor { media_type: OCI_LAYER_GZIP.into(), digest: l.digest.clone(), size: l.size, annotations: None }).collect();
    assert_eq!(img.manifest, manifest(&img.config, &layer_descs));
    assert_eq!(img.manifest.media_type, OCI_MANIFEST);
    assert_eq!(img.digest, Digest::of(&img.manifest_bytes));
    let m: Value = serde_json::from_slice(&img.manifest_bytes).unwrap();
    assert_eq!(m["config"]["digest"], sha(&config).as_str());
    assert_eq!(m["layers"][1]["mediaType"], OCI_LAYER_GZIP);

    // The same archive gives the same manifest again (publish is reproducible).
    let again = read(d.path(), Arch::X86_64, &d.path().join("blobs2")).unwrap();
    assert_eq!(again.manifest_bytes, img.manifest_bytes);
}

#[test]
fn a_wrong_architecture_or_layer_is_refused() {
    let (d, _, _) = archive("arm64");
    let e = read(d.path(), Arch::X86_64, &d.path().join("b")).unwrap_err().to_string();
    assert!(e.contains("the image is for arm64, not amd64"), "{e}");

    let (d, _, _) = archive("amd64");
    std::fs::write(d.path().join("l1/layer.tar"), layer_tar("usr/b", b"changed")).unwrap();
    let e = read(d.path(), Arch::X86_64, &d.path().join("b")).unwrap_err().to_string();
    assert!(e.contains("layer l1/layer.tar has the digest") && e.contains("the config says"), "{e}");
}

#[test]
fn manifest_json_must_name_one_image_inside_the_archive() {
    assert_eq!(
        entry(br#"[{"Config":"c.json","Layers":["a/layer.tar","b/layer.tar"]}]"#).unwrap(),
        Entry { config: "c.json".into(), layers: vec!["a/layer.tar".into(), "b/layer.tar".into()] }
    );
    assert!(entry(b"[]").unwrap_err().contains("exactly one image"));
    assert!(entry(br#"[{"Config":"c.json","Layers":[]},{"Config":"d.json","Layers":[]}]"#).unwrap_err().contains("exactly one image"));
    for bad in ["../etc/passwd", "/etc/passwd", "a/../../x", "./c.json"] {
        let text = format!(r#"[{{"Config":"c.json","Layers":["{bad}"]}}]"#);
        assert!(entry(text.as_bytes()).unwrap_err().contains("leaves the archive"), "{bad}");
    }
    assert!(entry(b"{").unwrap_err().contains("not JSON"));
}
