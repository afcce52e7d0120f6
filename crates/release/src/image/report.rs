//! What `image build` and `image publish` report (`--json`), and the
//! failure a build's checks turn into. Values only.

use super::audit::AuditOutcome;
use super::emulated::EmulatedOutcome;
use super::engine::Engine;
use super::error::ImageError;
use super::plan::{self, Check, PublishPlan};
use super::verify::VerifyOutcome;
use crate::arch::Arch;
use crate::oci::Digest;
use serde::Serialize;
use std::collections::BTreeMap;

/// One platform's image, built and checked.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantReport {
    pub arch: Arch,
    pub platform: String,
    pub check: Check,
    pub tag: String,
    pub image_id: String,
    /// The image's size as the engine reports it (uncompressed).
    pub size: u64,
    /// What the sandbox adds: bubblewrap, passt and the two binaries.
    pub sandbox_size: Option<u64>,
    /// The labels found on the image (the planned ones).
    pub labels: BTreeMap<String, String>,
    /// Native: the verify runs (root, then the non-root user).
    pub verify: Vec<VerifyOutcome>,
    /// Emulated: `uname -m` and doctor.
    pub emulated: Option<EmulatedOutcome>,
    /// The ownership audit (both kinds of check).
    pub audit: AuditOutcome,
    /// Native: every verify run passed; emulated: its check passed (the
    /// sandbox itself was not exercised).
    pub verified: bool,
    pub build_seconds: f64,
    pub(crate) verify_seconds: f64,
}

impl VariantReport {
    /// One line per check run.
    pub fn summaries(&self) -> Vec<String> {
        let mut out: Vec<String> = match &self.emulated {
            Some(e) => vec![e.summary()],
            None => self.verify.iter().map(|v| format!("{} {}", self.platform, v.summary())).collect(),
        };
        if !self.audit.ok() {
            out.push(format!("{} {}", self.platform, self.audit.summary()));
        }
        out
    }

    /// The lines explaining a failed check.
    pub fn problems(&self, want_jail: bool) -> Vec<String> {
        let mut out: Vec<String> = self.audit.problems().iter().map(|p| format!("{} {p}", self.platform)).collect();
        out.extend(match &self.emulated {
            Some(e) => e.problems.iter().map(|p| format!("{} (emulated): {p}", self.platform)).collect::<Vec<_>>(),
            None => self.verify.iter().flat_map(|v| v.problems(want_jail)).map(|p| format!("{} {p}", self.platform)).collect(),
        });
        out
    }
}

/// What a build (with its checks) produced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildReport {
    pub engine: Engine,
    /// The requested name (with several platforms, the variants' base name).
    pub tag: String,
    pub agents: Vec<&'static str>,
    pub egress_jail: bool,
    pub variants: Vec<VariantReport>,
    /// Every variant passed its check.
    pub verified: bool,
    /// Every variant was verified by sessions (none only emulated).
    pub sessions_verified: bool,
    pub build_seconds: f64,
    pub(crate) verify_seconds: f64,
}

impl BuildReport {
    pub fn new(engine: Engine, tag: String, agents: Vec<&'static str>, egress_jail: bool, variants: Vec<VariantReport>) -> BuildReport {
        BuildReport {
            verified: variants.iter().all(|v| v.verified),
            sessions_verified: variants.iter().all(|v| v.check == Check::Native && v.verified),
            build_seconds: variants.iter().map(|v| v.build_seconds).sum(),
            verify_seconds: variants.iter().map(|v| v.verify_seconds).sum(),
            engine,
            tag,
            agents,
            egress_jail,
            variants,
        }
    }

    /// The check failure as an error (None when every variant passed).
    pub fn failure(&self) -> Option<ImageError> {
        let failed: Vec<&VariantReport> = self.variants.iter().filter(|v| !v.verified).collect();
        if failed.is_empty() {
            return None;
        }
        let tag = failed.iter().map(|v| v.tag.as_str()).collect::<Vec<_>>().join(", ");
        let summary = failed.iter().flat_map(|v| v.summaries()).collect::<Vec<_>>().join("; ");
        let details = failed.iter().flat_map(|v| v.problems(self.egress_jail)).map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n");
        Some(ImageError::VerifyFailed { tag, summary, details })
    }
}

/// One platform's image as pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlatformReport {
    pub platform: String,
    pub check: Check,
    pub digest: Digest,
    /// Bytes a pull of this platform downloads (compressed layers and config).
    pub size: u64,
}

