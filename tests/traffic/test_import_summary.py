"""``alertstation traffic import`` says what it did: self-referrals, the retention, exit status."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from alertstation.cli import main
from alertstation.errors import Invalid
from alertstation.traffic import maintenance
from alertstation.traffic.settings import (
    TrafficSettings,
    apply_changes,
    load_settings,
    save_settings,
)
from alertstation.traffic.tables import web_request_logs
from tests.support import StationHarness as Station
from tests.traffic import accesslog

pytestmark = pytest.mark.usefixtures("clean_log", "station_env")
LINE = '198.51.100.{} - - [{}] "GET /{} HTTP/1.1" 200 10 "{}" "Mozilla/5.0 (X11; Linux x86_64)"'


@pytest.fixture
def station_env(station: Station, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point the command line at the test station's database, keys and data directory."""
    settings = station.app.station.settings
    environment = {
        "ALERTSTATION_DATA_DIR": str(settings.data_dir),
        "DATABASE_URL": settings.database_url,
        "SECRET_KEY": settings.secret_key,
        "AUDIT_LEDGER_KEY": settings.audit_ledger_key,
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return environment


def _log(path: Path, days_ago: float, referrers: list[str], first: int = 1) -> Path:
    """Write one line for each referrer, a minute apart, ``days_ago`` days before now."""
    start = datetime.now(UTC) - timedelta(days=days_ago)
    lines = [
        LINE.format(
            first + number,
            (start + timedelta(minutes=number)).strftime(accesslog.TIME),
            number,
            referrer,
        )
        for number, referrer in enumerate(referrers)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _domains(engine: Engine) -> list[str | None]:
    query = select(web_request_logs.c.referrer_domain).order_by(web_request_logs.c.ts)
    with engine.connect() as conn:
        return list(conn.execute(query).scalars())


def test_the_sites_own_hosts_are_a_setting_checked_at_the_edge() -> None:
    given = ["WWW.Example.org", "example.org:8443", "[2001:DB8::1]:443", "news.example.org."]
    changed = apply_changes(TrafficSettings(), {"site_hosts": given})
    assert changed.site_hosts == ("example.org", "2001:db8::1", "news.example.org")
    assert changed.as_dict()["site_hosts"] == list(changed.site_hosts)
    for bad in ("not a host", "exa_mple.org", "", 7, "a" * 300):
        with pytest.raises(Invalid, match="site_hosts|host name"):
            apply_changes(TrafficSettings(), {"site_hosts": [bad]})
    with pytest.raises(Invalid, match="at most 16"):
        apply_changes(TrafficSettings(), {"site_hosts": [f"h{n}.example" for n in range(17)]})
    with pytest.raises(Invalid, match="site_hosts"):
        apply_changes(TrafficSettings(), {"site_hosts": "example.org"})


def test_self_referrals_are_excluded_by_the_setting_or_by_site_host(
    tmp_path: Path, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    referrers = [
        "https://www.example.org/alerts",  # the site itself
        "https://example.org:8443/",  # the site itself, on another port
        "https://news.example.net/story",  # an outside site
        "https://www.google.com/search?q=eas",  # a search engine
        "-",
    ]
    log = _log(tmp_path / "access.log", 2, referrers)
    with engine.begin() as conn:
        save_settings(conn, {"site_hosts": ["example.org"]}, datetime.now(UTC))
    assert main(["traffic", "import", str(log)]) == 0
    assert _domains(engine) == [None, None, "news.example.net", "google.com", None]
    with engine.connect() as conn:
        stored = conn.execute(select(web_request_logs.c.referrer).order_by("ts")).scalars()
        assert list(stored)[0] == "https://www.example.org/alerts"  # kept, not counted

    # --site-host replaces the setting for this import.
    with engine.begin() as conn:
        conn.execute(web_request_logs.delete())
    assert main(["traffic", "import", "--site-host", "news.example.net", str(log)]) == 0
    assert _domains(engine) == ["example.org", "example.org", None, "google.com", None]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["traffic", "import", "--site-host", "not a host", str(log)])
    assert "is not a host name" in capsys.readouterr().err


def test_lines_older_than_the_retention_are_left_out_or_kept_until_the_next_prune(
    tmp_path: Path, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _log(tmp_path / "old.log", 200, ["-"] * 3)  # retention: 90 days (the default)
    recent = _log(tmp_path / "recent.log", 2, ["-"] * 2, first=10)
    assert main(["traffic", "import", str(old), str(recent)]) == 1  # old.log: no row at all
    out, err = capsys.readouterr()
    assert (
        "5 lines: 2 imported, 0 already present, 0 left out by the settings, 0 unreadable, "
        "3 older than the retention (90 days) left out (--keep-history keeps them until the "
        "next prune)"
    ) in out
    assert f"error: {old}: no line was imported or already present" in err
    assert str(recent) not in err

    assert main(["traffic", "import", "--keep-history", str(old), str(recent)]) == 0
    out = capsys.readouterr().out
    assert "5 lines: 3 imported, 2 already present" in out
    assert "older than the retention (90 days) left out" not in out
    assert (
        "3 of the rows imported are older than the retention (90 days), kept until the next "
        "hourly prune"
    ) in out
    assert main(["traffic", "import", "--keep-history", str(old)]) == 0  # already present
    assert "0 imported, 3 already present" in capsys.readouterr().out
    assert len(_domains(engine)) == 5
    with engine.begin() as conn:
        retention = load_settings(conn).retention_days
        assert maintenance.prune(conn, datetime.now(UTC), retention) == 3
    assert len(_domains(engine)) == 2


def test_the_exit_status_is_1_when_a_non_empty_file_yields_no_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.log"
    junk.write_text("not a request\n")
    log = _log(tmp_path / "access.log", 1, ["-"] * 2)
    assert main(["traffic", "import", str(empty), str(log)]) == 0
    assert main(["traffic", "import", str(log)]) == 0  # nothing new, but every line present
    assert "0 imported, 2 already present" in capsys.readouterr().out
    assert main(["traffic", "import", str(junk), str(log)]) == 1
    out, err = capsys.readouterr()
    assert "1 unreadable (first unreadable: line 1 of" in out
    assert f"error: {junk}: no line was imported or already present" in err


def test_the_progress_bar_shows_when_stderr_is_a_terminal_whatever_stdout_is(
    tmp_path: Path, station_env: dict[str, str]
) -> None:
    log = _log(tmp_path / "access.log", 1, ["-"] * 3)
    # A terminal that has not told its size (0 x 0: a serial console, ``docker exec -t``,
    # ``ssh -t`` from a script): the bar used to be drawn 0 columns wide, that is not at all.
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "alertstation", "traffic", "import", str(log)],
            stdout=subprocess.PIPE,  # stdout redirected, as to a file
            stderr=follower,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **station_env},
            timeout=120,
            check=False,
        )
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                piece = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not piece:
                break
            shown += piece
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0, shown
    assert b"access.log: 100%" in shown  # the bar, finished
    assert b"3 lines: 3 imported" in done.stdout and b"100%" not in done.stdout
