//! The one place that talks to a registry, over `oci-client`.
//!
//! [`RegistryApi`] is the seam: the push executor ([`super::push`]) only
//! sees this trait, so its ordering rules are tested with a recorder.
//! [`RegistryClient`] implements it with blocking calls on a private
//! current-thread tokio runtime (created here, never in the launcher path).
//! Plain HTTP is used for loopback registries only.

use super::auth::Credential;
use super::digest::Digest;
use super::error::OciError;
use super::manifest::{Blob, FileBlob};
use super::reference::Registry;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

/// What the publish paths need from a registry. Repositories are paths
/// within the registry (`ns/agent-sandbox`); references are tags or digests.
pub trait RegistryApi {
    /// The registry's `HOST[:PORT]`, for messages and reports.
    fn registry(&self) -> String;
    /// All tags of a repository; an unknown repository has none.
    fn list_tags(&self, repository: &str) -> Result<Vec<String>, OciError>;
    fn blob_exists(&self, repository: &str, digest: &Digest) -> Result<bool, OciError>;
    fn push_blob(&self, repository: &str, blob: &Blob) -> Result<(), OciError>;
    /// Uploads a blob kept in a file. The default reads it into memory and
    /// calls [`RegistryApi::push_blob`]; [`RegistryClient`] streams it.
    fn push_blob_file(&self, repository: &str, blob: &FileBlob) -> Result<(), OciError> {
        let data = std::fs::read(&blob.path).map_err(|source| OciError::ReadBlob { digest: blob.digest.to_string(), path: blob.path.clone(), source })?;
        self.push_blob(repository, &Blob { media_type: blob.media_type.clone(), digest: blob.digest.clone(), data })
    }
    /// Pushes manifest bytes under `reference` (a digest or a tag).
    fn push_manifest(&self, repository: &str, reference: &str, bytes: &[u8], media_type: &str) -> Result<(), OciError>;
    /// The manifest bytes under `reference`, and their digest.
    fn pull_manifest(&self, repository: &str, reference: &str) -> Result<(Vec<u8>, Digest), OciError>;
}

/// A registry client with its own current-thread runtime.
pub struct RegistryClient {
    registry: Registry,
    auth: RegistryAuth,
    client: Client,
    rt: tokio::runtime::Runtime,
    /// Repositories already authenticated for pushing.
    logged_in: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

/// The TLS stack needs one process-wide crypto provider; installing it twice
/// is harmless (the second call reports the first is already there).
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl RegistryClient {
    pub fn new(registry: &Registry, credential: Credential) -> Result<Self, OciError> {
        install_crypto_provider();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(OciError::Runtime)?;
        let protocol = if registry.plain_http() { ClientProtocol::Http } else { ClientProtocol::Https };
        let config = ClientConfig {
            protocol,
            user_agent: concat!("agent-sandbox/", env!("CARGO_PKG_VERSION")),
            connect_timeout: Some(std::time::Duration::from_secs(30)),
            read_timeout: Some(std::time::Duration::from_secs(300)),
            ..Default::default()
        };
        let auth = match credential {
            Credential::Anonymous => RegistryAuth::Anonymous,
            Credential::Basic { username, password } => RegistryAuth::Basic(username, password),
            Credential::Bearer(token) => RegistryAuth::Bearer(token),
        };
        Ok(RegistryClient { registry: registry.clone(), auth, client: Client::new(config), rt, logged_in: Default::default() })
    }

    fn reference(&self, repository: &str, reference: &str) -> Reference {
        let registry = self.registry.to_string();
        if reference.starts_with("sha256:") {
            Reference::with_digest(registry, repository.to_owned(), reference.to_owned())
        } else {
            Reference::with_tag(registry, repository.to_owned(), reference.to_owned())
        }
    }

    fn refused(&self, action: String, e: OciDistributionError) -> OciError {
        OciError::Registry { registry: self.registry.to_string(), action, why: describe(&e) }
    }

    /// Authenticates for `op` once per repository (a no-op for anonymous).
    fn login(&self, r: &Reference, op: RegistryOperation) -> Result<(), OciError> {
        if self.logged_in.borrow().contains(r.repository()) {
            return Ok(());
        }
        let result = self.rt.block_on(async {
            self.client.store_auth_if_needed(r.resolve_registry(), &self.auth).await;
            match self.auth {
                RegistryAuth::Anonymous => Ok(None),
                _ => self.client.auth(r, &self.auth, op).await,
            }
        });
        result.map_err(|e| self.refused(format!("the login for {}", r.repository()), e))?;
        self.logged_in.borrow_mut().insert(r.repository().to_owned());
        Ok(())
    }
}

/// A file as a stream of chunks for `push_blob_stream` (blocking reads are
/// fine on this private current-thread runtime); ends after the first
/// error. Generic over the chunk type, which `push_blob_stream` fixes.
fn file_chunks<B: From<Vec<u8>> + Send + 'static>(file: std::fs::File) -> impl futures::Stream<Item = Result<B, OciDistributionError>> + Send + 'static {
    use std::io::Read as _;
    const CHUNK: usize = 4 << 20;
    futures::stream::unfold(Some(file), |state| async move {
        let mut file = state?;
        let mut buf = vec![0u8; CHUNK];
        match file.read(&mut buf) {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(B::from(buf)), Some(file)))
            }
            Err(e) => Some((Err(OciDistributionError::IoError(e)), None)),
        }
    })
}

