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
    (tmp_path / "data").mkdir()  # a station's directory: commands refuse a missing one
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
    # The CON and the CAN name only OKC109: the NEW still holds OKC017 (NWS would have ended it
    # in a segment of its own), so it lives on for that county until its (2025) expiry.
    assert code == 0 and lines[0].split()[1:3] == ["duplicate", "expired"]
    code, lines = run(["alerts", "list"], capsys)
    assert (code, lines) == (0, ["no active alerts"])
    code, lines = run(["alerts", "list", "--all"], capsys)
    assert code == 0
    assert sorted(line.split()[1] for line in lines) == ["cancelled", "cancelled", "expired"]


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


ATOM_INDEX = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:cap="urn:oasis:names:tc:emergency:cap:1.2">
  <id>https://api.weather.gov/alerts/active.atom?area=VA</id>
  <title>Current watches, warnings, and advisories for Virginia</title>
  <updated>2026-11-21T12:00:00-05:00</updated>
  <author><name>w-nws.webmaster@noaa.gov</name></author>
  {entries}
</feed>
"""
ATOM_ENTRY = """<entry>
    <id>https://api.weather.gov/alerts/urn:oid:2.49.0.1.840.0.{n}</id>
    <updated>2026-11-21T11:50:00-05:00</updated>
    <title>Wind Advisory issued November 21 at 11:50AM EST by NWS Wakefield VA</title>
    <link rel="alternate" href="https://api.weather.gov/alerts/urn:oid:2.49.0.1.840.0.{n}"/>
    <summary>...WIND ADVISORY IN EFFECT...</summary>
    <cap:event>Wind Advisory</cap:event>
    <cap:status>Actual</cap:status>
  </entry>"""


def test_an_atom_index_of_link_only_entries_is_not_a_failure(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    feed = tmp_path / "active.atom"
    feed.write_text(ATOM_INDEX.format(entries="\n  ".join(ATOM_ENTRY.format(n=n) for n in "abc")))
    code, lines = run(["alerts", "import", str(feed)], capsys)
    assert code == 0
    assert len(lines) == 1
    assert lines[0].startswith(
        f"0 alerts from {feed}: the feed lists 3 link-only entries (an ATOM index, e.g. "
        "https://api.weather.gov/alerts/urn:oid:2.49.0.1.840.0.a); fetch them with the poller"
    )
    with station_env.connect() as conn:
        assert conn.execute(select(func.count()).select_from(cap_alerts)).scalar() == 0


def test_an_atom_entry_with_neither_alert_nor_link_still_fails_the_import(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    linked = ATOM_ENTRY.format(n="a")
    bare = "<entry><id>urn:example:bare</id><title>nothing here</title></entry>"
    feed = tmp_path / "mixed.atom"
    feed.write_text(ATOM_INDEX.format(entries=linked + bare))
    code, lines = run(["alerts", "import", str(feed)], capsys)
    assert code == 1
    assert lines[0] == (
        f"skipped {feed} entry 1 (urn:example:bare): ATOM entry embeds no CAP <alert> "
        "and links to none"
    )
    assert lines[1].startswith(f"0 alerts from {feed}: the feed lists 1 link-only entry ")
