//! The key registry: names, variables, suggestions.

use super::*;

fn screaming_snake(camel: &str) -> String {
    camel
        .chars()
        .flat_map(|c| {
            let sep = c.is_ascii_uppercase().then_some('_');
            sep.into_iter().chain(std::iter::once(c.to_ascii_uppercase()))
        })
        .collect()
}

#[test]
fn registry_rows_match_their_keys() {
    for key in Key::ALL {
        assert_eq!(Key::from_name(key.name()), Some(key));
        let snake = screaming_snake(key.name());
        assert_eq!(key.env_var(), format!("{}{snake}", crate::env_vars::PREFIX));
        assert_eq!(key.alias_var(), format!("{}{snake}", crate::env_vars::ALIAS_PREFIX));
        assert!(!key.doc().is_empty());
    }
    assert_eq!(Key::EgressJail.env_var(), "AGENT_SANDBOX_EGRESS_JAIL");
    assert_eq!(Key::AllowIp.env_var(), "AGENT_SANDBOX_ALLOW_IP");
    assert_eq!(Key::from_name("egressjail"), None);
}

#[test]
fn near_misses_are_suggested() {
    let cases = [
        ("allowIP", Some(Key::AllowIp)),
        ("allow_ip", Some(Key::AllowIp)),
        ("allow-write", Some(Key::AllowWrite)),
        ("EGRESS_JAIL", Some(Key::EgressJail)),
        ("egresJail", Some(Key::EgressJail)),
        ("localPort", Some(Key::LocalPorts)),
        ("passenv", Some(Key::PassEnv)),
        ("gpus", Some(Key::Gpu)),
        ("colour", None),
        ("", None),
    ];
    for (typo, want) in cases {
        assert_eq!(suggest(typo), want, "{typo}");
    }
}
