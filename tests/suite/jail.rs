//! Egress jail integration tests (docs/jail.md) against real namespaces; they
//! need root, bubblewrap, passt (pasta) and iproute2, and fail (never
//! skip) when those are missing.
//!
//! Each test builds its own lab (`jail/lab.sh`: a "devcontainer" and a
//! "router" namespace with internal, metadata, DNS and "internet"
//! servers), launches a jailed session from a forked child of the test
//! (`jail/launch.rs`: single-threaded, like the launcher) and reads what
//! the session's probes (`jail/probe.sh`) print. Tests run one at a time.

use crate::support::lab::{self, launch, procs, Lab};
use crate::support::{launcher, podman};
use agent_sandbox::config::Config;
use agent_sandbox::jail::{self, HostProbe, JailError};
use agent_sandbox::jail::{GATE_FD, GATE_PATH};
use launch::{launch, Opts, REFUSED};
use nix::sys::signal::Signal;
use nix::sys::wait::WaitStatus;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::RwLockWriteGuard;
use std::time::{Duration, Instant};

const SESSION: Duration = Duration::from_secs(60);

/// Namespace tests fork; they run one at a time, and with no test of
/// another area running, so no other test thread is busy (holding a lock)
/// when the test process forks (see `support::own_machine`).
fn serial() -> crate::support::Held<crate::support::Locked<RwLockWriteGuard<'static, ()>>> {
    let guard = crate::support::own_machine();
    prerequisites();
    guard
}

fn prerequisites() {
    assert!(nix::unistd::geteuid().is_root(), "the jail tests need root (they build network namespaces)");
    for (path, fix) in [
        ("/usr/bin/bwrap", "apt-get install bubblewrap"),
        ("/usr/bin/pasta", "apt-get install passt"),
        ("/usr/bin/nsenter", "apt-get install util-linux"),
        ("/dev/net/tun", "the machine needs the tun module"),
    ] {
        assert!(Path::new(path).exists(), "{path} is missing: {fix}");
    }
    let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].iter().any(|p| Path::new(p).exists());
    assert!(ip, "ip is missing: apt-get install iproute2");
}

fn lab_config() -> Config {
    Config { allow_ip: vec![lab::ALLOWED], local_ports: vec![lab::LOCAL_PORT], callback_ports: vec![lab::CALLBACK_PORT], ..Config::default() }
}

/// `JAIL_TEST_PASTA_DIR` runs the suite with another pasta (e.g. a newer
/// distribution's), from a root-owned directory.
fn probe() -> HostProbe {
    match std::env::var_os("JAIL_TEST_PASTA_DIR") {
        Some(dir) => HostProbe { pasta_dirs: vec![dir.into()], ..HostProbe::default() },
        None => HostProbe::default(),
    }
}

/// This test binary at a path the session can see (see `visible_copy`).
fn visible_exe() -> String {
    launcher::visible_copy(&std::env::current_exe().unwrap()).display().to_string()
}

fn lab_opts(lab: &Lab, script: &str) -> Opts {
    Opts {
        probe: probe(),
        netns: Some(lab.container()),
        resolv_conf: Some(format!("search lab\noptions timeout:1 attempts:2\nnameserver {}\n", lab::DNS_SERVER)),
        config: lab_config(),
        script: script.into(),
        env: vec![("JAIL_TEST_EXE".into(), visible_exe())],
        ..Opts::default()
    }
}

/// A probe line: "KIND NAME RESULT MILLIS DETAIL...".
#[derive(Debug, Clone)]
struct Probe {
    result: String,
    ms: u64,
    detail: String,
}

fn probes(lines: &[String], kind: &str) -> BTreeMap<String, Probe> {
    lines
        .iter()
        .filter_map(|l| {
            let mut f = l.splitn(5, ' ');
            (f.next()? == kind).then_some(())?;
            let name = f.next()?.to_string();
            let result = f.next()?.to_string();
            let ms = f.next()?.parse().ok()?;
            Some((name, Probe { result, ms, detail: f.next().unwrap_or("").trim().to_string() }))
        })
        .collect()
}

fn run_session(opts: Opts) -> (i32, Vec<String>) {
    let mut l = launch(opts);
    let code = l.code(SESSION);
    (code, l.output())
}

// ---------------------------------------------------------------- matrix

#[test]
fn reachability_matrix() {
    let _s = serial();
    let lab = Lab::up();
    let mut script = String::new();
    for (name, addr) in lab::ROUTER_ADDRS {
        script += &format!("tcp {name} {addr} {}\n", lab::BANNER_PORT);
    }
    script += &format!("tcp gateway {} {}\n", lab::GATEWAY, lab::BANNER_PORT);
    script += &format!("tcp subnet_host {} {}\n", lab::SUBNET_HOST, lab::BANNER_PORT);
    script += &format!("tcp container_loopback 127.0.0.1 {}\n", lab::LOOPBACK_ONLY_PORT);
    script += &format!("tcp container_address {} {}\n", lab::CONTAINER, lab::ALL_ADDRS_PORT);
    // What the container routes other than by its default route, and its
    // other addresses (outside every fixed range).
    for (name, addr) in lab::FAR {
        script += &format!("tcp {name} {addr} {}\n", lab::BANNER_PORT);
    }
    script += &format!("tcp container_extra {} {}\n", lab::CONTAINER_EXTRA, lab::ALL_ADDRS_PORT);
    script += &format!("tcp container_kipvs {} {}\n", lab::CONTAINER_KIPVS, lab::ALL_ADDRS_PORT);
    script += &format!("tcp gateway_to_container_loopback {} {}\n", lab::GATEWAY, lab::LOOPBACK_ONLY_PORT);
    script += "dns internet_fqdn internet.lab\ndns internet_search internet\ndns unknown nothing.lab\nipv6\nroutes\n";
    let (code, out) = run_session(lab_opts(&lab, &script));
    assert_eq!(code, 0, "session failed:\n{}", out.join("\n"));
    let tcp = probes(&out, "TCP");
    let ctx = out.join("\n");

    for open in ["internet", "allowed", "gateway"] {
        let p = tcp.get(open).unwrap_or_else(|| panic!("no probe {open}:\n{ctx}"));
        assert_eq!(p.result, "open", "{open} must be reachable: {p:?}\n{ctx}");
    }
    assert_eq!(tcp["internet"].detail, format!("lab {}", lab::INTERNET));
    assert_eq!(tcp["allowed"].detail, format!("lab {}", lab::ALLOWED));
    let blocked: Vec<&str> = lab::ROUTER_ADDRS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !["internet", "allowed"].contains(n))
        .chain(["subnet_host", "container_loopback", "container_address", "gateway_to_container_loopback", "container_extra", "container_kipvs"])
        .chain(lab::FAR.iter().map(|(n, _)| *n))
        .collect();
    for name in blocked {
        let p = tcp.get(name).unwrap_or_else(|| panic!("no probe {name}:\n{ctx}"));
        assert_eq!(p.result, "blocked", "{name} must be unreachable: {p:?}\n{ctx}");
        // The jail's own refusals are immediate; a closed port on the
        // (reachable) gateway answers however pasta and the gateway do.
        if name != "gateway_to_container_loopback" {
            assert!(p.ms < 1500, "{name} must fail fast, took {} ms: {p:?}", p.ms);
        }
        assert!(!p.detail.contains("secret") && !p.detail.starts_with("lab "), "{name} leaked: {p:?}");
    }
    // Private ranges, metadata, the subnet, the container's own routing:
    // routed into the dead end, where the filter rejects them.
    for name in ["rfc1918_10", "metadata", "subnet_host", "vpn_route", "table_to_rule", "table_ipproto_rule", "container_extra", "container_kipvs"] {
        assert!(tcp[name].detail.contains("No route to host"), "{name} is rejected in the dead end: {:?}", tcp[name]);
    }

    let dns = probes(&out, "DNS");
    assert_eq!(dns["internet_fqdn"].result, "resolved", "{ctx}");
    assert_eq!(dns["internet_fqdn"].detail, lab::INTERNET.to_string());
    assert_eq!(dns["internet_search"].detail, lab::INTERNET.to_string(), "search line kept: {ctx}");
    assert_eq!(dns["unknown"].result, "failed", "{ctx}");

    assert_eq!(probes(&out, "IPV6")["state"].result, "off", "{ctx}");
    let routes: Vec<&str> = out.iter().filter_map(|l| l.strip_prefix("ROUTE main ok 0 ")).collect();
    let expected = [
        "default via 198.18.0.1 dev eth0",
        "10.0.0.0/8 dev blocked scope link linkdown",
        "100.64.0.0/10 dev blocked scope link linkdown",
        "168.63.129.16 dev blocked scope link linkdown",
        "169.254.0.0/16 dev blocked scope link linkdown",
        "172.16.0.0/12 dev blocked scope link linkdown",
        "192.168.0.0/16 dev blocked scope link linkdown",
        "192.0.2.53 via 198.18.0.1 dev eth0",
        "10.99.0.7 via 198.18.0.1 dev eth0",
        "198.18.0.0/24 dev blocked scope link linkdown",
        "198.18.0.1 dev eth0 scope link",
        // The container's own routing: table 100, table 101, its addresses
        // on lo and kipvs0, the VPN's subnet (10.200.0.0/24, 10.8.0.0/24,
        // 10.77.0.1 and 169.254.169.254 are inside fixed ranges).
        "198.19.7.0/24 dev blocked scope link linkdown",
        "198.19.8.0/24 dev blocked scope link linkdown",
        "198.51.100.7 dev blocked scope link linkdown",
        "198.51.100.9 dev blocked scope link linkdown",
        "203.0.113.0/24 dev blocked scope link linkdown",
        "224.0.0.0/4 dev blocked scope link metric 1 linkdown",
        "255.255.255.255 dev blocked scope link linkdown",
    ];
    let mut want: Vec<&str> = expected.to_vec();
    want.sort();
    let mut got = routes.clone();
    got.sort();
    assert_eq!(
        got, want,
        "the session's main table is exactly the plan (no 10.8.0.0/24, no 169.254.169.254 route, the container's other routes into the dead end)"
    );
    assert_eq!(probes(&out, "ROUTE")["count"].detail, expected.len().to_string(), "no other table has routes: {ctx}");
}

#[test]
fn routes_cannot_be_changed_from_inside() {
    let _s = serial();
    let lab = Lab::up();
    let script = "change route_add ip route add blackhole 203.0.113.0/24
change route_del ip route del default
change link_down ip link set eth0 down
change addr_add ip addr add 10.0.0.9/32 dev eth0
change rule_add ip rule add pref 10 lookup 100
change ipv6_on sh -c 'echo 0 > /proc/sys/net/ipv6/conf/all/disable_ipv6'
change forwarding_on sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
change userns_route_add unshare -U --keep-caps ip route add blackhole 203.0.113.0/24
change userns_route_del unshare -U --keep-caps ip route del default
change userns_rule_add unshare -U --keep-caps ip rule add pref 10 lookup 100
change userns_link_down unshare -U --keep-caps ip link set eth0 down
change userns_ipv6_on unshare -U --keep-caps sh -c 'echo 0 > /proc/sys/net/ipv6/conf/all/disable_ipv6'
change root_userns_route_add unshare -Ur ip route add blackhole 203.0.113.0/24
change userns_works unshare -U --keep-caps sh -c 'grep -q CapEff:.*1ff /proc/self/status'
routes
ipv6
";
    let (code, out) = run_session(lab_opts(&lab, script));
    assert_eq!(code, 0, "{}", out.join("\n"));
    let changes = probes(&out, "CHANGE");
    assert_eq!(changes.get("userns_works").map(|p| p.result.as_str()), Some("ok"), "nested user namespaces must work for the test to mean anything: {out:?}");
    for (name, p) in &changes {
        if name != "userns_works" {
            assert_eq!(p.result, "denied", "{name} must be denied: {p:?}");
        }
    }
    assert_eq!(changes.len(), 14, "{out:?}");
    assert!(out.iter().any(|l| l == "ROUTE main ok 0 default via 198.18.0.1 dev eth0"), "{out:?}");
    assert_eq!(probes(&out, "IPV6")["state"].result, "off", "{out:?}");
}

