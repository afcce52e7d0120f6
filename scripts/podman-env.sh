#!/usr/bin/env bash
# Sets up rootful podman for the container tests on a fresh Debian machine
# and makes the base images the tests build from (nothing can be pulled:
# images are made with mmdebstrap and imported). Idempotent; images are
# cached under $AGENT_SANDBOX_TEST_CACHE (default /var/cache/agent-sandbox-tests).
# Source it to get CONTAINERS_CONF exported:  . scripts/podman-env.sh [SUITE...]
# Suites default to "trixie bookworm"; each becomes localhost/debian:SUITE-slim.
# SUITE:ARCH (an OCI architecture, e.g. trixie:arm64) makes that architecture's
# root file system (mmdebstrap --arch, run under qemu-user: scripts/binfmt.sh
# registers it) as localhost/debian:SUITE-slim-ARCH, and a local manifest
# list localhost/debian:SUITE-slim-multiarch holding it and this machine's
# SUITE-slim, which a multi-platform build's FROM resolves per platform.
set -euo pipefail

cache=${AGENT_SANDBOX_TEST_CACHE:-/var/cache/agent-sandbox-tests}
mkdir -p "$cache"

need=()
for p in podman runc mmdebstrap arch-test skopeo uidmap debian-archive-keyring; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "installing: ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# This machine's podman needs cgroupfs, file events, runc and no default
# ulimits; keep that in a private file instead of editing /etc. Written
# whole or not at all (a new file renamed over it, only when it differs):
# the podman commands of other test processes read it meanwhile, and a
# half-written one gives them podman's defaults (RLIMIT_NOFILE raised
# past what this machine lets runc set).
export CONTAINERS_CONF="$cache/containers.conf"
conf='[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"'
if [[ "$(cat "$CONTAINERS_CONF" 2>/dev/null)" != "$conf" ]]; then
  conf_tmp=$(mktemp "$CONTAINERS_CONF.XXXXXX")
  printf '%s\n' "$conf" >"$conf_tmp"
  mv -f "$conf_tmp" "$CONTAINERS_CONF"
fi

case "$(uname -m)" in
  x86_64) native_arch=amd64 ;;
  aarch64) native_arch=arm64 ;;
  *) native_arch=$(uname -m) ;;
esac

# Makes localhost/debian:SUITE-slim (this machine's architecture) or
# localhost/debian:SUITE-slim-ARCH (another one) from the cached tarball
# of scripts/base-tarball.sh.
make_base() {
  local suite=$1 arch=$2 image tarball
  if [[ $arch == "$native_arch" ]]; then
    image="localhost/debian:$suite-slim"
  else
    image="localhost/debian:$suite-slim-$arch"
  fi
  podman image exists "$image" && return 0
  tarball=$(bash "$(dirname "${BASH_SOURCE[0]}")/base-tarball.sh" "$suite" "$arch")
  podman import --quiet --arch "$arch" "$tarball" "$image" >/dev/null
  # Also answer to the name a Containerfile's FROM would use.
  [[ $arch == "$native_arch" ]] && podman tag "$image" "docker.io/library/debian:$suite-slim"
  return 0
}

suites=("$@")
((${#suites[@]})) || suites=(trixie bookworm)
for spec in "${suites[@]}"; do
  suite=${spec%%:*}
  arch=$native_arch
  [[ $spec == *:* ]] && arch=${spec#*:}
  case "$arch" in
    amd64) uname_arch=x86_64 ;;
    arm64) uname_arch=aarch64 ;;
    *)
      echo "podman-env.sh: unknown architecture '$arch' in '$spec' (amd64 or arm64)" >&2
      exit 2
      ;;
  esac
  if [[ $arch != "$native_arch" ]]; then
    bash "$(dirname "${BASH_SOURCE[0]}")/binfmt.sh" "$uname_arch"
  fi
  make_base "$suite" "$native_arch"
  [[ $arch == "$native_arch" ]] && continue
  make_base "$suite" "$arch"
  list="localhost/debian:$suite-slim-multiarch"
  podman manifest inspect "$list" >/dev/null 2>&1 && continue
  podman manifest create "$list" >/dev/null
  podman manifest add "$list" "containers-storage:localhost/debian:$suite-slim" >/dev/null
  podman manifest add "$list" "containers-storage:localhost/debian:$suite-slim-$arch" >/dev/null
done
