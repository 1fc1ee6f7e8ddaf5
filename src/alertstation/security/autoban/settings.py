"""Automatic-ban settings: one rule per detector, the event retention, validation and storage.

A rule says whether its detector is on, how many events (``threshold``) within how many seconds
(``window_seconds``) trip it, and how long the ban lasts (``ban_seconds``, 0 = permanent). The
API-abuse and stream-abuse detectors also watch a list of ``paths`` (``*`` stands for one path
segment). Stored rows override ``DEFAULT_RULES``; a fresh database runs on the defaults.

``AutobanSettingsCache`` keeps the settings in memory per station and follows the ``autoban``
generation (re-read at most once a second), so the request path never queries for them.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Column, Connection, Engine, Table, select
from sqlalchemy.exc import IntegrityError

from alertstation.db.generations import FallbackCache, bump_generation
from alertstation.db.types import as_utc
from alertstation.errors import Invalid
from alertstation.security.autoban.tables import AUTOBAN_GENERATION, autoban_rules, autoban_settings

log = logging.getLogger("alertstation.security.autoban.detectors")

LOGIN_BRUTE_FORCE = "login_brute_force"
MALICIOUS_REQUEST = "malicious_request"
FLOOD = "flood"
API_ABUSE = "api_abuse"
STREAM_ABUSE = "stream_abuse"
DETECTORS = (LOGIN_BRUTE_FORCE, MALICIOUS_REQUEST, FLOOD, API_ABUSE, STREAM_ABUSE)
PATH_DETECTORS = frozenset({API_ABUSE, STREAM_ABUSE})
SECTION = "autoban"

MAX_THRESHOLD = 100_000
MAX_WINDOW_SECONDS = 86_400  # one day: events are kept at least that long
MIN_BAN_SECONDS = 60
MAX_BAN_SECONDS = 366 * 86_400
MAX_RETENTION_DAYS = 3_650
MAX_PATHS = 32
MAX_PATH_LENGTH = 200
RULE_FIELDS = ("enabled", "threshold", "window_seconds", "ban_seconds", "paths")
_PATH = re.compile(r"^/[A-Za-z0-9._~%/*-]*$")


@dataclass(frozen=True)
class Rule:
    """The configuration of one detector."""

    source: str
    enabled: bool
    threshold: int
    window_seconds: int
    ban_seconds: int
    paths: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form (``paths`` only for the detectors that watch paths)."""
        form: dict[str, Any] = {
            "enabled": self.enabled,
            "threshold": self.threshold,
            "window_seconds": self.window_seconds,
            "ban_seconds": self.ban_seconds,
        }
        if self.source in PATH_DETECTORS:
            form["paths"] = list(self.paths)
        return form


DEFAULT_RULES: dict[str, Rule] = {
    LOGIN_BRUTE_FORCE: Rule(LOGIN_BRUTE_FORCE, True, 10, 900, 3_600),
    MALICIOUS_REQUEST: Rule(MALICIOUS_REQUEST, True, 3, 600, 86_400),
    FLOOD: Rule(FLOOD, True, 300, 10, 3_600),
    API_ABUSE: Rule(API_ABUSE, True, 120, 60, 3_600, ("/api/",)),
    STREAM_ABUSE: Rule(
        STREAM_ABUSE,
        True,
        60,
        60,
        3_600,
        ("/stream", "/api/audio/stream", "/messages/*/audio.wav", "/eas/manual/events/*/audio.wav"),
    ),
}
DEFAULT_RETENTION_DAYS = 30


