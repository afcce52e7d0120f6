//! Names in a registry: the registry host (`HOST[:PORT]`), repository paths
//! (`ns/feature`) and tags, validated with the rules of the OCI distribution
//! spec (the same patterns the Dev Containers CLI checks). Pure values; no
//! network.

use super::error::OciError;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A registry host with an optional port, as a user writes it
/// (`ghcr.io`, `localhost:5000`, `127.0.0.1:5050`, `[::1]:5000`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Registry {
    host: String,
    port: Option<u16>,
}

impl Registry {
    /// Parses `HOST[:PORT]`. A scheme or a path is an error: the scheme is
    /// chosen by [`Registry::plain_http`], the path is the namespace.
    pub fn parse(input: &str) -> Result<Self, OciError> {
        let bad = |why: &str| OciError::InvalidRegistry { input: input.to_owned(), why: why.to_owned() };
        if input.contains("://") {
            return Err(bad("write the host without a scheme (e.g. `ghcr.io` or `localhost:5000`); plain HTTP is used for loopback hosts only"));
        }
        if input.contains('/') {
            return Err(bad("a registry is HOST[:PORT] without a path; put the path in --namespace"));
        }
        let (host, port) = if let Some(rest) = input.strip_prefix('[') {
            let (h, after) = rest.split_once(']').ok_or_else(|| bad("an IPv6 address needs a closing `]`"))?;
            h.parse::<Ipv6Addr>().map_err(|_| bad("not an IPv6 address inside `[...]`"))?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad("expected `:PORT` after `]`"))?),
            };
            (format!("[{h}]"), port)
        } else {
            match input.split_once(':') {
                Some((h, p)) => (h.to_owned(), Some(p)),
                None => (input.to_owned(), None),
            }
        };
        let port = match port {
            None => None,
            Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| bad("the port must be a number from 1 to 65535"))?),
        };
        let host_ok = host.starts_with('[')
            || (!host.is_empty()
                && host.split('.').all(|label| {
                    !label.is_empty() && !label.starts_with('-') && !label.ends_with('-') && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                }));
        if !host_ok {
            return Err(bad("not a host name or address"));
        }
        Ok(Registry { host: host.to_ascii_lowercase(), port })
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// Whether requests go over plain HTTP: only for loopback hosts
    /// (`localhost`, 127.0.0.0/8, `[::1]`), where nothing crosses a network.
    pub(crate) fn plain_http(&self) -> bool {
        let h = self.host.as_str();
        h == "localhost"
            || h.parse::<Ipv4Addr>().is_ok_and(|a| a.is_loopback())
            || h.strip_prefix('[').and_then(|r| r.strip_suffix(']')).and_then(|a| a.parse::<Ipv6Addr>().ok()).is_some_and(|a| a.is_loopback())
    }
}

impl fmt::Display for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(p) => write!(f, "{}:{p}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

/// Checks a repository path (`ns/sub/name`): lowercase components of
/// `[a-z0-9]+([._-][a-z0-9]+)*` joined by `/`.
pub(crate) fn check_repository(path: &str) -> Result<(), OciError> {
    let component_ok = |c: &str| {
        let b = c.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || matches!(x, b'.' | b'_' | b'-'))
            && !b.windows(2).any(|w| matches!(w[0], b'.' | b'_' | b'-') && matches!(w[1], b'.' | b'_' | b'-'))
    };
    if path.split('/').all(component_ok) {
        Ok(())
    } else {
        Err(OciError::InvalidRepository { path: path.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registries_parse_with_and_without_port() {
        let r = Registry::parse("localhost:5000").unwrap();
        assert_eq!((r.host(), r.port(), r.plain_http()), ("localhost", Some(5000), true));
        let r = Registry::parse("GHCR.io").unwrap();
        assert_eq!((r.to_string(), r.plain_http()), ("ghcr.io".to_owned(), false));
        assert!(Registry::parse("127.0.0.1:5050").unwrap().plain_http());
        assert!(Registry::parse("127.1.2.3").unwrap().plain_http());
        assert!(Registry::parse("[::1]:5000").unwrap().plain_http());
        assert!(!Registry::parse("10.0.0.1:5000").unwrap().plain_http());
        assert!(!Registry::parse("localhost.example.com").unwrap().plain_http());
    }

    #[test]
    fn bad_registries_say_why() {
        for bad in ["https://ghcr.io", "ghcr.io/ns", "host:0", "host:x", "", "a..b", "-a.b", "[::1"] {
            let e = Registry::parse(bad).unwrap_err();
            assert!(matches!(e, OciError::InvalidRegistry { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn repository_paths_follow_the_distribution_spec() {
        for ok in ["ns", "ns/agent-sandbox", "a.b_c/d-e/f0", "my-org/templates/x"] {
            check_repository(ok).unwrap();
        }
        for bad in ["", "Ns", "ns/", "/ns", "ns//x", "-ns", "ns-", "a__b", "a b"] {
            assert!(check_repository(bad).is_err(), "{bad}");
        }
    }
}
