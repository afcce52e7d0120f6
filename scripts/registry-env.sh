#!/usr/bin/env bash
# Test environment for the publish path: a real OCI registry (Debian's
# `docker-registry`) on 127.0.0.1:PORT with its own storage directory and
# config file, and the real Dev Containers CLI (`@devcontainers/cli` from
# npm) in a cache directory. Idempotent: a registry already answering on the
# port is reused, an installed CLI is kept.
#
# Prints what to export (logs go to stderr), so use it as
#   eval "$(bash scripts/registry-env.sh)"
# Variables read:
#   AGENT_SANDBOX_REGISTRY_PORT  port to listen on (default 5050; Debian's own
#                                docker-registry service takes 5000)
#   AGENT_SANDBOX_TEST_CACHE     cache directory (default /var/cache/agent-sandbox-tests)
#   DEVCONTAINERS_CLI_VERSION    npm version to install (default 0.89.0)
# Variables printed:
#   AGENT_SANDBOX_REGISTRY       localhost:PORT of the registry
#   AGENT_SANDBOX_DEVCONTAINER   path of the `devcontainer` executable
set -euo pipefail

port=${AGENT_SANDBOX_REGISTRY_PORT:-5050}
cache=${AGENT_SANDBOX_TEST_CACHE:-/var/cache/agent-sandbox-tests}
cli_version=${DEVCONTAINERS_CLI_VERSION:-0.89.0}
state="$cache/registry-$port"
mkdir -p "$state"
log() { echo "registry-env: $*" >&2; }

need=()
command -v docker-registry >/dev/null || need+=(docker-registry)
command -v curl >/dev/null || need+=(curl)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then
  log "installing: ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The Debian package may also start its own service on :5000 (systemd
# machines); ours never uses that port by default, so both can coexist.

up() { curl -fsS -o /dev/null "http://127.0.0.1:$port/v2/" 2>/dev/null; }

if up; then
  log "registry already answering on 127.0.0.1:$port"
else
  storage=$(mktemp -d "$state/storage.XXXXXX")
  cat >"$state/config.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
EOF
  log "starting docker-registry on 127.0.0.1:$port (storage $storage)"
  # setsid: the registry outlives this script and the shell that evals it,
  # so it keeps none of their descriptors (a lock the caller holds, say).
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      ((fd > 2)) && eval "exec $fd>&-"
    done
    exec setsid docker-registry serve "$state/config.yml"
  ) >"$state/registry.log" 2>&1 </dev/null &
  echo $! >"$state/registry.pid"
  for _ in $(seq 1 100); do
    up && break
    sleep 0.1
  done
  up || { log "docker-registry did not come up; see $state/registry.log"; cat "$state/registry.log" >&2; exit 1; }
fi

cli_dir="$cache/devcontainers-cli"
cli="$cli_dir/node_modules/.bin/devcontainer"
installed=$(node -p "require('$cli_dir/node_modules/@devcontainers/cli/package.json').version" 2>/dev/null || true)
if [[ $installed != "$cli_version" ]]; then
  log "installing @devcontainers/cli@$cli_version into $cli_dir"
  mkdir -p "$cli_dir"
  npm install --silent --no-audit --no-fund --prefix "$cli_dir" "@devcontainers/cli@$cli_version" >&2
fi
"$cli" --version >/dev/null || { log "$cli does not run (node $(node --version); the CLI wants node >= 20)"; exit 1; }

# `localhost`, not 127.0.0.1: the Dev Containers CLI uses plain HTTP for `localhost` only.
echo "export AGENT_SANDBOX_REGISTRY=localhost:$port"
echo "export AGENT_SANDBOX_DEVCONTAINER=$cli"
