#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine as root: installs the
# prerequisites, builds (including the static release binaries), and runs
# every unit and integration test against real bwrap, pasta and namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
static_dir=$(cd "$(bash scripts/build-static.sh)" && pwd)
echo "static binaries: $static_dir"
export AGENT_SANDBOX_STATIC_DIR="$static_dir"
cargo test --locked --no-fail-fast --all-targets -- --test-threads="${TEST_THREADS:-4}"
