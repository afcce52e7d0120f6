#!/bin/sh
# agent-sandbox's container entrypoint, shipped by the devcontainer feature
# (its "entrypoint") and the reference image (its ENTRYPOINT and
# devcontainer.metadata "entrypoint"; image/entrypoint.sh links here). The
# Dev Containers CLI runs it at container start, as root; then it runs the
# command it was given, if any.
#
# The egress jail opens /dev/net/tun as the user running the agent. An
# engine copies the host's device mode into the container, and a host
# without udev may have it 0600 (root only), which locks a non-root remote
# user out. Started as root, make the container's own node usable by
# every user (0666, what udev sets on every desktop and server
# distribution) when it is the real TUN device (character 10:200; anything
# else at that name is left alone), and say so once (a later start finds
# it 0666): the engine created that node for this container (mknod), so the
# host's is not touched; where the node is the host's (rootless engines
# bind-mount it), chmod fails, nothing changes, and a session's refusal
# names the fix.
tun=/dev/net/tun
if [ "$(id -u)" = 0 ] && [ -c "$tun" ] && [ "$(stat -c '%t:%T' "$tun")" = "a:c8" ] && [ "$(stat -c %a "$tun")" != 666 ]; then
  was=$(stat -c %a "$tun")
  if chmod 0666 "$tun" 2>/dev/null; then
    echo "agent-sandbox: made $tun usable by every user of this container (it was mode 0$was) so the egress jail works for the non-root user" >&2
  fi
fi
if [ "$#" -gt 0 ]; then
  exec "$@"
fi
