"""What an operator's backup leaves out, and how a restore keeps the station's own.

An admin's backup holds everything. An operator's (``system.configure`` without the admin role)
leaves out password hashes, session tokens and stored secrets: the tables that hold them travel
beside the database copy as ``redacted-rows.json`` (raw rows, secrets removed) and are empty in
the copy itself, so no deleted secret lingers in a page of the copy. Restoring such a backup
puts those rows back and then keeps the station's own accounts (``users``, ``admin_sessions``)
and its stored secrets wherever the row still points where it did (same URL, same host).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Final

from sqlalchemy import Connection, inspect, text

LEFT_OUT: Final[tuple[str, ...]] = (
    "password hashes",
    "session tokens",
    "stored secrets (stream, Icecast and decoder-feed credentials, notification channel URLs)",
)
ACCOUNT_TABLES: Final[tuple[str, ...]] = ("users", "admin_sessions")
NO_PASSWORD: Final[str] = ""


@dataclass(frozen=True)
class SecretColumns:
    """Secret columns of a table, kept only while the row's ``origin`` columns are unchanged."""

    table: str
    key: str
    origin: tuple[str, ...]
    secrets: tuple[str, ...]
    blank: Any = None  # what a redacted secret becomes ("" for a column that is NOT NULL)


SECRET_COLUMNS: Final[tuple[SecretColumns, ...]] = (
    SecretColumns("audio_sources", "id", ("kind", "url"), ("auth_password", "auth_header")),
    SecretColumns(
        "eas_airing_settings",
        "id",
        ("icecast_host", "icecast_port", "icecast_tls"),
        ("icecast_password",),
    ),
    # A channel's whole apprise URL is its secret; a restored channel of the same name keeps
    # the station's own URL, another one is left blank (its deliveries fail until it is set).
    SecretColumns("notification_channels", "id", ("name",), ("url",), blank=""),
)
# Secrets inside the JSON ``data`` of an ``operations_settings`` section: field -> its origin.
SETTINGS_SECRETS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "decoder_feed": {
        "monitor_token": ("monitor_url",),
        "endec_password": ("endec_host", "endec_port"),
    },
}
SETTINGS_TABLE: Final[str] = "operations_settings"
REDACTED_TABLES: Final[tuple[str, ...]] = (
    *ACCOUNT_TABLES,
    *(spec.table for spec in SECRET_COLUMNS),
    SETTINGS_TABLE,
)


def _quote(conn: Connection, name: str) -> str:
    return str(conn.dialect.identifier_preparer.quote(name))


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | memoryview):
        raise ValueError("a binary column cannot travel as JSON")
    return value


def read_rows(conn: Connection, table: str) -> tuple[list[str], list[list[Any]]]:
    """Return the column names and raw rows of ``table`` (ordered by its first column)."""
    result = conn.execute(text(f"SELECT * FROM {_quote(conn, table)} ORDER BY 1"))
    return list(result.keys()), [[_plain(v) for v in row] for row in result]


def redacted_rows(conn: Connection) -> dict[str, dict[str, Any]]:
    """Return the rows of the tables an operator's backup redacts, secrets removed."""
    present = set(inspect(conn).get_table_names())
    out: dict[str, dict[str, Any]] = {}
    for table in REDACTED_TABLES:
        if table not in present:
            continue
        columns, rows = read_rows(conn, table)
        if table == "admin_sessions":
            rows = []
        elif table == "users":
            at = columns.index("password_hash")
            rows = [[*row[:at], NO_PASSWORD, *row[at + 1 :]] for row in rows]
        elif table == SETTINGS_TABLE:
            rows = [_strip_settings(columns, row) for row in rows]
        else:
            spec = next(s for s in SECRET_COLUMNS if s.table == table)
            drop = {columns.index(name) for name in spec.secrets}
            rows = [[spec.blank if n in drop else v for n, v in enumerate(row)] for row in rows]
        out[table] = {"columns": columns, "rows": rows}
    return out


def _strip_settings(columns: list[str], row: list[Any]) -> list[Any]:
    section = row[columns.index("section")]
    fields = SETTINGS_SECRETS.get(section)
    if not fields:
        return row
    at = columns.index("data")
    data = json.loads(row[at])
    for name in fields:
        if name in data:
            data[name] = ""
    return [*row[:at], json.dumps(data), *row[at + 1 :]]


def insert_rows(conn: Connection, table: str, columns: list[str], rows: list[list[Any]]) -> None:
    """Insert raw rows into ``table`` (the columns both sides have)."""
    if not rows:
        return
    names = ", ".join(_quote(conn, c) for c in columns)
    marks = ", ".join(f":c{n}" for n in range(len(columns)))
    statement = text(f"INSERT INTO {_quote(conn, table)} ({names}) VALUES ({marks})")
    conn.execute(statement, [{f"c{n}": v for n, v in enumerate(row)} for row in rows])


