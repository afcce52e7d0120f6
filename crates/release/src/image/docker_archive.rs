//! The image in `docker save`'s legacy archive, which docker before 25
//! writes (Debian 12's docker.io is 20.10): `manifest.json` naming the
//! config (`<id>.json`, the engine's exact bytes: its digest is the image
//! id) and each layer as an uncompressed `<id>/layer.tar`. It becomes the
//! image to push: the config as it is, each layer compressed with gzip into
//! the working folder (its digest computed while writing, its uncompressed
//! digest checked against the config's `rootfs.diff_ids`), and an OCI image
//! manifest of them (OCI media types; the config's JSON is the same in
//! both formats).
//!
//! Pure: reading `manifest.json` ([`entry`]) and the manifest of the parts
//! ([`manifest`]). `read` does the file work; `unpack_tar` unpacks
//! `docker save`'s tar in either format.
//!
//! Not here: docker ≥ 25's OCI layout in the same tar (`layout::read`).

use super::error::ImageError;
use super::layout::LocalImage;
use crate::arch::Arch;
use crate::oci::manifest::{Blob, Descriptor, Document, FileBlob, Manifest, OCI_MANIFEST};
use crate::oci::Digest;
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

pub(super) const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
pub(super) const OCI_LAYER_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// The legacy archive's table of contents.
pub(super) const MANIFEST_JSON: &str = "manifest.json";

/// Whether the unpacked archive at `dir` is the legacy format (no OCI
/// `index.json`, a `manifest.json`).
pub(super) fn is_legacy(dir: &Path) -> bool {
    !dir.join("index.json").is_file() && dir.join(MANIFEST_JSON).is_file()
}

/// Unpacks docker's `save` tar into `dir`: an OCI layout since docker 25,
/// the legacy archive (this module's) before.
pub(super) fn unpack_tar(tar: &Path, dir: &Path) -> Result<(), ImageError> {
    let file = std::fs::File::open(tar).map_err(|source| ImageError::Read { path: tar.to_owned(), source })?;
    std::fs::create_dir_all(dir).map_err(|source| ImageError::Write { path: dir.to_owned(), source })?;
    tar::Archive::new(file).unpack(dir).map_err(|source| ImageError::Write { path: dir.to_owned(), source })?;
    if !dir.join("index.json").is_file() && !dir.join(MANIFEST_JSON).is_file() {
        return Err(ImageError::BadLayout {
            path: tar.to_owned(),
            why: "`docker save` wrote neither an OCI layout (index.json) nor its legacy manifest.json".into(),
        });
    }
    Ok(())
}

/// The one image `manifest.json` lists: its config and layer files,
/// relative to the archive (checked to stay inside it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub config: PathBuf,
    pub layers: Vec<PathBuf>,
}

/// A relative path without `..`, `.` or a root: one that stays in the archive.
fn inside(p: &str) -> Option<PathBuf> {
    let path = Path::new(p);
    let plain = !p.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
    plain.then(|| path.to_owned())
}

/// Reads `manifest.json`: exactly one image (the command saves one tag).
pub(super) fn entry(bytes: &[u8]) -> Result<Entry, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("{MANIFEST_JSON} is not JSON: {e}"))?;
    let [image] = v.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err(format!("{MANIFEST_JSON} must list exactly one image"));
    };
    let file = |v: &Value, what: &str| {
        let s = v.as_str().ok_or_else(|| format!("{MANIFEST_JSON}: {what} is not a string"))?;
        inside(s).ok_or_else(|| format!("{MANIFEST_JSON}: {what} `{s}` leaves the archive"))
    };
    let config = file(&image["Config"], "Config")?;
    let layers = image["Layers"]
        .as_array()
        .ok_or_else(|| format!("{MANIFEST_JSON} lists no Layers"))?
        .iter()
        .map(|l| file(l, "a layer"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Entry { config, layers })
}

/// The OCI image manifest of `config` and the compressed `layers`.
pub(super) fn manifest(config: &Blob, layers: &[Descriptor]) -> Manifest {
    Manifest {
        schema_version: 2,
        media_type: OCI_MANIFEST.to_owned(),
        artifact_type: None,
        config: config.descriptor(None),
        layers: layers.to_vec(),
        annotations: None,
    }
}

/// The config's architecture and `rootfs.diff_ids` (uncompressed layer digests).
fn config_facts(config: &[u8]) -> Result<(String, Vec<String>), String> {
    let v: Value = serde_json::from_slice(config).map_err(|e| format!("the image config is not JSON: {e}"))?;
    let arch = v["architecture"].as_str().unwrap_or("no architecture").to_owned();
    let ids = v["rootfs"]["diff_ids"].as_array().ok_or("the image config has no rootfs.diff_ids")?;
    let ids = ids.iter().map(|d| d.as_str().map(str::to_owned).ok_or("a diff_id is not a string")).collect::<Result<Vec<_>, _>>()?;
    Ok((arch, ids))
}

