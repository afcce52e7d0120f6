//! Reading a feature or template collection from disk into values.
//!
//! A collection is laid out as `devcontainer features publish` expects:
//! `src/<id>/devcontainer-<kind>.json` plus the item's files; a folder that
//! itself holds `devcontainer-<kind>.json` is a collection of one. Only
//! regular files and folders are read (a link or device is an error, not
//! silently followed). Validation (ids, versions, required fields) happens
//! here, so everything after works on checked values.

use super::error::PublishError;
use super::json::{self, Json};
use crate::oci::archive::FileEntry;
use crate::oci::reference::check_repository;
use crate::oci::semver::Version;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Features or templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Feature,
    Template,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Feature => "feature",
            Kind::Template => "template",
        }
    }
    /// `devcontainer-feature.json` / `devcontainer-template.json`.
    pub(crate) fn metadata_file(self) -> String {
        format!("devcontainer-{}.json", self.word())
    }
    /// The archive's file name, as the CLI names it (a plain tar, despite `.tgz`).
    pub(crate) fn archive_name(self, id: &str) -> String {
        format!("devcontainer-{}-{id}.tgz", self.word())
    }
    /// The collection's list key: `features` / `templates`.
    pub(crate) fn collection_key(self) -> &'static str {
        match self {
            Kind::Feature => "features",
            Kind::Template => "templates",
        }
    }
}

/// One checked feature or template: its metadata and every file under its folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub kind: Kind,
    /// The folder it was read from (for messages).
    pub dir: PathBuf,
    pub id: String,
    pub version: Version,
    /// The parsed `devcontainer-<kind>.json`, key order kept.
    pub metadata: Json,
    /// Paths relative to the item folder.
    pub files: Vec<FileEntry>,
}

impl Item {
    pub(crate) fn metadata_path(&self) -> PathBuf {
        self.dir.join(self.kind.metadata_file())
    }

    pub fn file(&self, path: &str) -> Option<&FileEntry> {
        self.files.iter().find(|f| f.path == path)
    }

    /// Replaces (or adds) a file.
    pub fn put(&mut self, entry: FileEntry) {
        match self.files.iter_mut().find(|f| f.path == entry.path) {
            Some(slot) => *slot = entry,
            None => {
                self.files.push(entry);
                self.files.sort_by(|a, b| a.path.cmp(&b.path));
            }
        }
    }
}

/// Reads the collection (or single item) at `path`.
pub(super) fn read_collection(path: &Path, kind: Kind) -> Result<Vec<Item>, PublishError> {
    let read_err = |p: &Path| {
        let p = p.to_owned();
        move |source| PublishError::Read { path: p, source }
    };
    if path.join(kind.metadata_file()).is_file() {
        return Ok(vec![read_item(path, kind, None)?]);
    }
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(path).map_err(read_err(path))? {
        let entry = entry.map_err(read_err(path))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let p = entry.path();
        if name.starts_with('.') || !p.is_dir() {
            continue;
        }
        if p.join(kind.metadata_file()).is_file() {
            dirs.push((name, p));
        } else {
            tracing::warn!("{} has no {}; skipped", p.display(), kind.metadata_file());
        }
    }
    dirs.sort();
    if dirs.is_empty() {
        return Err(PublishError::NothingToPackage { path: path.to_owned(), kind: kind.word() });
    }
    dirs.into_iter().map(|(name, p)| read_item(&p, kind, Some(&name))).collect()
}

/// Reads and checks one item folder. `dir_name` is set in collection mode,
/// where the folder name must equal the id.
fn read_item(dir: &Path, kind: Kind, dir_name: Option<&str>) -> Result<Item, PublishError> {
    let meta_path = dir.join(kind.metadata_file());
    let mut files = Vec::new();
    read_tree(dir, dir, kind, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let text = files.iter().find(|f| f.path == kind.metadata_file()).map(|f| String::from_utf8_lossy(&f.data).into_owned()).unwrap_or_default();
    let metadata = json::parse(&text).map_err(|why| PublishError::InvalidJson { path: meta_path.clone(), why })?;
    let invalid = |why: String| PublishError::InvalidMetadata { path: meta_path.clone(), why };
    if metadata.as_object().is_none() {
        return Err(invalid("the file must hold a JSON object".into()));
    }
    let field = |name: &str| -> Result<String, PublishError> {
        match metadata.get(name) {
            Some(Json::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(_) => Err(invalid(format!("\"{name}\" must be a non-empty string"))),
            None => Err(invalid(format!("\"{name}\" is missing; a {} needs \"id\", \"version\" and \"name\"", kind.word()))),
        }
    };
    let id = field("id")?;
    field("name")?;
    let version = field("version")?;
    if check_repository(&id).is_err() || id.contains('/') {
        return Err(invalid(format!("the id `{id}` must be lowercase letters, digits and `.`, `_`, `-` between them (it becomes a repository name)")));
    }
    if let Some(name) = dir_name {
        if name != id {
            return Err(invalid(format!("the id `{id}` differs from its folder name `{name}`; rename one so they match")));
        }
    }
    let version = Version::parse(&version).map_err(|e| invalid(e.to_string()))?;
    if kind == Kind::Feature && !files.iter().any(|f| f.path == "install.sh") {
        return Err(invalid(format!("a feature needs an install.sh beside it (in {})", dir.display())));
    }
    Ok(Item { kind, dir: dir.to_owned(), id, version, metadata, files })
}

fn read_tree(root: &Path, dir: &Path, kind: Kind, out: &mut Vec<FileEntry>) -> Result<(), PublishError> {
    let read_err = |p: &Path| {
        let p = p.to_owned();
        move |source| PublishError::Read { path: p, source }
    };
    for entry in std::fs::read_dir(dir).map_err(read_err(dir))? {
        let entry = entry.map_err(read_err(dir))?;
        let p = entry.path();
        let meta = std::fs::symlink_metadata(&p).map_err(read_err(&p))?;
        if meta.is_dir() {
            read_tree(root, &p, kind, out)?;
        } else if meta.is_file() {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let rel = rel.to_str().ok_or_else(|| PublishError::InvalidMetadata { path: p.clone(), why: "the file name is not UTF-8; rename it".into() })?;
            let data = std::fs::read(&p).map_err(read_err(&p))?;
            out.push(FileEntry::new(rel, data, meta.permissions().mode() & 0o111 != 0));
        } else {
            return Err(PublishError::NotRegular { path: p, kind: kind.word() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
