"""The tamper-evident audit ledger: signed, chained rows in ``audit_logs`` and their verification.

Every row stores the previous row's hash (``prev_hash``) and ``row_hash``, an HMAC-SHA256 keyed by
the ledger key (kept outside the database) over a canonical encoding of the row's own fields, its
id and that previous hash. Ids are dense (1, 2, 3, ...): each append takes ``head id + 1`` under a
lock, so a gap is a deleted row and the id inside the signature pins every row to its place.
``docs/audit.md`` describes the encoding, the checkpoint format and what verification can and
cannot detect.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, func, select, text

from alertstation.audit.actor import Actor
from alertstation.audit.changes import config_changes
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import IMMEDIATE_OPTION, begin_write, is_outage
from alertstation.db.types import utcnow
from alertstation.errors import AppError

log = logging.getLogger("alertstation.audit")

#: What a refused action answers when its audit row cannot be written.
NOTHING_CHANGED = "The change could not be recorded in the audit log, so nothing was changed."
NOTHING_DELETED = "The deletion could not be recorded in the audit log, so nothing was deleted."

LOGIN_SUCCESS = "login success"
LOGIN_FAILURE = "login failure"
CONFIG_UPDATED = "config.updated"
EAS_BROADCAST = "eas.broadcast"
ALERT_DELETED = "alert.deleted"

GENESIS_HASH = "0" * 64
ENCODING_VERSION = 1
CHECKPOINT_PREFIX = "asckpt1"
# Serialises appends on PostgreSQL; distinct from the worker's leader lock key.
ADVISORY_LOCK_KEY = int.from_bytes(b"auditlog", "big") & 0x7FFF_FFFF_FFFF_FFFF
MAX_ACTION_LENGTH = 64
# Column widths of audit_logs: values are cut to fit *before* signing, so both backends store and
# sign the same text (SQLite would keep an over-long value, PostgreSQL would refuse it).
_WIDTHS = {"username": 160, "client_ip": 45, "user_agent": 512, "target": 255}
_PAGE = 2000
_MAX_TRACE = 4
_JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_COUNT = re.compile(r"^(0|[1-9][0-9]{0,18})$")


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of walking the chain.

    ``rows`` counts the rows found intact: all of them when ``ok``, else those before the first
    bad one. ``problem`` is a sentence naming that row (empty when ``ok``).
    """

    ok: bool
    rows: int
    first_bad_id: int | None = None
    problem: str = ""

    def summary(self) -> str:
        """Return ``ok N rows`` or the problem sentence."""
        return f"ok {self.rows} rows" if self.ok else self.problem


@dataclass(frozen=True)
class Checkpoint:
    """A signed statement of the ledger's size and head at one moment."""

    count: int
    last_id: int
    head_hash: str


def format_time(value: datetime) -> str:
    """Return a timestamp as ISO 8601 UTC with microseconds, the form the signature covers."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical_bytes(row: Mapping[str, Any]) -> bytes:
    """Encode the signed fields of a row deterministically (sorted-key JSON, UTF-8)."""
    return orjson.dumps(
        {
            "v": ENCODING_VERSION,
            "id": int(row["id"]),
            "created_at": format_time(row["created_at"]),
            "user_id": row["user_id"],
            "username": row["username"],
            "client_ip": row["client_ip"],
            "user_agent": row["user_agent"],
            "action": row["action"],
            "target": row["target"],
            "details": row["details"],
            "prev_hash": row["prev_hash"],
        },
        option=orjson.OPT_SORT_KEYS,
    )


def encode_details(details: Mapping[str, Any] | None) -> str:
    """Return details as canonical JSON text (sorted keys); raise TypeError when not JSON-able."""
    if details is None:
        return "{}"
    if not isinstance(details, Mapping):
        raise TypeError(f"audit details must be a mapping, not {type(details).__name__}")
    return orjson.dumps(dict(details), option=_JSON_OPTIONS).decode()


def changed_field_names(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Return the sorted names whose value differs between two settings snapshots.

    A name present on one side only counts as changed. Only names leave this function, so the
    result is safe to hand to :meth:`AuditLedger.record_config_update` even for secrets.
    """
    missing = object()
    names = set(before) | set(after)
    return sorted(
        str(name) for name in names if before.get(name, missing) != after.get(name, missing)
    )