// ---------------------------------------------------------------- relays

#[test]
fn relays_move_data_both_ways() {
    let _s = serial();
    let lab = Lab::up();
    let script = format!(
        "echo_relay local {} 1572864\n\
         JAIL_TEST_HELPER=callback \"$JAIL_TEST_EXE\" suite::jail::helper_callback_listener --exact --nocapture --test-threads=1 -q\n\
         echo_relay local_again {} 65536\n",
        lab::LOCAL_PORT,
        lab::LOCAL_PORT
    );
    let mut l = launch(lab_opts(&lab, &script));
    let listening = l.wait_line("CALLBACK listening", SESSION);
    assert!(listening.is_some(), "the session's listener did not start:\n{}", l.output().join("\n"));
    let reply = lab.connect_from(&lab.container(), SocketAddr::from(([127, 0, 0, 1], lab::CALLBACK_PORT)));
    assert_eq!(reply.as_deref().ok(), Some("callback-ok\n"), "callback relay: {reply:?}");
    let code = l.code(SESSION);
    let out = l.output();
    assert_eq!(code, 0, "{}", out.join("\n"));
    let relays = probes(&out, "RELAY");
    assert_eq!(relays["local"].result, "intact", "1.5 MiB through the local-port relay: {out:?}");
    assert_eq!(relays["local_again"].result, "intact", "{out:?}");
    assert!(out.iter().any(|l| l.contains("CALLBACK served")), "{out:?}");
}

#[test]
fn busy_callback_port_is_a_warning() {
    let _s = serial();
    let mut lab = Lab::up();
    let dc = lab.container();
    lab.serve(&dc, SocketAddr::from(([127, 0, 0, 1], lab::CALLBACK_PORT)), lab::Server::Fixed("already here"));
    let (code, out) = run_session(lab_opts(&lab, "echo SESSION ran"));
    assert_eq!(code, 0, "{}", out.join("\n"));
    assert!(out.iter().any(|l| l == "SESSION ran"), "{out:?}");
    let warning = out.iter().find(|l| l.contains("callback port 1455 is busy"));
    assert!(warning.is_some_and(|w| w.contains("WARN")), "a warning names the busy port: {out:?}");
}

/// Not a test of its own: the listener a session starts for the callback
/// test (run inside the jail by `relays_move_data_both_ways`).
#[test]
fn helper_callback_listener() {
    let _machine = crate::support::share_machine();
    if std::env::var("JAIL_TEST_HELPER").as_deref() != Ok("callback") {
        return;
    }
    use std::io::Write;
    let l = std::net::TcpListener::bind(("127.0.0.1", lab::CALLBACK_PORT)).expect("bind in the jail");
    l.set_nonblocking(true).unwrap();
    println!("CALLBACK listening");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok((mut s, _)) = l.accept() {
            s.set_nonblocking(false).unwrap();
            s.write_all(b"callback-ok\n").unwrap();
            println!("CALLBACK served");
            return;
        }
        assert!(std::time::Instant::now() < deadline, "no callback connection");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// In the launcher child: become an ordinary user (uid/gid 1000, no
/// capabilities), as in a devcontainer whose remote user runs the agent,
/// with a TUN device that user may open (as `--device` gives containers;
/// this VM's own is root-only), made in a private mount namespace.
fn become_user() -> Result<(), String> {
    use nix::mount::{mount, MsFlags};
    use nix::sys::stat::{mknod, Mode, SFlag};
    let err = |what: &'static str| move |e: nix::errno::Errno| format!("{what}: {e}");
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS).map_err(err("unshare"))?;
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>).map_err(err("private"))?;
    mount(Some("tmpfs"), "/dev/net", Some("tmpfs"), MsFlags::empty(), Some("mode=755")).map_err(err("tmpfs"))?;
    mknod("/dev/net/tun", SFlag::S_IFCHR, Mode::from_bits_truncate(0o666), nix::sys::stat::makedev(10, 200)).map_err(err("mknod"))?;
    std::fs::set_permissions("/dev/net/tun", std::fs::Permissions::from_mode(0o666)).map_err(|e| e.to_string())?;
    let (uid, gid) = (nix::unistd::Uid::from_raw(1000), nix::unistd::Gid::from_raw(1000));
    nix::unistd::setgroups(&[]).map_err(err("setgroups"))?;
    nix::unistd::setresgid(gid, gid, gid).map_err(err("setresgid"))?;
    nix::unistd::setresuid(uid, uid, uid).map_err(err("setresuid"))?;
    // As if started by the user (setresuid from root left it undumpable).
    nix::sys::prctl::set_dumpable(true).map_err(err("dumpable"))
}

#[test]
fn works_for_a_non_root_launcher() {
    let _s = serial();
    let lab = Lab::up();
    let script = format!(
        "echo \"ID $(id -u)\"\ntcp internet {} 80\ntcp rfc1918_10 10.1.2.3 80\ntcp metadata 169.254.169.254 80\n\
         dns internet_fqdn internet.lab\nchange route_add ip route add blackhole 203.0.113.0/24\n\
         echo_relay local {} 262144\nipv6\n",
        lab::INTERNET,
        lab::LOCAL_PORT
    );
    let mut opts = lab_opts(&lab, &script);
    opts.before = become_user;
    let (code, out) = run_session(opts);
    let ctx = out.join("\n");
    assert_eq!(code, 0, "{ctx}");
    assert!(out.iter().any(|l| l == "ID 1000"), "the session runs as the user: {ctx}");
    let tcp = probes(&out, "TCP");
    assert_eq!(tcp["internet"].result, "open", "{ctx}");
    assert_eq!(tcp["rfc1918_10"].result, "blocked", "{ctx}");
    assert_eq!(tcp["metadata"].result, "blocked", "{ctx}");
    assert_eq!(probes(&out, "DNS")["internet_fqdn"].detail, lab::INTERNET.to_string(), "{ctx}");
    assert_eq!(probes(&out, "CHANGE")["route_add"].result, "denied", "{ctx}");
    assert_eq!(probes(&out, "RELAY")["local"].result, "intact", "{ctx}");
    assert_eq!(probes(&out, "IPV6")["state"].result, "off", "{ctx}");
}

// ---------------------------------------------------------------- exit paths

/// A session that waits, its helpers, and a temp dir to check.
struct Running {
    launched: launch::Launched,
    helpers: Vec<procs::Proc>,
    /// The zombies pasta leaves while it runs.
    zombies: Vec<procs::Proc>,
    tmp: tempfile::TempDir,
    lab: Lab,
}

fn start_waiting_session(script: &str) -> Running {
    start_waiting_session_with(script, lab_config())
}

fn start_waiting_session_with(script: &str, config: Config) -> Running {
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = lab_opts(&lab, script);
    opts.config = config;
    opts.tmpdir = Some(tmp.path().to_path_buf());
    let launched = launch(opts);
    assert!(launched.wait_line("SESSION READY", SESSION).is_some(), "{:?}", launched.output());
    let all = procs::descendants_with_zombies(launched.pid.as_raw());
    let (zombies, helpers): (Vec<_>, Vec<_>) = all.into_iter().partition(|p| p.state == 'Z');
    let comms: Vec<&str> = helpers.iter().map(|p| p.comm.as_str()).collect();
    let is_pasta = |p: &procs::Proc| {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", p.pid)).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains("--dns-forward")
    };
    assert!(helpers.iter().any(is_pasta), "pasta runs: {comms:?}");
    assert!(comms.contains(&"bwrap") && comms.iter().any(|c| ["sleep", "bash"].contains(c)), "the session runs: {comms:?}");
    assert!(helpers.len() >= 6, "holder, sandbox, pasta, relay and factory expected: {helpers:?}");
    let holder = helpers.iter().find(|p| p.ppid == launched.pid.as_raw() && p.comm == "bwrap").expect("the holder became bwrap");
    let status = std::fs::read_to_string(format!("/proc/{}/status", holder.pid)).unwrap();
    assert!(status.contains("CapEff:\t0000000000000000"), "the holder keeps no capability after its exec:\n{status}");
    Running { launched, helpers, zombies, tmp, lab }
}

