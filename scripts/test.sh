#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine as root: installs the
# prerequisites, builds (including the static release binaries for x86_64
# and aarch64), runs every unit and integration test against real bwrap,
# pasta and namespaces, then the library's unit tests once more for the
# other architecture under qemu-user (scripts/cross-env.sh names the runner).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
. scripts/cross-env.sh
# A failed static build stops here: every container test needs its binaries,
# and a command substitution's failure would otherwise leave an empty folder.
built=$(bash scripts/build-static.sh) || {
  echo "scripts/build-static.sh failed: the static binaries the container tests install could not be built (its errors are above)" >&2
  exit 1
}
static_dir=$(cd "$built" && pwd)
echo "static binaries: $static_dir (and the other architecture's beside it)"
export AGENT_SANDBOX_STATIC_DIR="$static_dir"
status=0
# What the code holds to: its format and clippy's lints (Cargo.toml [lints]).
cargo fmt --check || { echo "cargo fmt --check: the code is not formatted (run cargo fmt)" >&2; status=1; }
cargo clippy --locked --all-targets -- -D warnings || status=$?
# The unit tests, then the integration tests: one binary (tests/all.rs)
# whose areas run side by side on TEST_THREADS threads; the jail's tests
# take the machine alone when their turn comes (tests/support/mod.rs).
start=$SECONDS
cargo test --locked --no-fail-fast --all-targets -- --test-threads="${TEST_THREADS:-4}" || status=$?
echo "unit and integration tests took $((SECONDS - start)) s"

case "$(uname -m)" in
  x86_64) other=aarch64 ;;
  *) other=x86_64 ;;
esac
echo "unit tests for $other, under qemu-user:"
start=$SECONDS
# Four tests speak to the running kernel through interfaces qemu-user does
# not translate: loading a seccomp filter and a Landlock ruleset, dumping
# routing rules over rtnetlink (EOPNOTSUPP), and idmapped mounts
# (mount_setattr). They need a real kernel of that architecture and are
# left out of this run only (docs/image.md); the x86_64 run above has them.
cargo test --locked --lib --target "$other-unknown-linux-musl" -- --test-threads="${TEST_THREADS:-4}" \
  --skip sandbox::seccomp::tests::the_kernel_loads_it_and_enforces_it \
  --skip sandbox::landlock::tests::a_scoped_child_reaches_only_its_own_abstract_sockets \
  --skip jail::run::rtnl::tests::a_dump_of_this_namespace \
  --skip sandbox::mountfd::tests::an_idmapped_clone_shows_and_writes_the_swapped_owner || status=$?
echo "unit tests for $other took $((SECONDS - start)) s"
exit "$status"
