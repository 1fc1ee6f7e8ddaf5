"""The leading worker's heartbeat: proof for the status page that periodic work is running.

The leader rewrites one row every ``INTERVAL`` seconds (host, pid, when it became leader, the
last beat). Readers call a worker ``running`` while the last beat is younger than ``STALE_AFTER``
and ``stale`` after that; ``None`` means no worker ever led this database. Without a running
worker nothing is polled, forwarded or aired, so operators should see it at a glance.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Connection, select

from alertstation.db.engine import begin_write
from alertstation.db.tables import worker_heartbeat

if TYPE_CHECKING:
    from alertstation.context import Station

INTERVAL: Final[float] = 15.0
STALE_AFTER: Final[float] = 60.0
_ROW: Final[int] = 1


def beat(station: Station) -> None:
    """Record that this process leads and is alive (the leader's job every ``INTERVAL`` s)."""
    now = station.clock()
    host, pid = socket.gethostname()[:255], os.getpid()
    with begin_write(station.engine) as conn:
        row = conn.execute(select(worker_heartbeat).where(worker_heartbeat.c.id == _ROW)).first()
        if row is None:
            conn.execute(
                worker_heartbeat.insert().values(
                    id=_ROW, host=host, pid=pid, leader_since=now, beat_at=now
                )
            )
            return
        values: dict[str, Any] = {"beat_at": now}
        if (row.host, row.pid) != (host, pid):
            values.update(host=host, pid=pid, leader_since=now)
        conn.execute(worker_heartbeat.update().where(worker_heartbeat.c.id == _ROW).values(values))


def read_heartbeat(conn: Connection, now: datetime) -> dict[str, Any] | None:
    """Return the last beat, its age and the worker state, or None when no worker ever led.

    Host and process id are left out: the answer is public.
    """
    row = conn.execute(select(worker_heartbeat).where(worker_heartbeat.c.id == _ROW)).first()
    if row is None:
        return None
    age = max(0.0, (now - row.beat_at).total_seconds())
    return {
        "state": "running" if age < STALE_AFTER else "stale",
        "beat_at": row.beat_at,
        "age_seconds": round(age, 1),
        "leader_since": row.leader_since,
    }
