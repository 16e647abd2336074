#!/usr/bin/env bash
# Builds and installs the pgvector extension into the local PostgreSQL server, from Debian's
# source package (checked against its published SHA-256) and the server's own development
# headers. Needs root and the Debian package mirror this machine's apt is configured with.
# Does nothing when the server already offers the extension.
set -euo pipefail

PGVECTOR_VERSION=0.8.0
PGVECTOR_SHA256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}

if psql "$PG_URL" -tAc "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'" | grep -q 1; then
  echo "pgvector: already available"
  exit 0
fi

pg_major=$(psql "$PG_URL" -tAc "SELECT current_setting('server_version_num')::int / 10000")
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q "postgresql-server-dev-${pg_major}" >/dev/null; then
  apt-get update -q >/dev/null
  apt-get install -y -q "postgresql-server-dev-${pg_major}" >/dev/null
fi

# The mirror apt already uses (a deb822 "URIs:" field or a one-line "deb" entry), never the security archive.
mirror=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true) \
  | grep -E '^(URIs:|deb )' | sed -E 's/^deb (\[[^]]*\] )?/URIs: /' | awk '{print $2}' | grep -v -- '-security' | head -n1 || true)
if [ -z "$mirror" ]; then
  echo "pgvector: no Debian mirror found in the apt configuration" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball="pgvector_${PGVECTOR_VERSION}.orig.tar.gz"
curl -fsS --max-time 120 -o "$work/$tarball" "${mirror%/}/pool/main/p/pgvector/$tarball"
echo "$PGVECTOR_SHA256  $work/$tarball" | sha256sum -c --quiet
tar -xzf "$work/$tarball" -C "$work"
# with_llvm=no: no JIT bitcode, so no clang is needed.
make -s -C "$work/pgvector-${PGVECTOR_VERSION}" with_llvm=no PG_CONFIG="/usr/lib/postgresql/${pg_major}/bin/pg_config" >/dev/null
make -s -C "$work/pgvector-${PGVECTOR_VERSION}" with_llvm=no PG_CONFIG="/usr/lib/postgresql/${pg_major}/bin/pg_config" install >/dev/null
psql "$PG_URL" -tAc "SELECT 'pgvector: installed ' || default_version FROM pg_available_extensions WHERE name = 'vector'"
