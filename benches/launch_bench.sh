#!/usr/bin/env bash
# Launch overhead without the jail: `agent-sandbox run -- /bin/true` against
# two floors:
#  - same-argv: the very bwrap call the product makes (from --print-plan
#    --json, data files fed from files on the same descriptors): what the
#    wrapper itself costs. Target: product median <= 1.5x this floor.
#  - minimal: a lean bwrap with the same namespaces and a basic view, for
#    scale (what the product's extra defences cost inside bwrap).
# Usage: benches/launch_bench.sh [BINARY]   (default: the static release build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [[ -z $bin ]]; then
  bin=$PWD/$(bash scripts/build-static.sh)/agent-sandbox
fi
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
ws=$(mktemp -d /var/tmp/agent-sandbox-bench.XXXXXX)
trap 'rm -rf "$ws"' EXIT
mkdir "$ws/w" && cd "$ws/w"
export AGENT_SANDBOX_EGRESS_JAIL=0
"$bin" run --print-plan --json -- /bin/true >"$ws/plan.json"
same_argv=$(python3 - "$ws/plan.json" "$ws" <<'PY'
import json, shlex, sys
plan, d = json.load(open(sys.argv[1])), sys.argv[2]
redirs = []
for f in plan["data"]:
    path = f"{d}/data{f['fd']}"
    open(path, "wb").write(bytes.fromhex(f["hex"]))
    redirs.append(f"{f['fd']}<{shlex.quote(path)}")
# The environment does not change bwrap's work; it is left as it is.
print(f"{' '.join(redirs)} {shlex.quote(plan['bwrap'])} " + " ".join(shlex.quote(a) for a in plan["args"]))
PY
)
minimal="/usr/bin/bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --die-with-parent --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs $HOME --bind $ws/w $ws/w --chdir $ws/w -- /bin/true"
hyperfine --shell bash --warmup 20 --runs "${RUNS:-300}" --export-json "$ws/result.json" \
  -n same-argv-bwrap "$same_argv" \
  -n minimal-bwrap "$minimal" \
  -n agent-sandbox "$bin run -- /bin/true"
python3 - "$ws/result.json" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
ours = r["agent-sandbox"]
for floor in ("same-argv-bwrap", "minimal-bwrap"):
    print(f"{floor:16} median {r[floor]*1e3:6.2f} ms   agent-sandbox {ours*1e3:6.2f} ms   ratio {ours/r[floor]:.2f}")
print("target: ratio to same-argv-bwrap <= 1.5")
PY
