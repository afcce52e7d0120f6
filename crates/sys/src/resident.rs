//! The launcher's own resident memory while it only waits for a session:
//! both waiting launchers (the sandbox's `supervise` and the jail's
//! `session`) shed the binary's code pages here, so neither imports the
//! other for it.

/// Lets the kernel drop this binary's code pages from the launcher's
/// resident set once it only waits for the session: they are clean file
/// pages (re-read on demand), but count as the launcher's memory for as
/// long as an agent runs. The ranges are the executable, non-writable
/// loadable segments of the program itself, from its own program headers
/// (`dl_iterate_phdr`: no read of /proc/self/smaps, whose page walk cost a
/// launch a millisecond); code is never written, so no relocated data is
/// lost.
pub fn shed_text() {
    extern "C" fn each(info: *mut libc::dl_phdr_info, _size: libc::size_t, _data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the C library passes a valid `dl_phdr_info` whose
        // `dlpi_phdr` points at `dlpi_phnum` program headers, for the
        // duration of the call.
        let info = unsafe { &*info };
        // SAFETY: as above: `dlpi_phnum` headers at `dlpi_phdr`.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        let page = 4096usize;
        for h in headers.iter().filter(|h| h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 && h.p_flags & libc::PF_W == 0) {
            let start = (info.dlpi_addr as usize + h.p_vaddr as usize).next_multiple_of(page);
            let end = (info.dlpi_addr as usize + h.p_vaddr as usize + h.p_memsz as usize) & !(page - 1);
            if end > start {
                // SAFETY: the range lies within one of this program's own
                // read-only executable mappings; MADV_DONTNEED only drops
                // its page-table entries, and the pages fault back in
                // from the file when executed again.
                unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
            }
        }
        // The first object is the program itself: stop there.
        1
    }
    // SAFETY: `each` only reads what it is given, for the call's duration.
    unsafe { libc::dl_iterate_phdr(Some(each), std::ptr::null_mut()) };
}