def put_back_redacted(conn: Connection, redacted: Mapping[str, Any]) -> None:
    """Fill the redacted tables of a just-restored copy from ``redacted-rows.json``."""
    for table in REDACTED_TABLES:
        if table in redacted:
            insert_rows(conn, table, redacted[table]["columns"], redacted[table]["rows"])
    follow_sequences(conn)


def capture_own(conn: Connection) -> dict[str, dict[str, Any]]:
    """Return the station's own accounts and secret-holding rows (before a restore)."""
    present = set(inspect(conn).get_table_names())
    own: dict[str, dict[str, Any]] = {}
    for table in REDACTED_TABLES:
        if table in present:
            columns, rows = read_rows(conn, table)
            own[table] = {"columns": columns, "rows": rows}
    return own


def keep_own(conn: Connection, own: Mapping[str, Any]) -> None:
    """After an operator's backup is restored: keep the station's accounts and secrets."""
    present = set(inspect(conn).get_table_names())
    if not set(ACCOUNT_TABLES) <= present:
        return
    conn.execute(text(f"DELETE FROM {_quote(conn, 'admin_sessions')}"))
    conn.execute(text(f"DELETE FROM {_quote(conn, 'users')}"))
    now_columns = {name: _columns(conn, name) for name in ACCOUNT_TABLES}
    for table in ACCOUNT_TABLES:
        if table in own:
            keep = [c for c in own[table]["columns"] if c in now_columns[table]]
            at = [own[table]["columns"].index(c) for c in keep]
            insert_rows(conn, table, keep, [[row[i] for i in at] for row in own[table]["rows"]])
    for spec in SECRET_COLUMNS:
        if spec.table in own and spec.table in present:
            _keep_secret_columns(conn, spec, own[spec.table])
    if SETTINGS_TABLE in own and SETTINGS_TABLE in present:
        _keep_settings_secrets(conn, own[SETTINGS_TABLE])
    follow_sequences(conn)


def follow_sequences(conn: Connection) -> None:
    """On PostgreSQL, move the id sequences of the rewritten tables past their highest id."""
    if conn.dialect.name != "postgresql":
        return
    present = set(inspect(conn).get_table_names())
    for table in REDACTED_TABLES:
        if table not in present or "id" not in _columns(conn, table):
            continue
        sequence = conn.execute(
            text("SELECT pg_get_serial_sequence(:t, 'id')"), {"t": f"public.{table}"}
        ).scalar()
        if sequence is None:
            continue
        top = conn.execute(text(f"SELECT MAX(id) FROM {_quote(conn, table)}")).scalar()
        conn.execute(
            text("SELECT setval(CAST(:s AS regclass), :v, :called)"),
            {"s": sequence, "v": top or 1, "called": top is not None},
        )


def _columns(conn: Connection, table: str) -> set[str]:
    return {column["name"] for column in inspect(conn).get_columns(table)}


def _keep_secret_columns(conn: Connection, spec: SecretColumns, own: Mapping[str, Any]) -> None:
    columns: list[str] = own["columns"]
    if not {spec.key, *spec.origin, *spec.secrets} <= set(columns):
        return
    table = _quote(conn, spec.table)
    origin = " AND ".join(f"{_quote(conn, c)} = :o_{c}" for c in spec.origin)
    sets = ", ".join(f"{_quote(conn, c)} = :s_{c}" for c in spec.secrets)
    statement = text(
        f"UPDATE {table} SET {sets} WHERE {_quote(conn, spec.key)} = :key AND {origin}"
    )
    for row in own["rows"]:
        values = dict(zip(columns, row, strict=True))
        params = {"key": values[spec.key]}
        params.update({f"o_{c}": values[c] for c in spec.origin})
        params.update({f"s_{c}": values[c] for c in spec.secrets})
        conn.execute(statement, params)


def _keep_settings_secrets(conn: Connection, own: Mapping[str, Any]) -> None:
    columns: list[str] = own["columns"]
    table = _quote(conn, SETTINGS_TABLE)
    for row in own["rows"]:
        values = dict(zip(columns, row, strict=True))
        fields = SETTINGS_SECRETS.get(values["section"])
        if not fields:
            continue
        current = conn.execute(
            text(f"SELECT data FROM {table} WHERE section = :s"), {"s": values["section"]}
        ).scalar()
        if current is None:
            continue
        mine, restored = json.loads(values["data"]), json.loads(current)
        for name, origin in fields.items():
            if name in mine and all(mine.get(o) == restored.get(o) for o in origin):
                restored[name] = mine[name]
        conn.execute(
            text(f"UPDATE {table} SET data = :d WHERE section = :s"),
            {"d": json.dumps(restored), "s": values["section"]},
        )
