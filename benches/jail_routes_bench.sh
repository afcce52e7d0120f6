#!/bin/sh
# What a container that routes many prefixes costs the jail's launch: times
# `/bin/true` through the jail library (the jail tests' bench helper, as in
# benches/jail_bench.sh) in two "container" network namespaces, one with
# only a default route and its subnet, one with N more routes through its
# gateway (non-adjacent /24s, so the jail cannot aggregate them: N
# blackholes and 2N set elements), and the floor (benches/jail_floor.sh)
# in each (pasta copies the container's routes into the namespace, so the
# floor pays for them too), with hyperfine. Root only; nothing leaves the
# machine.
# usage: benches/jail_routes_bench.sh [N] [RUNS]     (default 1000, 60)
#        JAIL_BENCH_EXE=PATH: another build's integration test binary.
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000}
runs=${2:-60}
export JAIL_BENCH_BWRAP_ARGS="--unshare-user --unshare-pid --unshare-ipc --unshare-uts --cap-drop ALL --die-with-parent --ro-bind / / --dev /dev --proc /proc -- /bin/true"
exe=${JAIL_BENCH_EXE:-$(cargo test --release --test all --no-run --message-format=json 2>/dev/null |
    grep '"kind":\["test"\]' | grep '"name":"all"' |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)}
[ -x "$exe" ] || { echo "jail_routes_bench: could not build the integration test binary" >&2; exit 1; }
jail="JAIL_TEST_HELPER=bench $exe suite::jail::helper_bench_true --exact -q --test-threads=1"

tag=$$
gw=jbg$tag
out=$(mktemp -d)
cleanup() {
    for ns in "$gw" jbp$tag jbm$tag; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$out"
}
trap cleanup EXIT
ip netns add "$gw"
ip -n "$gw" link set lo up
i=1
for ns in jbp$tag jbm$tag; do
    ip netns add "$ns"
    ip link add "jb${tag}c$i" type veth peer name "jb${tag}g$i"
    ip link set "jb${tag}c$i" netns "$ns"
    ip link set "jb${tag}g$i" netns "$gw"
    ip -n "$ns" link set "jb${tag}c$i" name eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip -n "$gw" link set "jb${tag}g$i" up
    ip -n "$ns" addr add "198.18.$i.2/24" dev eth0
    ip -n "$gw" addr add "198.18.$i.1/24" dev "jb${tag}g$i"
    ip -n "$ns" route add default via "198.18.$i.1"
    i=$((i + 1))
done
k=0
while [ "$k" -lt "$n" ]; do
    echo "route add 11.$((k / 128)).$(((k % 128) * 2)).0/24 via 198.18.2.1"
    k=$((k + 1))
done > "$out/routes"
ip -n jbm$tag -batch "$out/routes"
echo "the second namespace routes $(ip -n jbm$tag route show | grep -c ' via ') prefixes" >&2

hyperfine --warmup 5 --runs "$runs" --export-json "$out/times.json" \
    -n floor "ip netns exec jbp$tag sh benches/jail_floor.sh" \
    -n jail "ip netns exec jbp$tag sh -c '$jail'" \
    -n floor-routes "ip netns exec jbm$tag sh benches/jail_floor.sh" \
    -n jail-routes "ip netns exec jbm$tag sh -c '$jail'" >/dev/null
python3 - "$out/times.json" "$n" <<'PY'
import json, statistics, sys
m = {r["command"]: statistics.median(r["times"]) * 1000 for r in json.load(open(sys.argv[1]))["results"]}
n = sys.argv[2]
print(f"median: floor {m['floor']:.1f} ms, jail {m['jail']:.1f} ms (x{m['jail'] / m['floor']:.2f}); "
      f"with {n} routes: floor {m['floor-routes']:.1f} ms, jail {m['jail-routes']:.1f} ms (x{m['jail-routes'] / m['floor-routes']:.2f}, "
      f"+{m['jail-routes'] - m['jail']:.1f} ms over the jail without them)")
PY
