#!/bin/sh
# Times `/bin/true` in bwrap through the egress jail against a lean shell
# floor doing the same work (benches/jail_floor.sh), with hyperfine.
# Target: the jail's median at most 1.3 x the floor's. The jail also waits
# until pasta is gone (and reaped); "floor-reaped" is the floor doing that
# too. Root only; nothing leaves the machine (/bin/true sends no traffic).
# usage: benches/jail_bench.sh [RUNS]     (default 100)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-100}
export JAIL_BENCH_BWRAP_ARGS="--unshare-user --unshare-pid --unshare-ipc --unshare-uts --cap-drop ALL --die-with-parent --ro-bind / / --dev /dev --proc /proc -- /bin/true"

# The product: `agent-sandbox run -- /bin/true` with the jail on (the
# static release build), in a scratch workspace.
bin=$(pwd)/$(bash scripts/build-static.sh)/agent-sandbox
ws=$(mktemp -d /var/lib/agent-sandbox-bench.XXXXXX)
product="cd $ws && $bin run -- /bin/true"

# The jail library alone (the jail tests' bench helper in the integration
# test binary, release build): what the jail costs without the rest of the
# sandbox plan.
exe=$(cargo test --release --test all --no-run --message-format=json 2>/dev/null |
    grep '"kind":\["test"\]' | grep '"name":"all"' |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -x "$exe" ] || { echo "jail_bench: could not build the integration test binary" >&2; exit 1; }
jail="JAIL_TEST_HELPER=bench $exe suite::jail::helper_bench_true --exact -q --test-threads=1"

out=$(mktemp)
trap 'rm -rf "$out" "$ws"' EXIT
hyperfine --warmup 5 --runs "$runs" --export-json "$out" \
    -n floor "sh benches/jail_floor.sh" \
    -n floor-reaped "JAIL_FLOOR_REAP=1 sh benches/jail_floor.sh" \
    -n jail "$jail" \
    -n agent-sandbox "$product"

# Medians and their ratio, from hyperfine's JSON.
median() { tr -d ' \n' < "$out" | sed 's/"command"/\n&/g' | grep "\"command\":\"$1\"" |
    sed -n 's/.*"median":\([0-9.e-]*\).*/\1/p'; }
floor=$(median floor)
reaped=$(median floor-reaped)
jailed=$(median jail)
ours=$(median agent-sandbox)
awk -v f="$floor" -v w="$reaped" -v j="$jailed" -v a="$ours" 'BEGIN {
    r = a / f
    printf "median: floor %.1f ms, floor-reaped %.1f ms, jail library %.1f ms, agent-sandbox run %.1f ms\n", f * 1000, w * 1000, j * 1000, a * 1000
    printf "ratio agent-sandbox/floor %.2f (target <= 1.30), agent-sandbox/floor-reaped %.2f, jail library/floor %.2f\n", r, a / w, j / f
    exit (r <= 1.30 ? 0 : 1)
}'
