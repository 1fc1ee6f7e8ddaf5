"""The decoder-monitor and ENDEC feeds: received and sent EAS messages, passed on over HTTP.

Both are rows of the delivery log (``notification_deliveries`` with ``feed`` set), written in
the transaction that records the message and sent by the worker's delivery job through
``alertstation.http.outbound`` (never apprise), with the same retries as notifications. The
addresses and credentials are read when a delivery is sent, so a changed token applies to what
is still pending.

* **Decoder monitor** (``monitor_url``): every received header, valid, duplicate or refused, is
  POSTed as JSON with ``Authorization: Bearer <monitor_token>``.
* **ENDEC** (``http(s)://endec_host:endec_port/endec_path``): every originated or forwarded
  message that aired is POSTed as a CAP 1.2 message (the SAME geocodes, the EAS event code,
  the audio as a resource, base64 in ``derefUri``) with HTTP Basic ``endec_user`` /
  ``endec_password``.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from xml.etree import ElementTree as ET

from sqlalchemy import Connection, insert

from alertstation.http.outbound import Limits, OutboundClient, basic_auth
from alertstation.notifications import events as ev
from alertstation.notifications.tables import notification_deliveries
from alertstation.same import EVENTS, ORIGINATORS, SameHeader
from alertstation.settings_admin.sections import decoder_feed_settings

CAP_NS: Final[str] = "urn:oasis:names:tc:emergency:cap:1.2"
#: Received-header states the decoder monitor is told of.
VALID, DUPLICATE, REFUSED = "valid", "duplicate", "refused"
#: The audio a CAP message carries inline; a larger file is named in the message, not sent.
MAX_CAP_AUDIO: Final[int] = 10 * 1024 * 1024
FEED_LIMITS: Final[Limits] = Limits(
    connect_timeout=5.0, read_timeout=15.0, max_bytes=64 * 1024, deadline=30.0
)


def _queue(conn: Connection, feed: str, target: str, payload: dict[str, Any], now: datetime) -> int:
    return int(
        conn.execute(
            insert(notification_deliveries).values(
                feed=feed,
                payload=json.dumps(payload, sort_keys=True),
                target=target,
                state=ev.PENDING,
                attempts=0,
                created_at=now,
                next_attempt_at=now,
            )
        ).inserted_primary_key[0]
    )


def queue_monitor(
    conn: Connection,
    *,
    source: str,
    header: str,
    status: str,
    received_at: datetime,
    reason: str | None = None,
    bursts: int | None = None,
    message_id: int | None = None,
) -> int | None:
    """Queue one received header for the decoder monitor; None when the feed is off."""
    if status not in (VALID, DUPLICATE, REFUSED):
        raise ValueError(f"status must be valid, duplicate or refused, not {status!r}")
    settings = decoder_feed_settings(conn)
    if not settings["monitor_enabled"] or not settings["monitor_url"]:
        return None
    payload = {
        "type": "eas.received",
        "source": source,
        "header": header,
        "status": status,
        "reason": reason,
        "bursts": bursts,
        "received_message_id": message_id,
        "received_at": received_at.astimezone(UTC).isoformat(),
    }
    return _queue(conn, ev.MONITOR_FEED, "decoder monitor", payload, received_at)


def queue_endec(
    conn: Connection,
    *,
    header: str,
    origin: str,
    sent_at: datetime,
    text: str | None = None,
    audio_path: str | None = None,
    message_id: int | None = None,
) -> int | None:
    """Queue one originated or forwarded message for the ENDEC; None when the feed is off.

    ``audio_path`` is the message's WAV file (absolute); it is read when the delivery is sent.
    """
    settings = decoder_feed_settings(conn)
    if not settings["endec_enabled"] or not settings["endec_host"]:
        return None
    payload = {
        "header": header,
        "origin": origin,
        "sent_at": sent_at.astimezone(UTC).isoformat(),
        "text": text,
        "audio_path": audio_path,
        "message_id": message_id,
    }
    return _queue(conn, ev.ENDEC_FEED, "ENDEC", payload, sent_at)


def endec_url(settings: dict[str, Any]) -> str:
    """Return ``http(s)://endec_host:endec_port/endec_path``."""
    scheme = "https" if settings.get("endec_tls") else "http"
    host = settings["endec_host"]
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    path = str(settings.get("endec_path") or "").lstrip("/")
    return f"{scheme}://{host}:{settings['endec_port']}/{path}"


