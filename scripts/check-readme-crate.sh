#!/usr/bin/env bash
# Builds and runs the README's Quickstart as a NEW crate that depends only on
# lousho (by path), serde, serde_json and tokio: what a reader who copies the
# example gets. The README's doc tests cannot catch a macro that needs a
# dependency the reader does not have (e.g. `schemars`), since doc tests see
# every dependency of lousho. Called by .ci/run.
#
# The crate shares the workspace's target dir, Cargo.lock, dev profile and
# dependency features, so only lousho itself is compiled again.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/src"

# The first ```rust block after "## Quickstart"; rustdoc's hidden lines
# (`# ...`) are code too.
awk '/^## Quickstart/ { q = 1 }
     q && /^```rust/ { f = 1; next }
     f && /^```/ { exit }
     f { print }' README.md | sed -e 's/^# //' -e 's/^#$//' > "$dir/src/main.rs"
if [ ! -s "$dir/src/main.rs" ]; then
  echo "no \`\`\`rust block after \"## Quickstart\" in README.md" >&2
  exit 1
fi

{
  cat <<EOF
[package]
name = "readme-quickstart"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
lousho = { path = "$root/crates/lousho" }
# The workspace's features of these crates, so their builds are shared.
serde = { version = "1", features = ["derive", "rc"] }
serde_json = "1"
tokio = { version = "1", features = ["full"] }

[workspace]

EOF
  # The workspace's dev profile (debug info settings), for the same reason.
  awk '/^\[profile\.dev(\.package\."\*")?\]/ { p = 1; print; next }
       /^\[/ { p = 0 }
       p' Cargo.toml
} > "$dir/Cargo.toml"
cp Cargo.lock "$dir/"

echo "--- the README Quickstart as its own crate ($dir):"
cat "$dir/src/main.rs"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" \
  cargo run --quiet --manifest-path "$dir/Cargo.toml"
echo "--- the README Quickstart builds and runs as its own crate"
