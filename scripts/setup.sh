#!/usr/bin/env bash
# Set up a fresh Debian machine for verifymcp: a running Docker engine,
# debootstrap (to build the sandbox base where no container registry is
# reachable), Debian's chromium (run headless by the HTML report's browser
# test), PostgreSQL on 127.0.0.1:5432 for the cache's Postgres tests,
# a container registry on 127.0.0.1:5000 for the image tests, the
# verifymcp binary and the sandbox image. Idempotent: each step is
# skipped when its result is already there.
#
#   scripts/setup.sh            every step
#   scripts/setup.sh postgres   only PostgreSQL (for go test -tags postgres)
#   scripts/setup.sh registry   only the loopback container registry
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="/usr/local/go/bin:$PATH"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

say() { printf 'setup: %s\n' "$*" >&2; }

apt_install() {
  say "installing Debian packages: $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL for the cache's shared backend, tested under the build tag
# "postgres" at postgres://verifymcp:verifymcp@127.0.0.1:5432/verifymcp_test.
# The role and database are test fixtures with a fixed, public password; the
# server listens on loopback only (Debian's default).
PG_USER=verifymcp PG_PASSWORD=verifymcp PG_DB=verifymcp_test

# Runs a command as the cluster's superuser, from / (which it can read).
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && sudo -u postgres "$@")
  fi
}

pg_fixture_ready() {
  command -v psql >/dev/null 2>&1 &&
    PGPASSWORD="$PG_PASSWORD" PGCONNECT_TIMEOUT=3 psql -qtAX -h 127.0.0.1 -p 5432 -U "$PG_USER" -d "$PG_DB" -c 'SELECT 1' >/dev/null 2>&1
}

# The server's memory, as the README recommends for a rescoring fleet:
# 512 MB of shared buffers (Debian's default is 128 MB) on huge pages. On
# a virtual machine mapping memory 4 KB at a time is dear: measured on
# this project's CI machine, huge pages halved the server's CPU per result
# a rescoring pass saves, and 512 MB (rather than 128) kept the pass's
# reads from evicting what it writes. Huge pages are reserved
# only where the kernel lets this script (root, /proc/sys writable), never
# fewer than already are; huge_pages = try starts the server on ordinary
# pages otherwise. Applied only when this script starts the server.
PG_SHARED_BUFFERS_MB=512

tune_postgres() {
  local ver="$1" conf="/etc/postgresql/$1/main/conf.d/verifymcp.conf"
  if [ ! -f "$conf" ]; then
    say "postgres $ver/main: shared_buffers ${PG_SHARED_BUFFERS_MB}MB on huge pages ($conf)"
    printf '# Written by verifymcp scripts/setup.sh.\nshared_buffers = %sMB\nhuge_pages = try\n' "$PG_SHARED_BUFFERS_MB" |
      $SUDO tee "$conf" >/dev/null
  fi
  # As many as the stopped server says it needs (PostgreSQL 15 and later),
  # or shared buffers plus a tenth for the rest of shared memory.
  local pgdata want have
  pgdata="$(pg_lsclusters -h | awk -v v="$ver" '$1 == v && $2 == "main" { print $6 }')"
  want="$(as_postgres "/usr/lib/postgresql/$ver/bin/postgres" -D "$pgdata" \
    -c "config_file=/etc/postgresql/$ver/main/postgresql.conf" -C shared_memory_size_in_huge_pages 2>/dev/null || true)"
  case "$want" in '' | *[!0-9]*) want=$((PG_SHARED_BUFFERS_MB * 11 / 10 / 2)) ;; esac
  have="$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)"
  if [ "$have" -lt "$want" ]; then
    if $SUDO sh -c "echo $want > /proc/sys/vm/nr_hugepages" 2>/dev/null; then
      say "reserved $(cat /proc/sys/vm/nr_hugepages) huge pages for postgres (vm.nr_hugepages)"
    else
      say "could not reserve huge pages (vm.nr_hugepages); postgres will use ordinary pages"
    fi
  fi
}

