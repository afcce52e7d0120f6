# Cross-building and cross-testing for the architecture this machine is
# not (x86_64 <-> aarch64). Source it:  . scripts/cross-env.sh
#
# For the other architecture's musl target it sets, unless already set:
#   CC_<arch>_unknown_linux_musl                  ring's C compiler (Debian's
#                                                 gcc-<arch>-linux-gnu)
#   CARGO_TARGET_<ARCH>_UNKNOWN_LINUX_MUSL_LINKER the linker (the same gcc)
#   CARGO_TARGET_<ARCH>_UNKNOWN_LINUX_MUSL_RUNNER how `cargo test` runs that
#                                                 target's test binaries:
#                                                 qemu-user (qemu-user-static)
# scripts/deps.sh installs those tools. The runner is named by its absolute
# path, so it works without binfmt_misc.
# A toolchain scripts/deps.sh installed with rustup lives in ~/.cargo.
if ! command -v cargo >/dev/null && [[ -f $HOME/.cargo/env ]]; then
  . "$HOME/.cargo/env"
fi
native_arch=$(uname -m)
for cross_arch in x86_64 aarch64; do
  [[ $cross_arch == "$native_arch" ]] && continue
  cross_upper=$(printf '%s' "$cross_arch" | tr '[:lower:]' '[:upper:]')
  cross_gcc="${cross_arch}-linux-gnu-gcc"
  cc_var="CC_${cross_arch}_unknown_linux_musl"
  linker_var="CARGO_TARGET_${cross_upper}_UNKNOWN_LINUX_MUSL_LINKER"
  runner_var="CARGO_TARGET_${cross_upper}_UNKNOWN_LINUX_MUSL_RUNNER"
  export "$cc_var=${!cc_var:-$cross_gcc}"
  export "$linker_var=${!linker_var:-$cross_gcc}"
  export "$runner_var=${!runner_var:-/usr/bin/qemu-${cross_arch}-static}"
done
unset cross_arch cross_upper cross_gcc cc_var linker_var runner_var
