"""The station time zone: the weekly-test schedule's own ``time_zone`` becomes the station's.

The application settings gain ``time_zone`` (default UTC). A station whose weekly-test schedule
named a zone gets that zone as its own, so its weekly test airs when it did; the schedule's
column is then dropped. The move is noted in the application settings row under
``time_zone_moved_from``, and ``alertstation migrate`` records it in the audit ledger (a
migration holds no ledger key) and removes the note (``docs/decisions.md``).

Revision ID: 20261129_station_time_zone
Revises: 20261129_traffic_asn_counters
Create Date: 2026-11-29
"""

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_station_time_zone"
down_revision: str | None = "20261129_traffic_asn_counters"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

SECTION = "application"
MOVED_NOTE = "time_zone_moved_from"

_settings = sa.table(
    "operations_settings",
    sa.column("section", sa.String),
    sa.column("data", sa.Text),
    sa.column("updated_by", sa.String),
    sa.column("updated_at", UTCDateTime()),
)


def _application(conn: sa.Connection) -> dict | None:
    row = conn.execute(
        sa.select(_settings.c.data).where(_settings.c.section == SECTION)
    ).scalar_one_or_none()
    return None if row is None else json.loads(row)


def _store(conn: sa.Connection, data: dict, exists: bool) -> None:
    text = json.dumps(data, sort_keys=True)
    if exists:
        conn.execute(_settings.update().where(_settings.c.section == SECTION).values(data=text))
    else:
        conn.execute(
            _settings.insert().values(
                section=SECTION,
                data=text,
                updated_by="migration",
                updated_at=datetime.now(UTC),
            )
        )


def upgrade() -> None:
    conn = op.get_bind()
    zone = conn.execute(
        sa.text("SELECT time_zone FROM eas_rwt_schedule WHERE id = 1")
    ).scalar_one_or_none()
    if zone:
        data = _application(conn)
        exists = data is not None
        data = data or {}
        if "time_zone" not in data:
            data["time_zone"] = zone
            data[MOVED_NOTE] = "weekly_test_schedule"
            _store(conn, data, exists)
    with op.batch_alter_table("eas_rwt_schedule") as batch:
        batch.drop_column("time_zone")


def downgrade() -> None:
    conn = op.get_bind()
    with op.batch_alter_table("eas_rwt_schedule") as batch:
        batch.add_column(
            sa.Column("time_zone", sa.String(length=64), nullable=False, server_default="UTC")
        )
    data = _application(conn)
    if data is not None and data.get("time_zone"):
        conn.execute(
            sa.text("UPDATE eas_rwt_schedule SET time_zone = :zone").bindparams(
                zone=data["time_zone"]
            )
        )
        data.pop("time_zone", None)
        data.pop(MOVED_NOTE, None)
        _store(conn, data, True)
