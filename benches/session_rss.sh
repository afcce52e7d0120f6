#!/usr/bin/env bash
# Resident memory of a jailed session's own processes (the launcher, the
# holder/bwrap processes, relays) while an agent runs, excluding pasta and
# the agent itself. Target: <= 8 MB.
# Usage: benches/session_rss.sh [BINARY]   (default: the static release build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-$PWD/$(bash scripts/build-static.sh)/agent-sandbox}
ws=$(mktemp -d /var/tmp/agent-sandbox-rss.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cd "$ws"
# The "agent": a sleep with a recognisable argument.
"$bin" run -- /bin/sleep 3.1416 &
launcher=$!
sleep 1.5
total=0
echo "pid      rss_kB  command"
# Every descendant of the launcher, and the launcher itself.
pids=$(ps -eo pid=,ppid= | awk -v root="$launcher" '
  { parent[$1] = $2 }
  END { for (p in parent) { q = p; while (q in parent && q != root && q != 1) q = parent[q]; if (q == root) print p } }')
for pid in $pids; do
  read -r rss comm < <(ps -o rss=,comm= -p "$pid" 2>/dev/null || true)
  [[ -z ${rss:-} ]] && continue
  case "$comm" in
    passt*|pasta*) what="(pasta, excluded)";;
    sleep) what="(the agent, excluded)";;
    *) what=""; total=$((total + rss));;
  esac
  printf '%-8s %-7s %s %s\n' "$pid" "$rss" "$comm" "$what"
done
wait "$launcher"
echo "session processes excluding pasta and the agent: $((total / 1024)).$(( (total % 1024) * 10 / 1024 )) MB ($total kB; target <= 8 MB)"
