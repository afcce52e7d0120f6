//! The seccomp profile the product ships for the container sessions run in
//! (`deploy/seccomp/agent-sandbox.json`): the engine's default profile plus
//! exactly what bubblewrap, the egress jail, pasta and the launcher need,
//! for engines that load a profile from a file — Docker and podman
//! (`--security-opt seccomp=FILE`) and Kubernetes (`seccompProfile: {type:
//! Localhost}`, a file on each node). It replaces `seccomp=unconfined`
//! wherever a file can be given; docs/kubernetes.md says where.
//!
//! - `table`: the groups of calls, each with its source and why.
//! - `profile`: the JSON, a pure function of the table.
//!
//! The format is the part Docker's, podman's (containers/common, which
//! CRI-O uses too) and the OCI runtime spec's seccomp documents share:
//! containerd reads a Kubernetes Localhost profile as the OCI
//! `LinuxSeccomp` value, which has no `archMap` and no capability
//! conditions, so the file lists its architectures flat and has no
//! conditions but argument values. A
//! `comment` per entry is Docker's and podman's field; the OCI decoders
//! ignore it.
//!
//! This is the container's filter, not a session's: every session still
//! loads its own, stricter one (`sandbox::seccomp`) under it.

mod table;

use serde_json::{json, Value};
use table::{Rule, Source, GROUPS};

/// Where the generated file is committed, relative to the repository.
pub const REPO_PATH: &str = "deploy/seccomp/agent-sandbox.json";

/// The name the Kubernetes manifests give it under the kubelet's seccomp
/// directory (`localhostProfile`).
pub const LOCALHOST_PROFILE: &str = "agent-sandbox.json";

/// The ABIs the profile covers: x86_64 with its i386 and x32 ABIs, and
/// arm64 with its 32-bit arm ABI (the architectures the product ships
/// for). A flat list, which every engine reads; each kernel meets only its
/// own ABIs' entries.
const ARCHITECTURES: &[&str] = &["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"];

/// What a call in no group gets: EPERM, as with the engines' defaults.
const DEFAULT_ERRNO: u32 = libc::EPERM as u32;

/// The profile as a JSON value, groups in table order.
pub fn profile() -> Value {
    let mut syscalls = Vec::new();
    for g in GROUPS {
        let comment = match g.source {
            Source::EngineDefault => g.why.to_owned(),
            Source::Added(who) => format!("added for {who}: {}", g.why),
        };
        let entry = |args: Option<Value>| {
            let mut e = json!({ "names": g.names, "action": "SCMP_ACT_ALLOW" });
            if let (Some(args), Some(map)) = (args, e.as_object_mut()) {
                map.insert("args".into(), args);
            }
            if let Some(map) = e.as_object_mut() {
                map.insert("comment".into(), Value::String(comment.clone()));
            }
            e
        };
        match g.rule {
            Rule::Allow => syscalls.push(entry(None)),
            // One entry per value: the conditions of one entry must all
            // hold, the entries are alternatives.
            Rule::AllowArg0In(values) => {
                for v in values {
                    syscalls.push(entry(Some(json!([{ "index": 0, "value": v, "op": "SCMP_CMP_EQ" }]))));
                }
            }
            Rule::AllowArg0Not(v) => syscalls.push(entry(Some(json!([{ "index": 0, "value": v, "op": "SCMP_CMP_NE" }])))),
        }
    }
    json!({
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": DEFAULT_ERRNO,
        "architectures": ARCHITECTURES,
        "syscalls": syscalls,
    })
}

/// The file's text: pretty JSON and a final newline.
pub fn render() -> String {
    let mut text = serde_json::to_string_pretty(&profile()).unwrap_or_default();
    text.push('\n');
    text
}

/// Every call the profile allows in some form (with or without argument
/// conditions).
pub fn allowed_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = GROUPS.iter().flat_map(|g| g.names.iter().copied()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
/// The calls added beyond the engine's default.
pub(crate) fn added_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = GROUPS.iter().filter(|g| matches!(g.source, Source::Added(_))).flat_map(|g| g.names.iter().copied()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests;
