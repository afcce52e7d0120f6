//! Prepared items → the OCI artifacts the Dev Containers CLI publishes.
//!
//! Per feature/template: config `{}` as `application/vnd.devcontainers`,
//! one layer `application/vnd.devcontainers.layer.v1+tar` (a plain tar
//! named `devcontainer-<kind>-<id>.tgz` in its title annotation), and the
//! metadata JSON in the `dev.containers.metadata` manifest annotation. Per
//! collection: `devcontainer-collection.json` as one
//! `application/vnd.devcontainers.collection.layer.v1+json` layer. On
//! ghcr.io both also get `com.github.package.type`, as the CLI does.
//! Pure: the same items give the same bytes and digests.

use super::error::PublishError;
use super::json::{self, Json};
use super::source::{Item, Kind};
use crate::oci::archive;
use crate::oci::manifest::{Annotations, Artifact, Blob, TITLE};
use crate::oci::Registry;

const CONFIG_MEDIA_TYPE: &str = "application/vnd.devcontainers";
const LAYER_MEDIA_TYPE: &str = "application/vnd.devcontainers.layer.v1+tar";
const COLLECTION_MEDIA_TYPE: &str = "application/vnd.devcontainers.collection.layer.v1+json";
const METADATA_ANNOTATION: &str = "dev.containers.metadata";
const PACKAGE_TYPE_ANNOTATION: &str = "com.github.package.type";
pub(crate) const COLLECTION_FILE: &str = "devcontainer-collection.json";
/// `sourceInformation.source` in the collection file.
const SOURCE_NAME: &str = "agent-sandbox";
/// The tar mtime when SOURCE_DATE_EPOCH is not set (2024-01-01T00:00:00Z).
pub(crate) const DEFAULT_MTIME: u64 = 1_704_067_200;

/// One packaged feature or template.
#[derive(Debug, Clone, PartialEq)]
pub struct Packaged {
    pub id: String,
    pub version: crate::oci::semver::Version,
    pub metadata: Json,
    pub(crate) archive_name: String,
    pub archive: Vec<u8>,
    /// The files in the archive (the staged folder).
    pub files: Vec<archive::FileEntry>,
}

/// A packaged collection.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    pub kind: Kind,
    pub items: Vec<Packaged>,
    /// `devcontainer-collection.json`, pretty-printed as the CLI writes it.
    pub collection: String,
}

/// Archives prepared items and builds the collection file.
pub fn package(kind: Kind, items: &[Item], mtime: u64) -> Result<Package, PublishError> {
    let mut out = Vec::new();
    for item in items {
        let archive = archive::tar(&item.files, mtime).map_err(|source| PublishError::Read { path: item.dir.clone(), source })?;
        out.push(Packaged {
            id: item.id.clone(),
            version: item.version.clone(),
            metadata: item.metadata.clone(),
            archive_name: kind.archive_name(&item.id),
            archive,
            files: item.files.clone(),
        });
    }
    let collection = Json::Object(serde_json::Map::from_iter([
        ("sourceInformation".into(), serde_json::json!({ "source": SOURCE_NAME })),
        (kind.collection_key().into(), Json::Array(out.iter().map(|p| p.metadata.clone()).collect())),
    ]));
    Ok(Package { kind, items: out, collection: json::pretty(&collection) })
}

fn config_blob() -> Blob {
    Blob::new(CONFIG_MEDIA_TYPE, b"{}".to_vec())
}

fn on_ghcr(registry: &Registry) -> bool {
    registry.to_string() == "ghcr.io"
}

/// The artifact of one feature or template.
pub(crate) fn item_artifact(kind: Kind, p: &Packaged, registry: &Registry) -> Artifact {
    let layer = Blob::new(LAYER_MEDIA_TYPE, p.archive.clone());
    let mut annotations = Annotations::new().with(METADATA_ANNOTATION, json::compact(&p.metadata));
    if on_ghcr(registry) {
        annotations = annotations.with(PACKAGE_TYPE_ANNOTATION, format!("devcontainer_{}", kind.word()));
    }
    Artifact::new(config_blob(), vec![(layer, Some(Annotations::new().with(TITLE, p.archive_name.clone())))], Some(annotations))
}

/// The collection artifact (`<namespace>:latest`).
pub(crate) fn collection_artifact(pkg: &Package, registry: &Registry) -> Artifact {
    let layer = Blob::new(COLLECTION_MEDIA_TYPE, pkg.collection.as_bytes().to_vec());
    let annotations = on_ghcr(registry).then(|| Annotations::new().with(PACKAGE_TYPE_ANNOTATION, "devcontainer_collection"));
    Artifact::new(config_blob(), vec![(layer, Some(Annotations::new().with(TITLE, COLLECTION_FILE)))], annotations)
}
