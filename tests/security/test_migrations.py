"""The source column of ip_filters is backfilled from reason and description on introduction."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from alertstation.db import make_engine
from alertstation.db.migrate import alembic_config, current_revision, upgrade_to_head
from alertstation.security.bans.service import list_filters

LEGACY = [
    # value, reason, description -> expected source
    ("203.0.113.1", "auto_brute_force", None, "ssh_brute_force"),
    ("203.0.113.2", "manual", "Blocked after SSH attempts", "ssh_brute_force"),
    ("203.0.113.3", "Repeated LOGIN failures", None, "login_brute_force"),
    ("203.0.113.4", None, "login brute force from the admin page", "login_brute_force"),
    ("203.0.113.5", "malicious request to /wp-admin", None, "malicious_request"),
    ("203.0.113.6", "flood", "too many requests", "flood"),
    ("203.0.113.7", "spam", "nuisance", "manual"),
    ("198.51.100.0/24", None, None, "manual"),
]


def test_source_is_backfilled_from_reason_and_description(empty_database: str) -> None:
    engine = make_engine(empty_database)
    try:
        command.upgrade(alembic_config(engine), "20261121_ip_filters")
        assert current_revision(engine) == "20261121_ip_filters"
        legacy = sa.table(
            "ip_filters",
            sa.column("value", sa.String()),
            sa.column("kind", sa.String()),
            sa.column("active", sa.Boolean()),
            sa.column("created_at", sa.DateTime(timezone=True)),
            sa.column("reason", sa.String()),
            sa.column("description", sa.Text()),
        )
        created = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        with engine.begin() as conn:
            columns = {column["name"] for column in sa.inspect(conn).get_columns("ip_filters")}
            assert "source" not in columns
            conn.execute(
                legacy.insert(),
                [
                    {
                        "value": value,
                        "kind": "blocklist",
                        "active": True,
                        "created_at": created,
                        "reason": reason,
                        "description": description,
                    }
                    for value, reason, description, _ in LEGACY
                ],
            )
        applied = upgrade_to_head(engine)
        assert applied[0] == "20261122_ip_filters_source"
        with engine.connect() as conn:
            sources = {entry.value: entry.source for entry in list_filters(conn)}
            labels = {entry.value: entry.source_label for entry in list_filters(conn)}
        assert sources == {value: source for value, _, _, source in LEGACY}
        assert labels["203.0.113.1"] == "SSH Brute Force"
        assert labels["203.0.113.3"] == "Login Brute Force"
        with engine.begin() as conn:  # new rows without a source get the default
            conn.execute(
                legacy.insert().values(
                    value="192.0.2.1", kind="allowlist", active=True, created_at=created
                )
            )
            assert {e.value: e.source for e in list_filters(conn, "allowlist")} == {
                "192.0.2.1": "manual"
            }
        command.downgrade(alembic_config(engine), "20261121_ip_filters")
        columns = {column["name"] for column in sa.inspect(engine).get_columns("ip_filters")}
        assert "source" not in columns
    finally:
        engine.dispose()
