#!/usr/bin/env bash
# A private Docker engine for the Docker tests (tests/suite/docker.rs), on a fresh
# Debian machine as root without systemd. As root:
#
#   bash scripts/docker-env.sh start    installs Debian's docker.io when
#       missing, stops a dockerd left by an earlier run, starts a new one,
#       imports the Debian 13 base image (scripts/base-tarball.sh) under the
#       names a Dockerfile's FROM uses, and prints what to export
#       (DOCKER_HOST, AGENT_SANDBOX_DOCKER: the client; logs go to stderr);
#   bash scripts/docker-env.sh stop     stops it (by the pid in its pidfile);
#   bash scripts/docker-env.sh serve    starts it like `start` (or joins
#       the one another `serve` keeps up), then waits until its stdin is
#       closed (the test process that asked has ended, however it ended)
#       and stops it when no other `serve` still uses it — unless a later
#       `start` has replaced it meanwhile (tests/support/docker.rs);
#   bash scripts/docker-env.sh status   exits 0 when it answers;
#   bash scripts/docker-env.sh install  installs the packages only
#       (scripts/test-env.sh, while the suite is being built).
#
# Everything it has is its own, so nothing clashes with another engine on
# the machine: data root $AGENT_SANDBOX_DOCKER_ROOT (default
# /var/lib/agent-sandbox-tests/docker: images and the build cache stay
# there between runs), socket, exec root and pidfile under
# /run/agent-sandbox-tests, containerd namespace agent-sandbox-tests, log
# in the data root's parent (docker.log).
#
# The machine's network stays as it was: no bridge, no iptables rules, no
# forwarding or NAT (--bridge=none --iptables=false ...). Containers and
# builds therefore use the host's network (`--network host`); a container
# started without it has only a loopback interface.
set -euo pipefail

root=${AGENT_SANDBOX_DOCKER_ROOT:-/var/lib/agent-sandbox-tests/docker}
run=/run/agent-sandbox-tests
sock="$run/docker.sock"
pidfile="$run/docker.pid"
# Each `serve` holds a shared lock on this file while its test process
# uses the engine; who can take it exclusively is the last user.
users_lock="$run/docker.users"
# Held while a `serve` decides to start, join or stop the engine.
turn_lock="$run/docker.turn"
exec_root="$run/docker"
log="$(dirname "$root")/docker.log"
docker=/usr/bin/docker
dockerd=/usr/sbin/dockerd
export DOCKER_HOST="unix://$sock"

say() { echo "docker-env: $*" >&2; }

