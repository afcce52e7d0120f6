//! The battery: every check with its stable number, name, the defence it
//! proves and what it asserts. docs/verify.md lists exactly these (a unit
//! test compares them); the report joins the probe's results to them.

use super::checks::{allow, attack, env, fs, home, misc, needs, net, privs, procs, syscalls, tty, Ctx};
use super::egress::Method;
use super::{Defence, Outcome};
use crate::sandbox::seccomp::table::Group;
use Defence::*;

/// A check proves a defence holds; a probe is an escape attempt (reported
/// BLOCKED / ESCAPED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Check,
    Probe,
}

/// Where a check runs.
#[derive(Clone, Copy)]
pub enum Run {
    /// In the session, by the probe.
    Inside(fn(&Ctx) -> Outcome),
    /// By the launcher, after the session ended.
    Outside,
}

#[derive(Clone, Copy)]
pub struct Check {
    pub number: u16,
    pub name: &'static str,
    pub kind: Kind,
    pub defence: Defence,
    /// Skipped (not failed) when the egress jail is off.
    pub needs_jail: bool,
    pub asserts: &'static str,
    pub run: Run,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.number, self.name)
    }
}

const fn c(number: u16, name: &'static str, defence: Defence, asserts: &'static str, f: fn(&Ctx) -> Outcome) -> Check {
    Check { number, name, kind: Kind::Check, defence, needs_jail: false, asserts, run: Run::Inside(f) }
}

const fn jail(number: u16, name: &'static str, asserts: &'static str, f: fn(&Ctx) -> Outcome) -> Check {
    Check { number, name, kind: Kind::Check, defence: EgressJail, needs_jail: true, asserts, run: Run::Inside(f) }
}

const fn probe(number: u16, name: &'static str, defence: Defence, asserts: &'static str, f: fn(&Ctx) -> Outcome) -> Check {
    Check { number, name, kind: Kind::Probe, defence, needs_jail: false, asserts, run: Run::Inside(f) }
}

/// The number of the session-leaves-nothing check (run by the launcher).
pub(crate) const LEAVES_NOTHING: u16 = 51;
/// The number of the end-of-session report check (run by the launcher).
pub(crate) const REPORT_LISTS: u16 = 97;
/// The number of the planted-symlink check (run by the launcher).
pub(crate) const PROTECTED_SYMLINK: u16 = 90;

