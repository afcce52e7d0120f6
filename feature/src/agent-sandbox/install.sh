#!/bin/sh
# agent-sandbox devcontainer feature installer. Runs as root at image build
# time: picks the bundled static `sandbox-install` for this machine's
# architecture (bin/<arch>/, added when the feature is packaged), turns the
# feature options into its flags, runs it for the remote user, and installs
# the container-start script named by the feature's entrypoint.
#
# Options arrive as environment variables (devcontainer convention: the
# option id upper-cased): AGENTS, EGRESSJAIL, ALLOWIP, ALLOWDOMAINS, LOCALPORTS,
# CALLBACKPORTS, NOFORGE, INSTALLDEPENDENCIES. The remote user comes from
# _REMOTE_USER / _REMOTE_USER_HOME.
set -eu

feature_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
say() { printf 'agent-sandbox feature: %s\n' "$*"; }
die() {
  printf 'agent-sandbox feature: error: %s\n' "$*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "install.sh must run as root (the devcontainer CLI runs features as root)"

# The feature carries bin/x86_64 and bin/aarch64 (linux/amd64 and
# linux/arm64 images); anything else is refused here, before any change.
machine=$(uname -m)
case "$machine" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) die "this machine's architecture is '$machine' (uname -m); agent-sandbox supports x86_64 and aarch64 only: use a linux/amd64 or linux/arm64 base image" ;;
esac
installer="$feature_dir/bin/$arch/sandbox-install"
if [ ! -x "$installer" ]; then
  carried=
  for d in "$feature_dir"/bin/*/; do
    [ -d "$d" ] && carried="$carried${carried:+, }$(basename "$d")"
  done
  die "this feature carries no sandbox-install for $arch (it has: ${carried:-none}); it was packaged without $arch binaries: package it with every architecture (\`bash scripts/build-static.sh\` builds both, then \`agent-sandbox feature package\`), or use a base image for one it has"
fi

# A boolean option: "true" or "false" (anything else is a mistake in devcontainer.json).
flag() {
  case "$2" in
    true | false) ;;
    *) die "option $1 must be true or false, not '$2'" ;;
  esac
  [ "$2" = "$3" ]
}
# A list option: comma-separated, spaces ignored; empty means none.
list() { printf '%s' "$1" | tr -d ' \t'; }

set -- --agents "$(list "${AGENTS:-claude,codex,pi}")"
if flag egressJail "${EGRESSJAIL:-true}" false; then set -- "$@" --no-egress-jail; fi
if flag noForge "${NOFORGE:-false}" true; then set -- "$@" --no-forge; fi
if flag installDependencies "${INSTALLDEPENDENCIES:-true}" false; then set -- "$@" --no-deps; fi
allow=$(list "${ALLOWIP:-}")
if [ -n "$allow" ]; then set -- "$@" --allow-ip "$allow"; fi
domains=$(list "${ALLOWDOMAINS:-}")
if [ -n "$domains" ]; then set -- "$@" --allow-domain "$domains"; fi
local_ports=$(list "${LOCALPORTS:-}")
if [ -n "$local_ports" ]; then set -- "$@" --local-port "$local_ports"; fi
callback_ports=$(list "${CALLBACKPORTS:-}")
if [ -n "$callback_ports" ]; then set -- "$@" --callback-port "$callback_ports"; fi

user=${_REMOTE_USER:-}
if [ -n "$user" ] && [ "$user" != root ]; then
  entry=$(awk -F: -v u="$user" '$1 == u { print; exit }' /etc/passwd)
  [ -n "$entry" ] || die "the remote user '$user' does not exist in this image yet; create it first: \`useradd -m $user\` in the Dockerfile, or, when a feature creates it (e.g. common-utils), list that feature before this one in \"overrideFeatureInstallOrder\" in devcontainer.json"
  home=$(printf '%s' "$entry" | cut -d: -f6)
  if [ -n "${_REMOTE_USER_HOME:-}" ] && [ "$_REMOTE_USER_HOME" != "$home" ]; then
    say "note: _REMOTE_USER_HOME is $_REMOTE_USER_HOME but /etc/passwd gives $home for $user; sessions use $home (the home the user logs in with)"
  fi
  set -- "$@" --user "$user"
fi

say "running bin/$arch/sandbox-install $*"
"$installer" "$@"

# The container-start script (the start check itself is
# `agent-sandbox doctor --start-check`, the feature's postStartCommand); a
# second run leaves an identical copy as it is (not even its times change),
# like sandbox-install does. An older feature's start-check.sh goes.
check_dir=/usr/local/share/agent-sandbox-feature
mkdir -p "$check_dir"
for f in entrypoint.sh; do
  if ! cmp -s "$feature_dir/$f" "$check_dir/$f" 2>/dev/null; then
    cp "$feature_dir/$f" "$check_dir/$f"
  fi
done
rm -f "$check_dir/start-check.sh"
chmod 0755 "$check_dir" "$check_dir/entrypoint.sh"
say "done; sessions start with: claude | codex | pi | agent-sandbox run -- CMD (check with: agent-sandbox verify)"
