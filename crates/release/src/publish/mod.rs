//! Packaging and publishing the devcontainer feature and templates as OCI
//! artifacts in exactly the format the Dev Containers CLI publishes.
//!
//! Flow (each step a value, effects at the ends):
//!  1. [`source`]: read and check a collection folder → `Item`s;
//!  2. [`feature`] / [`template`]: the additions packaging makes (bundled
//!     static binaries; template `files`/`type`/`featureIds`...);
//!  3. [`package`]: reproducible archives, the collection file, artifacts;
//!  4. [`plan`]: with the registry's existing tags → a push plan + report;
//!  5. [`publish`] here: list tags, run the plan (`crate::oci::push`).
//!
//! [`write_package`] writes what `devcontainer <kind>s package` writes (the
//! archives and `devcontainer-collection.json`) plus the staged folders
//! (`src/<id>/`, the archive's exact content) for local use or for
//! `devcontainer <kind>s publish`.

mod error;
pub mod feature;
mod json;
pub mod package;
mod plan;
mod source;
pub mod template;

pub use error::PublishError;
pub use package::{Package, Packaged};
pub use plan::{Report, Target};
pub use source::Kind;

use crate::oci::digest::Digest;
use crate::oci::{push, RegistryApi};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Reads, checks and prepares the features at `source`, bundling `binaries`.
pub fn prepare_features(source: &Path, binaries: &[feature::Binary]) -> Result<Vec<source::Item>, PublishError> {
    let mut items = source::read_collection(source, Kind::Feature)?;
    for item in &mut items {
        feature::check_project_version(item)?;
        feature::prepare(item, binaries);
    }
    Ok(items)
}

/// Reads, checks and prepares the templates at `source`.
pub fn prepare_templates(source: &Path, rewrite: Option<&template::FeatureRewrite>) -> Result<Vec<source::Item>, PublishError> {
    let mut items = source::read_collection(source, Kind::Template)?;
    for item in &mut items {
        template::prepare(item, rewrite)?;
    }
    Ok(items)
}

/// The archive's mtime: `SOURCE_DATE_EPOCH` when set (reproducible-builds
/// convention), else a fixed date.
pub fn mtime_from(source_date_epoch: Option<&str>) -> u64 {
    source_date_epoch.and_then(|s| s.trim().parse().ok()).unwrap_or(package::DEFAULT_MTIME)
}

/// What `package` wrote, for `--json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageReport {
    pub kind: &'static str,
    pub output: PathBuf,
    pub items: Vec<PackagedReport>,
    pub collection: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackagedReport {
    pub id: String,
    pub version: String,
    pub archive: PathBuf,
    /// The archive's digest: the layer digest it will have in a registry.
    pub digest: Digest,
    pub size: u64,
    /// The staged folder (the archive's content).
    pub folder: PathBuf,
}

/// Writes the package into `output`: `devcontainer-<kind>-<id>.tgz`,
/// `devcontainer-collection.json` and `src/<id>/`. An existing non-empty
/// `output` is refused unless `force`, which replaces only those paths.
pub fn write_package(pkg: &Package, output: &Path, force: bool) -> Result<PackageReport, PublishError> {
    let werr = |p: &Path| {
        let p = p.to_owned();
        move |source| PublishError::Write { path: p, source }
    };
    let non_empty = std::fs::read_dir(output).map(|mut d| d.next().is_some()).unwrap_or(false);
    if non_empty && !force {
        return Err(PublishError::OutputNotEmpty { path: output.to_owned() });
    }
    std::fs::create_dir_all(output).map_err(werr(output))?;
    let mut items = Vec::new();
    for p in &pkg.items {
        let archive = output.join(&p.archive_name);
        std::fs::write(&archive, &p.archive).map_err(werr(&archive))?;
        let folder = output.join("src").join(&p.id);
        if folder.exists() {
            std::fs::remove_dir_all(&folder).map_err(werr(&folder))?;
        }
        for f in &p.files {
            let path = folder.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(werr(parent))?;
            }
            std::fs::write(&path, &f.data).map_err(werr(&path))?;
            let mode = if f.executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).map_err(werr(&path))?;
        }
        items.push(PackagedReport {
            id: p.id.clone(),
            version: p.version.to_string(),
            archive,
            digest: Digest::of(&p.archive),
            size: p.archive.len() as u64,
            folder,
        });
    }
    let collection = output.join(package::COLLECTION_FILE);
    std::fs::write(&collection, &pkg.collection).map_err(werr(&collection))?;
    Ok(PackageReport { kind: pkg.kind.word(), output: output.to_owned(), items, collection })
}

/// Publishes the package to `target` through `api`: reads the existing
/// tags, plans, and (unless `dry_run`) pushes — blobs and manifests by
/// digest first, then the tags.
pub fn publish(pkg: &Package, target: &Target, api: &dyn RegistryApi, dry_run: bool) -> Result<Report, PublishError> {
    let mut existing = BTreeMap::new();
    for repo in plan::repositories(pkg, target) {
        let tags = api.list_tags(&repo)?;
        existing.insert(repo, tags);
    }
    let plan = plan::plan(pkg, target, &existing);
    let mut report = plan.report;
    report.dry_run = dry_run;
    if !dry_run {
        push::execute(api, &plan.push)?;
    }
    Ok(report)
}
