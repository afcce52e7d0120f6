#!/usr/bin/env bash
# Installs what building, running and testing agent-sandbox needs on a fresh
# Debian/Ubuntu machine (as root). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  bubblewrap   # the sandbox
  passt        # pasta: the egress jail's network
  iproute2     # ip: the jail's test lab (netns, veth)
  util-linux   # unshare, script, setpriv
  socat        # tests: unix/tcp listeners and clients
  procps       # tests: ps/pgrep for leftover checks
  passwd       # tests: useradd for the non-root user case
  python3      # tests: ioctl probes (TIOCSTI)
  tmux         # tests: a real terminal that answers queries (the terminal restore)
  nftables     # tests: plant nf_tables objects in a jail's namespace
  git          # the curated git config is checked with real git
  ca-certificates
  curl         # rustup, when no Rust toolchain is installed
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

# Rust: the version Cargo.toml's rust-version names, or newer, with rustfmt
# and clippy (scripts/test.sh checks both). Without any toolchain, rustup's
# stable one is installed for root (~/.cargo; scripts/cross-env.sh puts it
# on PATH for the other scripts).
[[ -f $HOME/.cargo/env ]] && . "$HOME/.cargo/env"
need=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
have=$( (rustc --version 2>/dev/null || true) | awk '{print $2}')
if [[ -z $have ]]; then
  echo "installing Rust (rustup, stable) into $HOME/.cargo"
  # rustup-init straight from the Rust project's distribution server,
  # checked against its published digest.
  init_url="https://static.rust-lang.org/rustup/dist/$(uname -m)-unknown-linux-gnu/rustup-init"
  init=$(mktemp -d)
  curl --proto '=https' --tlsv1.2 -sSf -o "$init/rustup-init" "$init_url"
  want=$(curl --proto '=https' --tlsv1.2 -sSf "$init_url.sha256" | awk '{print $1}')
  echo "$want  $init/rustup-init" | sha256sum -c --quiet
  chmod +x "$init/rustup-init"
  "$init/rustup-init" -y -q --profile minimal --component rustfmt,clippy >/dev/null
  rm -rf "$init"
  . "$HOME/.cargo/env"
elif [[ $(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1) != "$need" ]]; then
  if command -v rustup >/dev/null; then
    rustup update stable >/dev/null
  else
    echo "Rust $have is older than $need (Cargo.toml's rust-version) and rustup is not installed: install a newer Rust (https://rustup.rs)" >&2
    exit 1
  fi
fi
if command -v rustup >/dev/null; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || echo "note: rustfmt or clippy could not be added; scripts/test.sh's format and lint checks need them" >&2
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
