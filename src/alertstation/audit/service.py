"""Read the audit ledger for the log views and keep the off-table checkpoint log."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import orjson
from sqlalchemy import Connection, Engine, inspect, select
from sqlalchemy.exc import SQLAlchemyError

from alertstation.audit.ledger import CHECKPOINT_PREFIX, MAX_ACTION_LENGTH, AuditLedger
from alertstation.audit.tables import audit_logs
from alertstation.db.types import utcnow
from alertstation.errors import Invalid

if TYPE_CHECKING:
    from alertstation.context import Station

LOG_TYPES = ("audit",)
DEFAULT_LIMIT = 500
MAX_LIMIT = 5000
CHECKPOINT_FILE = "audit-checkpoints.log"


@dataclass(frozen=True)
class AuditEvent:
    """One ledger row as the views show it (the hashes stay out of sight)."""

    id: int
    created_at: datetime
    user_id: int | None
    username: str | None
    client_ip: str | None
    user_agent: str | None
    action: str
    target: str | None
    details: dict[str, Any]

    @property
    def details_text(self) -> str:
        """Return the details as a short readable line, e.g. ``fields: password, role``."""
        return describe_details(self.details)


@dataclass(frozen=True)
class LogFilter:
    """The validated query of the log page and its exports."""

    type: str = "audit"
    action: str | None = None
    limit: int = DEFAULT_LIMIT

    def query_string(self, **overrides: Any) -> str:
        """Return the filter as a URL query (without ``?``), with some values replaced."""
        values = {"type": self.type, "action": self.action, "limit": self.limit, **overrides}
        return urlencode({key: value for key, value in values.items() if value not in (None, "")})

    def describe(self) -> str:
        """Return the filter as a line for report titles."""
        action = self.action or "all actions"
        return f"type={self.type}, action={action}, limit={self.limit}"


def parse_log_filter(type_: str | None, action: str | None, limit: str | None) -> LogFilter:
    """Validate the query parameters of the log views; raise Invalid for a bad one."""
    log_type = (type_ or "audit").strip()
    if log_type not in LOG_TYPES:
        raise Invalid(
            f"type must be one of: {', '.join(LOG_TYPES)}", field="type", allowed=list(LOG_TYPES)
        )
    action = (action or "").strip() or None
    if action is not None and len(action) > MAX_ACTION_LENGTH:
        raise Invalid(f"action is longer than {MAX_ACTION_LENGTH} characters", field="action")
    if limit in (None, ""):
        return LogFilter(log_type, action, DEFAULT_LIMIT)
    try:
        count = int(limit)
    except ValueError:
        raise Invalid("limit must be a whole number", field="limit") from None
    if not 1 <= count <= MAX_LIMIT:
        raise Invalid(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    return LogFilter(log_type, action, count)


def list_events(
    conn: Connection,
    *,
    action: str | None = None,
    limit: int = DEFAULT_LIMIT,
    before_id: int | None = None,
    since: datetime | None = None,
) -> list[AuditEvent]:
    """Return the newest events, newest first; the action filter runs in SQL before the limit.

    ``since`` leaves out events recorded before it (the export window).
    """
    query = select(audit_logs).order_by(audit_logs.c.id.desc()).limit(limit)
    if action is not None:
        query = query.where(audit_logs.c.action == action)
    if since is not None:
        query = query.where(audit_logs.c.created_at >= since)
    if before_id is not None:
        query = query.where(audit_logs.c.id < before_id)
    return [_event(row._mapping) for row in conn.execute(query)]


def distinct_actions(conn: Connection) -> list[str]:
    """Return every action name that occurs in the ledger, sorted."""
    query = select(audit_logs.c.action).distinct().order_by(audit_logs.c.action)
    return [str(name) for name in conn.execute(query).scalars()]


def describe_details(details: dict[str, Any]) -> str:
    """Render details as ``key: value`` pairs; lists are joined with commas."""
    parts = []
    for key in sorted(details):
        value = details[key]
        if isinstance(value, list):
            shown = ", ".join(str(item) for item in value) or "(none)"
        elif isinstance(value, dict):
            shown = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        else:
            shown = str(value)
        parts.append(f"{key}: {shown}")
    return "; ".join(parts)


def _event(row: Any) -> AuditEvent:
    try:
        details = orjson.loads(row["details"])
    except orjson.JSONDecodeError:
        details = {"unparsed": row["details"]}
    if not isinstance(details, dict):
        details = {"value": details}
    return AuditEvent(
        id=int(row["id"]),
        created_at=row["created_at"],
        user_id=row["user_id"],
        username=row["username"],
        client_ip=row["client_ip"],
        user_agent=row["user_agent"],
        action=row["action"],
        target=row["target"],
        details=details,
    )


# --- checkpoints kept off the table -----------------------------------------------------------


def last_checkpoint_in(text: str) -> str | None:
    """Return the newest checkpoint in a checkpoint log's text (lines may carry a time first)."""
    for line in reversed(text.splitlines()):
        for token in reversed(line.split()):
            if token.startswith(CHECKPOINT_PREFIX + "."):
                return token
    return None


