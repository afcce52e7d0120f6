use super::*;
use crate::jail::host::UsernsFacts;
use crate::jail::plan::container::{ContainerNet, PolicyRule, RuleAction, Source};
use crate::jail::plan::routes::Route;

/// A container with a default route and these (gateway-less) subnets.
fn container(connected: &[&str]) -> ContainerNet {
    let rule =
        |priority, table| PolicyRule { priority, table, action: RuleAction::Lookup, to: None, selectors: vec![], invert: false, suppress_prefixlen: None };
    let mut routes = vec![Route::via(Ipv4Net::default_route(), Ipv4Addr::new(172, 17, 0, 1), "eth0")];
    routes.extend(connected.iter().map(|c| Route::on_link(c.parse().unwrap(), "eth0")));
    ContainerNet { routes, rules: vec![rule(0, 255), rule(32766, 254), rule(32767, 253)], addrs: vec![] }
}

fn facts(uid: u32, connected: &[&str]) -> HostFacts {
    HostFacts {
        pasta: "/usr/bin/passt".into(),
        resolv_conf: "nameserver 10.255.255.53\nsearch corp.example\n".into(),
        container: container(connected),
        uid,
        gid: uid,
        userns: UsernsFacts::default(),
    }
}

fn config() -> Config {
    Config {
        allow_ip: vec![Ipv4Addr::new(192, 168, 1, 50), Ipv4Addr::new(10, 1, 2, 3), Ipv4Addr::new(10, 1, 2, 3)],
        local_ports: vec![11434, 8080],
        callback_ports: vec![1455],
        ..Config::default()
    }
}

/// A root launcher's unprivileged session: the holder's maps name the
/// session's outer ids, which the holder becomes (the launcher writes them).
#[test]
fn a_root_launchers_unprivileged_session_maps_its_outer_ids() {
    let p = plan_for(&config(), &facts(0, &[]), (65533, 65533)).unwrap();
    assert_eq!((p.uid_map.as_str(), p.gid_map.as_str(), p.becomes), ("65533 65533 1\n", "65533 65533 1\n", Some((65533, 65533))));
    assert_eq!(p.pasta.args[..2], ["--runas", "0"], "pasta is the launcher's");
    assert_eq!(plan(&config(), &facts(0, &[])).unwrap().becomes, None);
}

#[test]
fn the_whole_plan_as_root() {
    let p = plan(&config(), &facts(0, &["172.17.0.0/16"])).unwrap();
    assert_eq!(
        p,
        JailPlan {
            forwarder: Ipv4Addr::new(192, 0, 2, 53),
            allow_ip: vec![Ipv4Addr::new(10, 1, 2, 3), Ipv4Addr::new(192, 168, 1, 50)],
            local_ports: vec![8080, 11434],
            callback_ports: vec![1455],
            container: vec![Destination {
                net: "172.17.0.0/16".parse().unwrap(),
                source: Source::Connected,
                why: "route table main Unicast 172.17.0.0/16 dev eth0 scope Link".into()
            }],
            internet: Internet {
                route: Some((32766, Route::via(Ipv4Net::default_route(), Ipv4Addr::new(172, 17, 0, 1), "eth0"))),
                none: None,
                conditional: vec![],
                not_first: None
            },
            follow: true,
            resolv_conf: "# agent-sandbox egress jail: DNS goes through the jail's forwarder\n\
                          search corp.example\nnameserver 192.0.2.53\n"
                .into(),
            pasta: PastaPlan {
                path: "/usr/bin/passt".into(),
                args: [
                    "--runas",
                    "0",
                    "--foreground",
                    "--quiet",
                    "--stderr",
                    "--no-netns-quit",
                    "--config-net",
                    "--ipv4-only",
                    "--no-map-gw",
                    "-t",
                    "none",
                    "-u",
                    "none",
                    "-T",
                    "none",
                    "-U",
                    "none",
                    "--ns-ifname",
                    "eth0",
                    "--dns-forward",
                    "192.0.2.53",
                ]
                .map(String::from)
                .to_vec(),
            },
            uid: 0,
            gid: 0,
            becomes: None,
            uid_map: "65534 0 1\n".into(),
            gid_map: "65534 0 1\n".into(),
            setup_timeout: Duration::from_secs(15),
            packet_filter: true,
            dead_end: true,
            report: true,
            allowlist: None,
            resolver: Some(Ipv4Addr::new(10, 255, 255, 53)),
            enforce_allowlist: true,
            dns_grace: DNS_GRACE,
        }
    );
    assert_eq!(p.route_inputs().forwarder, p.forwarder);
    assert!(p.has_relays());
}

#[test]
fn a_user_keeps_its_id_and_pasta_does_not_get_runas() {
    let p = plan(&Config::default(), &facts(1000, &[])).unwrap();
    assert!(!p.pasta.args.iter().any(|a| a == "--runas"));
    assert_eq!(p.uid_map, "1000 1000 1\n");
    assert!(!p.has_relays());
}

