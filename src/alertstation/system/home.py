"""What the overview page (``/``) shows, as an ENDEC's front panel does: the forwarding mode and
how many rules differ from it, the approvals waiting, what is on the air, the outputs' health,
open audio alerts, the last received messages, compliance alarms and the next weekly test; then
the area's active alerts, alert source health, audio sources, the last EAS messages and a
first-run checklist of what to configure next.

The station summary's items are read by :mod:`alertstation.system.summary`. Everything is read
in one connection from the services of the layers below; nothing is written.
Secrets never reach the page: audio source credentials and source URLs are not read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from alertstation.alerts.poll.sources import health_of, list_sources
from alertstation.alerts.service import get_alert_settings, list_alerts
from alertstation.audio.tables import audio_sources
from alertstation.context import Station
from alertstation.eas.airing import settings as airing_settings
from alertstation.eas.archive import list_rows as list_archive
from alertstation.eas.forward import pending
from alertstation.eas.forward.rulebook import rules_saved
from alertstation.eas.forward.rwt import schedule_view
from alertstation.system import summary
from alertstation.worker.heartbeat import read_heartbeat

ALERTS_SHOWN = 10
MESSAGES_SHOWN = 5


@dataclass(frozen=True)
class ChecklistItem:
    """One step of setting a station up: done or not, and where to do it."""

    key: str
    title: str
    done: bool
    hint: str
    href: str
    permission: str | None = None  # who can act on it; others see the step without the link


@dataclass(frozen=True)
class HomeOverview:
    """Everything the overview page shows."""

    area_alerts: list[Any]
    area_alert_count: int
    other_alert_count: int
    sources: list[dict[str, Any]]
    audio: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    worker: dict[str, Any] | None
    checklist: list[ChecklistItem] = field(default_factory=list)
    forwarding: dict[str, Any] = field(default_factory=dict)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    on_air: dict[str, Any] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    audio_alerts: list[dict[str, Any]] = field(default_factory=list)
    audio_alert_count: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)
    alarms: list[dict[str, Any]] = field(default_factory=list)
    weekly_test: dict[str, Any] = field(default_factory=dict)

    @property
    def steps_left(self) -> int:
        """Return how many checklist steps are not done yet."""
        return sum(not item.done for item in self.checklist)


def _audio(conn: Connection) -> list[dict[str, Any]]:
    c = audio_sources.c
    query = select(
        c.id, c.name, c.kind, c.enabled, c.state, c.error_message, c.level_dbfs, c.last_audio_at
    ).order_by(c.name)
    return [dict(row._mapping) for row in conn.execute(query)]


def _checklist(
    station: Station, conn: Connection, *, sources: int, worker: dict[str, Any] | None
) -> list[ChecklistItem]:
    alert_settings = get_alert_settings(conn)
    airing = airing_settings.load(conn)
    audio = conn.execute(select(func.count()).select_from(audio_sources)).scalar_one()
    return [
        ChecklistItem(
            "zones",
            "Load the zone catalog",
            len(station.zones.index().zones) > 0,
            "Upload the agency's zone files, or run alertstation zones download.",
            "/admin/zones",
            "system.configure",
        ),
        ChecklistItem(
            "area",
            "Choose the broadcast area",
            bool(alert_settings.zone_codes),
            "The county and zone codes whose alerts this station airs.",
            "/admin/location_settings",
            "system.configure",
        ),
        ChecklistItem(
            "sources",
            "Add an alert source",
            sources > 0,
            "A CAP, IPAWS or JSON feed the worker polls, added on the Alert feeds page.",
            "/admin/poller",
        ),
        ChecklistItem(
            "worker",
            "Start the worker",
            bool(worker and worker["state"] == "running"),
            "Nothing is polled, forwarded or aired until alertstation worker (or run) is up.",
            "/status",
        ),
        ChecklistItem(
            "output",
            "Set up an audio output",
            airing.icecast_enabled or airing.alsa_enabled,
            "Where EAS messages are played: an Icecast stream or an ALSA sound card.",
            "/admin/eas_settings",
            "system.configure",
        ),
        ChecklistItem(
            "forward",
            "Decide what is forwarded",
            rules_saved(conn),
            "Forwarding rules say what airs by itself, what waits for approval, what is held.",
            "/eas/forward",
            "system.configure",
        ),
        ChecklistItem(
            "audio",
            "Monitor an audio source",
            audio > 0,
            "A stream or receiver the station listens to for EAS messages.",
            "/audio",
            "receivers.configure",
        ),
    ]


def home_overview(station: Station, now: datetime) -> HomeOverview:
    """Gather the overview for ``now``."""
    with station.engine.connect() as conn:
        active = list_alerts(conn, now=now)
        in_area = [row for row in active if row.in_area]
        rows = list_sources(conn)
        sources = [
            {
                "name": row.name,
                "kind": row.kind,
                "health": health_of(row, now),
                "last_success": row.last_success_at,
                "failures": row.consecutive_failures,
            }
            for row in rows
        ]
        worker = read_heartbeat(conn, now)
        open_audio = summary.open_audio_alerts(conn)
        return HomeOverview(
            area_alerts=in_area[:ALERTS_SHOWN],
            area_alert_count=len(in_area),
            other_alert_count=len(active) - len(in_area),
            sources=sources,
            audio=_audio(conn),
            messages=list_archive(conn, limit=MESSAGES_SHOWN),
            worker=worker,
            checklist=_checklist(station, conn, sources=len(rows), worker=worker),
            forwarding=summary.forwarding(conn),
            approvals=pending.list_open(conn),
            on_air=summary.on_air(conn),
            outputs=summary.output_health(conn, now),
            audio_alerts=open_audio[0],
            audio_alert_count=open_audio[1],
            received=summary.recent_received(conn),
            alarms=summary.compliance_alarms(conn),
            weekly_test=schedule_view(conn, now),
        )
