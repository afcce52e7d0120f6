//! The terminal the launcher shares with its session, left as the session
//! found it. A session may print to the terminal whatever it likes: queries
//! the terminal answers by typing into its input queue (DA, DA2, cursor
//! position, XTVERSION; title reports and DECRQSS echo text the session
//! chose), `stty -echo`, mouse reporting (every click then types escape
//! sequences). Left alone, the outer shell reads the answers as a command
//! line and runs it on Enter. Around a session (no pty of our own between
//! the session and the terminal: keystrokes and output stay direct):
//!
//! 1. before the session: the controlling terminal's termios is saved,
//!    only when the launcher has one and is in its foreground process
//!    group. Steps 2 to 6 run after it, also when it was killed by a signal
//!    and when the launcher returns with an error (`Drop`);
//! 2. the foreground is taken back from a process group the session left
//!    it to and that has no process left (a job-control shell killed
//!    inside); another live group (the user put the launcher in the
//!    background) is left alone, and so is everything below;
//! 3. output resumed (a session's `tcflow(TCOOFF)`);
//! 4. the modes a session can switch on reset (`MODE_RESET`: mouse, focus,
//!    bracketed paste, keypad and cursor keys, modifyOtherKeys and the
//!    kitty keyboard protocol, 8-bit controls, keyboard lock, wrap, insert,
//!    reverse video, synchronized output, scroll region, plus
//!    `TERMINAL_RESET`'s attributes, cursor and character set);
//! 5. one query of the launcher's own, whose answer the session cannot
//!    predict (the position of the cursor moved to a random cell), and the
//!    input read and discarded up to and including that answer: terminals
//!    answer in order, so every answer to the session's queries comes
//!    before it. A terminal that never answers costs `QUIET_LIMIT`; answers
//!    that keep coming, at most `DRAIN_LIMIT`. Right before it, whether the
//!    alternate screen is on (DECRQM); it is left the way that answer
//!    allows (`leave_alt_screen`);
//! 6. termios restored as saved, the input queue flushed.
//!
//! With `TERM=dumb` no escape sequence is written (4, 5).
//! Not responsible for what a session prints while it runs, nor for a
//! launcher killed by SIGKILL (nothing of it runs any more).

use nix::sys::signal::{killpg, sigprocmask, SigSet, SigmaskHow, Signal};
use nix::sys::termios::{self, FlowArg, FlushArg, LocalFlags, SetArg, SpecialCharacterIndices, Termios};
use nix::unistd::{getpgrp, tcgetpgrp, tcsetpgrp, Pid};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

/// What a session printed last may hide what the launcher prints next: a
/// concealed (`ESC[8m`) or same-colour attribute, a hidden cursor, an
/// unfinished escape or string sequence that would swallow the text, the
/// line-drawing character set. CAN ends any sequence in progress, ST any
/// string, then attributes, cursor and character set are restored.
pub const TERMINAL_RESET: &str = "\x18\x1b\\\x1b[0m\x1b[?25h\x0f\x1b(B";

/// The modes a session can leave on, reset (after `TERMINAL_RESET`, which
/// ends whatever sequence the session left unfinished):
const MODE_RESET: &[(&str, &str)] = &[
    ("attributes, cursor, character set", TERMINAL_RESET),
    // Answers in 7-bit form again (the drain looks for `ESC [`).
    ("8-bit controls", "\x1b F"),
    // A locked keyboard types nothing into the outer shell.
    ("keyboard lock", "\x1b[2l"),
    // Every click or move would type an escape sequence into the shell.
    ("mouse reporting", "\x1b[?9l\x1b[?1000l\x1b[?1001l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l"),
    ("focus events", "\x1b[?1004l"),
    ("bracketed paste", "\x1b[?2004l"),
    ("application cursor keys and keypad", "\x1b[?1l\x1b>"),
    ("modifyOtherKeys", "\x1b[>4m"),
    // Keys would arrive as `CSI … u`: pops every pushed level.
    ("kitty keyboard protocol", "\x1b[<99u"),
    ("reverse video", "\x1b[?5l"),
    // Without wrap a long line (the review hint) loses its end.
    ("autowrap", "\x1b[?7h"),
    ("insert mode", "\x1b[4l"),
    // A terminal holding output until the end of an update shows nothing.
    ("synchronized output", "\x1b[?2026l"),
    // The scroll region, the cursor kept where it is. With the region the
    // whole screen, origin mode has no effect left (resetting it would move
    // the cursor home, over what is on the screen).
    ("scroll region", "\x1b7\x1b[r\x1b8"),
];

/// Asks whether the alternate screen is on (DECRQM); sent right before the
/// marker, so its answer comes right before the marker's.
pub(crate) const ALT_SCREEN_QUERY: &str = "\x1b[?1049$p";

