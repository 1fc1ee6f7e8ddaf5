"""Audio monitoring settings: EAS-monitor control, decoder-monitor thresholds, archives.

One row (``audio_settings``, id 1) holding JSON; missing keys read as their defaults. Saving
checks every field first (a bad value changes nothing) and returns the changed field names, which
the route records in ``config.updated`` with their old and new values.

* EAS monitor: ``eas_monitor_enabled`` (decode SAME on every source), ``relay_excluded_events``
  (event codes never relayed automatically);
* decoder monitor: ``silence_threshold_dbfs``, ``silence_seconds``, ``silence_hysteresis_db``,
  ``clipping_samples``, ``source_down_after_seconds``;
* archives: ``archive_enabled``, ``archive_segment_minutes``, ``archive_retention_days`` and
  ``archive_profile`` (the rolling recording of each source, ``alertstation.audio.archive``);
* stream profiles: ``stream_profiles``, the named encodings (``alertstation.audio.profiles``);
  ``sample_rate``, the rate ffmpeg decodes every source to (read when the monitor starts).

The monitor reads them at the start of each source's session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, select

from alertstation.audio.profiles import (
    DEFAULT_ARCHIVE_PROFILE,
    DEFAULT_PROFILES,
    StreamProfile,
    read_profiles,
)
from alertstation.audio.tables import audio_settings
from alertstation.errors import FieldError
from alertstation.same import EVENTS

SETTINGS_ROW: Final[int] = 1
SAMPLE_RATES: Final[tuple[int, ...]] = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000)
_EVENT = re.compile(r"^[A-Z]{3}$")


#: A setting is not acceptable; ``field`` names it (the shared field error).
AudioSettingsError = FieldError


@dataclass(frozen=True)
class AudioSettings:
    """The audio monitoring settings; the defaults are a station's first settings."""

    eas_monitor_enabled: bool = True
    relay_excluded_events: tuple[str, ...] = ("RWT",)
    silence_threshold_dbfs: float = -50.0
    silence_seconds: float = 10.0
    silence_hysteresis_db: float = 3.0
    clipping_samples: int = 10
    source_down_after_seconds: float = 60.0
    archive_enabled: bool = False
    archive_segment_minutes: int = 10
    archive_retention_days: int = 7
    archive_profile: str = DEFAULT_ARCHIVE_PROFILE
    stream_profiles: tuple[StreamProfile, ...] = DEFAULT_PROFILES
    sample_rate: int = 22050

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        values = asdict(self)
        values["relay_excluded_events"] = list(self.relay_excluded_events)
        values["stream_profiles"] = [profile.as_dict() for profile in self.stream_profiles]
        return values

    def profile(self, name: str) -> StreamProfile | None:
        """Return the stream profile called ``name`` (any case), or None."""
        for profile in self.stream_profiles:
            if profile.name.lower() == name.lower():
                return profile
        return None

    @property
    def archive_stream_profile(self) -> StreamProfile:
        """Return the profile the archive encodes with (the first one if the name is gone)."""
        return self.profile(self.archive_profile) or self.stream_profiles[0]


FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in fields(AudioSettings))


def _bool(name: str) -> Any:
    def check(value: Any) -> bool:
        if not isinstance(value, bool):
            raise AudioSettingsError(name, f"{name} must be true or false")
        return value

    return check


def _number(name: str, low: float, high: float, *, integer: bool = False) -> Any:
    def check(value: Any) -> float | int:
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            kind = "a whole number" if integer else "a number"
            raise AudioSettingsError(name, f"{name} must be {kind} from {low:g} to {high:g}")
        return int(value) if integer else float(value)

    return check


def _events(value: Any) -> tuple[str, ...]:
    name = "relay_excluded_events"
    if not isinstance(value, list) or len(value) > 100:
        raise AudioSettingsError(name, f"{name} must be a list of SAME event codes")
    codes: list[str] = []
    for item in value:
        code = item.strip().upper() if isinstance(item, str) else ""
        if not _EVENT.match(code) or code not in EVENTS:
            raise AudioSettingsError(name, f"{name}: {item!r} is not a SAME event code")
        if code not in codes:
            codes.append(code)
    return tuple(sorted(codes))


def _rate(value: Any) -> int:
    if isinstance(value, bool) or value not in SAMPLE_RATES:
        raise AudioSettingsError(
            "sample_rate", "sample_rate must be one of " + ", ".join(map(str, SAMPLE_RATES))
        )
    return int(value)


def _profile_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AudioSettingsError("archive_profile", "archive_profile must name a stream profile")
    return value.strip()


CHECKS: Final[dict[str, Any]] = {
    "eas_monitor_enabled": _bool("eas_monitor_enabled"),
    "relay_excluded_events": _events,
    "silence_threshold_dbfs": _number("silence_threshold_dbfs", -100, -10),
    "silence_seconds": _number("silence_seconds", 1, 3600),
    "silence_hysteresis_db": _number("silence_hysteresis_db", 0, 30),
    "clipping_samples": _number("clipping_samples", 1, 100_000, integer=True),
    "source_down_after_seconds": _number("source_down_after_seconds", 5, 86_400),
    "archive_enabled": _bool("archive_enabled"),
    "archive_segment_minutes": _number("archive_segment_minutes", 1, 120, integer=True),
    "archive_retention_days": _number("archive_retention_days", 1, 365, integer=True),
    "archive_profile": _profile_name,
    "stream_profiles": read_profiles,
    "sample_rate": _rate,
}


def read_changes(body: Mapping[str, Any]) -> dict[str, Any]:
    """Check a settings body (any subset of the fields); raise naming the first bad one."""
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise AudioSettingsError(unknown[0], f"unknown field {unknown[0]}")
    return {name: CHECKS[name](value) for name, value in body.items()}


def get_audio_settings(conn: Connection) -> AudioSettings:
    """Read the settings (the defaults when none were saved, or for a key not saved)."""
    row = conn.execute(
        select(audio_settings.c.data).where(audio_settings.c.id == SETTINGS_ROW)
    ).first()
    if row is None:
        return AudioSettings()
    stored = json.loads(row.data)
    values: dict[str, Any] = {}
    for name in FIELDS:
        if name in stored:
            try:
                values[name] = CHECKS[name](stored[name])
            except AudioSettingsError:
                continue  # a value a newer check refuses: its default
    return AudioSettings(**values)


def save_audio_settings(
    conn: Connection, body: Mapping[str, Any], *, by: str | None, now: datetime
) -> tuple[AudioSettings, list[str]]:
    """Check and apply changes in the caller's write transaction; return (new, changed)."""
    current = get_audio_settings(conn)
    new = replace(current, **read_changes(body))
    chosen = new.profile(new.archive_profile)
    if chosen is None:
        field = "archive_profile" if "archive_profile" in body else "stream_profiles"
        raise AudioSettingsError(
            field, f"archive_profile {new.archive_profile!r} is not one of the stream profiles"
        )
    new = replace(new, archive_profile=chosen.name)
    changed = sorted(name for name in FIELDS if getattr(new, name) != getattr(current, name))
    values = {
        "data": json.dumps(new.as_dict(), sort_keys=True),
        "updated_by": by,
        "updated_at": now,
    }
    done = conn.execute(
        audio_settings.update().where(audio_settings.c.id == SETTINGS_ROW).values(**values)
    ).rowcount
    if not done:
        conn.execute(audio_settings.insert().values(id=SETTINGS_ROW, **values))
    return new, changed
