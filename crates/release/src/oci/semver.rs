//! Semantic versions and the tag set rule for publishing a version.
//!
//! The rule is the Dev Containers CLI's: publishing version `M.m.p` pushes
//! the tag `M.m.p`, and moves `M`, `M.m` and `latest` only when the new
//! version is the highest release in that range (`M.x.x`, `M.m.x`, all)
//! among the tags already in the repository. A version that is already a
//! tag is not published again. One deliberate difference: a pre-release
//! (`1.2.3-rc.1`) gets only its own tag, never a floating one.

use super::error::OciError;
use std::fmt;

/// A semantic version (semver 2.0.0, parsed and ordered by the `semver`
/// crate). Build metadata is rejected: `+` is not allowed in a registry tag.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(semver::Version);

impl Version {
    pub fn parse(input: &str) -> Result<Self, OciError> {
        match semver::Version::parse(input) {
            Ok(v) if v.build.is_empty() => Ok(Version(v)),
            _ => Err(OciError::InvalidVersion { version: input.to_owned() }),
        }
    }

    pub fn major(&self) -> u64 {
        self.0.major
    }

    pub fn minor(&self) -> u64 {
        self.0.minor
    }

    fn is_prerelease(&self) -> bool {
        !self.0.pre.is_empty()
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What publishing a version does to a repository's tags.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "action")]
pub enum TagSet {
    /// The version is already a tag: nothing is pushed.
    AlreadyPublished,
    /// Push the manifest under these tags, in this order. The exact version
    /// comes last: it marks a complete publication, so a run interrupted
    /// while tagging is redone in full by the next run.
    Push { tags: Vec<String> },
}

/// The tag set for publishing `version` into a repository that already has
/// `existing` tags (any strings; those that are not versions are ignored).
pub(crate) fn tag_set(version: &Version, existing: &[String]) -> TagSet {
    let full = version.to_string();
    if existing.contains(&full) {
        return TagSet::AlreadyPublished;
    }
    if version.is_prerelease() {
        return TagSet::Push { tags: vec![full] };
    }
    let releases: Vec<Version> = existing.iter().filter_map(|t| Version::parse(t).ok()).filter(|v| !v.is_prerelease()).collect();
    let highest_in = |pred: &dyn Fn(&Version) -> bool| releases.iter().filter(|v| pred(v)).max().is_none_or(|max| version > max);
    let mut tags = Vec::new();
    if highest_in(&|v| v.major() == version.major()) {
        tags.push(version.major().to_string());
    }
    if highest_in(&|v| v.major() == version.major() && v.minor() == version.minor()) {
        tags.push(format!("{}.{}", version.major(), version.minor()));
    }
    if highest_in(&|_| true) {
        tags.push("latest".to_owned());
    }
    tags.push(full);
    TagSet::Push { tags }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }
    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }
    fn push(list: &[&str]) -> TagSet {
        TagSet::Push { tags: tags(list) }
    }

    #[test]
    fn versions_parse_strictly() {
        assert_eq!((v("1.2.3").major(), v("1.2.3").minor(), v("1.2.3").to_string()), (1, 2, "1.2.3".into()));
        assert_eq!(v("0.1.0-rc.1").to_string(), "0.1.0-rc.1");
        assert!(v("0.1.0-rc.1").is_prerelease());
        for bad in ["1.2", "1.2.3.4", "01.2.3", "1.2.3+b", "v1.2.3", "1.2.3-", "1.2.3-01", "latest", "", "1..3"] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn precedence_follows_semver() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.10.0",
            "2.0.0",
        ];
        for w in order.windows(2) {
            assert!(v(w[0]) < v(w[1]), "{} < {}", w[0], w[1]);
        }
    }

    #[test]
    fn first_publication_gets_every_tag() {
        assert_eq!(tag_set(&v("1.2.3"), &[]), push(&["1", "1.2", "latest", "1.2.3"]));
    }

    #[test]
    fn newer_patch_moves_everything() {
        let have = tags(&["1", "1.2", "1.2.3", "latest"]);
        assert_eq!(tag_set(&v("1.2.4"), &have), push(&["1", "1.2", "latest", "1.2.4"]));
    }

    #[test]
    fn backport_moves_only_its_own_range() {
        let have = tags(&["1", "1.2", "1.2.3", "2", "2.0", "2.0.0", "latest"]);
        assert_eq!(tag_set(&v("1.2.4"), &have), push(&["1", "1.2", "1.2.4"]));
        assert_eq!(tag_set(&v("1.1.9"), &have), push(&["1.1", "1.1.9"]));
    }

    #[test]
    fn already_published_version_is_left_alone() {
        assert_eq!(tag_set(&v("1.2.3"), &tags(&["1.2.3", "latest"])), TagSet::AlreadyPublished);
    }

    #[test]
    fn prereleases_get_only_their_own_tag_and_do_not_count() {
        assert_eq!(tag_set(&v("2.0.0-rc.1"), &tags(&["1.0.0"])), push(&["2.0.0-rc.1"]));
        assert_eq!(tag_set(&v("1.0.0"), &tags(&["1.0.1-rc.1", "junk", "1"])), push(&["1", "1.0", "latest", "1.0.0"]));
    }
}
