//! The CPU architectures agent-sandbox ships for (x86_64, aarch64) and
//! their names in each vocabulary (`uname -m` / Rust, OCI platforms, ELF);
//! whether a file is a static executable for one of them; where the static
//! binaries of each are found ([`bins`]); and running another
//! architecture's binaries under emulation ([`emulation`]).
//!
//! Not here: what is packaged or built with the binaries (`publish`, `image`).

pub mod bins;
pub mod emulation;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Arch {
    X86_64,
    Aarch64,
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("agent-sandbox builds for x86_64 and aarch64 (its seccomp filters are written per ABI)");

impl Arch {
    /// Every architecture the feature and the image ship for.
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// The architecture this program was built for.
    pub fn native() -> Arch {
        if cfg!(target_arch = "aarch64") {
            Arch::Aarch64
        } else {
            Arch::X86_64
        }
    }

    /// The `uname -m` name (also Rust's `target_arch`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The OCI platform architecture.
    pub fn oci(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Aarch64 => "arm64",
        }
    }

    /// The OCI platform, `linux/amd64` or `linux/arm64`.
    pub fn platform(self) -> String {
        format!("linux/{}", self.oci())
    }

    /// `e_machine` in its ELF executables.
    pub(crate) fn elf_machine(self) -> u16 {
        match self {
            Arch::X86_64 => 62,
            Arch::Aarch64 => 183,
        }
    }

    /// By its `uname -m` name.
    pub fn from_name(s: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.name() == s)
    }

    /// By an OCI platform: `linux/amd64`, `linux/arm64` or `linux/arm64/v8`.
    pub fn from_platform(s: &str) -> Option<Arch> {
        match s {
            "linux/amd64" => Some(Arch::X86_64),
            "linux/arm64" | "linux/arm64/v8" => Some(Arch::Aarch64),
            _ => None,
        }
    }

    /// The names, for messages: `x86_64 and aarch64`.
    pub fn all_names() -> String {
        Arch::ALL.map(Arch::name).join(" and ")
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Whether `data` is a 64-bit little-endian ELF executable for `arch` with
/// no `PT_INTERP` program header (no dynamic loader needed): it then runs
/// in any base image of that architecture.
pub fn check_static_elf(data: &[u8], arch: Arch) -> Result<(), String> {
    let u16_at = |o: usize| data.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| data.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let u64_at = |o: usize| data.get(o..o + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
    if data.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let machine = u16_at(0x12);
    if machine != Some(arch.elf_machine()) {
        let built = match Arch::ALL.into_iter().find(|a| Some(a.elf_machine()) == machine) {
            Some(a) => a.name().to_owned(),
            None => format!("another architecture (ELF machine {})", machine.unwrap_or(0)),
        };
        return Err(format!("built for {built}, bundled as {arch}"));
    }
    let (phoff, phentsize, phnum) = match (u64_at(0x20), u16_at(0x36), u16_at(0x38)) {
        (Some(o), Some(s), Some(n)) => (o as usize, s as usize, n as usize),
        _ => return Err("truncated ELF header".into()),
    };
    for i in 0..phnum {
        match u32_at(phoff + i * phentsize) {
            Some(3) => return Err("it needs a dynamic loader (PT_INTERP)".into()),
            Some(_) => {}
            None => return Err("truncated program headers".into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(machine: u16, interp: bool) -> Vec<u8> {
        let mut d = vec![0u8; 64 + 56 * 2];
        d[..6].copy_from_slice(b"\x7fELF\x02\x01");
        d[0x12..0x14].copy_from_slice(&machine.to_le_bytes());
        d[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        d[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        d[0x38..0x3a].copy_from_slice(&2u16.to_le_bytes());
        d[64..68].copy_from_slice(&1u32.to_le_bytes());
        d[120..124].copy_from_slice(&(if interp { 3u32 } else { 1 }).to_le_bytes());
        d
    }

    #[test]
    fn static_elf_check() {
        assert_eq!(check_static_elf(&elf(62, false), Arch::X86_64), Ok(()));
        assert_eq!(check_static_elf(&elf(183, false), Arch::Aarch64), Ok(()));
        assert!(check_static_elf(&elf(62, true), Arch::X86_64).unwrap_err().contains("dynamic loader"));
        assert!(check_static_elf(&elf(183, true), Arch::Aarch64).unwrap_err().contains("dynamic loader"));
        assert_eq!(check_static_elf(&elf(62, false), Arch::Aarch64).unwrap_err(), "built for x86_64, bundled as aarch64");
        assert_eq!(check_static_elf(&elf(183, false), Arch::X86_64).unwrap_err(), "built for aarch64, bundled as x86_64");
        assert_eq!(check_static_elf(&elf(243, false), Arch::X86_64).unwrap_err(), "built for another architecture (ELF machine 243), bundled as x86_64");
        assert!(check_static_elf(b"#!/bin/sh\n", Arch::X86_64).is_err());
        assert!(check_static_elf(&elf(62, false)[..70], Arch::X86_64).is_err());
    }

    #[test]
    fn this_binary_is_checked_against_its_own_arch() {
        // The test binary itself is an ELF for this machine (maybe dynamic).
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let r = check_static_elf(&me, Arch::native());
        assert!(r.is_ok() || r.unwrap_err().contains("dynamic loader"));
        assert_eq!(Arch::native().name(), std::env::consts::ARCH);
    }

    #[test]
    fn names_in_every_vocabulary() {
        let rows: Vec<(&str, &str, String, u16)> = Arch::ALL.iter().map(|a| (a.name(), a.oci(), a.platform(), a.elf_machine())).collect();
        assert_eq!(rows, [("x86_64", "amd64", "linux/amd64".to_owned(), 62), ("aarch64", "arm64", "linux/arm64".to_owned(), 183)]);
        assert_eq!(Arch::from_name("aarch64"), Some(Arch::Aarch64));
        assert_eq!(Arch::from_name("arm64"), None, "uname names only");
        assert_eq!(Arch::from_platform("linux/arm64/v8"), Some(Arch::Aarch64));
        assert_eq!(Arch::from_platform("linux/riscv64"), None);
        assert_eq!(Arch::all_names(), "x86_64 and aarch64");
    }
}
