"""Poll sources: checked configuration, storage, the URL each poll fetches, and their health.

Three kinds of source:

``json-api``
    The agency's JSON alerts API (a GeoJSON FeatureCollection). ``url`` is the API's base URL
    (``https://api.weather.gov`` by default); the poll fetches ``<base>/alerts/active`` with
    ``?area=`` (two-letter state or marine area codes) or ``?zone=`` (UGC codes), or neither for
    the nationwide feed.
``cap-xml``
    Any URL answering CAP XML: one message, several, or an ATOM feed (entries that embed
    ``<alert>`` or link to it).
``ipaws``
    An IPAWS feed URL (an ``<alerts>`` wrapper of CAP messages). ``{since}`` in the URL is
    replaced by the time of the last success (less a minute of overlap), or an hour ago.

A URL must be http or https. Credentials in it (``https://user:pass@host/...``) are kept and
sent as Basic authentication, but never shown back: every answer carries the URL without them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlsplit

from sqlalchemy import Connection, Row, delete, insert, select, update

from alertstation.alerts.poll.fetch import split_credentials
from alertstation.alerts.poll.tables import (
    AREA_WIDTH,
    NAME_WIDTH,
    URL_WIDTH,
    poll_source_links,
    poll_sources,
)
from alertstation.audit.actor import Actor
from alertstation.audit.changes import config_changes
from alertstation.audit.ledger import CONFIG_UPDATED, AuditLedger
from alertstation.errors import FieldError, NameTaken, raise_field_errors
from alertstation.zones.validate import normalise_zone_code

KINDS = ("json-api", "cap-xml", "ipaws")
DEFAULT_API_BASE = "https://api.weather.gov"
DEFAULT_INTERVAL = 60
MIN_INTERVAL, MAX_INTERVAL = 10, 86_400
MIN_TIMEOUT, MAX_TIMEOUT = 0.05, 300.0
DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT = 5.0, 15.0
MAX_ZONES = 500
SINCE = "{since}"
SINCE_LOOKBACK = timedelta(hours=1)
SINCE_OVERLAP = timedelta(minutes=1)
#: Consecutive failures from which a source shows as failing rather than degraded.
FAILING_AFTER = 3
AUDIT_TARGET = "poller"
_AREA = re.compile(r"^[A-Z]{2}$")
_UGC = re.compile(r"^[A-Z]{2}[CZ]\d{3}$")
_SEPARATORS = re.compile(r"[\s,]+")
_C = poll_sources.c


#: A source setting is not acceptable; ``field`` names it (the shared field error).
SourceError = FieldError
#: Another source already has this name.
SourceNameTaken = NameTaken


@dataclass(frozen=True)
class SourceConfig:
    """Hold what an operator configures for one source (the health fields are not here)."""

    name: str
    kind: str
    url: str
    area: tuple[str, ...] = ()
    zones: tuple[str, ...] = ()
    interval_seconds: int = DEFAULT_INTERVAL
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    enabled: bool = True

    @classmethod
    def from_row(cls, row: Row[Any]) -> SourceConfig:
        """Read the configuration part of a ``poll_sources`` row."""
        return cls(
            name=row.name,
            kind=row.kind,
            url=row.url,
            area=_split(row.area),
            zones=_split(row.zones),
            interval_seconds=row.interval_seconds,
            connect_timeout=row.connect_timeout_ms / 1000,
            read_timeout=row.read_timeout_ms / 1000,
            enabled=bool(row.enabled),
        )

    def columns(self) -> dict[str, Any]:
        """Return the column values of this configuration."""
        return {
            "name": self.name,
            "kind": self.kind,
            "url": self.url,
            "area": ",".join(self.area),
            "zones": ",".join(self.zones),
            "interval_seconds": self.interval_seconds,
            "connect_timeout_ms": round(self.connect_timeout * 1000),
            "read_timeout_ms": round(self.read_timeout * 1000),
            "enabled": self.enabled,
        }

    def target_differs(self, other: SourceConfig) -> bool:
        """Tell whether ``other`` fetches something else (so old validators no longer apply)."""
        return (self.kind, self.url, self.area, self.zones) != (
            other.kind,
            other.url,
            other.area,
            other.zones,
        )


def _split(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split(",") if part)


# --- validation -------------------------------------------------------------------------------


def read_config(body: Mapping[str, Any], current: SourceConfig | None = None) -> SourceConfig:
    """Check a source body (all fields for a new source, any subset for an edit).

    ``connect_timeout`` and ``read_timeout`` are in seconds. Raises SourceError naming the
    bad field, or ``FieldErrors`` naming each of several bad fields (so a form shows them all
    at once); an unknown field is an error too.
    """
    allowed = {f.name for f in fields(SourceConfig)}
    unknown = sorted(set(body) - allowed)
    errors: list[FieldError] = [SourceError(name, f"unknown field {name}") for name in unknown]
    kind = current.kind if current is not None else None
    if current is None:
        missing = [name for name in ("name", "kind") if name not in body]
        errors.extend(SourceError(name, f"{name} is required") for name in missing)
        if "kind" in body:
            kind = _collect(errors, check_kind, body["kind"])
        if "url" not in body and kind not in (None, "json-api"):
            errors.append(SourceError("url", "url is required"))
        current = SourceConfig(name="", kind=kind or "json-api", url=DEFAULT_API_BASE)
    changes: dict[str, Any] = {}
    checks = {
        "name": check_name,
        "kind": check_kind,
        "area": lambda v: _area_codes(v),
        "zones": lambda v: _zone_codes(v),
        "interval_seconds": lambda v: _number(v, "interval_seconds", MIN_INTERVAL, MAX_INTERVAL),
        "connect_timeout": lambda v: _seconds(v, "connect_timeout"),
        "read_timeout": lambda v: _seconds(v, "read_timeout"),
        "enabled": _enabled,
    }
    for name, check in checks.items():
        if name in body and not (name == "kind" and kind is None):
            value = _collect(errors, check, body[name])
            if value is not None:
                changes[name] = value
    if "url" in body:
        url = _collect(errors, check_url, body["url"], changes.get("kind", current.kind))
        if url is not None:
            changes["url"] = url
    raise_field_errors(errors)
    config = replace(current, **changes)
    if "kind" in changes and "url" not in changes:
        config = replace(config, url=check_url(config.url, config.kind))
    return _check_combination(config)


def _collect(errors: list[FieldError], check: Any, *args: Any) -> Any:
    """Return ``check(*args)``, or None after adding its SourceError to ``errors``."""
    try:
        return check(*args)
    except SourceError as ex:
        errors.append(ex)
        return None


def _check_combination(config: SourceConfig) -> SourceConfig:
    if config.kind != "json-api" and (config.area or config.zones):
        raise SourceError("area", "area and zones apply to json-api sources only")
    if config.area and config.zones:
        raise SourceError("zones", "give area or zones, not both (the API takes one of them)")
    if SINCE in config.url and config.kind != "ipaws":
        raise SourceError("url", f"{SINCE} is only replaced in ipaws URLs")
    return config


def check_name(value: Any) -> str:
    """Return a trimmed source name of 1..100 printable characters."""
    if not isinstance(value, str) or not value.strip():
        raise SourceError("name", "name must be a non-empty string")
    name = " ".join(value.split())
    if len(name) > NAME_WIDTH or not name.isprintable():
        raise SourceError("name", f"name must be at most {NAME_WIDTH} printable characters")
    return name


def check_kind(value: Any) -> str:
    """Return a known source kind."""
    if value not in KINDS:
        raise SourceError("kind", f"kind must be one of {', '.join(KINDS)}")
    return str(value)


def check_url(value: Any, kind: str) -> str:
    """Return an http(s) URL with a host; for json-api a base URL without query."""
    if not isinstance(value, str) or not value.strip():
        raise SourceError("url", "url must be a non-empty string")
    url = value.strip()
    if len(url) > URL_WIDTH or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise SourceError("url", f"url must be one line of at most {URL_WIDTH} characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError as ex:
        raise SourceError("url", f"url is not a valid URL ({ex})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise SourceError("url", "url must start with http:// or https://")
    if not parts.hostname:
        raise SourceError("url", "url has no host")
    if parts.fragment:
        raise SourceError("url", "url must not have a #fragment")
    if kind == "json-api":
        if parts.query:
            raise SourceError("url", "a json-api url is the API's base URL, without a query")
        url = url.rstrip("/")
    if "{" in url.replace(SINCE, "") or "}" in url.replace(SINCE, ""):
        raise SourceError("url", f"the only placeholder a url may hold is {SINCE}")
    return url


def _codes(value: Any, field: str) -> list[str]:
    if isinstance(value, str):
        tokens = _SEPARATORS.split(value)
    elif isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        tokens = [part for item in value for part in _SEPARATORS.split(item)]
    else:
        raise SourceError(field, f"{field} must be a list of codes or a text of codes")
    return [token.strip().upper() for token in tokens if token.strip()]


def _area_codes(value: Any) -> tuple[str, ...]:
    codes = list(dict.fromkeys(_codes(value, "area")))
    bad = [code for code in codes if not _AREA.match(code)]
    if bad:
        raise SourceError("area", f"area: not two-letter state or marine area codes: {bad[0]}")
    if len(",".join(codes)) > AREA_WIDTH:
        raise SourceError("area", "area holds too many codes")
    return tuple(codes)


def _zone_codes(value: Any) -> tuple[str, ...]:
    codes = list(dict.fromkeys(normalise_zone_code(code) for code in _codes(value, "zones")))
    invalid = [code for code in codes if not _UGC.match(code)]
    if invalid:
        raise SourceError(
            "zones", f"zones: not UGC zone or county codes (SSZNNN, SSCNNN): {invalid[0]}"
        )
    valid = codes
    if len(valid) > MAX_ZONES:
        raise SourceError("zones", f"zones holds more than {MAX_ZONES} codes")
    return tuple(valid)


def _number(value: Any, field: str, low: float, high: float) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SourceError(field, f"{field} must be a whole number from {low:g} to {high:g}")
    return value


def _seconds(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SourceError(field, f"{field} must be a number of seconds")
    if not MIN_TIMEOUT <= value <= MAX_TIMEOUT:
        raise SourceError(field, f"{field} must be from {MIN_TIMEOUT:g} to {MAX_TIMEOUT:g} s")
    return float(value)


def _enabled(value: Any) -> bool:
    if not isinstance(value, bool):
        raise SourceError("enabled", "enabled must be true or false")
    return value


# --- storage ----------------------------------------------------------------------------------


def list_sources(conn: Connection, *, enabled_only: bool = False) -> list[Row[Any]]:
    """Return every source (or the enabled ones), by name."""
    query = select(poll_sources).order_by(_C.name, _C.id)
    if enabled_only:
        query = query.where(_C.enabled.is_(True))
    return list(conn.execute(query).all())


def get_source(conn: Connection, source_id: int) -> Row[Any]:
    """Return one source row; LookupError when there is none."""
    row = conn.execute(select(poll_sources).where(_C.id == source_id)).first()
    if row is None:
        raise LookupError(f"no poll source {source_id}")
    return row


def find_source(conn: Connection, name_or_id: str) -> Row[Any]:
    """Return the source named ``name_or_id`` (or with that id); LookupError when none."""
    row = conn.execute(select(poll_sources).where(_C.name == name_or_id)).first()
    if row is None and name_or_id.isdigit():
        row = conn.execute(select(poll_sources).where(_C.id == int(name_or_id))).first()
    if row is None:
        raise LookupError(f"no poll source named {name_or_id!r}")
    return row


def _check_name_free(conn: Connection, name: str, source_id: int | None = None) -> None:
    query = select(_C.id).where(_C.name == name)
    if source_id is not None:
        query = query.where(_C.id != source_id)
    if conn.execute(query).first() is not None:
        raise SourceNameTaken("name", f"a source named {name!r} already exists")


def create_source(conn: Connection, config: SourceConfig, now: datetime) -> int:
    """Insert a source, due at once; return its id. SourceNameTaken for a duplicate name."""
    _check_name_free(conn, config.name)
    result = conn.execute(
        insert(poll_sources).values(
            **config.columns(), created_at=now, updated_at=now, next_attempt_at=now
        )
    )
    return int(result.inserted_primary_key[0])


def update_source(
    conn: Connection, source_id: int, config: SourceConfig, now: datetime
) -> list[str]:
    """Write a changed configuration; return the changed field names.

    When the source now fetches something else, its validators, seen links and failure count
    are dropped and it is due at once; re-enabling a source also makes it due at once.
    """
    row = get_source(conn, source_id)
    before = SourceConfig.from_row(row)
    changed = [
        f.name for f in fields(SourceConfig) if getattr(before, f.name) != getattr(config, f.name)
    ]
    if not changed:
        return []
    _check_name_free(conn, config.name, source_id)
    values: dict[str, Any] = {**config.columns(), "updated_at": now}
    if before.target_differs(config):
        values.update(etag=None, last_modified=None, consecutive_failures=0, next_attempt_at=now)
        conn.execute(delete(poll_source_links).where(poll_source_links.c.source_id == source_id))
    elif config.enabled and not before.enabled:
        values.update(consecutive_failures=0, next_attempt_at=now)
    conn.execute(update(poll_sources).where(_C.id == source_id).values(**values))
    return changed


def delete_source(conn: Connection, source_id: int) -> Row[Any]:
    """Delete a source and its seen links; return the row it had."""
    row = get_source(conn, source_id)
    conn.execute(delete(poll_source_links).where(poll_source_links.c.source_id == source_id))
    conn.execute(delete(poll_sources).where(_C.id == source_id))
    return row


#: Fields of a source the audit records by name only: a feed URL may carry an API key.
AUDIT_SECRETS = ("url",)


def audit_change(
    ledger: AuditLedger,
    conn: Connection,
    actor: Actor,
    change: str,
    row_id: int,
    name: str,
    changed: list[str],
    before: SourceConfig | None = None,
    after: SourceConfig | None = None,
) -> None:
    """Record ``config.updated`` (target ``poller``) for a source change.

    Given the configuration ``before`` and ``after`` an edit, ``changes`` holds old → new
    values of the changed fields; the URL (which may carry an API key) stays a name only.
    """
    details: dict[str, Any] = {
        "fields": sorted(changed),
        "change": change,
        "source_id": row_id,
        "name": name,
    }
    if before is not None and after is not None:
        changes = config_changes(
            asdict(before), asdict(after), names=changed, secrets=AUDIT_SECRETS
        )
        if changes:
            details["changes"] = changes
    ledger.record_or_refuse(conn, actor, CONFIG_UPDATED, target=AUDIT_TARGET, details=details)


# --- what a poll fetches ----------------------------------------------------------------------


def fetch_url(row: Row[Any] | SourceConfig, now: datetime, last_success: datetime | None) -> str:
    """Return the URL one poll of a source fetches (credentials still in it)."""
    config = row if isinstance(row, SourceConfig) else SourceConfig.from_row(row)
    if config.kind == "json-api":
        url = f"{config.url}/alerts/active"
        if config.area:
            return f"{url}?area={quote(','.join(config.area), safe=',')}"
        if config.zones:
            return f"{url}?zone={quote(','.join(config.zones), safe=',')}"
        return url
    if config.kind == "ipaws" and SINCE in config.url:
        since = (last_success - SINCE_OVERLAP) if last_success else (now - SINCE_LOOKBACK)
        return config.url.replace(SINCE, since.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return config.url


def display_url(url: str) -> str:
    """Return ``url`` without credentials, for showing and logging."""
    return split_credentials(url)[0]


def url_host(url: str) -> str:
    """Return the host (and port when given) of ``url``."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host


