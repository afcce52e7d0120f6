#!/usr/bin/env bash
# Installs what building, running and testing agent-sandbox needs on a fresh
# Debian/Ubuntu machine (as root). Safe to run again.
set -euo pipefail

APT_PACKAGES=(
  bubblewrap   # the sandbox
  passt        # pasta: the egress jail's network
  iproute2     # ip: the jail's test lab (netns, veth)
  util-linux   # unshare, script, setpriv
  socat        # tests: unix/tcp listeners and clients
  procps       # tests: ps/pgrep for leftover checks
  passwd       # tests: useradd for the non-root user case
  python3      # tests: ioctl probes (TIOCSTI)
  nftables     # tests: plant nf_tables objects in a jail's namespace
  git          # the curated git config is checked with real git
  ca-certificates
  gcc          # linking, and the musl build's C bits
  musl-tools   # static (musl) release build
  binutils     # readelf: scripts/build-static.sh checks the binaries are static
  qemu-user-static # runs the other architecture's binaries and containers (tests)
)
# The feature and the image ship for x86_64 and aarch64: the other
# architecture is cross-built with Debian's gcc for it (ring's C code and
# the linker; scripts/cross-env.sh).
case "$(uname -m)" in
  x86_64) APT_PACKAGES+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross) ;;
  aarch64) APT_PACKAGES+=(gcc-x86-64-linux-gnu libc6-dev-amd64-cross) ;;
esac

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "cargo is missing: install Rust (https://rustup.rs) first" >&2
  exit 1
fi
# The static release builds. This machine's architecture falls back to a
# static glibc build if its musl target cannot be downloaded (see
# scripts/build-static.sh); the other architecture has no fallback.
native=$(uname -m)
for arch in x86_64 aarch64; do
  target="$arch-unknown-linux-musl"
  rustup target list --installed 2>/dev/null | grep -qx "$target" && continue
  if rustup target add "$target" >/dev/null 2>&1; then
    continue
  elif [[ $arch == "$native" ]]; then
    echo "note: the $target target is unavailable; static builds will use glibc +crt-static"
  else
    echo "cannot add the Rust target $target (rustup target add $target failed); the aarch64 and x86_64 binaries are both built and tested" >&2
    exit 1
  fi
done
