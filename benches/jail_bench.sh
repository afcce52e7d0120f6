#!/bin/sh
# Times `/bin/true` in bwrap through the egress jail against a lean shell
# floor doing the same work (benches/jail_floor.sh), with hyperfine.
# Target: the jail's median at most the floor's (1.0 x), with and without
# allowDomains. The jail also waits
# until pasta is gone (and reaped); "floor-reaped" is the floor doing that
# too. "agent-sandbox-allowlist" is the product with allowDomains on (its
# DNS forwarder and dialer, the filter's allowed set): the same target.
# Root only; nothing leaves the machine (/bin/true sends no traffic).
# usage: benches/jail_bench.sh [RUNS]     (default 100; JAIL_BENCH_ROUNDS=5;
#        JAIL_BENCH_LIBRARY=0 leaves out the library, and its release build)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-100}
export JAIL_BENCH_BWRAP_ARGS="--unshare-user --unshare-pid --unshare-ipc --unshare-uts --cap-drop ALL --die-with-parent --ro-bind / / --dev /dev --proc /proc -- /bin/true"

# The product: `agent-sandbox run -- /bin/true` with the jail on (the
# static release build), in a scratch workspace.
bin=$(pwd)/$(bash scripts/build-static.sh "$(uname -m)")/agent-sandbox
ws=$(mktemp -d /var/lib/agent-sandbox-bench.XXXXXX)
product="cd $ws && $bin run -- /bin/true"
allowlist="cd $ws && AGENT_SANDBOX_ALLOW_DOMAINS=@agents,@registries $bin run -- /bin/true"

# The jail library alone (the jail tests' bench helper in the integration
# test binary, release build): what the jail costs without the rest of the
# sandbox plan.
if [ "${JAIL_BENCH_LIBRARY:-1}" = 1 ]; then
    exe=$(cargo test --release --test all --no-run --message-format=json 2>/dev/null |
        grep '"kind":\["test"\]' | grep '"name":"all"' |
        sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
    [ -x "$exe" ] || { echo "jail_bench: could not build the integration test binary" >&2; exit 1; }
    jail="JAIL_TEST_HELPER=bench $exe suite::jail::helper_bench_true --exact -q --test-threads=1"
else
    jail=true
fi

# In rounds: each round times every command a few times, so a shared
# machine's drift (a noisy neighbour for a minute) falls on all of them
# alike instead of on whichever ran then; the medians are over all rounds.
rounds=${JAIL_BENCH_ROUNDS:-5}
per=$(( (runs + rounds - 1) / rounds ))
out=$(mktemp -d)
trap 'rm -rf "$out" "$ws"' EXIT
hyperfine --warmup 5 --runs 2 \
    -n floor "sh benches/jail_floor.sh" -n jail "$jail" -n agent-sandbox "$product" -n agent-sandbox-allowlist "$allowlist" >/dev/null
r=1
while [ "$r" -le "$rounds" ]; do
    hyperfine --runs "$per" --export-json "$out/round$r.json" \
        -n floor "sh benches/jail_floor.sh" \
        -n floor-reaped "JAIL_FLOOR_REAP=1 sh benches/jail_floor.sh" \
        -n jail "$jail" \
        -n agent-sandbox "$product" \
        -n agent-sandbox-allowlist "$allowlist" >/dev/null
    r=$((r + 1))
done

# Medians over every round's times, and their ratio.
python3 - "$out" <<'PY'
import glob, json, statistics, sys
times = {}
for f in sorted(glob.glob(sys.argv[1] + "/round*.json")):
    for res in json.load(open(f))["results"]:
        times.setdefault(res["command"], []).extend(res["times"])
m = {k: statistics.median(v) * 1000 for k, v in times.items()}
n = len(times["floor"])
print(f"median of {n} runs each: floor {m['floor']:.1f} ms, floor-reaped {m['floor-reaped']:.1f} ms, "
      f"jail library {m['jail']:.1f} ms, agent-sandbox run {m['agent-sandbox']:.1f} ms, "
      f"with allowDomains {m['agent-sandbox-allowlist']:.1f} ms")
r = m["agent-sandbox"] / m["floor"]
a = m["agent-sandbox-allowlist"] / m["floor"]
print(f"ratio agent-sandbox/floor {r:.2f}, with allowDomains {a:.2f} (target <= 1.00), agent-sandbox/floor-reaped "
      f"{m['agent-sandbox'] / m['floor-reaped']:.2f}, jail library/floor {m['jail'] / m['floor']:.2f}")
sys.exit(0 if max(r, a) <= 1.00 else 1)
PY
