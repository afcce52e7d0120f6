//! The image's labels: the OCI `org.opencontainers.image.*` annotations
//! (title, description, licenses, source, version, revision, created) and
//! `devcontainer.metadata`, the settings the Dev Containers CLI reads from
//! an image. Pure; `image/Containerfile` carries the same static values
//! (a test below keeps the two equal).
//!
//! devcontainer.metadata cannot carry `runArgs` or devices: the tun device
//! stays a run option (docs/image.md), and the `postStartCommand` warns at
//! container start when it is missing. `securityOpt` is allowed there and
//! asks for the unmasked /proc sessions need; `entrypoint` runs at start
//! as root and makes the container's tun device usable by the remote user.

use crate::env_vars;
use serde_json::json;

pub(super) const TITLE: &str = "org.opencontainers.image.title";
const DESCRIPTION: &str = "org.opencontainers.image.description";
const LICENSES: &str = "org.opencontainers.image.licenses";
pub(super) const SOURCE: &str = "org.opencontainers.image.source";
const VERSION: &str = "org.opencontainers.image.version";
const REVISION: &str = "org.opencontainers.image.revision";
const CREATED: &str = "org.opencontainers.image.created";
pub(super) const DEVCONTAINER_METADATA: &str = "devcontainer.metadata";

const TITLE_VALUE: &str = "agent-sandbox";
const DESCRIPTION_VALUE: &str = "Debian 13 with Claude Code, Codex and Pi running inside the agent-sandbox bubblewrap sandbox and egress jail";
const LICENSES_VALUE: &str = "Apache-2.0";

/// The image's non-root user (uid 1000), the devcontainer `remoteUser`.
pub(super) const REMOTE_USER: &str = "vscode";
/// The project venv location (the non-root user's), appended to that
/// user's PATH after the system directories.
pub(super) const VENV: &str = "/opt/venv";
/// The container-start check (`postStartCommand`): doctor's live checks,
/// warnings only.
const START_CHECK: &str = "/usr/local/lib/agent-sandbox/bin/agent-sandbox doctor --start-check";
/// The image's entrypoint (root at start: /dev/net/tun usable by the user).
const ENTRYPOINT: &str = "/usr/local/share/agent-sandbox-image/entrypoint.sh";

/// What the dynamic labels say.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Provenance {
    /// The project's repository URL (Cargo.toml `repository`).
    pub source: String,
    /// The version (Cargo.toml).
    pub version: String,
    /// The source revision (git commit, `-dirty` when the tree had changes).
    pub revision: String,
    /// RFC 3339 build time (SOURCE_DATE_EPOCH when set).
    pub created: String,
}

/// What the image (like the feature) asks the engine for, for sessions to
/// start (docs/feature.md explains each): `/proc` without masked paths
/// (each session mounts its own), no container seccomp profile (Docker's
/// default refuses user namespaces to a container without CAP_SYS_ADMIN;
/// sessions load their own filter), no AppArmor profile (Docker's
/// `docker-default` refuses bubblewrap's mounts). Docker and podman both
/// accept these spellings.
const SECURITY_OPT: [&str; 3] = ["systempaths=unconfined", "seccomp=unconfined", "apparmor=unconfined"];

/// `devcontainer.metadata`: a JSON array with one entry.
fn devcontainer_metadata() -> serde_json::Value {
    json!([{
        "remoteUser": REMOTE_USER,
        "containerEnv": { (env_vars::UV_PROJECT_ENVIRONMENT): VENV },
        // The venv on the remote user's PATH only, after the system
        // directories (root's PATH never names a directory a user can write).
        "remoteEnv": { (env_vars::PATH): format!("${{containerEnv:PATH}}:{VENV}/bin") },
        "securityOpt": SECURITY_OPT,
        "entrypoint": ENTRYPOINT,
        "postStartCommand": START_CHECK,
    }])
}

/// Labels the Containerfile sets itself and the build must not pass again:
/// engines that turn `--label` into Containerfile text (buildah, podman)
/// substitute variables in it, and devcontainer.metadata holds the Dev
/// Containers CLI's own `${containerEnv:PATH}`. The build still checks
/// that the image carries it (a unit test keeps both equal).
pub(super) const FROM_CONTAINERFILE: &[&str] = &[DEVCONTAINER_METADATA];

