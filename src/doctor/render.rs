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
