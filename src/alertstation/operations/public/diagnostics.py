"""The diagnostics bundle an admin attaches to a problem report: facts, never secrets.

It holds versions (station, Python, platform, libraries, database server), the schema revision
and pending migrations, the worker's heartbeat and supervisor, the poll sources' health and last
errors, failed forward-queue entries and this process's recent error log records.

Secrets never leave: the session secret, the audit ledger key, the database password and every
secret variable (from the environment or the saved file) are replaced by ``[redacted]`` wherever
they occur in the finished bundle, and credentials in URLs are removed, so a secret that reached
an error message is scrubbed too.
"""

from __future__ import annotations

import platform
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import orjson
from sqlalchemy import Engine, desc, make_url, select
from sqlalchemy.exc import SQLAlchemyError

from alertstation.alerts.poll.sources import list_sources, source_as_dict
from alertstation.alerts.tables import eas_forward_queue
from alertstation.context import Station
from alertstation.db.migrate import current_revision, head_revision, pending_revisions
from alertstation.operations.public.errorlog import recent_errors
from alertstation.settings import ENV_FILE, VARIABLES, read_env_file
from alertstation.version import __version__
from alertstation.worker.heartbeat import read_heartbeat
from alertstation.worker.supervisor import read_state as read_supervisor

REDACTED = "[redacted]"
LIBRARIES = (
    "alembic",
    "falcon",
    "gunicorn",
    "jinja2",
    "lxml",
    "markdown-it-py",
    "numpy",
    "psycopg",
    "scipy",
    "shapely",
    "sqlalchemy",
)
# Shorter values are too likely to occur by chance to be worth scrubbing (and say little).
_MIN_SECRET_CHARS = 4
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]+(?::[^/\s@]*)?@")


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str | None]:
    """Return the installed version of each library, None when it is missing."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def secret_values(station: Station, environ: Mapping[str, str]) -> set[str]:
    """Return every secret the station holds: keys, the database password, secret variables."""
    settings = station.settings
    values = {settings.secret_key, settings.audit_ledger_key}
    password = make_url(settings.database_url).password
    if password:
        values.add(str(password))
    saved = read_env_file(settings.data_dir / ENV_FILE)
    for variable in VARIABLES:
        if variable.secret:
            values.update(v for v in (environ.get(variable.name), saved.get(variable.name)) if v)
    if "DATABASE_URL" in saved:
        saved_password = make_url(saved["DATABASE_URL"]).password
        if saved_password:
            values.add(str(saved_password))
    return {value for value in values if value and len(value) >= _MIN_SECRET_CHARS}


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Remove URL credentials and every secret value from ``text`` (longest secrets first)."""
    text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + REDACTED + "@", text)
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
        # The JSON form escapes some characters; scrub that spelling as well.
        encoded = orjson.dumps(secret).decode()[1:-1]
        if encoded != secret:
            text = text.replace(encoded, REDACTED)
    return text


def _database(engine: Engine) -> dict[str, Any]:
    facts: dict[str, Any] = {"backend": engine.dialect.name, "reachable": False}
    try:
        with engine.connect() as conn:
            info = conn.dialect.server_version_info
            facts["server_version"] = ".".join(str(part) for part in info or ())
        facts.update(
            reachable=True,
            schema_revision=current_revision(engine),
            head_revision=head_revision(engine),
            pending_migrations=pending_revisions(engine),
        )
    except SQLAlchemyError as ex:
        facts["error"] = type(ex).__name__
    return facts


def _records(station: Station, now: datetime) -> dict[str, Any]:
    with station.engine.connect() as conn:
        sources = []
        for row in list_sources(conn):
            source = source_as_dict(row, now)
            source["last_error"] = row.last_error
            sources.append(source)
        failed = conn.execute(
            select(eas_forward_queue)
            .where(eas_forward_queue.c.state.in_(("failed", "skipped")))
            .order_by(desc(eas_forward_queue.c.queued_at))
            .limit(20)
        ).all()
        return {
            "worker_heartbeat": read_heartbeat(conn, now),
            "poll_sources": sources,
            "forward_queue_problems": [
                {
                    "alert_id": row.alert_id,
                    "event_code": row.event_code,
                    "queued_at": row.queued_at,
                    "state": row.state,
                    "reason": row.reason,
                }
                for row in failed
            ],
        }


def collect_diagnostics(station: Station, environ: Mapping[str, str]) -> dict[str, Any]:
    """Gather the bundle's facts (not yet scrubbed; ``diagnostics_json`` scrubs)."""
    now = station.clock()
    settings = station.settings
    bundle: dict[str, Any] = {
        "generated_at": now,
        "versions": {
            "alertstation": __version__,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "libraries": library_versions(),
        },
        "database": _database(station.engine),
        "worker_supervisor": read_supervisor(settings.data_dir),
        "settings": {
            "log_level": settings.log_level,
            "log_format": settings.log_format,
            "session_lifetime_hours": settings.session_lifetime_hours,
            "max_request_bytes": settings.max_request_bytes,
            "trusted_proxies": [str(network) for network in settings.trusted_proxies],
            "secrets_set": {
                "SECRET_KEY": bool(settings.secret_key),
                "AUDIT_LEDGER_KEY": bool(settings.audit_ledger_key),
            },
        },
        "recent_errors": recent_errors().entries(),
    }
    if bundle["database"]["reachable"]:
        try:
            bundle.update(_records(station, now))
        except SQLAlchemyError as ex:
            bundle["records_error"] = type(ex).__name__
        bundle["zone_catalog_size"] = len(station.zones.index().zones)
        bundle["active_alerts"] = station.broadcast.counts()[0]
    return bundle


def diagnostics_json(station: Station, environ: Mapping[str, str]) -> bytes:
    """Return the scrubbed bundle as indented JSON bytes."""
    raw = orjson.dumps(
        collect_diagnostics(station, environ), option=orjson.OPT_INDENT_2, default=str
    ).decode()
    return scrub(raw, secret_values(station, environ)).encode()
