"""Migrations build exactly the metadata, on both backends, and a second run changes nothing."""

from __future__ import annotations

import re
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from alertstation.db import make_engine
from alertstation.db.migrate import (
    alembic_config,
    current_revision,
    head_revision,
    pending_revisions,
    upgrade_to_head,
)
from alertstation.schema import metadata

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations" / "versions"


def test_migrating_an_empty_database_yields_exactly_the_metadata(empty_database: str) -> None:
    engine = make_engine(empty_database)
    try:
        assert current_revision(engine) is None
        applied = upgrade_to_head(engine)
        assert applied and applied[-1] == head_revision(engine)
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": True}
            )
            assert compare_metadata(context, metadata) == []
        tables = set(inspect(engine).get_table_names()) - {"alembic_version"}
        assert tables == set(metadata.tables)
    finally:
        engine.dispose()


def test_second_migrate_is_a_no_op(empty_database: str) -> None:
    engine = make_engine(empty_database)
    try:
        upgrade_to_head(engine)
        before = {
            name: [c["name"] for c in inspect(engine).get_columns(name)]
            for name in inspect(engine).get_table_names()
        }
        assert pending_revisions(engine) == []
        assert upgrade_to_head(engine) == []
        after = {
            name: [c["name"] for c in inspect(engine).get_columns(name)]
            for name in inspect(engine).get_table_names()
        }
        assert before == after
    finally:
        engine.dispose()


def test_revision_files_are_dated_and_form_one_line() -> None:
    files = sorted(p for p in MIGRATIONS.glob("*.py") if p.name != "__init__.py")
    assert files
    for path in files:
        assert re.fullmatch(r"\d{8}_[a-z0-9_]+\.py", path.name), path.name
        assert f'revision: str = "{path.stem}"' in path.read_text(), path.name
        # alembic_version holds a revision in 32 characters: PostgreSQL refuses a longer one
        assert len(path.stem) <= 32, path.name
    script = ScriptDirectory.from_config(alembic_config(make_engine("sqlite://")))
    assert len(script.get_heads()) == 1
    assert len(list(script.walk_revisions())) == len(files)
