//! `sandbox-install` output: the plan as a list of changes (what
//! `--dry-run` prints), the outcome, and the checks.

use super::manifest::Entry;
use super::plan::{Action, Content, InstallPlan, Level, Note, Owner, Record, Step};
use super::Outcome;
use crate::finding::{Finding, Severity};
use crate::layout::MANIFEST;

fn owner(o: &Option<Owner>) -> String {
    match o {
        Some(Owner { uid: 0, gid: 0 }) => " root".into(),
        Some(o) => format!(" {}:{}", o.uid, o.gid),
        None => String::new(),
    }
}

fn size(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20))
    } else {
        format!("{n} bytes")
    }
}

/// One line per step.
pub fn step(s: &Step) -> String {
    let saved = |b: &Option<std::path::PathBuf>| b.as_ref().map(|b| format!("; the original is saved to {}", b.display())).unwrap_or_default();
    match &s.action {
        Action::MakeDir { path, mode, owner: o } => format!("mkdir     {} ({mode:04o}{})", path.display(), owner(o)),
        Action::Write { path, content, mode, owner: o, backup } => {
            let verb = if matches!(s.record, Record::Add { entry: Entry::Block { .. } }) { "edit    " } else { "write   " };
            let what = match content {
                Content::Copy { from, len, .. } => format!("copy of {}, {}", from.display(), size(*len)),
                Content::Text { text } if matches!(s.record, Record::Add { entry: Entry::Block { .. } }) => {
                    format!("managed block, {} bytes in all", text.len())
                }
                Content::Text { text } => size(text.len() as u64),
            };
            format!("{verb}  {} ({what}, {mode:04o}{}){}", path.display(), owner(o), saved(backup))
        }
        Action::SetMode { path, mode, owner: o } => format!("chmod     {} ({mode:04o}{})", path.display(), owner(o)),
        Action::Symlink { path, target, backup } => format!("link      {} -> {}{}", path.display(), target.display(), saved(backup)),
        Action::Remove { path } => format!("remove    {}", path.display()),
        Action::Restore { path, backup } => format!("restore   {} (from {})", path.display(), backup.display()),
        Action::RemoveDir { path } => format!("rmdir     {} (if empty)", path.display()),
        Action::InstallPackages { manager, packages } => format!("packages  {} install {}", manager.name(), packages.join(" ")),
        Action::RemovePackages { manager, packages } => format!("packages  {} remove {}", manager.name(), packages.join(" ")),
        Action::WriteManifest => format!("manifest  {MANIFEST}"),
        Action::RemoveState => format!("remove    {MANIFEST} and the emptied backups"),
    }
}

fn note(n: &Note) -> String {
    let l = match n.level {
        Level::Info => "note",
        Level::Warning => "warning",
    };
    format!("  {l}: {}\n", n.text)
}

pub fn plan(p: &InstallPlan, root: &std::path::Path) -> String {
    let verb = if p.uninstall { "uninstall" } else { "install" };
    let mut s = String::new();
    if p.up_to_date() {
        s += &format!("sandbox-install: up to date ({verb}: nothing to change)\n");
    } else {
        let who = p.user.as_deref().map(|u| format!("; user: {u}")).unwrap_or_default();
        s += &format!(
            "sandbox-install: {verb} plan for {} (agents: {}{who})\n",
            root.display(),
            if p.agents.is_empty() { "none".into() } else { p.agents.join(", ") }
        );
        for st in &p.steps {
            s += &format!("  {}\n", step(st));
        }
    }
    for n in &p.notes {
        s += &note(n);
    }
    s
}

fn check(f: &Finding) -> String {
    let mut s = format!("  {:<8}{}\n", f.severity.label(), f.message);
    if let (Some(fix), true) = (&f.fix, f.severity != Severity::Ok) {
        s += &format!("  {:<8}fix: {fix}\n", "");
    }
    s
}

pub fn outcome(o: &Outcome, root: &std::path::Path, seconds: f64) -> String {
    let mut s = plan(&o.plan, root);
    if o.applied && !o.plan.up_to_date() {
        let what = if o.plan.uninstall { "uninstalled" } else { "installed" };
        s += &format!("sandbox-install: {what} ({} changes) in {seconds:.2} s\n", o.plan.steps.len());
    } else if !o.applied {
        s += "sandbox-install: dry run, nothing was changed\n";
    }
    for n in &o.notes {
        s += &note(n);
    }
    if !o.checks.is_empty() {
        s += "checks:\n";
        for f in &o.checks {
            s += &check(f);
        }
        if o.checks.iter().any(|f| f.severity == Severity::Error) {
            s += "sessions will refuse to start here until the errors above are fixed (`agent-sandbox doctor` re-checks)\n";
        }
    }
    s
}
