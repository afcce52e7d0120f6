//! Docker end to end, on a real Docker engine: Debian's docker.io (20.10,
//! its default seccomp profile), started by the first Docker test with
//! `scripts/docker-env.sh` (a private data root, socket and containerd
//! namespace) and stopped when the test process ends — also when a test
//! fails or the process is killed (tests/support/docker.rs). A dockerd
//! left by an earlier run is stopped before the new one starts.
//!
//! - `feature::*` (docker/feature.rs): the feature from a real registry,
//!   brought up by the real Dev Containers CLI on Docker for root and a
//!   `vscode` remoteUser with nothing but the tun device in runArgs: the
//!   feature's securityOpt reaches `docker run`, sessions are sandboxed and
//!   jailed, verify has no failure, its syscall checks hold because of the
//!   sessions' own filter (the container has none: `--weaken seccomp`
//!   makes them escape), and without the feature's options the jail and
//!   doctor name the runArgs line.
//! - `image::*` (docker/image.rs): `image build --engine docker` (verify
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
//! Needs root. `cargo test --test all suite::docker::`; the two groups run in
//! parallel. Each test removes its containers and the CLI's images; the
//! base and built images stay in the engine's data root as a cache.

mod feature;
mod image;
