#!/usr/bin/env bash
# Set up a fresh Debian machine for verifymcp: a running Docker engine,
# debootstrap (to build the sandbox base where no container registry is
# reachable), the verifymcp binary and the sandbox image. Idempotent: each
# step is skipped when its result is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="/usr/local/go/bin:$PATH"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

say() { printf 'setup: %s\n' "$*" >&2; }

apt_install() {
  say "installing Debian packages: $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

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

# 3. The binary (static, so that it can also run as the egress helper).
say "building bin/verifymcp"
make --no-print-directory build >&2

# 4. The sandbox image (a no-op when the recipe is unchanged).
CA_ARGS=()
if [ -n "${VERIFYMCP_CA_BUNDLE:-}" ]; then CA_ARGS=(--ca-bundle "$VERIFYMCP_CA_BUNDLE"); fi
./bin/verifymcp sandbox build "${CA_ARGS[@]}" >&2
say "ready"
