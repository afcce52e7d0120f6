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
//! - [`layout`]: the exported OCI layout → manifest, config, layer files;
//! - [`exec`]: gathers inputs and runs a plan (the only effects).
//!
//! Pushing reuses `crate::oci` (blobs, then the manifest by digest, then
//! the tags; layers streamed from their files).

pub mod engine;
pub mod error;
pub mod exec;
pub mod labels;
pub mod layout;
pub mod plan;
pub mod verify;

pub use engine::Engine;
pub use error::ImageError;
pub use plan::{BuildPlan, BuildRequest, PublishPlan, Target};
