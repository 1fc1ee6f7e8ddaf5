"""Auto-forward settings: read them, check a change field by field, save it.

The settings are one row of ``eas_forward_settings``; without a row the defaults below apply,
and auto-forward is off: a fresh station puts nothing on the air by itself until an operator
turns it on. Every check raises :class:`~alertstation.errors.Invalid` naming the field, so the
routes answer 422 and nothing is written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, select

from alertstation.eas.forward.tables import eas_forward_settings
from alertstation.errors import Invalid
from alertstation.http.bodies import check_bool
from alertstation.same import DEFAULT_STATION_ID

SETTINGS_ROW: Final[int] = 1
MIN_ATTENTION: Final[float] = 8.0
MAX_ATTENTION: Final[float] = 25.0
MAX_AGE_LIMIT: Final[int] = 24 * 60
# What our decoder and common receivers read in the station-id field (47 CFR 11.31: call sign
# with "/" in place of "-").
_STATION_ID = re.compile(r"^[A-Z0-9/]{1,8}$")


@dataclass(frozen=True)
class ForwardSettings:
    """How forwarded alerts air; the defaults are a station's first settings."""

    enabled: bool = False
    station_id: str = DEFAULT_STATION_ID
    attention_seconds: float = MIN_ATTENTION
    nwr_tone: bool = False
    include_voice: bool = True
    max_age_minutes: int = 60

    def as_dict(self) -> dict[str, Any]:
        """Return the settings as JSON-ready data."""
        return asdict(self)


FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in fields(ForwardSettings))


def check_station_id(value: Any, name: str = "station_id") -> str:
    """Return an upper-cased station id of 1-8 letters, digits or '/'; 422 otherwise."""
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string", field=name)
    text = value.strip().upper()
    if not _STATION_ID.match(text):
        raise Invalid(
            f"{name}: 1-8 letters, digits or '/' (a call sign such as WXYZ/FM), got {value!r}",
            field=name,
        )
    return text


def check_body(body: dict[str, Any], checks: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """Return the checked fields of a (partial) settings body; 422 naming a bad field.

    ``checks`` maps every field the settings have to its check; a body naming another field, or
    no field at all, is refused.
    """
    unknown = sorted(set(body) - set(checks))
    if unknown:
        raise Invalid(f"unknown field {unknown[0]}", field=unknown[0])
    if not body:
        raise Invalid(f"send at least one of {', '.join(checks)}", field=next(iter(checks)))
    return {name: checks[name](value) for name, value in body.items()}


def _attention(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise Invalid("attention_seconds must be a number of seconds", field="attention_seconds")
    if not MIN_ATTENTION <= value <= MAX_ATTENTION:
        raise Invalid(
            f"attention_seconds must be within {MIN_ATTENTION:g}-{MAX_ATTENTION:g} s, got {value}",
            field="attention_seconds",
        )
    return float(value)


def _max_age(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid("max_age_minutes must be a whole number", field="max_age_minutes")
    if not 1 <= value <= MAX_AGE_LIMIT:
        raise Invalid(
            f"max_age_minutes must be within 1-{MAX_AGE_LIMIT}, got {value}",
            field="max_age_minutes",
        )
    return value


_CHECKS = {
    "enabled": lambda v: check_bool(v, "enabled"),
    "station_id": check_station_id,
    "attention_seconds": _attention,
    "nwr_tone": lambda v: check_bool(v, "nwr_tone"),
    "include_voice": lambda v: check_bool(v, "include_voice"),
    "max_age_minutes": _max_age,
}


def read_changes(body: dict[str, Any]) -> dict[str, Any]:
    """Return the checked fields of a (partial) settings body; 422 naming a bad field."""
    return check_body(body, _CHECKS)


def get_forward_settings(conn: Connection) -> ForwardSettings:
    """Read the auto-forward settings (the defaults when none were saved)."""
    row = conn.execute(
        select(eas_forward_settings).where(eas_forward_settings.c.id == SETTINGS_ROW)
    ).first()
    if row is None:
        return ForwardSettings()
    return ForwardSettings(**{name: getattr(row, name) for name in FIELDS})


def save_forward_settings(
    conn: Connection, changes: dict[str, Any], *, by: str | None, now: datetime
) -> tuple[ForwardSettings, list[str]]:
    """Check and apply changes inside the caller's write transaction; return (new, changed)."""
    current = get_forward_settings(conn)
    new = replace(current, **read_changes(changes))
    changed = sorted(name for name in FIELDS if getattr(new, name) != getattr(current, name))
    values = {**new.as_dict(), "updated_by": by, "updated_at": now}
    done = conn.execute(
        eas_forward_settings.update()
        .where(eas_forward_settings.c.id == SETTINGS_ROW)
        .values(**values)
    ).rowcount
    if not done:
        conn.execute(eas_forward_settings.insert().values(id=SETTINGS_ROW, **values))
    return new, changed
