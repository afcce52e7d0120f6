//! The build, verify and publish plans, as whole values.

use super::*;
use crate::image::layout::LocalImage;
use crate::oci::manifest::{Blob, Manifest, OCI_MANIFEST};
use crate::oci::Digest;
use std::collections::BTreeMap;

fn v(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn inputs() -> Inputs {
    let found: BTreeMap<Engine, PathBuf> = [(Engine::Podman, PathBuf::from("/usr/bin/podman"))].into();
    Inputs {
        tools: engine::choose(None, &found, "/usr/bin").unwrap(),
        provenance: Provenance { source: "https://example.org/as".into(), version: "1.2.3".into(), revision: "abc123".into(), created: "2026-01-02T03:04:05Z".into() },
        definition: "/src/image".into(),
        definition_files: vec!["Containerfile".into(), "bin/agent-sandbox".into(), "build/install-agents.sh".into(), "start-check.sh".into()],
        bin_dir: "/static".into(),
        work: "/w".into(),
        container: "ctr".into(),
    }
}

fn request() -> BuildRequest {
    BuildRequest {
        engine: None,
        tag: None,
        agents: parse_agents("pi,claude,pi").unwrap(),
        network: Some("host".into()),
        no_cache: false,
        build_args: vec![parse_build_arg("PI_VERSION=0.73.1").unwrap()],
        extra_ca: Some("/etc/ssl/ca.pem".into()),
        egress_jail: true,
    }
}

fn label_flags(inp: &Inputs) -> Vec<String> {
    labels::labels(&inp.provenance).into_iter().flat_map(|(k, v)| ["--label".to_owned(), format!("{k}={v}")]).collect()
}

#[test]
fn build_plan_whole() {
    let inp = inputs();
    let p = build_plan(&request(), &inp).unwrap();
    let mut build = v(&["/usr/bin/podman", "build", "--file", "/w/context/Containerfile", "--tag", "localhost/agent-sandbox:1.2.3", "--network", "host", "--build-arg", "AGENTS=pi,claude", "--build-arg", "PI_VERSION=0.73.1"]);
    build.extend(label_flags(&inp));
    build.push("/w/context".into());
    let verify_as = |user: &str| VerifyRun {
        user: user.into(),
        agent: "pi".into(),
        egress_jail: true,
        argv: v(&["/usr/bin/podman", "exec", "--user", user, "ctr", "sh", "-c", verify::SCRIPT, "sh", "pi"]),
    };
    let cf = |dest: &str, source: &str| ContextFile { dest: dest.into(), source: source.into() };
    assert_eq!(
        p,
        BuildPlan {
            engine: Engine::Podman,
            runner: Engine::Podman,
            tag: "localhost/agent-sandbox:1.2.3".into(),
            agents: vec!["pi", "claude"],
            context: "/w/context".into(),
            context_files: vec![
                cf("Containerfile", "/src/image/Containerfile"),
                cf("build/install-agents.sh", "/src/image/build/install-agents.sh"),
                cf("start-check.sh", "/src/image/start-check.sh"),
                cf("bin/agent-sandbox", "/static/agent-sandbox"),
                cf("bin/sandbox-install", "/static/sandbox-install"),
                cf("build/extra-ca.pem", "/etc/ssl/ca.pem"),
            ],
            build,
            labels: labels::labels(&inp.provenance),
            inspect: v(&["/usr/bin/podman", "image", "inspect", "localhost/agent-sandbox:1.2.3"]),
            start: v(&[
                "/usr/bin/podman", "run", "--detach", "--name", "ctr", "--device", "/dev/net/tun", "--security-opt", "systempaths=unconfined",
                "--network", "host", "localhost/agent-sandbox:1.2.3", "sleep", "infinity",
            ]),
            measure: v(&["/usr/bin/podman", "exec", "--user", "root", "ctr", "sh", "-c", MEASURE_SCRIPT]),
            verify: vec![verify_as("root"), verify_as("vscode")],
            remove: v(&["/usr/bin/podman", "rm", "--force", "--time", "0", "ctr"]),
            egress_jail: true,
        }
    );
}

#[test]
fn jail_off_is_explicit_in_every_verify_run() {
    let req = BuildRequest { egress_jail: false, agents: vec![], network: None, extra_ca: None, tag: Some("t:1".into()), ..request() };
    let p = build_plan(&req, &inputs()).unwrap();
    assert_eq!(p.agents, Vec::<&str>::new());
    assert!(p.build.contains(&"AGENTS=".to_owned()));
    for run in &p.verify {
        assert!(!run.egress_jail);
        assert_eq!(run.agent, "claude", "no agents: the default profile");
        let at = run.argv.iter().position(|a| a == "AGENT_SANDBOX_EGRESS_JAIL=0").expect("jail off passed");
        assert_eq!(run.argv[at - 1], "--env");
        assert!(at < run.argv.iter().position(|a| a == "ctr").unwrap(), "options before the container");
    }
    assert!(!p.context_files.iter().any(|f| f.dest == Path::new(EXTRA_CA)));
}

#[test]
fn bad_requests_are_refused() {
    assert!(matches!(parse_agents("claude,gpt"), Err(ImageError::UnknownAgent(a)) if a == "gpt"));
    assert_eq!(parse_agents(" , ").unwrap(), vec![]);
    assert!(matches!(parse_build_arg("AGENTS=pi"), Err(ImageError::ReservedBuildArg(_, "--agents"))));
    for bad in ["NOEQUALS", "=x", "A-B=1"] {
        assert!(matches!(parse_build_arg(bad), Err(ImageError::BadBuildArg(_))), "{bad}");
    }
    assert_eq!(parse_build_arg("BASE_IMAGE=debian:trixie").unwrap(), ("BASE_IMAGE".into(), "debian:trixie".into()));
    let req = BuildRequest { tag: Some("has space".into()), ..request() };
    assert!(matches!(build_plan(&req, &inputs()), Err(ImageError::BadTag(_))));
}

fn target() -> Target {
    Target::new(Registry::parse("localhost:5050").unwrap(), "/ns/agent-sandbox/").unwrap()
}

#[test]
fn publish_plan_tags_follow_the_semver_rule() {
    let inp = inputs();
    let build = build_plan(&request(), &inp).unwrap();
    let p = publish_plan(build.clone(), &inp, &target(), &Version::parse("1.2.3").unwrap(), &[]);
    assert_eq!(
        p,
        PublishPlan {
            reference: "localhost:5050/ns/agent-sandbox".into(),
            version: "1.2.3".into(),
            tags: TagSet::Push { tags: v(&["1", "1.2", "latest", "1.2.3"]) },
            build: build.clone(),
            export: v(&["/usr/bin/podman", "save", "--format", "oci-dir", "--output", "/w/export/oci", "localhost/agent-sandbox:1.2.3"]),
            export_to: Export::Dir { dir: "/w/export/oci".into() },
        }
    );
    let pre = publish_plan(build.clone(), &inp, &target(), &Version::parse("2.0.0-rc.1").unwrap(), &v(&["1", "latest", "1.2.3"]));
    assert_eq!(pre.tags, TagSet::Push { tags: v(&["2.0.0-rc.1"]) });
    let again = publish_plan(build, &inp, &target(), &Version::parse("1.2.3").unwrap(), &v(&["1.2.3"]));
    assert_eq!(again.tags, TagSet::AlreadyPublished);
    assert!(Target::new(Registry::parse("r").unwrap(), "Bad/Name").is_err());
}

#[test]
fn push_plan_streams_layers_and_keeps_the_manifest_bytes() {
    let config = Blob::new("application/vnd.oci.image.config.v1+json", b"{}".to_vec());
    let layer = FileBlob { media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(), digest: Digest::of(b"l"), size: 1, path: "/w/export/oci/blobs/sha256/x".into() };
    let manifest = Manifest {
        schema_version: 2,
        media_type: OCI_MANIFEST.into(),
        artifact_type: None,
        config: config.descriptor(None),
        layers: vec![crate::oci::manifest::Descriptor { media_type: layer.media_type.clone(), digest: layer.digest.clone(), size: 1, annotations: None }],
        annotations: None,
    };
    let bytes = br#"{"engine's":"exact bytes"}"#.to_vec();
    let image = LocalImage { manifest: manifest.clone(), manifest_bytes: bytes.clone(), digest: Digest::of(&bytes), config: config.clone(), layers: vec![layer.clone()] };
    let (plan, files) = push_plan(&image, &target(), &v(&["1", "latest", "1.2.3"]));
    assert_eq!(
        plan,
        PushPlan {
            items: vec![PushItem {
                repository: "ns/agent-sandbox".into(),
                artifact: Artifact { manifest, manifest_bytes: bytes.clone(), digest: Digest::of(&bytes), blobs: vec![config] },
                tags: v(&["1", "latest", "1.2.3"]),
            }]
        }
    );
    assert_eq!(files, vec![vec![layer]]);
}

/// Records registry calls; file blobs go through the trait's default
/// `push_blob_file` (read into memory, then `push_blob`).
#[derive(Default)]
struct Recorder {
    calls: std::cell::RefCell<Vec<String>>,
}

impl crate::oci::RegistryApi for Recorder {
    fn registry(&self) -> String {
        "r".into()
    }
    fn list_tags(&self, _: &str) -> Result<Vec<String>, crate::oci::OciError> {
        Ok(vec![])
    }
    fn blob_exists(&self, _: &str, _: &Digest) -> Result<bool, crate::oci::OciError> {
        Ok(false)
    }
    fn push_blob(&self, repo: &str, b: &Blob) -> Result<(), crate::oci::OciError> {
        assert_eq!(Digest::of(&b.data), b.digest, "the bytes read match the digest");
        self.calls.borrow_mut().push(format!("blob {repo} {} {}", b.media_type, b.data.len()));
        Ok(())
    }
    fn push_manifest(&self, repo: &str, reference: &str, _: &[u8], media_type: &str) -> Result<(), crate::oci::OciError> {
        let r = if reference.starts_with("sha256:") { "@digest" } else { reference };
        self.calls.borrow_mut().push(format!("manifest {repo} {r} {media_type}"));
        Ok(())
    }
    fn pull_manifest(&self, _: &str, _: &str) -> Result<(Vec<u8>, Digest), crate::oci::OciError> {
        unreachable!()
    }
}

#[test]
fn layers_from_files_go_first_then_config_manifest_and_tags() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("layer");
    std::fs::write(&path, b"layer-data").unwrap();
    let layer = FileBlob { media_type: "layer".into(), digest: Digest::of(b"layer-data"), size: 10, path };
    let config = Blob::new("config", b"{}".to_vec());
    let manifest = Manifest { schema_version: 2, media_type: OCI_MANIFEST.into(), artifact_type: None, config: config.descriptor(None), layers: vec![], annotations: None };
    let bytes = b"{}".to_vec();
    let image = LocalImage { manifest, manifest_bytes: bytes.clone(), digest: Digest::of(&bytes), config, layers: vec![layer] };
    let (plan, files) = push_plan(&image, &target(), &v(&["1", "latest", "1.0.0"]));
    let rec = Recorder::default();
    let pushed = crate::oci::push::execute_with_files(&rec, &plan, &files).unwrap();
    assert_eq!(pushed[0].blobs_uploaded, 2);
    assert_eq!(
        rec.calls.into_inner(),
        v(&[
            "blob ns/agent-sandbox layer 10",
            "blob ns/agent-sandbox config 2",
            &format!("manifest ns/agent-sandbox @digest {OCI_MANIFEST}"),
            &format!("manifest ns/agent-sandbox 1 {OCI_MANIFEST}"),
            &format!("manifest ns/agent-sandbox latest {OCI_MANIFEST}"),
            &format!("manifest ns/agent-sandbox 1.0.0 {OCI_MANIFEST}"),
        ])
    );
}