fn assert_nothing_left(r: &Running, reaped: bool) {
    let left = procs::wait_gone(&r.helpers, Duration::from_secs(5));
    assert!(left.is_empty(), "helpers survived the launcher: {left:?}");
    if reaped {
        // Not even zombies: the launcher reaps what pasta leaves behind
        // (a container's pid 1 often does not).
        let all: Vec<_> = r.helpers.iter().chain(&r.zombies).cloned().collect();
        let left = procs::wait_reaped(&all, Duration::from_secs(2));
        assert!(left.is_empty(), "zombies left: {left:?}");
    }
    let files: Vec<PathBuf> = std::fs::read_dir(r.tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(files.is_empty(), "temp files left: {files:?}");
}

#[test]
fn normal_exit_passes_the_status_and_leaves_nothing() {
    let _s = serial();
    let mut r = start_waiting_session("echo SESSION READY; sleep 1; exit 3");
    let code = r.launched.code(SESSION);
    assert_eq!(code, 3, "{:?}", r.launched.output());
    assert_nothing_left(&r, true);
    let leftovers: Vec<_> = all_pasta_for(&r.lab);
    assert!(leftovers.is_empty(), "pasta processes of this lab left: {leftovers:?}");
}

/// bwrap is started before the routes are locked; the command it runs
/// must not be: its first look at the route table finds the lock. The
/// gate it passed leaves nothing behind: not its descriptor, not an
/// ignored signal.
#[test]
fn the_command_starts_only_after_the_routes_are_locked() {
    let _s = serial();
    let lab = Lab::up();
    let script = format!(
        "awk '$2 == \"0000000A\" && $8 == \"000000FF\" {{ b = 1 }} END {{ print b ? \"ROUTES locked\" : \"ROUTES open\" }}' /proc/net/route\n\
         if [ -e /proc/self/fd/{GATE_FD} ]; then echo GATE kept; else echo GATE closed; fi\n\
         grep '^SigIgn:' /proc/self/status\n"
    );
    let (code, out) = run_session(lab_opts(&lab, &script));
    assert_eq!(code, 0, "{out:?}");
    assert!(out.iter().any(|l| l == "ROUTES locked"), "the command ran before the lock: {out:?}");
    assert!(out.iter().any(|l| l == "GATE closed"), "the session inherited the gate: {out:?}");
    // The gate is a Rust program, whose runtime ignores SIGPIPE; the
    // command must get it back (signal N is bit N-1).
    let ignored = out.iter().find_map(|l| l.strip_prefix("SigIgn:\t")).expect("SigIgn line");
    let ignored = u64::from_str_radix(ignored, 16).unwrap();
    assert_eq!(ignored & (1 << (Signal::SIGPIPE as u64 - 1)), 0, "SIGPIPE ignored in the session: {out:?}");
}

/// The product itself (`agent-sandbox run`: its whole sandbox plan, the
/// gate, Debian 12's pasta on this machine) in the lab: the command finds
/// the routes locked at once, and the matrix holds.
#[test]
fn agent_sandbox_run_holds_in_the_lab() {
    let _s = serial();
    let lab = Lab::up();
    let td = launcher::TestDir::new("jail-product");
    let ws = td.root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let script = format!(
        "awk '$2 == \"0000000A\" && $8 == \"000000FF\" {{ b = 1 }} END {{ print b ? \"ROUTES locked\" : \"ROUTES open\" }}' /proc/net/route\n\
         echo \"SANDBOX $IS_SANDBOX\"\n\
         tcp internet {} 80\ntcp rfc1918_10 10.1.2.3 80\ntcp metadata 169.254.169.254 80\ntcp subnet_host {} {}\n\
         dns internet_fqdn internet.lab\nchange route_add ip route add blackhole 203.0.113.0/24\nipv6\n",
        lab::INTERNET,
        lab::SUBNET_HOST,
        lab::BANNER_PORT
    );
    let mut opts = lab_opts(&lab, &script);
    opts.product_in = Some(ws.clone());
    let (code, out) = run_session(opts);
    let ctx = out.join("\n");
    assert_eq!(code, 0, "{ctx}");
    assert!(out.iter().any(|l| l == "ROUTES locked"), "{ctx}");
    assert!(out.iter().any(|l| l == "SANDBOX 1"), "{ctx}");
    let tcp = probes(&out, "TCP");
    assert_eq!(tcp["internet"].result, "open", "{ctx}");
    for blocked in ["rfc1918_10", "metadata", "subnet_host"] {
        assert_eq!(tcp[blocked].result, "blocked", "{blocked}: {ctx}");
    }
    assert_eq!(probes(&out, "DNS")["internet_fqdn"].detail, lab::INTERNET.to_string(), "{ctx}");
    assert_eq!(probes(&out, "CHANGE")["route_add"].result, "denied", "{ctx}");
    assert_eq!(probes(&out, "IPV6")["state"].result, "off", "{ctx}");
}

// ---------------------------------------------------------------- the second layer

/// The unicast targets the bypass probe tries from inside (every blocked
/// lab host: the router's internal addresses, a neighbour on the connected
/// subnet, the container's other address) plus `internet`, the control
/// that must get through. "NAME=ADDRESS" words.
fn bypass_targets() -> String {
    let mut t: Vec<String> = lab::ROUTER_ADDRS.iter().filter(|(n, _)| *n != "allowed").map(|(n, a)| format!("{n}={a}")).collect();
    t.push(format!("subnet_host={}", lab::SUBNET_HOST));
    t.push(format!("container_other={}", lab::CONTAINER_OTHER));
    t.push(format!("container_extra={}", lab::CONTAINER_EXTRA));
    t.push(format!("container_kipvs={}", lab::CONTAINER_KIPVS));
    t.extend(lab::FAR.iter().map(|(n, a)| format!("{n}={a}")));
    t.join(" ")
}

/// Runs the bypass probe (`helper_bypass`) in a jailed session of the lab.
fn bypass_session(lab: &Lab, edit: fn(&mut jail::JailPlan), before: fn() -> Result<(), String>) -> Vec<String> {
    let script = "JAIL_TEST_HELPER=bypass \"$JAIL_TEST_EXE\" suite::jail::helper_bypass --exact --nocapture --test-threads=1 -q\n";
    let mut opts = lab_opts(lab, script);
    opts.env.push(("JAIL_TEST_TARGETS".into(), bypass_targets()));
    opts.edit = edit;
    opts.before = before;
    let (code, out) = run_session(opts);
    assert_eq!(code, 0, "session failed:\n{}", out.join("\n"));
    assert!(out.iter().any(|l| l == "BYPASS done"), "the probe did not finish:\n{}", out.join("\n"));
    lab.settle(&[]);
    out
}

/// "PROTO METHOD NAME RESULT ms=N" lines of the bypass probe (the
/// milliseconds dropped).
fn bypass_results(out: &[String]) -> Vec<(String, String, String, String)> {
    bypass_timed(out).into_iter().map(|(p, m, n, r, _)| (p, m, n, r)).collect()
}

/// The same, with how long each attempt took to end.
fn bypass_timed(out: &[String]) -> Vec<(String, String, String, String, u64)> {
    out.iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            match f.as_slice() {
                [proto @ ("UDP" | "TCP"), m, n, r, ms] => {
                    let ms = ms.strip_prefix("ms=")?.parse().ok()?;
                    Some((proto.to_string(), m.to_string(), n.to_string(), r.to_string(), ms))
                }
                _ => None,
            }
        })
        .collect()
}

/// A blocked attempt fails at once (the jail rejects, it does not drop;
/// the kernel does not rate-limit the rejects in the jail's namespace):
/// well within the probe's 2 s connect wait, which a dropped SYN would
/// wait out as `Pending`.
const REJECTED_WITHIN_MS: u64 = 500;

fn assert_nothing_left_the_jail(lab: &Lab, out: &[String]) {
    let ctx = out.join("\n");
    let results = bypass_results(out);
    assert!(results.len() > 100, "too few attempts:\n{ctx}");
    let mut slowest: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for (proto, method, name, result, ms) in bypass_timed(out) {
        if name == "internet" {
            continue;
        }
        let left = result == "Sent" || result == "Connected";
        assert!(!left, "{proto} to {name} via {method}: {result}\n{ctx}");
        assert!(
            result.starts_with("Refused(") && ms <= REJECTED_WITHIN_MS,
            "{proto} to {name} via {method}: {result} after {ms} ms, not rejected at once\n{ctx}"
        );
        // A reset means something answered; the jail's refusals are the
        // filter's ICMP (EHOSTUNREACH: an answer pasta never gives, it
        // resets what it cannot reach) or the local stack's (TCP to a
        // broadcast or multicast address).
        assert_ne!(result, "Refused(ECONNREFUSED)", "{proto} to {name} via {method}: reset\n{ctx}");
        // A socket bound to the interface meets the filter; so does a
        // routed one, through the dead end, and a routed datagram gets
        // the reject's EPERM (not a blackhole's EINVAL, which the report
        // would never count).
        if proto == "TCP" && (method == "SO_BINDTODEVICE" || method == "SO_BINDTOIFINDEX" || method == "routed") {
            assert_eq!(result, "Refused(EHOSTUNREACH)", "{proto} to {name} via {method}: not the filter's reject\n{ctx}");
        }
        if proto == "UDP" && method == "routed" {
            assert_eq!(result, "Refused(EPERM)", "{proto} to {name} via {method}: not the filter's reject\n{ctx}");
        }
        let worst = slowest.entry((proto, method)).or_default();
        *worst = (*worst).max(ms);
    }
    eprintln!("slowest refusal per protocol and way of naming the interface (ms): {slowest:?}");
    // The control got through, so silence from the sinks means something.
    let control = results.iter().find(|(p, m, n, _)| p == "UDP" && m == "routed" && n == "internet");
    assert_eq!(control.map(|r| r.3.as_str()), Some("Sent"), "{ctx}");
    assert!(results.iter().any(|(p, m, n, r)| p == "TCP" && m == "routed" && n == "internet" && r == "Connected"), "{ctx}");
    let arrivals = lab.arrivals();
    assert!(arrivals.iter().any(|a| a.ends_with("BYPASS routed internet")), "the control datagram did not arrive: {arrivals:?}");
    let leaked: Vec<&String> = arrivals.iter().filter(|a| !a.ends_with(" internet")).collect();
    assert!(leaked.is_empty(), "datagrams left the jail: {leaked:?}\n{ctx}");
}

/// An adversarial review got through the route table with every way of
/// naming the outgoing interface, and with multicast: each is tried here
/// against every blocked lab host (UDP into sinks, TCP to listeners).
#[test]
fn interface_bound_sockets_multicast_and_broadcast_stay_in_the_jail() {
    let _s = serial();
    let lab = Lab::up();
    let out = bypass_session(&lab, |_| {}, || Ok(()));
    assert_nothing_left_the_jail(&lab, &out);
}

#[test]
fn interface_bound_sockets_stay_in_the_jail_for_a_non_root_launcher() {
    let _s = serial();
    let lab = Lab::up();
    let out = bypass_session(&lab, |_| {}, become_user);
    assert!(out.iter().any(|l| l == "BYPASS uid 1000"), "{out:?}");
    assert_nothing_left_the_jail(&lab, &out);
}

/// The same probe with only the route layer (the packet filter removed
/// from the plan): the review's findings come back, so the tests above
/// can fail.
#[test]
fn routes_alone_let_interface_bound_sockets_out() {
    let _s = serial();
    let lab = Lab::up();
    let out = bypass_session(&lab, |p| p.packet_filter = false, || Ok(()));
    let ctx = out.join("\n");
    let arrivals = lab.arrivals();
    for (method, name) in [
        ("SO_BINDTODEVICE", "rfc1918_10"),
        ("SO_BINDTOIFINDEX", "metadata"),
        ("IP_UNICAST_IF", "subnet_host"),
        ("IP_PKTINFO", "cgnat"),
        ("SO_BINDTODEVICE", "container_other"),
        ("SO_BINDTODEVICE", "vpn_route"),
        ("IP_UNICAST_IF", "container_extra"),
    ] {
        let payload = format!("BYPASS {method} {name}");
        assert!(arrivals.iter().any(|a| a.ends_with(&payload)), "{payload} should arrive without the filter: {arrivals:?}\n{ctx}");
    }
    assert!(arrivals.iter().any(|a| a.ends_with("BYPASS IP_MULTICAST_IF mcast_5353")), "mDNS should leave without the filter: {arrivals:?}");
    // What the routes send into the dead end stops there, filter or not.
    let routed: Vec<&String> = arrivals.iter().filter(|a| a.contains("BYPASS routed ") && !a.ends_with(" internet")).collect();
    assert!(routed.is_empty(), "routed datagrams left through the dead end: {routed:?}\n{ctx}");
    let tcp = bypass_results(&out);
    assert!(tcp.iter().any(|(p, m, n, r)| p == "TCP" && m == "SO_BINDTODEVICE" && n == "rfc1918_10" && r == "Connected"), "{ctx}");
}

