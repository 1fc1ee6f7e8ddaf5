"""Memory and start-up readings of whole processes, for the ``footprint`` benchmark group.

PSS (proportional set size) is read as smem does, from ``/proc/<pid>/smaps_rollup``: a page
shared by n processes counts 1/n to each, so the sum over a process tree is what the tree
costs the machine. A tree is the process and every descendant (gunicorn's workers, the
station's worker, its ffmpeg decoders and encoders).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024


@dataclass(frozen=True)
class ProcessMemory:
    """One process: its id, its command line and its PSS in bytes."""

    pid: int
    command: str
    pss: int


def pss_bytes(pid: int) -> int:
    """Return a process's PSS in bytes (0 for a process that is gone)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return found
    for task in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
        except FileNotFoundError:
            continue
        found.extend(int(part) for part in text.split())
    return found


def process_tree(pid: int) -> Iterator[int]:
    """Yield ``pid`` and every descendant of it."""
    todo = [pid]
    while todo:
        current = todo.pop()
        yield current
        todo.extend(_children(current))


def command_of(pid: int) -> str:
    """Return a process's command line (its arguments joined by spaces)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return ""
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)


def tree_memory(pid: int) -> list[ProcessMemory]:
    """Return the PSS of ``pid`` and of each of its descendants."""
    return [ProcessMemory(p, command_of(p), pss_bytes(p)) for p in process_tree(pid)]


def total_pss(rows: list[ProcessMemory]) -> int:
    """Return the sum of the rows' PSS in bytes."""
    return sum(row.pss for row in rows)


def describe(rows: list[ProcessMemory]) -> str:
    """Return one line per process (PSS in MiB and command) and the total."""
    lines = [f"{row.pss / MIB:8.1f} MiB  {row.pid:>7}  {row.command[:90]}" for row in rows]
    lines.append(f"{total_pss(rows) / MIB:8.1f} MiB  total")
    return "\n".join(lines)
