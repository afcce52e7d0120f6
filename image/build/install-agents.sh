#!/bin/sh
# Installs the agents' CLIs from npm at image build time (step 3 of the
# Containerfile). Reads AGENTS (comma-separated: claude, codex, pi; empty
# for none) and CLAUDE_CODE_VERSION, CODEX_VERSION, PI_VERSION (an npm
# version or dist-tag). When the build context carries build/extra-ca.pem
# (a TLS-intercepting proxy's CA, given to `agent-sandbox image build
# --extra-ca`), npm trusts it for this step only: the context's build/ is
# bind-mounted at /run/agent-sandbox-build, never copied into the image.
set -eu
extra_ca=/run/agent-sandbox-build/extra-ca.pem

packages=
for agent in $(printf '%s' "${AGENTS:-}" | tr ',' ' '); do
  case "$agent" in
    claude) packages="$packages @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION:-latest}" ;;
    codex) packages="$packages @openai/codex@${CODEX_VERSION:-latest}" ;;
    pi) packages="$packages @mariozechner/pi-coding-agent@${PI_VERSION:-latest}" ;;
    *)
      echo "install-agents: unknown agent '$agent' in AGENTS; the agents are claude, codex and pi" >&2
      exit 1
      ;;
  esac
done
if [ -z "$packages" ]; then
  echo "install-agents: no agents selected (AGENTS is empty)"
  exit 0
fi

if [ -s "$extra_ca" ]; then
  export NODE_EXTRA_CA_CERTS="$extra_ca"
fi
echo "install-agents: npm install -g$packages"
# shellcheck disable=SC2086 # one word per package
npm install --global --no-audit --no-fund --no-update-notifier $packages
npm cache clean --force >/dev/null 2>&1 || true
rm -rf /root/.npm

# npm running as root keeps the owner each package's tarball records (often
# uid 1000, which is the image's user): that user could change code root
# runs. Everything npm wrote is root's, and writable by no one else
# (`image build` audits it).
npm_root=$(npm root --global)
chown -R -h root:root "$npm_root"
chmod -R go-w "$npm_root"
find "$(npm prefix --global)/bin" -maxdepth 1 -type l ! -uid 0 -exec chown -h root:root {} +

# npm 9 (Debian's) ignores the `libc` field, so Claude Code gets its musl
# build beside the glibc one (~390 MB each). On a glibc system the musl
# one never runs: drop it.
if getconf GNU_LIBC_VERSION >/dev/null 2>&1; then
  for d in "$(npm root --global)"/@anthropic-ai/claude-code/node_modules/@anthropic-ai/claude-code-linux-*-musl; do
    if [ -d "$d" ]; then
      rm -rf "$d"
      echo "install-agents: removed $d (musl build on a glibc system)"
    fi
  done
fi

for agent in $(printf '%s' "$AGENTS" | tr ',' ' '); do
  command -v "$agent" >/dev/null || { echo "install-agents: npm installed no '$agent' command" >&2; exit 1; }
  printf 'install-agents: %s ' "$agent"
  "$agent" --version || { echo "install-agents: '$agent --version' failed" >&2; exit 1; }
done
