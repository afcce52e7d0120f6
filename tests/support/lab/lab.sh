#!/bin/sh
# The egress-jail test lab: two network namespaces joined by a veth pair.
#   jdcTAG  "devcontainer": eth0 198.18.0.2/24, default via 198.18.0.1,
#           plus more-specific routes a VPN / DHCP would add
#           (10.8.0.0/24 and a host route to 169.254.169.254), and
#           another address of its own, 10.77.0.1, on its loopback.
#           Its own routing beyond the default route: vpn0 10.200.0.2/24,
#           a VPN-like link to jvpTAG, with 203.0.113.0/24 behind the
#           VPN's gateway 10.200.0.1; table 100 (198.19.7.0/24 via the
#           VPN) chosen by `to 198.19.7.0/24`, table 101 (198.19.8.0/24 via
#           the VPN) by `ipproto tcp`; more addresses of its own:
#           198.51.100.7 on lo, 198.51.100.9 on kipvs0 (the shape of
#           Kubernetes' service addresses on kube-ipvs0).
#   jrtTAG  "router": eth0 198.18.0.1/24 (the gateway) and 198.18.0.3/24
#           (another host on the connected subnet); every ADDR given on
#           the command line is added to its loopback (internal ranges,
#           metadata, DNS, a public-looking "internet" address).
#   jvpTAG  "far side of the VPN": eth0 10.200.0.1/24, and on its loopback
#           hosts in the ranges the container routes to it (FAR_ADDRS);
#           198.19.12.0/24 is there too, for a route a test adds later.
# Only traffic between these namespaces; nothing leaves the machine.
# usage: lab.sh up TAG ADDR...   |   lab.sh down TAG
set -eu
cmd=$1
tag=$2
shift 2
dc=jdc$tag
rt=jrt$tag
vp=jvp$tag
FAR_ADDRS="203.0.113.1 203.0.113.10 198.19.7.1 198.19.7.10 198.19.8.1 198.19.8.10 198.19.12.1 198.19.12.10"

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
    # The VPN-like link and what the container routes through it.
    ip netns add "$vp"
    ip link add "jv${tag}v" type veth peer name "jv${tag}f"
    ip link set "jv${tag}v" netns "$dc"
    ip link set "jv${tag}f" netns "$vp"
    ip -n "$dc" link set "jv${tag}v" name vpn0
    ip -n "$vp" link set "jv${tag}f" name eth0
    ip -n "$vp" link set lo up
    ip -n "$vp" link set eth0 up
    ip -n "$dc" link set vpn0 up
    ip -n "$dc" addr add 10.200.0.2/24 dev vpn0
    ip -n "$vp" addr add 10.200.0.1/24 dev eth0
    for a in $FAR_ADDRS; do
        ip -n "$vp" addr add "$a/32" dev lo
    done
    ip -n "$dc" route add 203.0.113.0/24 via 10.200.0.1 dev vpn0
    ip -n "$dc" route add 198.19.7.0/24 via 10.200.0.1 dev vpn0 table 100
    ip -n "$dc" rule add pref 100 to 198.19.7.0/24 lookup 100
    ip -n "$dc" route add 198.19.8.0/24 via 10.200.0.1 dev vpn0 table 101
    ip -n "$dc" rule add pref 101 ipproto tcp lookup 101
    # More addresses of the container's own.
    ip -n "$dc" addr add 198.51.100.7/32 dev lo
    ip -n "$dc" link add kipvs0 type veth peer name kipvs0p
    ip -n "$dc" link set kipvs0 up
    ip -n "$dc" link set kipvs0p up
    ip -n "$dc" addr add 198.51.100.9/32 dev kipvs0
    ;;
down)
    ip netns del "$dc" 2>/dev/null || true
    ip netns del "$rt" 2>/dev/null || true
    ip netns del "$vp" 2>/dev/null || true
    ;;
*)
    echo "usage: $0 up TAG ADDR... | down TAG" >&2
    exit 2
    ;;
esac
