//! Pushing artifacts so that no half-published tag set is ever visible.
//!
//! A [`PushPlan`] is a value: which artifact goes to which repository under
//! which tags. An index's manifests come before it in the plan (pushed by
//! digest, untagged), so the registry knows each one the index names. [`execute`] runs it in three phases over every item:
//!  1. every blob (skipping those the registry already has);
//!  2. every manifest, by digest (content is now complete but untagged);
//!  3. only then the tags, item by item, in the plan's order.
//!
//! A refusal in phase 1 or 2 moves no tag. Phase 3 can still fail between
//! two tag writes (a registry cannot tag atomically); the tag sets from
//! [`super::semver::tag_set`] push the exact version last, so a rerun sees
//! the version as unpublished and completes the set.

use super::client::RegistryApi;
use super::digest::Digest;
use super::error::OciError;
use super::manifest::{Artifact, FileBlob};

/// One artifact, its repository (path within the registry) and its tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushItem {
    pub repository: String,
    pub artifact: Artifact,
    /// Tags to point at the manifest, in order (may be empty: pushed by
    /// digest only).
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushPlan {
    pub items: Vec<PushItem>,
}

/// What was pushed for one item.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Pushed {
    pub repository: String,
    pub digest: Digest,
    pub tags: Vec<String>,
    /// Blobs uploaded (the others were already there).
    #[serde(rename = "blobsUploaded")]
    pub(crate) blobs_uploaded: usize,
}

/// Runs the plan against a registry (see the module comment for the order).
pub fn execute(api: &dyn RegistryApi, plan: &PushPlan) -> Result<Vec<Pushed>, OciError> {
    execute_with_files(api, plan, &[])
}

/// Like [`execute`], for items whose manifests also refer to blobs kept in
/// files: `files[i]` belongs to `plan.items[i]` (missing: none) and is
/// uploaded in phase 1, before the item's in-memory blobs.
pub(crate) fn execute_with_files(api: &dyn RegistryApi, plan: &PushPlan, files: &[Vec<FileBlob>]) -> Result<Vec<Pushed>, OciError> {
    let mut uploaded = vec![0usize; plan.items.len()];
    for (i, item) in plan.items.iter().enumerate() {
        for blob in files.get(i).map(Vec::as_slice).unwrap_or_default() {
            if !api.blob_exists(&item.repository, &blob.digest)? {
                tracing::info!(repository = %item.repository, digest = %blob.digest, size = blob.size, "uploading blob from file");
                api.push_blob_file(&item.repository, blob)?;
                uploaded[i] += 1;
            }
        }
        for blob in &item.artifact.blobs {
            if !api.blob_exists(&item.repository, &blob.digest)? {
                tracing::info!(repository = %item.repository, digest = %blob.digest, size = blob.data.len(), "uploading blob");
                api.push_blob(&item.repository, blob)?;
                uploaded[i] += 1;
            }
        }
    }
    for item in &plan.items {
        let media_type = item.artifact.manifest.media_type();
        tracing::info!(repository = %item.repository, digest = %item.artifact.digest, "pushing manifest by digest");
        api.push_manifest(&item.repository, item.artifact.digest.as_str(), &item.artifact.manifest_bytes, media_type)?;
    }
    let mut done = Vec::new();
    for (item, blobs_uploaded) in plan.items.iter().zip(uploaded) {
        for tag in &item.tags {
            tracing::info!(repository = %item.repository, %tag, "tagging");
            api.push_manifest(&item.repository, tag, &item.artifact.manifest_bytes, item.artifact.manifest.media_type()).map_err(|e| match e {
                OciError::Registry { registry, action, why } => {
                    OciError::Registry { registry, action: format!("{action} (tags pushed before it: {})", tags_so_far(&done, item, tag)), why }
                }
                other => other,
            })?;
        }
        done.push(Pushed { repository: item.repository.clone(), digest: item.artifact.digest.clone(), tags: item.tags.clone(), blobs_uploaded });
    }
    Ok(done)
}

fn tags_so_far(done: &[Pushed], item: &PushItem, failed: &str) -> String {
    let mut list: Vec<String> = done.iter().flat_map(|p| p.tags.iter().map(move |t| format!("{}:{t}", p.repository))).collect();
    list.extend(item.tags.iter().take_while(|t| *t != failed).map(|t| format!("{}:{t}", item.repository)));
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

#[cfg(test)]
mod tests;
