//! `allowDomains` entries: host names, `*.` wildcards and the presets
//! (`@agents`, `@registries`). The syntax check and the presets' contents
//! live here, the vocabulary of the key; matching names against them is
//! the jail's (`jail::plan::allowlist`).

use super::validate::Invalid;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The presets: a name and the host names it stands for.
const PRESETS: &[(&str, &[&str])] = &[
    (
        "@agents",
        &[
            // Claude Code
            "api.anthropic.com",
            "console.anthropic.com",
            "statsig.anthropic.com",
            "claude.ai",
            // Codex
            "api.openai.com",
            "auth.openai.com",
            "chatgpt.com",
        ],
    ),
    (
        "@registries",
        &[
            // npm, yarn
            "registry.npmjs.org",
            "registry.yarnpkg.com",
            // PyPI (pip, uv)
            "pypi.org",
            "files.pythonhosted.org",
            // crates.io (cargo)
            "crates.io",
            "index.crates.io",
            "static.crates.io",
            // Go modules
            "proxy.golang.org",
            "sum.golang.org",
            // RubyGems
            "rubygems.org",
            "index.rubygems.org",
            // Maven Central
            "repo.maven.apache.org",
            "repo1.maven.org",
        ],
    ),
];

/// The names a preset stands for, if `entry` is one.
pub fn preset(entry: &str) -> Option<&'static [&'static str]> {
    PRESETS.iter().find(|(n, _)| *n == entry).map(|(_, names)| *names)
}

const LDH: &str = "not a host name: letters, digits, hyphens and underscores in dot-separated labels of 1-63 characters, none starting or ending with a hyphen";

/// One `allowDomains` entry, normalised (lower case, no trailing dot):
/// a host name (`github.com`), a wildcard for the names below a domain
/// (`*.github.com`, not `github.com` itself), or a preset.
pub(crate) fn domain(s: &str) -> Result<String, Invalid> {
    let bad = |why: &'static str| Err(Invalid::Domain(s.to_string(), why));
    let t = s.trim();
    if t.starts_with('@') {
        return match preset(t) {
            Some(_) => Ok(t.to_string()),
            None => bad("unknown preset; the presets are @agents (the agents' own APIs) and @registries (the common package registries)"),
        };
    }
    let name = t.strip_suffix('.').unwrap_or(t).to_ascii_lowercase();
    if name.is_empty() {
        return bad("the name is empty");
    }
    if name.contains("://") {
        return bad("a URL is not accepted; write the host name alone, e.g. github.com");
    }
    if name.contains('/') || name.contains(':') && name.parse::<Ipv6Addr>().is_err() {
        return bad("write the host name alone, without a port or a path");
    }
    if name.parse::<Ipv4Addr>().is_ok() {
        return bad("an address is not a name; list it under allowIp");
    }
    if name.parse::<Ipv6Addr>().is_ok() {
        return bad("IPv6 is off in the jail; list host names");
    }
    let (wild, rest) = match name.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, name.as_str()),
    };
    if rest.contains('*') || (!wild && name.contains('*')) {
        return bad("a wildcard is only accepted as the whole first label: *.example.com");
    }
    if rest.len() > 253 || !rest.split('.').all(label_ok) {
        return bad(LDH);
    }
    if wild && !rest.contains('.') {
        return bad("too broad: a wildcard needs a domain of at least two labels after it, e.g. *.example.com");
    }
    Ok(name)
}

/// One `allowDomains` entry checked and normalised as the configuration
/// would (`sandbox-install --allow-domain`, which writes it there); the
/// error says why it is not one.
pub fn normalise(entry: &str) -> Result<String, String> {
    domain(entry).map_err(|e| match e {
        Invalid::Domain(value, why) => format!("{value:?}: {why}"),
        #[allow(unreachable_patterns)]
        other => format!("{other:?}"),
    })
}

fn label_ok(l: &str) -> bool {
    (1..=63).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') && !l.starts_with('-') && !l.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_wildcards_and_presets_are_accepted_normalised() {
        for (given, want) in [
            ("github.com", "github.com"),
            ("GitHub.COM.", "github.com"),
            ("  pypi.org ", "pypi.org"),
            ("*.githubusercontent.com", "*.githubusercontent.com"),
            ("_acme-challenge.example.org", "_acme-challenge.example.org"),
            ("localhost", "localhost"),
            ("@agents", "@agents"),
            ("@registries", "@registries"),
        ] {
            assert_eq!(domain(given), Ok(want.to_string()), "{given}");
        }
    }

    #[test]
    fn every_refusal_names_the_mistake() {
        for (given, says) in [
            ("", "empty"),
            ("https://github.com", "URL"),
            ("github.com:443", "port"),
            ("github.com/org", "path"),
            ("10.0.0.1", "allowIp"),
            ("::1", "IPv6"),
            ("*", "wildcard"),
            ("*.com", "too broad"),
            ("*github.com", "first label"),
            ("api.*.com", "first label"),
            ("**.example.com", "first label"),
            ("-x.example.com", "host name"),
            ("a..b", "host name"),
            ("ex ample.com", "host name"),
            ("bücher.de", "host name"),
            ("@everything", "preset"),
        ] {
            match domain(given) {
                Err(Invalid::Domain(v, why)) => {
                    assert_eq!(v, given);
                    assert!(why.contains(says), "{given}: {why}");
                }
                other => panic!("{given}: {other:?}"),
            }
        }
        assert!(domain(&format!("{}.com", "a".repeat(64))).is_err());
        assert!(domain(&["a"; 130].join(".")).is_err());
    }

    #[test]
    fn every_preset_name_is_itself_valid() {
        for (_, names) in PRESETS {
            for n in *names {
                assert_eq!(domain(n).as_deref(), Ok(*n));
            }
        }
    }
}
