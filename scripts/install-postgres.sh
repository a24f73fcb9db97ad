#!/usr/bin/env bash
# Installs PostgreSQL's server binaries (Debian's `postgresql` package) if
# they are missing. The PostgreSQL session-store tests start their own
# throwaway server from them (crates/lousho-testkit/src/postgres.rs: initdb
# into a temp folder, a free loopback port, stopped when the tests end);
# nothing is started here. Under CI=true those tests fail without it. The
# TLS test also makes its certificates with the `openssl` command.
set -euo pipefail
if { [ -n "${LOUSHO_PG_BIN:-}" ] || compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; } \
  && command -v openssl >/dev/null; then
  echo "PostgreSQL: $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)${LOUSHO_PG_BIN:-}"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "PostgreSQL or openssl is not installed: run 'sudo apt-get install -y postgresql openssl' (or set LOUSHO_PG_BIN)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends postgresql openssl
