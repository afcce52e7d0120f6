//! A small, reusable OCI registry layer (used by the feature/template
//! publisher, meant for the reference-image publisher too).
//!
//! Values first, one effectful seam:
//! - [`reference`]: registry `HOST[:PORT]`, repository paths, tags (pure);
//!   plain HTTP only for loopback registries.
//! - [`digest`], [`manifest`]: descriptors, manifests and their exact bytes
//!   ([`manifest::Artifact`] = blobs + sealed manifest or index) (pure).
//! - [`archive`]: reproducible tar (and gzip) from an in-memory file list (pure).
//! - [`semver`]: versions and the tag set rule (`1`, `1.2`, `1.2.3`,
//!   `latest`, moved only by the highest version in their range) (pure).
//! - [`auth`]: which credential applies (docker/podman credential files,
//!   helpers, environment).
//! - [`push`]: a push plan and its executor (blobs, then manifests by
//!   digest, then tags), written against the [`client::RegistryApi`] trait.
//! - [`client`]: the only code that talks to a registry (`oci-client` on a
//!   private current-thread runtime).
//!
//! Not here: what the artifacts contain (see `crate::publish`).

pub mod archive;
pub mod auth;
mod client;
pub mod digest;
mod error;
pub mod manifest;
pub mod push;
pub mod reference;
pub mod semver;

pub use client::{RegistryApi, RegistryClient};
pub use digest::Digest;
pub use error::OciError;
pub use manifest::{Annotations, Artifact, Blob, Descriptor, Document, Index, IndexEntry, Manifest, Platform};
pub use reference::Registry;
