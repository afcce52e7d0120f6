//! Why the jail refuses to launch. Every message names the cause and the
//! fix; none advertises a way to run without the jail (docs/jail.md, "When it refuses to launch").

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JailError {
    #[error("egress jail: {path} is missing, so pasta cannot give the session a network. Fix: {}", crate::fixes::TUN)]
    TunMissing { path: PathBuf },

    #[error("egress jail: {path} is not usable ({why}). Fix: {}", crate::fixes::TUN)]
    TunUnusable { path: PathBuf, why: String },

    #[error("egress jail: {path} is the TUN device but {why}. Fix: {fix}")]
    TunPermission { path: PathBuf, why: String, fix: String },

    #[error("egress jail: pasta was not found in {dirs}. Fix: {}", crate::fixes::PASTA)]
    PastaMissing { dirs: String },

    #[error("egress jail: refusing to run pasta: {why}. Fix: reinstall passt from the distribution (root-owned, mode 755)")]
    PastaUntrusted { why: String },

    #[error("egress jail: user namespaces are not available: {cause}. Fix: {fix}")]
    UserNamespaces { cause: String, fix: String },

    #[error("egress jail: pasta could not attach to the session's network namespace: {detail}. Fix: {fix}")]
    PastaAttach { detail: String, fix: String },

    #[error(
        "egress jail: pasta did not finish configuring the session's network within {secs} s. \
         Fix: check that pasta runs (`pasta --version`) and that the container is not out of resources"
    )]
    PastaTimeout { secs: u64 },

    #[error(
        "egress jail: the container has no usable network for the jail ({why}). \
         Fix: give the container a network with an IPv4 address and a default route"
    )]
    NoNetwork { why: String },

    #[error(
        "egress jail: refusing to launch: the session's network differs from the plan (routes and packet filter):\n  {}\n\
         Fix: something changed the namespace while it was locked; retry, and report it if it persists",
        .differences.join("\n  ")
    )]
    UnexpectedNetwork { differences: Vec<String> },

    #[error(
        "egress jail: the jail's packet filter, which stops sockets that name their interface from skipping the \
         blocked routes, could not be set up ({step}: {detail}); the jail never runs on routes alone. Fix: {fix}"
    )]
    PacketFilter { step: String, detail: String, fix: String },

    #[error(
        "egress jail: the container's routes, policy rules and addresses could not be read ({message}); the jail \
         blocks what the container routes other than by its default route, so it cannot run without them. \
         Fix: check that the container's processes may use rtnetlink (`ip route show table all` should work)"
    )]
    ContainerNetwork { message: String },

    #[error(
        "egress jail: {failed}; this agent-sandbox ({arch}) runs under the emulator {emulator}, and user-mode emulators such as \
         qemu-user do not pass on every rtnetlink request, create namespaces or load seccomp filters, so sessions cannot start. \
         Fix: {}",
        crate::fixes::EMULATED
    )]
    Emulated { failed: String, arch: String, emulator: PathBuf },

    #[error("egress jail: locking the routes failed ({step}: {message}). Fix: report it with the output of `ip route show table all`")]
    RouteLock { step: String, message: String },

    #[error(
        "egress jail: port {port} is in both localPorts and callbackPorts; a port is relayed in one direction only. \
         Fix: remove it from one of the two lists"
    )]
    PortConflict { port: u16 },

    #[error("egress jail: port 0 cannot be relayed. Fix: list ports from 1 to 65535 in localPorts/callbackPorts")]
    BadPort,

    #[error("egress jail: allowIp {ip} is not a unicast host address ({why}). Fix: list the device's own IPv4 address")]
    BadAllowIp { ip: std::net::Ipv4Addr, why: String },

    #[error(
        "egress jail: every address reserved for the DNS forwarder ({candidates}) is taken by the container's \
         networks or by allowIp. Fix: remove the clashing allowIp entry"
    )]
    NoForwarderAddress { candidates: String },

    #[error(
        "egress jail: allowDomains needs the container's resolver, and its /etc/resolv.conf names no IPv4 nameserver. \
         Fix: give the container an IPv4 nameserver, or remove allowDomains"
    )]
    NoResolver,

    #[error("egress jail: the loopback relay failed ({message}). Fix: check localPorts/callbackPorts")]
    Relay { message: String },

    #[error("egress jail: could not start the sandbox inside the jail: {message}. Fix: check that bwrap is installed")]
    Exec { message: String },

    #[error(
        "egress jail: the agent-sandbox executable, which starts the session's command once the routes are \
         locked, cannot be found ({why}). Fix: reinstall agent-sandbox and start the session again"
    )]
    GateExecutable { why: String },

    #[error("egress jail: {what} did not answer within {secs} s. Fix: retry; report it if it persists")]
    Timeout { what: &'static str, secs: u64 },

    #[error("the session was not started: {message}. Fix: start it again; report it if it persists")]
    BeforeGate { message: String },

    #[error("egress jail: {step} failed: {source}")]
    System {
        step: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl JailError {
    /// A failed system call during setup.
    pub(crate) fn sys(step: &'static str, source: impl Into<std::io::Error>) -> JailError {
        JailError::System { step, source: source.into() }
    }
}

/// What to do when the kernel would not give the jail its packet filter
/// (`errno` of the refusal, if any).
pub fn packet_filter_fix(errno: Option<i32>) -> String {
    match errno {
        Some(libc::EPERM | libc::EACCES) => "the kernel or a security policy (AppArmor, SELinux, a hardened kernel) refuses nf_tables \
            inside user namespaces; allow it for the container, or use a kernel that permits it"
            .into(),
        _ => "the jail needs nf_tables in the kernel (CONFIG_NF_TABLES and CONFIG_NF_TABLES_IPV4); where it is a module, \
            load it on the host, outside the container (`modprobe nf_tables`)"
            .into(),
    }
}

/// `nix` errors as `io::Error` (for [`JailError::sys`]).
pub(crate) fn errno(e: nix::errno::Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<JailError> {
        vec![
            JailError::TunMissing { path: "/dev/net/tun".into() },
            JailError::TunUnusable { path: "/dev/net/tun".into(), why: "not a device".into() },
            JailError::TunPermission { path: "/dev/net/tun".into(), why: "w".into(), fix: "f".into() },
            JailError::PastaMissing { dirs: "/usr/bin".into() },
            JailError::PastaUntrusted { why: "x".into() },
            JailError::UserNamespaces { cause: "c".into(), fix: "f".into() },
            JailError::Emulated { failed: "f".into(), arch: "aarch64".into(), emulator: "/usr/bin/qemu-aarch64-static".into() },
            JailError::PastaAttach { detail: "d".into(), fix: "f".into() },
            JailError::PastaTimeout { secs: 1 },
            JailError::NoNetwork { why: "w".into() },
            JailError::UnexpectedNetwork { differences: vec!["a".into(), "b".into()] },
            JailError::RouteLock { step: "s".into(), message: "m".into() },
            JailError::ContainerNetwork { message: "m".into() },
            JailError::PacketFilter { step: "s".into(), detail: "d".into(), fix: "f".into() },
            JailError::PortConflict { port: 1 },
            JailError::BadPort,
            JailError::BadAllowIp { ip: std::net::Ipv4Addr::LOCALHOST, why: "w".into() },
            JailError::NoForwarderAddress { candidates: "c".into() },
            JailError::Relay { message: "m".into() },
            JailError::Exec { message: "m".into() },
            JailError::Timeout { what: "w", secs: 1 },
            JailError::GateExecutable { why: "w".into() },
            JailError::sys("fork", std::io::Error::from_raw_os_error(libc::EAGAIN)),
        ]
    }

    #[test]
    fn messages_name_the_jail_and_never_the_off_switch() {
        for e in all() {
            let m = e.to_string();
            assert!(m.starts_with("egress jail: "), "{m}");
            for banned in ["EGRESS_JAIL", "egressJail", "egress_jail", "=0", "disable the jail"] {
                assert!(!m.contains(banned), "{m} mentions {banned}");
            }
        }
    }

    #[test]
    fn fixes_are_named() {
        for e in all() {
            if !matches!(e, JailError::System { .. }) {
                assert!(e.to_string().contains("Fix: "), "{e}");
            }
        }
    }
}
