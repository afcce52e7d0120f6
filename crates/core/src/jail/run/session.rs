//! `run_jailed`: the launcher's side of a jailed session. It starts the
//! holder, pasta, the locker and the relays in the fixed order, opens the
//! gate, waits for the session, forwards signals to it, and stops every
//! helper on every path.
//!
//! Order (security-relevant, docs/jail.md, "How it works"):
//! 1. signals blocked (read from a signalfd) before any child exists;
//! 2. holder: new user + net namespace, its id maps, IPv6 off, the
//!    (persistent) interface for pasta; then it execs the sandbox, which
//!    sets itself up and waits at the gate, not yet running the command;
//! 3. pasta attached from outside (at the same time as 2's setup); wait
//!    for its pid file (= configured);
//! 4. the locker joins the namespaces, locks the routes and reads them
//!    back; a difference stops the launch;
//! 5. relays up (if any ports); what the container's network changed
//!    since the lock is followed (`follow.rs`); then the gate opens: the
//!    command starts;
//! 6. wait: forward signals, follow the container's network; the
//!    session's status is the exit code; then ask the locker (which kept
//!    the jail's namespaces) what the filter refused, and the DNS
//!    forwarder which names it refused (the end-of-session report);
//! 7. every path: kill and reap the holder, pasta, the locker and the
//!    relay, close the gate, and reap what the launcher adopted meanwhile
//!    (the zombies pasta leaves; a sandbox stopped before the gate opened,
//!    which ends when the gate closes).
//!
//! The gate's write end lives in the launcher (and its forked helpers):
//! if the launcher dies, the gate closes and the waiting command never
//! runs (`gate.rs`).

use super::follow::Watch;
use super::forwarder;
use super::gate::GATE_FD;
use super::holder::{self, GateEnd, Heard, Helper, Ids, Report, Step};
use super::join::{self, Namespaces};
use super::lockdown::Failure;
use super::pasta::{self, ReadyPipe};
use super::relay::{self, RelaySpec};
use super::sys::{signal_status, wait_fd, wait_fds, Event, Events, Signals, Subreaper};
use crate::jail::error::JailError;
use crate::jail::host::{current_userns_facts, userns_diagnosis};
use crate::jail::plan::launch::JailPlan;
use crate::jail::plan::report::JailReport;
use crate::jail::plan::routes::ObserveError;
use nix::sys::signal::{kill, Signal};
use nix::sys::signalfd::siginfo;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Instant;

mod report;

/// `si_code` of signals the kernel sends itself (e.g. the terminal's
/// Ctrl-C to the whole foreground process group, the session included).
const SI_KERNEL: i32 = 0x80;

/// How a jailed session ended: its status (the launcher's exit code) and
/// what the launcher reports about the jail afterwards (the container's
/// network changed during the session: `follow.rs`), for the caller to
/// print once the terminal is its own again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub code: i32,
    pub notes: Vec<String>,
    /// What the jail refused (`None` without a packet filter).
    pub report: Option<JailReport>,
}

/// Runs the session inside the jail. `before_ns` is called in the holder
/// before it makes the jail's namespaces (with the launcher's rights: a
/// root launcher's host view, which ends in the session's own uid).
/// `exec_inner` is called in the holder,
/// inside the jail's namespaces before the routes are locked, with the
/// gate's read end on descriptor `GATE_FD`; it must exec bwrap with the
/// gate (`GATE_PATH`) as the command's first word, so the command runs
/// only once the gate opens. It returns only on error. Returns the launcher's
/// exit code: the session's status, or 128+N after signal N (also when a
/// signal stops the launch).
///
/// `before_gate`: a descriptor on which the sandbox's side reports, once,
/// that what must be in place before the command starts is (`1`), or why
/// it is not (`0` and a message): the gate opens only after a `1`.
pub fn run_jailed(
    plan: &JailPlan,
    before_ns: &mut dyn FnMut() -> std::io::Result<()>,
    exec_inner: &mut dyn FnMut() -> std::io::Error,
    before_gate: Option<OwnedFd>,
) -> Result<Ended, JailError> {
    let signals = Signals::block()?;
    let orphans = Subreaper::adopt_orphans();
    let mut kids = Kids::default();
    let mut watch = None;
    let mut report = None;
    let result = run(plan, before_ns, exec_inner, before_gate.as_ref(), &signals, &mut kids, (&mut watch, &mut report));
    let t = Instant::now();
    kids.stop_all();
    orphans.reap_dying(&signals);
    tracing::debug!("egress jail: helpers stopped in {:?}", t.elapsed());
    let mut notes = watch.map(|w| w.notes()).unwrap_or_default();
    notes.extend(report.iter().flat_map(JailReport::lines));
    let code = match result {
        Ok(code) => code,
        Err(Stop::Signal(n)) => signal_status(n),
        Err(Stop::Exited(code)) => code,
        Err(Stop::Failed(f)) => return Err(failure(f, plan)),
        Err(Stop::Error(e)) => return Err(e),
    };
    Ok(Ended { code, notes, report })
}

