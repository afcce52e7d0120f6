#!/usr/bin/env bash
# Lets this machine run executables and containers of another architecture
# under emulation: installs Debian's qemu-user-static and registers its
# qemu-ARCH with the kernel's binfmt_misc (mounting binfmt_misc first when
# needed), for the architectures named (uname names; default: aarch64 on an
# x86_64 machine, x86_64 on an aarch64 one). Idempotent; as root.
#
# Debian's registration carries the F flag: the kernel opens the emulator
# once, so it also runs inside containers, which do not contain it.
# Nothing here survives a reboot: run it again.
set -euo pipefail

arches=("$@")
if ((${#arches[@]} == 0)); then
  case "$(uname -m)" in
    x86_64) arches=(aarch64) ;;
    *) arches=(x86_64) ;;
  esac
fi

if ! dpkg-query -W -f='${Status}' qemu-user-static 2>/dev/null | grep -q "install ok installed"; then
  echo "binfmt.sh: installing qemu-user-static" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null
fi

misc=/proc/sys/fs/binfmt_misc
if [[ ! -e $misc/register ]]; then
  mount -t binfmt_misc binfmt_misc "$misc"
fi

for arch in "${arches[@]}"; do
  [[ $arch == "$(uname -m)" ]] && continue
  conf="/usr/lib/binfmt.d/qemu-$arch.conf"
  entry="$misc/qemu-$arch"
  if [[ ! -f $conf ]]; then
    echo "binfmt.sh: $conf is missing: qemu-user-static has no emulator for '$arch'" >&2
    exit 1
  fi
  if [[ -e $entry ]]; then
    # An entry registered elsewhere without F cannot start executables
    # inside containers (the emulator's path does not exist there).
    if ! grep -q '^flags:.*F' "$entry"; then
      echo "binfmt.sh: $entry is registered without the F (fix binary) flag, so containers of $arch cannot start; remove it (echo -1 > $entry) and run this again" >&2
      exit 1
    fi
    grep -qx enabled "$entry" || echo 1 >"$entry"
    continue
  fi
  cat "$conf" >"$misc/register"
  echo "binfmt.sh: registered qemu-$arch ($(sed -n 's/^interpreter //p' "$entry"))" >&2
done
