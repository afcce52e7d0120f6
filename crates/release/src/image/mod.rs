//! The reference image (`image/`): building it with podman, docker or
//! buildah, proving it with `agent-sandbox verify` inside (root and the
//! non-root user, egress jail on), and publishing it to an OCI registry
//! under the version's tags (`agent-sandbox image build|publish`).
//!
//! Decide as data, act once:
//! - [`engine`]: which engine, and every command line (pure);
//! - [`labels`]: the OCI labels and `devcontainer.metadata` (pure);
//! - [`plan`]: build context, argv, verify runs, tag set, push plan (pure);
//! - [`verify`]: the verify container's command and its report (pure);
//! - [`audit`]: nothing root may run is writable by anyone else (pure);
//! - [`emulated`]: the check of a platform this machine only emulates (pure);
//! - [`layout`]: the exported OCI layout → manifest, config, layer files;
//! - [`docker_archive`]: docker's legacy `save` archive (before 25) → the
//!   same, layers compressed;
//! - [`gather`]: observes the inputs (engines, definition, binaries, emulation);
//! - [`report`]: what build and publish report, and their failure (pure);
//! - [`exec`]: runs a plan (the only effects).
//!
//! One image per platform (linux/amd64, linux/arm64); several are pushed
//! as an OCI index under one tag set. Pushing reuses `crate::oci` (blobs,
//! then the manifests and the index by digest, then the tags; layers
//! streamed from their files).

mod audit;
mod docker_archive;
mod emulated;
mod engine;
mod error;
pub mod exec;
mod gather;
mod labels;
mod layout;
pub mod plan;
mod report;
mod verify;

pub use engine::Engine;
pub use error::ImageError;
pub use plan::{BuildPlan, BuildRequest, Check, PublishPlan, Target, Variant};
