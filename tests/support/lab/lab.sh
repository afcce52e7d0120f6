#!/bin/sh
# The egress-jail test lab: two network namespaces joined by a veth pair.
#   jdcTAG  "devcontainer": eth0 198.18.0.2/24, default via 198.18.0.1,
#           plus more-specific routes a VPN / DHCP would add
#           (10.8.0.0/24 and a host route to 169.254.169.254), and
#           another address of its own, 10.77.0.1, on its loopback.
#   jrtTAG  "router": eth0 198.18.0.1/24 (the gateway) and 198.18.0.3/24
#           (another host on the connected subnet); every ADDR given on
#           the command line is added to its loopback (internal ranges,
#           metadata, DNS, a public-looking "internet" address).
# Only traffic between these namespaces; nothing leaves the machine.
# usage: lab.sh up TAG ADDR...   |   lab.sh down TAG
set -eu
cmd=$1
tag=$2
shift 2
dc=jdc$tag
rt=jrt$tag

case $cmd in
up)
    ip netns add "$dc"
    ip netns add "$rt"
    ip link add "jv${tag}d" type veth peer name "jv${tag}r"
    ip link set "jv${tag}d" netns "$dc"
    ip link set "jv${tag}r" netns "$rt"
    ip -n "$dc" link set "jv${tag}d" name eth0
    ip -n "$rt" link set "jv${tag}r" name eth0
    for ns in "$dc" "$rt"; do
        ip -n "$ns" link set lo up
        ip -n "$ns" link set eth0 up
    done
    ip -n "$dc" addr add 198.18.0.2/24 dev eth0
    ip -n "$rt" addr add 198.18.0.1/24 dev eth0
    ip -n "$rt" addr add 198.18.0.3/24 dev eth0
    ip -n "$dc" route add default via 198.18.0.1
    ip -n "$dc" route add 10.8.0.0/24 via 198.18.0.1
    ip -n "$dc" route add 169.254.169.254/32 via 198.18.0.1
    # Another address of the container (a second network, a VPN client).
    ip -n "$dc" addr add 10.77.0.1/32 dev lo
    for a in "$@"; do
        ip -n "$rt" addr add "$a/32" dev lo
    done
    ;;
down)
    ip netns del "$dc" 2>/dev/null || true
    ip netns del "$rt" 2>/dev/null || true
    ;;
*)
    echo "usage: $0 up TAG ADDR... | down TAG" >&2
    exit 2
    ;;
esac
