"""The saved settings sections: their fields, checks, defaults and storage.

Each section (application, hardware, text-to-speech, decoder feed) is one row of
``operations_settings`` holding a JSON object; with no row its defaults apply. :func:`save`
takes a flat JSON body of field names; fields left out keep their value, and a blank secret
keeps the stored one. Every value is checked before anything is written; a bad one is a 422
naming its field. Secret fields never leave :meth:`SectionValues.public`: callers see only
whether each is set, and the audit row of a save names the changed fields, never values.

The operations settings page (``alertstation.operations``) shows and saves them through this
module. It lives in layer 5 so that the layers acting on the values can read them without an
upward import: eas (voice, relay pins), audio (capture devices) and the pruning jobs, through the
small readers at the bottom: :func:`retention_policy`, :func:`tts_settings`,
:func:`hardware_settings` and :func:`decoder_feed_settings`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import Connection, select

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import CONFIG_UPDATED, AuditLedger
from alertstation.audit.window import APPLICATION_SECTION, DEFAULT_EXPORT_DAYS, EXPORT_DAYS_FIELD
from alertstation.db.tables import operations_settings
from alertstation.errors import Forbidden, Invalid
from alertstation.http.bodies import check_bool

Check = Callable[[Any, str], Any]

_DEVICE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_:,.=-]{0,127}$")
_VOICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+-]{0,39}$")
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.:-]{0,252})$|^\[[0-9A-Fa-f:.]{2,45}\]$")
_PRINTABLE = re.compile(r"^[\x21-\x7e]+$")
#: BCM GPIO numbers usable for relays on a Raspberry Pi header.
GPIO_PINS: Final[range] = range(2, 28)
MAX_RELAYS: Final[int] = 8
MAX_CAPTURE_DEVICES: Final[int] = 16


def _int(low: int, high: int) -> Check:
    def check(value: Any, name: str) -> int:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise Invalid(f"{name} must be a whole number from {low} to {high}", field=name)
        return value

    return check


def _text(pattern: re.Pattern[str], rule: str) -> Check:
    def check(value: Any, name: str) -> str:
        if not isinstance(value, str) or not pattern.match(value.strip()):
            raise Invalid(f"{name}: {rule}", field=name)
        return value.strip()

    return check


def _optional_host(value: Any, name: str) -> str:
    if value in (None, ""):
        return ""
    return str(_text(_HOST, "a host name or IP address")(value, name))


def _pins(value: Any, name: str) -> list[int]:
    if not isinstance(value, list) or len(value) > MAX_RELAYS:
        raise Invalid(f"{name} must be a list of at most {MAX_RELAYS} GPIO numbers", field=name)
    pins: list[int] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item not in GPIO_PINS:
            raise Invalid(
                f"{name}: GPIO numbers (BCM) from {GPIO_PINS.start} to {GPIO_PINS.stop - 1}",
                field=name,
            )
        if item in pins:
            raise Invalid(f"{name}: GPIO {item} is listed twice", field=name)
        pins.append(item)
    return pins


def _devices(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_CAPTURE_DEVICES:
        raise Invalid(
            f"{name} must be a list of at most {MAX_CAPTURE_DEVICES} ALSA device names", field=name
        )
    check = _text(_DEVICE, "ALSA device names such as hw:1,0 or plughw:CARD=USB,DEV=0")
    devices = [check(item, name) for item in value]
    if len(set(devices)) != len(devices):
        raise Invalid(f"{name}: a device is listed twice", field=name)
    return devices


def _url(value: Any, name: str) -> str:
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or len(value) > 500 or not _PRINTABLE.match(value):
        raise Invalid(f"{name}: an http:// or https:// address", field=name)
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid(f"{name}: an http:// or https:// address", field=name)
    if parts.username or parts.password:
        raise Invalid(
            f"{name}: leave credentials out of the address; put them in the token field",
            field=name,
        )
    return value


_PATH = re.compile(r"^[A-Za-z0-9._~!$&'()*+,;=:@%/-]{0,200}$")
_USER = re.compile(r"^[^\s:]{0,64}$")


def _endec_path(value: Any, name: str) -> str:
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or not _PATH.match(value.strip()) or ".." in value:
        raise Invalid(f"{name}: a URL path such as /cap/ingest (no query, no '..')", field=name)
    return value.strip().lstrip("/")


def _endec_user(value: Any, name: str) -> str:
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or not _USER.match(value):
        raise Invalid(f"{name}: up to 64 characters, no spaces or colons", field=name)
    return value


def _secret(value: Any, name: str) -> str:
    if not isinstance(value, str) or len(value) > 255 or not _PRINTABLE.match(value):
        raise Invalid(
            f"{name}: 1-255 printable characters without spaces (blank keeps the current one)",
            field=name,
        )
    return value


@dataclass(frozen=True)
class Field:
    """One setting: its check, default, whether it is a secret and whether only an admin sets it."""

    check: Check
    default: Any
    secret: bool = False
    admin_only: bool = False


@dataclass(frozen=True)
class Section:
    """One settings section: its name, title and fields."""

    name: str
    title: str
    fields: dict[str, Field]
    validate: Callable[[dict[str, Any]], None] = field(default=lambda values: None)

    def defaults(self) -> dict[str, Any]:
        """Return the section's default values."""
        return {name: spec.default for name, spec in self.fields.items()}


