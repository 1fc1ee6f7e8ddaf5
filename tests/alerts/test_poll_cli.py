"""``alertstation poll --once`` and ``poll sources`` as an operator runs them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import cap_alerts
from alertstation.audit.tables import audit_logs
from alertstation.cli import main
from alertstation.db.engine import begin_write
from tests.alerts.feed_server import Canned, FeedServer, running_server
from tests.support import clear_tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
NEW = (FIXTURES / "cap12_svr_new.xml").read_bytes()


@pytest.fixture
def station_env(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Engine]:
    monkeypatch.setenv("DATABASE_URL", engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir(exist_ok=True)  # an existing station's
    monkeypatch.setenv("ALERTSTATION_LOG_FORMAT", "text")
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    yield engine
    clear_tables(engine)


@pytest.fixture
def server() -> Iterator[FeedServer]:
    with running_server() as feed_server:
        yield feed_server


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(args)
    return code, capsys.readouterr().out.splitlines()


def test_poll_once_with_no_sources_says_so(
    station_env: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(["poll", "--once"], capsys)
    assert code == 0
    assert lines == ["no enabled poll sources; add one with `alertstation poll sources add`"]


def test_poll_once_prints_a_line_per_source_and_fails_only_when_all_fail(
    station_env: Engine, server: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.serve("/ok.xml", Canned(NEW, content_type="application/xml", etag='"1"'))
    server.serve("/down.xml", Canned(b"no", status=503, content_type="text/plain"))
    for name, path in (("good", "/ok.xml"), ("bad", "/down.xml")):
        code, lines = run(
            [
                "poll",
                "sources",
                "add",
                "--name",
                name,
                "--kind",
                "cap-xml",
                "--url",
                server.url(path),
            ],
            capsys,
        )
        assert code == 0 and lines[0].startswith("added poll source")

    code, lines = run(["poll", "--once"], capsys)
    assert code == 0
    assert sorted(lines) == [
        "bad: failed (HTTP 503): HTTP 503 Service Unavailable",
        "good: ok (HTTP 200) received=1 stored=1 duplicate=0 ignored=0 skipped=0",
    ]
    code, lines = run(["poll", "--once"], capsys)  # --once ignores the schedule
    assert "good: not-modified (HTTP 304) received=0 stored=0" in " ".join(lines)
    with station_env.connect() as conn:
        assert conn.execute(select(func.count()).select_from(cap_alerts)).scalar_one() == 1

    code, lines = run(["poll", "sources", "disable", "good"], capsys)
    assert code == 0 and lines[0].endswith(": good disabled")
    code, lines = run(["poll", "--once"], capsys)
    assert (code, lines) == (1, ["bad: failed (HTTP 503): HTTP 503 Service Unavailable"])


def test_sources_list_add_remove_are_audited(
    station_env: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(["poll", "sources", "list"], capsys)
    assert (code, lines) == (0, ["no poll sources; add one with `alertstation poll sources add`"])
    add = ["poll", "sources", "add", "--name", "NWS VA", "--kind", "json-api", "--area", "va"]
    code, lines = run([*add, "--interval", "120"], capsys)
    assert code == 0 and lines[0].endswith(": NWS VA [json-api]")
    code, lines = run(["poll", "sources", "list"], capsys)
    assert code == 0 and len(lines) == 1
    assert "NWS VA [json-api] api.weather.gov pending every 120s" in lines[0]

    assert main(add) == 2  # the name is taken
    assert "already exists" in capsys.readouterr().err
    bad = ["poll", "sources", "add", "--name", "x", "--kind", "cap-xml", "--url", "ftp://h/"]
    assert main(bad) == 2 and "http:// or https://" in capsys.readouterr().err
    assert main(["poll", "sources", "remove", "nope"]) == 1
    assert "no poll source named 'nope'" in capsys.readouterr().err

    code, lines = run(["poll", "sources", "remove", "NWS VA"], capsys)
    assert code == 0 and lines[0].endswith(": NWS VA")
    with station_env.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.username, audit_logs.c.details).where(
                audit_logs.c.target == "poller"
            )
        ).all()
    assert [row.username for row in rows] == ["cli", "cli"]
    assert '"change":"created"' in rows[0].details and '"change":"deleted"' in rows[1].details


def test_poll_without_once_is_a_one_line_error(
    station_env: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["poll"]) == 1
    assert "--once" in capsys.readouterr().err
