"""``alertstation alerts import`` of many files: the summary line and the progress bar."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from alertstation.alerts.ingest import imports as bulk
from alertstation.alerts.tables import cap_alerts
from alertstation.cli import main
from tests.support import clear_tables

SUMMARY = re.compile(
    r"^(\d+) messages?: (\d+) stored, (\d+) duplicates?, (\d+) skipped, (\d+) problems? "
    r"from \d+ files? in \d+\.\d s \(\d+ messages/s\)$"
)
CAP = """<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><identifier>archive-{n}</identifier>
<sender>w-nws.webmaster@noaa.gov</sender><sent>2026-05-14T22:00:00-00:00</sent>
<status>Actual</status><msgType>Alert</msgType><scope>Public</scope><info>
<category>Met</category><event>Severe Thunderstorm Warning</event><urgency>Immediate</urgency>
<severity>Severe</severity><certainty>Observed</certainty>
<eventCode><valueName>SAME</valueName><value>SVR</value></eventCode>
<expires>2026-05-14T23:00:00-00:00</expires><area><areaDesc>County</areaDesc>
<geocode><valueName>SAME</valueName><value>040109</value></geocode></area></info></alert>"""


@pytest.fixture
def station_env(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Engine]:
    monkeypatch.setenv("DATABASE_URL", engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir(exist_ok=True)  # an existing station's
    monkeypatch.setenv("ALERTSTATION_LOG_FORMAT", "text")
    yield engine
    clear_tables(engine)


def archive(folder: Path, count: int) -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for n in range(count):
        path = folder / f"{n:05d}.xml"
        path.write_text(CAP.format(n=n))
        paths.append(str(path))
    return paths


def summary(err: str) -> tuple[int, ...]:
    match = SUMMARY.match(err.strip().splitlines()[-1])
    assert match, err
    return tuple(int(group) for group in match.groups())


def test_an_archive_in_several_chunks_is_summed_up(
    station_env: Engine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = archive(tmp_path / "archive", 25)
    bad = tmp_path / "bad.xml"
    bad.write_text("<alert>")
    chunks: list[int] = []
    real = bulk.ingest_batch
    monkeypatch.setattr(
        bulk,
        "ingest_batch",
        lambda conn, alerts, *a, **k: chunks.append(len(alerts)) or real(conn, alerts, *a, **k),
    )
    args = ["alerts", "import", "--chunk", "7", *files[:20], str(bad), *files[20:], files[3]]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [
        ["archive-0", "stored"],
        ["archive-1", "stored"],
        ["archive-2", "stored"],
    ]
    assert lines[20].startswith(f"skipped {bad}")
    assert lines[-1].split()[:2] == ["archive-3", "duplicate"]
    assert len(lines) == 27
    assert summary(err) == (27, 25, 1, 0, 1)
    assert chunks == [7, 7, 7, 5]  # one write transaction per chunk of at most 7 alerts
    with station_env.connect() as conn:
        assert conn.execute(select(func.count()).select_from(cap_alerts)).scalar() == 25


def test_the_bar_goes_to_stderr_only_on_a_terminal_or_when_asked(
    station_env: Engine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = archive(tmp_path / "archive", 3)
    assert main(["alerts", "import", *files]) == 0
    out, err = capsys.readouterr()
    assert "msg" not in err and "import:" not in err  # not a terminal: the summary only
    assert summary(err) == (3, 3, 0, 0, 0)

    assert main(["alerts", "import", "--progress", *files]) == 0
    out, err = capsys.readouterr()
    assert "import: 100%" in err and "3/3" in err
    assert "import:" not in out
    assert summary(err) == (3, 0, 3, 0, 0)

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["alerts", "import", *files]) == 0
    out, err = capsys.readouterr()
    assert "import: 100%" in err and "import:" not in out


def test_a_chunk_size_must_be_positive(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = archive(tmp_path / "archive", 1)
    with pytest.raises(SystemExit):
        main(["alerts", "import", "--chunk", "0", *files])
    assert "'0' is not a positive whole number" in capsys.readouterr().err
