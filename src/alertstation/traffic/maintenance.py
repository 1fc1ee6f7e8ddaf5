"""Keeping the request log: pruning past the retention days, rolling up hours, the worker job.

Rows are pruned at whole hours (everything before the hour that holds ``now - retention_days``),
so no rolled-up hour is ever left half pruned. Every change that removes or rewrites rows bumps
the ``traffic_rows`` generation, which the dashboard cache checks.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine

from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.traffic import daily, rollups
from alertstation.traffic.settings import load_settings
from alertstation.traffic.tables import HOUR_SECONDS, web_request_logs, web_request_rollups

ROWS_GENERATION = "traffic_rows"
JOB_INTERVAL = 3600.0


def rows_changed(conn: Connection) -> None:
    """Tell every process's dashboard cache that stored rows were removed or rewritten."""
    bump_generation(conn, ROWS_GENERATION)


def prune_cutoff_hour(now: datetime, retention_days: int) -> int:
    """Return the first hour ``prune`` keeps: the hour that holds ``now - retention_days``."""
    return rollups.hour_of(now - timedelta(days=retention_days))


def prune(conn: Connection, now: datetime, retention_days: int) -> int:
    """Delete the rows and rollups of the hours before ``now - retention_days``; return rows."""
    cutoff_hour = prune_cutoff_hour(now, retention_days)
    deleted = conn.execute(
        web_request_logs.delete().where(web_request_logs.c.ts < cutoff_hour * HOUR_SECONDS)
    ).rowcount
    conn.execute(web_request_rollups.delete().where(web_request_rollups.c.hour < cutoff_hour))
    daily.prune_before(conn, cutoff_hour)
    if deleted:
        rows_changed(conn)
    return int(deleted or 0)


def maintain(engine: Engine, now: datetime) -> int:
    """Prune past the retention days, then roll up the complete hours; return rows pruned."""
    with begin_write(engine) as conn:
        pruned = prune(conn, now, load_settings(conn).retention_days)
    rollups.ensure_rolled_up(engine, now)
    return pruned


def traffic_job(station: Station) -> None:
    """The worker's hourly traffic job."""
    maintain(station.engine, station.clock())
