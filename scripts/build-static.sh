#!/usr/bin/env bash
# Builds the static release binaries (agent-sandbox, sandbox-install) and
# prints their directory. One file runs in any base image.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$(uname -m)
target="$arch-unknown-linux-musl"
if rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  cargo build --release --locked --target "$target" --bins -q
  dir="${CARGO_TARGET_DIR:-target}/$target/release"
else
  gnu="$arch-unknown-linux-gnu"
  RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --locked --target "$gnu" --bins -q
  dir="${CARGO_TARGET_DIR:-target}/$gnu/release"
fi
for b in agent-sandbox sandbox-install; do
  # A static binary has no shared-library dependencies to list.
  if ldd "$dir/$b" 2>&1 | grep -q "=>"; then
    echo "$dir/$b is dynamically linked" >&2
    exit 1
  fi
done
echo "$dir"
