//! The terminal's restore: the pure parts from tables, the rest on a real
//! pseudo-terminal whose master side a thread plays as the terminal (it
//! answers cursor reports in order, as terminals do). The launcher around a
//! real session in a real terminal (tmux) is `tests/suite/terminal.rs`.

use super::*;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;

#[test]
fn the_marker_is_a_cursor_report_for_one_cell() {
    assert_eq!(marker(7, 33), ("\x1b7\x1b[7;33H\x1b[6n\x1b8".to_string(), "\x1b[7;33R".to_string()));
    for _ in 0..200 {
        let (r, c) = random_cell(24, 80);
        assert!((1..=24).contains(&r) && (1..=80).contains(&c), "{r} {c}");
    }
    assert_eq!(random_cell(0, 0), (1, 1));
    let cells: std::collections::BTreeSet<_> = (0..50).map(|_| random_cell(50, 200)).collect();
    assert!(cells.len() > 10, "not random: {cells:?}");
}

#[test]
fn the_scan_finds_the_answer_however_reads_split_it_and_nothing_else() {
    let answer = b"\x1b[12;40R";
    let mut s = Scan::default();
    assert!(!s.feed(b"\x1b[?62;22c\x1b[>1;10;0c\x1bP>|tmux 3.3a\x1b\\\x1b[12;4", answer));
    // The session's own cursor report (another cell) is not ours.
    assert!(!s.feed(b"\x1b[5;5R", answer));
    assert!(!s.feed(b"\x1b[12;", answer));
    assert!(s.feed(b"40Rrest", answer));
    let mut whole = Scan::default();
    assert!(whole.feed(b"x\x1b[12;40R", answer));
    assert_eq!(whole.discarded, 9);
}

#[test]
fn the_mode_reset_covers_every_mode_a_session_can_leave_on() {
    let all = mode_reset();
    assert!(all.starts_with(TERMINAL_RESET), "unfinished sequences are ended first");
    for seq in ["?9l", "?1000l", "?1001l", "?1002l", "?1003l", "?1005l", "?1006l", "?1015l", "?1016l", "?1004l", "?2004l", "?1l", "?7h", "[4l", "?2026l", ">4m"]
    {
        assert!(all.contains(seq), "{seq} missing from {all:?}");
    }
    assert!(all.contains("\x1b>"), "keypad numeric");
    // Both move the cursor (to home, to a position saved long ago): never
    // unconditionally.
    assert!(!all.contains("?6l") && !all.contains("?1049"), "{all:?}");
    assert_eq!(leave_alt_screen(Some(true)), "\x1b[?1049l");
    assert_eq!(leave_alt_screen(Some(false)), "");
    assert_eq!(leave_alt_screen(None), "\x1b[?1047l\x1b[?47l");
}

#[test]
fn the_alternate_screen_state_is_read_from_the_answer_right_before_the_marker() {
    let answer = b"\x1b[9;9R";
    for (input, want) in [
        (&b"\x1b[?1049;1$y\x1b[9;9R"[..], Some(true)),
        (b"junk\x1b[?1049;2$y\x1b[9;9R", Some(false)),
        // The session's own DECRQM answer, then others: not ours.
        (b"\x1b[?1049;2$y\x1b[?1;2c\x1b[9;9R", None),
        (b"\x1b[9;9R", None),
    ] {
        let mut s = Scan::default();
        assert!(s.feed(input, answer));
        assert_eq!(s.before.as_deref().and_then(alt_screen_state), want, "{input:?}");
    }
    // Split across reads.
    let mut s = Scan::default();
    assert!(!s.feed(b"\x1b[?1049;", answer));
    assert!(!s.feed(b"1$y\x1b[9", answer));
    assert!(s.feed(b";9R", answer));
    assert_eq!(s.before.as_deref().and_then(alt_screen_state), Some(true));
}

/// A pty whose master a thread plays as the terminal: it answers each
/// `ESC[6n` with the cell the last `ESC[r;cH` moved to, after sending
/// `late` (answers to the session's queries still on their way). `early`
/// is typed only when the test says so (`type_early`), once the session's
/// termios is set: typed before, the line discipline would echo it.
struct FakeTerminal {
    slave: OwnedFd,
    keyboard: std::fs::File,
    early: &'static [u8],
    thread: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl FakeTerminal {
    fn new(answers: bool, early: &'static [u8], late: &'static [u8]) -> FakeTerminal {
        let pty = nix::pty::openpty(None, None).unwrap();
        let flags = nix::fcntl::fcntl(pty.slave.as_raw_fd(), nix::fcntl::FcntlArg::F_GETFL).unwrap();
        let nonblock = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(pty.slave.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFL(nonblock)).unwrap();
        let master = std::fs::File::from(pty.master);
        let keyboard = master.try_clone().unwrap();
        // The thread reads until the slave side is closed (`finish`): the
        // master then reads what is still queued and only after it EIO, so
        // the last bytes the restore wrote are never cut off.
        let thread = std::thread::spawn(move || {
            let mut master = master;
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            loop {
                if !wait(master.as_fd(), libc::POLLIN, Duration::from_millis(20)) {
                    continue;
                }
                let n = match master.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen).into_owned();
                if answers && text.ends_with("\x1b[6n\x1b8") {
                    let moved = text.rsplit("\x1b7\x1b[").next().unwrap().split('H').next().unwrap().to_string();
                    let _ = master.write_all(late);
                    let _ = master.write_all(format!("\x1b[{moved}R").as_bytes());
                }
            }
            seen
        });
        FakeTerminal { slave: pty.slave, keyboard, early, thread: Some(thread) }
    }