/// What a publish did (or, dry-run, would do).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishReport {
    pub reference: String,
    pub version: String,
    pub dry_run: bool,
    pub already_published: bool,
    pub tags: Vec<String>,
    /// What the tags name: the index (several platforms) or the image.
    pub digest: Option<Digest>,
    pub(crate) media_type: Option<String>,
    /// Bytes a pull downloads (compressed layers and config; with several
    /// platforms, all of them).
    pub pushed_size: Option<u64>,
    pub(crate) blobs_uploaded: usize,
    pub platforms: Vec<PlatformReport>,
    #[serde(serialize_with = "plan::pairs_as_map")]
    pub labels: Vec<(String, String)>,
    pub build: Option<BuildReport>,
    /// The whole plan, with `--dry-run`.
    pub plan: Option<PublishPlan>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(user: &str, failures: Vec<String>, jail: bool) -> VerifyOutcome {
        VerifyOutcome {
            user: user.into(),
            agent: "claude".into(),
            egress_jail: jail,
            passed: 40,
            failed: failures.len() as u64,
            blocked: 16,
            escaped: 0,
            skipped: 0,
            failures,
            error: None,
            seconds: 1.0,
        }
    }

    fn variant(arch: Arch, verify: Vec<VerifyOutcome>, emulated: Option<EmulatedOutcome>) -> VariantReport {
        let verified = verify.iter().all(|v| v.ok(true)) && emulated.as_ref().is_none_or(EmulatedOutcome::ok);
        VariantReport {
            arch,
            platform: arch.platform(),
            check: if emulated.is_some() { Check::Emulated } else { Check::Native },
            tag: format!("t-{}", arch.oci()),
            image_id: "id".into(),
            size: 1,
            sandbox_size: None,
            labels: BTreeMap::new(),
            verify,
            emulated,
            audit: AuditOutcome { offenders: 0, examples: vec![], error: None },
            verified,
            build_seconds: 1.0,
            verify_seconds: 2.0,
        }
    }

    #[test]
    fn a_failed_verify_names_every_problem() {
        let bad = variant(Arch::X86_64, vec![outcome("root", vec!["FAIL 25 workspace-writable: EACCES".into()], true), outcome("vscode", vec![], false)], None);
        let r = BuildReport::new(Engine::Podman, "t".into(), vec!["claude"], true, vec![bad]);
        assert!(!r.verified && !r.sessions_verified);
        assert_eq!(
            r.failure().unwrap().to_string(),
            "verify failed in the built image t-amd64 (linux/amd64 root/claude: 40 passed, 1 failed, 16 blocked, 0 escaped, 0 skipped (jail on); \
             linux/amd64 vscode/claude: 40 passed, 0 failed, 16 blocked, 0 escaped, 0 skipped (jail off)); publish refuses such an image. \
             Fix the failing checks (see docs/verify.md) and build again:\n  linux/amd64 root: FAIL 25 workspace-writable: EACCES\n  \
             linux/amd64 vscode: the egress jail was off, verify asked for it on (check /etc/agent-sandbox/config.json5 in the image)"
        );
    }

    /// Files root runs that a user can write fail the build, whatever
    /// verify said.
    #[test]
    fn a_failed_audit_fails_the_build_and_names_the_files() {
        let mut v = variant(Arch::X86_64, vec![outcome("root", vec![], true), outcome("vscode", vec![], true)], None);
        v.audit = crate::image::audit::parse("1000 1000 644 /usr/local/lib/node_modules/x/index.js\naudit-complete\n", "");
        v.verified = v.audit.ok();
        let r = BuildReport::new(Engine::Podman, "t".into(), vec!["pi"], true, vec![v]);
        assert!(!r.verified);
        let e = r.failure().unwrap().to_string();
        assert!(e.contains("linux/amd64 ownership audit: 1 files or directories root may run are not root's alone"), "{e}");
        assert!(e.contains("\n  linux/amd64   /usr/local/lib/node_modules/x/index.js (uid 1000, gid 1000, mode 644)"), "{e}");
    }

    #[test]
    fn an_emulated_variant_passes_its_check_but_is_not_session_verified() {
        let native = variant(Arch::X86_64, vec![outcome("root", vec![], true), outcome("vscode", vec![], true)], None);
        let good = EmulatedOutcome { arch: Arch::Aarch64, machine: "aarch64".into(), findings: vec![], problems: vec![], seconds: 1.0 };
        let r = BuildReport::new(Engine::Podman, "t".into(), vec![], true, vec![native.clone(), variant(Arch::Aarch64, vec![], Some(good.clone()))]);
        assert!(r.verified && !r.sessions_verified && r.failure().is_none());
        assert_eq!((r.build_seconds, r.verify_seconds), (2.0, 4.0));

        let bad = EmulatedOutcome { problems: vec!["doctor did not report install-ok".into()], ..good };
        let r = BuildReport::new(Engine::Podman, "t".into(), vec![], true, vec![native, variant(Arch::Aarch64, vec![], Some(bad))]);
        let e = r.failure().unwrap().to_string();
        assert!(e.starts_with("verify failed in the built image t-arm64 (linux/arm64 emulated: uname -m aarch64, doctor 0: 1 problem(s))"), "{e}");
        assert!(e.ends_with("\n  linux/arm64 (emulated): doctor did not report install-ok"), "{e}");
    }
}
