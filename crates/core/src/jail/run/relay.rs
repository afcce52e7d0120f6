//! The loopback relays (no socat): one relay process outside the jail,
//! with a factory child inside it (`fdpass.rs`).
//! - localPorts: the jail's 127.0.0.1:P (a listener made by the factory)
//!   → the container's 127.0.0.1:P (connected from the relay).
//! - callbackPorts: the container's 127.0.0.1:P (a listener of the relay)
//!   → the session's listener on the jail's 127.0.0.1:P (a socket made by
//!   the factory, connected from the relay). A busy port is a warning.
//!
//! Both are the launcher's children and die with it; the relay copies bytes on a
//! current-thread tokio runtime made after the fork (small buffers, one
//! task per connection).

use super::fdpass::{factory_main, recv_fd, request_socket, start_connect, END_OF_LISTENERS};
use super::sys::{die_with_parent, fork_child};
use crate::jail::error::{errno, JailError};
use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::unistd::Pid;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

pub(crate) struct Relay {
    pub pid: Pid,
    pub factory: Pid,
    /// Readable (one byte, or EOF on failure) once the listeners are up.
    pub ready: OwnedFd,
}

/// What the relay needs: the jail's namespaces and the ports.
pub(crate) struct RelaySpec<'a> {
    pub(crate) ns_user: &'a OwnedFd,
    pub(crate) ns_net: &'a OwnedFd,
    pub local_ports: &'a [u16],
    pub callback_ports: &'a [u16],
}

/// Forks the factory and the relay, both children of the launcher (which
/// kills and reaps them), joined by a socketpair.
pub(crate) fn spawn(spec: &RelaySpec<'_>) -> Result<Relay, JailError> {
    let sys = |step| move |e| JailError::sys(step, errno(e));
    let (chan, factory_end) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC).map_err(sys("socketpair"))?;
    let (ready, ready_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(sys("pipe"))?;
    let parent = nix::unistd::getpid();
    let factory = fork_child("forking the socket factory", || {
        let keep = [factory_end.as_raw_fd(), spec.ns_user.as_raw_fd(), spec.ns_net.as_raw_fd()];
        if die_with_parent(parent).is_err() || !isolate(&keep) {
            return 1;
        }
        factory_main(&factory_end, spec.ns_user, spec.ns_net, spec.local_ports)
    })?;
    drop(factory_end);
    let relay = fork_child("forking the relay", || {
        if die_with_parent(parent).is_err() || !isolate(&[chan.as_raw_fd(), ready_w.as_raw_fd()]) {
            return 1;
        }
        relay_main(spec, chan.as_raw_fd(), &ready_w)
    });
    let pid = match relay {
        Ok(pid) => pid,
        Err(e) => {
            let _ = nix::sys::signal::kill(factory, nix::sys::signal::Signal::SIGKILL);
            let _ = nix::sys::wait::waitpid(factory, None);
            return Err(e);
        }
    };
    Ok(Relay { pid, factory, ready })
}

/// In a helper child: own process group (terminal signals are the
/// session's), and no inherited descriptor but `keep` (helpers do not
/// exec, so close-on-exec does not help).
fn isolate(keep: &[RawFd]) -> bool {
    let _ = nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0));
    super::sys::close_fds_except(keep)
}

fn relay_main(spec: &RelaySpec<'_>, chan: RawFd, ready_w: &OwnedFd) -> i32 {
    let callbacks = bind_callbacks(spec.callback_ports);
    let Some(locals) = receive_listeners(chan) else {
        return 1;
    };
    if nix::unistd::write(ready_w, b"r").is_err() {
        return 1;
    }
    serve(locals, callbacks, chan)
}

/// The container-side listeners of the callback ports; a busy port is
/// skipped with a warning.
fn bind_callbacks(ports: &[u16]) -> Vec<(u16, std::net::TcpListener)> {
    let mut out = Vec::new();
    for &port in ports {
        match std::net::TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)) {
            Ok(l) => out.push((port, l)),
            Err(e) => tracing::warn!(
                "egress jail: callback port {port} is busy in the container ({e}); a login callback to \
                 127.0.0.1:{port} will not reach the session. Stop the program using port {port} and retry"
            ),
        }
    }
    out
}

/// The factory's jail-side listeners, until its end-of-list message.
fn receive_listeners(chan: RawFd) -> Option<Vec<(u16, std::net::TcpListener)>> {
    let mut out = Vec::new();
    loop {
        let (tag, fd) = recv_fd(chan).ok()??;
        match (tag.as_slice(), fd) {
            (END_OF_LISTENERS, None) => return Some(out),
            ([hi, lo], Some(fd)) => out.push((u16::from_be_bytes([*hi, *lo]), std::net::TcpListener::from(fd))),
            _ => return None,
        }
    }
}

/// Copies bytes until killed.
fn serve(locals: Vec<(u16, std::net::TcpListener)>, callbacks: Vec<(u16, std::net::TcpListener)>, chan: RawFd) -> i32 {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build() else {
        return 1;
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        for (port, l) in locals {
            tokio::task::spawn_local(accept_loop(l, port, Target::Container));
        }
        for (port, l) in callbacks {
            tokio::task::spawn_local(accept_loop(l, port, Target::Jail(chan)));
        }
        std::future::pending::<()>().await;
    });
    0
}

/// Where an accepted connection goes.
#[derive(Clone, Copy)]
enum Target {
    /// The container's 127.0.0.1:P (the relay's own namespace).
    Container,
    /// The jail's 127.0.0.1:P, through a socket from the factory (the
    /// descriptor of the socketpair to it).
    Jail(RawFd),
}

async fn accept_loop(listener: std::net::TcpListener, port: u16, target: Target) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
    loop {
        let Ok((inbound, _)) = listener.accept().await else {
            // Out of descriptors or similar: back off instead of spinning.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        tokio::task::spawn_local(async move {
            let outbound = match target {
                Target::Container => tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).await,
                Target::Jail(chan) => jail_connect(chan, port).await,
            };
            match outbound {
                Ok(out) => pump(inbound, out).await,
                Err(e) => tracing::debug!("egress jail: relay to 127.0.0.1:{port} failed: {e}"),
            }
        });
    }
}

/// A socket made inside the jail, connected there to 127.0.0.1:`port`
/// without blocking the relay.
async fn jail_connect(chan: RawFd, port: u16) -> std::io::Result<tokio::net::TcpStream> {
    let sock = request_socket(chan).map_err(std::io::Error::from)?;
    let stream = start_connect(sock, port)?;
    stream.set_nonblocking(true)?;
    let stream = tokio::net::TcpStream::from_std(stream)?;
    stream.writable().await?;
    match stream.take_error()? {
        Some(e) => Err(e),
        None => Ok(stream),
    }
}

async fn pump(mut a: tokio::net::TcpStream, mut b: tokio::net::TcpStream) {
    let _ = tokio::io::copy_bidirectional(&mut a, &mut b).await;
}
