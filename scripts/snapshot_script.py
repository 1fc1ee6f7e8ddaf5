"""What the snapshot scripts share: finding the agency's DBF, the options and the size limit.

``make-zone-snapshot.py`` and ``make-county-snapshot.py`` each name their DBF pattern, default
output and how to write the snapshot; ``run`` does the rest. The DBF defaults to the newest file
matching the pattern in /work/shared/data/zones (or $ALERTSTATION_ZONE_DATA); a snapshot of
``LIMIT`` bytes or more is removed and refused.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

LIMIT = 300 * 1024
#: Writes the snapshot of a DBF to a file; returns how many entries it wrote.
Writer = Callable[[Path, Path], int]


def default_dbf(pattern: str) -> Path:
    """Return the newest DBF matching ``pattern`` in the zone-data folder, or exit naming it."""
    folder = Path(os.environ.get("ALERTSTATION_ZONE_DATA", "/work/shared/data/zones"))
    found = sorted(folder.glob(pattern))
    if not found:
        raise SystemExit(f"no {pattern} in {folder}; name the DBF")
    return found[-1]


def run(description: str, pattern: str, default_out: Path, write: Writer, noun: str) -> int:
    """Parse the options, write the snapshot within the size limit and say what was written."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("dbf", nargs="?", type=Path)
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args()
    dbf = args.dbf or default_dbf(pattern)
    count = write(dbf, args.out)
    size = args.out.stat().st_size
    if size >= LIMIT:
        args.out.unlink()
        raise SystemExit(f"the snapshot would be {size} bytes, over the {LIMIT}-byte limit")
    print(f"wrote {args.out}: {count} {noun} from {dbf.name}, {size} bytes")
    return 0