/// Leaving the alternate screen, once the drain knows whether it is on: a
/// `1049` reset also moves the cursor back to where the session's switch
/// saved it, and terminals (tmux) do that even when not on the alternate
/// screen, to a position some earlier program saved, over what is on the
/// screen. So `1049l` only when the terminal said the alternate screen is
/// on, nothing when it said off, and `1047l`/`47l` (no cursor move) when it
/// did not say.
pub(crate) fn leave_alt_screen(on: Option<bool>) -> &'static str {
    match on {
        Some(true) => "\x1b[?1049l",
        Some(false) => "",
        None => "\x1b[?1047l\x1b[?47l",
    }
}

/// The alternate screen's state in a DECRQM answer that `before` (what came
/// right before the marker's answer) ends with: 1 or 3 on, 2 or 4 off.
pub(crate) fn alt_screen_state(before: &[u8]) -> Option<bool> {
    for (state, on) in [(b'1', true), (b'3', true), (b'2', false), (b'4', false)] {
        let mut answer = b"\x1b[?1049;".to_vec();
        answer.extend_from_slice(&[state, b'$', b'y']);
        if before.ends_with(&answer) {
            return Some(on);
        }
    }
    None
}

/// Without any input at all, the drain gives up after this long (a terminal
/// that does not answer cursor reports).
pub(crate) const QUIET_LIMIT: Duration = Duration::from_millis(500);
/// While answers keep coming (a session that queried a lot, a terminal far
/// away), the drain waits at most this long for its own.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// `MODE_RESET` as one string.
pub(crate) fn mode_reset() -> String {
    MODE_RESET.iter().map(|(_, s)| *s).collect()
}

/// The launcher's own query and its answer: save the cursor, move it to
/// `(row, col)`, ask where it is, restore it. The session cannot know the
/// cell, so it cannot make the terminal send this answer early.
pub fn marker(row: u16, col: u16) -> (String, String) {
    (format!("\x1b7\x1b[{row};{col}H\x1b[6n\x1b8"), format!("\x1b[{row};{col}R"))
}

/// A random cell of a `rows` x `cols` screen (1-based).
pub(crate) fn random_cell(rows: u16, cols: u16) -> (u16, u16) {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the OS's random source.
    let r = std::collections::hash_map::RandomState::new().build_hasher().finish();
    let (rows, cols) = (u64::from(rows.max(1)), u64::from(cols.max(1)));
    ((1 + r % rows) as u16, (1 + (r >> 32) % cols) as u16)
}

/// Reading discarded input until `answer` shows up, however the reads
/// split it; what came right before it is kept (`before`).
#[derive(Debug, Default)]
pub struct Scan {
    tail: Vec<u8>,
    pub(crate) discarded: usize,
    /// Up to `KEPT` bytes that came right before the answer, once seen.
    pub before: Option<Vec<u8>>,
}

/// Bytes kept before the answer: enough for a DECRQM answer.
const KEPT: usize = 32;

impl Scan {
    /// Feeds what was read; true once `answer` was seen.
    pub fn feed(&mut self, bytes: &[u8], answer: &[u8]) -> bool {
        self.discarded += bytes.len();
        self.tail.extend_from_slice(bytes);
        if let Some(at) = self.tail.windows(answer.len()).position(|w| w == answer) {
            self.before = Some(self.tail[at.saturating_sub(KEPT)..at].to_vec());
            return true;
        }
        let keep = answer.len().saturating_sub(1) + KEPT;
        if self.tail.len() > keep {
            self.tail.drain(..self.tail.len() - keep);
        }
        false
    }
}

/// How the terminal was left, for the log and the tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// Restored: whether the mode reset was written, whether the drain
    /// found the launcher's answer (false: it gave up), what it discarded.
    Done { reset: bool, answered: bool, discarded: usize, took: Duration },
    /// Another live process group has the terminal: nothing was touched.
    NotForeground,
}

impl Restored {
    /// Whether `MODE_RESET` (and so `TERMINAL_RESET`) reached the terminal.
    pub fn reset_written(&self) -> bool {
        matches!(self, Restored::Done { reset: true, .. })
    }
}

/// The controlling terminal as the session found it.
#[derive(Debug)]
pub struct Guard {
    tty: Option<Saved>,
}

#[derive(Debug)]
struct Saved {
    fd: OwnedFd,
    termios: Termios,
    pgrp: Pid,
    escapes: bool,
}

impl Guard {
    /// Step 1. `term` is the launcher's `TERM`. A launcher without a
    /// controlling terminal, or not in its foreground, guards nothing.
    pub fn save(term: Option<&std::ffi::OsStr>) -> Guard {
        use std::os::unix::fs::OpenOptionsExt;
        let open = std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK).open("/dev/tty");
        let Ok(file) = open else { return Guard { tty: None } };
        let fd = OwnedFd::from(file);
        let pgrp = getpgrp();
        if tcgetpgrp(&fd) != Ok(pgrp) {
            return Guard { tty: None };
        }
        let Ok(termios) = termios::tcgetattr(&fd) else { return Guard { tty: None } };
        // Terminals answer whatever TERM says; only a dumb one is spared
        // the escapes (it would show them).
        let escapes = term.is_none_or(|t| t != "dumb");
        Guard { tty: Some(Saved { fd, termios, pgrp, escapes }) }
    }

    /// Steps 2 to 6 (once; `Drop` does them if nobody did).
    pub fn restore(&mut self) -> Option<Restored> {
        let s = self.tty.take()?;
        let fg = tcgetpgrp(&s.fd).ok();
        if fg != Some(s.pgrp) {
            // A group with no process left: the session's. Taking the
            // terminal back from the background needs SIGTTOU blocked.
            if fg.is_some_and(|g| killpg(g, None).is_ok()) || !reclaim(s.fd.as_fd(), s.pgrp) {
                return Some(Restored::NotForeground);
            }
        }
        let r = restore_tty(s.fd.as_fd(), &s.termios, s.escapes);
        // The target users filter by (docs/defences.md), whichever crate
        // this module sits in.
        tracing::debug!(target: "agent_sandbox::terminal", "terminal restored: {r:?}");
        Some(r)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.restore();
    }
}

