//! The build, verify and publish plans, as whole values.

use super::*;
use crate::image::layout::LocalImage;
use crate::oci::manifest::{Blob, Manifest, OCI_INDEX, OCI_MANIFEST};
use crate::oci::Digest;
use std::collections::BTreeMap;

fn v(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn inputs() -> Inputs {
    let found: BTreeMap<Engine, PathBuf> = [(Engine::Podman, PathBuf::from("/usr/bin/podman"))].into();
    Inputs {
        tools: engine::choose(None, &found, "/usr/bin").unwrap(),
        provenance: Provenance {
            source: "https://example.org/as".into(),
            version: "1.2.3".into(),
            revision: "abc123".into(),
            created: "2026-01-02T03:04:05Z".into(),
        },
        definition: "/src/image".into(),
        definition_files: vec!["Containerfile".into(), "bin/agent-sandbox".into(), "build/install-agents.sh".into(), "entrypoint.sh".into()],
        bin_dirs: vec![BinDir { arch: Arch::X86_64, dir: "/static/x86_64".into() }, BinDir { arch: Arch::Aarch64, dir: "/static/aarch64".into() }],
        work: "/w".into(),
        container: "ctr".into(),
        native: Arch::X86_64,
    }
}

fn request() -> BuildRequest {
    BuildRequest {
        engine: None,
        tag: None,
        agents: vec![Agent::Pi, Agent::Claude],
        network: Some("host".into()),
        no_cache: false,
        build_args: vec![parse_build_arg("PI_VERSION=0.73.1").unwrap()],
        extra_ca: Some("/etc/ssl/ca.pem".into()),
        egress_jail: true,
        platforms: vec![],
    }
}

/// The labels the build passes: all but devcontainer.metadata, which the
/// Containerfile sets (an engine would substitute its `${containerEnv:PATH}`).
fn label_flags(inp: &Inputs) -> Vec<String> {
    let flags: Vec<String> = labels::labels(&inp.provenance)
        .into_iter()
        .filter(|(k, _)| k != labels::DEVCONTAINER_METADATA)
        .flat_map(|(k, v)| ["--label".to_owned(), format!("{k}={v}")])
        .collect();
    assert!(!flags.iter().any(|f| f.contains("${")), "no label the build passes holds a substitution: {flags:?}");
    flags
}

fn cf(dest: &str, source: &str) -> ContextFile {
    ContextFile { dest: dest.into(), source: source.into() }
}

#[test]
fn build_plan_whole() {
    let inp = inputs();
    let p = build_plan(&request(), &inp).unwrap();
    let mut build = v(&[
        "/usr/bin/podman",
        "build",
        "--file",
        "/w/context-amd64/Containerfile",
        "--tag",
        "localhost/agent-sandbox:1.2.3",
        "--platform",
        "linux/amd64",
        "--network",
        "host",
        "--build-arg",
        "AGENTS=pi,claude",
        "--build-arg",
        "PI_VERSION=0.73.1",
    ]);
    build.extend(label_flags(&inp));
    build.push("/w/context-amd64".into());
    let verify_as = |user: &str| VerifyRun {
        user: user.into(),
        agent: "pi".into(),
        egress_jail: true,
        argv: v(&["/usr/bin/podman", "exec", "--user", user, "ctr-amd64", "sh", "-c", verify::SCRIPT, "sh", "pi"]),
    };
    assert_eq!(
        p,
        BuildPlan {
            engine: Engine::Podman,
            runner: Engine::Podman,
            tag: "localhost/agent-sandbox:1.2.3".into(),
            agents: vec!["pi", "claude"],
            labels: labels::labels(&inp.provenance),
            egress_jail: true,
            variants: vec![Variant {
                arch: Arch::X86_64,
                platform: "linux/amd64".into(),
                check: Check::Native,
                tag: "localhost/agent-sandbox:1.2.3".into(),
                context: "/w/context-amd64".into(),
                context_files: vec![
                    cf("Containerfile", "/src/image/Containerfile"),
                    cf("build/install-agents.sh", "/src/image/build/install-agents.sh"),
                    cf("entrypoint.sh", "/src/image/entrypoint.sh"),
                    cf("bin/agent-sandbox", "/static/x86_64/agent-sandbox"),
                    cf("bin/sandbox-install", "/static/x86_64/sandbox-install"),
                    cf("build/extra-ca.pem", "/etc/ssl/ca.pem"),
                ],
                build,
                build_env: vec![],
                inspect: v(&["/usr/bin/podman", "image", "inspect", "localhost/agent-sandbox:1.2.3"]),
                start: v(&[
                    "/usr/bin/podman",
                    "run",
                    "--detach",
                    "--name",
                    "ctr-amd64",
                    "--device",
                    "/dev/net/tun",
                    "--security-opt",
                    "systempaths=unconfined",
                    "--network",
                    "host",
                    "localhost/agent-sandbox:1.2.3",
                    "sleep",
                    "infinity",
                ]),
                seccomp_profile: "/w/seccomp-profile.json".into(),
                measure: v(&["/usr/bin/podman", "exec", "--user", "root", "ctr-amd64", "sh", "-c", MEASURE_SCRIPT]),
                audit: v(&["/usr/bin/podman", "exec", "--user", "root", "ctr-amd64", "sh", "-c", &crate::image::audit::script()]),
                verify: vec![verify_as("root"), verify_as("vscode")],
                emulated: None,
                remove: v(&["/usr/bin/podman", "rm", "--force", "--time", "0", "ctr-amd64"]),
            }],
        }
    );
}

/// Two platforms on an x86_64 machine: arm64 builds under emulation, from
/// its own context with its own binaries, and is checked with doctor.
#[test]
fn two_platforms_make_two_variants_and_the_foreign_one_is_emulated() {
    let inp = inputs();
    let req = BuildRequest { platforms: parse_platforms("linux/amd64, linux/arm64,linux/amd64").unwrap(), extra_ca: None, ..request() };
    let p = build_plan(&req, &inp).unwrap();
    let tags: Vec<&str> = p.variants.iter().map(|v| v.tag.as_str()).collect();
    assert_eq!(tags, ["localhost/agent-sandbox:1.2.3-amd64", "localhost/agent-sandbox:1.2.3-arm64"]);
    assert_eq!(p.tag, "localhost/agent-sandbox:1.2.3");
    let arm = &p.variants[1];
    let mut build = v(&[
        "/usr/bin/podman",
        "build",
        "--file",
        "/w/context-arm64/Containerfile",
        "--tag",
        "localhost/agent-sandbox:1.2.3-arm64",
        "--platform",
        "linux/arm64",
        "--network",
        "host",
        "--build-arg",
        "AGENTS=pi,claude",
        "--build-arg",
        "PI_VERSION=0.73.1",
    ]);
    build.extend(label_flags(&inp));
    build.push("/w/context-arm64".into());
    assert_eq!(
        *arm,
        Variant {
            arch: Arch::Aarch64,
            platform: "linux/arm64".into(),
            check: Check::Emulated,
            tag: "localhost/agent-sandbox:1.2.3-arm64".into(),
            context: "/w/context-arm64".into(),
            context_files: vec![
                cf("Containerfile", "/src/image/Containerfile"),
                cf("build/install-agents.sh", "/src/image/build/install-agents.sh"),
                cf("entrypoint.sh", "/src/image/entrypoint.sh"),
                cf("bin/agent-sandbox", "/static/aarch64/agent-sandbox"),
                cf("bin/sandbox-install", "/static/aarch64/sandbox-install"),
            ],
            build,
            build_env: vec![],
            inspect: v(&["/usr/bin/podman", "image", "inspect", "localhost/agent-sandbox:1.2.3-arm64"]),
            start: v(&[
                "/usr/bin/podman",
                "run",
                "--detach",
                "--name",
                "ctr-arm64",
                "--device",
                "/dev/net/tun",
                "--security-opt",
                "systempaths=unconfined",
                "--network",
                "host",
                "localhost/agent-sandbox:1.2.3-arm64",
                "sleep",
                "infinity",
            ]),
            seccomp_profile: "/w/seccomp-profile.json".into(),
            measure: v(&["/usr/bin/podman", "exec", "--user", "root", "ctr-arm64", "sh", "-c", MEASURE_SCRIPT]),
            audit: v(&["/usr/bin/podman", "exec", "--user", "root", "ctr-arm64", "sh", "-c", &crate::image::audit::script()]),
            verify: vec![],
            emulated: Some(v(&["/usr/bin/podman", "exec", "--user", "root", "ctr-arm64", "sh", "-c", crate::image::emulated::SCRIPT])),
            remove: v(&["/usr/bin/podman", "rm", "--force", "--time", "0", "ctr-arm64"]),
        }
    );
    assert_eq!(p.variants[0].check, Check::Native);
    assert_eq!(p.variants[0].verify.len(), 2);
    assert_eq!(p.emulated().len(), 1);

    // On an aarch64 machine the roles swap.
    let arm_machine = Inputs { native: Arch::Aarch64, ..inp.clone() };
    let p = build_plan(&req, &arm_machine).unwrap();
    assert_eq!(p.variants.iter().map(|v| v.check).collect::<Vec<_>>(), [Check::Emulated, Check::Native]);

    // A platform without binaries cannot be planned.
    let only_amd = Inputs { bin_dirs: vec![BinDir { arch: Arch::X86_64, dir: "/s".into() }], ..inp };
    assert!(matches!(build_plan(&req, &only_amd), Err(ImageError::NoBinaries { arch: "aarch64", .. })));
}

#[test]
fn platforms_and_variant_names() {
    assert_eq!(parse_platforms("linux/arm64/v8").unwrap(), [Arch::Aarch64]);
    for bad in ["", "linux/riscv64", "amd64", "linux/amd64,windows/amd64"] {
        assert!(matches!(parse_platforms(bad), Err(ImageError::UnknownPlatform(_))), "{bad}");
    }
    assert_eq!(variant_tag("localhost:5000/a/b:1.0", Arch::Aarch64), "localhost:5000/a/b:1.0-arm64");
    assert_eq!(variant_tag("localhost:5000/a/b", Arch::X86_64), "localhost:5000/a/b:latest-amd64");
}

#[test]
fn a_publish_with_emulated_platforms_needs_the_flag() {
    let inp = inputs();
    let req = BuildRequest { platforms: parse_platforms("linux/amd64,linux/arm64").unwrap(), ..request() };
    let p = build_plan(&req, &inp).unwrap();
    let e = check_publishable(&p, Arch::X86_64, false).unwrap_err().to_string();
    assert!(e.starts_with("linux/arm64 can only run under emulation on this linux/amd64 machine, where sessions cannot start"), "{e}");
    assert!(e.contains("--allow-emulated") && e.contains("--platform linux/amd64"), "{e}");
    assert!(check_publishable(&p, Arch::X86_64, true).is_ok());
    let native_only = build_plan(&request(), &inp).unwrap();
    assert!(check_publishable(&native_only, Arch::X86_64, false).is_ok());
}

#[test]
fn jail_off_is_explicit_in_every_verify_run() {
    let req = BuildRequest { egress_jail: false, agents: vec![], network: None, extra_ca: None, tag: Some("t:1".into()), ..request() };
    let p = build_plan(&req, &inputs()).unwrap();
    assert_eq!(p.agents, Vec::<&str>::new());
    let p = &p.variants[0];
    assert!(p.build.contains(&"AGENTS=".to_owned()));
    for run in &p.verify {
        assert!(!run.egress_jail);
        assert_eq!(run.agent, "claude", "no agents: the default profile");
        let at = run.argv.iter().position(|a| a == "AGENT_SANDBOX_EGRESS_JAIL=0").expect("jail off passed");
        assert_eq!(run.argv[at - 1], "--env");
        assert!(at < run.argv.iter().position(|a| a == "ctr-amd64").unwrap(), "options before the container");
        assert_eq!(run.argv.last().map(String::as_str), Some("--allow-jail-off"), "verify is told the jail is meant to be off");
    }
    assert!(!p.context_files.iter().any(|f| f.dest == Path::new(EXTRA_CA)));
}

#[test]
fn bad_requests_are_refused() {
    assert!(matches!(parse_build_arg("AGENTS=pi"), Err(ImageError::ReservedBuildArg(_, "--agents"))));
    for bad in ["NOEQUALS", "=x", "A-B=1"] {
        assert!(matches!(parse_build_arg(bad), Err(ImageError::BadBuildArg(_))), "{bad}");
    }
    assert_eq!(parse_build_arg("BASE_IMAGE=debian:trixie").unwrap(), ("BASE_IMAGE".into(), "debian:trixie".into()));
    for bad in ["has space", "-x", "a@sha256:00"] {
        let req = BuildRequest { tag: Some(bad.into()), ..request() };
        assert!(matches!(build_plan(&req, &inputs()), Err(ImageError::BadTag(_))), "{bad}");
    }
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
            exports: vec![ExportStep {
                arch: Arch::X86_64,
                argv: v(&["/usr/bin/podman", "save", "--format", "oci-dir", "--output", "/w/export-amd64/oci", "localhost/agent-sandbox:1.2.3"]),
                to: Export::Dir { dir: "/w/export-amd64/oci".into() },
            }],
            index: false,
        }
    );
    let two = build_plan(&BuildRequest { platforms: vec![Arch::X86_64, Arch::Aarch64], ..request() }, &inp).unwrap();
    let p2 = publish_plan(two, &inp, &target(), &Version::parse("1.2.3").unwrap(), &[]);
    assert!(p2.index);
    assert_eq!(
        p2.exports[1].argv,
        v(&["/usr/bin/podman", "save", "--format", "oci-dir", "--output", "/w/export-arm64/oci", "localhost/agent-sandbox:1.2.3-arm64"])
    );
    let pre = publish_plan(build.clone(), &inp, &target(), &Version::parse("2.0.0-rc.1").unwrap(), &v(&["1", "latest", "1.2.3"]));
    assert_eq!(pre.tags, TagSet::Push { tags: v(&["2.0.0-rc.1"]) });
    let again = publish_plan(build, &inp, &target(), &Version::parse("1.2.3").unwrap(), &v(&["1.2.3"]));
    assert_eq!(again.tags, TagSet::AlreadyPublished);
    assert!(Target::new(Registry::parse("r").unwrap(), "Bad/Name").is_err());
}