/// `agent-sandbox verify` itself in the lab (as root, Debian 12's pasta):
/// its checks of the second layer pass, the lab's sinks get nothing; with
/// `--weaken jail-filter` those checks fail and the datagrams arrive; with
/// `--weaken jail-dead-end` the plain attempts' check and the report's fail
/// and the rest holds. (In the lab, so a weakened run's traffic reaches
/// only the lab's hosts.)
#[test]
fn verify_proves_the_second_layer_in_the_lab() {
    let _s = serial();
    let lab = Lab::up();
    let td = launcher::TestDir::new("jail-verify");
    let ws = td.root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let run_verify = |extra: &[&str]| -> serde_json::Value {
        let mut opts = lab_opts(&lab, "");
        opts.product_in = Some(ws.clone());
        let mut args: Vec<String> = ["verify", "--json"].iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        opts.product_args = Some(args);
        let (_, out) = run_session(opts);
        let json = out.iter().skip_while(|l| !l.starts_with('{')).cloned().collect::<Vec<_>>().join("\n");
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("verify --json: {e}\n{}", out.join("\n")))
    };
    let layer2 = [
        "jail-so-bindtodevice-blocked",
        "jail-so-bindtoifindex-blocked",
        "jail-ip-unicast-if-blocked",
        "jail-ip-pktinfo-blocked",
        "jail-multicast-blocked",
        "jail-broadcast-blocked",
        "jail-bound-tcp-rejected",
        "jail-routed-attempts-rejected",
    ];
    let status = |v: &serde_json::Value, name: &str| -> String {
        v["checks"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == name))
            .map(|c| c["status"].as_str().unwrap_or("?").to_string())
            .unwrap_or_else(|| format!("no check {name}: {v}"))
    };
    let v = run_verify(&[]);
    for name in layer2.iter().chain(&["jail-filter-locked"]) {
        assert_eq!(status(&v, name), "pass", "{name}: {v:#}");
    }
    assert!(lab.arrivals().is_empty(), "verify's datagrams arrived: {:?}", lab.arrivals());
    let v = run_verify(&["--weaken", "jail-filter"]);
    for name in layer2 {
        assert_eq!(status(&v, name), "fail", "{name} must fail without the packet filter: {v:#}");
    }
    assert_eq!(status(&v, "jail-filter-locked"), "pass", "{v:#}");
    let arrived = lab.arrivals();
    assert!(arrived.iter().any(|a| a.contains("must not leave the jail")), "without the filter verify's datagrams reach the lab: {arrived:?}");
    // Blackholes instead of the dead end: plain attempts fail on the
    // route, before the filter could answer or count them.
    let v = run_verify(&["--weaken", "jail-dead-end"]);
    for name in ["jail-routed-attempts-rejected", "jail-report-lists-refusals"] {
        assert_eq!(status(&v, name), "fail", "{name} must fail without the dead end: {v:#}");
    }
    for name in layer2.iter().filter(|n| **n != "jail-routed-attempts-rejected") {
        assert_eq!(status(&v, name), "pass", "{name}: {v:#}");
    }
}

/// Debian 13's pasta, in a container that shares the lab's "devcontainer"
/// namespace (so its traffic, weakened or not, reaches only the lab):
/// `verify` as root and as an ordinary user passes with the packet filter
/// and nothing arrives at the lab's sinks; without it the second layer's
/// checks fail and the datagrams arrive; without the container's own
/// routing blocked, its checks fail; and a route added while a session of
/// the product runs is blocked as it appears and named afterwards.
#[test]
fn the_second_layer_holds_with_debian_13_pasta_in_a_container() {
    let _s = serial();
    let lab = Lab::up();
    let recipe = "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                  bubblewrap passt ca-certificates >/dev/null && useradd -m -u 1000 dev";
    let image = podman::cached_image("jail-trixie", podman::TRIXIE, recipe);
    let files = tempfile::tempdir().unwrap();
    let resolv = files.path().join("resolv.conf");
    std::fs::write(&resolv, format!("search lab\nnameserver {}\n", lab::DNS_SERVER)).unwrap();
    let network = format!("ns:/run/netns/{}", lab.container());
    let bind = format!("{}:/etc/resolv.conf:ro", resolv.display());
    let c = podman::Container::start_on(&network, &image, &["--device", "/dev/net/tun", "--security-opt", "unmask=/proc/*", "-v", &bind]);
    c.sh("chmod 666 /dev/net/tun && mkdir -p /work/root /work/dev && chown dev /work/dev");
    let layer2 = [
        "jail-so-bindtodevice-blocked",
        "jail-so-bindtoifindex-blocked",
        "jail-ip-unicast-if-blocked",
        "jail-ip-pktinfo-blocked",
        "jail-multicast-blocked",
        "jail-broadcast-blocked",
        "jail-bound-tcp-rejected",
        "jail-routed-attempts-rejected",
    ];
    let own = ["jail-blocks-container-routes", "jail-blocks-container-addresses"];
    for user in ["root", "dev"] {
        let verify = |extra: &str| -> (Option<i32>, serde_json::Value) {
            let out = c.exec_full(user, &[], &["sh", "-c", &format!("cd /work/{user} && /opt/ast/agent-sandbox verify --json {extra}")]);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{user}: verify --json: {e}\n{text}\n{}", String::from_utf8_lossy(&out.stderr)));
            (out.status.code(), v)
        };
        let status = |v: &serde_json::Value, name: &str| -> String {
            v["checks"].as_array().and_then(|a| a.iter().find(|c| c["name"] == name)).and_then(|c| c["status"].as_str()).unwrap_or("?").to_string()
        };
        lab.clear_arrivals();
        let (code, v) = verify("");
        assert_eq!(code, Some(0), "{user}: verify must pass in full: {v:#}");
        for name in layer2.iter().chain(&own) {
            assert_eq!(status(&v, name), "pass", "{user}: {name}: {v:#}");
        }
        lab.settle(&[]);
        assert!(lab.arrivals().is_empty(), "{user}: verify's datagrams arrived: {:?}", lab.arrivals());
        let (_, v) = verify("--weaken jail-filter");
        for name in layer2 {
            assert_eq!(status(&v, name), "fail", "{user}: {name} must fail without the packet filter: {v:#}");
        }
        lab.settle(&[]);
        assert!(lab.arrivals().iter().any(|a| a.contains("must not leave the jail")), "{user}: {:?}", lab.arrivals());
        let (_, v) = verify("--weaken jail-container-routes");
        for name in own {
            assert_eq!(status(&v, name), "fail", "{user}: {name} must fail without the container's routes blocked: {v:#}");
        }
        // A route added while the product's session runs: blocked as it
        // appears (the session sees its blackhole), named afterwards.
        let far = lab::LATER_FAR;
        let hex = format!("{:08X}", u32::from_ne_bytes(lab::LATER_FAR.octets()) & u32::from_ne_bytes([255, 255, 255, 0]));
        let script = format!(
            "touch ready\nfor i in $(seq 1 200); do awk '$2 == \"{hex}\" && $8 == \"00FFFFFF\" {{ f = 1 }} END {{ exit !f }}' /proc/net/route && break; sleep 0.05; done\n\
             awk '$2 == \"{hex}\" {{ print \"LATER routed\" }}' /proc/net/route\n\
             if (exec 3<>/dev/tcp/{far}/80) 2>/dev/null; then echo LATER open; else echo LATER blocked; fi"
        );
        c.sh(&format!("rm -f /work/{user}/ready && cat > /work/{user}/later.sh <<'EOF'\n{script}\nEOF"));
        let session = std::thread::scope(|scope| {
            let run = scope.spawn(|| c.exec_full(user, &[], &["sh", "-c", &format!("cd /work/{user} && /opt/ast/agent-sandbox run -- /bin/bash ./later.sh")]));
            let deadline = std::time::Instant::now() + SESSION;
            while !c.exec(&["test", "-e", &format!("/work/{user}/ready")]).status.success() {
                assert!(std::time::Instant::now() < deadline, "{user}: the session did not start");
                std::thread::sleep(Duration::from_millis(50));
            }
            lab.ip_in_container(&["route", "add", lab::LATER_NET, "via", "10.200.0.1", "dev", "vpn0"]);
            run.join().unwrap()
        });
        lab.ip_in_container(&["route", "del", lab::LATER_NET]);
        let (stdout, stderr) = (String::from_utf8_lossy(&session.stdout).into_owned(), String::from_utf8_lossy(&session.stderr).into_owned());
        assert!(stdout.contains("LATER routed") && stdout.contains("LATER blocked"), "{user}: {stdout}\n{stderr}");
        assert!(stderr.contains("blocked as it appeared: 198.19.12.0/24"), "{user}: the end-of-session report: {stderr}");
    }
}

/// Not a test of its own: the bypass probe a session runs (see
/// `bypass_session`). Prints "PROTO METHOD NAME RESULT" per attempt.
#[test]
fn helper_bypass() {
    let _machine = crate::support::share_machine();
    use agent_sandbox::verify::egress::{self, Method};
    use std::net::{Ipv4Addr, SocketAddrV4};
    if std::env::var("JAIL_TEST_HELPER").as_deref() != Ok("bypass") {
        return;
    }
    let targets: Vec<(String, Ipv4Addr)> = std::env::var("JAIL_TEST_TARGETS")
        .unwrap()
        .split_whitespace()
        .map(|w| {
            let (n, a) = w.split_once('=').unwrap();
            (n.to_string(), a.parse().unwrap())
        })
        .collect();
    println!("BYPASS uid {}", nix::unistd::getuid());
    let ifname = jail::JAIL_IFNAME;
    let broadcasts = [("bcast_all", Ipv4Addr::BROADCAST, lab::SINK_PORT), ("bcast_subnet", Ipv4Addr::new(198, 18, 0, 255), lab::SINK_PORT)];
    let groups = lab::GROUPS.iter().map(|(g, p)| (format!("mcast_{p}"), *g, *p));
    let mut datagrams: Vec<(String, Ipv4Addr, u16)> = targets.iter().map(|(n, a)| (n.clone(), *a, lab::SINK_PORT)).collect();
    datagrams.extend(groups);
    datagrams.extend(broadcasts.iter().map(|(n, a, p)| (n.to_string(), *a, *p)));
    first_multicast_on_every_cpu(ifname);
    let methods: Vec<Method> = std::iter::once(Method::Routed).chain(Method::NAMING.iter().copied()).collect();
    for m in &methods {
        for (name, addr, port) in &datagrams {
            let start = Instant::now();
            let r = egress::udp(*m, ifname, SocketAddrV4::new(*addr, *port), format!("BYPASS {} {name}", m.name()).as_bytes());
            println!("UDP {} {name} {r:?} ms={}", m.name(), start.elapsed().as_millis());
        }
    }
    // Connections in parallel: a dropped SYN waits out the whole timeout.
    let mut threads = Vec::new();
    for m in methods.iter().copied().filter(|m| !matches!(m, Method::PktInfo | Method::MulticastIf)) {
        for (name, addr) in &targets {
            let port = if name.starts_with("container_") { lab::ALL_ADDRS_PORT } else { lab::BANNER_PORT };
            let (name, dst) = (name.clone(), SocketAddrV4::new(*addr, port));
            threads.push(std::thread::spawn(move || {
                let start = Instant::now();
                let r = egress::tcp(m, ifname, dst, Duration::from_secs(2));
                format!("TCP {} {name} {r:?} ms={}", m.name(), start.elapsed().as_millis())
            }));
        }
    }
    for t in threads {
        println!("{}", t.join().unwrap());
    }
    println!("BYPASS done");
}

/// The first route the kernel caches for the dead end on each CPU is a
/// multicast one: it must not serve the unicast attempts that follow
/// (`jail::plan::routes::Route::dead_end`; they would fail with ENETUNREACH
/// before reaching the filter, uncounted).
fn first_multicast_on_every_cpu(ifname: &str) {
    use agent_sandbox::verify::egress::{self, Method};
    use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
    let me = nix::unistd::Pid::from_raw(0);
    let all = sched_getaffinity(me).unwrap();
    for cpu in (0..CpuSet::count()).filter(|c| all.is_set(*c).unwrap_or(false)) {
        let mut one = CpuSet::new();
        one.set(cpu).unwrap();
        sched_setaffinity(me, &one).unwrap();
        let (group, port) = lab::GROUPS[0];
        let start = Instant::now();
        let r = egress::udp(Method::Routed, ifname, std::net::SocketAddrV4::new(group, port), format!("BYPASS routed first_mcast_cpu{cpu}").as_bytes());
        println!("UDP routed first_mcast_cpu{cpu} {r:?} ms={}", start.elapsed().as_millis());
    }
    sched_setaffinity(me, &all).unwrap();
}