pub const CHECKS: &[Check] = &[
    c(1, "sentinel-set", Sentinel, "IS_SANDBOX=1, IS_SANDBOX_AGENT=<agent>, AGENT_SANDBOX_SESSION=<id>", env::sentinel),
    c(2, "env-allow-list-only", Environment, "every variable is on the allow-list, in passEnv, the agent's, or set by the launcher", env::allow_list_only),
    c(3, "env-planted-secrets-absent", Environment, "secrets, sockets and loader hooks planted in the launcher's environment do not arrive; no never-passed name is present", env::secrets_absent),
    c(4, "env-launcher-values", Environment, "HOME, USER, LOGNAME, PATH (absolute entries only), TMPDIR are the launcher's values", env::launcher_values),
    c(5, "home-only-bound-state", Home, "$HOME is a fresh tmpfs holding only the bound-back state", home::only_bound_state),
    c(6, "home-outer-entries-hidden", Home, "entries of the outer home that are not bound back are invisible", home::outer_entries_hidden),
    c(7, "home-credential-stores-masked", Home, "~/.cache and ~/.local/share are the sandbox's own; when shared, keyrings, gnupg, password stores... read as empty and direnv's approvals cannot be written", home::credential_corners),
    c(8, "home-agent-state-writable", Home, "the agent's own state is bound back read-write", home::agent_state_writable),
    c(9, "home-forge-stores-read-only", Home, "~/.config/gh and ~/.config/glab-cli are read-only (absent with noForge)", home::forge_stores),
    c(10, "dotfiles-read-empty", DotfileMasks, "~/.netrc, ~/.Xauthority, ~/.ICEauthority are empty read-only files", home::dotfiles_empty),
    c(11, "etc-secrets-read-empty", DotfileMasks, "/etc/shadow, /etc/gshadow, /etc/sudoers(.d) read as empty", home::etc_secrets_empty),
    c(12, "tmp-private", Ipc, "/tmp and /var/tmp are private; the canary's sockets in the outer ones are unreachable", fs::tmp_private),
    c(13, "run-user-secrets-masked", Ipc, "/run/user and /run/secrets are empty and read-only; nothing of the outer /run is visible", fs::run_masked),
    c(14, "engine-sockets-unreachable", ContainerEngines, "no docker/podman/containerd/CRI-O/BuildKit socket accepts a connection", fs::engine_sockets),
    c(15, "capabilities-none", Privileges, "effective, permitted, inheritable, bounding and ambient sets are empty", privs::capabilities_none),
    c(16, "no-new-privs", Privileges, "no_new_privs is set", privs::no_new_privs),
    c(17, "setuid-no-elevation", Privileges, "a setuid-root program runs with our euid and no capabilities", privs::setuid_no_elevation),
    c(18, "namespaces-new", Privileges, "pid, ipc, uts, mount and user namespaces (cgroup where possible) are not the launcher's", privs::namespaces_new),
    c(19, "outer-processes-invisible", PidNamespace, "every visible process is in the session's pid namespace; the launcher and canary are not visible", privs::outer_processes_invisible),
    c(20, "tiocsti-blocked", TerminalInjection, "TIOCSTI fails on the session's own controlling terminal", tty::tiocsti),
    c(21, "tioclinux-blocked", TerminalInjection, "TIOCLINUX fails with the filter's EPERM", tty::tioclinux),
    c(22, "sigwinch-and-job-control", TerminalInjection, "a window resize delivers SIGWINCH and tcsetpgrp works", tty::sigwinch_and_job_control),
    c(23, "root-read-only", FileSystem, "/ is mounted read-only; no file can be created in system directories", fs::root_read_only),
    c(24, "outside-workspace-read-only", FileSystem, "the workspace's parent and siblings cannot be written", fs::outside_workspace),
    c(25, "workspace-writable", FileSystem, "the workspace is writable and the session starts inside it", fs::workspace_writable),
    c(26, "host-executed-read-only", FileSystem, ".devcontainer, .devcontainer.json, .git/hooks and .git/config cannot be written (unless their protection is off)", fs::host_executed_read_only),
    c(27, "scope-matches-session", Scope, "what `agent-sandbox scope` reports for sample paths is what the session sees", fs::scope_matches),
    c(28, "git-config-curated", Git, "git reads only the curated read-only global config (safe.directory, allowed helpers), no system config", misc::git_config),
    c(29, "entry-points-covered", EntryPoints, "in writable PATH directories ahead of the launcher and those the shell start-up files name, the entry points are empty read-only files and the directories cannot be renamed away", misc::entry_points),
    c(30, "helpers-not-replaceable", OwnBinaries, "bwrap (and pasta) sit in system directories the session cannot write", misc::helpers),
    c(31, "recursion-runs-directly", Recursion, "`agent-sandbox run` inside runs the command in the same namespaces; the marker names this session", misc::recursion),
    c(32, "no-inherited-descriptors", Descriptors, "only stdin, stdout and stderr are open when the session starts", misc::descriptors),
    jail(33, "jail-own-network-namespace", "the network namespace is not the launcher's and is owned by an ancestor user namespace", net::own_netns),
    jail(34, "jail-blocks-10-8", "a connection to 10.11.12.13 is refused at once", |c| net::blocked(c, [10, 11, 12, 13])),
    jail(35, "jail-blocks-172-16-12", "a connection to 172.16.0.10 is refused at once", |c| net::blocked(c, [172, 16, 0, 10])),
    jail(36, "jail-blocks-192-168-16", "a connection to 192.168.1.1 is refused at once", |c| net::blocked(c, [192, 168, 1, 1])),
    jail(37, "jail-blocks-100-64-10", "a connection to 100.64.0.1 is refused at once", |c| net::blocked(c, [100, 64, 0, 1])),
    jail(38, "jail-blocks-metadata", "a connection to 169.254.169.254 is refused at once", |c| net::blocked(c, [169, 254, 169, 254])),
    jail(39, "jail-blocks-azure-wireserver", "a connection to 168.63.129.16 is refused at once", |c| net::blocked(c, [168, 63, 129, 16])),
    jail(40, "jail-blocks-connected-subnets", "an address in each of the container's connected subnets is refused at once", net::connected_subnets),
    c(41, "routes-locked", EgressJail, "adding a route fails with EPERM", net::routes_locked),
    c(42, "routes-locked-after-new-userns", EgressJail, "after unshare(CLONE_NEWUSER), adding a route still fails with EPERM", net::routes_locked_new_userns),
    jail(43, "jail-dns-forwarder-only", "resolv.conf names only the jail's forwarder and keeps the host's search/options", net::dns_forwarder_only),
    jail(44, "jail-dns-resolves", "a DNS query through the forwarder gets an answer", net::dns_resolves),
    jail(45, "jail-host-resolvers-unreachable", "the host's resolvers do not answer directly", net::host_resolvers_unreachable),
    jail(46, "jail-container-loopback-unreachable", "127.0.0.1 inside does not reach the container's loopback services", net::container_loopback),
    jail(47, "jail-gateway-not-host-loopback", "the gateway address does not reach the container's loopback", net::gateway_not_host_loopback),
    jail(48, "jail-no-inbound-forwarding", "a listener inside is not reachable from the container's loopback", net::no_inbound_forwarding),
    jail(49, "jail-ipv6-closed", "IPv6 ULA, link-local, mapped and NAT64 forms of private addresses are refused at once", net::ipv6_closed),
    jail(50, "jail-allow-ip-routed", "each allowIp address is routed (not blocked) even inside a blocked range", net::allow_ip_routed),
    Check { number: LEAVES_NOTHING, name: "session-leaves-nothing", kind: Kind::Check, defence: EgressJail, needs_jail: false, asserts: "when the session ends no process of it (holder, pasta, relay, sandbox) is left", run: Run::Outside },
    probe(52, "ptrace-outer-process", PidNamespace, "PTRACE_SEIZE of the outer canary", attack::ptrace_outer),
    probe(53, "proc-root-of-outer-process", PidNamespace, "/proc/PID/root and /proc/PID/ns of the outer canary (open, setns)", attack::proc_root_outer),
    probe(54, "read-outer-environment", PidNamespace, "the canary's secret in any visible /proc/PID/environ", attack::outer_environ),
    probe(55, "mount-or-remount", Privileges, "remount / read-write, unmount the home or /tmp mask, mount a tmpfs", attack::mount_remount),
    probe(56, "new-userns-unlocks-mounts", FileSystem, "the same from a new user + mount namespace (the session's mounts are locked)", attack::userns_mounts),
    probe(57, "raw-socket", Privileges, "open a raw IPv4 socket", attack::raw_socket),
    probe(58, "packet-socket", Privileges, "open an AF_PACKET socket", attack::packet_socket),
    probe(59, "abstract-socket-of-outer-process", Ipc, "connect to the canary's abstract unix socket (the jail's network namespace; with the jail off, Landlock scoping)", attack::abstract_socket),
    probe(60, "write-through-proc-root", FileSystem, "create files through /proc/self/root and /proc/1/root", attack::write_through_proc_root),
    probe(61, "read-launcher-keyring", Keyring, "find or read a key in the launcher's session keyring", attack::keyring),
    probe(62, "bpf-tracing-program", Privileges, "load a kprobe BPF program", attack::bpf_tracing),
    probe(63, "perf-system-wide", Privileges, "open a perf event on every process of a CPU", attack::perf_system_wide),
    probe(64, "load-kernel-module", Privileges, "init_module", attack::kernel_module),
    probe(65, "write-kernel-tunables", FileSystem, "open sysctls, sysrq-trigger, uevent_helper, cgroup.procs for writing", attack::kernel_tunables),
    probe(66, "open-by-handle", FileSystem, "open_by_handle_at (reaches files outside the mount view)", attack::open_by_handle),
    probe(67, "mknod-device", Privileges, "create a block device node", attack::mknod_device),
    probe(68, "seccomp-keyrings", Syscalls, "add_key, keyctl, request_key on every ABI; add a key to the session's own keyring", |c| syscalls::group(c, Group::Keyrings)),
    probe(69, "seccomp-bpf-perf-userfaultfd", Syscalls, "bpf, perf_event_open, userfaultfd on every ABI; a user-mode userfaultfd and a perf event on itself", |c| syscalls::group(c, Group::KernelHooks)),
    probe(70, "seccomp-modules-kexec", Syscalls, "init/finit/delete_module, the obsolete module calls, kexec_load, kexec_file_load on every ABI", |c| syscalls::group(c, Group::Modules)),
    probe(71, "seccomp-host-admin", Syscalls, "swapon/off, reboot, acct, quotactl(_fd), syslog, vhangup on every ABI", |c| syscalls::group(c, Group::HostAdmin)),
    probe(72, "seccomp-clock", Syscalls, "settimeofday, clock_settime(64), stime on every ABI", |c| syscalls::group(c, Group::Clock)),
    probe(73, "seccomp-io-uring", Syscalls, "io_uring_setup/enter/register on every ABI (ENOSYS); set up a ring", |c| syscalls::group(c, Group::IoUring)),
    probe(74, "seccomp-file-handles", Syscalls, "open_by_handle_at, name_to_handle_at (EOPNOTSUPP), fanotify_init on every ABI; a handle for /etc/hostname", |c| syscalls::group(c, Group::FileHandles)),
    probe(75, "seccomp-other-processes", Syscalls, "pidfd_getfd, process_madvise, migrate_pages, move_pages on every ABI", |c| syscalls::group(c, Group::OtherProcesses)),
    probe(76, "seccomp-obsolete-calls", Syscalls, "uselib, ustat, sysfs, _sysctl, nfsservctl, lookup_dcookie, iopl, ioperm, vm86 on every ABI", |c| syscalls::group(c, Group::Obsolete)),
    probe(77, "seccomp-personality", Syscalls, "set READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, ADDR_COMPAT_LAYOUT, ADDR_LIMIT_3GB on every ABI", syscalls::personality),
    probe(78, "seccomp-address-families", Syscalls, "sockets of every family but unix, inet, inet6, netlink (vsock, packet, alg...), also via x32, i386, socketcall and a nested network namespace", syscalls::families),
    c(79, "nested-user-namespaces-work", Syscalls, "unshare -r, a tmpfs, pivot_root, umount of the old root, chroot, sethostname, setns, clone3(CLONE_NEWUSER) work (unless the container refuses them outside too)", needs::nested_userns),
    c(80, "debugging-a-child-works", Syscalls, "PTRACE_SEIZE/PEEKDATA, process_vm_readv/writev, kcmp on a child and personality(ADDR_NO_RANDOMIZE) work (unless the container refuses them outside too)", needs::debugging),
    c(81, "abstract-socket-inside-works", Ipc, "an abstract unix socket made inside the session accepts a connection from another of its processes", attack::abstract_socket_inside),
    jail(82, "jail-so-bindtodevice-blocked", "datagrams bound to the jail's interface with SO_BINDTODEVICE to every blocked range and connected subnet are refused", |c| net::interface_named(c, Method::BindToDevice)),
    jail(83, "jail-so-bindtoifindex-blocked", "the same with SO_BINDTOIFINDEX", |c| net::interface_named(c, Method::BindToIfindex)),
    jail(84, "jail-ip-unicast-if-blocked", "the same with IP_UNICAST_IF", |c| net::interface_named(c, Method::UnicastIf)),
    jail(85, "jail-ip-pktinfo-blocked", "the same with an IP_PKTINFO control message naming the interface", |c| net::interface_named(c, Method::PktInfo)),
    jail(86, "jail-multicast-blocked", "mDNS, SSDP and all-hosts multicast are refused, routed, with IP_MULTICAST_IF and with SO_BINDTODEVICE", net::multicast_blocked),
    jail(87, "jail-broadcast-blocked", "255.255.255.255 and the jail subnet's broadcast are refused, routed and with SO_BINDTODEVICE", net::broadcast_blocked),
    jail(88, "jail-filter-locked", "creating an nf_tables table fails with EPERM, also after unshare(CLONE_NEWUSER)", net::filter_locked),
    c(89, "root-only-unreachable", RootLauncher, "for a root launcher: a 0600 file, a 0700 directory, a 0600 socket, another user's file granted to root by an ACL only and a 0600 file in a fresh top-level directory show nothing; /proc/slabinfo, /proc/kpageflags, /proc/vmallocinfo and /sys/kernel/slab cannot be read", fs::root_only_unreachable),
    Check { number: PROTECTED_SYMLINK, name: "protected-symlink-refused", kind: Kind::Check, defence: FileSystem, needs_jail: false, asserts: "a workspace whose .devcontainer is a link to the home refuses the launch, naming it", run: Run::Outside },
    jail(91, "jail-blocks-container-routes", "a sample address of every container route that is not a default route (other gateways, other tables, the local table, policy rules' targets) is refused at once", net::container_routes),
    jail(92, "jail-blocks-container-addresses", "every address of the container but the one the jail shares (on every interface) is refused at once", net::container_addrs),
    probe(93, "setid-bits-refused", SetId, "set S_ISUID or S_ISGID with chmod, fchmod, fchmodat(2), open(at), creat, mkdir(at), mknod(at) on every ABI (openat2: ENOSYS); chmod u+s/g+s a copy of a program in the workspace", syscalls::setid_bits),
    jail(94, "jail-bound-tcp-rejected", "TCP connections bound to the jail's interface (SO_BINDTODEVICE) to every blocked range and connected subnet fail at once with EHOSTUNREACH, the packet filter's reject", net::bound_tcp_rejected),
    jail(95, "jail-allowlist-name-connects", "with allowDomains: the first allowed name that resolves does so through the jail's forwarder, and its address is reached", allow::name_connects),
    jail(96, "jail-allowlist-refuses-the-rest", "with allowDomains: literal IPs (1.1.1.1, 8.8.8.8, 9.9.9.9 and 192.0.2.1 on 443) fail at once with the filter's reject; an unlisted name gets the forwarder's refusal (NXDOMAIN, extended error Blocked); pasta's forwarder asked directly refuses the send", allow::refuses_the_rest),
    Check { number: REPORT_LISTS, name: "jail-report-lists-refusals", kind: Kind::Check, defence: EgressJail, needs_jail: true, asserts: "after the session, the launcher's report names what the filter refused: check 94's 10.11.12.13:443, check 98's routed 172.16.0.10:5432, and with allowDomains check 96's literal IPs and unlisted name", run: Run::Outside },
    jail(98, "jail-routed-attempts-rejected", "plain (routed) TCP connections to a sample of every blocked range (and 169.254.169.254:80, 172.16.0.10:5432) fail at once with EHOSTUNREACH and datagrams with EPERM: the routes lead into the dead end, where the packet filter rejects and counts them (a blackhole's EINVAL is not counted)", net::routed_rejected),
    probe(100, "outer-process-unreadable", PidNamespace, "where the session's /proc shows the outer canary (a masked /proc): its environ, mem, maps, smaps, pagemap, auxv, stack, syscall, io, personality, root, cwd, exe, fd, ns, map_files, fdinfo, and process_vm_readv", procs::outer_reads),
    probe(101, "outer-process-unsignalable", PidNamespace, "signal the outer canary: pidfd_send_signal on its /proc directory, kill by pid", procs::outer_signals),
    probe(102, "outer-process-settings", PidNamespace, "open the outer canary's oom_score_adj, oom_adj, autogroup, coredump_filter, clear_refs, sched for writing (nothing written)", procs::outer_settings),
];

