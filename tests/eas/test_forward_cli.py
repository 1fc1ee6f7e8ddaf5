"""``alertstation eas forward --once`` and ``eas rwt-test`` as an operator runs them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from alertstation.app import build_station
from alertstation.cli import main
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.db.types import utcnow
from alertstation.eas.forward import service as forward
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.eas.forward.rwt import save_schedule
from tests.eas.test_forward_support import (
    archived,
    audit_rows,
    cap_message,
    configure,
    ingest,
    later,
)
from tests.support import clear_tables, make_settings


@pytest.fixture
def station(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Station]:
    """A station on the test database whose settings the command line also reads."""
    url = engine.url.render_as_string(hide_password=False)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir(exist_ok=True)  # an existing station's
    monkeypatch.setenv("ALERTSTATION_LOG_FORMAT", "text")
    yield build_station(make_settings(tmp_path, url), engine)
    clear_tables(engine)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def queue_two(station: Station) -> None:
    """Queue a Tornado Warning and a Severe Thunderstorm Warning, then forward TOR only."""
    configure(station)
    now = utcnow()
    ingest(station, cap_message("tor-cli", now, expires=later(now, minutes=40)), now)
    svr = cap_message(
        "svr-cli", now, expires=later(now, minutes=40), event_code="SVR", event="Severe Storm"
    )
    ingest(station, svr, now)
    with begin_write(station.engine) as conn:
        book = {"rules": [{"events": ["TOR"], "mode": "auto"}]}
        save_rule_book(conn, book, by="test", now=station.clock())


def test_forward_once_prints_one_line_per_entry(
    station: Station, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines, _ = run(["eas", "forward", "--once"], capsys)
    assert (code, lines) == (0, ["nothing pending"])
    queue_two(station)
    code, lines, _ = run(["eas", "forward", "--once"], capsys)
    assert code == 0
    assert len(lines) == 2
    assert re.fullmatch(
        r"\d+ tor-cli TOR aired: ZCZC-WXR-TOR-040109\+0045-\d{7}-ALRTSTN -", lines[0]
    )
    assert re.fullmatch(r"\d+ svr-cli SVR awaiting: manual by default: pending \d+", lines[1])
    assert len(archived(station.engine)) == 1
    assert run(["eas", "forward", "--once"], capsys)[:2] == (0, ["nothing pending"])


def test_forward_once_exits_1_when_an_airing_failed(
    station: Station, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    queue_two(station)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no space left on device")

    monkeypatch.setattr(forward.broadcast, "broadcast", broken)
    code, lines, _ = run(["eas", "forward", "--once", "--limit", "1"], capsys)
    assert code == 1
    assert lines == [lines[0]] and lines[0].endswith(
        "tor-cli TOR failed: airing failed: no space left on device"
    )


def test_forward_needs_once(station: Station, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["eas", "forward"], capsys)
    assert code == 2 and "use --once" in err


def test_rwt_test_airs_with_the_schedules_codes(
    station: Station, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["eas", "rwt-test"], capsys)
    assert code == 2 and "location codes" in err
    assert archived(station.engine) == []
    with begin_write(station.engine) as conn:
        body = {"location_codes": ["040109"], "station_id": "KXYZ"}
        save_schedule(conn, body, by="test", now=utcnow())
    code, lines, _ = run(["eas", "rwt-test"], capsys)
    assert code == 0
    assert re.fullmatch(
        r"queued for air: ZCZC-EAS-RWT-040109\+0015-\d{7}-KXYZ    - \(message \d+, voice none\)",
        lines[0],
    )
    (row,) = archived(station.engine)
    assert row.aired_by == "cli"
    (audit,) = audit_rows(station.engine, "eas.broadcast")
    assert (audit.username, audit.target) == ("cli", "eas_rwt:test")