/// Reads the legacy archive unpacked at `dir` as the image for `arch`,
/// writing the compressed layers to `blobs`.
pub(super) fn read(dir: &Path, arch: Arch, blobs: &Path) -> Result<LocalImage, ImageError> {
    let bad = |why: String| ImageError::BadLayout { path: dir.to_owned(), why };
    let read_file = |rel: &Path| {
        let path = dir.join(rel);
        std::fs::read(&path).map_err(|source| ImageError::Read { path, source })
    };
    let e = entry(&read_file(Path::new(MANIFEST_JSON))?).map_err(bad)?;
    let config = Blob::new(OCI_CONFIG, read_file(&e.config)?);
    let (built_for, diff_ids) = config_facts(&config.data).map_err(bad)?;
    if built_for != arch.oci() {
        return Err(bad(format!("the image is for {built_for}, not {}", arch.oci())));
    }
    if diff_ids.len() != e.layers.len() {
        return Err(bad(format!("{MANIFEST_JSON} lists {} layers, the config {}", e.layers.len(), diff_ids.len())));
    }
    std::fs::create_dir_all(blobs).map_err(|source| ImageError::Write { path: blobs.to_owned(), source })?;
    let mut layers = Vec::new();
    for ((rel, diff_id), compressed) in e.layers.iter().zip(&diff_ids).zip(compress_all(dir, &e.layers, blobs)) {
        let (file, uncompressed) = compressed?;
        if uncompressed != *diff_id {
            return Err(bad(format!("layer {} has the digest {uncompressed}, the config says {diff_id}", rel.display())));
        }
        layers.push(file);
    }
    let descriptors: Vec<Descriptor> =
        layers.iter().map(|l| Descriptor { media_type: l.media_type.clone(), digest: l.digest.clone(), size: l.size, annotations: None }).collect();
    let manifest = manifest(&config, &descriptors);
    let manifest_bytes = crate::oci::manifest::manifest_bytes(&Document::Image(manifest.clone()));
    Ok(LocalImage { digest: Digest::of(&manifest_bytes), manifest, manifest_bytes, config, layers })
}

/// A compressed layer and the digest of its uncompressed bytes.
type Compressed = Result<(FileBlob, String), ImageError>;

/// Compresses every layer (`compress`), on as many threads as the machine
/// has cores (up to 4; the biggest layer sets the pace); results in order.
fn compress_all(dir: &Path, layers: &[PathBuf], blobs: &Path) -> Vec<Compressed> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 4);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Compressed>>> = layers.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.min(layers.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(rel) = layers.get(i) else { break };
                let r = compress(&dir.join(rel), blobs, i);
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            let missing = || Err(ImageError::Unexpected { step: "compressing a layer".into(), why: "a compressing thread stopped".into() });
            m.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_else(missing)
        })
        .collect()
}

/// Writes `layer` gzip-compressed into `blobs` (named by its digest);
/// returns it and the digest of the uncompressed bytes. The gzip header
/// carries no name or time, so the same layer compresses to the same blob.
/// `n` keeps the temporary files of concurrent calls apart.
fn compress(layer: &Path, blobs: &Path, n: usize) -> Compressed {
    let read_err = |source| ImageError::Read { path: layer.to_owned(), source };
    let tmp = blobs.join(format!(".compressing-{n}"));
    let write_err = |source| ImageError::Write { path: tmp.clone(), source };
    let mut input = std::fs::File::open(layer).map_err(read_err)?;
    let out = HashingWriter { inner: std::fs::File::create(&tmp).map_err(write_err)?, hash: Sha256::new(), size: 0 };
    let mut gz = flate2::GzBuilder::new().write(out, flate2::Compression::default());
    let mut plain = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = input.read(&mut buf).map_err(read_err)?;
        if n == 0 {
            break;
        }
        plain.update(&buf[..n]);
        gz.write_all(&buf[..n]).map_err(write_err)?;
    }
    let out = gz.finish().map_err(write_err)?;
    let hex = |h: Sha256| h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>();
    let (size, compressed) = (out.size, hex(out.hash));
    let digest =
        Digest::parse(&format!("sha256:{compressed}")).ok_or_else(|| ImageError::Unexpected { step: "compressing a layer".into(), why: "no digest".into() })?;
    let path = blobs.join(&compressed);
    std::fs::rename(&tmp, &path).map_err(|source| ImageError::Write { path: path.clone(), source })?;
    Ok((FileBlob { media_type: OCI_LAYER_GZIP.to_owned(), digest, size, path }, format!("sha256:{}", hex(plain))))
}

/// A writer that hashes and counts what passes through it.
struct HashingWriter {
    inner: std::fs::File,
    hash: Sha256,
    size: u64,
}

impl Write for HashingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests;
