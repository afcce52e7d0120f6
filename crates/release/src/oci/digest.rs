//! Content digests (`sha256:<hex>`), the only algorithm this module writes.

use sha2::{Digest as _, Sha256};
use std::fmt;

/// A content digest, always `sha256:` followed by 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Digest(String);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let hash = Sha256::digest(bytes);
        let mut s = String::with_capacity(71);
        s.push_str("sha256:");
        for b in hash {
            s.push_str(&format!("{b:02x}"));
        }
        Digest(s)
    }

    /// Parses `sha256:<64 hex>`; anything else is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        let hex = s.strip_prefix("sha256:")?;
        let ok = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| Digest(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_object_digest_is_the_one_the_devcontainer_cli_uses() {
        assert_eq!(Digest::of(b"{}").as_str(), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    }

    #[test]
    fn parse_accepts_only_sha256_hex() {
        let d = Digest::of(b"x");
        assert_eq!(Digest::parse(d.as_str()), Some(d));
        assert_eq!(Digest::parse("sha512:00"), None);
        assert_eq!(Digest::parse(&format!("sha256:{}", "A".repeat(64))), None);
    }
}
