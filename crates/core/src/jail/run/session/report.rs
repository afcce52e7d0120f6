//! After the session, before the jail's namespaces go: what the locker
//! (their keeper) reads of the filter's `seen` set, and the names the DNS
//! forwarder refused, into the end-of-session report.

use super::super::holder::{Heard, Helper, Report, Step};
use super::super::sys::Signals;
use super::Kids;
use crate::jail::plan::report::{JailReport, NameTally};
use nix::sys::signal::Signal;
use std::time::Instant;

/// After the session: the locker's reading of the filter's `seen` set and
/// the forwarder's tally of refused names.
pub(super) fn collect(locker: &Helper, dns: Option<&Helper>, signals: &Signals, kids: &mut Kids) -> JailReport {
    let mut report = JailReport::default();
    match ask(locker, kids.locker.is_some(), signals, kids) {
        Ok(Report::Refused { refused, full }) => (report.refused, report.refused_full) = (refused, full),
        Ok(Report::Failed(f)) => report.unavailable = Some(format!("{f:?}")),
        Ok(_) => report.unavailable = Some("the locker answered out of turn".into()),
        Err(why) => report.unavailable = Some(why),
    }
    if let Some(d) = dns {
        match ask(d, kids.forwarder.is_some(), signals, kids) {
            Ok(Report::Names(t)) => report.names = t,
            _ => report.names = NameTally::default(),
        }
    }
    report
}

/// How long a helper may take to report after the session.
const REPORT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Asks a helper that is still `alive` for its report.
fn ask(helper: &Helper, alive: bool, signals: &Signals, kids: &mut Kids) -> Result<Report, String> {
    if !alive || helper.send(Step::Report).is_err() {
        return Err("the helper holding it had exited".into());
    }
    let deadline = Instant::now() + REPORT_WAIT;
    loop {
        match helper.hear(signals, deadline).map_err(|e| e.to_string())? {
            Heard::Report(r) => return Ok(r),
            Heard::Signal(info) if info.ssi_signo == Signal::SIGCHLD as u32 => kids.reap(),
            // The session is over: a late signal has no one to go to.
            Heard::Signal(_) => {}
            Heard::Closed => return Err("the helper holding it exited without it".into()),
            Heard::Timeout => return Err(format!("no answer within {} s", REPORT_WAIT.as_secs())),
        }
    }
}
