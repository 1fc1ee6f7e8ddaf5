#!/usr/bin/env bash
# Fill assets/ with zone DBF snapshots from the offline mirror when it is present.
# The files are never committed (assets/*.dbf is git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
mirror="${ALERTSTATION_ZONE_MIRROR:-../shared/data/zones}"
mkdir -p assets
if [ -d "$mirror" ]; then
  copied=0
  for f in "$mirror"/*.dbf; do
    [ -e "$f" ] || continue
    if [ ! -e "assets/$(basename "$f")" ]; then
      cp "$f" assets/
      copied=$((copied + 1))
    fi
  done
  echo "assets: $copied zone file(s) copied from $mirror"
elif ls assets/*.dbf >/dev/null 2>&1; then
  echo "assets: no offline mirror at $mirror; keeping the zone files already in assets/"
else
  echo "assets: no offline mirror at $mirror; fetching zone files from the agency"
  .venv/bin/alertstation zones download \
    || echo "assets: download failed; upload a zone DBF on the Zones page or run it again later"
fi