def load_checkpoint(value: str) -> str:
    """Return a checkpoint given as text, or the newest one in the file ``value`` names."""
    if value.strip().startswith(CHECKPOINT_PREFIX + "."):
        return value.strip()
    path = Path(value)
    if not path.is_file():
        raise ValueError(f"{value!r} is neither a checkpoint nor a readable file")
    found = last_checkpoint_in(path.read_text(encoding="utf-8", errors="replace"))
    if found is None:
        raise ValueError(f"{path} holds no checkpoint line")
    return found


def checkpoint_log_path(data_dir: Path) -> Path:
    """Return where the worker keeps its checkpoint log (``<data dir>/audit-checkpoints.log``)."""
    return data_dir / CHECKPOINT_FILE


def newest_logged_checkpoint(path: Path) -> str | None:
    """Return the newest checkpoint in the worker's log at ``path``; None when there is none.

    A missing file and a file without checkpoint lines both mean "no checkpoint": verification
    then cannot tell that rows were deleted. Raises ValueError when the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as ex:
        raise ValueError(f"cannot read the checkpoint log {path}: {ex.strerror or ex}") from None
    return last_checkpoint_in(text)


def database_problem(engine: Engine, ex: BaseException) -> str:
    """Describe in one line why the ledger could not be read (the table gone, or the error)."""
    try:
        present: bool | None = inspect(engine).has_table(audit_logs.name)
    except SQLAlchemyError:
        present = None
    if present is False:
        return f"{audit_logs.name} table is missing (dropped, or the wrong database)"
    cause = getattr(ex, "orig", None) or ex
    lines = str(cause).strip().splitlines()
    first = lines[0][:300] if lines else ""
    return f"the database could not be read: {type(cause).__name__}: {first}".rstrip(": ")


def _last_line(path: Path, tail_bytes: int = 4096) -> str:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - tail_bytes))
        return handle.read().decode("utf-8", errors="replace")


def append_checkpoint_line(engine: Engine, ledger: AuditLedger, path: Path) -> bool:
    """Append ``<UTC time> <checkpoint>`` to ``path`` when the head moved; tell whether it did."""
    current = ledger.checkpoint_now(engine)
    if path.exists() and last_checkpoint_in(_last_line(path)) == current:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    line = f"{utcnow().strftime('%Y-%m-%dT%H:%M:%SZ')} {current}\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, 0o600)  # a log created by an older release was world-readable
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def append_audit_checkpoint(station: Station) -> None:
    """Keep ``<data dir>/audit-checkpoints.log`` up to date with the ledger head (worker job)."""
    path = checkpoint_log_path(station.settings.data_dir)
    append_checkpoint_line(station.engine, station.ledger, path)
