#!/usr/bin/env python3
"""Write the bundled land-zone snapshot from the agency's public-zone DBF.

Usage: make-zone-snapshot.py [DBF] [--out FILE]

DBF defaults to the newest z_*.dbf in /work/shared/data/zones (or $ALERTSTATION_ZONE_DATA); the
output defaults to src/alertstation/zones/land-zones.csv.gz. The records are read and checked by
the station's own DBF loader; the output is byte-identical for the same DBF, and the script
refuses to write one of 300 KB or more (``snapshot_script``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from snapshot_script import ROOT, run

from alertstation.zones.loader import load_dbf
from alertstation.zones.snapshot import SNAPSHOT_FILE, write_snapshot


def write(dbf: Path, out: Path) -> int:
    return write_snapshot([r for r in load_dbf(dbf) if r.zone_type == "public"], out)


if __name__ == "__main__":
    out = ROOT / "src/alertstation/zones" / SNAPSHOT_FILE
    sys.exit(run(__doc__.splitlines()[0], "z_*.dbf", out, write, "records"))
