#!/usr/bin/env bash
# Make sure Python 3.11 with venv, its headers and a C compiler are present (Debian).
# Prints the interpreter to use on its last line.
set -euo pipefail

python=""
for candidate in python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 \
     && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))' 2>/dev/null; then
    python=$(command -v "$candidate")
    break
  fi
done

missing=()
[ -n "$python" ] || missing+=(python3 python3-venv python3-dev)
if [ -n "$python" ]; then
  "$python" -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [ -f "$include/Python.h" ] || missing+=(python3-dev)
fi
command -v cc >/dev/null 2>&1 || missing+=(gcc)

if [ ${#missing[@]} -gt 0 ]; then
  echo "build prerequisites: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  [ -n "$python" ] || python=$(command -v python3)
fi
echo "$python"