/// pasta processes still running in this lab's container namespace.
fn all_pasta_for(lab: &Lab) -> Vec<String> {
    let ns = std::fs::metadata(format!("/run/netns/{}", lab.container())).map(|m| std::os::unix::fs::MetadataExt::ino(&m));
    let Ok(ns) = ns else { return vec![] };
    procs::descendants(1)
        .into_iter()
        .filter(|p| p.comm.starts_with("passt") || p.comm.starts_with("pasta"))
        .filter(|p| {
            let link = std::fs::read_link(format!("/proc/{}/ns/net", p.pid)).unwrap_or_default();
            link.to_string_lossy().contains(&format!("[{ns}]"))
        })
        .map(|p| format!("{p:?}"))
        .collect()
}

fn signal_test(sig: Signal) {
    let _s = serial();
    let mut r = start_waiting_session("echo SESSION READY; exec sleep 60");
    nix::sys::signal::kill(r.launched.pid, sig).unwrap();
    let code = r.launched.code(Duration::from_secs(10));
    assert_eq!(code, 128 + sig as i32, "launcher exits with 128+{sig}: {:?}", r.launched.output());
    assert_nothing_left(&r, true);
}

/// A sandbox that fails in its own setup (bwrap cannot enter the working
/// directory) ends the launch with bwrap's status and bwrap's words, never
/// re-diagnosed as pasta's, however its end and pasta's interleave.
#[test]
fn a_sandbox_failing_in_setup_is_reported_as_itself() {
    let _s = serial();
    let lab = Lab::up();
    for i in 0..25 {
        let mut opts = lab_opts(&lab, "echo SESSION ran");
        opts.bwrap_args = vec!["--chdir".into(), format!("/nonexistent-{}", crate::support::unique("chdir"))];
        let mut launched = launch(opts);
        let code = launched.code(SESSION);
        let out = launched.output();
        assert_eq!(code, 1, "run {i}: bwrap's status expected: {out:?}");
        assert!(out.iter().any(|l| l.contains("bwrap: Can't chdir")), "run {i}: bwrap's own message: {out:?}");
        assert!(!out.iter().any(|l| l.contains("REFUSED") || l.contains("pasta")), "run {i}: re-diagnosed: {out:?}");
        assert!(!out.iter().any(|l| l == "SESSION ran"), "run {i}: {out:?}");
    }
}

#[test]
fn sigint_is_forwarded_and_nothing_is_left() {
    signal_test(Signal::SIGINT);
}

#[test]
fn sigterm_is_forwarded_and_nothing_is_left() {
    signal_test(Signal::SIGTERM);
}

#[test]
fn sighup_is_forwarded_and_nothing_is_left() {
    signal_test(Signal::SIGHUP);
}