def has_credentials(url: str) -> bool:
    """Tell whether ``url`` carries a user name or password."""
    return split_credentials(url)[1] is not None


# --- health -----------------------------------------------------------------------------------


def health_of(row: Row[Any], now: datetime) -> str:
    """Return ``disabled``, ``pending``, ``healthy``, ``degraded`` or ``failing``.

    Failing from ``FAILING_AFTER`` consecutive failures; degraded after fewer, after a success
    that left a note (a linked document that could not be fetched), or when the next attempt
    is overdue by more than two intervals (the worker is probably not running).
    """
    if not row.enabled:
        return "disabled"
    if row.consecutive_failures >= FAILING_AFTER:
        return "failing"
    if row.consecutive_failures or (row.last_success_at and row.last_error):
        return "degraded"
    if row.last_attempt_at is None:
        return "pending"
    overdue = timedelta(seconds=max(2 * row.interval_seconds, 60))
    if row.next_attempt_at is not None and now - row.next_attempt_at > overdue:
        return "degraded"
    return "healthy"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def public_health(row: Row[Any], now: datetime) -> dict[str, Any]:
    """Return a source's health without its URL or error text (for the public status API)."""
    return {
        "id": row.id,
        "name": row.name,
        "kind": row.kind,
        "enabled": bool(row.enabled),
        "health": health_of(row, now),
        "last_attempt": _iso(row.last_attempt_at),
        "last_success": _iso(row.last_success_at),
        "last_status": row.last_status,
        "consecutive_failures": row.consecutive_failures,
        "next_attempt": _iso(row.next_attempt_at) if row.enabled else None,
        "alerts_stored_last_run": row.last_stored,
    }


def source_as_dict(row: Row[Any], now: datetime) -> dict[str, Any]:
    """Return a source as the admin API shows it: settings, health, URL without credentials."""
    config = SourceConfig.from_row(row)
    return {
        **public_health(row, now),
        "url": display_url(row.url),
        "url_has_credentials": has_credentials(row.url),
        "host": url_host(row.url),
        "area": list(config.area),
        "zones": list(config.zones),
        "interval_seconds": config.interval_seconds,
        "connect_timeout": config.connect_timeout,
        "read_timeout": config.read_timeout,
        "last_error": row.last_error,
        "alerts_received_last_run": row.last_received,
        "skipped_last_run": row.last_skipped,
        "last_duration_ms": row.last_duration_ms,
        "conditional": {"etag": row.etag is not None, "last_modified": row.last_modified},
        "created_at": _iso(row.created_at),
        "updated_at": _iso(row.updated_at),
    }
