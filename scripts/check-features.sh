#!/usr/bin/env bash
# Builds and lints lousho with each cargo feature alone and with none
# (`--no-default-features`), so a layer that leaks into another (an import
# only one feature uses, an item that needs a feature it does not name)
# fails here instead of in a user's build. Called by .ci/run.
#
# Two passes per feature set:
# - `--lib`: the library with exactly these features (no dev-dependencies,
#   so nothing else turns features on);
# - `--all-targets`: tests, examples and benches too. Their dev-dependency
#   lousho-testkit needs `mcp-client` and `mcp-server`, and cargo unifies
#   features within one build, so these always have both; a target that
#   needs another feature says so (`required-features` or `#[cfg]`).
#
# Usage: scripts/check-features.sh [FEATURE...]   (default: every feature and none)
set -euo pipefail
cd "$(dirname "$0")/.."

features=("$@")
if [ ${#features[@]} -eq 0 ]; then
  # "" is none; keep this list in step with crates/lousho/Cargo.toml [features].
  features=("" mcp-client mcp-server oauth builtin spec sqlite postgres otel)
fi

for f in "${features[@]}"; do
  label=${f:-none}
  echo "--- lousho, features: $label (library)"
  cargo clippy -p lousho --no-default-features --features "$f" --lib -- -D warnings
  case "$f" in
    # With the testkit's two MCP features added, these are the "none" set.
    mcp-client | mcp-server) continue ;;
  esac
  echo "--- lousho, features: $label (+ mcp-client, mcp-server through the testkit): all targets"
  cargo clippy -p lousho --no-default-features --features "$f" --all-targets -- -D warnings
done
# What a build without a layer does when asked for it: a spec file's
# built-in tools and an `oauth` MCP entry fail naming the feature. (A spec file's `mcpServers` with
# `mcp-client` off cannot be run here: the tests always have it, through
# the testkit.)
echo "--- lousho, features: mcp-client spec: the errors that name a missing feature"
cargo test -p lousho --no-default-features --features "mcp-client spec" --lib -- mcp_servers an_oauth_entry_fails
echo "--- every feature set builds and lints clean"
