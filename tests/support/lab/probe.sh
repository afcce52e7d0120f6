# Probes run inside a jailed session (sourced by bash). Each prints one
# line the test parses: KIND NAME RESULT MILLIS DETAIL...
# Only bash, coreutils, getent, iproute2 and util-linux are used.

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# tcp NAME HOST PORT: "TCP NAME open|blocked MS first-bytes-or-error"
tcp() {
    local t0 out rc
    t0=$(now_ms)
    out=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 9; timeout 2 head -c 200 <&3' "$2" "$3" 2>&1)
    rc=$?
    if [ $rc = 0 ]; then r=open; else r=blocked; fi
    echo "TCP $1 $r $(( $(now_ms) - t0 )) $(echo "$out" | tr '\n' ' ')"
}

# change NAME CMD...: "CHANGE NAME ok|denied 0 output" (must be denied)
change() {
    local name=$1 out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    if [ $rc = 0 ]; then r=ok; else r=denied; fi
    echo "CHANGE $name $r 0 $(echo "$out" | tr '\n' ' ')"
}

# dns NAME HOSTNAME: "DNS NAME resolved|failed MS addresses"
dns() {
    local t0 out rc
    t0=$(now_ms)
    out=$(timeout 5 getent ahostsv4 "$2" | awk '{print $1}' | sort -u | tr '\n' ' ')
    if [ -n "$out" ]; then r=resolved; else r=failed; fi
    echo "DNS $1 $r $(( $(now_ms) - t0 )) $out"
}

# ipv6: "IPV6 state off|ON 0 addresses=N routes=M"
ipv6() {
    local a r
    a=$(ip -6 -o addr show | wc -l)
    r=$(ip -6 route show table all | wc -l)
    if [ "$a$r" = 00 ]; then s=off; else s=ON; fi
    echo "IPV6 state $s 0 addresses=$a routes=$r"
}

# routes: the main table as the session sees it, one "ROUTE" line each.
routes() {
    ip -4 route show table main | sed 's/ proto static//; s/ *$//; s/^/ROUTE main ok 0 /'
    ip -4 route show table all | grep -v -e 'table local' | grep -c . | sed 's/^/ROUTE count ok 0 /'
}

# echo_relay NAME PORT BYTES: sends BYTES through 127.0.0.1:PORT (an echo
# server behind the relay) and compares what comes back.
echo_relay() {
    local name=$1 port=$2 n=$3 t0 want got
    t0=$(now_ms)
    want=$(seq 1 1000000 | head -c "$n" | sha256sum | cut -d' ' -f1)
    got=$(timeout 20 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 9
        seq 1 1000000 | head -c "$1" >&3 &
        head -c "$1" <&3 | sha256sum | cut -d" " -f1
        wait' "$port" "$n" 2>&1)
    if [ "$got" = "$want" ]; then r=intact; else r=corrupt; fi
    echo "RELAY $name $r $(( $(now_ms) - t0 )) $n bytes $got"
}
