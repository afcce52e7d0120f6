//! The probe's stdout protocol, one JSON object per line:
//! - `{"n":N,"status":"pass|fail|skip","detail":...}` — a check's result;
//! - `{"request":"connect","port":P}` — asks the launcher to try a TCP
//!   connection to the container's 127.0.0.1:P now (inbound forwarding).
//!
//! The probe writes results, a check writes requests, the launcher
//! (`outer`) reads both; each depends on this module, none on another.

use super::Outcome;
use serde::{Deserialize, Serialize};
use std::io::Write;

/// One line of the probe's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Line {
    Result {
        n: u16,
        #[serde(flatten)]
        outcome: Outcome,
    },
    Request {
        request: String,
        port: u16,
    },
}

/// Writes one line to stdout and flushes it.
pub(crate) fn emit(line: &Line) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string(line).unwrap_or_default());
    let _ = out.flush();
}

/// Asks the launcher to connect to the container's 127.0.0.1:`port`.
pub(crate) fn request_connect(port: u16) {
    emit(&Line::Request { request: "connect".into(), port });
}