#[test]
fn pasta_argv_is_the_template_plus_pid_file_and_target() {
    let p = plan(&Config::default(), &facts(0, &[])).unwrap();
    let argv = pasta_argv(&p.pasta, "/proc/42/fd/7", 42);
    assert_eq!(argv.first().map(String::as_str), Some("pasta"), "argv[0] selects pasta mode of the passt binary");
    assert_eq!(argv[argv.len() - 3..], ["--pid", "/proc/42/fd/7", "42"]);
    assert_eq!(argv[1..argv.len() - 3], p.pasta.args[..]);
}

#[test]
fn the_forwarder_avoids_connected_subnets_and_allowed_addresses() {
    // This VM's own network is 192.0.2.0/24.
    let p = plan(&Config::default(), &facts(0, &["192.0.2.0/24"])).unwrap();
    assert_eq!(p.forwarder, Ipv4Addr::new(198, 51, 100, 53));
    assert!(p.resolv_conf.ends_with("nameserver 198.51.100.53\n"));
    let cfg = Config { allow_ip: vec![Ipv4Addr::new(198, 51, 100, 53)], ..Config::default() };
    let p = plan(&cfg, &facts(0, &["192.0.2.0/24"])).unwrap();
    assert_eq!(p.forwarder, Ipv4Addr::new(203, 0, 113, 53));
    let e = plan(&cfg, &facts(0, &["192.0.2.0/24", "203.0.113.0/24"])).unwrap_err();
    assert!(matches!(e, JailError::NoForwarderAddress { .. }), "{e}");
}

#[test]
fn the_forwarder_avoids_whatever_the_container_routes_elsewhere() {
    // A VPN route over the first candidate, an address over the second.
    let mut f = facts(0, &[]);
    f.container.routes.push(Route::via("192.0.2.0/24".parse().unwrap(), Ipv4Addr::new(10, 200, 0, 1), "vpn0"));
    f.container.addrs.push(crate::jail::plan::routes::IfAddr::new("lo", Ipv4Addr::new(198, 51, 100, 53), 32));
    assert_eq!(plan(&Config::default(), &f).unwrap().forwarder, Ipv4Addr::new(203, 0, 113, 53));
    let p = plan(&Config::default(), &f).unwrap();
    let routed: Vec<String> = p.route_inputs().container.iter().map(ToString::to_string).collect();
    assert_eq!(routed, ["192.0.2.0/24", "198.51.100.53/32"]);
}

#[test]
fn a_port_in_both_lists_is_refused() {
    let cfg = Config { local_ports: vec![1455], callback_ports: vec![1455], ..Config::default() };
    let e = plan(&cfg, &facts(0, &[])).unwrap_err();
    assert!(matches!(e, JailError::PortConflict { port: 1455 }), "{e}");
}

#[test]
fn port_zero_is_refused() {
    let cfg = Config { callback_ports: vec![0, 1455], ..Config::default() };
    assert!(matches!(plan(&cfg, &facts(0, &[])), Err(JailError::BadPort)));
}

#[test]
fn allow_ip_must_be_a_unicast_host() {
    for bad in [[0, 0, 0, 0], [127, 0, 0, 1], [224, 0, 0, 1], [255, 255, 255, 255]] {
        let cfg = Config { allow_ip: vec![Ipv4Addr::from(bad)], ..Config::default() };
        let e = plan(&cfg, &facts(0, &[])).unwrap_err();
        assert!(matches!(e, JailError::BadAllowIp { .. }), "{e}");
    }
}

#[test]
fn no_id_is_zero_inside_the_jail() {
    assert_eq!(id_map(0), "65534 0 1\n");
    assert_eq!(id_map(1000), "1000 1000 1\n");
    assert_eq!(inner_id(0), NOBODY);
}

/// allowDomains: the session's resolver is the jail's own forwarder on
/// its loopback; pasta still forwards for it; the filter gets its parts.
#[test]
fn allow_domains_puts_the_jails_forwarder_in_resolv_conf() {
    let config = Config { allow_domains: vec!["pypi.org".into(), "*.github.com".into()], ..Config::default() };
    let p = plan(&config, &facts(1000, &[])).unwrap();
    assert!(p.resolv_conf.ends_with("nameserver 127.0.0.53\n"), "{}", p.resolv_conf);
    assert!(p.pasta.args.windows(2).any(|w| w == ["--dns-forward", "192.0.2.53"]));
    let list = p.allowlist.clone().unwrap();
    assert!(list.allows("api.github.com") && list.allows("pypi.org") && !list.allows("github.com"));
    assert_eq!(p.filter_shape(), Some(crate::jail::plan::filter::Shape { report: true, allowlist: true }));
    let off = plan(&Config::default(), &facts(1000, &[])).unwrap();
    assert_eq!((off.allowlist.clone(), off.filter_shape()), (None, Some(crate::jail::plan::filter::Shape { report: true, allowlist: false })));
    assert!(off.resolv_conf.ends_with("nameserver 192.0.2.53\n"));
    assert_eq!(p.resolver, Some(Ipv4Addr::new(10, 255, 255, 53)));
    // Without an IPv4 resolver in the container, allowDomains cannot run.
    let mut f = facts(1000, &[]);
    f.resolv_conf = "nameserver fd00::53\n".into();
    assert!(matches!(plan(&config, &f), Err(JailError::NoResolver)));
    assert!(plan(&Config::default(), &f).is_ok());
}
