"""Helpers of the auto-forward tests: real CAP 1.2 messages, settings, archive and audit reads.

(No tests here; the module name keeps it beside the tests that use it.)
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from sqlalchemy import Engine, select

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.service import ImportProblem, set_alert_settings
from alertstation.alerts.store import IngestResult
from alertstation.alerts.tables import cap_alerts, eas_forward_queue
from alertstation.audit.tables import audit_logs
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.forward.config import save_forward_settings
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.eas.forward.tables import eas_forward_airings
from alertstation.eas.tables import eas_archive

SENDER = "w-nws.webmaster@noaa.gov"
OFFICE = "KOUN"


def cap_time(when: datetime) -> str:
    """Return a CAP timestamp (``2026-11-21T12:00:00-00:00`` style, here with +00:00)."""
    return when.astimezone(UTC).replace(microsecond=0).isoformat()


def vtec(
    action: str, etn: int, start: datetime, end: datetime, phen: str = "TO", sig: str = "W"
) -> str:
    """Return a P-VTEC string of the test office."""
    fmt = "%y%m%dT%H%MZ"
    return (
        f"/O.{action}.{OFFICE}.{phen}.{sig}.{etn:04d}."
        f"{start.astimezone(UTC).strftime(fmt)}-{end.astimezone(UTC).strftime(fmt)}/"
    )


def cap_message(
    identifier: str,
    sent: datetime,
    *,
    expires: datetime | None,
    event_code: str = "TOR",
    event: str = "Tornado Warning",
    msg_type: str = "Alert",
    status: str = "Actual",
    vtec_strings: Iterable[str] = (),
    refs: Iterable[tuple[str, datetime]] = (),
    same: Iterable[str] = ("040109",),
    ugc: Iterable[str] = ("OKC109",),
    headline: str = "Tornado Warning issued by NWS Norman OK",
    description: str = "At 514 PM CDT, a tornado was located near Yukon...moving east.",
) -> bytes:
    """Return one CAP 1.2 ``<alert>`` document as the agency sends it."""
    references = " ".join(f"{SENDER},{ident},{cap_time(when)}" for ident, when in refs)
    geocodes = "".join(
        f"<geocode><valueName>{name}</valueName><value>{code}</value></geocode>"
        for name, codes in (("SAME", same), ("UGC", ugc))
        for code in codes
    )
    parameters = "".join(
        f"<parameter><valueName>VTEC</valueName><value>{value}</value></parameter>"
        for value in vtec_strings
    )
    expiry = f"<expires>{cap_time(expires)}</expires>" if expires else ""
    text = f"""<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2">
  <identifier>{escape(identifier)}</identifier>
  <sender>{SENDER}</sender>
  <sent>{cap_time(sent)}</sent>
  <status>{status}</status>
  <msgType>{msg_type}</msgType>
  <scope>Public</scope>
  {f"<references>{references}</references>" if references else ""}
  <info>
    <language>en-US</language>
    <category>Met</category>
    <event>{escape(event)}</event>
    <urgency>Immediate</urgency>
    <severity>Extreme</severity>
    <certainty>Observed</certainty>
    <eventCode><valueName>SAME</valueName><value>{event_code}</value></eventCode>
    <effective>{cap_time(sent)}</effective>
    {expiry}
    <senderName>NWS Norman OK</senderName>
    <headline>{escape(headline)}</headline>
    <description>{escape(description)}</description>
    {parameters}
    <area><areaDesc>Oklahoma, OK</areaDesc>{geocodes}</area>
  </info>
</alert>
"""
    return text.encode()


def ingest(station: Station, data: bytes, now: datetime) -> IngestResult:
    """Import one CAP message as the poller would (not explicit); return its result."""
    (result,) = import_messages(station.engine, data, "test", explicit=False, now=now)
    assert not isinstance(result, ImportProblem), result
    return result


def configure(
    station: Station,
    *,
    zone_codes: Iterable[str] = ("040109",),
    forward_events: Iterable[str] = ("TOR", "SVR"),
    **forward: Any,
) -> None:
    """Set the broadcast area, the forwarding settings and a rule airing ``forward_events``.

    The rules are what a station upgraded from 2.10 with auto-forward on gets.
    """
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=list(zone_codes), forward_events=list(forward_events))
        changes = {"include_voice": False, **forward}
        save_forward_settings(conn, changes, by="test", now=station.clock())
        rules = [{"events": list(forward_events), "mode": "auto"}] if forward_events else []
        save_rule_book(conn, {"rules": rules}, by="test", now=station.clock())


def queue_states(engine: Engine) -> dict[str, tuple[str, str]]:
    """Return each queued alert's identifier → (queue state, reason)."""
    q = eas_forward_queue.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(cap_alerts.c.identifier, q.state, q.reason).join(
                cap_alerts, cap_alerts.c.id == q.alert_id
            )
        ).all()
    return {row.identifier: (row.state, row.reason) for row in rows}


def archived(engine: Engine) -> list[Any]:
    """Return the archive rows, oldest first."""
    with engine.connect() as conn:
        return list(conn.execute(select(eas_archive).order_by(eas_archive.c.id)))


def airings(engine: Engine) -> list[Any]:
    """Return the forward airing records."""
    with engine.connect() as conn:
        return list(conn.execute(select(eas_forward_airings)))


def audit_rows(engine: Engine, action: str) -> list[Any]:
    """Return the audit rows of ``action``, oldest first."""
    with engine.connect() as conn:
        query = select(audit_logs).where(audit_logs.c.action == action).order_by(audit_logs.c.id)
        return list(conn.execute(query))


def wav_path(station: Station, row: Any) -> Path:
    """Return the archived WAV of an archive row."""
    return station.settings.data_dir / "eas-archive" / row.wav_path


def later(start: datetime, **delta: float) -> datetime:
    """Return ``start`` moved by ``delta``."""
    return start + timedelta(**delta)
