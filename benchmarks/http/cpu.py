"""Read the CPU time a gunicorn master and its workers have used, from /proc.

On a machine shared with other work, requests per second move with everyone else's load; the
CPU seconds the server spends per request move far less, so the table shows both.
"""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """Return the ids of the processes whose parent is ``pid`` (a scan of /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # ppid, the fourth field
            found.append(int(stat.parent.name))
    return found


def _own_seconds(pid: int) -> float:
    """Return utime + stime of one process (all its threads), 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14 and 15)


def tree_seconds(pid: int) -> float:
    """Return the CPU seconds used by ``pid`` and its live children (gunicorn's workers)."""
    return _own_seconds(pid) + sum(_own_seconds(child) for child in children(pid))


def thread_figures(pids: list[int]) -> tuple[float, float, int]:
    """Return (CPU seconds, system seconds, context switches) of every thread of ``pids``."""
    used = system = switches = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                fields = (task / "stat").read_text().rpartition(")")[2].split()
                status = (task / "status").read_text().splitlines()
            except OSError:
                continue
            used += int(fields[11]) + int(fields[12])  # utime, stime
            system += int(fields[12])
            switches += sum(int(line.split()[1]) for line in status if "ctxt_switches" in line)
    return used / _TICK, system / _TICK, switches


def worker_shares(before: dict[int, float], after: dict[int, float]) -> list[float]:
    """Return each worker's share of the CPU seconds its workers used between two readings
    (:func:`seconds_by_process`), largest first; [] when they used none."""
    used = [after.get(pid, 0.0) - seconds for pid, seconds in before.items()]
    total = sum(used)
    return sorted((part / total for part in used), reverse=True) if total > 0 else []


def seconds_by_process(pids: list[int]) -> dict[int, float]:
    """Return the CPU seconds each of ``pids`` has used (all its threads)."""
    return {pid: _own_seconds(pid) for pid in pids}