/// The check called `name`.
pub fn by_name(name: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check with `number`.
    fn by_number(number: u16) -> Option<&'static Check> {
        CHECKS.iter().find(|c| c.number == number)
    }

    #[test]
    fn numbers_are_consecutive_and_names_unique() {
        // Consecutive from 1, except that a number may jump to a round
        // hundred (a series started while others took the numbers before
        // it): each number stays where it was given.
        let mut last = 0;
        for c in CHECKS {
            assert!(c.number == last + 1 || (c.number > last && c.number % 100 == 0), "{c:?} after {last}");
            last = c.number;
            assert_eq!(CHECKS.iter().filter(|o| o.name == c.name).count(), 1, "{c:?}");
            assert!(c.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "{c:?}");
        }
        assert!(CHECKS.iter().filter(|c| c.kind == Kind::Check).count() >= 30);
        assert!(CHECKS.iter().filter(|c| c.kind == Kind::Probe).count() >= 10);
        assert!(matches!(by_number(LEAVES_NOTHING).map(|c| c.run), Some(Run::Outside)));
    }

    /// Every defence row of docs/defences.md has at least one check.
    #[test]
    fn every_defence_is_checked() {
        for d in [
            Sentinel,
            Environment,
            Home,
            DotfileMasks,
            Ipc,
            ContainerEngines,
            Privileges,
            PidNamespace,
            TerminalInjection,
            Syscalls,
            FileSystem,
            Git,
            EntryPoints,
            OwnBinaries,
            Recursion,
            EgressJail,
            RootLauncher,
            SetId,
        ] {
            assert!(CHECKS.iter().any(|c| c.defence == d), "{d:?}");
        }
    }

    /// docs/verify.md's check table lists exactly the registry, in order.
    #[test]
    fn docs_list_exactly_the_registry() {
        let doc = include_str!("../../../docs/verify.md");
        let rows: Vec<(u16, String, String)> = doc
            .lines()
            .filter_map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                let n = cells.get(1)?.parse::<u16>().ok()?;
                Some((n, cells.get(2)?.trim_matches('`').to_string(), cells.get(4)?.to_string()))
            })
            .collect();
        let want: Vec<(u16, String, String)> = CHECKS.iter().map(|c| (c.number, c.name.to_string(), c.defence.label().to_string())).collect();
        assert_eq!(rows, want);
    }
}