/// Why the launch or the session stopped early.
enum Stop {
    Signal(i32),
    /// The sandbox exited before the gate opened (bwrap said why).
    Exited(i32),
    /// The holder ended before its exec, saying why.
    Failed(Failure),
    Error(JailError),
}

impl From<JailError> for Stop {
    fn from(e: JailError) -> Self {
        Stop::Error(e)
    }
}

/// The helpers of one session; all of them are killed and reaped at the
/// end, whatever happened.
#[derive(Default)]
struct Kids {
    holder: Option<Pid>,
    /// The holder's report channel (owned by `run`'s `Helper`): why it
    /// ended, when it ends before the launcher heard of its exec.
    holder_chan: Option<std::os::fd::RawFd>,
    pasta: Option<Pid>,
    pasta_stderr: Option<OwnedFd>,
    relay: Option<Pid>,
    factory: Option<Pid>,
    locker: Option<Pid>,
    /// The jail's DNS forwarder (allowDomains), and its report channel.
    forwarder: Option<Pid>,
    forwarder_chan: Option<std::os::fd::RawFd>,
    /// The child following a change of the container's network.
    follower: Option<Pid>,
    /// The gate's write end until it opens; dropping it closes the gate.
    gate: Option<OwnedFd>,
    /// The holder exec'd the sandbox: its exit is the sandbox's.
    sandbox_started: bool,
    /// Exit statuses of helpers reaped early.
    exited: Vec<WaitStatus>,
}

impl Kids {
    /// Reaps whichever helper exited, without blocking.
    fn reap(&mut self) {
        for pid in [self.holder, self.pasta, self.relay, self.factory, self.locker, self.follower, self.forwarder].into_iter().flatten() {
            if let Ok(st) = waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                if st != WaitStatus::StillAlive {
                    self.exited.push(st);
                    self.forget(pid);
                }
            }
        }
    }

    fn forget(&mut self, pid: Pid) {
        for slot in [&mut self.holder, &mut self.pasta, &mut self.relay, &mut self.factory, &mut self.locker, &mut self.follower, &mut self.forwarder] {
            if *slot == Some(pid) {
                *slot = None;
            }
        }
    }

    fn status_of(&self, pid: Pid) -> Option<WaitStatus> {
        self.exited.iter().copied().find(|st| st.pid() == Some(pid))
    }

    /// The report a dead holder left on its channel, if any (none: it
    /// exec'd the sandbox, whose end closed the channel).
    fn holder_report(&self) -> Option<Report> {
        last_report(self.holder_chan?)
    }
}

impl Kids {
    fn stop_all(&mut self) {
        // All killed first, then reaped: they die in parallel. pasta's
        // exit is quick because its device outlives it (`tap.rs`).
        let pids: Vec<Pid> = [&mut self.holder, &mut self.relay, &mut self.factory, &mut self.locker, &mut self.follower, &mut self.forwarder, &mut self.pasta]
            .into_iter()
            .filter_map(|slot| slot.take())
            .collect();
        for pid in &pids {
            let _ = kill(*pid, Signal::SIGKILL);
        }
        for pid in pids {
            let _ = waitpid(pid, None);
        }
        self.pasta_stderr = None;
        self.gate = None;
    }
}