def _clean(value: str | None, width: int) -> str | None:
    if value is None:
        return None
    return str(value).replace("\x00", "\ufffd")[:width]


def _with_next(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], Any]]:
    iterator = iter(rows)
    current = next(iterator, None)
    while current is not None:
        following = next(iterator, None)
        yield current, following
        current = following


def _iter_rows(conn: Connection) -> Iterator[dict[str, Any]]:
    """Yield every row in id order, a page at a time (keyset pagination, both backends)."""
    last: int | None = None
    while True:
        query = select(audit_logs).order_by(audit_logs.c.id).limit(_PAGE)
        if last is not None:
            query = query.where(audit_logs.c.id > last)
        page = [dict(row._mapping) for row in conn.execute(query)]
        yield from page
        if len(page) < _PAGE:
            return
        last = page[-1]["id"]


def _snapshot(engine: Engine) -> Engine:
    # One consistent view across the pages of a walk; SQLite's WAL read transaction already is.
    if engine.dialect.name == "postgresql":
        return engine.execution_options(isolation_level="REPEATABLE READ")
    return engine


class AuditLedger:
    """Append signed, chained rows to audit_logs and verify the chain."""

    def __init__(self, key: str) -> None:
        if not key:
            raise ValueError("the audit ledger key is empty; set AUDIT_LEDGER_KEY")
        secret = key.encode()
        # Separate sub-keys for rows and checkpoints, so one can never pass for the other.
        self._row_key = hmac.new(secret, b"alertstation.audit.row.v1", hashlib.sha256).digest()
        self._checkpoint_key = hmac.new(
            secret, b"alertstation.audit.checkpoint.v1", hashlib.sha256
        ).digest()

    # --- writing -------------------------------------------------------------------------------

    def record(
        self,
        conn: Connection,
        actor: Actor,
        action: str,
        *,
        target: str | None = None,
        details: Mapping[str, Any] | None = None,
        propagate: bool = False,
    ) -> int | None:
        """Append one row inside the caller's transaction and return its id.

        The append runs in a SAVEPOINT: when it fails, only the savepoint is rolled back and the
        caller's transaction stays usable. Failures are logged at critical level and None is
        returned, unless ``propagate`` is true, in which case the exception is raised (use that
        where the action must not happen without its audit row).

        Appends are serialised so the chain never forks: on PostgreSQL by a transaction-level
        advisory lock, held until the caller's transaction ends (record late in the transaction);
        on SQLite by the write lock that ``begin_write`` takes at BEGIN IMMEDIATE. A connection
        that breaks these rules raises RuntimeError whatever ``propagate`` says: that is a bug in
        the caller, not a runtime failure to swallow.
        """
        self._require_serialised(conn)
        try:
            with conn.begin_nested():
                return self._append(conn, actor, action, target, details)
        except Exception as ex:
            if propagate:
                raise
            _log_lost_write(action, target, ex)
            return None

    def record_or_refuse(
        self,
        conn: Connection,
        actor: Actor,
        action: str,
        *,
        target: str | None = None,
        details: Mapping[str, Any] | None = None,
        refusal: str = NOTHING_CHANGED,
    ) -> int | None:
        """Append one row, or refuse the action it records: audit or refuse, in one place.

        Use where the action must not happen without its audit row. When the row cannot be
        written the failure is logged at critical level and AppError ``audit_failed`` (500,
        ``refusal`` as its message) is raised, so the caller's transaction rolls the change back.
        A database outage is raised as it is: the change is refused just the same, and the web
        tier answers it 503 ``database_unavailable`` like any other request during the outage.
        """
        try:
            return self.record(conn, actor, action, target=target, details=details, propagate=True)
        except Exception as ex:
            if is_outage(ex):
                log.warning("database unavailable; %s on %s NOT done", action, target)
                raise
            log.critical("audit write failed; %s on %s NOT done: %r", action, target, ex)
            raise AppError(refusal, code="audit_failed") from ex

    def record_now(
        self,
        engine: Engine,
        actor: Actor,
        action: str,
        *,
        target: str | None = None,
        details: Mapping[str, Any] | None = None,
        propagate: bool = False,
    ) -> int | None:
        """Append one row in a transaction of its own (for events like sign-in attempts)."""
        try:
            with begin_write(engine) as conn:
                return self.record(
                    conn, actor, action, target=target, details=details, propagate=True
                )
        except Exception as ex:
            if propagate:
                raise
            _log_lost_write(action, target, ex)
            return None

    def record_config_update(
        self,
        conn: Connection,
        actor: Actor,
        section: str,
        changed_fields: Iterable[str],
        *,
        trust_boundary: Iterable[str] = (),
        propagate: bool = False,
        refuse: bool = False,
        before: Mapping[str, Any] | None = None,
        after: Mapping[str, Any] | None = None,
        secrets: Iterable[str] = (),
    ) -> int | None:
        """Record ``config.updated`` for ``section`` with the sorted names of the changed fields.

        A password, API key or token that changed appears as its field name alone. A save that
        changed nothing is still recorded, with no fields. Given the settings ``before`` and
        ``after`` the save (plain snapshots), ``changes`` holds old → new values of the changed
        fields that are not secrets (``secrets``, or a secret's name), and the codes added and
        removed of a list field (:func:`alertstation.audit.changes.config_changes`).
        ``trust_boundary`` names the changed fields that move a trust boundary (the database,
        trusted proxies, trust anchors); they are listed again under that key, names only.
        ``refuse`` makes it :meth:`record_or_refuse`: no change without its row.
        """
        names = sorted({str(name) for name in changed_fields})
        details: dict[str, Any] = {"fields": names}
        if before is not None and after is not None:
            changes = config_changes(before, after, names=names, secrets=secrets)
            if changes:
                details["changes"] = changes
        moved = sorted({str(name) for name in trust_boundary})
        if moved:
            details["trust_boundary"] = moved
        if refuse:
            return self.record_or_refuse(
                conn, actor, CONFIG_UPDATED, target=section, details=details
            )
        return self.record(
            conn,
            actor,
            CONFIG_UPDATED,
            target=section,
            details=details,
            propagate=propagate,
        )

    def _require_serialised(self, conn: Connection) -> None:
        if not conn.in_transaction():
            raise RuntimeError(
                "AuditLedger.record appends inside the caller's transaction; open one first"
            )
        if conn.dialect.name == "sqlite" and not conn.get_execution_options().get(IMMEDIATE_OPTION):
            raise RuntimeError(
                "AuditLedger.record on SQLite needs a transaction opened with "
                "alertstation.db.engine.begin_write (BEGIN IMMEDIATE); otherwise appends can fork"
            )

    def _append(
        self,
        conn: Connection,
        actor: Actor,
        action: str,
        target: str | None,
        details: Mapping[str, Any] | None,
    ) -> int:
        if not isinstance(action, str) or not action or len(action) > MAX_ACTION_LENGTH:
            raise ValueError(f"audit action must be 1..{MAX_ACTION_LENGTH} characters: {action!r}")
        details_text = encode_details(details)
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
        head = conn.execute(
            select(audit_logs.c.id, audit_logs.c.row_hash).order_by(audit_logs.c.id.desc()).limit(1)
        ).first()
        row: dict[str, Any] = {
            "id": head.id + 1 if head else 1,
            "created_at": utcnow(),
            "user_id": actor.user_id,
            "username": _clean(actor.username, _WIDTHS["username"]),
            "client_ip": _clean(actor.client_ip, _WIDTHS["client_ip"]),
            "user_agent": _clean(actor.user_agent, _WIDTHS["user_agent"]),
            "action": action,
            "target": _clean(target, _WIDTHS["target"]),
            "details": details_text,
            "prev_hash": head.row_hash if head else GENESIS_HASH,
        }
        row["row_hash"] = self.sign(row)
        conn.execute(audit_logs.insert().values(**row))
        return int(row["id"])

    def sign(self, row: Mapping[str, Any]) -> str:
        """Return the row hash: HMAC-SHA256 over the canonical encoding, as 64 hex digits."""
        return hmac.new(self._row_key, canonical_bytes(row), hashlib.sha256).hexdigest()

    # --- verifying -----------------------------------------------------------------------------

    def verify(self, conn: Connection, checkpoint: str | None = None) -> VerifyResult:
        """Walk the chain from the genesis row and report the first row that is not intact.

        With ``checkpoint`` (from :meth:`checkpoint`), also prove that every row it covers is
        still present and unchanged, which catches the newest rows being cut off. Raises
        ValueError when the checkpoint is garbled or its signature does not match.
        """
        mark = self.parse_checkpoint(checkpoint) if checkpoint is not None else None
        expected_id, expected_prev, intact = 1, GENESIS_HASH, 0
        hash_at_mark: str | None = None
        for row, following in _with_next(_iter_rows(conn)):
            if (
                row["id"] != expected_id
                or row["prev_hash"] != expected_prev
                or not self._authentic(row, row["id"])
            ):
                bad_id, problem = self._diagnose(conn, row, following, expected_id, expected_prev)
                return VerifyResult(False, intact, bad_id, problem)
            if mark is not None and row["id"] == mark.last_id:
                hash_at_mark = row["row_hash"]
            intact += 1
            expected_id += 1
            expected_prev = row["row_hash"]
        if mark is not None:
            broken = self._against_checkpoint(mark, intact, hash_at_mark)
            if broken is not None:
                return VerifyResult(False, intact, *broken)
        return VerifyResult(True, intact)

    def verify_now(self, engine: Engine, checkpoint: str | None = None) -> VerifyResult:
        """Verify on a connection of its own that sees one consistent snapshot."""
        with _snapshot(engine).connect() as conn:
            return self.verify(conn, checkpoint)

    def _authentic(self, row: Mapping[str, Any], as_id: int) -> bool:
        expected = self.sign({**row, "id": as_id})
        return hmac.compare_digest(expected, str(row["row_hash"]))

    def _diagnose(
        self,
        conn: Connection,
        row: dict[str, Any],
        following: dict[str, Any] | None,
        expected_id: int,
        expected_prev: str,
    ) -> tuple[int, str]:
        """Name what happened at the first bad row: missing, reordered, inserted or modified."""
        row_id = int(row["id"])
        if self._authentic(row, row_id):
            if row_id > expected_id:
                return expected_id, f"row {expected_id} is missing (deleted, or rows reordered)"
            return row_id, f"row {row_id} does not link to the row before it (chain broken)"
        origin = self._signed_as(conn, row, 0)
        if origin is not None:
            return row_id, (
                f"row {row_id} is out of order: it holds the entry signed as row {origin} "
                "(rows reordered or renumbered)"
            )
        # A forged row that the chain skips over: the next row links to the one before it.
        skipped = following is not None and following["prev_hash"] == expected_prev
        if row_id != expected_id or skipped:
            return row_id, f"row {row_id} was inserted"
        if following is None:
            return row_id, f"row {row_id} was modified or inserted (its signature does not match)"
        return row_id, f"row {row_id} was modified"

    def _signed_as(self, conn: Connection, row: Mapping[str, Any], depth: int) -> int | None:
        """Return the id a displaced row was signed with, traced through its prev_hash link."""
        if depth > _MAX_TRACE:
            return None
        if row["prev_hash"] == GENESIS_HASH:
            candidate = 1
        else:
            found = conn.execute(
                select(audit_logs).where(audit_logs.c.row_hash == row["prev_hash"]).limit(1)
            ).first()
            if found is None:
                return None
            before = dict(found._mapping)
            if self._authentic(before, before["id"]):
                origin: int | None = before["id"]
            else:
                origin = self._signed_as(conn, before, depth + 1)
            if origin is None:
                return None
            candidate = origin + 1
        if candidate != row["id"] and self._authentic(row, candidate):
            return candidate
        return None

    @staticmethod
    def _against_checkpoint(
        mark: Checkpoint, intact: int, hash_at_mark: str | None
    ) -> tuple[int, str] | None:
        if mark.count != mark.last_id:
            return mark.last_id, "the checkpoint does not describe this ledger (count != last id)"
        if intact < mark.count:
            return intact + 1, (
                f"the newest rows were cut off: {intact} of the {mark.count} rows in the "
                f"checkpoint are present (rows {intact + 1}..{mark.last_id} are gone)"
            )
        if mark.last_id and hash_at_mark != mark.head_hash:
            return mark.last_id, (
                f"row {mark.last_id} differs from the checkpoint (the ledger was rewritten)"
            )
        return None

    # --- checkpoints ---------------------------------------------------------------------------

    def checkpoint(self, conn: Connection) -> str:
        """Return a signed one-line checkpoint: ``asckpt1.<count>.<last id>.<head hash>.<hmac>``."""
        count = select(func.count()).select_from(audit_logs).scalar_subquery()
        head = conn.execute(
            select(count, audit_logs.c.id, audit_logs.c.row_hash)
            .order_by(audit_logs.c.id.desc())
            .limit(1)
        ).first()
        if head is None:
            return self.format_checkpoint(Checkpoint(0, 0, GENESIS_HASH))
        return self.format_checkpoint(Checkpoint(int(head[0]), int(head[1]), str(head[2])))

    def checkpoint_now(self, engine: Engine) -> str:
        """Return the current checkpoint, read on a connection of its own."""
        with engine.connect() as conn:
            return self.checkpoint(conn)

    def format_checkpoint(self, mark: Checkpoint) -> str:
        """Sign a checkpoint and return its one-line text form."""
        body = f"{CHECKPOINT_PREFIX}.{mark.count}.{mark.last_id}.{mark.head_hash}"
        mac = hmac.new(self._checkpoint_key, body.encode(), hashlib.sha256).hexdigest()
        return f"{body}.{mac}"

    def parse_checkpoint(self, text: str) -> Checkpoint:
        """Parse a checkpoint line; raise ValueError when it is garbled or its HMAC is wrong."""
        parts = text.strip().split(".")
        if len(parts) != 5 or parts[0] != CHECKPOINT_PREFIX:
            raise ValueError(f"checkpoint is garbled: expected {CHECKPOINT_PREFIX}.N.ID.HASH.MAC")
        _, count, last_id, head_hash, mac = parts
        if not (_COUNT.match(count) and _COUNT.match(last_id)):
            raise ValueError("checkpoint is garbled: count and id must be whole numbers")
        if not (_HEX64.match(head_hash) and _HEX64.match(mac)):
            raise ValueError("checkpoint is garbled: hashes must be 64 lowercase hex digits")
        mark = Checkpoint(int(count), int(last_id), head_hash)
        expected = self.format_checkpoint(mark).rsplit(".", 1)[1]
        if not hmac.compare_digest(expected, mac):
            raise ValueError(
                "checkpoint signature does not match (forged, or made with another ledger key)"
            )
        return mark


def _log_lost_write(action: str, target: str | None, ex: Exception) -> None:
    """Say loudly that an audit row was not written (the caller chose not to propagate)."""
    log.critical(
        "audit ledger write failed; the action is NOT recorded",
        exc_info=ex,
        extra={"audit_action": action, "audit_target": target, "error": repr(ex)},
    )
