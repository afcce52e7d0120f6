#!/usr/bin/env bash
# The main job on a fresh Debian machine, as root: install the
# prerequisites, build the static binary, install it, and run a sandboxed
# session that shows what it can and cannot see.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
dir=$(bash scripts/build-static.sh "$(uname -m)")
install -o root -g root -m 0755 "$dir/agent-sandbox" /usr/local/bin/agent-sandbox
echo "installed /usr/local/bin/agent-sandbox"

demo=/var/tmp/agent-sandbox-demo
mkdir -p "$demo/project"
touch /tmp/agent-sandbox-demo-outer
cd "$demo/project"
echo
echo "A session in $demo/project (DEMO_SECRET is set outside):"
DEMO_SECRET=hunter2 agent-sandbox run -- sh -c "$(cat "$OLDPWD/scripts/demo-probe.sh")"

echo
echo "The full check battery, run inside a real session (agent-sandbox verify):"
agent-sandbox verify
