//! One result of a host check: which check, a stable id, how bad, what
//! was found, what to do. Doctor reports them and the installer shows the
//! host checks it ran after installing; the type sits below both so the
//! installer needs nothing else of doctor's.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    Info,
    Warning,
    /// Sessions cannot start (or would not be sandboxed) until it is fixed.
    Error,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One result: which check, a stable id (documented in docs/doctor.md),
/// how bad, what was found, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub id: &'static str,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    pub fn new(check: &'static str, id: &'static str, severity: Severity, message: String, fix: Option<&str>) -> Self {
        Finding { check, id, severity, message, fix: fix.map(str::to_string) }
    }
}
