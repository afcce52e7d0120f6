#!/usr/bin/env bash
# Makes ready what the integration tests would otherwise set up on first
# use, with the very scripts they run (each idempotent and cached, so the
# tests then find it done): podman and the Debian base images (trixie,
# bookworm, and trixie for arm64, made under emulation), the registry's
# package and the Dev Containers CLI, Docker's packages, the Kubernetes
# validator. scripts/test.sh runs it beside the builds: on a fresh machine
# the downloads and the emulated base image then overlap with compiling
# instead of holding back the first container tests. As root.
set -euo pipefail
cd "$(dirname "$0")/.."
step() {
  local start=$SECONDS
  "$@" >/dev/null
  echo "test-env: $* took $((SECONDS - start)) s" >&2
}
step bash -c '. scripts/podman-env.sh trixie bookworm trixie:arm64'
step bash scripts/registry-env.sh
step bash scripts/docker-env.sh install
step bash scripts/k8s-env.sh