/// Every label the image gets, in a fixed order.
pub(super) fn labels(p: &Provenance) -> Vec<(String, String)> {
    [
        (TITLE, TITLE_VALUE.to_owned()),
        (DESCRIPTION, DESCRIPTION_VALUE.to_owned()),
        (LICENSES, LICENSES_VALUE.to_owned()),
        (SOURCE, p.source.clone()),
        (VERSION, p.version.clone()),
        (REVISION, p.revision.clone()),
        (CREATED, p.created.clone()),
        (DEVCONTAINER_METADATA, devcontainer_metadata().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The annotations of a multi-platform image's index: the OCI labels every
/// variant carries (not `devcontainer.metadata`, which tools read from the
/// image config), so registries show them for the tag itself.
pub(super) fn index_annotations(p: &Provenance) -> crate::oci::Annotations {
    labels(p).into_iter().filter(|(k, _)| k != DEVCONTAINER_METADATA).fold(crate::oci::Annotations::new(), |a, (k, v)| a.with(&k, v))
}

/// `seconds` since the epoch as RFC 3339 UTC (`2026-11-29T10:00:00Z`).
pub(super) fn rfc3339(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let rem = seconds % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PID 1 of the image's containers (Debian's `tini`): passes signals on
    /// and reaps orphans.
    const INIT: &str = "/usr/bin/tini";

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_863_601), "2026-11-28T11:00:01Z");
        assert_eq!(rfc3339(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn labels_whole_value() {
        let p = Provenance { source: "https://x/y".into(), version: "1.2.3".into(), revision: "abc".into(), created: "2026-01-01T00:00:00Z".into() };
        let got = labels(&p);
        let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, [TITLE, DESCRIPTION, LICENSES, SOURCE, VERSION, REVISION, CREATED, DEVCONTAINER_METADATA]);
        assert_eq!(got[3].1, "https://x/y");
        assert_eq!(got[4].1, "1.2.3");
        assert_eq!(
            got[7].1,
            r#"[{"remoteUser":"vscode","containerEnv":{"UV_PROJECT_ENVIRONMENT":"/opt/venv"},"remoteEnv":{"PATH":"${containerEnv:PATH}:/opt/venv/bin"},"securityOpt":["systempaths=unconfined","seccomp=unconfined","apparmor=unconfined"],"entrypoint":"/usr/local/share/agent-sandbox-image/entrypoint.sh","postStartCommand":"/usr/local/lib/agent-sandbox/bin/agent-sandbox doctor --start-check"}]"#
        );
    }

    #[test]
    fn the_feature_asks_for_the_same_security_options() {
        let feature: serde_json::Value = serde_json::from_str(include_str!("../../../../feature/src/agent-sandbox/devcontainer-feature.json")).unwrap();
        assert_eq!(feature["securityOpt"], serde_json::json!(SECURITY_OPT));
        for field in ["privileged", "capAdd"] {
            assert!(feature.get(field).is_none(), "the feature must not ask for {field}: {feature:#}");
        }
    }

    #[test]
    fn the_index_carries_the_oci_labels_as_annotations() {
        let p = Provenance { source: "https://x/y".into(), version: "1.2.3".into(), revision: "abc".into(), created: "2026-01-01T00:00:00Z".into() };
        let a = index_annotations(&p);
        let keys: Vec<&str> = a.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, [TITLE, DESCRIPTION, LICENSES, SOURCE, VERSION, REVISION, CREATED]);
        assert_eq!(a.get(REVISION), Some("abc"));
    }

    /// The value of `LABEL key=...` in the Containerfile (single or double
    /// quoted, possibly one of several on a continued line).
    fn containerfile_label(text: &str, key: &str) -> Option<String> {
        let at = text.find(&format!("{key}="))? + key.len() + 1;
        let rest = &text[at..];
        let quote = rest.chars().next()?;
        let end = rest[1..].find(quote)?;
        Some(rest[1..1 + end].to_owned())
    }

    #[test]
    fn containerfile_carries_the_same_static_labels() {
        let text = include_str!("../../../../image/Containerfile");
        // Byte for byte: the build compares the image's label with it.
        assert_eq!(containerfile_label(text, DEVCONTAINER_METADATA).unwrap(), devcontainer_metadata().to_string());
        assert_eq!(containerfile_label(text, TITLE).as_deref(), Some(TITLE_VALUE));
        assert_eq!(containerfile_label(text, DESCRIPTION).as_deref(), Some(DESCRIPTION_VALUE));
        assert_eq!(containerfile_label(text, LICENSES).as_deref(), Some(LICENSES_VALUE));
        // The image's PATH (root's too): the shims, then the system; the
        // user's venv is only on the user's PATH.
        let env_path = text.lines().find_map(|l| l.strip_prefix("ENV PATH=")).expect("ENV PATH");
        assert_eq!(env_path, "/usr/local/lib/agent-sandbox/bin:${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}");
        assert!(!env_path.contains(VENV));
        assert!(text.contains(&format!(r#"PATH="$PATH:{VENV}/bin""#)), "the user's shells append the venv");
        assert!(text.contains(START_CHECK));
        // tini is PID 1 of a plain `docker run`/`podman run`; the Dev
        // Containers CLI runs the metadata's entrypoint itself.
        assert!(text.contains(&format!("ENTRYPOINT [\"{INIT}\", \"--\", \"{ENTRYPOINT}\"]")));
        assert!(text.contains(&format!("ARG USER_NAME={REMOTE_USER}")));
    }
}