@dataclass(frozen=True)
class AutobanSettings:
    """Every detector's rule and the number of days security events are kept."""

    rules: Mapping[str, Rule] = field(default_factory=lambda: dict(DEFAULT_RULES))
    retention_days: int = DEFAULT_RETENTION_DAYS

    def rule(self, source: str) -> Rule:
        """Return the rule of one detector."""
        return self.rules[source]

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form: ``retention_days`` and ``detectors`` by source."""
        return {
            "retention_days": self.retention_days,
            "detectors": {source: self.rules[source].as_dict() for source in DETECTORS},
        }


# --- storage --------------------------------------------------------------------------------


def _split_paths(text: str | None) -> tuple[str, ...]:
    return tuple(line for line in (text or "").splitlines() if line)


def load_settings(conn: Connection) -> AutobanSettings:
    """Return the stored settings over the defaults."""
    rules = dict(DEFAULT_RULES)
    for row in conn.execute(select(autoban_rules)):
        if row.source in rules:
            rules[row.source] = Rule(
                row.source,
                bool(row.enabled),
                int(row.threshold),
                int(row.window_seconds),
                int(row.ban_seconds),
                _split_paths(row.paths) if row.source in PATH_DETECTORS else (),
            )
    retention = conn.execute(
        select(autoban_settings.c.retention_days).where(autoban_settings.c.id == 1)
    ).scalar()
    return AutobanSettings(rules, int(retention) if retention else DEFAULT_RETENTION_DAYS)


def save_settings(
    conn: Connection, body: Mapping[str, Any], now: datetime
) -> tuple[AutobanSettings, list[str]]:
    """Validate and store a change; return the new settings and the names of changed fields.

    ``body`` has the JSON form's shape, any part of it: ``retention_days`` and ``detectors``
    mapping sources to some of their fields. Changed names read ``retention_days`` or
    ``<source>.<field>``. Bumps the ``autoban`` generation when anything changed.
    """
    before = load_settings(conn)
    after = apply_changes(before, body)
    changed = changed_fields(before, after)
    if not changed:
        return after, []
    stamp = as_utc(now)
    for source in DETECTORS:
        rule = after.rule(source)
        if rule == before.rule(source):
            continue
        values = {
            "enabled": rule.enabled,
            "threshold": rule.threshold,
            "window_seconds": rule.window_seconds,
            "ban_seconds": rule.ban_seconds,
            "paths": "\n".join(rule.paths) if source in PATH_DETECTORS else None,
            "updated_at": stamp,
        }
        _upsert(conn, autoban_rules, autoban_rules.c.source, source, values)
    settings_values = {"retention_days": after.retention_days, "updated_at": stamp}
    _upsert(conn, autoban_settings, autoban_settings.c.id, 1, settings_values)
    bump_generation(conn, AUTOBAN_GENERATION)
    return after, changed


def _upsert(
    conn: Connection, table: Table, key: Column[Any], value: object, values: dict[str, Any]
) -> None:
    """Update the row whose ``key`` is ``value``, or insert it (a concurrent insert: update)."""
    if conn.execute(table.update().where(key == value).values(**values)).rowcount:
        return
    try:
        with conn.begin_nested():
            conn.execute(table.insert().values({key.name: value, **values}))
    except IntegrityError:  # another save inserted it meanwhile
        conn.execute(table.update().where(key == value).values(**values))


def changed_fields(before: AutobanSettings, after: AutobanSettings) -> list[str]:
    """Return the sorted names of the fields that differ (``flood.threshold`` ...)."""
    names = ["retention_days"] if before.retention_days != after.retention_days else []
    for source in DETECTORS:
        old, new = before.rule(source), after.rule(source)
        names += [
            f"{source}.{name}" for name in RULE_FIELDS if getattr(old, name) != getattr(new, name)
        ]
    return sorted(names)


# --- validation -----------------------------------------------------------------------------


def apply_changes(current: AutobanSettings, body: Mapping[str, Any]) -> AutobanSettings:
    """Return ``current`` with the validated changes of ``body``; Invalid names the bad field."""
    unknown = sorted(set(body) - {"retention_days", "detectors"})
    if unknown:
        raise Invalid(f"unknown setting {unknown[0]}", field=unknown[0])
    retention = current.retention_days
    if "retention_days" in body:
        retention = _whole(body["retention_days"], "retention_days", 1, MAX_RETENTION_DAYS)
    rules = dict(current.rules)
    detectors = body.get("detectors", {})
    if not isinstance(detectors, Mapping):
        raise Invalid("detectors must be an object keyed by detector", field="detectors")
    for source, fields in detectors.items():
        if source not in DETECTORS:
            raise Invalid(
                f"unknown detector {source}; detectors are {', '.join(DETECTORS)}",
                field=f"detectors.{source}",
            )
        rules[source] = _rule_changes(rules[source], fields)
    return AutobanSettings(rules, retention)


def _rule_changes(rule: Rule, fields: object) -> Rule:
    where = f"detectors.{rule.source}"
    if not isinstance(fields, Mapping):
        raise Invalid(f"{where} must be an object", field=where)
    allowed = set(RULE_FIELDS) if rule.source in PATH_DETECTORS else set(RULE_FIELDS) - {"paths"}
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise Invalid(f"unknown field {unknown[0]} of {rule.source}", field=f"{where}.{unknown[0]}")
    changes: dict[str, Any] = {}
    if "enabled" in fields:
        if not isinstance(fields["enabled"], bool):
            raise Invalid("enabled must be true or false", field=f"{where}.enabled")
        changes["enabled"] = fields["enabled"]
    if "threshold" in fields:
        changes["threshold"] = _whole(fields["threshold"], f"{where}.threshold", 1, MAX_THRESHOLD)
    if "window_seconds" in fields:
        changes["window_seconds"] = _whole(
            fields["window_seconds"], f"{where}.window_seconds", 1, MAX_WINDOW_SECONDS
        )
    if "ban_seconds" in fields:
        name = f"{where}.ban_seconds"
        seconds = _whole(fields["ban_seconds"], name, 0, MAX_BAN_SECONDS)
        if 0 < seconds < MIN_BAN_SECONDS:
            raise Invalid(
                f"ban_seconds must be 0 (permanent) or {MIN_BAN_SECONDS}..{MAX_BAN_SECONDS}",
                field=name,
            )
        changes["ban_seconds"] = seconds
    if "paths" in fields:
        changes["paths"] = check_paths(fields["paths"], f"{where}.paths")
    return replace(rule, **changes)


def _whole(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{name} must be a whole number", field=name)
    if not low <= value <= high:
        raise Invalid(f"{name} must be within {low}..{high}", field=name)
    return value


def check_paths(value: object, name: str = "paths") -> tuple[str, ...]:
    """Return a validated list of watched paths: absolute, plain characters, ``*`` segments."""
    if not isinstance(value, list) or len(value) > MAX_PATHS:
        raise Invalid(f"{name} must be a list of at most {MAX_PATHS} paths", field=name)
    paths: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item or len(item) > MAX_PATH_LENGTH:
            raise Invalid(
                f"each of {name} must be a path of 1..{MAX_PATH_LENGTH} characters", field=name
            )
        if not _PATH.match(item) or any("*" in part and part != "*" for part in item.split("/")):
            raise Invalid(
                f"{item!r} is not a path: start with /, use plain characters, and * only as a "
                "whole segment",
                field=name,
            )
        if item not in paths:
            paths.append(item)
    return tuple(paths)


def path_pattern(paths: tuple[str, ...]) -> re.Pattern[str] | None:
    """Compile watched paths into one anchored pattern; None when there are none.

    A path matches itself and anything below it (``/stream`` matches ``/stream/a`` but not
    ``/streams``); a path ending in ``/`` matches everything under it; ``*`` is one segment.
    """
    if not paths:
        return None
    parts = []
    for path in paths:
        body = "/".join("[^/]+" if part == "*" else re.escape(part) for part in path.split("/"))
        parts.append(body if path.endswith("/") else body + "(?:/|$)")
    return re.compile("(?:" + "|".join(parts) + ")")


# --- the per-engine cache -------------------------------------------------------------------


class AutobanSettingsCache(FallbackCache[AutobanSettings]):
    """Hold the settings in memory; follows the ``autoban`` generation, survives outages."""

    def __init__(
        self,
        engine: Engine,
        *,
        check_interval: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            engine,
            AUTOBAN_GENERATION,
            load_settings,
            AutobanSettings(),
            what="automatic-ban settings",
            check_interval=check_interval,
            monotonic=monotonic,
        )
