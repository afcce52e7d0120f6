//! What doctor says about the container's network as the egress jail sees
//! it: what it treats as the internet (the default route the container's
//! policy rules lead the jail's traffic to) and what of the container's
//! own routing it blocks besides the fixed ranges. Pure: the container's
//! routes, rules and addresses in (`jail::container_net`), findings out.

use super::{Finding, Severity};
use crate::jail::{destinations, internet, ContainerNet};

/// How many blocked destinations a finding names before it counts the rest.
const NAMED: usize = 8;

/// `emulator`: the user-mode emulator doctor runs under, if any (it does
/// not translate every rtnetlink request; sessions cannot start there
/// anyway, which `userns-emulated` says).
pub(crate) fn findings(container: &Result<ContainerNet, String>, uid: u32, jail_on: bool, emulator: Option<&std::path::Path>) -> Vec<Finding> {
    let serious = if jail_on { Severity::Error } else { Severity::Info };
    let net = match (container, emulator) {
        (Ok(n), _) => n,
        (Err(e), Some(emu)) => {
            let msg = format!(
                "the container's routes, rules and addresses were not read: the emulator {} does not pass on every rtnetlink request ({e}); sessions do not start under emulation",
                emu.display()
            );
            return vec![Finding::new("jail-network", "jail-network-not-checked", Severity::Warning, msg, Some(crate::fixes::EMULATED))];
        }
        (Err(e), None) => {
            let msg = format!("the container's routes, rules and addresses could not be read ({e}), so jailed sessions refuse to start");
            return vec![Finding::new(
                "jail-network",
                "jail-network-unreadable",
                serious,
                msg,
                Some("check that `ip route show table all` works in the container"),
            )];
        }
    };
    let inet = internet(net, uid);
    let blocked = destinations(net);
    let mut out = Vec::new();
    out.push(match &inet.route {
        None => Finding::new(
            "jail-network",
            "jail-no-internet",
            serious,
            format!("the egress jail has no internet to give sessions: {}", inet.describe()),
            Some("give the container a default route (docs/jail.md, \"What the internet is\")"),
        ),
        Some(_) if inet.unusual() => Finding::new(
            "jail-network",
            "jail-internet-unusual",
            Severity::Warning,
            format!(
                "the egress jail treats as the internet what the container reaches by {}: not the main table's plain default route, so hosts only that \
                 way reaches (a VPN's far side) cannot be told apart from the internet",
                inet.describe()
            ),
            Some("if that way leads to internal networks, apply an egress policy there, or route the container's default traffic elsewhere"),
        ),
        Some(_) => Finding::new(
            "jail-network",
            "jail-internet-ok",
            Severity::Ok,
            format!("the egress jail treats as the internet what the container reaches by {}", inet.describe()),
            None,
        ),
    });
    // What the fixed ranges do not cover already is what this container adds.
    let fixed: Vec<crate::jail::Ipv4Net> = crate::jail::blocked_ranges().into_iter().map(|(n, _)| n).collect();
    let outside: Vec<&crate::jail::Destination> = blocked.iter().filter(|d| !fixed.iter().any(|f| f.covers(&d.net))).collect();
    let named: Vec<String> = outside.iter().take(NAMED).map(|d| format!("{} ({})", d.net, d.why)).collect();
    let more = outside.len().saturating_sub(NAMED);
    let list = if more > 0 { format!("{}; and {more} more", named.join("; ")) } else { named.join("; ") };
    out.push(if crate::jail::covers_everything(&blocked) {
        Finding::new(
            "jail-network",
            "jail-routes-everything",
            Severity::Warning,
            format!("the container routes every address by routes more specific than its default route ({list}); the egress jail blocks them all, so sessions reach only allowIp addresses"),
            Some("route the container's internet through its default route (a VPN's redirect-gateway pair 0.0.0.0/1 + 128.0.0.0/1 counts as routes), or list what sessions need in allowIp"),
        )
    } else if outside.is_empty() {
        Finding::new(
            "jail-network",
            "jail-routes-ok",
            Severity::Ok,
            "the container routes nothing outside the fixed ranges besides its default route; routes that appear during a session are blocked as they appear and named when it ends".into(),
            None,
        )
    } else {
        Finding::new(
            "jail-network",
            "jail-routes-ok",
            Severity::Ok,
            format!(
                "besides the fixed ranges the egress jail blocks {} destination(s) the container routes other than by its default route: {list}; routes that \
                 appear during a session are blocked as they appear and named when it ends",
                outside.len()
            ),
            None,
        )
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::{PolicyRule, Route};

    fn net(routes: Vec<Route>, rules: Vec<PolicyRule>) -> ContainerNet {
        ContainerNet { routes, rules, addrs: vec![] }
    }

    fn builtin() -> Vec<PolicyRule> {
        use crate::jail::plan::container::RuleAction;
        [(0, 255), (32766, 254), (32767, 253)]
            .into_iter()
            .map(|(priority, table)| PolicyRule {
                priority,
                table,
                action: RuleAction::Lookup,
                to: None,
                selectors: vec![],
                invert: false,
                suppress_prefixlen: None,
            })
            .collect()
    }

    fn ids(f: &[Finding]) -> Vec<(&'static str, Severity)> {
        f.iter().map(|f| (f.id, f.severity)).collect()
    }

    #[test]
    fn a_plain_container_is_ok_and_names_what_is_blocked() {
        let gw = std::net::Ipv4Addr::new(192, 0, 2, 1);
        let routes = vec![Route::via(crate::jail::Ipv4Net::default_route(), gw, "eth0"), Route::via("203.0.113.0/24".parse().unwrap(), gw, "vpn0")];
        let f = findings(&Ok(net(routes, builtin())), 1000, true, None);
        assert_eq!(ids(&f), [("jail-internet-ok", Severity::Ok), ("jail-routes-ok", Severity::Ok)]);
        assert!(f[0].message.contains("default via 192.0.2.1 dev eth0 (table main, rule 32766)"), "{}", f[0].message);
        assert!(f[1].message.contains("203.0.113.0/24"), "{}", f[1].message);
    }

    #[test]
    fn no_default_route_unreadable_routes_and_a_routed_everything() {
        let f = findings(&Ok(net(vec![], builtin())), 0, true, None);
        assert_eq!(f[0].id, "jail-no-internet");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(findings(&Ok(net(vec![], builtin())), 0, false, None)[0].severity, Severity::Info);
        assert_eq!(ids(&findings(&Err("EPERM".into()), 0, true, None)), [("jail-network-unreadable", Severity::Error)]);
        let emu = std::path::Path::new("/usr/bin/qemu-aarch64-static");
        assert_eq!(ids(&findings(&Err("EOPNOTSUPP".into()), 0, true, Some(emu))), [("jail-network-not-checked", Severity::Warning)]);
        let gw = std::net::Ipv4Addr::new(10, 8, 0, 1);
        let halves = ["0.0.0.0/1", "128.0.0.0/1"].map(|n| Route::via(n.parse().unwrap(), gw, "tun0"));
        let mut routes = halves.to_vec();
        routes.push(Route::via(crate::jail::Ipv4Net::default_route(), std::net::Ipv4Addr::new(192, 0, 2, 1), "eth0"));
        let f = findings(&Ok(net(routes, builtin())), 0, true, None);
        assert_eq!(f[1].id, "jail-routes-everything", "{f:?}");
    }
}
