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
)

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
# The static release build; fall back to a static glibc build if the target
# cannot be downloaded (see scripts/build-static.sh).
rustup target list --installed 2>/dev/null | grep -q x86_64-unknown-linux-musl \
  || rustup target add x86_64-unknown-linux-musl >/dev/null 2>&1 \
  || echo "note: the musl target is unavailable; static builds will use glibc +crt-static"
