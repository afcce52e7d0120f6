#!/usr/bin/env bash
# What review costs around a session, without the jail, in a workspace with
# a big dependency tree (FILES files under node_modules, default 100000):
#  - launch-empty:   `run -- /bin/true` in an empty workspace with a baseline
#                    (the common launch: review costs one stat before, one
#                    walk of nothing after)
#  - launch-big:     the same in the big workspace (the walk after the
#                    session is in this number)
#  - first-big:      the big workspace's first session (baseline removed
#                    before each run: one more walk, before the session)
#  - review-big:     `agent-sandbox review` there (one walk and a compare)
#  - bwrap-floor:    the very bwrap call the product makes (from
#                    --print-plan --json), for scale
# Usage: benches/review_bench.sh [BINARY [OLD_BINARY]]  (default: the static
# release build; OLD_BINARY adds its launch-big for comparison)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
old=${2:-}
if [[ -z $bin ]]; then
  bin=$PWD/$(bash scripts/build-static.sh)/agent-sandbox
fi
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
files=${FILES:-100000}
d=$(mktemp -d /var/tmp/agent-sandbox-review-bench.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/empty" "$d/big"
export AGENT_SANDBOX_EGRESS_JAIL=0 XDG_STATE_HOME=$d/state
python3 - "$d/big" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
per = 50
for i in range(n):
    pkg = f"{root}/node_modules/pkg{i // per:05d}"
    if i % per == 0:
        os.makedirs(f"{pkg}/lib", exist_ok=True)
        open(f"{pkg}/package.json", "w").write('{"name": "p", "scripts": {"test": "x"}}\n')
    else:
        open(f"{pkg}/lib/f{i}.js", "w").write("module.exports = 1;\n")
os.makedirs(f"{root}/node_modules/.bin", exist_ok=True)
open(f"{root}/Makefile", "w").write("all:\n\ttrue\n")
PY
(cd "$d/empty" && git init -q . && "$bin" run -- /bin/true)
(cd "$d/big" && git init -q . && "$bin" run -- /bin/true)
(cd "$d/empty" && "$bin" run --print-plan --json -- /bin/true) >"$d/plan.json"
floor=$(python3 - "$d/plan.json" "$d" <<'PY'
import json, shlex, sys
plan, d = json.load(open(sys.argv[1])), sys.argv[2]
redirs = []
for f in plan["data"]:
    path = f"{d}/data{f['fd']}"
    open(path, "wb").write(bytes.fromhex(f["hex"]))
    redirs.append(f"{f['fd']}<{shlex.quote(path)}")
print(f"{' '.join(redirs)} {shlex.quote(plan['bwrap'])} " + " ".join(shlex.quote(a) for a in plan["args"]))
PY
)
# The big workspace's baselines: named by the SHA-256 of its path.
ack=$d/state/agent-sandbox/baselines/$(printf %s "$(realpath "$d/big")" | sha256sum | cut -c1-32)/
cmds=(
  -n bwrap-floor "cd $d/empty && $floor"
  -n launch-empty "cd $d/empty && $bin run -- /bin/true"
  -n launch-big "cd $d/big && $bin run -- /bin/true"
  -n review-big "cd $d/big && $bin review >/dev/null; true"
)
if [[ -n $old ]]; then
  cmds+=(-n launch-big-old "cd $d/big && $old run -- /bin/true")
fi
hyperfine --shell bash --warmup 3 --runs "${RUNS:-20}" --export-json "$d/r1.json" "${cmds[@]}"
hyperfine --shell bash --warmup 1 --runs "${RUNS:-20}" --export-json "$d/r2.json" \
  --prepare "rm -f ${ack}acknowledged.json.gz" -n first-big "cd $d/big && $bin run -- /bin/true"
python3 - "$d/r1.json" "$d/r2.json" "$files" <<'PY'
import json, sys
r = {}
for f in sys.argv[1:3]:
    r.update({x["command"]: x["median"] for x in json.load(open(f))["results"]})
print(f"\nworkspace: {sys.argv[3]} files under node_modules")
for k, v in r.items():
    print(f"{k:16} median {v*1e3:8.1f} ms")
print(f"launch-empty over bwrap-floor: {r['launch-empty']/r['bwrap-floor']:.2f}x")
PY
du -sh "$ack" | sed 's/^/baselines of the big workspace: /'