setup_postgres() {
  if pg_fixture_ready; then
    say "postgres ready at 127.0.0.1:5432 ($PG_USER/$PG_DB)"
    return
  fi
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt_install postgresql
  fi
  local ver
  ver="$(ls -d /usr/lib/postgresql/*/bin/postgres | sort -V | tail -n 1 | cut -d/ -f5)"
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    # Debian's package creates the "main" cluster on port 5432 unless told
    # not to; make it if it is missing.
    if ! pg_lsclusters -h | awk -v v="$ver" '$1 == v && $2 == "main" { found = 1 } END { exit !found }'; then
      say "creating postgres cluster $ver/main"
      $SUDO pg_createcluster --port 5432 "$ver" main >/dev/null
    fi
    local port
    port="$(pg_lsclusters -h | awk -v v="$ver" '$1 == v && $2 == "main" { print $3 }')"
    if [ "$port" != 5432 ]; then
      say "postgres cluster $ver/main uses port $port, not 5432; set port = 5432 in /etc/postgresql/$ver/main/postgresql.conf"
      exit 6
    fi
    tune_postgres "$ver"
    say "starting postgres $ver/main"
    # pg_ctlcluster runs pg_ctl as the cluster owner when systemd is not
    # running, and makes the socket directory.
    $SUDO pg_ctlcluster "$ver" main start || true
    for _ in $(seq 1 30); do
      pg_isready -q -h 127.0.0.1 -p 5432 && break
      sleep 1
    done
    pg_isready -q -h 127.0.0.1 -p 5432 || {
      say "postgres did not start; see /var/log/postgresql/postgresql-$ver-main.log"
      exit 6
    }
  fi
  say "creating postgres role $PG_USER and database $PG_DB"
  as_postgres psql -qtAX -v ON_ERROR_STOP=1 -d postgres >/dev/null <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  END IF;
END
\$\$;
SQL
  if [ -z "$(as_postgres psql -qtAX -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" ]; then
    as_postgres createdb -O "$PG_USER" "$PG_DB"
  fi
  pg_fixture_ready || {
    say "cannot log in to postgres as $PG_USER at 127.0.0.1:5432; check pg_hba.conf allows password logins from 127.0.0.1"
    exit 6
  }
  say "postgres ready at 127.0.0.1:5432 ($PG_USER/$PG_DB)"
}

# A container registry on loopback, for the tests that scan images by
# reference and by digest (no registry is reachable from CI machines):
# Debian's docker-registry (the distribution registry), without
# authentication, listening on 127.0.0.1:5000 only. The engine pushes to
# and pulls from a loopback registry over plain HTTP without being told.
REGISTRY_ADDR=127.0.0.1:5000
REGISTRY_DIR=/var/lib/verifymcp-registry

registry_ready() {
  curl -fsS -o /dev/null "http://$REGISTRY_ADDR/v2/" 2>/dev/null
}

setup_registry() {
  if registry_ready; then
    say "container registry ready at $REGISTRY_ADDR"
    return
  fi
  if ! command -v docker-registry >/dev/null 2>&1; then
    apt_install docker-registry
  fi
  $SUDO mkdir -p "$REGISTRY_DIR"
  local conf="$REGISTRY_DIR/config.yml"
  $SUDO tee "$conf" >/dev/null <<YAML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $REGISTRY_DIR/data
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
YAML
  $SUDO sh -c "nohup docker-registry serve '$conf' >/var/log/verifymcp-registry.log 2>&1 &"
  for _ in $(seq 1 30); do
    registry_ready && break
    sleep 0.5
  done
  registry_ready || { say "the container registry did not start; see /var/log/verifymcp-registry.log"; exit 7; }
  say "container registry ready at $REGISTRY_ADDR"
}

if [ "${1:-}" = postgres ]; then
  setup_postgres
  exit 0
fi
if [ "${1:-}" = registry ]; then
  setup_registry
  exit 0
fi

# 1. The Docker engine.
if ! docker info >/dev/null 2>&1; then
  if ! command -v dockerd >/dev/null 2>&1; then
    apt_install docker.io
  fi
  if ! docker info >/dev/null 2>&1; then
    say "starting dockerd"
    if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
      $SUDO systemctl start docker || true
    fi
    if ! docker info >/dev/null 2>&1; then
      $SUDO sh -c 'nohup dockerd >/var/log/verifymcp-dockerd.log 2>&1 &'
    fi
    for _ in $(seq 1 60); do
      docker info >/dev/null 2>&1 && break
      sleep 1
    done
    docker info >/dev/null 2>&1 || { say "dockerd did not start; see /var/log/verifymcp-dockerd.log"; exit 5; }
  fi
fi
say "docker engine $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})')"

# 2. debootstrap, for the sandbox base image when no registry can be reached.
if ! command -v debootstrap >/dev/null 2>&1; then
  apt_install debootstrap
fi

# 3. chromium, which the HTML report's test renders its pages in (headless).
if ! command -v cmark-gfm >/dev/null 2>&1; then
  apt_install cmark-gfm   # renders the Markdown report as GitHub would, for its test
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  apt_install chromium
fi

# 4. PostgreSQL, for the cache tests under the build tag "postgres".
setup_postgres

# 4b. A container registry on loopback, for the image tests.
setup_registry

# 5. The binary (static, so that it can also run as the egress helper).
say "building bin/verifymcp"
make --no-print-directory build >&2

# 6. The sandbox images, one per Python offered to PyPI targets (bookworm's 3.11,
#    trixie's 3.13); a no-op when the recipe is unchanged.
CA_ARGS=()
if [ -n "${VERIFYMCP_CA_BUNDLE:-}" ]; then CA_ARGS=(--ca-bundle "$VERIFYMCP_CA_BUNDLE"); fi
./bin/verifymcp sandbox build "${CA_ARGS[@]}" >&2
say "ready"
