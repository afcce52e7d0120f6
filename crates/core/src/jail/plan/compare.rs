//! The read-back check: compares what the locked namespace really holds
//! with the plan and lists every difference. Pure; the jail refuses to
//! launch when the list is not empty.

use super::routes::{IfAddr, NetPlan, Route, Rule, Snapshot};
use std::collections::BTreeSet;
use std::fmt;

/// One way the namespace differs from the plan.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Difference {
    MissingRoute(Route),
    UnexpectedRoute(Route),
    MissingRule(Rule),
    UnexpectedRule(Rule),
    MissingAddress(IfAddr),
    UnexpectedAddress(IfAddr),
    MissingLink(String),
    UnexpectedLink(String),
    Ipv6Address(String),
    Ipv6Route(String),
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::MissingRoute(r) => write!(f, "missing route: {r}"),
            Difference::UnexpectedRoute(r) => write!(f, "unexpected route: {r}"),
            Difference::MissingRule(r) => write!(f, "missing rule: {r}"),
            Difference::UnexpectedRule(r) => write!(f, "unexpected rule: {r}"),
            Difference::MissingAddress(a) => write!(f, "missing address: {a}"),
            Difference::UnexpectedAddress(a) => write!(f, "unexpected address: {a}"),
            Difference::MissingLink(l) => write!(f, "missing interface: {l}"),
            Difference::UnexpectedLink(l) => write!(f, "unexpected interface: {l}"),
            Difference::Ipv6Address(a) => write!(f, "IPv6 address present (IPv6 must be off): {a}"),
            Difference::Ipv6Route(r) => write!(f, "IPv6 route present (IPv6 must be off): {r}"),
        }
    }
}

/// Every difference between the plan and the read-back, sorted.
pub fn compare(plan: &NetPlan, actual: &Snapshot) -> Vec<Difference> {
    let mut diffs = Vec::new();
    diffs.extend(compare_routes(plan, &actual.routes));
    diffs.extend(set_diff(&plan.rules, &actual.rules, Difference::MissingRule, Difference::UnexpectedRule));
    diffs.extend(set_diff(&plan.addrs, &actual.addrs, Difference::MissingAddress, Difference::UnexpectedAddress));
    diffs.extend(set_diff(&plan.links, &actual.links, Difference::MissingLink, Difference::UnexpectedLink));
    diffs.extend(actual.addrs6.iter().cloned().map(Difference::Ipv6Address));
    diffs.extend(actual.routes6.iter().cloned().map(Difference::Ipv6Route));
    diffs.sort();
    diffs
}

/// Every table at once: the main and local tables must be exactly the
/// plan's (optional local entries allowed); any route in any other table
/// is unexpected.
fn compare_routes(plan: &NetPlan, actual: &[Route]) -> Vec<Difference> {
    let required: BTreeSet<&Route> = plan.main.iter().chain(&plan.local).collect();
    let optional: BTreeSet<&Route> = plan.local_optional.iter().collect();
    let actual: BTreeSet<&Route> = actual.iter().collect();
    let missing = required.difference(&actual).map(|r| Difference::MissingRoute((*r).clone()));
    let unexpected = actual.iter().filter(|r| !required.contains(*r) && !optional.contains(*r)).map(|r| Difference::UnexpectedRoute((*r).clone()));
    missing.chain(unexpected).collect()
}

fn set_diff<T: Ord + Clone>(want: &[T], have: &[T], missing: fn(T) -> Difference, unexpected: fn(T) -> Difference) -> Vec<Difference> {
    let want: BTreeSet<&T> = want.iter().collect();
    let have: BTreeSet<&T> = have.iter().collect();
    let m = want.difference(&have).map(|x| missing((*x).clone()));
    let u = have.difference(&want).map(|x| unexpected((*x).clone()));
    m.chain(u).collect()
}

#[cfg(test)]
mod tests;
