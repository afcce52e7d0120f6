//! `agent-sandbox run` and the vendor shims.

use super::args::RunArgs;
use agent_sandbox::agents::Agent;
use agent_sandbox::launch::{self, Request};
use agent_sandbox::sandbox::{self, context::env_snapshot, plan::HostView, plan::Plan};
use std::ffi::OsString;
use std::path::Path;

pub(crate) fn run(config_path: Option<&Path>, a: RunArgs) -> anyhow::Result<u8> {
    let agent = Agent::from_name(a.agent.as_deref().unwrap_or("claude"))?;
    let req = Request { agent, command: (!a.cmd.is_empty()).then_some(a.cmd), agent_args: Vec::new(), peers: a.peers };
    launch_or_print(config_path, req, a.print_plan.then_some(a.json), a.report.as_deref())
}

/// `claude ARGS...` (or codex, pi) through the shim.
pub(crate) fn shim(agent: Agent, args: Vec<OsString>) -> anyhow::Result<u8> {
    let req = Request { agent, command: None, agent_args: args, peers: false };
    launch_or_print(None, req, None, None)
}

fn launch_or_print(config_path: Option<&Path>, req: Request, print: Option<bool>, report: Option<&Path>) -> anyhow::Result<u8> {
    let env = env_snapshot();
    if sandbox::inside_session() && print.is_none() {
        // Recursion guard: already sandboxed, run the command as it is.
        match launch::exec_direct(&req, &env)? {}
    }
    let eff = super::load_config(config_path, &env)?;
    let mut session = launch::decide(&req, &eff.config, &env)?;
    if let Some(json) = print {
        print_plan(&session, req.agent, json)?;
        return Ok(0);
    }
    if let Some(path) = report {
        let file = launch::open_report(path)
            .map_err(|e| anyhow::anyhow!("--report {}: {e}; name a file you may write, with no symbolic link on the way", path.display()))?;
        session.report = Some(file);
    }
    let code = launch::start(&session)?;
    Ok(u8::try_from(code).unwrap_or(1))
}

/// Values set by the launcher are shown; values passed from outside are
/// not (they may be secrets the user chose to pass).
fn shown_value(plan_agent: Agent, name: &str, value: &std::ffi::OsStr) -> String {
    let set_here = agent_sandbox::env_vars::SET_BY_LAUNCHER.contains(&name)
        || agent_sandbox::env_vars::passed_by_default(name)
        || plan_agent.env().iter().any(|(k, _)| *k == name);
    if set_here {
        value.to_string_lossy().into_owned()
    } else {
        "<passed from outside>".into()
    }
}

/// The host view in words (`--print-plan`).
fn host_view_text(v: &HostView) -> String {
    match v {
        HostView::Launcher => "the launcher's own uid on host files".into(),
        HostView::Unprivileged { uid, idmapped, .. } => {
            let places: Vec<String> = idmapped.iter().map(|p| p.display().to_string()).collect();
            format!("root's session is uid {uid} on host files (kernel-enforced); bound idmapped (owner <-> {uid}): {}", places.join(", "))
        }
        HostView::Scan { why } => format!("root's uid, with what only root may use hidden by the root-only scan ({why})"),
    }
}

