//! Comparing the present with a baseline, and saying it: the human report,
//! the one-line hint after a session.

use super::describe::{shown, summary};
use super::kinds::Kind;
use super::walk::key_cmp;
use super::{settings, Current, Rec, Snapshot};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Added,
    Changed,
    Removed,
    /// Listed without a baseline.
    Present,
}

impl Change {
    fn word(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Changed => "changed",
            Change::Removed => "removed",
            Change::Present => "present",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub change: Change,
    pub kind: Kind,
    pub path: String,
    pub when: &'static str,
    pub runs: String,
    /// Agent settings: what runs commands that was added since the
    /// baseline (`key = value`), and what was removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

impl Finding {
    /// Whether it needs the user's look (a removal cannot run anything).
    pub fn needs_look(&self) -> bool {
        self.change != Change::Removed
    }
}

/// A change to an ordinary file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Other {
    pub change: Change,
    pub path: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// Ordinary files added, changed or removed: review's own walk, so
    /// files git ignores or was told to skip are here too.
    pub other_changes: Vec<Other>,
    pub warnings: Vec<String>,
    pub complete: bool,
}

impl Report {
    pub fn needs_look(&self) -> bool {
        self.findings.iter().any(Finding::needs_look) || !self.complete
    }
}

/// What changed from `base` to `now` (without a base: everything present
/// that runs code), most dangerous first.
pub fn compare(base: Option<&Snapshot>, now: &Current) -> Report {
    let finding = |change, kind: Kind, path: &str| {
        let mut f = Finding {
            change,
            kind,
            path: path.to_string(),
            when: kind.when(),
            runs: now.runs.get(path).cloned().unwrap_or_default(),
            added: Vec::new(),
            removed: Vec::new(),
        };
        let settings_file = |b: &Snapshot| b.commands.contains_key(path) || now.snapshot.commands.contains_key(path);
        if let Some(base) = base.filter(|b| settings_file(b)) {
            let empty = Vec::new();
            let (was, is) = (base.commands.get(path).unwrap_or(&empty), now.snapshot.commands.get(path).unwrap_or(&empty));
            f.added = settings::added(was, is).iter().map(|i| i.line()).collect();
            f.removed = settings::added(is, was).iter().map(|i| i.line()).collect();
            f.runs = settings_change(&f.added, &f.removed);
        }
        f
    };
    let mut r = Report { warnings: now.warnings.clone(), complete: now.snapshot.complete, ..Report::default() };
    let Some(base) = base else {
        r.findings = now.snapshot.entries.iter().filter_map(|(p, rec)| Some(finding(Change::Present, rec.kind?, p))).collect();
        sort(&mut r.findings);
        return r;
    };
    for (path, old, new) in changes(&base.entries, &now.snapshot.entries) {
        // Only the kind differs (a newer table sorts it elsewhere): the
        // same bytes or metadata as acknowledged.
        if let (Some(o), Some(n)) = (old, new) {
            if o.ty == n.ty && o.fp == n.fp {
                continue;
            }
        }
        let change = match (old, new) {
            (None, _) => Change::Added,
            (_, None) => Change::Removed,
            _ => Change::Changed,
        };
        match new.and_then(|n| n.kind).or(old.and_then(|o| o.kind)) {
            Some(kind) => r.findings.push(finding(change, kind, path)),
            None => r.other_changes.push(Other { change, path: path.to_string() }),
        }
    }
    sort(&mut r.findings);
    r
}

/// The paths whose records differ: (path, before, after), one pass over
/// both lists (both in tree order).
pub fn changes<'a>(old: &'a [(String, Rec)], new: &'a [(String, Rec)]) -> Vec<(&'a str, Option<&'a Rec>, Option<&'a Rec>)> {
    use std::cmp::Ordering::*;
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < old.len() || j < new.len() {
        let ord = match (old.get(i), new.get(j)) {
            (Some(o), Some(n)) => key_cmp(&o.0, &n.0),
            (Some(_), None) => Less,
            _ => Greater,
        };
        match ord {
            Less => {
                out.push((old[i].0.as_str(), Some(&old[i].1), None));
                i += 1;
            }
            Greater => {
                out.push((new[j].0.as_str(), None, Some(&new[j].1)));
                j += 1;
            }
            Equal => {
                if old[i].1 != new[j].1 {
                    out.push((new[j].0.as_str(), Some(&old[i].1), Some(&new[j].1)));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// `base` with `delta` (path, record or None for removed) applied.
pub fn apply(base: &[(String, Rec)], delta: &[(String, Option<Rec>)]) -> Vec<(String, Rec)> {
    use std::cmp::Ordering::*;
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(base.len()));
    while i < base.len() || j < delta.len() {
        let ord = match (base.get(i), delta.get(j)) {
            (Some(b), Some(d)) => key_cmp(&b.0, &d.0),
            (Some(_), None) => Less,
            _ => Greater,
        };
        if ord == Less {
            out.push(base[i].clone());
            i += 1;
            continue;
        }
        if let Some(rec) = delta[j].1 {
            out.push((delta[j].0.clone(), rec));
        }
        i += usize::from(ord == Equal);
        j += 1;
    }
    out
}

/// Lines named per change of an agent setting before "and N more".
const SHOWN_SETTINGS: usize = 3;

/// An agent setting's change in one line: what runs commands that was
/// added and removed.
fn settings_change(added: &[String], removed: &[String]) -> String {
    let list = |word: &str, v: &[String]| {
        let more = if v.len() > SHOWN_SETTINGS { format!(" (and {} more)", v.len() - SHOWN_SETTINGS) } else { String::new() };
        format!("{word} {}{more}", v.iter().take(SHOWN_SETTINGS).map(|l| shown(l)).collect::<Vec<_>>().join("; "))
    };
    match (added.is_empty(), removed.is_empty()) {
        (true, true) => "no setting that runs commands was added or removed".into(),
        (false, true) => list("added", added),
        (true, false) => list("removed", removed),
        (false, false) => format!("{}; {}", list("added", added), list("removed", removed)),
    }
}

fn sort(f: &mut [Finding]) {
    f.sort_by(|a, b| a.kind.cmp(&b.kind).then(a.change.cmp(&b.change)).then_with(|| a.path.cmp(&b.path)));
}

/// Lines shown per kind before "… and N more".
const SHOWN_PER_KIND: usize = 20;
const SHOWN_BULK: usize = 3;
const SHOWN_OTHER: usize = 15;

/// The human report.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    if !r.complete {
        s.push_str("INCOMPLETE: part of the tree could not be reviewed (see the warnings); treat it as changed\n");
    }
    if r.findings.is_empty() {
        s.push_str("nothing changed in the places that run code outside the sandbox\n");
    }
    let mut i = 0;
    while i < r.findings.len() {
        let kind = r.findings[i].kind;
        let group: Vec<&Finding> = r.findings[i..].iter().take_while(|f| f.kind == kind).collect();
        i += group.len();
        if kind.bulk() {
            render_bulk(&mut s, &group);
        } else {
            render_group(&mut s, &group);
        }
    }
    render_other(&mut s, &r.other_changes);
    s
}

fn render_group(s: &mut String, group: &[&Finding]) {
    for f in group.iter().take(SHOWN_PER_KIND) {
        s.push_str(&format!("{:<8} {:<18} {}\n", f.change.word(), f.kind.name(), shown(&f.path)));
        if !f.added.is_empty() || !f.removed.is_empty() {
            // What runs commands, named one per line.
            for (word, list) in [("added", &f.added), ("removed", &f.removed)] {
                for l in list.iter().take(SHOWN_PER_KIND) {
                    s.push_str(&format!("{:27} {word} {}\n", "", summary(l)));
                }
                if list.len() > SHOWN_PER_KIND {
                    s.push_str(&format!("{:27} … and {} more {word} (--json lists all)\n", "", list.len() - SHOWN_PER_KIND));
                }
            }
        } else if !f.runs.is_empty() && f.change != Change::Removed {
            s.push_str(&format!("{:27} {}\n", "", f.runs));
        }
        s.push_str(&format!("{:27} runs {}\n", "", f.when));
    }
    if group.len() > SHOWN_PER_KIND {
        s.push_str(&format!("{:27} … and {} more {} (--json lists all)\n", "", group.len() - SHOWN_PER_KIND, group[0].kind.name()));
    }
}

/// Dependency trees and caches change by the thousand when a session
/// installs or builds: a count and examples per change.
fn render_bulk(s: &mut String, group: &[&Finding]) {
    for change in [Change::Added, Change::Changed, Change::Removed, Change::Present] {
        let of: Vec<&&Finding> = group.iter().filter(|f| f.change == change).collect();
        let Some(first) = of.first() else { continue };
        let examples: Vec<String> = of.iter().take(SHOWN_BULK).map(|f| shown(&f.path)).collect();
        let more = if of.len() > SHOWN_BULK { ", …" } else { "" };
        s.push_str(&format!("{:<8} {:<18} {} file(s): {}{more}\n", change.word(), first.kind.name(), of.len(), examples.join(", ")));
        s.push_str(&format!("{:27} runs {}\n", "", first.when));
    }
}

fn render_other(s: &mut String, other: &[Other]) {
    if other.is_empty() {
        return;
    }
    s.push_str(&format!(
        "\n{} other file(s) changed; `git diff` shows tracked files' contents (this list is review's own, so files git ignores are in it too):\n",
        other.len()
    ));
    for o in other.iter().take(SHOWN_OTHER) {
        s.push_str(&format!("  {:<8} {}\n", o.change.word(), shown(&o.path)));
    }
    if other.len() > SHOWN_OTHER {
        s.push_str(&format!("  … and {} more (--json lists all)\n", other.len() - SHOWN_OTHER));
    }
}

/// The one line printed after a session, if anything needs a look since
/// the baseline described by `since`.
pub fn hint(r: &Report, since: &str) -> Option<String> {
    let look: Vec<&Finding> = r.findings.iter().filter(|f| f.needs_look()).collect();
    let Some(first) = look.first() else {
        return (!r.complete).then(|| "agent-sandbox: part of the workspace could not be reviewed; see `agent-sandbox review`".to_string());
    };
    let added = first.added.first().map(|a| format!(": added {}", summary(a))).unwrap_or_default();
    Some(format!(
        "agent-sandbox: {} place(s) that run code outside the sandbox changed since {since} (first: {} {}{added}, {}); see `agent-sandbox review`, then `agent-sandbox review --ack`",
        look.len(),
        first.kind.name(),
        shown(&first.path),
        first.when
    ))
}
