//! Docker end to end, on a real Docker engine: Debian's docker.io (20.10,
//! its default seccomp profile), started for this test binary by
//! `scripts/docker-env.sh` with a private data root, socket and
//! containerd namespace, and stopped when the binary ends — also when a
//! test fails (the tests run under this file's own `main`, which catches
//! their panics, and a guard stops the engine). A dockerd left by an
//! earlier run that was killed is stopped before the new one starts.
//!
//! - `feature_*` (docker/feature.rs): the feature from a real registry,
//!   brought up by the real Dev Containers CLI on Docker for root and a
//!   `vscode` remoteUser with nothing but the tun device in runArgs: the
//!   feature's securityOpt reaches `docker run`, sessions are sandboxed and
//!   jailed, verify has no failure, its syscall checks hold because of the
//!   sessions' own filter (the container has none: `--weaken seccomp`
//!   makes them escape), and without the feature's options the jail and
//!   doctor name the runArgs line.
//! - `image_*` (docker/image.rs): `image build --engine docker` (verify
//!   inside as root and vscode), the image run as docs/image.md says, its
//!   stop time, `image publish` from Docker's storage to the registry, the
//!   pushed layers checked against the image config, and the devcontainer
//!   route with the image's metadata.
//!
//! The engine leaves the machine's network as it is (no bridge, no
//! iptables rules), so containers and builds use the host's network:
//! `--network=host` in runArgs and build options. The security options
//! under test do not depend on it.
//!
//! Needs root. `cargo test --test docker [FILTER]`; the two groups run in
//! parallel. Each test removes its containers and the CLI's images; the
//! base and built images stay in the engine's data root as a cache.

#[path = "docker/engine.rs"]
mod engine;
#[path = "docker/feature.rs"]
mod feature;
#[path = "docker/image.rs"]
mod image;
mod publish_env;

use std::time::Instant;

type Test = (&'static str, fn());

const TESTS: &[Test] = &[
    ("feature_sessions_are_jailed_for_root_and_vscode_on_docker", feature::sessions_are_jailed_for_root_and_vscode),
    ("image_builds_runs_stops_and_publishes_with_docker", image::builds_runs_stops_and_publishes),
];

/// The libtest options this harness understands or ignores (the value of
/// those that take one is skipped).
const WITH_VALUE: &[&str] = &["--test-threads", "--skip", "--color", "--format", "--logfile", "-Z", "--shuffle-seed"];

struct Args {
    filters: Vec<String>,
    skip: Vec<String>,
    exact: bool,
    list: bool,
    ignored: bool,
}

fn parse_args() -> Args {
    let mut a = Args { filters: Vec::new(), skip: Vec::new(), exact: false, list: false, ignored: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--list" => a.list = true,
            "--exact" => a.exact = true,
            "--ignored" => a.ignored = true,
            "--skip" => a.skip.extend(it.next()),
            f if WITH_VALUE.contains(&f) => {
                it.next();
            }
            f if f.starts_with('-') => {}
            f => a.filters.push(f.to_owned()),
        }
    }
    a
}

fn selected(a: &Args, name: &str) -> bool {
    let hit = |f: &String| if a.exact { name == f } else { name.contains(f.as_str()) };
    !a.ignored && (a.filters.is_empty() || a.filters.iter().any(hit)) && !a.skip.iter().any(|s| name.contains(s.as_str()))
}

fn main() {
    let args = parse_args();
    if args.list {
        for (name, _) in TESTS {
            println!("{name}: test");
        }
        return;
    }
    let chosen: Vec<&Test> = TESTS.iter().filter(|(n, _)| selected(&args, n)).collect();
    println!("\nrunning {} tests", chosen.len());
    if chosen.is_empty() {
        println!("\ntest result: ok. 0 passed; 0 failed\n");
        return;
    }
    let start = Instant::now();
    let failed = {
        let _engine = engine::Engine::start();
        let handles: Vec<_> = chosen
            .iter()
            .map(|(name, f)| {
                let f = *f;
                let t = Instant::now();
                (*name, std::thread::Builder::new().name(name.to_string()).spawn(move || { f(); t.elapsed() }).expect("spawn a test thread"))
            })
            .collect();
        let mut failed = Vec::new();
        for (name, h) in handles {
            match h.join() {
                Ok(took) => println!("test {name} ... ok ({:.0} s)", took.as_secs_f64()),
                Err(_) => {
                    println!("test {name} ... FAILED");
                    failed.push(name);
                }
            }
        }
        failed
        // The engine stops here, after every test, passed or not.
    };
    let passed = chosen.len() - failed.len();
    if failed.is_empty() {
        println!("\ntest result: ok. {passed} passed; 0 failed; finished in {:.0} s\n", start.elapsed().as_secs_f64());
    } else {
        println!("\nfailures:\n    {}\n\ntest result: FAILED. {passed} passed; {} failed; finished in {:.0} s\n", failed.join("\n    "), failed.len(), start.elapsed().as_secs_f64());
        std::process::exit(101);
    }
}