fn provenance() -> Provenance {
    inputs().provenance
}

/// An exported image of `arch` whose manifest bytes are `bytes`.
fn local_image(arch: &str, bytes: &[u8]) -> LocalImage {
    let config = Blob::new("application/vnd.oci.image.config.v1+json", format!(r#"{{"architecture":"{arch}"}}"#).into_bytes());
    let layer = FileBlob {
        media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
        digest: Digest::of(arch.as_bytes()),
        size: 1,
        path: format!("/w/export-{arch}/oci/blobs/sha256/x").into(),
    };
    let manifest = Manifest {
        schema_version: 2,
        media_type: OCI_MANIFEST.into(),
        artifact_type: None,
        config: config.descriptor(None),
        layers: vec![crate::oci::manifest::Descriptor { media_type: layer.media_type.clone(), digest: layer.digest.clone(), size: 1, annotations: None }],
        annotations: None,
    };
    LocalImage { manifest, manifest_bytes: bytes.to_vec(), digest: Digest::of(bytes), config, layers: vec![layer] }
}

fn image_artifact(i: &LocalImage) -> Artifact {
    Artifact {
        manifest: Document::Image(i.manifest.clone()),
        manifest_bytes: i.manifest_bytes.clone(),
        digest: i.digest.clone(),
        blobs: vec![i.config.clone()],
    }
}

#[test]
fn push_plan_streams_layers_and_keeps_the_manifest_bytes() {
    let image = local_image("amd64", br#"{"engine's":"exact bytes"}"#);
    let (plan, files) = push_plan(&[(Arch::X86_64, image.clone())], &provenance(), &target(), &v(&["1", "latest", "1.2.3"]));
    assert_eq!(
        plan,
        PushPlan { items: vec![PushItem { repository: "ns/agent-sandbox".into(), artifact: image_artifact(&image), tags: v(&["1", "latest", "1.2.3"]) }] }
    );
    assert_eq!(files, vec![image.layers.clone()]);
}

/// Several platforms: each image by digest, untagged; then the index,
/// annotated with the OCI labels, under the tags.
#[test]
fn push_plan_of_two_platforms_tags_their_index() {
    let amd = local_image("amd64", b"amd-manifest");
    let arm = local_image("arm64", b"arm-manifest-bytes");
    let images = [(Arch::X86_64, amd.clone()), (Arch::Aarch64, arm.clone())];
    let (plan, files) = push_plan(&images, &provenance(), &target(), &v(&["1", "1.2.3"]));
    let entry = |i: &LocalImage, arch: &str| IndexEntry {
        media_type: OCI_MANIFEST.into(),
        digest: i.digest.clone(),
        size: i.manifest_bytes.len() as u64,
        platform: Platform { architecture: arch.into(), os: "linux".into(), variant: None },
    };
    let index = Index::new(vec![entry(&amd, "amd64"), entry(&arm, "arm64")], labels::index_annotations(&provenance()));
    let repo = || "ns/agent-sandbox".to_owned();
    assert_eq!(
        plan,
        PushPlan {
            items: vec![
                PushItem { repository: repo(), artifact: image_artifact(&amd), tags: vec![] },
                PushItem { repository: repo(), artifact: image_artifact(&arm), tags: vec![] },
                PushItem { repository: repo(), artifact: Artifact::from_index(index), tags: v(&["1", "1.2.3"]) },
            ]
        }
    );
    assert_eq!(files, vec![amd.layers.clone(), arm.layers.clone()]);
    let text = String::from_utf8(plan.items[2].artifact.manifest_bytes.clone()).unwrap();
    assert!(text.starts_with(&format!(r#"{{"schemaVersion":2,"mediaType":"{OCI_INDEX}","manifests":[{{"mediaType":"{OCI_MANIFEST}","digest":"{}","size":12,"platform":{{"architecture":"amd64","os":"linux"}}}}"#, amd.digest)), "{text}");
    assert!(
        text.contains(r#""annotations":{"org.opencontainers.image.title":"agent-sandbox","#) && text.contains(r#""org.opencontainers.image.version":"1.2.3""#),
        "{text}"
    );
    assert!(!text.contains("devcontainer.metadata"), "{text}");
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
    let manifest = Manifest {
        schema_version: 2,
        media_type: OCI_MANIFEST.into(),
        artifact_type: None,
        config: config.descriptor(None),
        layers: vec![],
        annotations: None,
    };
    let bytes = b"{}".to_vec();
    let image = LocalImage { manifest, manifest_bytes: bytes.clone(), digest: Digest::of(&bytes), config, layers: vec![layer] };
    let (plan, files) = push_plan(&[(Arch::X86_64, image)], &provenance(), &target(), &v(&["1", "latest", "1.0.0"]));
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
