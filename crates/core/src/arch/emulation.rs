//! Another architecture's executables under emulation (qemu-user through
//! the kernel's binfmt_misc, as podman, Docker and `mmdebstrap --arch` use
//! it), and what cannot work there.
//!
//! - [`handler_for`]: is a binfmt_misc handler registered that runs `arch`'s
//!   ELF executables, also inside containers (the `F` flag)? An image build
//!   for another platform needs one; the handler files are parsed and
//!   matched as values ([`parse_handler`], [`Handler::runs`]).
//! - [`emulator`]: does this very process run under such an emulator? The
//!   emulator answers `/proc/self/exe` with the emulated program, but the
//!   kernel's own link, reached as `/proc/thread-self/exe`, names the
//!   emulator. Under qemu-user a session cannot start: qemu refuses
//!   `clone()` with namespace flags and keeps a helper thread, so the kernel
//!   refuses `unshare(CLONE_NEWUSER)` (a multi-threaded caller) and joining
//!   namespaces, and it refuses to load seccomp filters (EINVAL).

use super::Arch;
use std::path::{Path, PathBuf};

/// Where the kernel lists binfmt_misc handlers.
const BINFMT_DIR: &str = "/proc/sys/fs/binfmt_misc";

/// One binfmt_misc handler (a file in [`BINFMT_DIR`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    pub name: String,
    pub enabled: bool,
    pub interpreter: PathBuf,
    pub flags: String,
    pub offset: usize,
    pub(crate) magic: Vec<u8>,
    pub mask: Vec<u8>,
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Reads a handler file's text (magic handlers only; extension handlers
/// and unreadable text give None).
fn parse_handler(name: &str, text: &str) -> Option<Handler> {
    let mut h =
        Handler { name: name.to_owned(), enabled: false, interpreter: PathBuf::new(), flags: String::new(), offset: 0, magic: Vec::new(), mask: Vec::new() };
    for line in text.lines() {
        match line.split_once(' ') {
            None if line == "enabled" => h.enabled = true,
            Some(("interpreter", v)) => h.interpreter = PathBuf::from(v),
            Some(("flags:", v)) => h.flags = v.to_owned(),
            Some(("offset", v)) => h.offset = v.parse().ok()?,
            Some(("magic", v)) => h.magic = hex(v)?,
            Some(("mask", v)) => h.mask = hex(v)?,
            _ => {}
        }
    }
    (!h.magic.is_empty()).then_some(h)
}

/// The first bytes of a static (ET_EXEC) and a position-independent
/// (ET_DYN) 64-bit little-endian ELF executable for `arch`.
fn elf_headers(arch: Arch) -> [[u8; 20]; 2] {
    let mut h = [0u8; 20];
    h[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    h[18..20].copy_from_slice(&arch.elf_machine().to_le_bytes());
    let (mut exec, mut dyn_) = (h, h);
    exec[16] = 2;
    dyn_[16] = 3;
    [exec, dyn_]
}

impl Handler {
    /// Whether this handler runs both kinds of `arch` executables.
    pub fn runs(&self, arch: Arch) -> bool {
        let matches = |file: &[u8]| {
            self.magic.iter().enumerate().all(|(i, m)| {
                let mask = self.mask.get(i).copied().unwrap_or(0xff);
                file.get(self.offset + i).is_some_and(|b| b & mask == m & mask)
            })
        };
        self.enabled && elf_headers(arch).iter().all(|h| matches(h))
    }

    /// `F` (fix binary): the kernel opened the interpreter when it was
    /// registered, so it also runs in containers that do not contain it.
    fn works_in_containers(&self) -> bool {
        self.flags.contains('F')
    }
}

/// What [`handler_for`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registration {
    /// A handler runs `arch` executables, also in containers.
    Ready(Handler),
    /// One runs them, but only where its interpreter exists (no `F` flag).
    NotInContainers(Handler),
    /// binfmt_misc lists no handler for them.
    Missing,
    /// binfmt_misc is not mounted (or not readable) here.
    Unknown(String),
}

