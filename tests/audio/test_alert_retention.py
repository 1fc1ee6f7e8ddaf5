"""Resolved audio alerts are pruned after the audio-alert retention days; open ones stay."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from alertstation.audio import alerts
from alertstation.audio.tables import audio_alerts
from alertstation.db.engine import begin_write
from alertstation.settings_admin import sections
from alertstation.worker.jobs import JOBS
from tests.audio.test_alerts_api import a_source
from tests.support import StationHarness


def remaining(station: StationHarness) -> set[int]:
    with station.engine.connect() as conn:
        return set(conn.scalars(select(audio_alerts.c.id)))


def test_the_worker_prunes_resolved_alerts_past_the_retention(
    audio_station: StationHarness,
) -> None:
    assert any(job.run is alerts.prune_job for job in JOBS)
    source = a_source(audio_station)
    now = audio_station.clock()
    with begin_write(audio_station.engine) as conn:
        ids = [
            alerts.open_alert(conn, source, kind, now - timedelta(days=100))
            for kind in alerts.KINDS
        ]
        old, recent, still_open = ids
        alerts.resolve(conn, old, "ops", now - timedelta(days=40))
        alerts.resolve(conn, recent, "ops", now - timedelta(days=10))
    station = audio_station.app.station
    assert alerts.prune_expired(station) == 1  # the default keeps 30 days
    assert remaining(audio_station) == {recent, still_open}
    with begin_write(audio_station.engine) as conn:
        sections.save(
            conn,
            sections.APPLICATION,
            {"audio_alert_retention_days": 7},
            updated_by="ops",
            now=now,
        )
    assert alerts.prune_expired(station) == 1
    assert remaining(audio_station) == {still_open}  # an open alert is never pruned
