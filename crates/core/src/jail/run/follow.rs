//! Following the container's network while a session runs: a VPN that
//! comes up after the launch, a route or rule added later, another
//! address. The launcher, which stays in the container's network
//! namespace, holds an rtnetlink socket subscribed to the container's IPv4
//! route, rule and address changes (`Watch`), opened before it reads the
//! container for the lock, so no change falls between the two. On a
//! change it reads the container again (`container::destinations`); what
//! is not blocked yet is added inside the jail by a child that joins the
//! jail's namespaces as the locker does (`join::spawn_follow`): the filter's
//! set first, then the routes, both read back (`lockdown::follow`). The
//! blocked set only grows during a session: a route that goes away stays
//! blocked until the session ends.
//!
//! What stays reachable meanwhile: between the kernel's notification and
//! the follower's transaction (milliseconds), a connection to the new
//! destination could be opened through pasta; once the filter holds it,
//! nothing more is sent there, an open connection included. If the jail
//! cannot follow, the launcher stops pasta: the session keeps running with
//! no network at all, never with the new destination open, and the
//! end-of-session report says so. Every destination that joined, and a
//! change of what the jail treats as the internet, is named there too.
//!
//! Not here: deciding (`plan/container.rs`), applying (`lockdown.rs`).

use super::rtnl::{self, Rtnl};
use crate::jail::error::JailError;
use crate::jail::plan::container::{destinations, internet, Destination, Internet};
use crate::jail::plan::launch::JailPlan;
use crate::jail::plan::routes::PlanInputs;
use std::collections::BTreeMap;
use std::os::fd::BorrowedFd;

pub(crate) struct Watch {
    sock: Rtnl,
    base: PlanInputs,
    uid: u32,
    /// Every container destination the jail blocks now, by prefix.
    in_force: BTreeMap<crate::jail::Ipv4Net, Destination>,
    /// Those that joined after the plan was decided, in order.
    joined: Vec<Destination>,
    internet_at_launch: Internet,
    internet_now: Internet,
    /// Why the jail could not follow (pasta was stopped).
    failed: Option<String>,
}

impl Watch {
    /// Subscribes to the container's changes; `reread` then catches up
    /// with what changed since the plan was decided. `None` when the plan
    /// does not follow (weakened-plan tests only).
    pub(crate) fn subscribe(plan: &JailPlan) -> Result<Option<Watch>, JailError> {
        if !plan.follow {
            return Ok(None);
        }
        let sock = Rtnl::subscribe(rtnl::IPV4_CHANGES).map_err(|e| JailError::ContainerNetwork { message: e.to_string() })?;
        Ok(Some(Watch {
            sock,
            base: plan.route_inputs(),
            uid: plan.uid,
            in_force: plan.container.iter().map(|d| (d.net, d.clone())).collect(),
            joined: Vec::new(),
            internet_at_launch: plan.internet.clone(),
            internet_now: plan.internet.clone(),
            failed: None,
        }))
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.sock.fd()
    }

    /// The route plan's inputs with everything in force.
    pub(crate) fn inputs(&self) -> PlanInputs {
        PlanInputs { container: self.in_force.keys().copied().collect(), ..self.base.clone() }
    }

    /// Reads the pending notifications; when there were any, reads the
    /// container again. True when destinations joined (the jail must
    /// follow to `inputs()`).
    pub(crate) fn changed(&mut self) -> Result<bool, JailError> {
        let any = self.sock.drain().map_err(|e| JailError::ContainerNetwork { message: e.to_string() })?;
        if !any {
            return Ok(false);
        }
        self.reread()
    }

    /// Reads the container again; true when destinations joined.
    pub(crate) fn reread(&mut self) -> Result<bool, JailError> {
        let net = crate::jail::host::container_net()?;
        let mut joined = false;
        for d in destinations(&net) {
            if let std::collections::btree_map::Entry::Vacant(slot) = self.in_force.entry(d.net) {
                tracing::info!("egress jail: the container now routes {} ({}): blocking it in the jail", d.net, d.why);
                slot.insert(d.clone());
                self.joined.push(d);
                joined = true;
            }
        }
        let now = internet(&net, self.uid);
        if now != self.internet_now {
            tracing::info!("egress jail: the container's internet is now {}", now.describe());
            self.internet_now = now;
        }
        Ok(joined)
    }

    pub(crate) fn failed(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    /// The end-of-session report's lines about the container's network
    /// (none when nothing changed).
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.joined.is_empty() {
            let list: Vec<String> = self.joined.iter().map(|d| format!("{} ({})", d.net, d.why)).collect();
            out.push(format!("egress jail: the container's network changed during the session; blocked as it appeared: {}", list.join("; ")));
        }
        if self.internet_now != self.internet_at_launch {
            out.push(format!(
                "egress jail: what the container treats as the internet changed during the session: from {} to {}",
                self.internet_at_launch.describe(),
                self.internet_now.describe()
            ));
        }
        if let Some(why) = &self.failed {
            out.push(format!("egress jail: the jail could not follow a change of the container's routes ({why}); pasta was stopped, so the session had no network from then on"));
        }
        out
    }
}
