"""Split the access-log import's time into its stages, on the benchmark's own kind of log.

``python -m benchmarks.traffic_import_probe [LINES [AGENTS]]`` writes a combined log of LINES
lines (200,000 unless given) with the benchmark's generator (its five user agents, or AGENTS
distinct ones from ``accesslog.varied_agents``, as a real log has), imports it into a fresh
migrated SQLite database as ``traffic.import_dashboard`` does (every line, rollups tallied on the
way, then the 31-day dashboard), times GoAccess on the same file, and prints the wall time of
each stage per line. The stages are timed by wrapping the functions that run them:

- ``BulkInsert.run_columns``: the rows' insert (values converted column by column; on SQLite
  bound by the compiled ``staged_insert``, else ``executemany``);
- ``RowTally.end_batch``: tallying the days whose rows have all arrived, for the day rollups
  (done by the reader: with a child reader, not in this process, so not timed);
- ``ImportRollups.finish``: storing the rollups of the days tallied;
- ``reports.dashboard``: the 30-day dashboard;
- the rest of ``BatchWriter.write`` (transaction, duplicate count, invalidation);
- what is left of the whole: reading, parsing and enriching each line, its key, and handing it
  to the tally (a log of ``importer.PARALLEL_BYTES`` or more is read in a child process, so
  this is then the time spent waiting for its rows).

It is for finding where the import's time goes; ``make bench`` gives the ratio it reports.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alertstation.db import bulk
from alertstation.traffic import import_rollups, importer, reports
from benchmarks.bench_traffic_analytics import GOACCESS, fresh_database, ours_import_and_dashboard
from tests.traffic import accesslog


def timed(owner: Any, name: str, spent: dict[str, float]) -> None:
    """Replace ``owner.name`` with a wrapper adding its wall time to ``spent[name]``."""
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - started

    setattr(owner, name, wrapper)


def main(argv: list[str]) -> None:
    lines = int(argv[0]) if argv else 200_000
    varied = accesslog.varied_agents(int(argv[1])) if len(argv) > 1 else None
    folder = Path(tempfile.mkdtemp(prefix="import-probe-"))
    try:
        end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        log = accesslog.write(folder / "access.log", lines, end, agents=varied)
        spent: dict[str, float] = {}
        timed(bulk.BulkInsert, "run_columns", spent)
        timed(import_rollups.RowTally, "end_batch", spent)
        timed(import_rollups.ImportRollups, "finish", spent)
        timed(importer.BatchWriter, "write", spent)
        timed(reports, "dashboard", spent)
        engine = fresh_database(folder / "db")
        started = time.perf_counter()
        ours_import_and_dashboard(engine, log, end)
        whole = time.perf_counter() - started
        engine.dispose()
        writer_rest = spent["write"] - spent["run_columns"]
        tallied = spent.get("end_batch", 0.0)
        stages = {
            "read, parse, enrich, key": whole
            - spent["write"]
            - tallied
            - spent["finish"]
            - spent["dashboard"],
            "insert (run_columns)": spent["run_columns"],
            "tally batches (end_batch)": tallied,
            "rest of each batch's write": writer_rest,
            "store rollups (finish)": spent["finish"],
            "dashboard": spent["dashboard"],
        }
        for name, seconds in stages.items():
            print(f"{name:30s} {seconds / lines * 1e6:6.1f} µs a line")
        print(f"{'whole':30s} {whole / lines * 1e6:6.1f} µs a line ({whole:.2f} s)")
        if GOACCESS:
            started = time.perf_counter()
            command = [GOACCESS, str(log), "--log-format=COMBINED", "--no-query-string"]
            command += ["--no-progress", "-o", str(folder / "report.json")]
            subprocess.run(command, check=True, capture_output=True)
            seconds = time.perf_counter() - started
            print(f"{'GoAccess':30s} {seconds / lines * 1e6:6.1f} µs a line ({seconds:.2f} s)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
