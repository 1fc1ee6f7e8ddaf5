"""Print, for each benchmark group, our figure, the named peer's figure and the ratio.

Reads the JSON written by ``pytest --benchmark-json``. A benchmark marks itself with
``benchmark.extra_info["role"]`` (``"ours"`` or ``"peer"``) and ``extra_info["peer"]`` (the
peer's name); both sides of a comparison share ``benchmark.group``. Exits 1 when a group lacks
one side or no group ran, so ``make bench`` fails rather than print a report with a ratio missing.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

INCOMPLETE = "incomplete: needs one 'ours' and one 'peer' benchmark"


def _fmt(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:8.2f} {unit}"
    return f"{seconds / 1e-9:8.1f} ns"


def report(path: Path) -> list[str]:
    """Return the report lines for one benchmark JSON file."""
    data = json.loads(path.read_text())
    groups: dict[str, dict[str, dict]] = defaultdict(dict)
    for bench in data["benchmarks"]:
        role = bench.get("extra_info", {}).get("role")
        if role in ("ours", "peer"):
            groups[bench.get("group") or bench["name"]][role] = bench
    lines = [f"{'group':32} {'ours (median)':>14} {'peer (median)':>14} {'ratio':>8}  peer"]
    for group in sorted(groups):
        ours, peer = groups[group].get("ours"), groups[group].get("peer")
        if not ours or not peer:
            lines.append(f"{group:32} {INCOMPLETE}")
            continue
        ours_s, peer_s = ours["stats"]["median"], peer["stats"]["median"]
        name = peer["extra_info"].get("peer", "peer")
        lines.append(
            f"{group:32} {_fmt(ours_s):>14} {_fmt(peer_s):>14} {peer_s / ours_s:7.2f}x  {name}"
        )
    lines.append("ratio = peer time / our time (above 1 means ours is faster)")
    return lines


def _amount(value: float, unit: str) -> str:
    return f"{value:9.2f} {unit}" if unit != "s" else _fmt(value)


def readings(path: Path) -> list[str]:
    """Return the lines of the readings (memory, start-up) held against a figure and a goal.

    A benchmark lists them in ``extra_info["readings"]``: ``label``, ``ours``, ``against``,
    ``unit``, ``goal`` (how it reads) and ``max_ratio`` (ours / against must not exceed it).
    """
    data = json.loads(path.read_text())
    rows = [
        row
        for bench in data["benchmarks"]
        for row in bench.get("extra_info", {}).get("readings", [])
    ]
    if not rows:
        return []
    lines = [f"{'reading':36} {'ours':>14} {'against':>14} {'ratio':>8}  goal"]
    for row in sorted(rows, key=lambda r: r["label"]):
        ratio = row["ours"] / row["against"]
        verdict = "met" if ratio <= row["max_ratio"] else "MISSED"
        lines.append(
            f"{row['label']:36} {_amount(row['ours'], row['unit']):>14} "
            f"{_amount(row['against'], row['unit']):>14} {ratio:7.2f}x  {row['goal']} ({verdict})"
        )
    lines.append("ratio = ours / against (the goal is a most)")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: report.py BENCHMARK.json", file=sys.stderr)
        return 2
    path = Path(argv[0])
    if not path.is_file():
        print(f"report: {path} not found: no benchmark finished", file=sys.stderr)
        return 1
    lines = report(path)
    print("\n".join(lines))
    extra = readings(path)
    if extra:
        print("\n".join(["", *extra]))
    if (len(lines) == 2 and not extra) or any(INCOMPLETE in line for line in lines):
        print("report: a group is missing a side, or no group ran", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