/// The handler for `arch` among `handlers`.
pub fn choose(handlers: &[Handler], arch: Arch) -> Registration {
    let mut runs = handlers.iter().filter(|h| h.runs(arch));
    let first = runs.clone().next().cloned();
    match (runs.find(|h| h.works_in_containers()), first) {
        (Some(h), _) => Registration::Ready(h.clone()),
        (None, Some(h)) => Registration::NotInContainers(h),
        (None, None) => Registration::Missing,
    }
}

/// Reads binfmt_misc's handlers and picks the one for `arch`.
pub fn handler_for(arch: Arch) -> Registration {
    let dir = Path::new(BINFMT_DIR);
    if !dir.join("register").exists() {
        return Registration::Unknown(format!("{BINFMT_DIR} is not mounted"));
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return Registration::Unknown(format!("cannot read {BINFMT_DIR}: {e}")),
    };
    let handlers: Vec<Handler> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == "register" || name == "status" {
                return None;
            }
            parse_handler(&name, &std::fs::read_to_string(e.path()).ok()?)
        })
        .collect();
    choose(&handlers, arch)
}

/// The emulator this process runs under, if any (see the module comment).
pub fn emulator() -> Option<PathBuf> {
    let seen = std::fs::read_link("/proc/self/exe").ok()?;
    let real = std::fs::read_link("/proc/thread-self/exe").ok()?;
    (real != seen).then_some(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Debian 12's qemu-user-static registration, as the kernel lists it.
    const DEBIAN_AARCH64: &str = "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: POF\noffset 0\n\
        magic 7f454c460201010000000000000000000200b700\nmask ffffffffffffff00fffffffffffffffffeffffff\n";

    fn debian() -> Handler {
        parse_handler("qemu-aarch64", DEBIAN_AARCH64).unwrap()
    }

    #[test]
    fn debian_handler_parses_and_runs_aarch64_only() {
        let h = debian();
        assert_eq!((h.enabled, h.interpreter.as_path(), h.flags.as_str(), h.offset), (true, Path::new("/usr/libexec/qemu-binfmt/aarch64-binfmt-P"), "POF", 0));
        assert_eq!(h.magic.len(), 20);
        assert!(h.runs(Arch::Aarch64));
        assert!(!h.runs(Arch::X86_64));
        assert!(h.works_in_containers());
        let disabled = Handler { enabled: false, ..h.clone() };
        assert!(!disabled.runs(Arch::Aarch64));
    }

    #[test]
    fn choosing_needs_the_fix_binary_flag_for_containers() {
        let h = debian();
        let no_f = Handler { flags: "P".into(), name: "other".into(), ..h.clone() };
        assert_eq!(choose(std::slice::from_ref(&no_f), Arch::Aarch64), Registration::NotInContainers(no_f.clone()));
        assert_eq!(choose(&[no_f, h.clone()], Arch::Aarch64), Registration::Ready(h.clone()));
        assert_eq!(choose(&[h], Arch::X86_64), Registration::Missing);
        assert_eq!(choose(&[], Arch::Aarch64), Registration::Missing);
    }

    #[test]
    fn extension_handlers_and_garbage_are_skipped() {
        assert_eq!(parse_handler("jar", "enabled\ninterpreter /usr/bin/jexec\nflags: \nextension .jar\n"), None);
        assert_eq!(parse_handler("x", "enabled\nmagic 7f4\n"), None);
        // A mask shorter than the magic compares the rest exactly.
        let short_mask = Handler { mask: vec![0xff; 4], ..debian() };
        assert!(!short_mask.runs(Arch::Aarch64), "EI_OSABI and e_type are compared exactly: the ET_DYN header differs");
    }

    #[test]
    fn this_process_is_not_emulated_natively() {
        // The unit tests also run under qemu-user (scripts/test.sh): there
        // the emulator is seen; on the machine's own architecture it is not.
        let native = std::env::consts::ARCH
            == std::process::Command::new("uname").arg("-m").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
        assert_eq!(emulator().is_none(), native, "{:?}", emulator());
    }
}
