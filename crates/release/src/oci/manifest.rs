//! OCI image manifests and image indexes as values, and their exact bytes.
//!
//! A manifest is serialised compactly with its fields in the order the OCI
//! spec lists them (`schemaVersion`, `mediaType`, `artifactType`, `config`,
//! `layers`, `annotations`) and annotations in insertion order, so the bytes
//! (and so the digest) are a pure function of the value. That is also the
//! byte layout `JSON.stringify` gives the Dev Containers CLI's manifests.
//! An index (one manifest per platform, e.g. linux/amd64 and linux/arm64
//! under one tag) follows the same rules: `schemaVersion`, `mediaType`,
//! `manifests` (each `mediaType`, `digest`, `size`, `platform`), `annotations`.

use super::digest::Digest;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// `application/vnd.oci.image.manifest.v1+json`.
pub(crate) const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// `application/vnd.oci.image.index.v1+json`.
pub(crate) const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// The annotation naming a layer's file (`org.opencontainers.image.title`).
pub(crate) const TITLE: &str = "org.opencontainers.image.title";

/// Annotations, kept in the order they were added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations(pub Vec<(String, String)>);

impl Annotations {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces in place) one annotation.
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_owned(), value)),
        }
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Annotations {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A content descriptor: what a manifest says about a blob.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub(crate) media_type: String,
    pub digest: Digest,
    pub size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// An image manifest (schema version 2).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub(crate) schema_version: u32,
    pub(crate) media_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) artifact_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// The platform of one manifest in an index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Platform {
    pub architecture: String,
    pub os: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

/// One manifest an index lists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub(crate) media_type: String,
    pub digest: Digest,
    pub size: u64,
    pub platform: Platform,
}

/// An image index (schema version 2): one image per platform.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    pub(crate) schema_version: u32,
    pub(crate) media_type: String,
    pub manifests: Vec<IndexEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

impl Index {
    /// An OCI index of `manifests`, with `annotations` (left out when empty).
    pub fn new(manifests: Vec<IndexEntry>, annotations: Annotations) -> Index {
        Index { schema_version: 2, media_type: OCI_INDEX.to_owned(), manifests, annotations: (!annotations.is_empty()).then_some(annotations) }
    }
}

/// What a manifest reference names: an image manifest or an index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum Document {
    Image(Manifest),
    Index(Index),
}

impl Document {
    pub(crate) fn media_type(&self) -> &str {
        match self {
            Document::Image(m) => &m.media_type,
            Document::Index(i) => &i.media_type,
        }
    }

    /// The image manifest, when this is one.
    pub fn image(&self) -> Option<&Manifest> {
        match self {
            Document::Image(m) => Some(m),
            Document::Index(_) => None,
        }
    }
}

/// A blob to upload: its bytes and their digest.
#[derive(Clone, PartialEq, Eq)]
pub struct Blob {
    pub(crate) media_type: String,
    pub digest: Digest,
    pub data: Vec<u8>,
}

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Blob({}, {}, {} bytes)", self.media_type, self.digest, self.data.len())
    }
}

/// A blob whose bytes stay in a file (an image layer of hundreds of MB):
/// streamed to the registry, never held in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBlob {
    pub(crate) media_type: String,
    pub digest: Digest,
    pub size: u64,
    pub path: std::path::PathBuf,
}

impl Blob {
    pub fn new(media_type: &str, data: Vec<u8>) -> Self {
        Blob { media_type: media_type.to_owned(), digest: Digest::of(&data), data }
    }

    /// The descriptor of this blob, with optional annotations.
    pub fn descriptor(&self, annotations: Option<Annotations>) -> Descriptor {
        Descriptor { media_type: self.media_type.clone(), digest: self.digest.clone(), size: self.data.len() as u64, annotations }
    }
}

/// A complete artifact ready to push: the blobs its manifest refers to and
/// the manifest's exact bytes and digest. An index refers to manifests,
/// pushed as artifacts of their own before it, and carries no blobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub manifest: Document,
    pub manifest_bytes: Vec<u8>,
    pub digest: Digest,
    /// The config blob first, then the layers, in manifest order.
    pub blobs: Vec<Blob>,
}

