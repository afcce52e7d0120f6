//! Doctor output: aligned text for people, JSON for scripts.

use super::{Report, Severity};

pub fn text(r: &Report) -> String {
    let mut s = String::from("agent-sandbox doctor\n");
    for f in &r.findings {
        s += &format!("  {:<8}{:<26}{}\n", f.severity.label(), f.id, f.message);
        if let Some(fix) = &f.fix {
            if f.severity != Severity::Ok {
                s += &format!("  {:<8}{:<26}fix: {fix}\n", "", "");
            }
        }
    }
    s += &summary(r);
    s
}

pub fn summary(r: &Report) -> String {
    let (e, w) = (r.count(Severity::Error), r.count(Severity::Warning));
    match (e, w) {
        (0, 0) => "no problems found\n".into(),
        (0, w) => format!("{w} warning(s); nothing blocks sessions\n"),
        (e, w) => format!("{e} error(s) block sessions or let agents run unsandboxed; {w} warning(s)\n"),
    }
}

pub fn json(r: &Report) -> serde_json::Value {
    serde_json::json!({
        "findings": r.findings,
        "errors": r.count(Severity::Error),
        "warnings": r.count(Severity::Warning),
        "blocking": r.blocking(),
    })
}

/// The container-start check's output: one line per warning or error
/// (with its fix and doctor's id for it), nothing when all is well. A
/// start is never failed, so errors are warnings here too.
pub fn start_check(r: &Report) -> String {
    let mut s = String::new();
    for f in r.findings.iter().filter(|f| f.severity >= Severity::Warning) {
        s += &format!("agent-sandbox: WARNING: {} [{}]", f.message, f.id);
        if let Some(fix) = &f.fix {
            s += &format!(" Fix: {fix}");
        }
        s += "\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Finding;

    #[test]
    fn the_start_check_prints_one_line_per_problem() {
        let f = |id, severity, fix: Option<&str>| Finding { check: "x", id, severity, message: format!("{id} message"), fix: fix.map(str::to_string) };
        let r = Report {
            findings: vec![
                f("bwrap-ok", Severity::Ok, None),
                f("abstract-scope-unavailable", Severity::Info, Some("newer kernel")),
                f("jail-off", Severity::Warning, Some("unset X")),
                f("tun-missing", Severity::Error, Some("add the device")),
            ],
        };
        assert_eq!(
            start_check(&r),
            "agent-sandbox: WARNING: jail-off message [jail-off] Fix: unset X\n\
             agent-sandbox: WARNING: tun-missing message [tun-missing] Fix: add the device\n"
        );
        assert_eq!(start_check(&Report { findings: vec![f("bwrap-ok", Severity::Ok, None)] }), "");
    }
}
