"""Traffic analytics settings: defaults, validation, storage and the per-process cache.

One row (id 1) of ``traffic_analytics_settings``; a fresh database runs on ``TrafficSettings()``.
``TrafficSettingsCache`` follows the ``traffic`` generation (re-read at most once a second), so
the recorder's middleware never queries for them, and keeps the last good settings while the
database is down. Its ``state`` (valid-until time, settings) lets a hot path take the settings
with one clock reading and no call; ``TrafficSettings.record_rules`` holds the collection rules
as the recorder applies them.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from functools import cached_property
from ipaddress import ip_address
from typing import Any

from sqlalchemy import Connection, Engine, select
from sqlalchemy.exc import IntegrityError

from alertstation.db.generations import FallbackCache, bump_generation
from alertstation.db.types import as_utc
from alertstation.errors import Invalid
from alertstation.traffic.tables import TRAFFIC_GENERATION, traffic_analytics_settings

log = logging.getLogger("alertstation.traffic")

SECTION = "traffic"
MAX_RETENTION_DAYS = 3_650
MAX_SKIP_PATHS = 64
MAX_PATH_LENGTH = 200
MAX_SITE_HOSTS = 16
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")
MAX_THRESHOLD = 1_000_000
_PATH = re.compile(r"^/[A-Za-z0-9._~%/-]*$")

# The recorder's rules (``TrafficSettings.record_rules``): authenticated_only, log_api_requests,
# skip_paths, exclude_internal, exclude_bots, anonymize_ip.
RecordRules = tuple[bool, bool, tuple[str, ...], bool, bool, bool]


@dataclass(frozen=True)
class TrafficSettings:
    """Every traffic analytics setting (the spec's table, plus the dashboard cache switch)."""

    enabled: bool = True
    retention_days: int = 90
    log_api_requests: bool = False
    authenticated_only: bool = False
    exclude_bots: bool = False
    exclude_internal: bool = True
    skip_paths: tuple[str, ...] = ()
    anonymize_ip: bool = False
    geoip_database_path: str | None = None
    geoip_asn_database_path: str | None = None
    resolve_hostnames: bool = False
    dashboard_cache: bool = False
    anomaly_detection_enabled: bool = True
    anomaly_error_rate_pct: float = 20.0
    anomaly_5xx_threshold: int = 10
    anomaly_failed_login_threshold: int = 10
    anomaly_scanner_threshold: int = 20
    anomaly_spike_factor: float = 3.0
    #: The site's own host names: an imported line whose referrer is on one of them is a
    #: self-referral (an access log does not say which host a request was sent to).
    site_hosts: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form (``skip_paths`` as a list)."""
        form = asdict(self)
        form["skip_paths"] = list(self.skip_paths)
        form["site_hosts"] = list(self.site_hosts)
        return form

    @cached_property
    def record_rules(self) -> RecordRules | None:
        """The request recorder's rules in one tuple, None when collection is off.

        Computed once per settings object (a plain attribute read afterwards): the
        ``authenticated_only`` switch, whether API calls are recorded, the skip-path prefixes
        as a tuple, ``exclude_internal``, ``exclude_bots`` and ``anonymize_ip``.
        """
        if not self.enabled:
            return None
        return (
            self.authenticated_only,
            self.log_api_requests,
            tuple(self.skip_paths),
            self.exclude_internal,
            self.exclude_bots,
            self.anonymize_ip,
        )


FIELD_NAMES = tuple(f.name for f in fields(TrafficSettings))
_BOOLS = frozenset(
    name for name in FIELD_NAMES if isinstance(getattr(TrafficSettings(), name), bool)
)
_WHOLE = {
    "retention_days": (1, MAX_RETENTION_DAYS),
    "anomaly_5xx_threshold": (1, MAX_THRESHOLD),
    "anomaly_failed_login_threshold": (1, MAX_THRESHOLD),
    "anomaly_scanner_threshold": (1, MAX_THRESHOLD),
}
_REAL = {"anomaly_error_rate_pct": (0.1, 100.0), "anomaly_spike_factor": (1.1, 1000.0)}
_PATHS = ("geoip_database_path", "geoip_asn_database_path")


def load_settings(conn: Connection) -> TrafficSettings:
    """Return the stored settings, or the defaults when none were saved."""
    row = conn.execute(
        select(traffic_analytics_settings).where(traffic_analytics_settings.c.id == 1)
    ).first()
    if row is None:
        return TrafficSettings()
    values = {name: getattr(row, name) for name in FIELD_NAMES}
    values["skip_paths"] = tuple(line for line in (row.skip_paths or "").splitlines() if line)
    values["site_hosts"] = tuple(line for line in (row.site_hosts or "").splitlines() if line)
    for name in _BOOLS:
        values[name] = bool(values[name])
    return TrafficSettings(**values)


def save_settings(
    conn: Connection, body: Mapping[str, Any], now: datetime
) -> tuple[TrafficSettings, list[str]]:
    """Validate and store a change; return the new settings and the sorted changed field names."""
    before = load_settings(conn)
    after = apply_changes(before, body)
    changed = sorted(name for name in FIELD_NAMES if getattr(before, name) != getattr(after, name))
    if not changed:
        return after, []
    values = asdict(after)
    values["skip_paths"] = "\n".join(after.skip_paths)
    values["site_hosts"] = "\n".join(after.site_hosts)
    values["updated_at"] = as_utc(now)
    table = traffic_analytics_settings
    if not conn.execute(table.update().where(table.c.id == 1).values(**values)).rowcount:
        try:
            with conn.begin_nested():
                conn.execute(table.insert().values(id=1, **values))
        except IntegrityError:  # a concurrent save inserted it meanwhile
            conn.execute(table.update().where(table.c.id == 1).values(**values))
    bump_generation(conn, TRAFFIC_GENERATION)
    return after, changed


def apply_changes(current: TrafficSettings, body: Mapping[str, Any]) -> TrafficSettings:
    """Return ``current`` with the validated changes of ``body``; Invalid names the bad field."""
    unknown = sorted(set(body) - set(FIELD_NAMES))
    if unknown:
        raise Invalid(f"unknown setting {unknown[0]}", field=unknown[0])
    changes: dict[str, Any] = {}
    for name, value in body.items():
        if name in _BOOLS:
            if not isinstance(value, bool):
                raise Invalid(f"{name} must be true or false", field=name)
            changes[name] = value
        elif name in _WHOLE:
            low, high = _WHOLE[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise Invalid(f"{name} must be a whole number within {low}..{high}", field=name)
            changes[name] = value
        elif name in _REAL:
            low_real, high_real = _REAL[name]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise Invalid(f"{name} must be a number", field=name)
            if not low_real <= value <= high_real:
                raise Invalid(f"{name} must be within {low_real}..{high_real}", field=name)
            changes[name] = float(value)
        elif name in _PATHS:
            if value is not None and (not isinstance(value, str) or not 0 < len(value) <= 1024):
                raise Invalid(f"{name} must be a file path or null", field=name)
            changes[name] = value or None
        else:  # skip_paths, site_hosts
            changes[name] = _LISTS[name](value)
    return replace(current, **changes)


def check_skip_paths(value: object) -> tuple[str, ...]:
    """Return a validated list of path prefixes: absolute, plain characters, no duplicates."""
    if not isinstance(value, list) or len(value) > MAX_SKIP_PATHS:
        raise Invalid(
            f"skip_paths must be a list of at most {MAX_SKIP_PATHS} paths", field="skip_paths"
        )
    paths: list[str] = []
    for item in value:
        if not isinstance(item, str) or not 0 < len(item) <= MAX_PATH_LENGTH:
            raise Invalid(
                f"each skip path must be 1..{MAX_PATH_LENGTH} characters", field="skip_paths"
            )
        if not _PATH.match(item):
            raise Invalid(
                f"{item!r} is not a path prefix: start with / and use plain characters",
                field="skip_paths",
            )
        if item not in paths:
            paths.append(item)
    return tuple(paths)


def check_site_hosts(value: object) -> tuple[str, ...]:
    """Return a validated list of the site's host names (``site_host_names``)."""
    if not isinstance(value, list):
        raise Invalid(
            f"site_hosts must be a list of at most {MAX_SITE_HOSTS} host names", field="site_hosts"
        )
    try:
        return site_host_names(value)
    except ValueError as error:
        raise Invalid(str(error), field="site_hosts") from None


def site_host_names(values: Sequence[object]) -> tuple[str, ...]:
    """Return host names as they are kept: lower case, without a port or a leading ``www.``, no
    duplicates; ValueError names the first that is not a host name."""
    if len(values) > MAX_SITE_HOSTS:
        raise ValueError(f"site_hosts must be a list of at most {MAX_SITE_HOSTS} host names")
    hosts: list[str] = []
    for value in values:
        host = value.strip().lower().rstrip(".") if isinstance(value, str) else ""
        if host.startswith("["):  # [2001:db8::1] or [2001:db8::1]:8443
            host = host[1:].partition("]")[0]
        elif host.count(":") == 1:  # host:port (an IPv6 address has more colons)
            host = host.partition(":")[0]
        host = host.removeprefix("www.")
        address = _address(host)
        if address is not None:
            host = address
        elif not _HOST.match(host):
            raise ValueError(f"{value!r} is not a host name (example.org)")
        if host not in hosts:
            hosts.append(host)
    return tuple(hosts)


def _address(text: str) -> str | None:
    """Return an IP address as ``urlsplit(...).hostname`` gives it, None when not one."""
    try:
        return str(ip_address(text))
    except ValueError:
        return None


_LISTS: dict[str, Callable[[object], tuple[str, ...]]] = {
    "skip_paths": check_skip_paths,
    "site_hosts": check_site_hosts,
}


class TrafficSettingsCache(FallbackCache[TrafficSettings]):
    """Hold the settings in memory; follows the ``traffic`` generation, survives outages.

    ``get()`` reads the stored generation (and the settings when it moved) at most once per
    ``check_interval`` seconds of ``monotonic``; while the database is down it answers the last
    good settings and tries again after the same interval. ``state`` is ``(valid_until,
    settings, settings.record_rules)``: while ``monotonic() < valid_until``, ``settings`` is
    what ``get()`` answers, so a hot path reads ``state`` and the clock instead of calling
    ``get()``; or it asks to be handed each new ``state`` (``follow``), and reads its own copy.
    ``clear()`` (after a save in this process) ends it at once.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        check_interval: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        # The generation is asked on every inner get(): this class decides when to ask.
        super().__init__(
            engine,
            TRAFFIC_GENERATION,
            load_settings,
            TrafficSettings(),
            what="traffic settings",
            check_interval=0.0,
            monotonic=monotonic,
        )
        self.check_interval = check_interval
        self.monotonic = monotonic
        first = TrafficSettings()
        self.state: tuple[float, TrafficSettings, RecordRules | None] = (
            float("-inf"),
            first,
            first.record_rules,
        )
        self._refresh_lock = threading.Lock()
        self._taps: weakref.WeakSet[Any] = weakref.WeakSet()

    def follow(self, tap: Any) -> None:
        """Hand every new ``state`` to ``tap.follow`` from now on (held weakly)."""
        with self._refresh_lock:
            self._taps.add(tap)
            tap.follow(self.state)

    def _set_state(self, state: tuple[float, TrafficSettings, RecordRules | None]) -> None:
        self.state = state
        for tap in list(self._taps):
            tap.follow(state)

    def get(self) -> TrafficSettings:
        """Return the settings, re-checking the generation when ``check_interval`` has passed."""
        valid_until, settings, _ = self.state
        if self.monotonic() < valid_until:
            return settings
        with self._refresh_lock:
            now = self.monotonic()
            valid_until, settings, _ = self.state
            if now < valid_until:
                return settings  # another thread has just checked
            settings = super().get()  # the last good ones while the database is down
            self._set_state((now + self.check_interval, settings, settings.record_rules))
            return settings

    def clear(self) -> None:
        """Reload on the next get() (call after saving in this process)."""
        with self._refresh_lock:
            super().clear()
            self._set_state((float("-inf"), *self.state[1:]))


_caches: weakref.WeakKeyDictionary[Engine, TrafficSettingsCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def settings_cache_for(engine: Engine) -> TrafficSettingsCache:
    """Return this process's settings cache for ``engine`` (the recorder's and the routes')."""
    with _caches_lock:
        cache = _caches.get(engine)
        if cache is None:
            cache = _caches[engine] = TrafficSettingsCache(engine)
        return cache
