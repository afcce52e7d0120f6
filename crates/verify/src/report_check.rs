//! Check 97, judged by the launcher after the session: the end-of-session
//! report (the JSON `run --report` writes) names what the probe tried
//! that the jail's filter refused. Pure: the report's text in, an outcome
//! out.

use super::checks::allow::{unlisted, LITERALS, LITERAL_PORT};
use super::spec::JailSpec;
use super::Outcome;
use std::net::Ipv4Addr;

/// Check 94's first sample: a socket bound to the jail's interface, so
/// the filter (not the route table) refuses it.
const BOUND_SAMPLE: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 11, 12, 13), 443);

pub(super) fn judge(j: &JailSpec, nonce: &str, text: &str) -> Outcome {
    let v: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Outcome::fail(format!("the report is not JSON: {e}")),
    };
    let listed = |addr: Ipv4Addr, port: u16| {
        v["blocked"].as_array().is_some_and(|a| {
            a.iter().any(|b| b["address"] == addr.to_string() && b["port"] == port && b["protocol"] == "tcp" && b["count"].as_u64().unwrap_or(0) >= 1)
        })
    };
    let mut want: Vec<(Ipv4Addr, u16)> = Vec::new();
    let routed = super::checks::net::ROUTED_SAMPLE;
    for sample in [BOUND_SAMPLE, (*routed.ip(), routed.port())] {
        if !j.allow_ip.contains(&sample.0) {
            want.push(sample);
        }
    }
    if j.allowlist {
        want.extend(LITERALS.iter().filter(|ip| !j.allow_ip.contains(ip)).map(|ip| (*ip, LITERAL_PORT)));
    }
    let mut bad: Vec<String> = want.into_iter().filter(|(a, p)| !listed(*a, *p)).map(|(a, p)| format!("{a}:{p} (tcp) is not listed")).collect();
    if j.allowlist {
        let name = unlisted(nonce);
        let named = v["refusedNames"].as_array().is_some_and(|a| a.iter().any(|n| n["name"] == name));
        if !named {
            bad.push(format!("the refused name {name} is not listed"));
        }
    }
    if let Some(why) = v["unavailable"].as_str() {
        bad.push(format!("the report says it could not be read: {why}"));
    }
    Outcome::from_problems(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(allowlist: bool) -> JailSpec {
        JailSpec { allowlist, ..JailSpec::default() }
    }

    #[test]
    fn the_bound_sample_must_be_listed() {
        let good = r#"{"blocked": [{"address": "10.11.12.13", "port": 443, "protocol": "tcp", "count": 1, "first": "x"},
            {"address": "172.16.0.10", "port": 5432, "protocol": "tcp", "count": 2, "first": "x"}], "refusedNames": []}"#;
        assert_eq!(judge(&spec(false), "n", good).status, crate::Status::Pass);
        let bound_only = r#"{"blocked": [{"address": "10.11.12.13", "port": 443, "protocol": "tcp", "count": 1, "first": "x"}], "refusedNames": []}"#;
        let o = judge(&spec(false), "n", bound_only);
        assert_eq!(o.status, crate::Status::Fail, "a routed attempt must be counted too");
        assert!(o.detail.unwrap_or_default().contains("172.16.0.10:5432"));
        let empty = r#"{"blocked": [], "refusedNames": []}"#;
        let o = judge(&spec(false), "n", empty);
        assert_eq!(o.status, crate::Status::Fail);
        assert!(o.detail.unwrap_or_default().contains("10.11.12.13:443"));
        assert_eq!(judge(&spec(false), "n", "nope").status, crate::Status::Fail);
    }

    #[test]
    fn with_the_allowlist_the_literals_and_the_name_too() {
        let mut blocked: Vec<String> = LITERALS.iter().map(|ip| format!(r#"{{"address": "{ip}", "port": 443, "protocol": "tcp", "count": 1}}"#)).collect();
        blocked.push(r#"{"address": "10.11.12.13", "port": 443, "protocol": "tcp", "count": 2}"#.into());
        blocked.push(r#"{"address": "172.16.0.10", "port": 5432, "protocol": "tcp", "count": 1}"#.into());
        let name = unlisted("abcdef0123456789");
        let text = format!(r#"{{"blocked": [{}], "refusedNames": [{{"name": "{name}", "count": 1}}]}}"#, blocked.join(","));
        assert_eq!(judge(&spec(true), "abcdef0123456789", &text).status, crate::Status::Pass);
        let o = judge(&spec(true), "other-nonce", &text);
        assert!(o.detail.unwrap_or_default().contains("refused name"), "a name from another run is not this one");
    }
}