install() {
  local need=()
  # skopeo: the tests read the registry independently of the code under test.
  for p in docker.io containerd runc skopeo; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  ((${#need[@]})) || return 0
  say "installing: ${need[*]}"
  # The package would start its own dockerd on the default socket (with the
  # default bridge and iptables rules) where an init system lets it; a
  # policy-rc.d that answers 101 stops that, and only this one is removed.
  local policy=/usr/sbin/policy-rc.d added=
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    added=1
  fi
  local status=0
  DEBIAN_FRONTEND=noninteractive apt-get update -qq || status=$?
  ((status)) || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || status=$?
  [[ -n $added ]] && rm -f "$policy"
  return "$status"
}

answers() { "$docker" version >/dev/null 2>&1; }

# The dockerd named by the pidfile, if it is alive and is ours.
ours() {
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--pidfile $pidfile" || return 1
  echo "$pid"
}

stop() {
  local pid
  if pid=$(ours); then
    say "stopping dockerd (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "dockerd (pid $pid) did not stop within 30 s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  # The containerd dockerd started for itself, if dockerd died without
  # stopping it (its own pidfile, checked to be that containerd).
  local cpid
  cpid=$(cat "$exec_root/containerd/containerd.pid" 2>/dev/null || true)
  if [[ $cpid =~ ^[0-9]+$ ]] && tr '\0' ' ' <"/proc/$cpid/cmdline" 2>/dev/null | grep -q -- "$exec_root/containerd/"; then
    say "stopping the leftover containerd (pid $cpid)"
    kill -TERM "$cpid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$cpid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$cpid" 2>/dev/null || true
  fi
  rm -f "$pidfile" "$sock"
}

# The lock files of `serve`, opened (not locked) so that the engine's
# start can keep them from dockerd.
open_locks() {
  [[ -n ${users:-} ]] && return
  mkdir -p "$run"
  exec {turn}>"$turn_lock" {users}>"$users_lock"
}

start() {
  open_locks
  install
  # A dockerd from an earlier run (a test run that was killed) is
  # stopped, so every run starts from a known state.
  stop
  mkdir -p "$root" "$run" "$exec_root"
  say "starting dockerd (socket $sock, data root $root, log $log)"
  # setsid: it outlives this script; the tests stop it with `stop` (`serve`).
  # The locks of `serve` are not the engine's to hold.
  setsid "$dockerd" \
    --host "unix://$sock" \
    --data-root "$root" \
    --exec-root "$exec_root" \
    --pidfile "$pidfile" \
    --containerd-namespace agent-sandbox-tests \
    --containerd-plugins-namespace agent-sandbox-tests-plugins \
    --bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    --userland-proxy=false \
    >>"$log" 2>&1 </dev/null {users}>&- {turn}>&- &
  for _ in $(seq 1 150); do
    answers && break
    sleep 0.2
  done
  if ! answers; then
    say "dockerd did not answer within 30 s; the end of $log:"
    tail -n 20 "$log" >&2
    exit 1
  fi
  # Containers an interrupted run left behind (the engine is the tests' own).
  "$docker" container prune --force >/dev/null
  import_base trixie
  echo "export DOCKER_HOST=unix://$sock"
  echo "export AGENT_SANDBOX_DOCKER=$docker"
}

# Stops the engine only while it is still the one `serve` started (pid $1,
# empty when it is unknown): a later run may have stopped it and started
# its own.
stop_if() {
  local now
  now=$(ours) || now=
  if [[ -z $now || -z $1 || $now == "$1" ]]; then
    stop
  fi
}

# Holds a shared lock on the users file for as long as this process
# lives; the engine is started unless another `serve` keeps it up (the
# suite's test processes run side by side and share it), and stopped by
# the last one to leave.
serve() {
  open_locks
  flock "$turn"
  local alone=
  flock -xn "$users" && alone=1
  flock -s "$users"
  trap 'exit 143' TERM INT HUP
  if [[ -n $alone ]] || ! answers || ! ours >/dev/null; then
    # Nobody else uses it (or it is gone): a fresh start. A start that
    # fails stops whatever it started.
    trap stop EXIT
    start
  else
    say "using the dockerd another test process started (pid $(ours))"
    echo "export DOCKER_HOST=unix://$sock"
    echo "export AGENT_SANDBOX_DOCKER=$docker"
  fi
  # Global: the EXIT trap runs after this function has returned.
  served=$(ours) || served=
  trap leave EXIT
  flock -u "$turn"
  # The exports are out (the test process reads stdout to its end); what
  # the stop says goes to the log, as the test process's stderr may be
  # gone by then.
  exec >/dev/null 2>>"$log"
  cat <&0 >/dev/null &
  wait $! || true
}

# The end of a `serve`: the engine stops with its last user.
leave() {
  flock "$turn"
  if flock -xn "$users"; then
    stop_if "$served"
  fi
  flock -u "$turn"
}

# localhost/debian:SUITE-slim, also answering to docker.io/library/debian:SUITE-slim.
import_base() {
  local suite=$1 image="localhost/debian:$1-slim" tarball
  if ! "$docker" image inspect "$image" >/dev/null 2>&1; then
    tarball=$(bash "$(dirname "${BASH_SOURCE[0]}")/base-tarball.sh" "$suite")
    say "importing $tarball as $image"
    "$docker" import "$tarball" "$image" >/dev/null
  fi
  "$docker" tag "$image" "debian:$suite-slim"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  serve) serve ;;
  status) answers ;;
  install) install ;;
  *)
    echo "usage: bash scripts/docker-env.sh start|stop|serve|status|install" >&2
    exit 2
    ;;
esac
