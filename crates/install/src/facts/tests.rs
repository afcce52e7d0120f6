//! Observing a path that its owner swaps while the installer reads it.

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `.bashrc` (a regular file) and `swap` (a symbolic link to a file its
/// owner must not read) exchange names atomically, over and over, while
/// the installer observes `.bashrc`: what it reports is either the file or
/// the link (or, caught mid-swap, something it leaves alone), never the
/// link's target passed off as the file.
#[test]
fn a_file_swapped_for_a_symlink_is_never_read_through() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_path_buf();
    std::fs::write(dir.join("secret"), "SECRET\n").unwrap();
    std::fs::write(dir.join(".bashrc"), "# bashrc\n").unwrap();
    std::os::unix::fs::symlink(dir.join("secret"), dir.join("swap")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, dir) = (stop.clone(), dir.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if crate::rename_exchange(&dir.join(".bashrc"), &dir.join("swap")).is_err() {
                    break;
                }
                swaps += 1;
            }
            swaps
        })
    };
    let (mut files, mut links) = (0, 0);
    for _ in 0..20_000 {
        match observe(&dir.join(".bashrc")) {
            Observed::File { text, hash, .. } => {
                assert_eq!(text.as_deref(), Some("# bashrc\n"), "the link's target was read as the file");
                assert_eq!(hash, content::hash(b"# bashrc\n"));
                files += 1;
            }
            Observed::Link { .. } => links += 1,
            // Changed while it was looked at: left alone, which is safe.
            Observed::Other => {}
            other => panic!("{other:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(files > 0 && links > 0 && swaps > 1000, "the swap raced the reads: {files} files, {links} links, {swaps} swaps");
}

/// A FIFO in the home costs no hang: it is seen as what it is.
#[test]
fn a_fifo_is_not_opened_for_reading() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(".profile");
    nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let start = std::time::Instant::now();
    assert_eq!(observe(&p), Observed::Other);
    assert!(start.elapsed() < std::time::Duration::from_secs(1));
}
