//! Process bookkeeping for the leftover tests: the descendants of a pid
//! (from /proc), and whether each of them is gone (absent, a zombie, or a
//! different process under a reused pid).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    pub state: char,
    pub start: u64,
}

fn read_stat(pid: i32) -> Option<Proc> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s[open + 1..close].to_string();
    let rest: Vec<&str> = s[close + 2..].split_whitespace().collect();
    Some(Proc { pid, ppid: rest.get(1)?.parse().ok()?, comm, state: rest.first()?.chars().next()?, start: rest.get(19)?.parse().ok()? })
}

fn all() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return vec![] };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter_map(read_stat).collect()
}

/// Every live descendant of `root`.
pub(crate) fn descendants(root: i32) -> Vec<Proc> {
    descendants_with_zombies(root).into_iter().filter(|p| p.state != 'Z').collect()
}

/// Every descendant of `root`, zombies included.
pub(crate) fn descendants_with_zombies(root: i32) -> Vec<Proc> {
    let procs = all();
    let mut by_parent: BTreeMap<i32, Vec<&Proc>> = BTreeMap::new();
    for p in &procs {
        by_parent.entry(p.ppid).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(pid) = todo.pop() {
        for child in by_parent.get(&pid).into_iter().flatten() {
            out.push((*child).clone());
            todo.push(child.pid);
        }
    }
    out
}

/// True when the process is gone (exited; a zombie counts as gone).
pub(crate) fn gone(p: &Proc) -> bool {
    match read_stat(p.pid) {
        None => true,
        Some(now) => now.start != p.start || now.state == 'Z',
    }
}

/// True when not even a zombie is left (it was reaped).
pub(crate) fn reaped(p: &Proc) -> bool {
    match read_stat(p.pid) {
        None => true,
        Some(now) => now.start != p.start,
    }
}

/// Waits until every process in `procs` is reaped; returns the rest.
pub(crate) fn wait_reaped(procs: &[Proc], timeout: Duration) -> Vec<Proc> {
    let deadline = Instant::now() + timeout;
    loop {
        let left: Vec<Proc> = procs.iter().filter(|p| !reaped(p)).cloned().collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until every process in `procs` is gone; returns the survivors.
pub(crate) fn wait_gone(procs: &[Proc], timeout: Duration) -> Vec<Proc> {
    let deadline = Instant::now() + timeout;
    loop {
        let left: Vec<Proc> = procs.iter().filter(|p| !gone(p)).cloned().collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
