//! Reading the image an engine exported as an OCI image layout
//! (`index.json` + `blobs/sha256/...`): which manifest is the image, its
//! exact bytes, the config (small, read into memory, digest checked) and
//! the layers (left in their files and streamed when pushed; the registry
//! checks their digests). A nested index (docker's multi-platform export)
//! is resolved to the asked platform, and the config must name it.
//!
//! Not here: exporting (`engine::export_argv`) or pushing (`plan`, `exec`).

use super::error::ImageError;
use crate::arch::Arch;
use crate::oci::manifest::{Annotations, Blob, Descriptor, FileBlob, Manifest, OCI_MANIFEST};
use crate::oci::Digest;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub(super) const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// The image found in a layout, ready to push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalImage {
    pub manifest: Manifest,
    /// The manifest's exact bytes (pushed unchanged: same digest as local).
    pub manifest_bytes: Vec<u8>,
    pub digest: Digest,
    pub config: Blob,
    pub layers: Vec<FileBlob>,
}

impl LocalImage {
    /// Compressed size of the layers plus the config: what a pull downloads.
    pub fn size(&self) -> u64 {
        self.layers.iter().map(|l| l.size).sum::<u64>() + self.config.data.len() as u64
    }
}

struct Layout<'a> {
    dir: &'a Path,
}

impl Layout<'_> {
    fn bad(&self, why: impl Into<String>) -> ImageError {
        ImageError::BadLayout { path: self.dir.to_owned(), why: why.into() }
    }

    fn blob_path(&self, digest: &Digest) -> PathBuf {
        let (alg, hex) = digest.as_str().split_once(':').unwrap_or(("sha256", digest.as_str()));
        self.dir.join("blobs").join(alg).join(hex)
    }

    /// A small blob's bytes, checked against its digest.
    fn read_checked(&self, digest: &Digest) -> Result<Vec<u8>, ImageError> {
        let path = self.blob_path(digest);
        let data = std::fs::read(&path).map_err(|source| ImageError::Read { path, source })?;
        if Digest::of(&data) != *digest {
            return Err(self.bad(format!("blob {digest} does not match its digest")));
        }
        Ok(data)
    }

    fn json(&self, bytes: &[u8], what: &str) -> Result<Value, ImageError> {
        serde_json::from_slice(bytes).map_err(|e| self.bad(format!("{what} is not JSON: {e}")))
    }

    fn descriptor(&self, v: &Value) -> Result<Descriptor, ImageError> {
        let media_type = v["mediaType"].as_str().ok_or_else(|| self.bad("a descriptor has no mediaType"))?.to_owned();
        let digest = v["digest"].as_str().and_then(Digest::parse).ok_or_else(|| self.bad("a descriptor has no sha256 digest"))?;
        let size = v["size"].as_u64().ok_or_else(|| self.bad("a descriptor has no size"))?;
        let annotations =
            v["annotations"].as_object().map(|m| Annotations(m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect()));
        Ok(Descriptor { media_type, digest, size, annotations })
    }

    /// The image manifest among an index's entries: the only one, or the
    /// one for `arch` on linux (nested indexes followed, attestations skipped).
    fn pick(&self, index: &Value, arch: Arch, depth: u8) -> Result<Descriptor, ImageError> {
        let entries = index["manifests"].as_array().ok_or_else(|| self.bad("the index lists no manifests"))?;
        let platform_ok = |e: &Value| {
            let p = &e["platform"];
            p.is_null() || (p["os"] == "linux" && p["architecture"] == arch.oci())
        };
        let candidates: Vec<&Value> = entries.iter().filter(|e| platform_ok(e)).collect();
        let chosen = match candidates.as_slice() {
            [one] => *one,
            [] => return Err(self.bad(format!("no manifest for {}", arch.platform()))),
            many => {
                let with_platform: Vec<&&Value> = many.iter().filter(|e| !e["platform"].is_null()).collect();
                match with_platform.as_slice() {
                    [one] => **one,
                    _ => return Err(self.bad(format!("{} manifests and no way to tell which is the image; export one image only", many.len()))),
                }
            }
        };
        let d = self.descriptor(chosen)?;
        if d.media_type == OCI_INDEX || d.media_type == DOCKER_LIST {
            if depth > 2 {
                return Err(self.bad("indexes nested too deep"));
            }
            let nested = self.read_checked(&d.digest)?;
            let nested = self.json(&nested, "a nested index")?;
            return self.pick(&nested, arch, depth + 1);
        }
        Ok(d)
    }
}

/// Reads the image for `arch` from the layout at `dir`.
pub(super) fn read(dir: &Path, arch: Arch) -> Result<LocalImage, ImageError> {
    let l = Layout { dir };
    let index_path = dir.join("index.json");
    let index = std::fs::read(&index_path).map_err(|source| ImageError::Read { path: index_path, source })?;
    let index = l.json(&index, "index.json")?;
    let desc = l.pick(&index, arch, 0)?;
    if desc.media_type != OCI_MANIFEST && desc.media_type != DOCKER_MANIFEST {
        return Err(l.bad(format!("the image manifest has media type {}", desc.media_type)));
    }
    let manifest_bytes = l.read_checked(&desc.digest)?;
    let m = l.json(&manifest_bytes, "the image manifest")?;
    let config_desc = l.descriptor(&m["config"])?;
    let config = Blob { media_type: config_desc.media_type.clone(), digest: config_desc.digest.clone(), data: l.read_checked(&config_desc.digest)? };
    let built_for = l.json(&config.data, "the image config")?["architecture"].as_str().unwrap_or("no architecture").to_owned();
    if built_for != arch.oci() {
        return Err(l.bad(format!("the image is for {built_for}, not {}", arch.oci())));
    }
    let mut layers = Vec::new();
    let mut layer_descs = Vec::new();
    for v in m["layers"].as_array().ok_or_else(|| l.bad("the manifest lists no layers"))? {
        let d = l.descriptor(v)?;
        let path = l.blob_path(&d.digest);
        let len = std::fs::metadata(&path).map_err(|source| ImageError::Read { path: path.clone(), source })?.len();
        if len != d.size {
            return Err(l.bad(format!("layer {} has {len} bytes, the manifest says {}", d.digest, d.size)));
        }
        layers.push(FileBlob { media_type: d.media_type.clone(), digest: d.digest.clone(), size: d.size, path });
        layer_descs.push(d);
    }
    let manifest = Manifest {
        schema_version: m["schemaVersion"].as_u64().unwrap_or(2) as u32,
        media_type: desc.media_type.clone(),
        artifact_type: m["artifactType"].as_str().map(str::to_owned),
        config: config_desc,
        layers: layer_descs,
        annotations: m["annotations"].as_object().map(|o| Annotations(o.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())),
    };
    Ok(LocalImage { manifest, manifest_bytes, digest: desc.digest, config, layers })
}

#[cfg(test)]
mod tests;
