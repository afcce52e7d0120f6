//! Errors of the OCI layer. Each message names what failed, why, and what
//! to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OciError {
    #[error("invalid registry `{input}`: {why}")]
    InvalidRegistry { input: String, why: String },

    #[error("invalid repository path `{path}`: use lowercase letters, digits and `.`, `_`, `-` between them, components joined by `/` (e.g. `my-org/agent-sandbox`)")]
    InvalidRepository { path: String },

    #[error("`{version}` is not a semantic version (MAJOR.MINOR.PATCH, optionally -PRERELEASE, without +BUILD); fix the \"version\" field")]
    InvalidVersion { version: String },

    #[error("cannot read registry credentials from {}: {why}; fix or remove that file", path.display())]
    CredentialFile { path: PathBuf, why: String },

    #[error("credential helper `docker-credential-{helper}` failed for {registry}: {why}; log in again (`docker login {registry}` or `podman login {registry}`) or set AGENT_SANDBOX_REGISTRY_USERNAME and AGENT_SANDBOX_REGISTRY_PASSWORD")]
    CredentialHelper { helper: String, registry: String, why: String },

    #[error("cannot start the network runtime: {0}")]
    Runtime(std::io::Error),

    #[error("cannot read the blob {digest} from {}: {source}; export the image again", path.display())]
    ReadBlob { digest: String, path: PathBuf, source: std::io::Error },

    #[error("the registry {registry} refused {action}: {why}; check that the registry is reachable and that your credentials allow pushing there (`docker login`/`podman login`, or AGENT_SANDBOX_REGISTRY_USERNAME/AGENT_SANDBOX_REGISTRY_PASSWORD)")]
    Registry { registry: String, action: String, why: String },
}
