//! The canary: a sacrificial process the launcher starts *outside* the
//! session, for the adversarial probes to aim at. It holds a secret in its
//! environment and listens on an abstract unix socket, on unix sockets in
//! the outer /tmp and /var/tmp, and on a TCP port of the outer loopback;
//! every connection it accepts is greeted with the secret, so a probe knows
//! it really reached the outside. It exits when the launcher goes away.

use crate::env_vars::VERIFY_CANARY as CANARY_ENV;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// `agent-sandbox __canary ABSTRACT-NAME SOCKET...`: prints `ready PORT`
/// and serves until its stdin closes (the launcher exited or died), then
/// removes its socket files.
pub fn canary_main(args: &[String]) -> i32 {
    let secret = std::env::var(CANARY_ENV).unwrap_or_default();
    let Some((name, paths)) = args.split_first() else { return 2 };
    let mut unix: Vec<UnixListener> = Vec::new();
    if let Ok(l) = SocketAddr::from_abstract_name(name.as_bytes()).and_then(|a| UnixListener::bind_addr(&a)) {
        unix.push(l);
    }
    for p in paths {
        if let Ok(l) = UnixListener::bind(p) {
            unix.push(l);
        }
    }
    let Ok(tcp) = std::net::TcpListener::bind("127.0.0.1:0") else { return 3 };
    let port = tcp.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("ready {port}");
    let _ = std::io::stdout().flush();
    let mut fds: Vec<libc::pollfd> = vec![libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 }];
    fds.push(libc::pollfd { fd: tcp.as_raw_fd(), events: libc::POLLIN, revents: 0 });
    fds.extend(unix.iter().map(|l| libc::pollfd { fd: l.as_raw_fd(), events: libc::POLLIN, revents: 0 }));
    loop {
        // SAFETY: a valid array of pollfds for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            continue;
        }
        if fds[0].revents != 0 {
            break; // the launcher closed our stdin (or died)
        }
        if fds[1].revents != 0 {
            if let Ok((mut s, _)) = tcp.accept() {
                let _ = s.write_all(secret.as_bytes());
            }
        }
        for (i, l) in unix.iter().enumerate() {
            if fds[i + 2].revents != 0 {
                if let Ok((mut s, _)) = l.accept() {
                    let _ = s.write_all(secret.as_bytes());
                }
            }
        }
    }
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
    0
}

/// The running canary, stopped and cleaned up on drop.
pub(super) struct Canary {
    child: Child,
    pub port: u16,
    pub(crate) abstract_name: String,
    pub sockets: Vec<PathBuf>,
}

impl Canary {
    /// Starts `exe __canary` with `secret` in its environment.
    pub(super) fn start(exe: &std::path::Path, secret: &str) -> std::io::Result<Canary> {
        let abstract_name = format!("agent-sandbox-verify-{secret}");
        let sockets: Vec<PathBuf> = ["/tmp", "/var/tmp"]
            .iter()
            .filter(|d| std::path::Path::new(d).is_dir())
            .map(|d| PathBuf::from(d).join(format!(".agent-sandbox-verify-{secret}.sock")))
            .collect();
        let mut child = Command::new(exe)
            .arg(super::CANARY_VERB)
            .arg(&abstract_name)
            .args(&sockets)
            .env_clear()
            .env(CANARY_ENV, secret)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let port = line.trim().strip_prefix("ready ").and_then(|p| p.parse().ok());
        let mut canary = Canary { child, port: 0, abstract_name, sockets };
        match port {
            Some(p) => {
                canary.port = p;
                Ok(canary)
            }
            None => Err(std::io::Error::other("the canary process did not start")),
        }
    }

    pub(super) fn pid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for p in &self.sockets {
            let _ = std::fs::remove_file(p);
        }
    }
}
