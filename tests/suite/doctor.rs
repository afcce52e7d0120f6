//! `agent-sandbox doctor`: golden tests of the devcontainer.json lint over
//! the fixtures in tests/fixtures/doctor (JSONC with comments and trailing
//! commas, missing tun, a venv first, ...), the CLI's JSON on this host,
//! and the whole report in a broken container (no bwrap, no pasta, no
//! /dev/net/tun, masked /proc, a vendor `claude` and a venv ahead on PATH).
//!
//! Golden files: `UPDATE_GOLDEN=1 cargo test --test all suite::doctor::` rewrites them;
//! review the diff.

use crate::support::podman;

use agent_sandbox::doctor::{devcontainer, Finding, Severity};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new("tests/fixtures/doctor").to_path_buf()
}

fn render(findings: &[Finding]) -> String {
    let mut s = String::new();
    for f in findings {
        s += &format!("{} {}\n  {}\n", f.severity.label(), f.id, f.message);
        if let Some(fix) = &f.fix {
            s += &format!("  fix: {fix}\n");
        }
    }
    s
}

fn check_golden(golden: &Path, got: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(golden, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(golden)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; create it with UPDATE_GOLDEN=1 cargo test --test all suite::doctor::", golden.display()));
    assert_eq!(got, want, "{} differs (UPDATE_GOLDEN=1 rewrites it)", golden.display());
}

#[test]
fn devcontainer_fixtures_match_golden() {
    let _machine = crate::support::share_machine();
    let mut seen = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(fixtures()).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext != "json" && ext != "jsonc" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let findings = devcontainer::lint(&path, &text, &|p| std::fs::read_to_string(p).ok());
        check_golden(&path.with_extension("golden"), &render(&findings));
        seen += 1;
    }
    assert!(seen >= 9, "fixtures found: {seen}");
}

#[test]
fn lint_verdicts() {
    let _machine = crate::support::share_machine();
    let lint = |name: &str| {
        let p = fixtures().join(name);
        let findings = devcontainer::lint(&p, &std::fs::read_to_string(&p).unwrap(), &|p| std::fs::read_to_string(p).ok());
        findings.into_iter().map(|f| (f.id, f.severity)).collect::<Vec<_>>()
    };
    assert_eq!(lint("ok.jsonc"), vec![("devcontainer-ok", Severity::Ok)]);
    assert_eq!(lint("missing-tun.jsonc"), vec![("devcontainer-no-tun", Severity::Error)]);
    assert_eq!(lint("venv-first.jsonc"), vec![("devcontainer-path-prepend", Severity::Warning), ("devcontainer-path-prepend", Severity::Warning)]);
    assert_eq!(lint("dockerfile.jsonc"), vec![("devcontainer-ok", Severity::Ok)]);
    assert_eq!(lint("feature-tun-only.jsonc"), vec![("devcontainer-ok", Severity::Ok)], "the feature asks for its security options itself");
    assert_eq!(lint("dockerfile-engine-defaults.jsonc"), vec![("devcontainer-docker-confined", Severity::Warning)]);
    assert_eq!(lint("no-sandbox.json"), vec![("devcontainer-no-sandbox", Severity::Warning), ("devcontainer-path-replaced", Severity::Warning)]);
    assert_eq!(lint("broken-syntax.jsonc"), vec![("devcontainer-invalid", Severity::Error)]);
    assert_eq!(lint("dockerfile-masked.jsonc"), vec![("devcontainer-proc-masked", Severity::Warning), ("devcontainer-docker-confined", Severity::Warning)]);
}

/// The devcontainer.json docs/feature.md tells users to write gets no
/// false alarm: the feature asks for the unmasked /proc itself.
#[test]
fn the_docs_own_example_is_clean() {
    let _machine = crate::support::share_machine();
    let docs = std::fs::read_to_string("docs/feature.md").unwrap();
    let example = docs.split("```jsonc\n").nth(1).and_then(|b| b.split("```").next()).expect("docs/feature.md has a jsonc example");
    assert!(example.contains("\"features\"") && example.contains("\"runArgs\""), "the first example is the devcontainer.json:\n{example}");
    let findings = devcontainer::lint(Path::new("docs/feature.md"), example, &|_| None);
    let ids: Vec<_> = findings.iter().map(|f| (f.id, f.severity)).collect();
    assert_eq!(ids, vec![("devcontainer-ok", Severity::Ok)], "{findings:#?}");
}

fn doctor(args: &[&str], cwd: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agent-sandbox")).arg("doctor").args(args).current_dir(cwd).output().expect("run agent-sandbox doctor");
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap())
}

