"""Migration 20261129_airing_truth: results move from the JSON column to rows, and old results
are relabelled truthfully (aired through no real output → archived_only; a worker stop →
interrupted)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from alertstation.db import make_engine
from alertstation.db.migrate import alembic_config, upgrade_to_head
from alertstation.eas.airing.tables import eas_airing_outputs, eas_airing_queue

BEFORE = "20261129_forward_rules_pending"
WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_old_results_become_rows_and_tell_the_truth(empty_database: str) -> None:
    engine = make_engine(empty_database)
    try:
        command.upgrade(alembic_config(engine), BEFORE)
        archive = sa.table(
            "eas_archive",
            sa.column("id", sa.Integer()),
            sa.column("header", sa.String()),
            sa.column("wav_path", sa.String()),
            sa.column("sample_rate", sa.Integer()),
            sa.column("duration", sa.Float()),
            sa.column("aired_at", sa.DateTime(timezone=True)),
        )
        queue = sa.table(
            "eas_airing_queue",
            sa.column("id", sa.Integer()),
            sa.column("archive_id", sa.Integer()),
            sa.column("origin", sa.String()),
            sa.column("state", sa.String()),
            sa.column("enqueued_at", sa.DateTime(timezone=True)),
            sa.column("started_at", sa.DateTime(timezone=True)),
            sa.column("finished_at", sa.DateTime(timezone=True)),
            sa.column("error", sa.Text()),
            sa.column("outputs", sa.Text()),
        )
        old = [
            ("aired", None, {"archive": {"ok": True}}),
            ("aired", None, {"archive": {"ok": True}, "icecast": {"ok": True}}),
            ("failed", "interrupted: the worker stopped while …", None),
            (
                "failed",
                "icecast: refused",
                {"archive": {"ok": True}, "icecast": {"ok": False, "error": "refused"}},
            ),
        ]
        with engine.begin() as conn:
            for number, (state, error, outputs) in enumerate(old, start=1):
                conn.execute(
                    archive.insert().values(
                        id=number,
                        header="ZCZC-EAS-RWT-051059+0030-3251200-WXYZ/FM -",
                        wav_path=f"{number}.wav",
                        sample_rate=8000,
                        duration=1.0,
                        aired_at=WHEN,
                    )
                )
                conn.execute(
                    queue.insert().values(
                        id=number,
                        archive_id=number,
                        origin="manual",
                        state=state,
                        enqueued_at=WHEN,
                        started_at=WHEN,
                        finished_at=WHEN,
                        error=error,
                        outputs=json.dumps(outputs) if outputs else None,
                    )
                )
        upgrade_to_head(engine)
        with engine.connect() as conn:
            states = [
                row.state
                for row in conn.execute(
                    sa.select(eas_airing_queue.c.state).order_by(eas_airing_queue.c.id)
                )
            ]
            rows = conn.execute(
                sa.select(
                    eas_airing_outputs.c.queue_id,
                    eas_airing_outputs.c.name,
                    eas_airing_outputs.c.ok,
                    eas_airing_outputs.c.error,
                ).order_by(eas_airing_outputs.c.id)
            ).all()
        assert states == ["archived_only", "aired", "interrupted", "failed"]
        assert [tuple(row) for row in rows] == [
            (1, "archive", True, None),
            (2, "archive", True, None),
            (2, "icecast", True, None),
            (4, "archive", True, None),
            (4, "icecast", False, "refused"),
        ]
    finally:
        engine.dispose()
