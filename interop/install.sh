#!/usr/bin/env bash
# Installs the pinned third-party peers the interop tests talk to, into ignored
# folders under interop/. Idempotent; safe to run on every test run.
set -euo pipefail
cd "$(dirname "$0")"
# (Sections are added per peer: npm packages from interop/package.json + lockfile,
#  Python packages from interop/requirements.txt into interop/.venv.)