/// On this host: well-formed JSON, every problem has a fix, and the exit
/// status says whether something blocks sessions.
#[test]
fn cli_json_on_this_host() {
    let _machine = crate::support::share_machine();
    let dc = std::fs::canonicalize(fixtures().join("missing-tun.jsonc")).unwrap();
    let (code, out) = doctor(&["--json", "--devcontainer", dc.to_str().unwrap()], Path::new("/"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    let findings = v["findings"].as_array().unwrap();
    for check in ["bwrap", "userns", "tun", "pasta", "mounts", "proc", "install", "path", "config", "devcontainer"] {
        assert!(findings.iter().any(|f| f["check"] == check), "no {check} finding:\n{out}");
    }
    for f in findings {
        assert!(f["id"].is_string() && f["message"].is_string(), "{f}");
        if f["severity"] != "ok" && f["severity"] != "info" {
            assert!(f["fix"].is_string(), "a problem without a fix: {f}");
        }
    }
    assert!(findings.iter().any(|f| f["id"] == "devcontainer-no-tun" && f["severity"] == "error"));
    assert_eq!(v["blocking"], true, "the fixture's missing tun blocks sessions");
    assert_eq!(code, 1);
    let ok = std::fs::canonicalize(fixtures().join("ok.jsonc")).unwrap();
    let (code, out) = doctor(&["--json", "--devcontainer", ok.to_str().unwrap()], Path::new("/"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, i32::from(v["blocking"] == true), "exit status follows `blocking`:\n{out}");
    // The text form names each fix.
    let (_, text) = doctor(&["--devcontainer", dc.to_str().unwrap()], Path::new("/"));
    assert!(text.contains("fix: add \"--device=/dev/net/tun\" to \"runArgs\""), "{text}");
}

/// The report with the kernel's Landlock ABI version (which the message
/// names, and which only depends on the host's kernel) as `N`.
fn without_landlock_abi(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| match l.split_once("Landlock ABI ") {
            Some((head, tail)) => format!("{head}Landlock ABI N{}", tail.trim_start_matches(|c: char| c.is_ascii_digit())),
            None => l.to_string(),
        })
        .collect();
    lines.join("\n") + if text.ends_with('\n') { "\n" } else { "" }
}

/// The jail's findings about the container's network name the host's
/// routes (the container shares its network): only their ids are kept.
fn without_host_routes(text: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for l in text.lines() {
        let id = l.split_whitespace().nth(1).unwrap_or("");
        if l.starts_with("  ") && !l.starts_with("   ") {
            skipping = id.starts_with("jail-internet") || id.starts_with("jail-routes");
            out.push(if skipping { format!("  {id} (the host's routes)") } else { l.to_string() });
        } else if !skipping {
            out.push(l.to_string());
        }
    }
    out.join("\n") + if text.ends_with('\n') { "\n" } else { "" }
}

/// The whole report in a container that has none of what sessions need.
#[test]
fn broken_container_golden() {
    let _machine = crate::support::share_machine();
    let c = podman::Container::start(podman::TRIXIE, &[]);
    c.sh("install -m 0755 /opt/ast/agent-sandbox /usr/local/bin/agent-sandbox && \
         printf '#!/bin/sh\\necho vendor\\n' > /usr/local/bin/claude && chmod 755 /usr/local/bin/claude && \
         mkdir -p /opt/venv/bin /work/.devcontainer && touch /opt/venv/pyvenv.cfg");
    c.copy_in(&fixtures().join("venv-first.jsonc"), "/work/.devcontainer/devcontainer.json");
    let out = podman::podman(&[
        "exec",
        "-w",
        "/work",
        "-e",
        "PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        &c.name,
        "agent-sandbox",
        "doctor",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "a broken container blocks sessions:\n{text}");
    check_golden(&fixtures().join("broken-container.golden"), &without_host_routes(&without_landlock_abi(&text)));
}

/// The container boundary, for real: with /proc unmasked (what sessions
/// need), a container whose root is the host's root can write host kernel
/// settings, and doctor says so; in a user-namespaced container it cannot,
/// and doctor says that.
#[test]
fn doctor_says_whether_the_containers_root_can_write_host_kernel_settings() {
    let _machine = crate::support::share_machine();
    let cases: [(&[&str], &str, &str); 2] = [
        (&["--security-opt", "unmask=/proc/*"], "container-host-root", "WRITABLE"),
        (&["--security-opt", "unmask=/proc/*", "--uidmap", "0:300000:65536", "--gidmap", "0:300000:65536"], "container-userns-ok", "READ-ONLY"),
    ];
    for (opts, id, sysctl) in cases {
        let c = podman::Container::start(podman::TRIXIE, opts);
        // Only a permission check: nothing is written.
        let probe = c.sh("test -w /proc/sys/kernel/core_pattern && echo WRITABLE || echo READ-ONLY");
        assert_eq!(probe.trim(), sysctl, "{opts:?}");
        let out = c.exec(&["/opt/ast/agent-sandbox", "doctor", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        let found: Vec<&str> = v["findings"].as_array().unwrap().iter().filter(|f| f["check"] == "container").map(|f| f["id"].as_str().unwrap()).collect();
        assert_eq!(found, vec![id], "{opts:?}: {v:#}");
    }
}
