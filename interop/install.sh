#!/usr/bin/env bash
# Installs the pinned third-party peers the interop tests talk to, into ignored
# folders under interop/. Idempotent; safe to run on every test run.
set -euo pipefail
cd "$(dirname "$0")"
# (Sections are added per peer: npm packages from interop/package.json + lockfile,
#  Python packages from interop/requirements.txt into interop/.venv.)

# --- MCP client interop peers (issue #5) ---
# npm: @modelcontextprotocol/server-everything, pinned in package.json + package-lock.json.
if [ ! -f node_modules/@modelcontextprotocol/server-everything/dist/index.js ] \
   || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
# Python: the official SDK (`mcp`, pinned in requirements.txt) in interop/.venv.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import mcp.server.mcpserver" 2>/dev/null \
   || [ requirements.txt -nt .venv/.installed ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  touch .venv/.installed
fi
