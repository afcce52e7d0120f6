# Runs INSIDE a session (passed to `sh -c` by scripts/demo.sh): shows what
# the session can and cannot see. POSIX sh; every line is a real attempt.
say() { printf '  %-44s %s\n' "$1" "$2"; }
yesno() { if eval "$2" >/dev/null 2>&1; then say "$1" "$3"; else say "$1" "$4"; fi; }

echo "identity"
say "IS_SANDBOX / IS_SANDBOX_AGENT" "${IS_SANDBOX:-unset} / ${IS_SANDBOX_AGENT:-unset}"
say "capabilities (CapEff)" "$(awk '/^CapEff/{print $2}' /proc/self/status)"
say "no_new_privs / seccomp filters" "$(awk '/^NoNewPrivs/{n=$2} /^Seccomp_filters/{s=$2} END{print n " / " s}' /proc/self/status)"
echo "secrets"
yesno "DEMO_SECRET (set outside)" '[ -n "${DEMO_SECRET:-}" ]' "VISIBLE" "absent"
yesno "~/.ssh (outer home)" '[ -e "$HOME/.ssh" ]' "VISIBLE" "hidden (home is an empty tmpfs)"
yesno "~/.netrc" '[ -s "$HOME/.netrc" ]' "HAS CONTENT" "reads empty"
yesno "/etc/shadow" '[ -s /etc/shadow ]' "HAS CONTENT" "reads empty"
echo "file system"
yesno "write /etc/agent-sandbox-demo" 'touch /etc/agent-sandbox-demo' "ALLOWED" "denied (read-only root)"
yesno "write the workspace" 'touch ./demo-written-inside && rm ./demo-written-inside' "allowed" "DENIED"
yesno "outer /tmp" '[ -e /tmp/agent-sandbox-demo-outer ]' "VISIBLE" "hidden (private /tmp)"
yesno "docker socket" '[ -S /run/docker.sock ] || [ -S /var/run/docker.sock ]' "REACHABLE" "not reachable"
echo "terminal"
if command -v python3 >/dev/null; then
  yesno "TIOCSTI keystroke injection" "python3 -c 'import fcntl,termios,os; fd=os.open(\"/dev/tty\",os.O_RDWR); fcntl.ioctl(fd,termios.TIOCSTI,b\"x\")'" "ALLOWED" "blocked (seccomp) or no tty"
fi
echo "network"
if [ -r /etc/resolv.conf ]; then say "resolver" "$(awk '/^nameserver/{print $2; exit}' /etc/resolv.conf)"; fi
if command -v ip >/dev/null; then
  yesno "change a route" 'ip route add blackhole 203.0.113.7/32' "ALLOWED" "denied"
  echo "  routes (internal ranges blackholed, read back before start):"
  ip -4 route show 2>/dev/null | sed 's/ proto static//; s/^/    /'
fi
