"""The settings sections live below eas and audio: stored, read and saved from layer 5."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine

import alertstation.schema
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.settings_admin import sections
from alertstation.settings_admin.tables import operations_settings as table


def test_the_schema_holds_the_sections_table_from_its_lower_home() -> None:
    assert alertstation.schema.metadata.tables["operations_settings"] is table


def test_a_section_saves_and_reads_back_without_the_operations_package(engine: Engine) -> None:
    now = datetime.now(UTC)
    with begin_write(engine) as conn:
        conn.execute(table.delete().where(table.c.section == "tts"))
        _, changed = sections.save(
            conn, sections.TTS, {"voice": "en-gb", "rate": "200"}, updated_by="ops", now=now
        )
    assert changed == ["rate", "voice"]
    with engine.connect() as conn:
        assert sections.tts_settings(conn) == {"voice": "en-gb", "rate": 200, "volume": 100}
    with pytest.raises(Invalid) as bad, begin_write(engine) as conn:
        sections.save(conn, sections.TTS, {"volume": 999}, updated_by="ops", now=now)
    assert "volume" in str(bad.value)
    with begin_write(engine) as conn:
        conn.execute(table.delete().where(table.c.section == "tts"))
