#!/bin/sh
# agent-sandbox reference image: the container-start check (the image's
# devcontainer.metadata postStartCommand). Image metadata cannot add a
# device, so this warns -- it never fails the start -- when the container
# lacks what sandboxed sessions need:
#   1. /dev/net/tun, for the egress jail (--device /dev/net/tun);
#   2. an unmasked /proc, so sessions mount their own /proc
#      (--security-opt systempaths=unconfined; the image asks for it, but an
#      engine or a compose file may drop it).
warn() { printf 'agent-sandbox: WARNING: %s\n' "$*" >&2; }

jail=on
case "${AGENT_SANDBOX_EGRESS_JAIL:-${CLAUDE_SANDBOX_EGRESS_JAIL:-}}" in
  0 | false | no | off) jail=off ;;
esac
if grep -Eqs '^[[:space:]]*"?egressJail"?[[:space:]]*:[[:space:]]*false' /etc/agent-sandbox/config.json5; then
  jail=off
fi
if [ "$jail" = on ] && [ ! -c /dev/net/tun ]; then
  warn "/dev/net/tun is missing in this container, so agent sessions (claude, codex, pi, agent-sandbox run) will refuse to start: their egress jail needs it. Add \"runArgs\": [\"--device=/dev/net/tun\"] to devcontainer.json (or --device /dev/net/tun to podman/docker run) and recreate the container."
fi

masked=$(awk '$5 ~ /^\/proc\/./ && $5 != "/proc/sys/fs/binfmt_misc" { printf "%s ", $5 }' /proc/self/mountinfo 2>/dev/null)
if [ -n "$masked" ]; then
  warn "/proc has paths masked by the container engine (${masked% }), so agent sessions will refuse to start. Add \"--security-opt=systempaths=unconfined\" to runArgs in devcontainer.json (or to podman/docker run) and recreate the container."
fi
exit 0