def _cap_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S-00:00")


def _sub(parent: ET.Element, tag: str, text: str | None = None) -> ET.Element:
    element = ET.SubElement(parent, f"{{{CAP_NS}}}{tag}")
    if text is not None:
        element.text = text
    return element


def _pair(parent: ET.Element, tag: str, name: str, value: str) -> None:
    element = _sub(parent, tag)
    _sub(element, "valueName", name)
    _sub(element, "value", value)


def cap_message(payload: dict[str, Any], delivery_id: int) -> bytes:
    """Return the CAP 1.2 message of one originated or forwarded SAME message."""
    header = SameHeader.parse(payload["header"])
    sent = datetime.fromisoformat(payload["sent_at"])
    ET.register_namespace("", CAP_NS)
    alert = ET.Element(f"{{{CAP_NS}}}alert")
    _sub(alert, "identifier", f"AlertStation-{header.station.strip()}-{delivery_id}")
    _sub(alert, "sender", f"{header.station.strip()}@alertstation")
    _sub(alert, "sent", _cap_time(sent))
    _sub(alert, "status", "Actual")
    _sub(alert, "msgType", "Alert")
    _sub(alert, "scope", "Public")
    _sub(alert, "code", "IPAWSv1.0")
    _sub(alert, "note", f"{payload['origin']}: {payload['header']}")
    info = _sub(alert, "info")
    _sub(info, "language", "en-US")
    _sub(info, "category", "Other")
    known = EVENTS.get(header.event)
    _sub(info, "event", known.name if known else header.event)
    for name in ("urgency", "severity", "certainty"):
        _sub(info, name, "Unknown")
    _pair(info, "eventCode", "SAME", header.event)
    _sub(info, "effective", _cap_time(sent))
    _sub(info, "expires", _cap_time(sent + header.purge))
    originator = ORIGINATORS.get(header.org)
    _sub(info, "senderName", originator.name if originator else header.org)
    if payload.get("text"):
        _sub(info, "description", str(payload["text"]))
    _pair(info, "parameter", "EAS-ORG", header.org)
    _pair(info, "parameter", "EAS-STN-ID", header.station.strip())
    _pair(info, "parameter", "EAS-HEADER", payload["header"])
    _audio_resource(info, payload.get("audio_path"))
    area = _sub(info, "area")
    _sub(area, "areaDesc", ", ".join(header.locations))
    for code in header.locations:
        _pair(area, "geocode", "SAME", code)
    return ET.tostring(alert, encoding="utf-8", xml_declaration=True)


def _audio_resource(info: ET.Element, audio_path: str | None) -> None:
    if not audio_path:
        return
    path = Path(audio_path)
    try:
        size = path.stat().st_size
    except OSError:
        return
    resource = _sub(info, "resource")
    _sub(resource, "resourceDesc", "EAS Broadcast Content")
    _sub(resource, "mimeType", "audio/x-wav")
    _sub(resource, "size", str(size))
    if size <= MAX_CAP_AUDIO:
        _sub(resource, "derefUri", base64.b64encode(path.read_bytes()).decode("ascii"))


def send(
    client: OutboundClient,
    settings: dict[str, Any],
    feed: str,
    payload: dict[str, Any],
    delivery_id: int,
) -> None:
    """Send one feed delivery now with the feed ``settings`` (``decoder_feed_settings``);
    raise FetchError (or ValueError) when it fails."""
    if feed == ev.MONITOR_FEED:
        if not settings["monitor_url"]:
            raise ValueError("the decoder monitor has no address")
        headers = {"Content-Type": "application/json"}
        if settings["monitor_token"]:
            headers["Authorization"] = f"Bearer {settings['monitor_token']}"
        body = json.dumps(payload, sort_keys=True).encode()
        client.post(settings["monitor_url"], body, FEED_LIMITS, headers=headers)
        return
    if feed == ev.ENDEC_FEED:
        if not settings["endec_host"]:
            raise ValueError("the ENDEC has no host")
        headers = {"Content-Type": "application/xml; charset=utf-8"}
        if settings.get("endec_user") or settings["endec_password"]:
            headers["Authorization"] = basic_auth(
                settings.get("endec_user") or "", settings["endec_password"]
            )
        client.post(
            endec_url(settings), cap_message(payload, delivery_id), FEED_LIMITS, headers=headers
        )
        return
    raise ValueError(f"unknown feed {feed!r}")
