#!/usr/bin/env bash
# Sets up rootful podman for the container tests on a fresh Debian machine
# and makes the base images the tests build from (nothing can be pulled:
# images are made with mmdebstrap and imported). Idempotent; images are
# cached under $AGENT_SANDBOX_TEST_CACHE (default /var/cache/agent-sandbox-tests).
# Source it to get CONTAINERS_CONF exported:  . scripts/podman-env.sh [SUITE...]
# Suites default to "trixie bookworm"; each becomes localhost/debian:SUITE-slim.
set -euo pipefail

cache=${AGENT_SANDBOX_TEST_CACHE:-/var/cache/agent-sandbox-tests}
mkdir -p "$cache"

need=()
for p in podman runc mmdebstrap skopeo uidmap debian-archive-keyring; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "installing: ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# This machine's podman needs cgroupfs, file events, runc and no default
# ulimits; keep that in a private file instead of editing /etc.
export CONTAINERS_CONF="$cache/containers.conf"
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
CONF

suites=("$@")
((${#suites[@]})) || suites=(trixie bookworm)
for suite in "${suites[@]}"; do
  image="localhost/debian:$suite-slim"
  podman image exists "$image" && continue
  tarball="$cache/debian-$suite.tar"
  if [[ ! -s $tarball ]]; then
    echo "making $image with mmdebstrap (about a minute)" >&2
    # --format=tar: mmdebstrap picks the format from the file name, and a
    # ".tmp" name would otherwise give a directory.
    rm -rf "$tarball.tmp"
    mmdebstrap --quiet --format=tar --variant=minbase --include=ca-certificates "$suite" "$tarball.tmp" http://deb.debian.org/debian
    mv "$tarball.tmp" "$tarball"
  fi
  podman import --quiet "$tarball" "$image" >/dev/null
  # Also answer to the name a Containerfile's FROM would use.
  podman tag "$image" "docker.io/library/debian:$suite-slim"
done
