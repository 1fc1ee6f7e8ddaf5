"""Time ours and GoAccess on a log with a real one's shape, as an operator runs each.

``python -m benchmarks.traffic_reallog_probe [LINES [LOG]]`` writes LINES lines (1,000,000 unless
given) over 400 days with ``tests.traffic.reallog`` (or reads LOG when given and present, writing
it there first when it is not), then, in turns:

- ours: ``alertstation traffic import --format combined LOG`` as a process into a fresh SQLite
  station (retention two years, the log's site host as ``site_hosts``), then ``GET`` the 30-day
  dashboard of the station's app, signed in; then the 400-day dashboard alone, three times;
- GoAccess: ``goaccess LOG --log-format=COMBINED --no-global-config -o report.json``.

It prints each reading in seconds, and the ratio (GoAccess's time / ours: above 1 means ours is
faster). ``make bench`` (``traffic.import_dashboard``, ``traffic.dashboard_400_days``) times the
same; this is for reading one change's effect without the whole benchmark run.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_traffic_analytics import OperatorStation, goaccess_report
from tests.traffic import reallog


def main(argv: list[str]) -> None:
    lines = int(argv[0]) if argv else 1_000_000
    with tempfile.TemporaryDirectory() as folder:
        log = Path(argv[1]) if len(argv) > 1 else Path(folder) / "access.log"
        if not log.exists():
            started = time.perf_counter()
            reallog.write(log, lines)
            print(f"generated {lines} lines in {time.perf_counter() - started:.1f} s")
        station = OperatorStation(Path(folder) / "ours")
        started = time.perf_counter()
        printed = station.import_log(log)
        imported = time.perf_counter() - started
        thirty = station.dashboard(30)
        ours = time.perf_counter() - started
        print(printed.strip().splitlines()[-1])
        readings = []
        for _ in range(3):
            started = time.perf_counter()
            station.dashboard(400)
            readings.append(time.perf_counter() - started)
        started = time.perf_counter()
        goaccess_report(log, Path(folder) / "report.json")
        theirs = time.perf_counter() - started
        print(
            f"ours: import {imported:.1f} s + 30-day dashboard {ours - imported:.2f} s = "
            f"{ours:.1f} s ({thirty['summary']['hits']} hits in 30 days); GoAccess {theirs:.1f} s;"
            f" ratio {theirs / ours:.2f}"
        )
        print("400-day dashboard: " + ", ".join(f"{value:.2f} s" for value in readings))
        station.engine.dispose()


if __name__ == "__main__":
    main(sys.argv[1:])
