#!/usr/bin/env bash
# Installs the pinned third-party peers the interop tests talk to, into ignored
# folders under interop/. Idempotent; safe to run on every test run.
set -euo pipefail
cd "$(dirname "$0")"
# (Sections are added per peer: npm packages from interop/package.json + lockfile,
#  Python packages from interop/requirements.txt into interop/.venv.)

# npm peers (issues #5, #6: the reference server-everything, the official TypeScript
# SDK): interop/package.json + package-lock.json.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

# Python peers (the official `mcp` SDK): interop/requirements.txt into interop/.venv.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ ! -f .venv/.requirements.installed ] || ! cmp -s requirements.txt .venv/.requirements.installed; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  cp requirements.txt .venv/.requirements.installed
fi

# The MCP conformance suite and the Node 22 it needs: interop/conformance/.
if [ ! -f conformance/node_modules/.package-lock.json ] \
   || [ conformance/package-lock.json -nt conformance/node_modules/.package-lock.json ]; then
  (cd conformance && npm ci --no-audit --no-fund --loglevel=error)
fi
