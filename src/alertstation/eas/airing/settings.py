"""Settings of the airing outputs: sample rate, the Icecast source client and the ALSA device.

They live in the single row of ``eas_airing_settings``; with no row the defaults below apply
(Icecast and ALSA off, 22,050 Hz). :func:`save` takes a flat JSON body whose keys are the column
names; fields left out keep their value and a blank ``icecast_password`` keeps the stored one.
Every value is checked before anything is written; a bad one is a 422 naming its field.

The Icecast source password is a secret: :meth:`AiringSettings.as_dict` never includes it (only
whether one is set), and the audit row of a save names the changed fields, never values.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, select

from alertstation.eas.airing.tables import eas_airing_settings
from alertstation.errors import Invalid
from alertstation.http.bodies import check_bool

SETTINGS_ID: Final[int] = 1
SAMPLE_RATES: Final[tuple[int, ...]] = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000)
DEFAULT_SAMPLE_RATE: Final[int] = 22050
PASSWORD_FIELD: Final[str] = "icecast_password"
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.:-]{0,252})$|^\[[0-9A-Fa-f:.]{2,45}\]$")
_MOUNT = re.compile(r"^/[A-Za-z0-9._~/-]{1,254}$")
_DEVICE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_:,.=-]{0,254}$")
_PRINTABLE = re.compile(r"^[\x21-\x7e]+$")


@dataclass(frozen=True)
class AiringSettings:
    """The outputs' settings as stored (the password included: only the airing loop reads it)."""

    sample_rate: int = DEFAULT_SAMPLE_RATE
    icecast_enabled: bool = False
    icecast_host: str = "127.0.0.1"
    icecast_port: int = 8000
    icecast_mount: str = "/eas.mp3"
    icecast_username: str = "source"
    icecast_password: str | None = None
    icecast_tls: bool = False
    alsa_enabled: bool = False
    alsa_device: str = "default"
    updated_by: str | None = None
    updated_at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the settings as JSON-ready data with the source password left out."""
        return {
            "sample_rate": self.sample_rate,
            "icecast_enabled": self.icecast_enabled,
            "icecast_host": self.icecast_host,
            "icecast_port": self.icecast_port,
            "icecast_mount": self.icecast_mount,
            "icecast_username": self.icecast_username,
            "icecast_password_set": bool(self.icecast_password),
            "icecast_tls": self.icecast_tls,
            "alsa_enabled": self.alsa_enabled,
            "alsa_device": self.alsa_device,
            "updated_by": self.updated_by,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }


EDITABLE: Final[tuple[str, ...]] = (
    "sample_rate",
    "icecast_enabled",
    "icecast_host",
    "icecast_port",
    "icecast_mount",
    "icecast_username",
    PASSWORD_FIELD,
    "icecast_tls",
    "alsa_enabled",
    "alsa_device",
)


def load(conn: Connection) -> AiringSettings:
    """Return the stored settings, or the defaults when none were saved."""
    row = conn.execute(
        select(eas_airing_settings).where(eas_airing_settings.c.id == SETTINGS_ID)
    ).first()
    if row is None:
        return AiringSettings()
    return AiringSettings(
        **{name: getattr(row, name) for name in (*EDITABLE, "updated_by", "updated_at")}
    )


def _int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise Invalid(f"{name} must be a whole number from {low} to {high}", field=name)
    return value


def _text(value: Any, name: str, pattern: re.Pattern[str], rule: str) -> str:
    if not isinstance(value, str) or not pattern.match(value.strip()):
        raise Invalid(f"{name}: {rule}", field=name)
    return value.strip()


def _sample_rate(value: Any, name: str) -> int:
    rate = _int(value, name, SAMPLE_RATES[0], SAMPLE_RATES[-1])
    if rate not in SAMPLE_RATES:
        raise Invalid(f"{name} must be one of {', '.join(map(str, SAMPLE_RATES))}", field=name)
    return rate


def _mount(value: Any, name: str) -> str:
    mount = _text(value, name, _MOUNT, "a mount point such as /eas.mp3")
    if ".." in mount or "//" in mount:
        raise Invalid(f"{name}: a mount point such as /eas.mp3", field=name)
    return mount


def _username(value: Any, name: str) -> str:
    user = _text(value, name, _PRINTABLE, "1-64 printable characters without spaces")
    if ":" in user or len(user) > 64:
        raise Invalid(f"{name}: 1-64 printable characters, no colon", field=name)
    return user


def _password(value: Any, name: str) -> str:
    if not isinstance(value, str) or len(value) > 255 or not _PRINTABLE.match(value):
        raise Invalid(
            f"{name}: 1-255 printable characters without spaces (blank keeps the current one)",
            field=name,
        )
    return value


_CHECKS: Final[dict[str, Callable[[Any, str], Any]]] = {
    "sample_rate": _sample_rate,
    "icecast_enabled": check_bool,
    "icecast_host": lambda v, n: _text(v, n, _HOST, "a host name or IP address, e.g. 127.0.0.1"),
    "icecast_port": lambda v, n: _int(v, n, 1, 65535),
    "icecast_mount": _mount,
    "icecast_username": _username,
    PASSWORD_FIELD: _password,
    "icecast_tls": check_bool,
    "alsa_enabled": check_bool,
    "alsa_device": lambda v, n: _text(
        v, n, _DEVICE, "an ALSA device name such as default or hw:0,0"
    ),
}


def save(
    conn: Connection, body: dict[str, Any], *, updated_by: str | None, now: datetime
) -> tuple[AiringSettings, list[str]]:
    """Validate ``body`` and store it in the caller's write transaction.

    Return the settings now stored and the names of the fields that changed.
    """
    unknown = sorted(set(body) - set(EDITABLE))
    if unknown:
        raise Invalid(f"not airing settings: {', '.join(unknown)}", field=unknown[0])
    current = load(conn)
    values: dict[str, Any] = {}
    for name in EDITABLE:
        if name not in body:
            continue
        if name == PASSWORD_FIELD and body[name] in (None, ""):
            continue  # a blank password keeps the stored one
        values[name] = _CHECKS[name](body[name], name)
    new = replace(current, **values)
    if new.icecast_enabled and not new.icecast_password:
        raise Invalid(
            "icecast_password: set the source password (or generate one) to enable Icecast",
            field=PASSWORD_FIELD,
        )
    changed = sorted(name for name in EDITABLE if getattr(new, name) != getattr(current, name))
    new = replace(new, updated_by=updated_by, updated_at=now)
    _store(conn, new)
    return new, changed


def regenerate_password(
    conn: Connection, *, updated_by: str | None, now: datetime
) -> tuple[AiringSettings, str]:
    """Store a new random Icecast source password and return it (shown to the caller once)."""
    password = secrets.token_urlsafe(18)
    new = replace(load(conn), icecast_password=password, updated_by=updated_by, updated_at=now)
    _store(conn, new)
    return new, password


def _store(conn: Connection, settings: AiringSettings) -> None:
    values = {name: getattr(settings, name) for name in (*EDITABLE, "updated_by", "updated_at")}
    done = conn.execute(
        eas_airing_settings.update().where(eas_airing_settings.c.id == SETTINGS_ID).values(values)
    )
    if done.rowcount == 0:
        conn.execute(eas_airing_settings.insert().values(id=SETTINGS_ID, **values))