/// A signal the launcher was started ignoring (`nohup`: SIGHUP) is
/// ignored by the launch too: sent while the sandbox waits at the gate it
/// neither stops the launch nor is forwarded; SIGTERM then ends it. (A
/// blocked signal is queued even when ignored: the launcher must not
/// block the ignored ones.)
#[test]
fn a_signal_the_launcher_ignores_stays_ignored() {
    let _s = serial();
    let lab = Lab::up();
    let dir = TrustedDir::new();
    dir.script("pasta", "#!/bin/sh\nexec sleep 60\n", 0o755);
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.probe = HostProbe { pasta_dirs: vec![dir.0.clone()], ..HostProbe::default() };
    opts.before = || {
        // SAFETY: installs SIG_IGN; no handler code runs.
        unsafe { nix::sys::signal::signal(Signal::SIGHUP, nix::sys::signal::SigHandler::SigIgn) }.map(|_| ()).map_err(|e| e.to_string())
    };
    let mut launched = launch(opts);
    let at_gate = |p: &procs::Proc| p.comm.starts_with(".agent-sandbox");
    let deadline = std::time::Instant::now() + SESSION;
    while !procs::descendants(launched.pid.as_raw()).iter().any(at_gate) {
        assert!(std::time::Instant::now() < deadline, "the sandbox never reached the gate: {:?}", launched.output());
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", launched.pid)).unwrap();
    let blocked = launcher::status_field(&status, "SigBlk").map(|m| u64::from_str_radix(&m, 16).unwrap()).unwrap();
    assert_eq!(blocked & (1 << (Signal::SIGHUP as u64 - 1)), 0, "the ignored SIGHUP is blocked (so queued): {status}");
    nix::sys::signal::kill(launched.pid, Signal::SIGHUP).unwrap();
    nix::sys::signal::kill(launched.pid, Signal::SIGTERM).unwrap();
    let st = launched.wait(Duration::from_secs(10));
    assert_eq!(st, WaitStatus::Exited(launched.pid, 128 + Signal::SIGTERM as i32), "SIGHUP acted: {:?}", launched.output());
}

/// Each forwarded signal at a random moment of the launch — before the
/// launcher blocks signals, while it sets the jail up, at the gate, while
/// the session runs — a few hundred times, beside two busy loops: the
/// launcher always ends for that signal (128+N, or killed by it before it
/// took signals over), the command never outlives it, and nothing is left
/// (no process of the launch, no pasta in the lab's namespace, no temp
/// file).
#[test]
fn signals_at_random_moments_of_the_launch_leave_nothing() {
    let _s = serial();
    let lab = Lab::up();
    let busy: Vec<std::process::Child> = (0..2).map(|_| std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap()).collect();
    let _busy = KillOnDrop(busy);
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let rounds = std::env::var("JAIL_SIGNAL_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let (mut early, mut during, mut late) = (0, 0, 0);
    for i in 0..rounds {
        let sig = launch::FORWARDED[i % launch::FORWARDED.len()];
        let marker = crate::support::unique("sigrand");
        let tmp = tempfile::tempdir().unwrap();
        let mut opts = lab_opts(&lab, &format!("echo SESSION READY; exec sh -c 'sleep 60; :' {marker}"));
        opts.tmpdir = Some(tmp.path().to_path_buf());
        let mut launched = launch(opts);
        std::thread::sleep(Duration::from_micros(next() % 400_000));
        let ran = launched.output().iter().any(|l| l.contains("SESSION READY"));
        nix::sys::signal::kill(launched.pid, sig).unwrap();
        let st = launched.wait(Duration::from_secs(15));
        let ok = st == WaitStatus::Exited(launched.pid, 128 + sig as i32) || matches!(st, WaitStatus::Signaled(_, s, _) if s == sig);
        assert!(ok, "round {i}: {sig} ended the launcher with {st:?}: {:?}", launched.output());
        match (ran, st) {
            (true, _) => late += 1,
            (false, WaitStatus::Signaled(..)) => early += 1,
            _ => during += 1,
        }
        let left = wait_until(Duration::from_secs(5), || {
            let mut l: Vec<String> = procs::descendants(1).into_iter().filter(|p| cmdline_has(p.pid, &marker)).map(|p| format!("{p:?}")).collect();
            l.extend(all_pasta_for(&lab));
            l
        });
        assert!(left.is_empty(), "round {i} ({sig}): left {left:?}");
        let files: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(files.is_empty(), "round {i} ({sig}): temp files left: {files:?}");
    }
    println!("MEASURE signals at random moments: {early} before the launcher took signals, {during} during setup, {late} in the session");
    assert!(early + during > 0 && late > 0, "the moments did not cover setup and session: {early}/{during}/{late}");
}

struct KillOnDrop(Vec<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn cmdline_has(pid: i32, needle: &str) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&cmdline).contains(needle)
}

/// `probe()` until it returns nothing or `timeout` passes; what it last returned.
fn wait_until(timeout: Duration, mut probe: impl FnMut() -> Vec<String>) -> Vec<String> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = probe();
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn killed_launcher_leaves_nothing() {
    let _s = serial();
    let mut r = start_waiting_session("echo SESSION READY; exec sleep 60");
    nix::sys::signal::kill(r.launched.pid, Signal::SIGKILL).unwrap();
    let st = r.launched.wait(Duration::from_secs(10));
    assert!(matches!(st, WaitStatus::Signaled(_, Signal::SIGKILL, _)), "{st:?}");
    // Reaping is the container's pid 1's job then.
    assert_nothing_left(&r, false);
}

/// A signal to the launcher while the sandbox waits at the gate (pasta
/// never gets ready here): the command never runs, and nothing is left.
/// SIGKILL: the gate closes with the launcher. SIGINT: the launch stops,
/// the launcher reaps everything (no zombie either) and exits 130.
fn signal_during_setup(sig: Signal) {
    let _s = serial();
    let lab = Lab::up();
    let dir = TrustedDir::new();
    dir.script("pasta", "#!/bin/sh\nexec sleep 60\n", 0o755);
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.probe = HostProbe { pasta_dirs: vec![dir.0.clone()], ..HostProbe::default() };
    let mut launched = launch(opts);
    let at_gate = |p: &procs::Proc| p.comm.starts_with(".agent-sandbox");
    let deadline = std::time::Instant::now() + SESSION;
    let helpers = loop {
        let d = procs::descendants(launched.pid.as_raw());
        if d.iter().any(at_gate) {
            break d;
        }
        assert!(std::time::Instant::now() < deadline, "the sandbox never reached the gate: {d:?}");
        std::thread::sleep(Duration::from_millis(5));
    };
    nix::sys::signal::kill(launched.pid, sig).unwrap();
    let st = launched.wait(Duration::from_secs(10));
    if sig == Signal::SIGKILL {
        assert!(matches!(st, WaitStatus::Signaled(_, Signal::SIGKILL, _)), "{st:?}");
        let left = procs::wait_gone(&helpers, Duration::from_secs(5));
        assert!(left.is_empty(), "survived the launcher: {left:?} (of {helpers:?})");
    } else {
        assert_eq!(st, WaitStatus::Exited(launched.pid, 128 + sig as i32), "{:?}", launched.output());
        let left = procs::wait_reaped(&helpers, Duration::from_secs(1));
        assert!(left.is_empty(), "left after the launcher returned: {left:?} (of {helpers:?})");
    }
    assert!(!launched.output().iter().any(|l| l == "SESSION ran"), "{:?}", launched.output());
}

#[test]
fn killed_launcher_during_setup_runs_nothing_and_leaves_nothing() {
    signal_during_setup(Signal::SIGKILL);
}

#[test]
fn sigint_during_setup_runs_nothing_and_leaves_nothing() {
    signal_during_setup(Signal::SIGINT);
}

// ---------------------------------------------------------------- the container's own routing

/// The probes of what the container routes other than by its default
/// route and of its other addresses, with the internet as the control.
fn own_routing_script() -> String {
    let mut script = format!("echo \"ID $(id -u)\"\ntcp internet {} {}\n", lab::INTERNET, lab::BANNER_PORT);
    for (name, addr) in lab::FAR {
        script += &format!("tcp {name} {addr} {}\n", lab::BANNER_PORT);
    }
    script += &format!("tcp container_extra {} {}\n", lab::CONTAINER_EXTRA, lab::ALL_ADDRS_PORT);
    script += &format!("tcp container_kipvs {} {}\nroutes\n", lab::CONTAINER_KIPVS, lab::ALL_ADDRS_PORT);
    script
}

fn assert_own_routing_blocked(out: &[String]) {
    let ctx = out.join("\n");
    let tcp = probes(out, "TCP");
    assert_eq!(tcp.get("internet").map(|p| p.result.as_str()), Some("open"), "the control: {ctx}");
    for name in lab::FAR.iter().map(|(n, _)| *n).chain(["container_extra", "container_kipvs"]) {
        let p = tcp.get(name).unwrap_or_else(|| panic!("no probe {name}:\n{ctx}"));
        assert_eq!(p.result, "blocked", "{name} must be unreachable: {p:?}\n{ctx}");
        assert!(p.detail.contains("No route to host") && p.ms < 1500, "{name} is rejected at once in the dead end: {p:?}");
    }
    for dst in ["203.0.113.0/24", "198.19.7.0/24", "198.19.8.0/24", "198.51.100.7", "198.51.100.9"] {
        let route = dead_end_route(dst);
        assert!(out.iter().any(|l| l == &format!("ROUTE main ok 0 {route}")), "{route} in the session's table:\n{ctx}");
    }
}

fn own_routing_session(pasta: Option<PathBuf>, before: fn() -> Result<(), String>) -> Vec<String> {
    let lab = Lab::up();
    let mut opts = lab_opts(&lab, &own_routing_script());
    if let Some(dir) = pasta {
        opts.probe = HostProbe { pasta_dirs: vec![dir], ..HostProbe::default() };
    }
    opts.before = before;
    let (code, out) = run_session(opts);
    assert_eq!(code, 0, "{}", out.join("\n"));
    out
}

#[test]
fn the_containers_own_routing_stays_outside_for_a_non_root_launcher() {
    let _s = serial();
    let out = own_routing_session(None, become_user);
    assert!(out.iter().any(|l| l == "ID 1000"), "{out:?}");
    assert_own_routing_blocked(&out);
}

#[test]
fn the_containers_own_routing_stays_outside_with_debian_13_pasta() {
    let _s = serial();
    let pasta = lab::debian13_pasta();
    assert_own_routing_blocked(&own_routing_session(Some(pasta.clone()), || Ok(())));
    let out = own_routing_session(Some(pasta), become_user);
    assert!(out.iter().any(|l| l == "ID 1000"), "{out:?}");
    assert_own_routing_blocked(&out);
}

/// The blackholes that appear in the session's own table once the jail
/// followed the changes `change_the_container` makes.
const LATER_BLOCKS: &[&str] = &["198.19.12.0/24", "198.51.100.11", "198.19.10.0/24"];

/// How `ip route` (the probe's `routes`) shows a destination routed into
/// the jail's dead end.
fn dead_end_route(dst: &str) -> String {
    format!("{dst} dev blocked scope link linkdown")
}
const LATER_ADDR: &str = "198.51.100.11";

/// The session waits (at most LATER_TRIES x 50 ms) until its route table
/// shows every change followed, then tries the hosts behind them, also
/// with every way of naming the interface.
fn later_script() -> String {
    let mut s = String::from(
        "echo SESSION READY\nfor i in $(seq 1 \"${LATER_TRIES:-200}\"); do\n  t=$(ip -4 route show table main | sed 's/ proto static//; s/ *$//')\n  ok=1\n",
    );
    for b in LATER_BLOCKS {
        s += &format!("  printf '%s\\n' \"$t\" | grep -qx '{}' || ok=0\n", dead_end_route(b));
    }
    s += "  [ $ok = 1 ] && break\n  sleep 0.05\ndone\nroutes\n";
    s += &format!("tcp later_route {} {}\ntcp later_addr {LATER_ADDR} {}\n", lab::LATER_FAR, lab::BANNER_PORT, lab::ALL_ADDRS_PORT);
    s += "JAIL_TEST_HELPER=bypass \"$JAIL_TEST_EXE\" suite::jail::helper_bypass --exact --nocapture --test-threads=1 -q\n";
    s
}

/// What comes up in the container after the launch: a route through the
/// VPN, another address of its own, a policy rule to a second table.
fn change_the_container(lab: &Lab) {
    lab.ip_in_container(&["route", "add", lab::LATER_NET, "via", "10.200.0.1", "dev", "vpn0"]);
    lab.ip_in_container(&["addr", "add", &format!("{LATER_ADDR}/32"), "dev", "lo"]);
    lab.ip_in_container(&["rule", "add", "pref", "90", "to", "198.19.10.0/24", "lookup", "100"]);
}

/// Launches `later_script`, changes the container once the session runs,
/// and returns the session's output (the launcher's end-of-session report
/// included) and the lab.
fn route_added_after_launch(pasta: Option<PathBuf>, before: fn() -> Result<(), String>, follow: bool) -> (Vec<String>, Lab) {
    let lab = Lab::up();
    let mut opts = lab_opts(&lab, &later_script());
    if let Some(dir) = pasta {
        opts.probe = HostProbe { pasta_dirs: vec![dir], ..HostProbe::default() };
    }
    opts.before = before;
    opts.env.push(("JAIL_TEST_TARGETS".into(), format!("later_route={} later_addr={LATER_ADDR} internet={}", lab::LATER_FAR, lab::INTERNET)));
    if !follow {
        opts.edit = |p| p.follow = false;
        opts.env.push(("LATER_TRIES".into(), "10".into()));
    }
    let mut l = launch(opts);
    assert!(l.wait_line("SESSION READY", SESSION).is_some(), "{}", l.output().join("\n"));
    lab.clear_arrivals();
    change_the_container(&lab);
    let code = l.code(SESSION);
    let out = l.output();
    assert_eq!(code, 0, "{}", out.join("\n"));
    // The later destinations too, while their routes stand.
    lab.settle(&[std::net::SocketAddrV4::new(lab::LATER_FAR, lab::SINK_PORT)]);
    (out, lab)
}

fn assert_followed(out: &[String], lab: &Lab) {
    let ctx = out.join("\n");
    for b in LATER_BLOCKS.iter().map(|b| dead_end_route(b)) {
        assert!(out.iter().any(|l| l == &format!("ROUTE main ok 0 {b}")), "{b} appeared in the session's table:\n{ctx}");
    }
    let tcp = probes(out, "TCP");
    for name in ["later_route", "later_addr"] {
        assert!(tcp[name].result == "blocked" && tcp[name].detail.contains("No route to host"), "{name}: {:?}\n{ctx}", tcp[name]);
    }
    for (proto, method, name, result) in bypass_results(out).iter().filter(|r| r.2.starts_with("later")) {
        assert!(result != "Sent" && result != "Connected", "{proto} to {name} via {method}: {result}\n{ctx}");
    }
    let leaked: Vec<String> = lab.arrivals().into_iter().filter(|a| a.contains("BYPASS") && a.contains(" later")).collect();
    assert!(leaked.is_empty(), "datagrams reached the new destinations: {leaked:?}");
    assert!(lab.arrivals().iter().any(|a| a.ends_with("BYPASS routed internet")), "the control: {:?}", lab.arrivals());
    let report =
        out.iter().find(|l| l.contains("the container's network changed during the session")).unwrap_or_else(|| panic!("no end-of-session report:\n{ctx}"));
    for net in [lab::LATER_NET, "198.51.100.11/32", "198.19.10.0/24"] {
        assert!(report.contains(net), "the report names {net}: {report}");
    }
}

#[test]
fn changes_of_the_containers_routes_after_the_launch_are_followed() {
    let _s = serial();
    let (out, lab) = route_added_after_launch(None, || Ok(()), true);
    assert_followed(&out, &lab);
}

#[test]
fn changes_after_the_launch_are_followed_for_a_non_root_launcher() {
    let _s = serial();
    let (out, lab) = route_added_after_launch(None, become_user, true);
    assert!(out.iter().any(|l| l == "BYPASS uid 1000"), "{out:?}");
    assert_followed(&out, &lab);
}

#[test]
fn changes_after_the_launch_are_followed_with_debian_13_pasta() {
    let _s = serial();
    let pasta = lab::debian13_pasta();
    let (out, lab) = route_added_after_launch(Some(pasta.clone()), || Ok(()), true);
    assert_followed(&out, &lab);
    let (out, lab) = route_added_after_launch(Some(pasta), become_user, true);
    assert!(out.iter().any(|l| l == "BYPASS uid 1000"), "{out:?}");
    assert_followed(&out, &lab);
}

/// The same session with following switched off: the new route and the
/// new address are reachable, so the tests above can fail.
#[test]
fn without_following_a_route_added_later_is_reachable() {
    let _s = serial();
    let (out, lab) = route_added_after_launch(None, || Ok(()), false);
    let ctx = out.join("\n");
    let tcp = probes(&out, "TCP");
    assert_eq!(tcp["later_route"].result, "open", "{ctx}");
    assert_eq!(tcp["later_route"].detail, format!("lab {}", lab::LATER_FAR), "{ctx}");
    assert_eq!(tcp["later_addr"].detail, "container-service-secret", "{ctx}");
    assert!(lab.arrivals().iter().any(|a| a.ends_with("BYPASS routed later_route")), "{:?}", lab.arrivals());
    assert!(!out.iter().any(|l| l.contains("the container's network changed during the session")), "{ctx}");
}

/// `--print-plan` and doctor say what the jail treats as the internet and
/// what of the container's own routing it blocks: a plain container, one
/// whose default traffic a rule sends through the VPN, one without a
/// default route.
#[test]
fn print_plan_and_doctor_name_the_internet_and_the_containers_routes() {
    let _s = serial();
    let lab = Lab::up();
    let td = launcher::TestDir::new("jail-print-plan");
    let ws = td.root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let in_lab = |args: &[&str]| -> String {
        use std::os::unix::process::CommandExt;
        let ns = std::fs::File::open(format!("/run/netns/{}", lab.container())).unwrap();
        let mut cmd = std::process::Command::new(launcher::bin());
        cmd.args(args).current_dir(&ws).env_clear();
        cmd.envs([("PATH", launcher::SYSTEM_PATH), ("HOME", "/root"), ("USER", "root"), ("LOGNAME", "root"), ("LANG", "C.UTF-8")]);
        // SAFETY: the pre-exec hook only joins the lab's network namespace.
        unsafe {
            cmd.pre_exec(move || nix::sched::setns(&ns, nix::sched::CloneFlags::CLONE_NEWNET).map_err(std::io::Error::from));
        }
        let out = cmd.output().expect("agent-sandbox");
        // JSON goes to stdout; a refusal would be on stderr.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() || args.contains(&"doctor"), "agent-sandbox {args:?}: {err}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let plan = in_lab(&["run", "--print-plan", "--", "/bin/true"]);
    assert!(plan.contains("the internet: default via 198.18.0.1 dev eth0 (table main, rule 32766)"), "{plan}");
    for net in [
        "203.0.113.0/24 (route table main Unicast 203.0.113.0/24 via 10.200.0.1 dev vpn0",
        "198.19.7.0/24",
        "198.19.8.0/24 (route table 101",
        "198.51.100.9/32 (address 198.51.100.9/32 dev kipvs0)",
    ] {
        assert!(plan.contains(net), "{net} in:\n{plan}");
    }
    let json: serde_json::Value = serde_json::from_str(&in_lab(&["run", "--print-plan", "--json", "--", "/bin/true"])).unwrap();
    assert_eq!(json["jail"]["internetRoute"]["dev"], "eth0", "{json:#}");
    assert!(json["jail"]["containerBlocked"].as_array().unwrap().iter().any(|d| d["net"] == "203.0.113.0/24" && d["source"] == "route"), "{json:#}");
    let doctor: serde_json::Value = serde_json::from_str(&in_lab(&["doctor", "--json"])).unwrap();
    let finding = |d: &serde_json::Value, id: &str| d["findings"].as_array().unwrap().iter().find(|f| f["id"] == id).cloned();
    let ok = finding(&doctor, "jail-internet-ok").unwrap_or_else(|| panic!("{doctor:#}"));
    assert!(ok["message"].as_str().unwrap().contains("default via 198.18.0.1 dev eth0"), "{ok}");
    let routes = finding(&doctor, "jail-routes-ok").unwrap_or_else(|| panic!("{doctor:#}"));
    assert!(routes["message"].as_str().unwrap().contains("203.0.113.0/24"), "{routes}");

    // A full tunnel: a rule ahead of main sends all traffic to a table
    // whose default route goes through the VPN.
    lab.ip_in_container(&["route", "add", "default", "via", "10.200.0.1", "dev", "vpn0", "table", "102"]);
    lab.ip_in_container(&["rule", "add", "pref", "50", "lookup", "102"]);
    let plan = in_lab(&["run", "--print-plan", "--", "/bin/true"]);
    assert!(plan.contains("the internet: default via 10.200.0.1 dev vpn0 (table 102, rule 50)"), "{plan}");
    let doctor: serde_json::Value = serde_json::from_str(&in_lab(&["doctor", "--json"])).unwrap();
    let unusual = finding(&doctor, "jail-internet-unusual").unwrap_or_else(|| panic!("{doctor:#}"));
    assert_eq!(unusual["severity"], "warning", "{unusual}");
    assert!(unusual["message"].as_str().unwrap().contains("vpn0 (table 102, rule 50)"), "{unusual}");

    // No default route anywhere.
    lab.ip_in_container(&["rule", "del", "pref", "50"]);
    lab.ip_in_container(&["route", "del", "default", "table", "102"]);
    lab.ip_in_container(&["route", "del", "default"]);
    let plan = in_lab(&["run", "--print-plan", "--", "/bin/true"]);
    assert!(plan.contains("the internet: nothing: the container has no default route"), "{plan}");
    let doctor: serde_json::Value = serde_json::from_str(&in_lab(&["doctor", "--json"])).unwrap();
    let none = finding(&doctor, "jail-no-internet").unwrap_or_else(|| panic!("{doctor:#}"));
    assert_eq!(none["severity"], "error", "{none}");
}

/// `agent-sandbox verify` in the lab: its checks of the container's own
/// routing pass; with `--weaken jail-container-routes` (only the connected
/// subnets blocked, as before) they fail, and so do the interface-bound
/// checks, whose datagrams then reach the VPN's far side.
#[test]
fn verify_checks_the_containers_own_routing_in_the_lab() {
    let _s = serial();
    let lab = Lab::up();
    let td = launcher::TestDir::new("jail-verify-routes");
    let ws = td.root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let run_verify = |extra: &[&str]| -> serde_json::Value {
        let mut opts = lab_opts(&lab, "");
        opts.product_in = Some(ws.clone());
        let mut args: Vec<String> = ["verify", "--json"].iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        opts.product_args = Some(args);
        let (_, out) = run_session(opts);
        let json = out.iter().skip_while(|l| !l.starts_with('{')).cloned().collect::<Vec<_>>().join("\n");
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("verify --json: {e}\n{}", out.join("\n")))
    };
    let status = |v: &serde_json::Value, name: &str| -> String {
        v["checks"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == name))
            .map(|c| c["status"].as_str().unwrap_or("?").to_string())
            .unwrap_or_else(|| format!("no check {name}: {v}"))
    };
    let own = ["jail-blocks-container-routes", "jail-blocks-container-addresses"];
    let named = ["jail-so-bindtodevice-blocked", "jail-so-bindtoifindex-blocked", "jail-ip-unicast-if-blocked", "jail-ip-pktinfo-blocked"];
    let v = run_verify(&[]);
    for name in own.iter().chain(&named).chain(&["jail-blocks-connected-subnets"]) {
        assert_eq!(status(&v, name), "pass", "{name}: {v:#}");
    }
    assert!(lab.arrivals().is_empty(), "verify's datagrams arrived: {:?}", lab.arrivals());
    let v = run_verify(&["--weaken", "jail-container-routes"]);
    for name in own.iter().chain(&named) {
        assert_eq!(status(&v, name), "fail", "{name} must fail without the container's routes blocked: {v:#}");
    }
    assert_eq!(status(&v, "jail-blocks-connected-subnets"), "pass", "{v:#}");
    let far = lab.far();
    assert!(lab.arrivals().iter().any(|a| a.starts_with(&far) && a.contains("must not leave the jail")), "{:?}", lab.arrivals());
}