impl Drop for Kids {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// The report a dead helper left on its channel `fd`, if any.
fn last_report(fd: std::os::fd::RawFd) -> Option<Report> {
    let mut buf = vec![0u8; 64 * 1024];
    let n = nix::sys::socket::recv(fd, &mut buf, nix::sys::socket::MsgFlags::MSG_DONTWAIT).ok()?;
    serde_json::from_slice(buf.get(..n)?).ok()
}

fn run(
    plan: &JailPlan,
    before_ns: &mut dyn FnMut() -> std::io::Result<()>,
    exec_inner: &mut dyn FnMut() -> std::io::Error,
    before_gate: Option<&OwnedFd>,
    signals: &Signals,
    kids: &mut Kids,
    (watch, report): (&mut Option<Watch>, &mut Option<JailReport>),
) -> Result<i32, Stop> {
    let start = Instant::now();
    let deadline = start + plan.setup_timeout;
    let step = |what: &str| tracing::debug!("egress jail: {what} after {:?}", start.elapsed());
    // 2. The holder and its namespaces; it then execs the sandbox, which
    // waits at the gate.
    let (gate_read, gate_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| JailError::sys("pipe", crate::jail::error::errno(e)))?;
    kids.gate = Some(gate_write);
    let ids = Ids { uid_map: &plan.uid_map, gid_map: &plan.gid_map, becomes: plan.becomes };
    let holder = holder::spawn(ids, GateEnd { read: &gate_read, target: GATE_FD }, signals, before_ns, exec_inner)?;
    kids.holder = Some(holder.pid);
    kids.holder_chan = Some(holder.chan_fd());
    drop(gate_read);
    if plan.becomes.is_some() {
        expect("the holder", &holder, signals, kids, deadline, Want::Unshared, plan)?;
        holder::write_maps_of(holder.pid, &plan.uid_map, &plan.gid_map).map_err(|e| JailError::sys("writing the jail's id maps", e))?;
        holder.send(Step::Maps)?;
    }
    // Watch the container's network from now on (read again below).
    *watch = Watch::subscribe(plan)?;
    expect("the holder", &holder, signals, kids, deadline, Want::Ready, plan)?;
    let ns = Namespaces::passed_by(&holder)?;
    step("namespaces ready");
    // 3. The locker joins them, keeping pasta's readiness pipe; then
    // pasta, while the sandbox sets itself up, attached to the locker's
    // namespaces (the holder may be an unprivileged uid by then).
    let ready = ReadyPipe::new()?;
    let (locker, lock_inputs) = join::spawn(&ns, plan.filter_shape())?;
    kids.locker = Some(locker.pid);
    // The locker's copy of the write end, at the same number.
    let pid_file = pasta::pid_file_path(locker.pid, ready.write.as_raw_fd());
    drop(ready.write);
    expect("the route locker", &locker, signals, kids, deadline, Want::Ready, plan)?;
    let p = pasta::spawn(&plan.pasta, locker.pid, pid_file)?;
    kids.pasta = Some(p.pid);
    kids.pasta_stderr = p.stderr;
    // The DNS forwarder (allowDomains) starts while pasta does (after it:
    // pasta's start is the longest step, and forking the forwarder and its
    // dialer first delayed it); it must listen before the gate opens.
    let dns = forwarder::Spec::of(plan).map(|spec| forwarder::spawn(&ns, spec)).transpose()?;
    kids.forwarder = dns.as_ref().map(|d| d.pid);
    kids.forwarder_chan = dns.as_ref().map(Helper::chan_fd);
    // While pasta starts: what changed in the container since the plan was
    // decided joins the lock's inputs.
    if let Some(w) = watch.as_mut() {
        w.reread()?;
    }
    let inputs = watch.as_ref().map_or_else(|| plan.route_inputs(), Watch::inputs);
    expect("the holder", &holder, signals, kids, deadline, Want::Closed, plan)?;
    kids.sandbox_started = true;
    step("sandbox started, waiting at the gate");
    await_pasta(&ready.read, signals, kids, deadline, plan)?;
    drop(ready.read);
    step("pasta attached");
    // 4. The route lock. (A locker that died cannot read: its report, or
    // its silence, says why below.)
    locker.send(Step::Lock)?;
    let _ = std::io::Write::write_all(&mut std::fs::File::from(lock_inputs), &serde_json::to_vec(&inputs).unwrap_or_default());
    expect("the route locker", &locker, signals, kids, deadline, Want::Locked, plan)?;
    step("routes locked");
    // The jail's DNS forwarder binds its listeners now (its loopback is
    // up) and reports before the gate opens.
    if let Some(d) = &dns {
        d.send(Step::Lock)?;
    }
    // 5. Relays, then the gate.
    if plan.has_relays() {
        start_relay(plan, &ns, signals, kids, deadline)?;
    }
    if let Some(fd) = before_gate {
        await_before_gate(fd, signals, kids, deadline, plan)?;
        step("the sandbox's side ready");
    }
    if let Some(d) = &dns {
        expect("the jail's DNS forwarder", d, signals, kids, deadline, Want::Ready, plan)?;
        step("the DNS forwarder listening");
    }
    // What changed in the container meanwhile is blocked before anything
    // runs; a jail that cannot follow does not launch.
    if let Some(w) = watch.as_mut() {
        if w.changed()? {
            follow(w, &ns, plan, signals, kids, deadline)
                .map_err(|message| JailError::RouteLock { step: "following a change of the container's routes".into(), message })?;
        }
    }
    open_gate(kids);
    step("gate opened");
    // 6. The session.
    crate::resident::shed_text();
    let code = wait_session(holder.pid, signals, kids, plan, &ns, watch.as_mut());
    step("session ended");
    if plan.filter_shape().is_some_and(|s| s.report) {
        *report = Some(report::collect(&locker, dns.as_ref(), signals, kids));
        step("report read");
    }
    code
}

/// One byte through the gate: bwrap starts the command.
fn open_gate(kids: &mut Kids) {
    if let Some(gate) = kids.gate.take() {
        // A sandbox that already exited has closed its end (EPIPE; SIGPIPE
        // is ignored): its status is reported by wait_session.
        let _ = nix::unistd::write(&gate, b"1");
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Want {
    /// The holder's namespaces exist; its maps are the launcher's to write.
    Unshared,
    Ready,
    Locked,
    /// The channel closes: the holder's exec of the sandbox succeeded.
    Closed,
}

/// Waits for a helper's next report.
fn expect(what: &'static str, helper: &Helper, signals: &Signals, kids: &mut Kids, deadline: Instant, want: Want, plan: &JailPlan) -> Result<(), Stop> {
    loop {
        let got = match helper.hear(signals, deadline)? {
            Heard::Report(Report::Failed(f)) => return Err(failure(f, plan).into()),
            Heard::Report(Report::Ready) => Want::Ready,
            Heard::Report(Report::Unshared) => Want::Unshared,
            Heard::Report(Report::Locked { routes, filter_rules }) => {
                tracing::debug!("egress jail: locked ({routes} main-table routes, {filter_rules} filter rules)");
                Want::Locked
            }
            Heard::Closed => Want::Closed,
            Heard::Report(Report::Refused { .. } | Report::Names(_)) => return Err(helper_gone(what, helper.pid, kids, want).into()),
            Heard::Signal(info) => {
                on_setup_signal(&info, kids)?;
                continue;
            }
            Heard::Timeout => return Err(JailError::Timeout { what, secs: plan.setup_timeout.as_secs() }.into()),
        };
        if got == want {
            return Ok(());
        }
        return Err(helper_gone(what, helper.pid, kids, want).into());
    }
}

/// A helper stopped talking out of turn (it died).
fn helper_gone(what: &str, pid: Pid, kids: &mut Kids, want: Want) -> JailError {
    kids.reap();
    let status = kids.status_of(pid).map(|s| format!("{s:?}")).unwrap_or_else(|| "no status".into());
    JailError::RouteLock { step: format!("waiting for {what} ({want:?})"), message: format!("{what} exited: {status}") }
}

/// A signal during setup: a child exit is checked, anything else stops
/// the launch (nothing runs yet to forward it to).
fn on_setup_signal(info: &siginfo, kids: &mut Kids) -> Result<(), Stop> {
    if info.ssi_signo != Signal::SIGCHLD as u32 {
        return Err(Stop::Signal(info.ssi_signo as i32));
    }
    let (holder, pasta) = (kids.holder, kids.pasta);
    let relay = [kids.relay, kids.factory];
    let dns = kids.forwarder;
    kids.reap();
    // The holder's end comes first: pasta and the relay fail because its
    // namespaces went with it. Before its exec it says why on its
    // channel; after, the sandbox failed in its own setup (bwrap printed
    // why), also when the launcher had not yet heard of the exec.
    if let Some(st) = holder.and_then(|p| kids.status_of(p)) {
        if !kids.sandbox_started {
            if let Some(Report::Failed(f)) = kids.holder_report() {
                return Err(Stop::Failed(f));
            }
        }
        return Err(Stop::Exited(exit_code(st)));
    }
    if let Some(st) = pasta.and_then(|p| kids.status_of(p)) {
        let stderr = pasta::read_stderr(kids.pasta_stderr.take());
        let detail = if stderr.is_empty() { format!("pasta exited ({st:?})") } else { stderr };
        return Err(pasta::attach_error(detail).into());
    }
    if let Some(st) = relay.into_iter().flatten().find_map(|p| kids.status_of(p)) {
        return Err(JailError::Relay { message: format!("the relay exited during setup ({st:?})") }.into());
    }
    if let Some(st) = dns.and_then(|p| kids.status_of(p)) {
        if let Some(Report::Failed(f)) = kids.forwarder_chan.and_then(last_report) {
            return Err(Stop::Failed(f));
        }
        return Err(JailError::RouteLock { step: "starting the jail's DNS forwarder".into(), message: format!("it exited ({st:?})") }.into());
    }
    Ok(())
}

/// Waits for pasta's pid line: the namespace is configured. Should the
/// pipe close without a line (pasta and the locker gone), their exit, with
/// what pasta said, is what is reported.
fn await_pasta(read: &OwnedFd, signals: &Signals, kids: &mut Kids, deadline: Instant, plan: &JailPlan) -> Result<(), Stop> {
    let mut line = Vec::new();
    let mut closed = false;
    loop {
        let watched = (!closed).then(|| read.as_fd());
        match wait_fd(watched, signals, Some(deadline))? {
            Event::Ready => match pasta::read_ready(read, &mut line) {
                Some(true) => return Ok(()),
                Some(false) => closed = true,
                None => {}
            },
            Event::Signal(info) => on_setup_signal(&info, kids)?,
            Event::Timeout if closed => {
                return Err(JailError::PastaAttach {
                    detail: "pasta closed its readiness pipe without getting ready, and did not exit".into(),
                    fix: "retry; report it if it persists".into(),
                }
                .into())
            }
            Event::Timeout => return Err(JailError::PastaTimeout { secs: plan.setup_timeout.as_secs() }.into()),
        }
    }
}

/// The sandbox side's one report before the gate opens (see `run_jailed`).
fn await_before_gate(fd: &OwnedFd, signals: &Signals, kids: &mut Kids, deadline: Instant, plan: &JailPlan) -> Result<(), Stop> {
    match await_report(fd, "the sandbox's preparation", signals, kids, deadline, plan)?.split_first() {
        Some((b'1', _)) => Ok(()),
        Some((b'0', why)) => Err(JailError::BeforeGate { message: String::from_utf8_lossy(why).into_owned() }.into()),
        _ => Err(JailError::BeforeGate { message: "the process preparing it ended without a word".into() }.into()),
    }
}

fn start_relay(plan: &JailPlan, ns: &Namespaces, signals: &Signals, kids: &mut Kids, deadline: Instant) -> Result<(), Stop> {
    let spec = RelaySpec { ns_user: &ns.user, ns_net: &ns.net, local_ports: &plan.local_ports, callback_ports: &plan.callback_ports };
    let r = relay::spawn(&spec)?;
    kids.relay = Some(r.pid);
    kids.factory = Some(r.factory);
    match await_report(&r.ready, "the loopback relay", signals, kids, deadline, plan)?.as_slice() {
        [] => Err(JailError::Relay { message: "the relay could not open its listeners".into() }.into()),
        _ => Ok(()),
    }
}

/// A helper's one report on `fd` (empty if it closed without one), waiting
/// until the setup deadline and handling signals meanwhile.
fn await_report(fd: &OwnedFd, what: &'static str, signals: &Signals, kids: &mut Kids, deadline: Instant, plan: &JailPlan) -> Result<Vec<u8>, Stop> {
    loop {
        match wait_fd(Some(fd.as_fd()), signals, Some(deadline))? {
            Event::Ready => {
                let mut b = [0u8; 4096];
                let n = nix::unistd::read(fd.as_raw_fd(), &mut b).unwrap_or(0);
                return Ok(b.get(..n).unwrap_or_default().to_vec());
            }
            Event::Signal(info) => on_setup_signal(&info, kids)?,
            Event::Timeout => return Err(JailError::Timeout { what, secs: plan.setup_timeout.as_secs() }.into()),
        }
    }
}

/// Step 6: until the session ends, forward signals sent to the launcher
/// (the terminal's own signals already reached the session), log pasta's
/// complaints, follow the container's network, and return the session's
/// status.
fn wait_session(holder: Pid, signals: &Signals, kids: &mut Kids, plan: &JailPlan, ns: &Namespaces, mut watch: Option<&mut Watch>) -> Result<i32, Stop> {
    loop {
        // The holder may have been reaped already, while the launch waited
        // for its exec.
        if let Some(st) = kids.status_of(holder) {
            return Ok(exit_code(st));
        }
        let stderr = kids.pasta_stderr.as_ref().map(|f| f.as_fd());
        let changes = watch.as_ref().map(|w| w.fd());
        match wait_fds(&[stderr, changes], signals, None)? {
            Events::Ready(ready) => {
                if ready.first() == Some(&true) {
                    drain_pasta(kids);
                }
                if let (Some(true), Some(w)) = (ready.get(1), watch.as_deref_mut()) {
                    on_container_change(w, ns, plan, signals, kids);
                }
            }
            Events::Timeout => {}
            Events::Signal(info) if info.ssi_signo == Signal::SIGCHLD as u32 => on_child_exit(kids),
            Events::Signal(info) => forward(&info, holder),
        }
    }
}

fn on_child_exit(kids: &mut Kids) {
    let (pasta, relay, dns) = (kids.pasta, kids.relay.and(kids.factory), kids.forwarder);
    kids.reap();
    if dns.is_some() && kids.forwarder.is_none() {
        tracing::warn!("egress jail: the jail's DNS forwarder exited; names no longer resolve in the session");
    }
    if pasta.is_some() && kids.pasta.is_none() {
        tracing::warn!("egress jail: pasta exited; the session has no network any more");
    }
    if relay.is_some() && (kids.relay.is_none() || kids.factory.is_none()) {
        tracing::warn!("egress jail: the loopback relay exited; relayed ports no longer answer");
    }
}

/// A signal sent to the launcher goes on to the session.
fn forward(info: &siginfo, holder: Pid) {
    if info.ssi_code != SI_KERNEL {
        if let Ok(sig) = Signal::try_from(info.ssi_signo as i32) {
            let _ = kill(holder, sig);
        }
    }
}

/// The container's network changed during the session: follow it, or cut
/// the session's network (stop pasta) when the jail cannot.
fn on_container_change(watch: &mut Watch, ns: &Namespaces, plan: &JailPlan, signals: &Signals, kids: &mut Kids) {
    let outcome = match watch.changed() {
        Ok(false) => return,
        Ok(true) => follow(watch, ns, plan, signals, kids, Instant::now() + plan.setup_timeout),
        Err(e) => Err(e.to_string()),
    };
    if let Err(why) = outcome {
        tracing::warn!(
            "egress jail: the jail could not follow a change of the container's routes ({why}); stopping pasta: the session has no network any more"
        );
        if let Some(pid) = kids.pasta.take() {
            let _ = kill(pid, Signal::SIGKILL);
            let _ = waitpid(pid, None);
        }
        watch.failed(why);
    }
}

/// Moves the jail to the watch's inputs (a follower joins it and reports),
/// forwarding signals to the session meanwhile.
fn follow(watch: &Watch, ns: &Namespaces, plan: &JailPlan, signals: &Signals, kids: &mut Kids, deadline: Instant) -> Result<(), String> {
    let t = Instant::now();
    let follower = join::spawn_follow(ns, &watch.inputs(), plan.filter_shape()).map_err(|e| e.to_string())?;
    kids.follower = Some(follower.pid);
    let heard = loop {
        match follower.hear(signals, deadline) {
            Ok(Heard::Signal(info)) if info.ssi_signo == Signal::SIGCHLD as u32 => on_child_exit(kids),
            Ok(Heard::Signal(info)) => {
                if let Some(h) = kids.holder {
                    forward(&info, h);
                }
            }
            other => break other,
        }
    };
    if let Some(pid) = kids.follower.take() {
        let _ = kill(pid, Signal::SIGKILL);
        let _ = waitpid(pid, None);
    }
    match heard {
        Ok(Heard::Report(Report::Locked { routes, .. })) => {
            tracing::debug!("egress jail: followed the container's network in {:?} ({routes} main-table routes)", t.elapsed());
            Ok(())
        }
        Ok(Heard::Report(Report::Failed(f))) => Err(failure(f, plan).to_string()),
        Ok(Heard::Timeout) => Err(format!("the follower did not answer within {} s", plan.setup_timeout.as_secs())),
        Ok(_) => Err("the follower ended without a word".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Logs what pasta wrote; stops watching at EOF.
fn drain_pasta(kids: &mut Kids) {
    let Some(fd) = kids.pasta_stderr.as_ref() else { return };
    let mut buf = [0u8; 4096];
    match nix::unistd::read(fd.as_raw_fd(), &mut buf) {
        Ok(0) | Err(_) => kids.pasta_stderr = None,
        Ok(n) => {
            let text = pasta::meaningful_lines(&String::from_utf8_lossy(&buf[..n]));
            if !text.is_empty() {
                tracing::warn!("egress jail: pasta: {text}");
            }
        }
    }
}

fn exit_code(st: WaitStatus) -> i32 {
    match st {
        WaitStatus::Exited(_, code) => code,
        WaitStatus::Signaled(_, sig, _) => signal_status(sig as i32),
        _ => 1,
    }
}

/// The holder's failure as the launcher's error.
fn failure(f: Failure, plan: &JailPlan) -> JailError {
    match f {
        Failure::Unshare { errno } => {
            let (cause, fix) = userns_diagnosis(&current_userns_facts(), plan.uid, errno);
            JailError::UserNamespaces { cause, fix }
        }
        Failure::IdMaps { errno, message } => {
            let (cause, fix) = userns_diagnosis(&current_userns_facts(), plan.uid, errno);
            JailError::UserNamespaces { cause: format!("writing the jail's id maps failed ({message}); {cause}"), fix }
        }
        Failure::Ipv6 { message } => JailError::RouteLock { step: "switching IPv6 off".into(), message },
        Failure::IcmpRate { message } => JailError::RouteLock { step: "lifting the ICMP rate limit from the filter's rejects".into(), message },
        Failure::Tap { message } => JailError::TunUnusable { path: crate::jail::host::TUN_PATH.into(), why: message },
        Failure::Netlink { step, message } => JailError::RouteLock { step, message },
        Failure::Observe(ObserveError::NoGateway) => JailError::NoNetwork { why: "pasta found no default route".into() },
        Failure::Observe(ObserveError::NoAddress(dev)) => JailError::NoNetwork { why: format!("{dev} has no IPv4 address") },
        Failure::Observe(ObserveError::Interfaces(l)) => JailError::NoNetwork { why: format!("expected one interface from pasta, found {l:?}") },
        Failure::Unexpected(differences) => JailError::UnexpectedNetwork { differences },
        Failure::Filter { step, errno, message } => JailError::PacketFilter { step, detail: message, fix: crate::jail::error::packet_filter_fix(errno) },
        Failure::Exec { message } => JailError::Exec { message },
    }
}