fn print_plan(session: &launch::Session, agent: Agent, json: bool) -> anyhow::Result<()> {
    let plan: &Plan = &session.plan;
    let jail_plan = session.jail.as_ref();
    let jail = jail_plan.is_some();
    let scanned = session.scan_now();
    let premounted: Vec<&std::path::Path> = plan.premounts().iter().filter_map(|p| plan.mounts.get(p.mount)).map(|m| m.dest().as_path()).collect();
    let env: serde_json::Map<String, serde_json::Value> = plan
        .env
        .iter()
        .map(|(k, v)| {
            let k = k.to_string_lossy().into_owned();
            let shown = shown_value(agent, &k, v);
            (k, shown.into())
        })
        .collect();
    if json {
        let data: Vec<_> = plan
            .data
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let hex: String = d.bytes.iter().map(|b| format!("{b:02x}")).collect();
                serde_json::json!({"fd": sandbox::plan::FIRST_DATA_FD + i as i32, "purpose": d.purpose.name(), "bytes": d.bytes.len(), "hex": hex})
            })
            .collect();
        let v = serde_json::json!({
            "bwrap": plan.bwrap,
            "args": plan.args().iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
            "env": env,
            "data": data,
            "mounts": plan.mounts,
            "hiddenBeforeBwrap": plan.early_masks(),
            "hostView": plan.host_view,
            "madeBeforeBwrap": premounted,
            "hiddenByRootScan": scanned,
            "workspace": plan.workspace,
            "chdir": plan.chdir,
            "egressJail": jail,
            "jail": jail_plan.map(jail_json),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    outln!("egress jail: {}", if jail { "on" } else { "off" });
    if let Some(j) = jail_plan {
        outln!("  the internet: {}", j.internet.describe());
        outln!("  blocked, as the container routes them other than by its default route: {} destination(s)", j.container.len());
        for d in &j.container {
            outln!("    {} ({})", d.net, d.why);
        }
        if let Some(list) = &j.allowlist {
            outln!("  allowDomains: only what these names resolve to (through the jail's DNS forwarder) leaves: {}", list.describe().join(", "));
        }
    }
    outln!("workspace:   {}", plan.workspace.display());
    outln!("host view:   {}", host_view_text(&plan.host_view));
    outln!("command line:");
    out!("  {}", shell_quote(&plan.bwrap.to_string_lossy()));
    for a in &plan.args() {
        let a = a.to_string_lossy();
        if a.starts_with("--") && a != "--" {
            out!(" \\\n    {}", shell_quote(&a));
        } else {
            out!(" {}", shell_quote(&a));
        }
    }
    outln!();
    if !premounted.is_empty() {
        outln!(
            "made by the launcher before bwrap starts, by descriptor ({}):",
            match plan.premount {
                agent_sandbox::sandbox::mountfd::MountApi::Full => "every mount but /dev and /proc, onto the host's tree made read-only",
                _ => "they lie in places sessions write",
            }
        );
        for p in &premounted {
            outln!("  {}", p.display());
        }
    }
    let early = plan.early_masks();
    if !early.is_empty() {
        outln!("hidden before bwrap starts (an empty read-only view over each):");
        for p in early {
            outln!("  {}", p.display());
        }
    }
    if !scanned.is_empty() {
        outln!("hidden by the root-only scan (now):");
        for p in &scanned {
            outln!("  {}", p.display());
        }
    }
    outln!("data files:");
    for (i, d) in plan.data.iter().enumerate() {
        outln!("  fd {}: {} ({} bytes)", sandbox::plan::FIRST_DATA_FD + i as i32, d.purpose.name(), d.bytes.len());
    }
    outln!("environment:");
    for (k, v) in env {
        outln!("  {k}={}", v.as_str().unwrap_or(""));
    }
    Ok(())
}

/// What the jail treats as the internet and what it blocks of the
/// container's own routing.
fn jail_json(j: &agent_sandbox::jail::JailPlan) -> serde_json::Value {
    let blocked: Vec<_> =
        j.container.iter().map(|d| serde_json::json!({"net": d.net.to_string(), "source": format!("{:?}", d.source).to_lowercase(), "why": d.why})).collect();
    serde_json::json!({
        "internet": j.internet.describe(),
        "internetRoute": j.internet.route.as_ref().map(|(rule, r)| serde_json::json!({"rule": rule, "table": r.table, "gateway": r.gateway, "dev": r.dev})),
        "conditional": j.internet.conditional,
        "containerBlocked": blocked,
        "forwarder": j.forwarder,
        "allowIp": j.allow_ip,
        "allowDomains": j.allowlist.as_ref().map(|l| l.describe()),
    })
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
