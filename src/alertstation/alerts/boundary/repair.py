"""Repair an uploaded boundary in a child process with a memory and a time limit.

``make_valid`` and ``unary_union`` over shapes that cross themselves many times can take minutes
of CPU and gigabytes of memory from an input of a few hundred kilobytes. Run in a web worker, one
such upload would stall it; here the work runs in a child interpreter (``main``), which limits
its own address space (``RLIMIT_AS``) and CPU time (``RLIMIT_CPU``) before it imports anything,
and is killed at the wall-clock deadline. The area comes back as WKB. A child that runs out of
either is answered with a ValueError saying so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

from alertstation import lazy
from alertstation.alerts.boundary.geometry import repaired_area

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

wkb = lazy.module("shapely.wkb")

REPAIR_SECONDS = 30  # wall clock and CPU time for one repair
REPAIR_MEMORY_BYTES = 1024 * 1024 * 1024  # the child's address space
_EXIT_INVALID = 3  # the child's exit status for a document that is not a boundary
# The child sets its limits before it imports anything, so they cover the geometry library too.
_CHILD = """import resource, sys
seconds, memory = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
from alertstation.alerts.boundary.repair import main
sys.exit(main())
"""


def repair_in_child(
    data: bytes, *, seconds: int = REPAIR_SECONDS, memory_bytes: int = REPAIR_MEMORY_BYTES
) -> BaseGeometry:
    """Return ``geometry.repaired_area(data)`` computed in a limited child process.

    Raises ValueError with the child's message for a bad document, and a ValueError saying the
    limits were reached when the child ran out of time or memory.
    """
    command = [sys.executable, "-c", _CHILD, str(seconds), str(memory_bytes)]
    limit_text = f"{seconds} s or {memory_bytes // (1024 * 1024)} MiB"
    try:
        done = subprocess.run(  # noqa: S603  (our own module, no shell, fixed arguments)
            command,
            input=data,
            capture_output=True,
            timeout=seconds,
            check=False,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        )
    except subprocess.TimeoutExpired:
        raise ValueError(
            f"boundary: repairing the shapes took more than {limit_text}; simplify it"
        ) from None
    if done.returncode == _EXIT_INVALID:
        raise ValueError(done.stderr.decode("utf-8", "replace").strip()[:500])
    if done.returncode != 0 or not done.stdout:
        raise ValueError(f"boundary: repairing the shapes took more than {limit_text}; simplify it")
    area: BaseGeometry = wkb.loads(done.stdout)
    return area


def main() -> int:
    """The child, once its limits are set: read the document on stdin, write the area's WKB."""
    data = sys.stdin.buffer.read()
    try:
        area = repaired_area(data)
    except ValueError as ex:
        sys.stderr.write(str(ex))
        return _EXIT_INVALID
    sys.stdout.buffer.write(area.wkb)
    return 0