    /// The answers to the session's queries arrive in the input.
    fn type_early(&mut self) {
        self.keyboard.write_all(self.early).unwrap();
    }

    /// What reached the terminal.
    fn finish(self) -> String {
        let FakeTerminal { slave, thread, .. } = self;
        drop(slave);
        String::from_utf8_lossy(&thread.unwrap().join().unwrap()).into_owned()
    }
}

/// Bytes waiting in the terminal's input queue.
fn pending(fd: &OwnedFd) -> i32 {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer.
    assert_eq!(unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) }, 0);
    n
}

/// The session's answers typed into the input, `stty -echo`: afterwards
/// termios is as saved and the input queue empty, late answers included.
#[test]
fn a_restore_leaves_termios_as_saved_and_no_answer_in_the_input() {
    let mut t = FakeTerminal::new(true, b"\x1b[?62;22c\x1bP>|tmux 3.3a\x1b\\", b"\x1b[>0;10;1c\x1b]l:>|late title\x1b\\");
    let saved = termios::tcgetattr(&t.slave).unwrap();
    // What the session did: answers typed into the input, echo off.
    let mut session = saved.clone();
    session.local_flags.remove(LocalFlags::ECHO | LocalFlags::ICANON);
    termios::tcsetattr(&t.slave, SetArg::TCSANOW, &session).unwrap();
    t.type_early();
    let deadline = Instant::now() + Duration::from_secs(5);
    while pending(&t.slave) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(pending(&t.slave) > 0, "the early answers never reached the input: the test proves nothing");
    let r = restore_tty(t.slave.as_fd(), &saved, true);
    let Restored::Done { reset, answered, discarded, took } = r else { panic!("{r:?}") };
    assert!(reset);
    assert!(answered, "the drain did not see its own answer");
    assert!(discarded >= b"\x1b[?62;22c\x1bP>|tmux 3.3a\x1b\\\x1b[>0;10;1c".len(), "{discarded}");
    assert!(took < QUIET_LIMIT, "{took:?}");
    let now = termios::tcgetattr(&t.slave).unwrap();
    assert!(now.local_flags.contains(LocalFlags::ECHO | LocalFlags::ICANON), "{:?}", now.local_flags);
    assert_eq!(now.local_flags, saved.local_flags);
    assert_eq!(pending(&t.slave), 0, "input left for the shell");
    let shown = t.finish();
    assert!(shown.starts_with(&mode_reset()), "{shown:?}");
    // This terminal does not answer DECRQM: the alternate screen is left
    // without moving the cursor.
    assert!(shown.contains(&format!("{ALT_SCREEN_QUERY}\x1b7\x1b[")), "{shown:?}");
    assert!(shown.ends_with("\x1b[6n\x1b8\x1b[?1047l\x1b[?47l"), "{shown:?}");
}

/// Input typed before the restore (the session's answers that arrived
/// already) is discarded too, and a terminal that never answers costs the
/// quiet limit, not more.
#[test]
fn a_terminal_that_never_answers_costs_the_quiet_limit() {
    let t = FakeTerminal::new(false, b"", b"");
    let saved = termios::tcgetattr(&t.slave).unwrap();
    let r = restore_tty(t.slave.as_fd(), &saved, true);
    let Restored::Done { answered, took, .. } = r else { panic!("{r:?}") };
    assert!(!answered);
    assert!(took >= QUIET_LIMIT && took < QUIET_LIMIT + Duration::from_millis(400), "{took:?}");
    assert_eq!(pending(&t.slave), 0);
    t.finish();
}

/// Without escapes (`TERM=dumb`) nothing is written; termios still comes
/// back and the input is still flushed.
#[test]
fn a_dumb_terminal_gets_no_escapes_but_its_termios_back() {
    let t = FakeTerminal::new(true, b"", b"");
    let saved = termios::tcgetattr(&t.slave).unwrap();
    let mut session = saved.clone();
    session.local_flags.remove(LocalFlags::ECHO);
    termios::tcsetattr(&t.slave, SetArg::TCSANOW, &session).unwrap();
    let r = restore_tty(t.slave.as_fd(), &saved, false);
    assert!(matches!(r, Restored::Done { reset: false, answered: false, .. }), "{r:?}");
    assert_eq!(termios::tcgetattr(&t.slave).unwrap().local_flags, saved.local_flags);
    assert_eq!(t.finish(), "");
}
