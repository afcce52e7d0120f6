//! The launcher's own resident memory while it only waits for a session:
//! both waiting launchers (the sandbox's `supervise` and the jail's
//! `session`) shed the binary's code pages here, so neither imports the
//! other for it.

/// Lets the kernel drop this binary's code pages from the launcher's
/// resident set once it only waits for the session: they are clean file
/// pages (re-read on demand), but count as the launcher's memory for as
/// long as an agent runs. Only executable mappings of the binary without
/// any private (copied) page are touched, so no relocated data is lost.
pub fn shed_text() {
    let Ok(exe) = std::fs::read_link("/proc/self/exe") else { return };
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return };
    let exe = exe.to_string_lossy();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut f = line.split_whitespace();
        let first = f.next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            let perms = f.next().unwrap_or("");
            let path = line.split_whitespace().nth(5).unwrap_or("");
            current = match (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
                (Ok(lo), Ok(hi)) if perms == "r-xp" && path == exe => Some((lo, hi - lo)),
                _ => None,
            };
        } else if first == "Anonymous:" {
            if let (Some((addr, len)), Some("0")) = (current.take(), f.next()) {
                // SAFETY: the range is one of our own clean, read-only,
                // executable file mappings; MADV_DONTNEED only drops its
                // page-table entries, and the pages fault back in from the
                // file when executed again.
                unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_DONTNEED) };
            }
        }
    }
}
