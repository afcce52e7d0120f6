#!/usr/bin/env bash
# Launch overhead without the jail: `agent-sandbox run -- /bin/true`, as root
# and as a non-root user, against a minimal bwrap as that same user:
#   bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-pid
#         --unshare-ipc --unshare-uts --cap-drop ALL --clearenv /bin/true
# Target: each agent-sandbox median at most 1.5x its user's minimal bwrap.
# Also shown: the very bwrap call the product makes (from --print-plan
# --json, its data files fed from files on the same descriptors), for what
# the product's own defences cost inside bwrap; and the minimal bwrap run
# as root through the same setpriv and env as the non-root user's, so the
# two minimal rows differ by what bwrap's own user namespace costs, which
# every root launch pays too (its session is an unprivileged uid on the
# host, docs/defences.md).
# The commands run in interleaved rounds (BENCH_ROUNDS, default 5): a shared
# machine's drift falls on all of them alike; medians are over all rounds.
# Usage: benches/launch_bench.sh [BINARY]   (default: the static release build)
# Root only (it makes a bench user, `asbench`, and a workspace for each).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [[ -z $bin ]]; then
  bin=$PWD/$(bash scripts/build-static.sh)/agent-sandbox
fi
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "run it as root (it benches a root and a non-root launcher)" >&2; exit 1; }
id asbench >/dev/null 2>&1 || useradd -m -U -s /bin/sh asbench
ws=$(mktemp -d /var/tmp/agent-sandbox-bench.XXXXXX)
trap 'rm -rf "$ws"' EXIT
chmod 755 "$ws"
mkdir "$ws/root" "$ws/user"
chown asbench: "$ws/user"
# A copy every user can run (the build tree may not be reachable).
cp "$bin" "$ws/agent-sandbox" && chmod 755 "$ws/agent-sandbox"
bin=$ws/agent-sandbox
export AGENT_SANDBOX_EGRESS_JAIL=0
as_user="setpriv --reuid=asbench --regid=asbench --init-groups env HOME=$(getent passwd asbench | cut -d: -f6) USER=asbench LOGNAME=asbench"
as_root="setpriv --reuid=0 --regid=0 --init-groups env HOME=/root USER=root LOGNAME=root"
minimal="/usr/bin/bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-pid --unshare-ipc --unshare-uts --cap-drop ALL --clearenv /bin/true"

(cd "$ws/root" && "$bin" run --print-plan --json -- /bin/true) >"$ws/plan.json"
same_argv=$(python3 - "$ws/plan.json" "$ws" <<'PY'
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
names=(minimal-root agent-sandbox-root minimal-user agent-sandbox-user same-argv-bwrap-root minimal-root-wrapped)
cmds=(
  "cd $ws/root && $minimal"
  "cd $ws/root && $bin run -- /bin/true"
  "cd $ws/user && $as_user $minimal"
  "cd $ws/user && $as_user $bin run -- /bin/true"
  "cd $ws/root && $same_argv"
  "cd $ws/root && $as_root $minimal"
)
args=()
for i in "${!names[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
rounds=${BENCH_ROUNDS:-5}
runs=${RUNS:-300}
per=$(( (runs + rounds - 1) / rounds ))
hyperfine --shell bash --warmup 10 --runs 2 "${args[@]}" >/dev/null
for r in $(seq 1 "$rounds"); do
  hyperfine --shell bash --runs "$per" --export-json "$ws/round$r.json" "${args[@]}" >/dev/null
done
python3 - "$ws" <<'PY'
import glob, json, statistics, sys
times = {}
for f in sorted(glob.glob(sys.argv[1] + "/round*.json")):
    for res in json.load(open(f))["results"]:
        times.setdefault(res["command"], []).extend(res["times"])
m = {k: statistics.median(v) * 1e3 for k, v in times.items()}
n = len(times["minimal-root"])
print(f"medians of {n} runs each (ms):")
for k in ("minimal-root", "agent-sandbox-root", "same-argv-bwrap-root", "minimal-root-wrapped", "minimal-user", "agent-sandbox-user"):
    print(f"  {k:22} {m[k]:7.2f}")
ok = True
for who in ("root", "user"):
    r = m[f"agent-sandbox-{who}"] / m[f"minimal-{who}"]
    ok &= r <= 1.5
    print(f"ratio agent-sandbox/minimal bwrap, {who}: {r:.2f} (target <= 1.50)")
print(f"ratio agent-sandbox/same-argv bwrap, root: {m['agent-sandbox-root'] / m['same-argv-bwrap-root']:.2f}")
userns = m["minimal-user"] - m["minimal-root-wrapped"]
print(f"bwrap's own user namespace adds {userns:.2f} ms (minimal as the user vs as root, both through setpriv and env);")
print(f"  a root launch's floor with it: {m['minimal-root'] + userns:.2f} ms, {(m['minimal-root'] + userns) / m['minimal-root']:.2f}x the minimal root bwrap")
sys.exit(0 if ok else 1)
PY