def _needs(flag: str, *required: str) -> Callable[[dict[str, Any]], None]:
    def validate(values: dict[str, Any]) -> None:
        if not values[flag]:
            return
        for name in required:
            if not values[name]:
                raise Invalid(f"{name}: set it to turn on {flag}", field=name)

    return validate


def _decoder_feed_rules(values: dict[str, Any]) -> None:
    _needs("monitor_enabled", "monitor_url")(values)
    _needs("endec_enabled", "endec_host")(values)


def check_time_zone(value: Any, name: str) -> str:
    """Return an IANA time zone name that ``zoneinfo`` knows (``America/New_York``, ``UTC``)."""
    text = value.strip() if isinstance(value, str) else ""
    if not text or len(text) > 64 or text.startswith(("/", ".")) or ".." in text:
        raise Invalid(f"{name}: an IANA time zone name such as America/New_York", field=name)
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise Invalid(
            f"{name}: {text!r} is not a known IANA time zone (for example America/Chicago)",
            field=name,
        ) from None
    return text


RETENTION_DAYS = _int(1, 3650)
DEFAULT_TIME_ZONE: Final[str] = "UTC"
TIME_ZONE_FIELD: Final[str] = "time_zone"

APPLICATION = Section(
    APPLICATION_SECTION,
    "Application",
    {
        EXPORT_DAYS_FIELD: Field(RETENTION_DAYS, DEFAULT_EXPORT_DAYS),
        "audio_alert_retention_days": Field(RETENTION_DAYS, 30),
        TIME_ZONE_FIELD: Field(check_time_zone, DEFAULT_TIME_ZONE),
    },
)
HARDWARE = Section(
    "hardware",
    "Hardware",
    {
        "relay_pins": Field(_pins, []),
        "relay_active_high": Field(check_bool, True),
        # A trust boundary: the ALSA devices a receiver's command may name.
        "capture_devices": Field(_devices, [], admin_only=True),
    },
)
TTS = Section(
    "tts",
    "Text-to-speech",
    {
        "voice": Field(_text(_VOICE, "an espeak-ng voice name such as en-us"), "en-us"),
        "rate": Field(_int(80, 450), 160),
        "volume": Field(_int(0, 200), 100),
    },
)
DECODER_FEED = Section(
    "decoder_feed",
    "EAS decoder monitor and ENDEC feed",
    {
        "monitor_enabled": Field(check_bool, False),
        "monitor_url": Field(_url, ""),
        "monitor_token": Field(_secret, "", secret=True),
        "endec_enabled": Field(check_bool, False),
        "endec_host": Field(_optional_host, ""),
        "endec_port": Field(_int(1, 65535), 10000),
        "endec_path": Field(_endec_path, ""),
        "endec_tls": Field(check_bool, False),
        "endec_user": Field(_endec_user, ""),
        "endec_password": Field(_secret, "", secret=True),
    },
    validate=_decoder_feed_rules,
)

SECTIONS: Final[dict[str, Section]] = {
    section.name: section for section in (APPLICATION, HARDWARE, TTS, DECODER_FEED)
}


@dataclass(frozen=True)
class SectionValues:
    """A section's stored values (secrets included: only server-side readers see them)."""

    section: Section
    values: dict[str, Any]
    updated_by: str | None = None
    updated_at: datetime | None = None

    def public(self) -> dict[str, Any]:
        """Return JSON-ready values with every secret replaced by ``<name>_set``."""
        shown: dict[str, Any] = {}
        for name, spec in self.section.fields.items():
            if spec.secret:
                shown[f"{name}_set"] = bool(self.values.get(name))
            else:
                shown[name] = self.values[name]
        shown["updated_by"] = self.updated_by
        shown["updated_at"] = self.updated_at.isoformat() if self.updated_at else None
        return shown


def section_named(name: str) -> Section:
    """Return the section called ``name``; 404-style Invalid for an unknown one."""
    try:
        return SECTIONS[name]
    except KeyError:
        raise Invalid(
            f"no settings section {name!r}; sections: {', '.join(SECTIONS)}", field="section"
        ) from None


def load(conn: Connection, section: Section) -> SectionValues:
    """Return a section's stored values over its defaults."""
    row = conn.execute(
        select(operations_settings).where(operations_settings.c.section == section.name)
    ).first()
    values = section.defaults()
    if row is None:
        return SectionValues(section, values)
    stored = json.loads(row.data)
    values.update({name: stored[name] for name in section.fields if name in stored})
    return SectionValues(section, values, row.updated_by, row.updated_at)