impl Artifact {
    /// Builds the manifest for `config` and `layers` (each with its
    /// descriptor annotations) and seals it into bytes and a digest.
    pub fn new(config: Blob, layers: Vec<(Blob, Option<Annotations>)>, annotations: Option<Annotations>) -> Self {
        let manifest = Manifest {
            schema_version: 2,
            media_type: OCI_MANIFEST.to_owned(),
            artifact_type: None,
            config: config.descriptor(None),
            layers: layers.iter().map(|(b, a)| b.descriptor(a.clone())).collect(),
            annotations: annotations.filter(|a| !a.is_empty()),
        };
        let mut blobs = vec![config];
        blobs.extend(layers.into_iter().map(|(b, _)| b));
        Self::from_manifest(manifest, blobs)
    }

    /// Seals an already built manifest (e.g. one with an `artifactType`).
    fn from_manifest(manifest: Manifest, blobs: Vec<Blob>) -> Self {
        let document = Document::Image(manifest);
        let manifest_bytes = manifest_bytes(&document);
        Artifact { digest: Digest::of(&manifest_bytes), manifest: document, manifest_bytes, blobs }
    }

    /// Seals an index.
    pub(crate) fn from_index(index: Index) -> Self {
        let document = Document::Index(index);
        let manifest_bytes = manifest_bytes(&document);
        Artifact { digest: Digest::of(&manifest_bytes), manifest: document, manifest_bytes, blobs: Vec::new() }
    }
}

/// The exact bytes of a manifest or index: compact JSON, fields in spec order.
pub fn manifest_bytes(m: &Document) -> Vec<u8> {
    // Serialising plain strings, numbers and maps cannot fail.
    serde_json::to_vec(m).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_bytes_have_spec_field_order_and_insertion_ordered_annotations() {
        let config = Blob::new("application/x.config", b"{}".to_vec());
        let layer = Blob::new("application/x.layer", b"abc".to_vec());
        let a =
            Artifact::new(config, vec![(layer, Some(Annotations::new().with(TITLE, "f.tgz")))], Some(Annotations::new().with("z.key", "1").with("a.key", "2")));
        let text = String::from_utf8(a.manifest_bytes.clone()).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","#,
                r#""config":{"mediaType":"application/x.config","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"#,
                r#""layers":[{"mediaType":"application/x.layer","digest":"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","size":3,"annotations":{"org.opencontainers.image.title":"f.tgz"}}],"#,
                r#""annotations":{"z.key":"1","a.key":"2"}}"#
            )
        );
        assert_eq!(a.digest, Digest::of(text.as_bytes()));
        assert_eq!(a.blobs.len(), 2);
    }

    #[test]
    fn index_bytes_list_each_platform_in_order() {
        let d = |b: &[u8]| Digest::of(b);
        let entry = |arch: &str, b: &[u8], size| IndexEntry {
            media_type: OCI_MANIFEST.into(),
            digest: d(b),
            size,
            platform: Platform { architecture: arch.into(), os: "linux".into(), variant: None },
        };
        let index = Index::new(vec![entry("amd64", b"a", 10), entry("arm64", b"b", 11)], Annotations::new().with("org.opencontainers.image.version", "1.2.3"));
        let a = Artifact::from_index(index);
        let text = String::from_utf8(a.manifest_bytes.clone()).unwrap();
        assert_eq!(
            text,
            format!(
                concat!(
                    r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":["#,
                    r#"{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{}","size":10,"platform":{{"architecture":"amd64","os":"linux"}}}},"#,
                    r#"{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{}","size":11,"platform":{{"architecture":"arm64","os":"linux"}}}}],"#,
                    r#""annotations":{{"org.opencontainers.image.version":"1.2.3"}}}}"#
                ),
                d(b"a"),
                d(b"b")
            )
        );
        assert_eq!(a.digest, Digest::of(text.as_bytes()));
        assert_eq!(a.manifest.media_type(), OCI_INDEX);
        assert!(a.blobs.is_empty() && a.manifest.image().is_none());
        let bare = Artifact::from_index(Index::new(vec![], Annotations::new()));
        assert_eq!(
            String::from_utf8(bare.manifest_bytes).unwrap(),
            r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}"#
        );
    }

    #[test]
    fn empty_annotations_are_left_out() {
        let a = Artifact::new(Blob::new("c", vec![]), vec![], Some(Annotations::new()));
        assert!(!String::from_utf8(a.manifest_bytes).unwrap().contains("annotations"));
    }
}
