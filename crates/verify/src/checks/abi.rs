//! System calls through every ABI this process can reach, so the profile
//! is checked where an attacker would go around it: natively; on x86_64
//! also with x32 numbers (bit 30, same architecture) and through `int
//! 0x80` (i386, a different architecture). The 32-bit arm ABI of aarch64
//! hosts needs a 32-bit program and is covered by the filter's unit tests.

use super::sys::{in_child, NO, OK};
use crate::sandbox::seccomp::abi::{native, Abi};
use std::time::Duration;

/// What a call came to: its return value, or the errno.
pub(crate) type Answer = Result<i64, i32>;

/// Calls entry `nr` of `abi`'s table with `args` (for i386, the low 32
/// bits of each; pointers must then lie below 4 GiB).
pub(crate) fn call(abi: Abi, nr: u32, args: [u64; 6]) -> Answer {
    match abi {
        Abi::I386 => int80(nr, args),
        _ => {
            let nr = abi.seen_nr(nr) as libc::c_long;
            let a = args.map(|v| v as libc::c_long);
            // SAFETY: the callers pass numbers of calls that fail on bad
            // arguments or are harmless with the ones given (see callers).
            let r = unsafe { libc::syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) };
            if r == -1 {
                Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
            } else {
                Ok(r as i64)
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn int80(nr: u32, args: [u64; 6]) -> Answer {
    let a = args.map(|v| v as u32);
    let ret: u32;
    // SAFETY: `int 0x80` makes an i386 system call from this 64-bit
    // process; rbx (reserved by the compiler) is swapped in and out by hand,
    // ebp (the sixth argument) is not used by the calls made here.
    unsafe {
        std::arch::asm!(
            "xchg {b:r}, rbx",
            "int 0x80",
            "xchg {b:r}, rbx",
            b = inout(reg) u64::from(a[0]) => _,
            inout("eax") nr => ret,
            in("ecx") a[1],
            in("edx") a[2],
            in("esi") a[3],
            in("edi") a[4],
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
        );
    }
    let r = ret as i32;
    if (-4095..0).contains(&r) {
        Err(-r)
    } else {
        Ok(i64::from(r))
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn int80(_nr: u32, _args: [u64; 6]) -> Answer {
    Err(libc::ENOSYS)
}

/// Where calls can be made from here.
pub(crate) struct Reach {
    /// ABIs whose calls reach the session's filter (what it refuses can be
    /// checked there).
    pub filtered: Vec<Abi>,
    /// Of those, the ABIs whose calls the kernel then also runs (x32 is
    /// usually compiled out: the filter still sees its calls first).
    pub runs: Vec<Abi>,
    /// Why an ABI is missing.
    pub notes: Vec<String>,
}

/// The ABIs reachable from here.
pub(crate) fn reachable() -> Reach {
    let native = native();
    if native != Abi::X86_64 {
        let note = "the arm compat ABI needs a 32-bit program (covered by the filter's unit tests)".to_string();
        return Reach { filtered: vec![native], runs: vec![native], notes: vec![note] };
    }
    let mut r = Reach { filtered: vec![Abi::X86_64, Abi::X32], runs: vec![Abi::X86_64], notes: Vec::new() };
    // getpid: 39 in the x32 table, 20 in the i386 one.
    if call(Abi::X32, 39, [0; 6]).is_ok() {
        r.runs.push(Abi::X32);
    }
    // Kernels without i386 emulation answer `int 0x80` with SIGSEGV: try
    // it in a child first.
    match in_child(Duration::from_secs(2), || if int80(20, [0; 6]).is_ok_and(|p| p > 0) { OK } else { NO }) {
        Ok(OK) => {
            r.filtered.push(Abi::I386);
            r.runs.push(Abi::I386);
        }
        _ => r.notes.push("this kernel does not run i386 calls (no IA32 emulation): nothing to filter there".into()),
    }
    r
}

/// A readable errno name for messages.
pub(crate) fn describe(a: Answer) -> String {
    match a {
        Ok(v) => format!("succeeded ({v})"),
        Err(e) => format!("failed with {}", nix::errno::Errno::from_raw(e)),
    }
}

/// A page below 4 GiB (for i386 pointer arguments), unmapped on drop.
pub(crate) struct LowPage(*mut libc::c_void);

impl LowPage {
    pub(crate) fn new() -> Option<LowPage> {
        // SAFETY: an anonymous private mapping; the result is checked.
        let p =
            unsafe { libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | map_32bit(), -1, 0) };
        (p != libc::MAP_FAILED && (p as usize) < (1 << 32)).then_some(LowPage(p))
    }

    /// Writes `words` at the start of the page; returns its address.
    pub(crate) fn put(&self, words: &[u32]) -> u64 {
        for (i, w) in words.iter().take(1024).enumerate() {
            // SAFETY: inside the 4096-byte mapping this value owns.
            unsafe { (self.0 as *mut u32).add(i).write(*w) };
        }
        self.0 as u64
    }
}

impl Drop for LowPage {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping this value owns.
        unsafe { libc::munmap(self.0, 4096) };
    }
}

#[cfg(target_arch = "x86_64")]
fn map_32bit() -> i32 {
    libc::MAP_32BIT
}

#[cfg(not(target_arch = "x86_64"))]
fn map_32bit() -> i32 {
    0
}
