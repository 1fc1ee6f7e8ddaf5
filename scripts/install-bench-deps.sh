#!/usr/bin/env bash
# Install the system packages `make bench` needs, only those that are missing.
# Safe to run again; needs root (or sudo) only when something must be installed.
set -euo pipefail

missing=()
# Both-backend groups run on a throwaway PostgreSQL cluster (scripts/pg_throwaway.py), whose
# server runs as the postgres account through runuser when started as root.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 \
  || missing+=(postgresql)
command -v runuser >/dev/null 2>&1 || missing+=(util-linux)
# Peers: the SAME decoder runs against multimon-ng, which also reads back the rendered messages.
command -v multimon-ng >/dev/null 2>&1 || missing+=(multimon-ng)
# The decoder's validity corpus is mixed and re-encoded through ffmpeg.
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
# HTTP load on loopback comes from wrk; access-log analysis is compared with GoAccess.
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v goaccess >/dev/null 2>&1 || missing+=(goaccess)

if [ ${#missing[@]} -eq 0 ]; then
  echo "benchmark dependencies: all present"
  exit 0
fi

echo "benchmark dependencies: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The Debian package starts a system cluster; the benchmarks use their own throwaway one.
if command -v pg_lsclusters >/dev/null 2>&1; then
  $sudo systemctl disable --now postgresql >/dev/null 2>&1 || true
fi
