//! Writing a user namespace's id maps: the one place that does, for the
//! sandbox's own namespace, the idmapped mounts' namespace, the jail's
//! holder and doctor's probes. (Doctor's holder probe writes them with raw
//! system calls instead: it runs in a forked child of a process that may
//! have threads, where only async-signal-safe calls are allowed.)

use std::io::Error;

/// Whose maps: this process's (`/proc/self`) or another's (`/proc/PID`,
/// which a process with the rights outside may write).
#[derive(Debug, Clone, Copy)]
pub enum Whose {
    This,
    Pid(i32),
}

/// Whether `setgroups` is denied first: the kernel requires it before an
/// unprivileged writer maps groups, and it keeps the namespace from
/// dropping supplementary groups that deny access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setgroups {
    Deny,
    Keep,
}

/// Writes `uid_map` and `gid_map` (lines as the kernel takes them), after
/// `setgroups` when it is denied. An error names the file that refused.
pub fn write(whose: Whose, uid_map: &str, gid_map: &str, setgroups: Setgroups) -> Result<(), Error> {
    let dir = match whose {
        Whose::This => "/proc/self".to_string(),
        Whose::Pid(pid) => format!("/proc/{pid}"),
    };
    let deny = [("setgroups", "deny\n")];
    let maps = [("uid_map", uid_map), ("gid_map", gid_map)];
    let steps = if setgroups == Setgroups::Deny { &deny[..] } else { &[] }.iter().chain(maps.iter());
    for (file, text) in steps {
        let path = format!("{dir}/{file}");
        std::fs::write(&path, text).map_err(|e| Error::new(e.kind(), format!("writing {path}: {e}")))?;
    }
    Ok(())
}
