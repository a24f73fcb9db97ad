#!/usr/bin/env bash
# The whole test suite: installs the pinned interop peers, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./interop/install.sh
cargo test --workspace --all-features
