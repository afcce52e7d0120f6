//! What packaging adds to a template, as `devcontainer templates publish`
//! does: `type` (image / dockerfile / dockerCompose), `files` (every file,
//! relative), `fileCount`, `featureIds` (the registry resources of the
//! features its devcontainer.json uses), and `optionalPaths` entries
//! `dir/*` that hold a single file replaced by that file. The rewritten
//! `devcontainer-template.json` (4-space JSON) goes into the archive and
//! its compact form into the annotation.
//!
//! Optionally the feature reference in the template's devcontainer.json is
//! pointed at another registry (`--feature`), so templates published to
//! your registry use the feature published there.

use super::error::PublishError;
use super::json::{self, Json};
use super::source::Item;
use crate::oci::archive::FileEntry;
use crate::oci::reference::{check_repository, Registry};

/// The devcontainer.json locations a template may use.
const CONFIG_PATHS: &[&str] = &[".devcontainer.json", ".devcontainer/devcontainer.json"];

/// Where a template's feature reference is pointed: every feature key
/// whose last path component is `id` becomes `<to>:<its old tag>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureRewrite {
    pub id: String,
    /// A repository without a tag, e.g. `localhost:5000/ns/agent-sandbox`.
    pub to: String,
}

impl FeatureRewrite {
    /// Parses `--feature REGISTRY/PATH/ID` (no tag, no digest).
    pub fn parse(input: &str) -> Result<Self, PublishError> {
        let bad = || PublishError::BadFeatureRef { input: input.to_owned() };
        let (registry, path) = input.split_once('/').ok_or_else(bad)?;
        Registry::parse(registry).map_err(|_| bad())?;
        let last = path.rsplit('/').next().unwrap_or(path);
        if path.contains(':') || path.contains('@') || !path.contains('/') || check_repository(path).is_err() {
            return Err(bad());
        }
        Ok(FeatureRewrite { id: last.to_owned(), to: input.to_ascii_lowercase() })
    }
}

/// A feature reference split as the Dev Containers CLI does: the resource
/// (`registry/path`, lowercase) and its tag. `None` for local paths
/// (`./x`) and references the CLI would reject.
pub(crate) fn feature_resource(reference: &str) -> Option<(String, Option<String>)> {
    let r = reference.to_ascii_lowercase();
    if r.starts_with('.') {
        return None;
    }
    let (base, tag) = if let Some((b, _digest)) = r.split_once('@') {
        (b.to_owned(), None)
    } else {
        match r.rfind(':') {
            Some(i) if i > r.rfind('/').unwrap_or(0) => (r[..i].to_owned(), Some(r[i + 1..].to_owned())),
            _ => (r.clone(), None),
        }
    };
    let parts: Vec<&str> = base.split('/').collect();
    if parts.len() < 3 || check_repository(&parts[1..].join("/")).is_err() {
        return None;
    }
    Some((base, tag))
}

/// Applies the CLI's template additions (and an optional feature
/// rewrite) to `item`.
pub fn prepare(item: &mut Item, rewrite: Option<&FeatureRewrite>) -> Result<(), PublishError> {
    let config_path = CONFIG_PATHS.iter().copied().find(|p| item.file(p).is_some()).ok_or_else(|| PublishError::InvalidMetadata {
        path: item.dir.clone(),
        why: "a template needs .devcontainer/devcontainer.json (or .devcontainer.json)".into(),
    })?;
    let dir = item.dir.clone();
    let invalid = |why: String| PublishError::InvalidMetadata { path: dir.join(config_path), why };
    let mut text = String::from_utf8(item.file(config_path).map(|f| f.data.clone()).unwrap_or_default()).map_err(|_| invalid("not UTF-8".into()))?;
    let config = json::parse(&text).map_err(|why| PublishError::InvalidJson { path: dir.join(config_path), why })?;
    let keys: Vec<String> = config.get("features").and_then(Json::as_object).map(|f| f.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();

    if let Some(rw) = rewrite {
        let mut matched = false;
        for key in &keys {
            let Some((resource, tag)) = feature_resource(key) else { continue };
            if resource.rsplit('/').next() == Some(rw.id.as_str()) {
                let new = match &tag {
                    Some(t) => format!("{}:{t}", rw.to),
                    None => rw.to.clone(),
                };
                text = text.replace(&format!("\"{key}\""), &format!("\"{new}\""));
                matched = true;
            }
        }
        if !matched {
            tracing::warn!("--feature {}: template {} uses no `{}` feature; its devcontainer.json is left as it is", rw.to, item.id, rw.id);
        }
        let executable = item.file(config_path).is_some_and(|f| f.executable);
        item.put(FileEntry::new(config_path, text.clone(), executable));
    }
    let config = json::parse(&text).map_err(|why| PublishError::InvalidJson { path: dir.join(config_path), why })?;

    let kind = if config.get("image").is_some() {
        "image"
    } else if config.get("dockerFile").is_some() || config.get("build").and_then(|b| b.get("dockerfile")).is_some() {
        "dockerfile"
    } else if config.get("dockerComposeFile").is_some() {
        "dockerCompose"
    } else {
        return Err(invalid("it has none of \"image\", \"build.dockerfile\"/\"dockerFile\" or \"dockerComposeFile\"".into()));
    };
    let feature_ids: Vec<Json> = config
        .get("features")
        .and_then(Json::as_object)
        .map(|f| f.iter().filter_map(|(k, _)| feature_resource(k)).map(|(r, _)| Json::String(r)).collect())
        .unwrap_or_default();
    let files: Vec<String> = item.files.iter().map(|f| f.path.clone()).collect();

    let meta = &mut item.metadata;
    json::set(meta, "type", kind.into());
    json::set(meta, "files", Json::Array(files.iter().map(|f| Json::String(f.clone())).collect()));
    json::set(meta, "fileCount", Json::from(files.len()));
    json::set(meta, "featureIds", Json::Array(feature_ids));
    if let Some(Json::Array(paths)) = meta.get("optionalPaths").cloned() {
        let resolved = paths
            .into_iter()
            .map(|p| match p.as_str() {
                Some(s) if s.ends_with("/*") && s.len() >= 3 => {
                    let prefix = &s[..s.len() - 2];
                    let inside: Vec<&String> = files.iter().filter(|f| f.starts_with(prefix)).collect();
                    match inside.as_slice() {
                        [only] => Json::String((*only).clone()),
                        _ => p,
                    }
                }
                _ => p,
            })
            .collect();
        json::set(meta, "optionalPaths", Json::Array(resolved));
    }
    let pretty = json::pretty(&item.metadata);
    let file = item.kind.metadata_file();
    item.put(FileEntry::new(file, pretty, false));
    Ok(())
}

#[cfg(test)]
mod tests;
