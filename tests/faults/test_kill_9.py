"""`kill -9` in the middle of the station's long writes leaves nothing half-written.

Each test starts a real ``alertstation`` process on a fresh SQLite data directory, waits until
the work is observably under way, kills it with SIGKILL, then checks the database: SQLite's
integrity and foreign keys, the all-or-nothing unit the code documents, and the audit chain
(``alertstation audit verify``).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.eas.airing_support import queue_message
from tests.eas.test_icecast import IcecastServer, icecast  # noqa: F401 (fixture)
from tests.support import SHARED_DATA

ZONES = SHARED_DATA / "zones"
FEED = Path(__file__).resolve().parents[1] / "fixtures" / "alerts" / "api_feed.json"
DEADLINE = 120.0
PYTHON = [sys.executable, "-m", "alertstation"]


def station_env(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "assets"),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    (tmp_path / "assets").mkdir(exist_ok=True)
    subprocess.run([*PYTHON, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    return env


def database(tmp_path: Path) -> Path:
    return tmp_path / "data" / "alertstation.db"


def query(tmp_path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(database(tmp_path), timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def wait_until(predicate: Callable[[], Any], what: str, process: subprocess.Popen[bytes]) -> Any:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        assert process.poll() is None, f"the process ended before {what}"
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {DEADLINE:.0f} s")


def kill_9(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


def assert_consistent(tmp_path: Path, env: dict[str, str]) -> None:
    """SQLite's own checks pass and the audit chain verifies."""
    assert query(tmp_path, "PRAGMA integrity_check") == [("ok",)]
    assert query(tmp_path, "PRAGMA foreign_key_check") == []
    verify = subprocess.run(
        [*PYTHON, "audit", "verify"], env=env, capture_output=True, text=True, timeout=120
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "FAILED" not in verify.stdout


def catalog(tmp_path: Path) -> tuple[dict[str, int], dict[str, str]]:
    """Return the zone count per type and the file each family was synced from."""
    counts = dict(query(tmp_path, "SELECT zone_type, count(*) FROM wx_zones GROUP BY zone_type"))
    counties = query(tmp_path, "SELECT count(*) FROM county_fips")[0][0]
    sources = dict(query(tmp_path, "SELECT family, file_name FROM zone_sources"))
    return {**counts, "county_fips": counties}, sources


@pytest.mark.slow
def test_kill_9_during_zones_sync_leaves_the_old_or_the_new_catalog(tmp_path: Path) -> None:
    files = [ZONES / "mz20fe25.dbf", ZONES / "z_18mr25.dbf", ZONES / "cs16ap26.dbf"]
    if not all(path.is_file() for path in files):
        pytest.skip(f"the shared zone files are not in {ZONES}")
    env = station_env(tmp_path)

    def argv(*paths: Path) -> list[str]:
        return [*PYTHON, "zones", "sync", *(f"--dbf-path={path}" for path in paths)]

    def sync(*paths: Path) -> None:
        done = subprocess.run(argv(*paths), env=env, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()

    sync(files[0])
    old = catalog(tmp_path)
    assert old[0]

    killed = subprocess.Popen(
        argv(*files), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert killed.stderr is not None
    with killed.stderr:
        # One line per file once read; kill after the first, while the rest is read or written.
        line = wait_until(killed.stderr.readline, "the first file was read", killed)
        assert b"reading" in line
        kill_9(killed)
    after_kill = catalog(tmp_path)

    sync(*files)
    new = catalog(tmp_path)
    assert new != old
    assert after_kill in (old, new)
    assert_consistent(tmp_path, env)


def _timestamp(value: object) -> bool:
    try:
        return isinstance(value, str) and datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False  # the fixture's deliberately bad entry


def big_feed(copies: int) -> bytes:
    """The fixture feed repeated with fresh identifiers: ``copies`` times its alerts."""
    feed = json.loads(FEED.read_text())
    originals = [f for f in feed["features"] if _timestamp(f["properties"].get("sent"))]
    features = []
    for copy in range(copies):
        for feature in originals:
            text = json.dumps(feature)
            ident = feature["properties"]["id"]
            features.append(json.loads(text.replace(ident, f"{ident[:-2]}.{copy + 2}")))
    feed["features"] = features
    return json.dumps(feed).encode()


@pytest.mark.slow
def test_kill_9_during_alerts_import_keeps_whole_alerts_only(tmp_path: Path) -> None:
    env = station_env(tmp_path)
    feed = tmp_path / "feed.json"
    feed.write_bytes(big_feed(60))
    total = len(json.loads(feed.read_text())["features"])

    def stored() -> int:
        return query(tmp_path, "SELECT count(*) FROM cap_alerts")[0][0]

    importer = subprocess.Popen(
        [*PYTHON, "alerts", "import", "--chunk", "5", str(feed)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until(lambda: stored() >= 5, "alerts started to appear", importer)
    kill_9(importer)
    partial = stored()
    assert 0 < partial < total, "the import finished before the kill: make the feed larger"
    # Alerts are stored a chunk at a time, one transaction per chunk (alerts.ingest): every
    # stored alert has its area rows, and none is stored twice.
    assert query(
        tmp_path,
        "SELECT count(*) FROM cap_alerts a WHERE NOT EXISTS "
        "(SELECT 1 FROM cap_alert_geocodes g WHERE g.alert_id = a.id)",
    ) == [(0,)]
    assert query(tmp_path, "SELECT count(*) - count(DISTINCT identifier) FROM cap_alerts") == [(0,)]
    assert_consistent(tmp_path, env)

    again = subprocess.run(
        [*PYTHON, "alerts", "import", str(feed)], env=env, capture_output=True, timeout=600
    )
    assert again.returncode == 0, again.stderr.decode()
    assert stored() == total  # the rest is imported, the stored ones are not duplicated
    assert_consistent(tmp_path, env)


@pytest.mark.slow
def test_kill_9_during_an_airing_fails_the_item_and_never_airs_it_again(
    tmp_path: Path,
    icecast: IcecastServer,  # noqa: F811
) -> None:
    from alertstation.app import create_app
    from alertstation.db import make_engine
    from alertstation.db.engine import begin_write
    from alertstation.eas.airing import queue as airing
    from alertstation.eas.airing import settings as settings_airing
    from alertstation.eas.archive import AiredMessage
    from alertstation.settings import LEDGER_KEY_FILE, load_or_create_key
    from tests.support import make_settings

    env = station_env(tmp_path)
    url = f"sqlite:///{database(tmp_path)}"
    engine = make_engine(url)
    # The broadcast path audits: sign with the station's own ledger key, as the CLI verifies.
    ledger_key = load_or_create_key(tmp_path / "data", LEDGER_KEY_FILE)
    station = create_app(
        make_settings(tmp_path, url, audit_ledger_key=ledger_key), engine=engine
    ).station
    with begin_write(engine) as conn:
        settings_airing.save(
            conn,
            {
                "icecast_enabled": True,
                "icecast_host": "127.0.0.1",
                "icecast_port": icecast.port,
                "icecast_mount": "/fault.mp3",
                "icecast_password": icecast.password,
            },
            updated_by="test",
            now=station.clock(),
        )
    header = "ZCZC-EAS-RWT-051059+0030-3251200-WXYZ/FM -"
    long_silence = AiredMessage(header, np.zeros(22050 * 60, dtype=np.int16), 22050)
    item_id = queue_message(station, long_silence, aired_by="ops")["queue"]["id"]
    engine.dispose()

    def item() -> tuple[str, str | None, str | None]:
        return query(
            tmp_path, "SELECT state, error, started_at FROM eas_airing_queue WHERE id = ?", item_id
        )[0]

    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen([*PYTHON, "worker"], env=env, stdout=log, stderr=log)
    try:
        wait_until(lambda: item()[0] == airing.AIRING, "the message went on the air", worker)
        kill_9(worker)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    started = item()[2]
    assert item()[0] == airing.AIRING  # nobody recorded the end: the worker died mid-air

    # A message queued behind it: once the new worker has dealt with that one, its airing loop
    # has passed the interrupted item.
    engine = make_engine(url)
    station = create_app(
        make_settings(tmp_path, url, audit_ledger_key=ledger_key), engine=engine
    ).station
    short = AiredMessage(header, np.zeros(11025, dtype=np.int16), 22050)
    next_id = queue_message(station, short, aired_by="ops")["queue"]["id"]
    engine.dispose()

    def state_of(queue_id: int) -> str:
        return query(tmp_path, "SELECT state FROM eas_airing_queue WHERE id = ?", queue_id)[0][0]

    with log_path.open("ab") as log:
        restarted = subprocess.Popen([*PYTHON, "worker"], env=env, stdout=log, stderr=log)
    try:
        wait_until(
            lambda: state_of(next_id) in (airing.AIRED, airing.FAILED),
            "the new worker aired the next message",
            restarted,
        )
        assert item() == (airing.INTERRUPTED, airing.INTERRUPTED_ERROR, started), (
            log_path.read_text()
        )
        assert state_of(next_id) == airing.AIRED, log_path.read_text()
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.wait(timeout=60)
    assert_consistent(tmp_path, env)
