#!/usr/bin/env bash
# Makes (once, cached) the root file system tarball of a minimal Debian
# SUITE for ARCH (an OCI architecture: amd64, arm64) with mmdebstrap, and
# prints its path. The container test scripts import it as a base image
# (nothing can be pulled): scripts/podman-env.sh into podman,
# scripts/docker-env.sh into docker.
#   bash scripts/base-tarball.sh SUITE [ARCH]     (ARCH: this machine's by default)
# Another architecture's runs under qemu-user (scripts/binfmt.sh registers it).
# Cache: $AGENT_SANDBOX_TEST_CACHE (default /var/cache/agent-sandbox-tests).
set -euo pipefail

suite=${1:?usage: base-tarball.sh SUITE [ARCH]}
cache=${AGENT_SANDBOX_TEST_CACHE:-/var/cache/agent-sandbox-tests}
mkdir -p "$cache"
case "$(uname -m)" in
  x86_64) native_arch=amd64 ;;
  aarch64) native_arch=arm64 ;;
  *) native_arch=$(uname -m) ;;
esac
arch=${2:-$native_arch}

if [[ $arch == "$native_arch" ]]; then
  tarball="$cache/debian-$suite.tar"
else
  tarball="$cache/debian-$suite-$arch.tar"
fi
if [[ ! -s $tarball ]]; then
  need=()
  for p in mmdebstrap arch-test debian-archive-keyring; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  if ((${#need[@]})); then
    echo "installing: ${need[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  echo "making the Debian $suite ($arch) root file system with mmdebstrap (about a minute; several under emulation)" >&2
  # --format=tar: mmdebstrap picks the format from the file name, and a
  # ".tmp" name would otherwise give a directory.
  rm -rf "$tarball.tmp"
  mmdebstrap --quiet --arch="$arch" --format=tar --variant=minbase --include=ca-certificates "$suite" "$tarball.tmp" http://deb.debian.org/debian >&2
  mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