// ---------------------------------------------------------------- refusals

fn assert_no_switch(msg: &str) {
    for banned in ["EGRESS_JAIL", "egressJail", "egress_jail"] {
        assert!(!msg.contains(banned), "the message advertises the off switch: {msg}");
    }
}

/// The refusal message (it may span lines).
fn refused(out: &[String]) -> String {
    let at = out.iter().position(|l| l.contains("JAILTEST REFUSED"));
    let at = at.unwrap_or_else(|| panic!("no refusal in:\n{}", out.join("\n")));
    out[at..].join("\n")
}

#[test]
fn refuses_without_tun() {
    let _s = serial();
    let probe = HostProbe { tun: "/nonexistent/net/tun".into(), ..HostProbe::default() };
    let e = jail::host_facts_with(&probe).unwrap_err();
    assert!(matches!(e, JailError::TunMissing { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("/nonexistent/net/tun") && msg.contains("--device=/dev/net/tun") && msg.contains("runArgs"), "{msg}");
    assert_no_switch(&msg);
}

/// A root-owned, mode-755 directory for fake executables (not under the
/// world-writable /tmp, which the trust check rightly refuses).
struct TrustedDir(PathBuf);

impl TrustedDir {
    fn new() -> TrustedDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = PathBuf::from(format!("/run/agent-sandbox-jailtest-{}-{n}", std::process::id()));
        std::fs::create_dir(&p).expect("creating a directory under /run (root needed)");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        TrustedDir(p)
    }

    fn script(&self, name: &str, body: &str, mode: u32) -> PathBuf {
        let f = self.0.join(name);
        std::fs::write(&f, body).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
        f
    }
}

impl Drop for TrustedDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn refuses_without_pasta() {
    let _s = serial();
    let dir = TrustedDir::new();
    let probe = HostProbe { pasta_dirs: vec![dir.0.clone()], ..HostProbe::default() };
    let e = jail::host_facts_with(&probe).unwrap_err();
    assert!(matches!(e, JailError::PastaMissing { .. }), "{e}");
    assert!(e.to_string().contains("install passt"), "{e}");
    assert_no_switch(&e.to_string());
}

#[test]
fn refuses_untrusted_pasta() {
    let _s = serial();
    let dir = TrustedDir::new();
    dir.script("pasta", "#!/bin/sh\nexit 0\n", 0o777);
    let probe = HostProbe { pasta_dirs: vec![dir.0.clone()], ..HostProbe::default() };
    let e = jail::host_facts_with(&probe).unwrap_err();
    assert!(matches!(e, JailError::PastaUntrusted { .. }), "{e}");
    assert!(e.to_string().contains("writable"), "{e}");
    assert_no_switch(&e.to_string());
}

#[test]
fn refuses_pasta_that_cannot_attach() {
    let _s = serial();
    let lab = Lab::up();
    // A pasta that fails the way Debian 12's does as root without --runas 0.
    let dir = TrustedDir::new();
    let body = "#!/bin/sh\necho \"Couldn't open user namespace /proc/1/ns/user: Permission denied\" >&2\nexit 1\n";
    dir.script("pasta", body, 0o755);
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.probe = HostProbe { pasta_dirs: vec![dir.0.clone()], ..HostProbe::default() };
    let (code, out) = run_session(opts);
    assert_eq!(code, REFUSED, "{out:?}");
    let msg = refused(&out);
    assert!(msg.contains("pasta could not attach") && msg.contains("Couldn't open user namespace"), "{msg}");
    assert!(msg.contains("Fix:") && msg.contains("passt"), "{msg}");
    assert!(!out.iter().any(|l| l == "SESSION ran"));
    assert_no_switch(&msg);

    // The real pasta, as root, without --runas 0.
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.edit = |plan| plan.pasta.args.retain(|a| a != "--runas" && a != "0");
    let (code, out) = run_session(opts);
    assert_eq!(code, REFUSED, "{out:?}");
    let msg = refused(&out);
    assert!(msg.contains("pasta could not attach") && (msg.contains("Permission denied") || msg.contains("Operation not permitted")), "{msg}");
    assert!(msg.contains("--runas 0"), "the fix names the cause: {msg}");
    assert!(!out.iter().any(|l| l == "SESSION ran"));
}

/// In the launcher child: a user namespace of its own in which no further
/// user namespace may be created (`user.max_user_namespaces` = 0 there;
/// the limit is per namespace, so the machine is not touched).
fn forbid_user_namespaces() -> Result<(), String> {
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER).map_err(|e| e.to_string())?;
    let w = |f: &str, s: String| std::fs::write(f, s).map_err(|e| format!("{f}: {e}"));
    w("/proc/self/uid_map", format!("0 {uid} 1"))?;
    w("/proc/self/setgroups", "deny".into())?;
    w("/proc/self/gid_map", format!("0 {gid} 1"))?;
    w("/proc/sys/user/max_user_namespaces", "0".into())
}

#[test]
fn refuses_without_user_namespaces() {
    let _s = serial();
    let lab = Lab::up();
    // Found before launch (the sysctl is read by host_facts).
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.before = forbid_user_namespaces;
    let (code, out) = run_session(opts);
    assert_eq!(code, REFUSED, "{out:?}");
    let msg = refused(&out);
    assert!(msg.contains("user namespaces are not available") && msg.contains("user.max_user_namespaces"), "{msg}");
    assert_no_switch(&msg);

    // Found at launch (the holder's unshare fails).
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.edit = |_| forbid_user_namespaces().expect("switching user namespaces off");
    let (code, out) = run_session(opts);
    assert_eq!(code, REFUSED, "{out:?}");
    let msg = refused(&out);
    assert!(msg.contains("user namespaces are not available") && msg.contains("user.max_user_namespaces"), "{msg}");
    assert!(!out.iter().any(|l| l == "SESSION ran"));
}

#[test]
fn refuses_unexpected_routes_and_rules() {
    let _s = serial();
    let lab = Lab::up();
    // pasta, after someone added a policy rule and a route in another
    // table to the namespace (the flush of the main table misses both).
    let dir = TrustedDir::new();
    let body = "#!/bin/sh\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\nfor last; do :; done\n\
        nsenter -t \"$last\" -n ip rule add pref 100 lookup 100 || exit 1\n\
        nsenter -t \"$last\" -n ip route add blackhole 203.0.113.0/24 table 100 || exit 1\n\
        exec /usr/bin/pasta \"$@\"\n";
    dir.script("pasta", body, 0o755);
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.probe = HostProbe { pasta_dirs: vec![dir.0.clone()], ..HostProbe::default() };
    let (code, out) = run_session(opts);
    assert_eq!(code, REFUSED, "{out:?}");
    let msg = refused(&out);
    assert!(msg.contains("differs from the plan"), "{msg}");
    assert!(msg.contains("unexpected rule: V4 rule 100: lookup 100"), "{msg}");
    assert!(msg.contains("unexpected route: table 100 Blackhole 203.0.113.0/24"), "{msg}");
    assert!(!out.iter().any(|l| l == "SESSION ran"));
    assert_no_switch(&msg);
}

