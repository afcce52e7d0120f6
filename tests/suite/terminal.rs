//! The terminal after a session (docs/defences.md, terminal row): a real
//! terminal (tmux) runs an outer bash; in it a session prints queries the
//! terminal answers into the input (DA, DA2, cursor position, XTVERSION,
//! status), turns echo off and mouse reporting, bracketed paste, focus
//! events, the keypad and the alternate screen on, and ends — normally,
//! killed by a signal, or after taking the terminal's foreground and dying.
//! After it, the outer shell's input holds none of the answers (read by a
//! probe the outer shell runs next, and on its own command line), termios
//! is as before, and the terminal has none of the modes (tmux's own pane
//! flags; a paste and focus changes arrive bare). Needs root, bubblewrap,
//! tmux and python3; fails (never skips) without them.

use crate::support::launcher::{self, python3, require_tool, TestDir, SYSTEM_PATH};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own (private socket, no config) with one window
/// running an interactive bash, as a person's terminal would.
struct Tmux {
    td: TestDir,
    sock: PathBuf,
}

impl Tmux {
    fn start(tag: &str) -> Tmux {
        launcher::require_bwrap();
        let tmux = require_tool("/usr/bin/tmux", "apt-get install tmux");
        require_tool("/bin/bash", "apt-get install bash");
        let td = TestDir::new(&format!("terminal-{tag}"));
        let sock = td.aux().join("tmux.sock");
        let state = td.aux().join("state");
        let out = Command::new(&tmux)
            .env_clear()
            .env("PATH", SYSTEM_PATH)
            .env("HOME", launcher::root_account().home)
            .env("USER", "root")
            .env("LANG", "C.UTF-8")
            .env("PS1", "$ ")
            .env("AGENT_SANDBOX_EGRESS_JAIL", "0")
            .env("XDG_STATE_HOME", &state)
            .current_dir(td.ws())
            .args(["-S".as_ref(), sock.as_os_str()])
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "--", "/bin/bash", "--norc", "--noprofile", "-i"])
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&out.stderr));
        let t = Tmux { td, sock };
        // Focus events reach a pane that asked for them only with this on.
        t.tmux(&["set-option", "-g", "focus-events", "on"]);
        t.wait_for(|t| t.capture().contains('$'), "the outer shell's prompt");
        t
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("/usr/bin/tmux").args(["-S".as_ref(), self.sock.as_os_str()]).args(args).output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `line` and Enter into the outer shell.
    fn type_line(&self, line: &str) {
        self.tmux(&["send-keys", "-t", "t:0.0", "-l", line]);
        self.tmux(&["send-keys", "-t", "t:0.0", "Enter"]);
    }

    fn capture(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t:0.0"])
    }

    /// The pane's flags, as tmux keeps them (`#{mouse_any_flag}`...).
    fn flags(&self, names: &[&str]) -> Vec<(String, String)> {
        let f: Vec<String> = names.iter().map(|n| format!("#{{{n}}}")).collect();
        let got = self.tmux(&["display-message", "-p", "-t", "t:0.0", &f.join(" ")]);
        names.iter().map(|n| n.to_string()).zip(got.split_whitespace().map(str::to_string)).collect()
    }

    #[track_caller]
    fn wait_for(&self, done: impl Fn(&Tmux) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(self) {
            assert!(Instant::now() < deadline, "no {what} after 60 s; the pane shows:\n{}", self.capture());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn aux(&self, name: &str) -> PathBuf {
        self.td.aux().join(name)
    }

    /// Runs `before`, then the probe, from the outer shell, and returns
    /// what the probe saw: the shell's termios and every byte waiting in,
    /// or arriving within its window at, the terminal's input. Once it
    /// reads, focus leaves the pane and comes back and "hello" is pasted
    /// bracketed (bash's readline switches bracketed paste itself at its
    /// prompt, so only a reader right after the session shows the mode).
    fn probe_after(&self, before: &str) -> serde_json::Value {
        let out = self.aux(&launcher::unique("probe"));
        let ready = self.aux(&launcher::unique("ready"));
        let py = python3();
        self.type_line(&format!("{before}; {} {} {} {} 2.5", py.display(), self.aux("probe.py").display(), out.display(), ready.display()));
        self.wait_for(|_| ready.exists(), "the probe");
        std::thread::sleep(Duration::from_millis(300));
        self.tmux(&["split-window", "-t", "t:0"]);
        self.tmux(&["select-pane", "-t", "t:0.0"]);
        self.tmux(&["kill-pane", "-t", "t:0.1"]);
        self.tmux(&["set-buffer", "hello"]);
        self.tmux(&["paste-buffer", "-p", "-t", "t:0.0"]);
        self.wait_for(|_| out.exists(), "the probe's result");
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("/usr/bin/tmux").args(["-S".as_ref(), self.sock.as_os_str(), "kill-server".as_ref()]).output();
    }
}

/// Run by the outer shell after the launcher: its termios first (as the
/// session left it), then the input queue, read raw.
const PROBE: &str = r#"
import json, os, select, sys, termios, time
out, ready, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
saved = termios.tcgetattr(0)
state = {"echo": bool(saved[3] & termios.ECHO), "icanon": bool(saved[3] & termios.ICANON)}
raw = termios.tcgetattr(0)
raw[3] &= ~(termios.ICANON | termios.ECHO)
raw[6][termios.VMIN] = 0
raw[6][termios.VTIME] = 0
termios.tcsetattr(0, termios.TCSANOW, raw)
open(ready, "w").close()
got, end = b"", time.time() + wait
while time.time() < end:
    if select.select([0], [], [], 0.05)[0]:
        b = os.read(0, 4096)
        if not b:
            break
        got += b
termios.tcsetattr(0, termios.TCSANOW, saved)
state["input"] = got.decode("latin-1")
open(out + ".tmp", "w").write(json.dumps(state))
os.rename(out + ".tmp", out)
"#;

/// Queries every terminal answers (DA, DA2, cursor position, XTVERSION,
/// status, a colour), then echo off and the modes on.
const QUERIES: &str = r"printf '\033[c\033[>c\033[6n\033[>0q\033[5n\033]10;?\007'";
const MODES: &str = r"stty -echo; printf '\033[?1000h\033[?1002h\033[?1003h\033[?1006h\033[?2004h\033[?1004h\033[?1h\033=\033[?1049h\033[?6h\033[?7l\033[4h'";

const FLAGS: &[(&str, &str)] = &[
    ("mouse_any_flag", "0"),
    ("mouse_all_flag", "0"),
    ("mouse_button_flag", "0"),
    ("mouse_standard_flag", "0"),
    ("mouse_sgr_flag", "0"),
    ("keypad_flag", "0"),
    ("keypad_cursor_flag", "0"),
    ("alternate_on", "0"),
    // Origin mode is left: with the scroll region reset to the whole
    // screen it changes nothing, and resetting it moves the cursor home.
    ("insert_flag", "0"),
    ("wrap_flag", "1"),
];

fn launcher_line(t: &Tmux, session_script: &str) -> String {
    let script = t.aux(&launcher::unique("session"));
    launcher::write(&script, session_script);
    format!(
        "RUST_LOG=agent_sandbox::terminal=debug {} run -- /bin/sh -c \"$(cat {})\" 2>>{}; echo status=$?",
        crate::support::bin().display(),
        script.display(),
        t.aux("launcher.log").display()
    )
}

/// What the outer shell and the terminal show after a session: nothing of
/// its answers in the input (the paste arrives bare: no bracketed paste, no
/// focus events), its termios as before, none of its modes.
#[track_caller]
fn assert_left_as_found(t: &Tmux, seen: &serde_json::Value) {
    assert_eq!(seen["input"], "hello", "the terminal's answers (or paste brackets, focus events) reached the outer shell: {seen}\n{}", t.capture());
    assert_eq!((seen["echo"].as_bool(), seen["icanon"].as_bool()), (Some(true), Some(true)), "termios not restored: {seen}");
    let names: Vec<&str> = FLAGS.iter().map(|(n, _)| *n).collect();
    let want: Vec<(String, String)> = FLAGS.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    assert_eq!(t.flags(&names), want, "modes the session turned on are still on");
}

/// The restore's own cost, from the launcher's debug log.
fn took(t: &Tmux) -> Vec<String> {
    let log = std::fs::read_to_string(t.aux("launcher.log")).unwrap_or_default();
    log.lines().filter(|l| l.contains("terminal restored")).map(str::to_string).collect()
}

fn tmux_with_probe(tag: &str) -> Tmux {
    let t = Tmux::start(tag);
    launcher::write(&t.aux("probe.py"), PROBE);
    t
}

/// The harness sees what it must: the same queries and modes printed by
/// the outer shell itself leave answers in its input, echo off, the flags
/// on and the paste bracketed. Then the same from a session, which must
/// leave nothing.
#[test]
fn a_session_leaves_no_answer_in_the_shell_input_and_no_mode_on() {
    let _machine = crate::support::share_machine();
    let t = tmux_with_probe("queries");
    // Control: no launcher in between.
    let seen = t.probe_after(&format!("{QUERIES}; {MODES}"));
    let input = seen["input"].as_str().unwrap();
    assert!(input.contains("tmux") && input.contains("\x1b[0n"), "tmux did not answer the queries: the test proves nothing: {seen}");
    assert!(input.contains("\x1b[200~hello") && input.contains("\x1b[O"), "no bracketed paste or focus events: the test proves nothing: {seen}");
    assert_eq!(seen["echo"], false, "{seen}");
    assert!(t.flags(&["mouse_any_flag"])[0].1 == "1", "tmux did not record mouse reporting: the test proves nothing");
    t.type_line("stty sane; printf '\\033[?1000l\\033[?1002l\\033[?1003l\\033[?1006l\\033[?2004l\\033[?1004l\\033[?1l\\033>\\033[?1049l\\033[?6l\\033[?7h\\033[4l'; clear");

    // A session that does the same, and queries again at its very end.
    let seen = t.probe_after(&launcher_line(&t, &format!("{QUERIES}; {MODES}; {QUERIES}")));
    assert!(t.capture().contains("status=0"), "{}", t.capture());
    assert_left_as_found(&t, &seen);
    let log = took(&t);
    assert!(log.iter().any(|l| l.contains("answered: true")), "the drain did not see its own answer: {log:?}");
    eprintln!("terminal restore in tmux: {log:?}");
}

/// The outer shell's own command line after a session (no probe in
/// between): the next command runs exactly as typed, nothing before it.
#[test]
fn the_outer_shell_command_line_stays_empty_after_a_session() {
    let _machine = crate::support::share_machine();
    let t = tmux_with_probe("cmdline");
    t.type_line(&launcher_line(&t, &format!("{QUERIES}; {MODES}; {QUERIES}")));
    t.wait_for(|t| t.capture().contains("status=0"), "the session's end");
    std::thread::sleep(Duration::from_secs(1));
    let history = t.aux("history");
    let typed = format!("echo CLEAN-$((40+2)); history 1 > {}", history.display());
    t.type_line(&typed);
    t.wait_for(|_| history.exists() && std::fs::metadata(&history).is_ok_and(|m| m.len() > 0), "the next command");
    // `history 1`: the command line bash is running, after its number.
    let ran = std::fs::read_to_string(&history).unwrap();
    let ran = ran.trim().split_once(char::is_whitespace).map(|(_, l)| l.trim_start()).unwrap_or("");
    assert_eq!(ran, typed, "the outer shell ran something else\n{}", t.capture());
    assert!(t.capture().contains("CLEAN-42"), "{}", t.capture());
}

/// A session killed by a signal, and one that took the terminal's
/// foreground for a process group of its own and died there (a job-control
/// shell killed inside): the launcher takes the foreground back and
/// restores all the same.
#[test]
fn a_killed_session_and_a_stolen_foreground_are_restored_too() {
    let _machine = crate::support::share_machine();
    let t = tmux_with_probe("killed");
    let seen = t.probe_after(&launcher_line(&t, &format!("{QUERIES}; {MODES}; {QUERIES}; kill -9 $$")));
    assert!(t.capture().contains("status=137"), "{}", t.capture());
    assert_left_as_found(&t, &seen);

    let py = python3();
    let steal = format!(
        "{QUERIES}; {MODES}; exec {} -c 'import os, signal; os.setpgid(0, 0); signal.signal(signal.SIGTTOU, signal.SIG_IGN); os.tcsetpgrp(0, os.getpgrp()); os.write(1, b\"\\033[c\\033[>0q\\033[6n\"); os.kill(os.getpid(), 9)'",
        py.display()
    );
    let seen = t.probe_after(&launcher_line(&t, &steal));
    assert!(t.capture().contains("status=137"), "{}", t.capture());
    assert_left_as_found(&t, &seen);
}

/// Where the restore's cost is measured: a session that prints nothing.
#[test]
fn the_restore_costs_one_round_trip_to_the_terminal() {
    let _machine = crate::support::share_machine();
    let t = tmux_with_probe("cost");
    for i in 1..=5 {
        t.type_line(&launcher_line(&t, "true"));
        t.wait_for(|t| took(t).len() == i, "the restore's log line");
    }
    let ms: Vec<f64> = took(&t).iter().map(|l| parse_took(l)).collect();
    eprintln!("terminal restore after `run -- true` in tmux, ms: {ms:?}");
    assert!(ms.iter().all(|m| *m < 200.0), "{ms:?}");
}

/// "took: 1.234567ms" (Duration's Debug) in milliseconds.
fn parse_took(line: &str) -> f64 {
    let d = line.split("took: ").nth(1).and_then(|r| r.split(' ').next()).unwrap_or("");
    let d = d.trim_end_matches(['}', ',']);
    let (num, scale) = if let Some(n) = d.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = d.strip_suffix("µs") {
        (n, 0.001)
    } else if let Some(n) = d.strip_suffix("ns") {
        (n, 0.000_001)
    } else if let Some(n) = d.strip_suffix('s') {
        (n, 1000.0)
    } else {
        panic!("no duration in {line:?}")
    };
    num.parse::<f64>().unwrap_or_else(|_| panic!("no duration in {line:?}")) * scale
}
