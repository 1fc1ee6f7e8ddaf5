#!/usr/bin/env bash
# Install the system packages the test suite needs, only those that are missing, then the npm
# packages of the browser tests (axe-core) at the versions tests/browser/package-lock.json pins.
# Safe to run again; needs root (or sudo) only when a system package must be installed.
set -euo pipefail

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 \
  || missing+=(postgresql)
command -v runuser >/dev/null 2>&1 || missing+=(util-linux)
# PDF exports (audit log, EAS station log) are opened with pdfinfo and read back with pdftotext.
{ command -v pdfinfo && command -v pdftotext; } >/dev/null 2>&1 || missing+=(poppler-utils)
# The SAME encoder's output is checked with an independent decoder; voices come from espeak-ng.
command -v multimon-ng >/dev/null 2>&1 || missing+=(multimon-ng)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v fail2ban-server >/dev/null 2>&1 || missing+=(fail2ban)
# The clock-sensitive tests run again with the clock moved a year ahead.
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
[ -x /usr/sbin/visudo ] || missing+=(sudo)  # visudo checks the privilege rules
# Traffic analytics: the access-log import is checked against GoAccess's own counts.
command -v goaccess >/dev/null 2>&1 || missing+=(goaccess)
# MP3 and other compressed recordings reach the SAME decoder through ffmpeg.
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
# The airing queue's Icecast source client is tested against a real Icecast server.
[ -x /usr/bin/icecast2 ] || missing+=(icecast2)
# Browser tests drive Debian's Chromium; never a browser a test tool downloads itself.
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
# The deployment files are checked by their own tools: systemd-analyze verify and nginx -t.
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
[ -x /usr/sbin/nginx ] || missing+=(nginx)
# The multi-host test (tests/multihost) builds its hosts as network namespaces with ip(8); it
# needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), and fails under CI=true without them.
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
# axe-core (the accessibility checker the browser tests inject) comes from npm.
command -v npm >/dev/null 2>&1 || missing+=(npm)

# The npm packages of the browser tests, at the versions tests/browser/package-lock.json pins.
install_npm_test_packages() {
  local dir pinned installed
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
  pinned="$(sed -n 's/.*"axe-core": "\([0-9.]*\)".*/\1/p' "$dir/package.json")"
  installed="$(sed -n 's/^  "version": "\([0-9.]*\)".*/\1/p' \
    "$dir/node_modules/axe-core/package.json" 2>/dev/null || true)"
  if [ -n "$pinned" ] && [ "$installed" = "$pinned" ]; then
    return 0
  fi
  echo "test dependencies: installing axe-core $pinned from npm"
  npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error
}

if [ ${#missing[@]} -eq 0 ]; then
  install_npm_test_packages
  echo "test dependencies: all present"
  exit 0
fi

echo "test dependencies: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The Debian package starts a system cluster; the tests use their own throwaway one.
if command -v pg_lsclusters >/dev/null 2>&1; then
  $sudo systemctl disable --now postgresql >/dev/null 2>&1 || true
fi
install_npm_test_packages
