"""Ban list entries: their shape, their JSON form, and validation of what callers send.

``IpFilter`` is one row of ``ip_filters``; ``new_filter`` and ``filter_changes`` turn request
fields into validated values (``Invalid`` naming the field otherwise). Values are stored in
canonical text: ``192.0.2.7``, ``10.0.0.0/8``, ``2001:db8::/32`` (IPv4-mapped IPv6 folded to IPv4).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from alertstation.db.types import as_utc
from alertstation.errors import Invalid
from alertstation.security.bans.tables import (
    BLOCKLIST,
    DESCRIPTION_MAX,
    KINDS,
    MANUAL,
    REASON_WIDTH,
    SOURCES,
)
from alertstation.security.bantable import is_range, normalise

MAX_DURATION_MINUTES = 10 * 366 * 24 * 60  # ten years; for longer leave the entry permanent
EDITABLE = frozenset({"value", "active", "reason", "description", "source", "expires_at"})


@dataclass(frozen=True)
class IpFilter:
    """One ban list or allowlist entry."""

    id: int
    value: str
    kind: str
    active: bool
    expires_at: datetime | None
    created_at: datetime
    reason: str | None
    description: str | None
    source: str

    @property
    def source_label(self) -> str:
        """Return the label of the source, e.g. ``SSH Brute Force``."""
        return SOURCES.get(self.source, self.source.replace("_", " ").title())

    def is_expired(self, now: datetime) -> bool:
        """Tell whether the entry has an expiry time that has passed (naive times are UTC)."""
        expires = as_utc(self.expires_at)
        return expires is not None and expires <= as_utc(now)  # type: ignore[operator]

    def is_enforced(self, now: datetime) -> bool:
        """Tell whether the entry is active and not expired."""
        return self.active and not self.is_expired(now)

    def as_dict(self, now: datetime, location: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Return the JSON form; ``location`` appears only when a GeoIP lookup supplied one."""
        form: dict[str, Any] = {
            "id": self.id,
            "value": self.value,
            "kind": self.kind,
            "active": self.active,
            "expired": self.is_expired(now),
            "enforced": self.is_enforced(now),
            "is_range": is_range(self.value),
            "expires_at": as_utc(self.expires_at),
            "created_at": as_utc(self.created_at),
            "reason": self.reason,
            "description": self.description,
            "source": self.source,
            "source_label": self.source_label,
        }
        if location is not None:
            form["location"] = dict(location)
        return form


def audit_action(kind: str, verb: str) -> str:
    """Return the audit action of a change: ``ban.created``, ``allowlist.deleted`` ..."""
    return f"{'ban' if kind == BLOCKLIST else 'allowlist'}.{verb}"


# --- validating input -----------------------------------------------------------------------


def check_kind(kind: object) -> str:
    """Return a valid kind or raise Invalid naming the choices."""
    if kind not in KINDS:
        raise Invalid(f"kind must be one of {', '.join(KINDS)}", field="kind")
    return str(kind)


def check_value(value: object) -> str:
    """Return the canonical text of one address or CIDR range, or raise Invalid saying why."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid("value is required: one IPv4/IPv6 address or CIDR range", field="value")
    try:
        return normalise(value.strip())
    except ValueError as ex:
        raise Invalid(str(ex), field="value") from None


def check_source(source: object) -> str:
    """Return a valid source identifier or raise Invalid listing them."""
    if source not in SOURCES:
        raise Invalid(f"source must be one of {', '.join(SOURCES)}", field="source")
    return str(source)


def check_text(value: object, name: str, limit: int) -> str | None:
    """Return an optional free-text field, stripped; empty becomes None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string", field=name)
    if len(value) > limit:
        raise Invalid(f"{name} must be at most {limit} characters", field=name)
    return value.strip() or None


def resolve_expiry(expires_at: object, duration_minutes: object, now: datetime) -> datetime | None:
    """Turn ``expires_at`` (ISO 8601, naive = UTC) or ``duration_minutes`` into a UTC time.

    Neither means permanent; both, a past time or a bad duration raise Invalid.
    """
    if expires_at is not None and duration_minutes is not None:
        raise Invalid("give expires_at or duration_minutes, not both", field="expires_at")
    if duration_minutes is not None:
        if isinstance(duration_minutes, bool) or not isinstance(duration_minutes, int):
            raise Invalid("duration_minutes must be a whole number", field="duration_minutes")
        if not 1 <= duration_minutes <= MAX_DURATION_MINUTES:
            raise Invalid(
                f"duration_minutes must be within 1..{MAX_DURATION_MINUTES}",
                field="duration_minutes",
            )
        return as_utc(now) + timedelta(minutes=duration_minutes)  # type: ignore[operator]
    if expires_at is None:
        return None
    if not isinstance(expires_at, str):
        raise Invalid("expires_at must be an ISO 8601 date and time", field="expires_at")
    try:
        when = as_utc(datetime.fromisoformat(expires_at.strip()))
    except ValueError:
        raise Invalid("expires_at must be an ISO 8601 date and time", field="expires_at") from None
    if when <= as_utc(now):  # type: ignore[operator]
        raise Invalid("expires_at must be in the future", field="expires_at")
    return when


@dataclass(frozen=True)
class NewFilter:
    """A validated entry to add."""

    value: str
    kind: str = BLOCKLIST
    active: bool = True
    expires_at: datetime | None = None
    reason: str | None = None
    description: str | None = None
    source: str = MANUAL


def new_filter(fields: Mapping[str, Any], now: datetime) -> NewFilter:
    """Validate the fields of an entry to add (value, kind, reason, description, source, expiry)."""
    unknown = set(fields) - EDITABLE - {"kind", "duration_minutes"}
    if unknown:
        raise Invalid(f"unknown field(s): {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    active = fields.get("active", True)
    if not isinstance(active, bool):
        raise Invalid("active must be true or false", field="active")
    return NewFilter(
        value=check_value(fields.get("value")),
        kind=check_kind(fields.get("kind", BLOCKLIST)),
        active=active,
        expires_at=resolve_expiry(fields.get("expires_at"), fields.get("duration_minutes"), now),
        reason=check_text(fields.get("reason"), "reason", REASON_WIDTH),
        description=check_text(fields.get("description"), "description", DESCRIPTION_MAX),
        source=check_source(fields.get("source", MANUAL)),
    )


def filter_changes(fields: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """Validate the fields of a change; ``expires_at``/``duration_minutes`` null means permanent."""
    if "kind" in fields:
        raise Invalid(
            "kind cannot be changed; remove the entry and add it to the other list", field="kind"
        )
    unknown = set(fields) - EDITABLE - {"duration_minutes"}
    if unknown:
        raise Invalid(f"unknown field(s): {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    changes: dict[str, Any] = {}
    if "value" in fields:
        changes["value"] = check_value(fields["value"])
    if "active" in fields:
        if not isinstance(fields["active"], bool):
            raise Invalid("active must be true or false", field="active")
        changes["active"] = fields["active"]
    if "reason" in fields:
        changes["reason"] = check_text(fields["reason"], "reason", REASON_WIDTH)
    if "description" in fields:
        changes["description"] = check_text(fields["description"], "description", DESCRIPTION_MAX)
    if "source" in fields:
        changes["source"] = check_source(fields["source"])
    if "expires_at" in fields or "duration_minutes" in fields:
        changes["expires_at"] = resolve_expiry(
            fields.get("expires_at"), fields.get("duration_minutes"), now
        )
    return changes