/// The filter as nft(8), an independent reader of nf_tables, lists it
/// from the running session's namespace: the planned rules, in order.
#[test]
fn nft_lists_exactly_the_planned_filter() {
    let _s = serial();
    assert!(Path::new("/usr/sbin/nft").exists(), "nft is missing: apt-get install nftables");
    let mut r = start_waiting_session("echo SESSION READY; sleep 5");
    let holder = r.helpers.iter().find(|p| p.ppid == r.launched.pid.as_raw() && p.comm == "bwrap").expect("the holder");
    let out =
        std::process::Command::new("nsenter").args(["-t", &holder.pid.to_string(), "-n", "/usr/sbin/nft", "list", "ruleset"]).output().expect("nsenter nft");
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = nix::sys::signal::kill(r.launched.pid, Signal::SIGTERM);
    let _ = r.launched.wait(SESSION);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = listed.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let want = [
        "table ip agent_sandbox {",
        "set blocked {",
        "type ipv4_addr",
        "flags interval",
        "elements = { 10.0.0.0/8, 100.64.0.0/10,",
        "168.63.129.16, 169.254.0.0/16,",
        "172.16.0.0/12, 192.168.0.0/16,",
        "198.18.0.0/24, 198.19.7.0-198.19.8.255,",
        "198.51.100.7, 198.51.100.9,",
        "203.0.113.0/24, 224.0.0.0/4,",
        "255.255.255.255 }",
        "}",
        "set seen {",
        "type ipv4_addr . inet_proto . inet_service",
        "size 512",
        "flags dynamic,timeout",
        "timeout 7d",
        "}",
        "chain refused {",
        "add @seen { ip daddr . meta l4proto . th dport counter }",
        "reject with icmp admin-prohibited",
        "}",
        "chain egress {",
        "type filter hook output priority filter; policy accept;",
        "oifname \"lo\" accept",
        "ip daddr 192.0.2.53 udp dport 53 accept",
        "ip daddr 192.0.2.53 tcp dport 53 accept",
        "ip daddr 10.99.0.7 accept",
        "ip daddr 198.18.0.1 accept",
        "ip daddr 192.0.2.53 goto refused",
        "ip daddr @blocked goto refused",
        "}",
        "}",
    ];
    assert_eq!(lines, want, "nft list ruleset in the jail:\n{listed}");
}

/// Someone (here: a pasta wrapper) put another nf_tables table with an
/// earlier output chain into the namespace: the read-back refuses.
#[test]
fn refuses_an_unexpected_packet_filter() {
    let _s = serial();
    assert!(Path::new("/usr/sbin/nft").exists(), "nft is missing: apt-get install nftables");
    let lab = Lab::up();
    let dir = TrustedDir::new();
    let body = "#!/bin/sh\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\nfor last; do :; done\n\
        nsenter -t \"$last\" -n /usr/sbin/nft add table inet sneaky || exit 1\n\
        nsenter -t \"$last\" -n /usr/sbin/nft 'add chain inet sneaky out { type filter hook output priority -10; policy accept; }' || exit 1\n\
        exec /usr/bin/pasta \"$@\"\n";
    dir.script("pasta", body, 0o755);
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.probe = HostProbe { pasta_dirs: vec![dir.0.clone()], ..HostProbe::default() };
    let (code, out) = run_session(opts);
    assert_eq!(code, REFUSED, "{out:?}");
    let msg = refused(&out);
    assert!(msg.contains("differs from the plan"), "{msg}");
    assert!(msg.contains("unexpected table inet sneaky"), "{msg}");
    assert!(msg.contains("unexpected chain inet sneaky/out hook 3 priority -10"), "{msg}");
    assert!(!out.iter().any(|l| l == "SESSION ran"));
    assert_no_switch(&msg);
}

/// In the launcher child: a seccomp filter that answers every attempt to
/// open an nf_tables netlink socket as a kernel without nf_tables would
/// (EPROTONOSUPPORT). Inherited by the locker, so the jail cannot install
/// its packet filter.
fn kernel_without_nf_tables() -> Result<(), String> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    let f = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let prog = [
        f(LD_W_ABS, 0, 0, 4),
        f(JEQ_K, 0, 7, AUDIT_ARCH_X86_64),
        f(LD_W_ABS, 0, 0, 0),
        f(JEQ_K, 0, 5, libc::SYS_socket as u32),
        f(LD_W_ABS, 0, 0, 16),
        f(JEQ_K, 0, 3, libc::AF_NETLINK as u32),
        f(LD_W_ABS, 0, 0, 32),
        f(JEQ_K, 0, 1, 12 /* NETLINK_NETFILTER */),
        f(RET_K, 0, 0, 0x0005_0000 | libc::EPROTONOSUPPORT as u32),
        f(RET_K, 0, 0, 0x7fff_0000),
    ];
    let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
    // SAFETY: a valid classic-BPF program that outlives the call; the
    // filter only changes this process's (and its children's) syscalls.
    let rc = unsafe { libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog as *const libc::sock_fprog) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("installing the test's seccomp filter: {}", std::io::Error::last_os_error()))
    }
}

#[test]
fn refuses_when_the_kernel_has_no_packet_filter() {
    let _s = serial();
    let lab = Lab::up();
    let mut opts = lab_opts(&lab, "echo SESSION ran");
    opts.before = kernel_without_nf_tables;
    let (code, out) = run_session(opts);
    assert_eq!(code, REFUSED, "{out:?}");
    let msg = refused(&out);
    assert!(msg.contains("packet filter") && msg.contains("never runs on routes alone"), "{msg}");
    assert!(msg.contains("Fix: ") && msg.contains("CONFIG_NF_TABLES"), "{msg}");
    assert!(!out.iter().any(|l| l == "SESSION ran"), "the command ran without the filter: {out:?}");
    assert_no_switch(&msg);
}

/// `doctor` finds the same: its probe installs the filter in a throwaway
/// namespace, and names the fix when the kernel refuses it.
#[test]
fn doctor_reports_whether_the_packet_filter_can_be_installed() {
    let _machine = crate::support::share_machine();
    use std::os::unix::process::CommandExt;
    let run = |no_nf_tables: bool| -> serde_json::Value {
        let mut cmd = std::process::Command::new(launcher::bin());
        cmd.args(["doctor", "--json"]);
        if no_nf_tables {
            // SAFETY: the pre-exec hook only installs a seccomp filter.
            unsafe { cmd.pre_exec(|| kernel_without_nf_tables().map_err(std::io::Error::other)) };
        }
        let out = cmd.output().expect("agent-sandbox doctor");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("doctor --json: {e}: {}", String::from_utf8_lossy(&out.stdout)))
    };
    let finding = |v: &serde_json::Value| -> serde_json::Value {
        v["findings"].as_array().and_then(|a| a.iter().find(|f| f["check"] == "filter").cloned()).unwrap_or_else(|| panic!("no filter finding: {v}"))
    };
    assert_eq!(finding(&run(false))["id"], "filter-ok");
    let bad = finding(&run(true));
    assert_eq!(bad["id"], "filter-unavailable", "{bad}");
    assert_eq!(bad["severity"], "error", "{bad}");
    assert!(bad["fix"].as_str().unwrap_or("").contains("CONFIG_NF_TABLES"), "{bad}");
}

// ---------------------------------------------------------------- syscall profile

/// The product's syscall profile holds in a jailed session too (its
/// filter is loaded by the same bwrap call inside the jail's namespaces):
/// keyrings, io_uring and vsock refused, nested user namespaces kept.
#[test]
fn the_syscall_profile_holds_in_a_jailed_session() {
    let _s = serial();
    launcher::python3();
    let lab = Lab::up();
    let td = launcher::TestDir::new("jail-syscalls");
    let ws = td.root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let py = "import ctypes, socket, sys\n\
              libc = ctypes.CDLL(None, use_errno=True)\n\
              libc.syscall.restype = ctypes.c_long\n\
              for a in sys.argv[1:]:\n\
              \x20   name, nr = a.split('=')\n\
              \x20   r = libc.syscall(ctypes.c_long(int(nr)), ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(0))\n\
              \x20   print('SYSCALL %s %d' % (name, 0 if r >= 0 else ctypes.get_errno()))\n\
              try:\n\
              \x20   socket.socket(40, 1); print('SYSCALL vsock 0')\n\
              except OSError as e:\n\
              \x20   print('SYSCALL vsock %d' % e.errno)\n";
    std::fs::write(ws.join("probe.py"), py).unwrap();
    let script = format!(
        "python3 probe.py keyctl={} io_uring_setup={}\nunshare -U sh -c 'echo SYSCALL userns 0' || echo SYSCALL userns 1\n",
        libc::SYS_keyctl,
        libc::SYS_io_uring_setup
    );
    let mut opts = lab_opts(&lab, &script);
    opts.product_in = Some(ws.clone());
    let (code, out) = run_session(opts);
    let ctx = out.join("\n");
    assert_eq!(code, 0, "{ctx}");
    let got = |name: &str| out.iter().find_map(|l| l.strip_prefix(&format!("SYSCALL {name} "))).map(str::to_string);
    assert_eq!(got("keyctl"), Some(libc::EPERM.to_string()), "{ctx}");
    assert_eq!(got("io_uring_setup"), Some(libc::ENOSYS.to_string()), "{ctx}");
    assert_eq!(got("vsock"), Some(libc::EAFNOSUPPORT.to_string()), "{ctx}");
    assert_eq!(got("userns").as_deref(), Some("0"), "a nested user namespace cannot be made in a jailed session\n{ctx}");
}

// ---------------------------------------------------------------- bench driver

/// Not a test of its own: `benches/jail_bench.sh` runs this with
/// JAIL_TEST_HELPER=bench to time `/bin/true` through the jail (the
/// launcher's path: host facts, plan, run_jailed, bwrap).
#[test]
fn helper_bench_true() {
    let _machine = crate::support::share_machine();
    if std::env::var("JAIL_TEST_HELPER").as_deref() != Ok("bench") {
        return;
    }
    // SAFETY: the helper process runs only this test; the child calls the
    // library (single-threaded, as the launcher) and leaves with _exit.
    match unsafe { nix::unistd::fork() }.expect("fork") {
        nix::unistd::ForkResult::Child => {
            let code = bench_child();
            // SAFETY: end the child without the harness's destructors.
            unsafe { libc::_exit(code) }
        }
        nix::unistd::ForkResult::Parent { child } => match nix::sys::wait::waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
            other => panic!("bench launcher: {other:?}"),
        },
    }
}

fn bench_child() -> i32 {
    use std::os::unix::process::CommandExt;
    let run = || -> Result<i32, JailError> {
        let plan = jail::plan(&Config::default(), &jail::host_facts()?)?;
        // The floor's bwrap arguments, with the gate in front of its command.
        let floor_args = std::env::var("JAIL_BENCH_BWRAP_ARGS").unwrap_or_default();
        let mut args: Vec<String> = Vec::new();
        for a in floor_args.split_whitespace() {
            if a == "--" {
                // After the floor's mounts (its /dev would hide the gate).
                args.extend(["--ro-bind".into(), launch::gate_exe(), GATE_PATH.into(), "--".into(), GATE_PATH.into()]);
            } else {
                args.push(a.into());
            }
        }
        jail::run_jailed(&plan, &mut || Ok(()), &mut || std::process::Command::new("/usr/bin/bwrap").args(&args).exec(), None).map(|ended| ended.code)
    };
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            REFUSED
        }
    }
}

mod allow;
