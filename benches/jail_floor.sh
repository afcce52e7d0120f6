#!/bin/sh
# The floor for benches/jail_bench.sh: the same work as the egress jail,
# done by hand with the least machinery: a holder made by `unshare -rn`,
# pasta attached (daemon mode: it returns once configured), bwrap run
# inside through nsenter, everything stopped. Root only.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/ready"
unshare -rn sh -c 'echo > "$0"; exec sleep 60' "$tmp/ready" &
holder=$!
read -r _ < "$tmp/ready"
pasta --runas 0 --config-net --ipv4-only --no-map-gw -t none -u none -T none -U none \
    --dns-forward 198.51.100.53 --quiet --pid "$tmp/pasta.pid" "$holder"
# shellcheck disable=SC2086 # the argument list is split on purpose
nsenter -t "$holder" -U -n --preserve-credentials /usr/bin/bwrap $JAIL_BENCH_BWRAP_ARGS
pasta=$(cat "$tmp/pasta.pid")
kill "$pasta" "$holder"
# JAIL_FLOOR_REAP=1: also wait until pasta is gone, as the jail does (the
# kernel removing pasta's tap device takes most of that time).
# pasta is not the script's child: "gone" is exited (a zombie of pid 1).
if [ "${JAIL_FLOOR_REAP:-0}" = 1 ]; then
    while [ -e "/proc/$pasta" ] && [ "$(cut -d' ' -f3 "/proc/$pasta/stat" 2>/dev/null)" != Z ]; do
        sleep 0.001
    done
fi
