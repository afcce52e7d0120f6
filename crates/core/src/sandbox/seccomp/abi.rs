//! The system-call ABIs a process can use, as the kernel presents them to a
//! seccomp filter: an audit architecture plus a syscall number. A filter
//! that knew only the native numbers would be bypassed through another
//! entry: on x86_64 hosts an x86_64 process can make i386 calls (`int
//! 0x80`) and x32 calls (numbers with bit 30 set, reported under the
//! x86_64 architecture); on aarch64 hosts 32-bit arm programs run too.

/// The x32 calls share the x86_64 audit architecture; this bit marks them.
pub(crate) const X32_BIT: u32 = 0x4000_0000;

/// `AUDIT_ARCH_*` values from <linux/audit.h>.
pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
pub(crate) const AUDIT_ARCH_I386: u32 = 0x4000_0003;
pub(crate) const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
pub(crate) const AUDIT_ARCH_ARM: u32 = 0x4000_0028;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Abi {
    X86_64,
    X32,
    I386,
    Aarch64,
    Arm,
}

/// Every ABI the table has a column for, in column order.
pub const ALL: [Abi; 5] = [Abi::X86_64, Abi::X32, Abi::I386, Abi::Aarch64, Abi::Arm];

impl Abi {
    /// The column of this ABI in the table's number arrays.
    pub const fn column(self) -> usize {
        self as usize
    }

    pub(crate) const fn audit_arch(self) -> u32 {
        match self {
            Abi::X86_64 | Abi::X32 => AUDIT_ARCH_X86_64,
            Abi::I386 => AUDIT_ARCH_I386,
            Abi::Aarch64 => AUDIT_ARCH_AARCH64,
            Abi::Arm => AUDIT_ARCH_ARM,
        }
    }

    /// The number the filter sees for entry `nr` of this ABI's table.
    pub const fn seen_nr(self, nr: u32) -> u32 {
        match self {
            Abi::X32 => X32_BIT | nr,
            _ => nr,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Abi::X86_64 => "x86_64",
            Abi::X32 => "x32",
            Abi::I386 => "i386",
            Abi::Aarch64 => "aarch64",
            Abi::Arm => "arm",
        }
    }
}

/// The ABIs a process on this machine can use (native plus compat).
pub fn native_abis() -> &'static [Abi] {
    if cfg!(target_arch = "aarch64") {
        &[Abi::Aarch64, Abi::Arm]
    } else {
        &[Abi::X86_64, Abi::X32, Abi::I386]
    }
}

/// The ABI a process of this build uses natively.
pub fn native() -> Abi {
    native_abis()[0]
}
