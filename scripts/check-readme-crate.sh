#!/usr/bin/env bash
# Builds the README's Rust examples as a NEW crate that depends only on
# lousho (by path), serde, serde_json and tokio: what a reader who copies an
# example gets. The README's doc tests cannot catch a macro that needs a
# dependency the reader does not have (e.g. `schemars`), since doc tests see
# every dependency of lousho. Called by .ci/run.
#
# Every ```rust block of README.md (the Quickstart, the MCP sections, …)
# becomes a module of one binary (one build, one link): rustdoc's hidden
# lines (`# …`) are code too, and a block without `fn main` is wrapped in
# one, as rustdoc does. The blocks marked `<!-- readme-crate: run -->` on the
# line before their fence are also run, offline, from the repository root
# with the freshly built `lousho` on PATH (the MCP examples mount
# `lousho mcp examples/agents/files.yaml`): each must exit 0 within a minute,
# and each `println!(…); // text` line in it must print that text.
#
# The crate shares the workspace's target dir, Cargo.lock, dev profile and
# dependency features (those of the `lousho` CLI's build), so only lousho
# itself is compiled again.
#
#   scripts/check-readme-crate.sh            # build all, run the marked ones
#   scripts/check-readme-crate.sh --build    # build only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
run=1
[ "${1:-}" = "--build" ] && run=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/src"

{
  cat <<EOF
[package]
name = "readme-examples"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
lousho = { path = "$root/crates/lousho" }
# The features the workspace's CLI build gives these crates, so builds are shared.
serde = { version = "1", features = ["derive", "rc"] }
serde_json = "1"
tokio = { version = "1", features = ["full"] }
# No block may name these three (checked below): they only give crates deep in
# lousho's tree the features they have in the CLI's build (through
# tracing-subscriber and rustyline), so this crate reuses the CLI's compiled
# rmcp, reqwest, hyper and axum instead of building them again.
log = { version = "0.4", features = ["std"] }
rustix = "1"
tracing-core = "0.1"

[workspace]

EOF
  # The workspace's dev profile (debug info settings), for the same reason.
  awk '/^\[profile\.dev(\.package\."\*")?\]/ { p = 1; print; next }
       /^\[/ { p = 0 }
       p' Cargo.toml
} > "$dir/Cargo.toml"
cp Cargo.lock "$dir/"

python3 - README.md "$dir" <<'PY'
import pathlib, re, sys
readme, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
blocks, block, marked, prev, line_no = [], None, False, "", 0
for n, line in enumerate(readme.read_text().splitlines(), 1):
    if block is None:
        m = re.match(r"^```rust(,[\w,]*)?\s*$", line)
        if m and "ignore" not in (m.group(1) or ""):
            block, line_no = [], n
            marked = prev.strip() == "<!-- readme-crate: run -->"
        elif line.strip():
            prev = line
        continue
    if line.startswith("```"):
        blocks.append((line_no, marked, block))
        block, prev = None, ""
        continue
    block.append(line[2:] if line.startswith("# ") else ("" if line == "#" else line))
if not any(True for _ in blocks):
    sys.exit("no ```rust blocks in README.md")
for line_no, _, lines in blocks:
    if any(re.search(r"\b(log|rustix|tracing_core)::", l) for l in lines):
        sys.exit(f"README.md line {line_no}: a block names `log`, `rustix` or `tracing_core`, which a reader's crate "
                 "does not have (this crate has them only to share the workspace's build)")
mods, arms, runs = [], [], []
for i, (line_no, marked, lines) in enumerate(blocks, 1):
    code = "\n".join(lines) + "\n"
    if not re.search(r"^\s*(async\s+)?fn main\b", code, re.M):
        body = "".join("    " + l + "\n" for l in lines)
        code = ("#[tokio::main]\nasync fn main() -> Result<(), Box<dyn std::error::Error>> {\n"
                + body + "    #[allow(unreachable_code)]\n    Ok(())\n}\n")
    # The block's `main` is called from the binary's own.
    code = re.sub(r"^(\s*)((async\s+)?fn main\b)", r"\1pub(crate) \2", code, count=1, flags=re.M)
    name = f"block_{i:02}"
    (out / "src" / f"{name}.rs").write_text(
        f"//! README.md line {line_no}\n#![allow(unused, clippy::all)]\n{code}")
    mods.append(f"mod {name};")
    arms.append(f'        "{name}" => Termination::report({name}::main()),')
    if marked:
        expected = re.findall(r"println!\(.*\);\s*//\s*(.+?)\s*$", code, re.M)
        runs.append("\t".join([name, str(line_no)] + expected))
(out / "src" / "main.rs").write_text(
    "//! The README's Rust blocks, one module each; run one by name.\n"
    + "\n".join(mods)
    + "\nuse std::process::{ExitCode, Termination};\n"
    + "fn main() -> ExitCode {\n    match std::env::args().nth(1).unwrap_or_default().as_str() {\n"
    + "\n".join(arms)
    + '\n        other => {\n            eprintln!("no README block named {other:?}");\n'
    + "            ExitCode::FAILURE\n        }\n    }\n}\n")
(out / "runs").write_text("".join(r + "\n" for r in runs))
print(f"--- {len(blocks)} README blocks as one crate ({out}); to run: "
      + (" ".join(r.split(chr(9))[0] for r in runs) or "none"))
PY

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cargo build --quiet --manifest-path "$dir/Cargo.toml"
echo "--- every README block builds as its own crate"
[ "$run" = 1 ] || exit 0

# The marked examples mount `lousho mcp …` servers: the CLI, built the same way.
cargo build --quiet -p lousho-cli
export PATH="$CARGO_TARGET_DIR/debug:$PATH"
bin="$CARGO_TARGET_DIR/debug/readme-examples"
while IFS=$'\t' read -r -a fields; do
  name=${fields[0]} line=${fields[1]}
  echo "--- running $name (README.md line $line)"
  out=$(timeout 60 "$bin" "$name") || { echo "$name (README.md line $line) failed" >&2; exit 1; }
  printf '%s\n' "$out"
  for want in "${fields[@]:2}"; do
    grep -qF -- "$want" <<< "$out" || { echo "$name (README.md line $line) did not print: $want" >&2; exit 1; }
  done
done < "$dir/runs"
echo "--- the marked README blocks run and print what they say"
