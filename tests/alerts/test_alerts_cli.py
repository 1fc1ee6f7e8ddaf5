"""``alertstation alerts import`` and ``alerts list`` as an operator runs them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from alertstation.alerts.tables import cap_alerts
from alertstation.cli import main
from tests.support import clear_tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"


@pytest.fixture
def station_env(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Engine]:
    monkeypatch.setenv("DATABASE_URL", engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ALERTSTATION_LOG_FORMAT", "text")
    yield engine
    clear_tables(engine)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(args)
    return code, capsys.readouterr().out.splitlines()


def test_import_prints_each_alert_and_drives_the_chain(
    station_env: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [str(FIXTURES / f"cap12_svr_{name}.xml") for name in ("new", "con", "can")]
    code, lines = run(["alerts", "import", *files], capsys)
    assert code == 0
    assert [line.split()[1:] for line in lines] == [
        ["stored", "expired", "out-of-area"],  # the samples are from 2025: long expired
        ["stored", "expired", "out-of-area"],
        ["stored", "cancelled", "out-of-area"],
    ]
    assert lines[0].startswith("urn:oid:2.49.0.1.840.0.4c1a5f0e")
    code, lines = run(["alerts", "import", files[0]], capsys)
    assert code == 0 and lines[0].split()[1:3] == ["duplicate", "superseded"]
    code, lines = run(["alerts", "list"], capsys)
    assert (code, lines) == (0, ["no active alerts"])
    code, lines = run(["alerts", "list", "--all"], capsys)
    assert code == 0
    assert sorted(line.split()[1] for line in lines) == ["cancelled", "cancelled", "superseded"]


def test_a_malformed_message_is_skipped_and_the_rest_stored(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<alert><unclosed></alert>")
    code, lines = run(["alerts", "import", str(bad), str(FIXTURES / "cap12_svr_new.xml")], capsys)
    assert code == 1
    assert lines[0].startswith(f"skipped {bad}: malformed XML")
    assert lines[1].split()[1:3] == ["stored", "expired"]
    with station_env.connect() as conn:
        assert conn.execute(select(func.count()).select_from(cap_alerts)).scalar() == 1


def test_import_of_the_json_feed(station_env: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(["alerts", "import", str(FIXTURES / "api_feed.json")], capsys)
    stored = [line for line in lines if not line.startswith("skipped ")]
    assert stored and all(line.split()[1] == "stored" for line in stored)
    assert code == (1 if len(stored) < len(lines) else 0)


def test_missing_file_is_one_line_error(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["alerts", "import", str(tmp_path / "nope.xml")]) == 1
    assert "cannot read" in capsys.readouterr().err
