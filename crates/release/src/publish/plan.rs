//! The publish plan: a package, the target and the tags already in the
//! registry → exactly what will be pushed (a `PushPlan`) and the report
//! `--json` prints. Pure; tested as whole values.

use super::package::{collection_artifact, item_artifact, Package};
use crate::oci::digest::Digest;
use crate::oci::push::{PushItem, PushPlan};
use crate::oci::reference::check_repository;
use crate::oci::semver::{tag_set, TagSet};
use crate::oci::{OciError, Registry};
use std::collections::BTreeMap;

/// Where a collection goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub registry: Registry,
    /// The collection's path, e.g. `my-org/agent-sandbox`; items go below it.
    pub namespace: String,
}

impl Target {
    pub fn new(registry: Registry, namespace: &str) -> Result<Self, OciError> {
        let namespace = namespace.trim_matches('/').to_owned();
        check_repository(&namespace)?;
        Ok(Target { registry, namespace })
    }

    pub fn repository(&self, id: &str) -> String {
        format!("{}/{id}", self.namespace)
    }
}

/// One item in the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemReport {
    pub id: String,
    pub version: String,
    /// `REGISTRY/NAMESPACE/ID`.
    pub reference: String,
    pub digest: Digest,
    /// Tags pushed (empty when the version was already published).
    pub tags: Vec<String>,
    pub already_published: bool,
}

/// What a publish run pushes (or, with `--dry-run`, would push).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub kind: &'static str,
    pub registry: String,
    pub namespace: String,
    pub items: Vec<ItemReport>,
    pub collection: ItemReport,
    pub dry_run: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PublishPlan {
    pub push: PushPlan,
    pub report: Report,
}

/// The repositories whose tags the plan needs: one per item.
pub(super) fn repositories(pkg: &Package, target: &Target) -> Vec<String> {
    pkg.items.iter().map(|p| target.repository(&p.id)).collect()
}

/// Builds the plan from the package and the existing tags per repository
/// (a repository missing from `existing` has no tags). An already
/// published version is not pushed again; the collection is always pushed
/// as `latest` (its content is the current metadata).
pub(super) fn plan(pkg: &Package, target: &Target, existing: &BTreeMap<String, Vec<String>>) -> PublishPlan {
    let mut items = Vec::new();
    let mut reports = Vec::new();
    for p in &pkg.items {
        let repository = target.repository(&p.id);
        let artifact = item_artifact(pkg.kind, p, &target.registry);
        let have = existing.get(&repository).map(Vec::as_slice).unwrap_or(&[]);
        let (tags, already) = match tag_set(&p.version, have) {
            TagSet::AlreadyPublished => (Vec::new(), true),
            TagSet::Push { tags } => (tags, false),
        };
        reports.push(ItemReport {
            id: p.id.clone(),
            version: p.version.to_string(),
            reference: format!("{}/{repository}", target.registry),
            digest: artifact.digest.clone(),
            tags: tags.clone(),
            already_published: already,
        });
        if !already {
            items.push(PushItem { repository, artifact, tags });
        }
    }
    let collection = collection_artifact(pkg, &target.registry);
    let collection_report = ItemReport {
        id: target.namespace.rsplit('/').next().unwrap_or(&target.namespace).to_owned(),
        version: String::new(),
        reference: format!("{}/{}", target.registry, target.namespace),
        digest: collection.digest.clone(),
        tags: vec!["latest".into()],
        already_published: false,
    };
    items.push(PushItem { repository: target.namespace.clone(), artifact: collection, tags: vec!["latest".into()] });
    PublishPlan {
        push: PushPlan { items },
        report: Report {
            kind: pkg.kind.word(),
            registry: target.registry.to_string(),
            namespace: target.namespace.clone(),
            items: reports,
            collection: collection_report,
            dry_run: false,
        },
    }
}

#[cfg(test)]
mod tests;
