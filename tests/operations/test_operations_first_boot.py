"""First boot: the bundled land-zone snapshot seeds an empty catalog (also from a wheel); the
bundled county-name snapshot names every county before any sync."""

from __future__ import annotations

import gzip
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from email.message import Message
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import func, select

from alertstation.db.engine import make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.zones import county_snapshot, snapshot
from alertstation.zones.service import read_sources
from alertstation.zones.snapshot import SNAPSHOT_FILE, read_snapshot, seed_from_snapshot
from alertstation.zones.tables import wx_zones
from tests.support import SHARED_DATA

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "src" / "alertstation" / "zones" / SNAPSHOT_FILE
LAND = SHARED_DATA / "zones" / "z_18mr25.dbf"
LAND_RECORDS = 4114
LAND_CODES = 4026  # multi-part zones merge into one row each


def test_the_checked_in_snapshot_is_what_the_script_makes_from_the_land_dbf(
    tmp_path: Path,
) -> None:
    assert LAND.is_file(), f"the shared data set is missing {LAND}"
    out = tmp_path / SNAPSHOT_FILE
    made = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "make-zone-snapshot.py"),
            str(LAND),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    assert f"{LAND_RECORDS} records" in made.stdout
    assert out.read_bytes() == BUNDLED.read_bytes(), "re-run scripts/make-zone-snapshot.py"
    assert BUNDLED.stat().st_size < 300 * 1024
    records = read_snapshot(BUNDLED)
    assert len(records) == LAND_RECORDS
    calhoun = next(r for r in records if r.zone_code == "ALZ019")
    assert (calhoun.name, calhoun.cwa, calhoun.latitude) == ("Calhoun", "BMX", 33.7714)


PARTIAL = SHARED_DATA / "zones" / "cs16ap26.dbf"
COUNTIES = ROOT / "src" / "alertstation" / "zones" / county_snapshot.SNAPSHOT_FILE


def test_the_checked_in_county_names_are_what_the_script_makes_from_the_partial_dbf(
    tmp_path: Path,
) -> None:
    assert PARTIAL.is_file(), f"the shared data set is missing {PARTIAL}"
    out = tmp_path / county_snapshot.SNAPSHOT_FILE
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make-county-snapshot.py"), str(PARTIAL)]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    assert out.read_bytes() == COUNTIES.read_bytes(), "re-run scripts/make-county-snapshot.py"
    assert COUNTIES.stat().st_size < 300 * 1024
    index = county_snapshot.read_county_snapshot(COUNTIES)
    assert len(index.counties) > 3000  # every county and county-equivalent of the file
    assert (index.counties["39137"].name, index.counties["39137"].state_code) == ("Putnam", "OH")
    assert index.subdivisions["527053"] == "Central Hennepin"


def test_a_malformed_county_snapshot_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(gzip.compress(b"same_code,state_code,name\n39137,OH,Putnam\n"))
    with pytest.raises(ValueError, match="line 2"):
        county_snapshot.read_county_snapshot(bad)


def test_a_malformed_snapshot_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(gzip.compress(b"zone_code,name\nALZ019,Calhoun\n"))
    with pytest.raises(ValueError, match="expected the columns"):
        read_snapshot(bad)


def test_seed_fills_only_an_empty_catalog(empty_database: str) -> None:
    engine = make_engine(empty_database)
    try:
        upgrade_to_head(engine)
        first = seed_from_snapshot(engine)
        assert first is not None and first.counts == {"public": LAND_CODES}
        assert seed_from_snapshot(engine) is None
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(wx_zones)).scalar_one() == (
                LAND_CODES
            )
            source = read_sources(conn)["public"]
        assert (source.file_name, source.record_count) == (SNAPSHOT_FILE, LAND_RECORDS)
    finally:
        engine.dispose()


def test_two_hosts_starting_together_seed_the_catalog_once(
    empty_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two hosts start on one empty PostgreSQL at once: both find the catalog empty, one seeds
    it and the other sees the seed, where both used to insert and one start failed."""
    engine = make_engine(empty_database)
    both_read = threading.Barrier(2, timeout=60)

    def read_together(path: Path) -> list[Any]:
        records = read_snapshot(path)
        both_read.wait()  # each found the catalog empty before either writes
        return records

    monkeypatch.setattr(snapshot, "read_snapshot", read_together)
    results: list[Any] = []

    def start() -> None:
        try:
            results.append(seed_from_snapshot(engine))
        except Exception as ex:  # noqa: BLE001 - the failure is the finding
            results.append(ex)

    try:
        upgrade_to_head(engine)
        threads = [threading.Thread(target=start) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not [r for r in results if isinstance(r, Exception)], results
        assert sorted(r is None for r in results) == [False, True]
        with engine.connect() as conn:
            count = conn.execute(select(func.count()).select_from(wx_zones)).scalar_one()
        assert count == LAND_CODES
    finally:
        engine.dispose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _request(url: str, body: bytes | None = None, cookie: str = "") -> tuple[int, Message, bytes]:
    headers = {"Content-Type": "application/json"} if body else {}
    if cookie:
        headers["Cookie"] = cookie
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as ex:
        return ex.code, ex.headers, ex.read()


@pytest.mark.slow
def test_run_from_an_installed_wheel_seeds_the_catalog_without_assets(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path), str(ROOT)],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("alertstation-*.whl")
    assert f"alertstation/zones/{SNAPSHOT_FILE}" in zipfile.ZipFile(wheel).namelist()
    assert (
        f"alertstation/zones/{county_snapshot.SNAPSHOT_FILE}" in zipfile.ZipFile(wheel).namelist()
    )
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "no-assets"),
        "ALERTSTATION_LOG_FORMAT": "text",
    }
    for name in ("DATABASE_URL", "WX_ZONE_DBF_PATH"):
        env.pop(name, None)
    python = [sys.executable, "-m", "alertstation"]
    where = subprocess.run(
        [sys.executable, "-c", "import alertstation; print(alertstation.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(site)), where.stdout
    subprocess.run([*python, "migrate"], env=env, cwd=tmp_path, check=True, timeout=120)
    password = "first boot passphrase"
    subprocess.run(
        [*python, "user", "create", "--username", "boss", "--role", "admin", "--password-stdin"],
        input=password,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "run.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [*python, "run", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            env=env,
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        status = None
        while time.monotonic() < deadline:
            try:
                status, _, _ = _request(f"{base}/healthz")
                break
            except (ConnectionError, urllib.error.URLError, TimeoutError):
                time.sleep(0.2)
        assert status == 200, log_path.read_text()[-4000:]
        assert f"from {SNAPSHOT_FILE}" in log_path.read_text()
        login = orjson.dumps({"username": "boss", "password": password})
        status, headers, body = _request(f"{base}/auth/login", login)
        assert status == 200, body
        cookies = [c.split(";", 1)[0] for c in headers.get_all("Set-Cookie") or []]
        assert cookies, dict(headers)
        cookie = "; ".join(cookies)
        status, _, body = _request(f"{base}/api/zones?q=Calhoun&type=public", cookie=cookie)
        assert status == 200, body
        assert "ALZ019" in body.decode()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
