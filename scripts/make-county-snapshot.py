#!/usr/bin/env python3
"""Write the bundled county-name snapshot from the agency's partial-counties DBF.

Usage: make-county-snapshot.py [DBF] [--out FILE]

DBF defaults to the newest cs*.dbf in /work/shared/data/zones (or $ALERTSTATION_ZONE_DATA); the
output defaults to src/alertstation/zones/county-names.csv.gz. The records are read and checked
by the station's own partial-counties loader; the output is byte-identical for the same DBF, and
the script refuses to write one of 300 KB or more (``snapshot_script``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from snapshot_script import ROOT, run

from alertstation.zones.county_snapshot import SNAPSHOT_FILE, write_county_snapshot
from alertstation.zones.loader import load_partial_counties


def write(dbf: Path, out: Path) -> int:
    return write_county_snapshot(load_partial_counties(dbf), out)


if __name__ == "__main__":
    out = ROOT / "src/alertstation/zones" / SNAPSHOT_FILE
    sys.exit(run(__doc__.splitlines()[0], "cs*.dbf", out, write, "location codes"))