def check_body(section: Section, body: dict[str, Any], *, extra: tuple[str, ...] = ()) -> None:
    """Raise Invalid naming the first field of ``body`` that ``section`` does not have."""
    unknown = sorted(set(body) - set(section.fields) - set(extra))
    if unknown:
        raise Invalid(
            f"not {section.title.lower()} settings: {', '.join(unknown)}", field=unknown[0]
        )


def save(
    conn: Connection,
    section: Section,
    body: dict[str, Any],
    *,
    updated_by: str | None,
    now: datetime,
    extra: tuple[str, ...] = (),
    is_admin: bool = True,
) -> tuple[SectionValues, list[str]]:
    """Validate ``body`` and store it in the caller's write transaction.

    ``extra`` names fields another layer handles (they are ignored here). A caller who is not an
    admin (``is_admin`` false) may send an admin-only field only with its stored value; a change
    is Forbidden naming the field. Return the values now stored and the names of the fields that
    changed.
    """
    check_body(section, body, extra=extra)
    current = load(conn, section)
    values = dict(current.values)
    for name, spec in section.fields.items():
        if name not in body:
            continue
        if spec.secret and body[name] in (None, ""):
            continue  # a blank secret keeps the stored one
        values[name] = spec.check(body[name], name)
    section.validate(values)
    changed = sorted(name for name in section.fields if values[name] != current.values[name])
    for name in changed:
        if section.fields[name].admin_only and not is_admin:
            raise Forbidden(f"{name}: only an admin may change this setting", field=name)
    data = json.dumps(values, sort_keys=True)
    row = {"data": data, "updated_by": updated_by, "updated_at": now}
    done = conn.execute(
        operations_settings.update()
        .where(operations_settings.c.section == section.name)
        .values(row)
    )
    if done.rowcount == 0:
        conn.execute(operations_settings.insert().values(section=section.name, **row))
    return SectionValues(section, values, updated_by, now), changed


# --- readers for other domains ------------------------------------------------------------


@dataclass(frozen=True)
class RetentionPolicy:
    """How long records are kept, in days."""

    audit_export_days: int
    audio_alert_retention_days: int


def retention_policy(conn: Connection) -> RetentionPolicy:
    """Return the retention policy that pruning jobs apply (the defaults until saved).

    Traffic retention is not here: it is the traffic package's own ``retention_days``, which the
    settings page shows and saves as ``traffic_retention_days`` (``alertstation.operations``).
    """
    values = load(conn, APPLICATION).values
    return RetentionPolicy(
        audit_export_days=values["audit_export_days"],
        audio_alert_retention_days=values["audio_alert_retention_days"],
    )


def station_time_zone(conn: Connection) -> ZoneInfo:
    """Return the station's time zone (UTC until one is saved in the application settings)."""
    name = load(conn, APPLICATION).values[TIME_ZONE_FIELD]
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):  # a zone the system's tz database lost
        return ZoneInfo(DEFAULT_TIME_ZONE)


#: Left in the application settings row by the migration that moved the weekly-test schedule's
#: time zone to the station; :func:`record_moved_time_zone` records the move and removes it.
MOVED_TIME_ZONE_NOTE: Final[str] = "time_zone_moved_from"


def record_moved_time_zone(conn: Connection, ledger: AuditLedger) -> str | None:
    """Record in the audit ledger a time zone a migration moved to the station; return it.

    ``config.updated`` of the application section names ``time_zone``; its details say where the
    value came from. The note is removed in the same transaction; None when there is none.
    """
    row = conn.execute(
        select(operations_settings).where(operations_settings.c.section == APPLICATION.name)
    ).first()
    stored = json.loads(row.data) if row is not None else {}
    source = stored.pop(MOVED_TIME_ZONE_NOTE, None)
    if source is None:
        return None
    zone = str(stored.get(TIME_ZONE_FIELD, DEFAULT_TIME_ZONE))
    ledger.record(
        conn,
        Actor.system("migration"),
        CONFIG_UPDATED,
        target=f"settings.{APPLICATION.name}",
        details={"fields": [TIME_ZONE_FIELD], "moved_from": str(source), "time_zone": zone},
        propagate=True,
    )
    conn.execute(
        operations_settings.update()
        .where(operations_settings.c.section == APPLICATION.name)
        .values(data=json.dumps(stored, sort_keys=True))
    )
    return zone


def tts_settings(conn: Connection) -> dict[str, Any]:
    """Return the espeak-ng voice, rate (words per minute) and volume (0-200)."""
    return dict(load(conn, TTS).values)


def hardware_settings(conn: Connection) -> dict[str, Any]:
    """Return the relay pins, their polarity and the ALSA capture devices receivers may use."""
    return dict(load(conn, HARDWARE).values)


def decoder_feed_settings(conn: Connection) -> dict[str, Any]:
    """Return where decoded messages are sent on, secrets included (server-side use only)."""
    return dict(load(conn, DECODER_FEED).values)
