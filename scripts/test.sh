#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine as root: installs the
# prerequisites, builds (including the static release binaries for x86_64
# and aarch64) while the test machine is set up (scripts/test-env.sh), runs
# every unit and integration test against real bwrap, pasta and namespaces
# with clippy and the other architecture's build beside them, then the
# library's unit tests once more for that architecture under qemu-user
# (scripts/cross-env.sh names the runner). Each step says how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
# A clean clone builds each crate once: incremental caches are work and
# disk spent for a rebuild that never comes.
export CARGO_INCREMENTAL=0
took() { echo "$1 took $((SECONDS - $2)) s"; }
start=$SECONDS
bash scripts/deps.sh
. scripts/cross-env.sh
took "installing the build's prerequisites" "$start"
# The test machine's own set-up (packages, base images, the Dev Containers
# CLI) runs beside the builds; the tests wait for it below.
env_log=$(mktemp)
side_log=$(mktemp -d)
# Whatever still runs beside when this ends (a failed build) ends with it.
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$env_log" "$side_log"' EXIT
bash scripts/test-env.sh 2>"$env_log" &
env_pid=$!
# A failed static build stops here: every container test needs its binaries,
# and a command substitution's failure would otherwise leave an empty folder.
start=$SECONDS
built=$(bash scripts/build-static.sh) || {
  echo "scripts/build-static.sh failed: the static binaries the container tests install could not be built (its errors are above)" >&2
  exit 1
}
took "the static release build (both architectures)" "$start"
static_dir=$(cd "$built" && pwd)
echo "static binaries: $static_dir (and the other architecture's beside it)"
export AGENT_SANDBOX_STATIC_DIR="$static_dir"
status=0
case "$(uname -m)" in
  x86_64) other=aarch64 ;;
  *) other=x86_64 ;;
esac
start=$SECONDS
cargo fmt --check || { echo "cargo fmt --check: the code is not formatted (run cargo fmt)" >&2; status=1; }
cargo test --locked --workspace --all-targets --no-run -q || status=$?
# The suite runs the workspace's programs from target/debug: agent-sandbox
# hands the maintainer verbs to agent-sandbox-release beside it, which is
# another package's binary (crates/release), so cargo test builds it only
# when asked.
cargo build --locked --workspace --bins -q || status=$?
took "building the tests" "$start"
start=$SECONDS
wait "$env_pid" || {
  cat "$env_log" >&2
  echo "scripts/test-env.sh failed: the test machine could not be set up (its output is above)" >&2
  exit 1
}
grep '^test-env: ' "$env_log" || true
took "waiting for the test machine's set-up" "$start"

# Beside the integration tests, which spend much of their time waiting on
# containers and downloads, and below them in priority: clippy's lints
# (what the code holds to, Cargo.toml [lints]) and the build of the other
# architecture's unit tests, each in a target folder of its own so that no
# cargo waits on another's lock.
(
  start=$SECONDS
  rc=0
  CARGO_TARGET_DIR=target/lints nice -n 10 cargo clippy --locked --workspace --all-targets -q -- -D warnings || rc=$?
  took "clippy (beside the tests)" "$start"
  exit "$rc"
) >"$side_log/clippy" 2>&1 &
clippy_pid=$!
(
  start=$SECONDS
  rc=0
  CARGO_TARGET_DIR=target/cross-tests nice -n 10 cargo test --locked --workspace --exclude agent-sandbox-release --lib --target "$other-unknown-linux-musl" --no-run -q || rc=$?
  took "building the unit tests for $other (beside the tests)" "$start"
  exit "$rc"
) >"$side_log/cross" 2>&1 &
cross_pid=$!