fn reclaim(fd: BorrowedFd<'_>, pgrp: Pid) -> bool {
    let mut ttou = SigSet::empty();
    ttou.add(Signal::SIGTTOU);
    let mut old = SigSet::empty();
    if sigprocmask(SigmaskHow::SIG_BLOCK, Some(&ttou), Some(&mut old)).is_err() {
        return false;
    }
    let ok = tcsetpgrp(fd, pgrp).is_ok();
    let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    ok
}

/// Steps 3 to 6 on `fd` (non-blocking), a terminal the launcher has in
/// the foreground.
pub(crate) fn restore_tty(fd: BorrowedFd<'_>, saved: &Termios, escapes: bool) -> Restored {
    let start = Instant::now();
    let _ = termios::tcflow(fd, FlowArg::TCOON);
    // Answers must be read as they come: no line discipline, no echo.
    let mut raw = saved.clone();
    raw.local_flags.remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ECHONL);
    raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 0;
    raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    let _ = termios::tcsetattr(fd, SetArg::TCSANOW, &raw);
    let (mut reset, mut answered, mut scan) = (false, false, Scan::default());
    if escapes {
        let (rows, cols) = window_size(fd);
        let (row, col) = random_cell(rows, cols);
        let (query, answer) = marker(row, col);
        let deadline = start + DRAIN_LIMIT;
        reset = write_all(fd, format!("{}{ALT_SCREEN_QUERY}{query}", mode_reset()).as_bytes(), deadline);
        if reset {
            answered = drain(fd, answer.as_bytes(), &mut scan, start);
            let alt = scan.before.as_deref().and_then(alt_screen_state);
            // Late answers to this come after the marker's: flushed below.
            let _ = write_all(fd, leave_alt_screen(alt).as_bytes(), deadline);
        }
    }
    let _ = termios::tcsetattr(fd, SetArg::TCSADRAIN, saved);
    let _ = termios::tcflush(fd, FlushArg::TCIFLUSH);
    Restored::Done { reset, answered, discarded: scan.discarded, took: start.elapsed() }
}

/// Reads and discards input until `answer` (true), or until nothing came
/// for `QUIET_LIMIT` or `DRAIN_LIMIT` passed (false).
fn drain(fd: BorrowedFd<'_>, answer: &[u8], scan: &mut Scan, start: Instant) -> bool {
    let mut last = start;
    let mut buf = [0u8; 4096];
    loop {
        let now = Instant::now();
        let until = (last + QUIET_LIMIT).min(start + DRAIN_LIMIT);
        if now >= until {
            return false;
        }
        if !wait(fd, libc::POLLIN, until - now) {
            continue;
        }
        match nix::unistd::read(fd.as_raw_fd(), &mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                last = Instant::now();
                if scan.feed(&buf[..n], answer) {
                    return true;
                }
            }
            Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => {}
            // EIO: the terminal hung up.
            Err(_) => return false,
        }
    }
}

/// Writes all of `bytes` to the non-blocking `fd` by `deadline`.
fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8], deadline: Instant) -> bool {
    while !bytes.is_empty() {
        match nix::unistd::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => {
                let now = Instant::now();
                if now >= deadline {
                    return false;
                }
                wait(fd, libc::POLLOUT, deadline - now);
            }
            Err(_) => return false,
        }
    }
    true
}

/// Whether `fd` became ready for `events` within `timeout`.
fn wait(fd: BorrowedFd<'_>, events: libc::c_short, timeout: Duration) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(fd, PollFlags::from_bits_truncate(events))];
    let ms = PollTimeout::try_from(timeout.as_millis().min(60_000) as i32).unwrap_or(PollTimeout::ZERO);
    matches!(poll(&mut fds, ms), Ok(n) if n > 0)
}

/// The terminal's size (24 x 80 when it does not say).
fn window_size(fd: BorrowedFd<'_>) -> (u16, u16) {
    let mut ws = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one winsize through the pointer, which
    // points at a live local.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    if rc != 0 || ws.ws_row == 0 || ws.ws_col == 0 {
        return (24, 80);
    }
    (ws.ws_row, ws.ws_col)
}

#[cfg(test)]
mod tests;
