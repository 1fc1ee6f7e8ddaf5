#!/usr/bin/env python3
"""Write the bundled county-name snapshot from the agency's partial-counties DBF.

Usage: make-county-snapshot.py [DBF] [--out FILE]

DBF defaults to the newest cs*.dbf in /work/shared/data/zones (or $ALERTSTATION_ZONE_DATA); the
output defaults to src/alertstation/zones/county-names.csv.gz. The records are read and checked
by the station's own partial-counties loader; the output is byte-identical for the same DBF, and
the script refuses to write one of 300 KB or more.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from alertstation.zones.county_snapshot import SNAPSHOT_FILE, write_county_snapshot  # noqa: E402
from alertstation.zones.loader import load_partial_counties  # noqa: E402

LIMIT = 300 * 1024


def default_dbf() -> Path:
    folder = Path(os.environ.get("ALERTSTATION_ZONE_DATA", "/work/shared/data/zones"))
    found = sorted(folder.glob("cs*.dbf"))
    if not found:
        raise SystemExit(f"no cs*.dbf in {folder}; name the DBF")
    return found[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dbf", nargs="?", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "src/alertstation/zones" / SNAPSHOT_FILE)
    args = parser.parse_args()
    dbf = args.dbf or default_dbf()
    count = write_county_snapshot(load_partial_counties(dbf), args.out)
    size = args.out.stat().st_size
    if size >= LIMIT:
        args.out.unlink()
        raise SystemExit(f"the snapshot would be {size} bytes, over the {LIMIT}-byte limit")
    print(f"wrote {args.out}: {count} location codes from {dbf.name}, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