# The unit tests, then the integration tests: one binary (tests/all.rs),
# in three processes side by side.
#  - The jail's tests (two threads): each forks the test process, so each
#    has its process to itself (tests/support/mod.rs, own_machine); in a
#    process with the container areas they would stop every other thread
#    for their whole run.
#  - The areas that build images or containers (arm64, docker, feature_e2e,
#    image, install, and host_view's test in a container), every test
#    started at once: they mostly wait on
#    downloads, builds and emulation, and the longest chains (an arm64
#    image built under emulation) must start first. libtest starts tests
#    in name order, so in one process with the others the image area
#    started only minutes in, and the Kubernetes tests' exclusive hold of
#    their process waited for its builds. The processes share one Docker
#    engine (scripts/docker-env.sh serve).
#  - The rest (four threads).
# The containers the other processes stop do not fail their launches: the
# product's executor, and the jail tests' own bwrap calls, set every
# mount's flags before bwrap binds / (tests/suite/host_view.rs,
# launches_start_while_host_mounts_come_and_go).
# The other processes' output follows the first's, each as it ends.
start=$SECONDS
cargo test --locked --no-fail-fast --workspace --lib --bins -- --test-threads="${TEST_THREADS:-4}" || status=$?
took "unit tests" "$start"
all=$(cargo test --locked --test all --no-run --message-format=json 2>/dev/null | grep '"kind":\["test"\]' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
if [[ ! -x $all ]]; then
  echo "the integration tests (tests/all.rs) did not build; cargo test --test all --no-run says why" >&2
  exit 1
fi
builds=(suite::arm64:: suite::docker:: suite::feature_e2e:: suite::image:: suite::install::
  suite::host_view::in_a_container_root_sessions_get_the_host_view_doctor_names)
start=$SECONDS
"$all" suite::jail:: --test-threads=2 >"$side_log/jail" 2>&1 &
jail_tests_pid=$!
"$all" "${builds[@]}" --test-threads=32 >"$side_log/builds" 2>&1 &
build_tests_pid=$!
skip=()
for area in suite::jail:: "${builds[@]}"; do skip+=(--skip "$area"); done
"$all" "${skip[@]}" --test-threads="${TEST_THREADS:-4}" || status=$?
took "the integration tests but the jail's and the building areas'" "$start"
for part in "builds $build_tests_pid" "jail $jail_tests_pid"; do
  read -r name pid <<<"$part"
  rc=0
  wait "$pid" || rc=$?
  echo "the integration tests of the $name process (beside the others):"
  cat "$side_log/$name"
  ((rc == 0)) || status=$rc
done
took "the integration tests" "$start"

start=$SECONDS
wait "$clippy_pid" || { status=1; echo "cargo clippy: the lints failed:" >&2; }
cat "$side_log/clippy"
cross_built=0
wait "$cross_pid" && cross_built=1 || { status=1; echo "the unit tests for $other did not build:" >&2; }
cat "$side_log/cross"
took "waiting for clippy and the $other build" "$start"

if ((cross_built)); then
  echo "unit tests for $other, under qemu-user:"
  start=$SECONDS
  # Five tests speak to the running kernel through interfaces qemu-user does
  # not translate: loading a seccomp filter and a Landlock ruleset, dumping
  # routing rules over rtnetlink (EOPNOTSUPP), idmapped mounts
  # (mount_setattr), and a user namespace of a child's own (qemu-user's
  # process has threads, and the kernel makes none for a threaded process:
  # EINVAL). They need a real kernel of that architecture and are
  # left out of this run only (docs/image.md); the x86_64 run above has them.
  # So are the release tools (OCI, publish, image: crates/release), which
  # are built for this machine's architecture only
  # (scripts/build-static.sh): what is shipped for the other is tested.
  CARGO_TARGET_DIR=target/cross-tests cargo test --locked --workspace --exclude agent-sandbox-release --lib --target "$other-unknown-linux-musl" -- --test-threads="${TEST_THREADS:-4}" \
    --skip sandbox::seccomp::tests::the_kernel_loads_it_and_enforces_it \
    --skip sandbox::landlock::tests::a_scoped_child_reaches_only_its_own_abstract_sockets \
    --skip jail::run::rtnl::tests::a_dump_of_this_namespace \
    --skip checks::sys::tests::a_route_goes_in_only_where_the_network_namespace_is_owned \
    --skip sandbox::mountfd::tests::an_idmapped_clone_shows_and_writes_the_swapped_owner || status=$?
  took "unit tests for $other (run)" "$start"
fi
exit "$status"
