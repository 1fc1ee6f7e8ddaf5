"""The security log: one line for each ban and lift the station hands to the host firewall.

The dedicated fail2ban jail reads this file with the filter ``FILTER_FILE_TEXT`` of
``hostban_service``, so a ban reaches the jail even when ``fail2ban-client set <jail> banip`` is
unavailable. Lines look like::

    2026-11-21T16:23:31.123+00:00 alertstation ban 203.0.113.7 source=manual reason="spam"
    2026-11-21T16:40:02.004+00:00 alertstation unban 203.0.113.7 source=manual

The timestamp is the host's clock (what fail2ban compares with), in UTC. The address is the
canonical text of one mirrorable address (never a range, never loopback). ``source`` is the ban
list source identifier; the reason is collapsed to one line, shortened and JSON-quoted, so no
reason text can start a line of its own or look like another ban. ``unban`` lines are ignored
by the filter and are there for operators.

``sync`` writes the difference between the mirrorable ban list (empty while the mirror is off)
and ``hostban_logged``, the addresses whose latest line is ``ban``. The read, the ledger update
and the append happen under one write lock (BEGIN IMMEDIATE on SQLite, a transaction advisory
lock on PostgreSQL), so concurrent processes log each change once and in order. A log that
cannot be written is reported in the service log and retried at the next change or self-heal;
it never fails a ban.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import Connection, Engine, delete, select, text

from alertstation.db.engine import begin_write
from alertstation.db.types import as_utc, utcnow
from alertstation.security.bans import service
from alertstation.security.bans.entries import IpFilter
from alertstation.security.bans.tables import BLOCKLIST
from alertstation.security.hostban.fail2ban import is_mirrorable
from alertstation.security.hostban.tables import hostban_logged

log = logging.getLogger("alertstation.security.hostban.fail2ban")

BAN = "ban"
UNBAN = "unban"
TAG = "alertstation"
REASON_MAX = 120
LOG_MODE = 0o640
ADVISORY_LOCK_KEY = int.from_bytes(b"hostblog", "big") & 0x7FFF_FFFF_FFFF_FFFF
_SOURCE = re.compile(r"^[a-z_]{1,32}$")


def clean_reason(reason: str | None) -> str | None:
    """Return the reason as one JSON-quoted ASCII line of at most ``REASON_MAX`` characters."""
    if not reason:
        return None
    collapsed = " ".join(reason.split())[:REASON_MAX]
    return json.dumps(collapsed, ensure_ascii=True) if collapsed else None


def format_line(
    when: datetime, action: str, address: str, source: str, reason: str | None = None
) -> str:
    """Return one security log line (with its newline) for a ban or an unban."""
    if action not in (BAN, UNBAN):
        raise ValueError(f"unknown security log action {action!r}")
    if not is_mirrorable(address):
        raise ValueError(f"{address!r} is not one mirrorable address")
    stamp = as_utc(when).isoformat(timespec="milliseconds")  # type: ignore[union-attr]
    label = source if _SOURCE.match(source) else "unknown"
    line = f"{stamp} {TAG} {action} {address} source={label}"
    quoted = clean_reason(reason) if action == BAN else None
    return f"{line} reason={quoted}\n" if quoted else f"{line}\n"


def append_lines(path: str, lines: Iterable[str]) -> None:
    """Append lines to the log in one write (created with mode 0640 when missing); OSError."""
    data = "".join(lines).encode("ascii")
    if not data:
        return
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
    descriptor = os.open(path, flags, LOG_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)


def mirrorable_entries(conn: Connection, now: datetime) -> dict[str, IpFilter]:
    """Return the enforced, mirrorable blocklist entries by address."""
    entries = service.enforced_filters(conn, BLOCKLIST, now)
    return {entry.value: entry for entry in entries if is_mirrorable(entry.value)}


def _logged(conn: Connection) -> dict[str, str]:
    return {row.value: row.source for row in conn.execute(select(hostban_logged))}


def _pending(conn: Connection, now: datetime, enabled: bool) -> bool:
    desired = mirrorable_entries(conn, now) if enabled else {}
    return desired.keys() != _logged(conn).keys()


def sync(engine: Engine, now: datetime, log_file: str, enabled: bool) -> int:
    """Log the bans and lifts not logged yet; return how many lines were written. Never raises.

    ``now`` (the station clock) decides expiry; ``enabled`` is the mirror toggle: while it is
    off every logged address gets its ``unban`` line and nothing new is logged.
    """
    try:
        with engine.connect() as conn:
            if not _pending(conn, now, enabled):
                return 0
        with begin_write(engine) as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
            desired = mirrorable_entries(conn, now) if enabled else {}
            logged = _logged(conn)
            added = [desired[value] for value in sorted(desired.keys() - logged.keys())]
            lifted = sorted(logged.keys() - desired.keys())
            if not added and not lifted:
                return 0
            stamp = utcnow()
            lines = [format_line(stamp, UNBAN, value, logged[value]) for value in lifted]
            lines += [format_line(stamp, BAN, e.value, e.source, e.reason) for e in added]
            if lifted:
                conn.execute(delete(hostban_logged).where(hostban_logged.c.value.in_(lifted)))
            if added:
                conn.execute(
                    hostban_logged.insert(),
                    [{"value": e.value, "source": e.source, "logged_at": stamp} for e in added],
                )
            append_lines(log_file, lines)  # inside the lock: lines land in commit order
        return len(lines)
    except OSError as error:
        log.warning("security log %s not written (retried at the next change): %s", log_file, error)
    except Exception:  # the security log must never fail a ban
        log.exception("writing the security log %s failed", log_file)
    return 0


def forget(conn: Connection) -> None:
    """Empty the ledger so the next sync logs every current ban again (a new log file)."""
    conn.execute(delete(hostban_logged))


def ensure_file(path: str) -> None:
    """Create the log (mode 0640) when it is missing; OSError when that is refused."""
    os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, LOG_MODE))
