"""The data directory and the SQLite files are private to the station's account (0700/0600)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sqlalchemy import text

from alertstation.db.engine import make_engine
from alertstation.settings import Settings


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_data_directory_and_database_are_private(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)  # the usual service umask, which gave 0755 and 0644 before
    try:
        settings = Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path / "data")})
        engine = make_engine(settings.database_url)
        try:
            with engine.begin() as conn:
                conn.execute(text("CREATE TABLE t (x INTEGER)"))
                conn.execute(text("INSERT INTO t VALUES (1)"))
            database = settings.data_dir / "alertstation.db"
            wal, shm = (database.with_name(database.name + end) for end in ("-wal", "-shm"))
            assert wal.exists() and shm.exists()  # the engine holds its connection open
            assert mode(settings.data_dir) == 0o700
            assert (mode(database), mode(wal), mode(shm)) == (0o600, 0o600, 0o600)
            for key in ("secret_key", "audit_ledger_key"):
                assert mode(settings.data_dir / key) == 0o600
        finally:
            engine.dispose()
    finally:
        os.umask(old_umask)


def test_an_existing_world_readable_station_is_tightened(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    data_dir.chmod(0o755)
    database = data_dir / "alertstation.db"
    engine = make_engine(f"sqlite:///{database}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    engine.dispose()
    wal = database.with_name(database.name + "-wal")
    wal.write_bytes(b"")  # left over from a crash
    for path in (database, wal):
        path.chmod(0o644)

    settings = Settings.from_env({"ALERTSTATION_DATA_DIR": str(data_dir)})
    assert mode(data_dir) == 0o700
    engine = make_engine(settings.database_url)
    try:
        assert (mode(database), mode(wal)) == (0o600, 0o600)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 0
    finally:
        engine.dispose()
