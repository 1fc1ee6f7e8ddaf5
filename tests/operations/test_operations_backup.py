"""Backup and restore from the command line: audit verify and row counts after a round trip."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import AuditLedger
from alertstation.audit.service import CHECKPOINT_FILE, append_checkpoint_line
from alertstation.audit.tables import audit_logs
from alertstation.auth.service import create_user
from alertstation.auth.tables import users
from alertstation.db.engine import begin_write, make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.settings import Settings
from tests.support import create_database, drop_database


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "alertstation", *args],
        env={**os.environ, "ALERTSTATION_LOG_FORMAT": "text", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


class Site:
    """One station: a database and a data directory, driven through the CLI."""

    def __init__(self, url: str, data_dir: Path) -> None:
        self.url = url
        self.data_dir = data_dir
        self.env = {"DATABASE_URL": url, "ALERTSTATION_DATA_DIR": str(data_dir)}
        self.engine: Engine = make_engine(url)

    @property
    def ledger(self) -> AuditLedger:
        return AuditLedger(Settings.from_env(self.env).audit_ledger_key)

    def record(self, count: int) -> None:
        ledger = self.ledger
        with begin_write(self.engine) as conn:
            for n in range(count):
                ledger.record(
                    conn, Actor.system(), "config.updated", target=f"s{n}", propagate=True
                )
        append_checkpoint_line(self.engine, ledger, self.data_dir / CHECKPOINT_FILE)

    def counts(self) -> tuple[int, int]:
        with self.engine.connect() as conn:
            return (
                conn.execute(select(func.count()).select_from(audit_logs)).scalar_one(),
                conn.execute(select(func.count()).select_from(users)).scalar_one(),
            )


@pytest.fixture
def sites(backend: str, tmp_path: Path) -> Iterator[tuple[Site, Site]]:
    urls = [create_database(backend, tmp_path), create_database(backend, tmp_path)]
    made = [Site(url, tmp_path / f"data-{n}") for n, url in enumerate(urls)]
    for site in made:
        site.data_dir.mkdir()
        upgrade_to_head(site.engine)
    yield made[0], made[1]
    for site in made:
        site.engine.dispose()
        drop_database(site.url)


def test_restore_on_the_same_station_verifies_and_sets_later_checkpoints_aside(
    sites: tuple[Site, Site], tmp_path: Path
) -> None:
    station, _ = sites
    with begin_write(station.engine) as conn:
        create_user(conn, username="ops", role="admin", password="correct horse battery")
    station.record(5)
    archive = tmp_path / "backups" / "station.tar.gz"
    made = run_cli(["backup", "--out", str(archive)], station.env)
    assert made.returncode == 0, made.stderr
    assert "password hashes" in made.stdout
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert not any(name.startswith("keys/") for name in names)
    assert manifest["row_counts"]["audit_logs"] == 5 and manifest["row_counts"]["users"] == 1

    # The station carries on after the backup: more rows, a newer checkpoint.
    station.record(3)
    assert station.counts() == (8, 1)

    restored = run_cli(["restore", str(archive)], station.env)
    assert restored.returncode == 0, restored.stderr
    assert "1 audit checkpoint(s) were logged after this backup" in restored.stdout
    assert "tamper" not in restored.stdout
    assert station.counts() == (5, 1)
    verified = run_cli(["audit", "verify"], station.env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("ok 5 rows") and "checkpoint of 5 rows" in verified.stdout
    aside = list(station.data_dir.glob(f"{CHECKPOINT_FILE}.after-backup-*"))
    assert len(aside) == 1 and "asckpt1.8." in aside[0].read_text()


def test_restore_on_a_new_machine_with_the_keys_verifies(
    sites: tuple[Site, Site], backend: str, tmp_path: Path
) -> None:
    source, _ = sites
    source.record(4)
    with_keys = tmp_path / "with-keys.tar.gz"
    made = run_cli(["backup", "--out", str(with_keys), "--include-keys"], source.env)
    assert made.returncode == 0, made.stderr
    with tarfile.open(with_keys) as tar:
        assert {"keys/secret_key", "keys/audit_ledger_key", "keys/backup_key"} <= set(
            tar.getnames()
        )

    # A bare machine: a database never migrated (for SQLite, not even created) and no keys.
    (tmp_path / "new").mkdir()
    target = Site(create_database(backend, tmp_path / "new"), tmp_path / "new" / "data")
    try:
        refused = run_cli(["restore", str(with_keys)], target.env)
        assert refused.returncode != 0 and "MAC does not match" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1  # one line, no traceback
        # The operator knows where the archive came from.
        restored = run_cli(["restore", "--trust-archive", str(with_keys)], target.env)
        assert restored.returncode == 0, restored.stderr
        assert "keys restored" in restored.stdout
        assert target.counts() == (4, 0)
        if backend == "sqlite":
            database = Path(str(target.engine.url.database))
            assert stat.S_IMODE(database.stat().st_mode) == 0o600
        verified = run_cli(["audit", "verify"], target.env)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "checkpoint of 4 rows" in verified.stdout
        key = (target.data_dir / "audit_ledger_key").read_text().strip()
        assert key == Settings.from_env(source.env).audit_ledger_key
    finally:
        target.engine.dispose()
        drop_database(target.url)


def test_a_broken_archive_is_refused_and_changes_nothing(
    sites: tuple[Site, Site], tmp_path: Path
) -> None:
    station, _ = sites
    station.record(2)
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive")
    refused = run_cli(["restore", str(junk)], station.env)
    assert refused.returncode != 0
    assert "not a readable backup archive" in refused.stderr
    assert station.counts() == (2, 0)
