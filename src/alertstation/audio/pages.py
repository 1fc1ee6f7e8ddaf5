"""Pages of the audio package: source cards, audio alerts and received SAME messages.

The pages render what the API answers (no secret ever reaches a template) and
``web/static/js/audio.js`` keeps them live: the source cards poll ``/api/audio/sources``.
"""

from __future__ import annotations

import falcon
from sqlalchemy import select

from alertstation.audio import alerts, archive, cards, received
from alertstation.audio.settings import get_audio_settings
from alertstation.audio.sources import list_sources
from alertstation.audio.tables import audio_sources, received_eas_messages
from alertstation.context import Station

PAGE_ROWS = 100
ARCHIVE_ROWS = 20
METER_MARKS = (-60, -40, -30, -20, -10, -6, -3, 0)  # the dBFS scale under each level meter


class SourcesPage:
    """GET /audio: a card per source (state, meter, ICY title, last header, actions, archive).

    Below the cards, the form that adds and edits sources; it posts to the JSON API.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        with station.engine.connect() as conn:
            sources = cards.source_views(conn, list_sources(conn))
            settings = get_audio_settings(conn)
        data_dir = station.settings.data_dir
        archives = {
            source["id"]: [
                segment.as_dict()
                for segment in archive.list_segments(data_dir, source["id"])[:ARCHIVE_ROWS]
            ]
            for source in sources
        }
        station.templates.page(
            req,
            resp,
            "audio.html",
            sources=sources,
            meter_marks=METER_MARKS,
            archives=archives,
            archive_enabled=settings.archive_enabled,
            archive_profile=settings.archive_stream_profile.as_dict(),
            archive_segment_minutes=settings.archive_segment_minutes,
            archive_retention_days=settings.archive_retention_days,
        )


class AlertsPage:
    """GET /audio/alerts: open and resolved audio alerts; acknowledge, resolve, resolve all."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            open_page = alerts.list_alerts(conn, "open", PAGE_ROWS)
            resolved = alerts.list_alerts(conn, "resolved", PAGE_ROWS)
            names = dict(conn.execute(select(audio_sources.c.id, audio_sources.c.name)).all())
        self._station.templates.page(
            req,
            resp,
            "audio_alerts.html",
            open_alerts=[alerts.alert_as_dict(row) for row in open_page.rows],
            open_total=open_page.total,
            resolved_alerts=[alerts.alert_as_dict(row) for row in resolved.rows],
            names=names,
        )


class ReceivedPage:
    """GET /eas/received: the SAME messages the monitor heard, newest first."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = received_eas_messages.c
        with self._station.engine.connect() as conn:
            rows = conn.execute(
                select(received_eas_messages)
                .order_by(c.received_at.desc(), c.id.desc())
                .limit(PAGE_ROWS)
            ).all()
            names = dict(conn.execute(select(audio_sources.c.id, audio_sources.c.name)).all())
            messages = received.received_view(conn, list(rows))
            refused = received.list_refused(conn)
        self._station.templates.page(
            req,
            resp,
            "eas_received.html",
            messages=messages,
            refused=refused,
            names=names,
        )
