#!/usr/bin/env bash
# Builds the static release binaries (agent-sandbox and sandbox-install) for
# x86_64 and aarch64 (or only the architectures named as arguments) and puts
# each architecture's into
# ${CARGO_TARGET_DIR:-target}/static/ARCH/.
# Prints the folder of this machine's architecture (of the last one built
# when this machine's is not among them). One file runs in any base image.
# agent-sandbox-release is built for this machine's architecture only
# (maintainers run it here; the feature and the image ship the other two),
# so the other one's build leaves out its crate (crates/release), and the
# registry client and TLS that only it links.
#
#   bash scripts/build-static.sh            # x86_64 and aarch64
#   bash scripts/build-static.sh x86_64     # this machine's only (quicker)
#
# `agent-sandbox feature package|publish` and `image build|publish` find the
# folders there (docs/publish.md). The other architecture is cross-built
# with Debian's gcc for it (scripts/deps.sh installs it; scripts/cross-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/cross-env.sh

arches=("$@")
((${#arches[@]})) || arches=(x86_64 aarch64)
native=$(uname -m)
out_root="${CARGO_TARGET_DIR:-target}/static"
native_out=

for arch in "${arches[@]}"; do
  case "$arch" in
    x86_64 | aarch64) ;;
    *)
      echo "build-static.sh: unknown architecture '$arch'; the binaries are built for x86_64 and aarch64" >&2
      exit 2
      ;;
  esac
  target="$arch-unknown-linux-musl"
  if [[ $arch == "$native" ]]; then
    bins=(agent-sandbox sandbox-install agent-sandbox-release)
    select=(--workspace --bins)
  else
    bins=(agent-sandbox sandbox-install)
    select=(-p agent-sandbox --bin agent-sandbox --bin sandbox-install)
  fi
  if rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    cargo build --release --locked --target "$target" "${select[@]}" -q
    dir="${CARGO_TARGET_DIR:-target}/$target/release"
  elif [[ $arch == "$native" ]]; then
    # No musl target (it could not be downloaded): a static glibc build.
    gnu="$arch-unknown-linux-gnu"
    RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --locked --target "$gnu" "${select[@]}" -q
    dir="${CARGO_TARGET_DIR:-target}/$gnu/release"
  else
    echo "build-static.sh: the Rust target $target is not installed; run \`bash scripts/deps.sh\` (it adds it with rustup and installs the cross compiler)" >&2
    exit 1
  fi
  out="$out_root/$arch"
  mkdir -p "$out"
  # No maintainers' program from an earlier build lingers beside them.
  [[ $arch == "$native" ]] || rm -f "$out/agent-sandbox-release"
  for b in "${bins[@]}"; do
    # A static binary has no program interpreter (dynamic loader).
    if readelf -lW "$dir/$b" | grep -q 'Requesting program interpreter'; then
      echo "$dir/$b is dynamically linked" >&2
      exit 1
    fi
    # Replace atomically: a running test may be copying the old file.
    install -m 0755 "$dir/$b" "$out/.$b.new"
    mv -f "$out/.$b.new" "$out/$b"
  done
  last=$out
  [[ $arch == "$native" ]] && native_out=$out
done
echo "${native_out:-$last}"
