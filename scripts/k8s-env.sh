#!/usr/bin/env bash
# The Kubernetes manifest validator for tests/suite/kubernetes.rs, on a fresh
# Debian machine as root: a Python virtual environment with
# kubernetes-validate (the Kubernetes API's JSON schemas, per Kubernetes
# version, and PyYAML), cached under $AGENT_SANDBOX_TEST_CACHE (default
# /var/cache/agent-sandbox-tests), and Debian's seccomp package, whose
# scmp_sys_resolver checks the names in the shipped seccomp profile.
# Prints the environment's python.
#
#   python=$(bash scripts/k8s-env.sh)
#   "$python" tests/kubernetes/validate.py deploy/kubernetes/*.yaml
set -euo pipefail

cache=${AGENT_SANDBOX_TEST_CACHE:-/var/cache/agent-sandbox-tests}
# The validator's version: its schemas go up to Kubernetes 1.37.
version=1.37.0
venv="$cache/k8s-validate-$version"

need=()
for p in python3 python3-venv seccomp; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "installing: ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! "$venv/bin/python" -c 'import kubernetes_validate, yaml, jsonschema' 2>/dev/null; then
  echo "installing kubernetes-validate $version into $venv" >&2
  rm -rf "$venv.tmp"
  python3 -m venv "$venv.tmp"
  "$venv.tmp/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$version" >&2
  rm -rf "$venv"
  mv "$venv.tmp" "$venv"
fi
echo "$venv/bin/python"
