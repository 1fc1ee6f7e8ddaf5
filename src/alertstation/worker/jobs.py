"""Periodic jobs the leader runs. Later domains add theirs to ``JOBS``.

A package of this layer that imports the worker (``operations`` reads its heartbeat) cannot be
imported here without a cycle: ``operations.jobs.STATION_JOBS`` adds its jobs to these, and is
the list the worker command runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import text

from alertstation.alerts.poll.poller import poll_job
from alertstation.alerts.service import expire_alerts_job
from alertstation.audio.alerts import PRUNE_INTERVAL as AUDIO_ALERT_PRUNE_INTERVAL
from alertstation.audio.alerts import prune_job as audio_alert_prune_job
from alertstation.audio.archive import PRUNE_INTERVAL as AUDIO_ARCHIVE_PRUNE_INTERVAL
from alertstation.audio.archive import prune_job as audio_archive_prune_job
from alertstation.audit.service import append_audit_checkpoint
from alertstation.context import Station
from alertstation.eas.airing.outputs.health import INTERVAL as OUTPUT_HEALTH_INTERVAL
from alertstation.eas.airing.outputs.health import output_health_job
from alertstation.eas.forward.service import forward_job, rwt_job
from alertstation.notifications.delivery import delivery_job
from alertstation.security.autoban.detectors import autoban_job
from alertstation.security.bans.service import deactivate_expired_job
from alertstation.security.hostban.service import heal_job
from alertstation.traffic.hostnames import INTERVAL as HOSTNAME_INTERVAL
from alertstation.traffic.hostnames import hostname_job
from alertstation.traffic.maintenance import JOB_INTERVAL as TRAFFIC_INTERVAL
from alertstation.traffic.maintenance import traffic_job
from alertstation.worker import heartbeat, upload_sweep


@dataclass(frozen=True)
class Job:
    """A function of the station run every ``interval`` seconds by the leader."""

    name: str
    interval: float
    run: Callable[[Station], None]


def checkpoint_sqlite_wal(station: Station) -> None:
    """Fold the SQLite write-ahead log back into the database so it does not grow unbounded."""
    if station.engine.dialect.name != "sqlite":
        return
    with station.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def ping_database(station: Station) -> None:
    """Keep the leader's view of the database fresh; a failure here shows in the logs early."""
    with station.engine.connect() as conn:
        conn.execute(text("SELECT 1"))


JOBS: tuple[Job, ...] = (
    Job("worker-heartbeat", heartbeat.INTERVAL, heartbeat.beat),
    Job("sqlite-wal-checkpoint", 600.0, checkpoint_sqlite_wal),
    Job("database-ping", 60.0, ping_database),
    Job("audit-checkpoint", 3600.0, append_audit_checkpoint),
    Job("ban-expiry", 60.0, deactivate_expired_job),
    Job("alert-expiry", 60.0, expire_alerts_job),
    Job("hostban-self-heal", 60.0, heal_job),
    Job("alert-poll", 5.0, poll_job),
    Job("eas-forward", 5.0, forward_job),
    Job("eas-rwt", 30.0, rwt_job),
    Job("eas-output-health", OUTPUT_HEALTH_INTERVAL, output_health_job),
    Job("notification-delivery", 5.0, delivery_job),
    Job("security-autoban", 300.0, autoban_job),
    Job("stale-upload-sweep", upload_sweep.INTERVAL, upload_sweep.sweep_job),
    Job("traffic-maintenance", TRAFFIC_INTERVAL, traffic_job),
    Job("traffic-hostnames", HOSTNAME_INTERVAL, hostname_job),
    Job("audio-alert-retention", AUDIO_ALERT_PRUNE_INTERVAL, audio_alert_prune_job),
    Job("audio-archive-retention", AUDIO_ARCHIVE_PRUNE_INTERVAL, audio_archive_prune_job),
)