/// One line for an oci-client error (its Debug forms are noisy).
fn describe(e: &OciDistributionError) -> String {
    let mut s = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

fn is_not_found(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|x| matches!(x.code, oci_client::errors::OciErrorCode::NameUnknown)),
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        _ => false,
    }
}

impl RegistryApi for RegistryClient {
    fn registry(&self) -> String {
        self.registry.to_string()
    }

    fn list_tags(&self, repository: &str) -> Result<Vec<String>, OciError> {
        const PAGE: usize = 1000;
        let r = self.reference(repository, "latest");
        let mut all: Vec<String> = Vec::new();
        loop {
            let last = all.last().cloned();
            let page = self.rt.block_on(self.client.list_tags(&r, &self.auth, Some(PAGE), last.as_deref()));
            let page = match page {
                Ok(p) => p.tags,
                Err(e) if is_not_found(&e) => return Ok(all),
                Err(e) => return Err(self.refused(format!("listing the tags of {repository}"), e)),
            };
            let full = page.len() >= PAGE;
            let before = all.len();
            for t in page {
                if !all.contains(&t) {
                    all.push(t);
                }
            }
            if !full || all.len() == before {
                return Ok(all);
            }
        }
    }

    fn blob_exists(&self, repository: &str, digest: &Digest) -> Result<bool, OciError> {
        let r = self.reference(repository, digest.as_str());
        self.login(&r, RegistryOperation::Push)?;
        self.rt.block_on(self.client.blob_exists(&r, digest.as_str())).map_err(|e| self.refused(format!("checking blob {digest} in {repository}"), e))
    }

    fn push_blob(&self, repository: &str, blob: &Blob) -> Result<(), OciError> {
        let r = self.reference(repository, blob.digest.as_str());
        self.login(&r, RegistryOperation::Push)?;
        self.rt
            .block_on(self.client.push_blob(&r, blob.data.clone(), blob.digest.as_str()))
            .map(|_| ())
            .map_err(|e| self.refused(format!("the upload of blob {} to {repository}", blob.digest), e))
    }

    fn push_blob_file(&self, repository: &str, blob: &FileBlob) -> Result<(), OciError> {
        let r = self.reference(repository, blob.digest.as_str());
        self.login(&r, RegistryOperation::Push)?;
        let file = std::fs::File::open(&blob.path).map_err(|source| OciError::ReadBlob { digest: blob.digest.to_string(), path: blob.path.clone(), source })?;
        self.rt
            .block_on(self.client.push_blob_stream(&r, file_chunks(file), blob.digest.as_str(), Some(blob.size)))
            .map(|_| ())
            .map_err(|e| self.refused(format!("the upload of blob {} ({} bytes, from {}) to {repository}", blob.digest, blob.size, blob.path.display()), e))
    }

    fn push_manifest(&self, repository: &str, reference: &str, bytes: &[u8], media_type: &str) -> Result<(), OciError> {
        let r = self.reference(repository, reference);
        self.login(&r, RegistryOperation::Push)?;
        let content_type = media_type.parse().map_err(|_| OciError::Registry {
            registry: self.registry.to_string(),
            action: "a manifest".into(),
            why: format!("`{media_type}` is not a valid media type"),
        })?;
        self.rt
            .block_on(self.client.push_manifest_raw(&r, bytes.to_vec(), content_type))
            .map(|_| ())
            .map_err(|e| self.refused(format!("the manifest {repository}:{reference}"), e))
    }

    fn pull_manifest(&self, repository: &str, reference: &str) -> Result<(Vec<u8>, Digest), OciError> {
        let r = self.reference(repository, reference);
        let accept = [super::manifest::OCI_MANIFEST];
        let (bytes, _) = self
            .rt
            .block_on(self.client.pull_manifest_raw(&r, &self.auth, &accept))
            .map_err(|e| self.refused(format!("fetching the manifest {repository}:{reference}"), e))?;
        let digest = Digest::of(&bytes);
        Ok((bytes.to_vec(), digest))
    }
}
