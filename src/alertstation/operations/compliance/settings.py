"""The compliance settings: assigned monitoring sources and the days a source may stay silent.

Read with :func:`get_compliance_settings`; :func:`save_compliance_settings` checks a body
(``silence_days`` 1-31; ``assigned_sources`` a list of ``audio:<id>`` / ``poll:<id>`` naming
existing sources) and saves it inside the caller's write transaction (422 naming the field).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, delete, insert, select

from alertstation.alerts.poll.tables import poll_sources
from alertstation.audio.tables import audio_sources
from alertstation.errors import Invalid
from alertstation.operations.compliance.tables import (
    compliance_assignments,
    compliance_settings,
)

ROW: Final[int] = 1
DEFAULT_SILENCE_DAYS: Final[int] = 8
MIN_SILENCE_DAYS: Final[int] = 1
MAX_SILENCE_DAYS: Final[int] = 31
MAX_ASSIGNED: Final[int] = 100
FIELDS: Final[tuple[str, ...]] = ("silence_days", "assigned_sources")
_SOURCE = re.compile(r"^(audio|poll):([1-9]\d{0,9})$")


@dataclass(frozen=True)
class ComplianceSettings:
    """How many days an assigned source may go without a test, and the assigned sources."""

    silence_days: int = DEFAULT_SILENCE_DAYS
    assigned_sources: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form (also the audit snapshot: nothing here is secret)."""
        return {"silence_days": self.silence_days, "assigned_sources": list(self.assigned_sources)}


def get_compliance_settings(conn: Connection) -> ComplianceSettings:
    """Return the saved settings (the defaults when none were saved).

    An assignment whose source has since been deleted is left out: it is dropped at the next
    save, and never blocks one.
    """
    days = conn.execute(
        select(compliance_settings.c.silence_days).where(compliance_settings.c.id == ROW)
    ).scalar()
    stored = conn.execute(select(compliance_assignments.c.source)).scalars()
    live = _existing(conn)
    assigned = [source for source in stored if source in live]
    return ComplianceSettings(
        DEFAULT_SILENCE_DAYS if days is None else int(days), tuple(sorted(assigned, key=_order))
    )


def assignments(conn: Connection) -> dict[str, datetime]:
    """Return each assigned source with when it was assigned (deleted sources left out)."""
    rows = conn.execute(select(compliance_assignments)).all()
    live = _existing(conn)
    return {row.source: row.assigned_at for row in rows if row.source in live}


def read_settings(body: Any, current: ComplianceSettings) -> ComplianceSettings:
    """Check a (partial) settings body against the current settings; 422 naming the field."""
    if not isinstance(body, dict):
        raise Invalid("the body must be a JSON object", field="silence_days")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise Invalid(f"unknown field {unknown[0]}", field=unknown[0])
    days = body.get("silence_days", current.silence_days)
    if isinstance(days, bool) or not isinstance(days, int):
        raise Invalid("silence_days must be a whole number of days", field="silence_days")
    if not MIN_SILENCE_DAYS <= days <= MAX_SILENCE_DAYS:
        raise Invalid(
            f"silence_days must be within {MIN_SILENCE_DAYS}-{MAX_SILENCE_DAYS}, got {days}",
            field="silence_days",
        )
    sources = body.get("assigned_sources", list(current.assigned_sources))
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise Invalid("assigned_sources must be a list of strings", field="assigned_sources")
    if len(sources) > MAX_ASSIGNED:
        raise Invalid(f"assigned_sources: at most {MAX_ASSIGNED}", field="assigned_sources")
    cleaned = [s.strip().lower() for s in sources]
    for source in cleaned:
        if not _SOURCE.match(source):
            raise Invalid(
                f"assigned_sources: {source!r} is not audio:<id> or poll:<id>",
                field="assigned_sources",
            )
    return ComplianceSettings(days, tuple(sorted(dict.fromkeys(cleaned), key=_order)))


def save_compliance_settings(
    conn: Connection, body: Any, *, by: str | None, now: datetime
) -> tuple[ComplianceSettings, ComplianceSettings]:
    """Check and save a settings body; return (before, after). 422 names the bad field."""
    before = get_compliance_settings(conn)
    after = read_settings(body, before)
    live = _existing(conn)
    missing = [s for s in after.assigned_sources if s not in live]
    if missing:
        raise Invalid(f"assigned_sources: no source {missing[0]}", field="assigned_sources")
    values = {"silence_days": after.silence_days, "updated_by": by, "updated_at": now}
    table = compliance_settings
    if not conn.execute(table.update().where(table.c.id == ROW).values(**values)).rowcount:
        conn.execute(insert(table).values(id=ROW, **values))
    stored = set(conn.execute(select(compliance_assignments.c.source)).scalars())
    gone = stored - set(after.assigned_sources)  # unassigned, or their source deleted
    if gone:
        conn.execute(
            delete(compliance_assignments).where(compliance_assignments.c.source.in_(gone))
        )
    added = [s for s in after.assigned_sources if s not in before.assigned_sources]
    if added:
        conn.execute(
            insert(compliance_assignments),
            [{"source": s, "assigned_by": by, "assigned_at": now} for s in added],
        )
    return before, after


def _existing(conn: Connection) -> set[str]:
    """Return the name (``audio:ID``, ``poll:ID``) of every source that exists, in two reads."""
    audio = conn.execute(select(audio_sources.c.id)).scalars()
    feeds = conn.execute(select(poll_sources.c.id)).scalars()
    return {f"audio:{i}" for i in audio} | {f"poll:{i}" for i in feeds}


def _order(source: str) -> tuple[str, int]:
    kind, _, number = source.partition(":")
    return (kind, int(number) if number.isdigit() else 0)
