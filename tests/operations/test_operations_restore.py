"""Restore validates a staged archive before anything changes and switches over as one step.

Each crafted archive is refused with one line and changes nothing; a restore killed at any step
leaves the old station or the new one, and `audit verify` passes on either.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import secrets
import shutil
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, func, make_url, select, text

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import AuditLedger
from alertstation.audit.service import (
    CHECKPOINT_FILE,
    append_checkpoint_line,
    newest_logged_checkpoint,
)
from alertstation.audit.tables import audit_logs
from alertstation.auth.service import create_user
from alertstation.auth.tables import users
from alertstation.db.engine import begin_write, make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.db.restore_plan import PLAN_FILE, finish_pending_restore
from alertstation.db.tables import worker_heartbeat
from alertstation.db.types import utcnow
from alertstation.operations.backup import BackupError, restore_archive, write_backup
from alertstation.operations.backup.archive import BACKUP_KEY_FILE
from alertstation.operations.backup.restore import STEPS
from alertstation.settings import Settings
from tests.support import create_database, drop_database


class Killed(BaseException):
    """Stands for a kill: no ``except Exception`` cleanup runs."""


class Site:
    """One station (database and data directory), driven in-process."""

    def __init__(self, url: str, data_dir: Path) -> None:
        self.url = url
        self.data_dir = data_dir
        self.env = {"DATABASE_URL": url, "ALERTSTATION_DATA_DIR": str(data_dir)}
        self.engine: Engine = make_engine(url)

    @property
    def settings(self) -> Settings:
        return Settings.from_env(self.env)

    def record(self, count: int) -> None:
        ledger = AuditLedger(self.settings.audit_ledger_key)
        with begin_write(self.engine) as conn:
            for n in range(count):
                ledger.record(conn, Actor.system(), "config.updated", target=f"s{n}")
        append_checkpoint_line(self.engine, ledger, self.data_dir / CHECKPOINT_FILE)

    def audit_rows(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(audit_logs)).scalar_one())

    def backup(self, out: Path, **options: Any) -> Path:
        write_backup(self.settings, self.engine, out, now=utcnow(), **options)
        return out

    def restore(self, archive: Path, **options: Any) -> Any:
        return restore_archive(self.settings, self.engine, archive, now=utcnow(), **options)

    def verify(self) -> str:
        """Finish a pending restore as every command does, then verify the ledger."""
        finish_pending_restore(self.data_dir, self.settings.database_url)
        settings = self.settings
        checkpoint = newest_logged_checkpoint(self.data_dir / CHECKPOINT_FILE)
        result = AuditLedger(settings.audit_ledger_key).verify_now(self.engine, checkpoint)
        assert result.ok, result.problem
        return result.summary()

    def files(self) -> dict[str, bytes]:
        return {
            path.name: path.read_bytes()
            for path in self.data_dir.iterdir()
            if path.is_file() and not path.name.startswith(".")
        }


@pytest.fixture(scope="module")
def migrated(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One migrated database per backend; each site starts as a copy of it (cheaper)."""
    url = create_database(backend, tmp_path_factory.mktemp("template"))
    engine = make_engine(url)
    upgrade_to_head(engine)
    engine.dispose()
    yield url
    drop_database(url)


def new_site(template: str, folder: Path) -> Site:
    folder.mkdir()
    parsed = make_url(template)
    if parsed.get_backend_name() == "sqlite":
        path = folder / "station.db"
        shutil.copyfile(str(parsed.database), path)
        url = f"sqlite:///{path}"
    else:
        name = f"alertstation_test_{secrets.token_hex(6)}"
        admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{parsed.database}"'))
        admin.dispose()
        url = parsed.set(database=name).render_as_string(hide_password=False)
    site = Site(url, folder / "data")
    site.data_dir.mkdir()
    return site


@pytest.fixture
def site(migrated: str, tmp_path: Path) -> Iterator[Site]:
    made = new_site(migrated, tmp_path / "site")
    yield made
    made.engine.dispose()
    drop_database(made.url)


@pytest.fixture
def stranger(migrated: str, tmp_path: Path) -> Iterator[Site]:
    made = new_site(migrated, tmp_path / "stranger")
    yield made
    made.engine.dispose()
    drop_database(made.url)


def craft(
    archive: Path,
    out: Path,
    key: bytes | None,
    *,
    members: dict[str, bytes | None] | None = None,
    manifest: Callable[[dict[str, Any]], None] | None = None,
    relist: bool = True,
) -> Path:
    """Rewrite ``archive``: replace/add/drop members, edit the manifest, re-sign with ``key``."""
    with tarfile.open(archive) as tar:
        data = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    body = json.loads(data.pop("manifest.json"))
    mac = data.pop("manifest.mac")
    for name, value in (members or {}).items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    if relist:
        body["members"] = {
            name: {"size": len(value), "sha256": hashlib.sha256(value).hexdigest()}
            for name, value in data.items()
        }
    if manifest is not None:
        manifest(body)
    manifest_bytes = json.dumps(body).encode()
    if key is not None:
        mac = hmac.new(key, manifest_bytes, hashlib.sha256).hexdigest().encode()
    with tarfile.open(out, "w:gz") as tar:
        for name, value in {"manifest.json": manifest_bytes, **data, "manifest.mac": mac}.items():
            info = tarfile.TarInfo(name)
            info.size = len(value)
            tar.addfile(info, io.BytesIO(value))
    return out


def _counts(edit: dict[str, Any]) -> None:
    edit["row_counts"]["audit_logs"] += 1


def _future(edit: dict[str, Any]) -> None:
    edit["revision"] = "29991231_from_the_future"


def test_crafted_archives_are_refused_with_one_line_and_change_nothing(
    site: Site, backend: str, tmp_path: Path
) -> None:
    station = site
    station.record(3)
    archive = station.backup(tmp_path / "keys.tar.gz", include_keys=True)
    key = (station.data_dir / BACKUP_KEY_FILE).read_bytes().strip()
    station.record(2)
    before = station.files()
    database = "database.sqlite3" if backend == "sqlite" else "database.pgdump"
    with tarfile.open(archive) as tar:
        copy = tar.extractfile(database).read()  # type: ignore[union-attr]
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("empty ledger key", {"members": {"keys/audit_ledger_key": b""}}, "is not a key"),
        ("1-byte key", {"members": {"keys/audit_ledger_key": b"k"}}, "is not a key"),
        ("5-byte key", {"members": {"keys/secret_key": b"k3y5\n"}}, "is not a key"),
        ("key with spaces", {"members": {"keys/backup_key": b"a " * 20}}, "is not a key"),
        ("oversized key", {"members": {"keys/secret_key": b"k" * 2000}}, "larger than"),
        ("some keys", {"members": {"keys/secret_key": None}}, "only some keys"),
        ("empty database", {"members": {database: b""}}, ""),
        ("counts differ", {"manifest": _counts}, "differ from the manifest"),
        ("unknown revision", {"manifest": _future}, "unknown to this release"),
        ("path outside", {"members": {"../station.env": b"X=1"}}, "unexpected member"),
        ("member not listed", {"members": {database: copy[:-1]}, "relist": False}, "differs"),
    ]
    if backend == "sqlite":
        broken = bytearray(copy)
        broken[len(broken) // 2 : len(broken) // 2 + 4096] = b"\xff" * 4096
        cases.append(("corrupt pages", {"members": {database: bytes(broken)}}, ""))
    for name, edit, expected in cases:
        crafted = craft(archive, tmp_path / f"{name}.tar.gz", key, **edit)
        with pytest.raises(BackupError) as refused:
            station.restore(crafted)
        message = str(refused.value)
        assert expected in message and "\n" not in message, (name, message)
        assert station.audit_rows() == 5, name
        assert station.files() == before, name
    if backend == "postgresql":  # a dump holding code the station never makes
        with begin_write(station.engine) as conn:
            conn.execute(text("CREATE FUNCTION planted() RETURNS int LANGUAGE sql AS 'SELECT 1'"))
        planted = station.backup(tmp_path / "planted.tar.gz", include_keys=False)
        with begin_write(station.engine) as conn:
            conn.execute(text("DROP FUNCTION planted()"))
        with pytest.raises(BackupError, match="an object the station never makes: 'FUNCTION"):
            station.restore(planted)
    assert station.verify().startswith("ok 5 rows")
    # No staging is left behind by a refusal.
    assert not [p for p in station.data_dir.iterdir() if p.name.startswith(".restore-")]


def test_a_failed_mac_is_refused_unless_trusted_and_a_keyless_stranger_always(
    site: Site, stranger: Site, tmp_path: Path
) -> None:
    station = site
    station.record(2)
    stranger.record(4)
    own = station.backup(tmp_path / "own.tar.gz", include_keys=False)
    altered = craft(own, tmp_path / "altered.tar.gz", None, manifest=lambda m: m.update(x=1))
    with pytest.raises(BackupError, match="MAC does not match this station's backup key"):
        station.restore(altered)

    def first_format(manifest: dict[str, Any]) -> None:
        manifest.update(format=1)
        for name in ("members", "station", "includes_secrets"):
            manifest.pop(name)

    legacy = craft(own, tmp_path / "legacy.tar.gz", None, manifest=first_format)
    with pytest.raises(BackupError, match="MAC does not match .* --trust-archive"):
        station.restore(legacy)  # an archive of an earlier release carries no MAC
    station.record(1)
    station.restore(legacy, trust_archive=True)
    assert station.audit_rows() == 2

    keyed = stranger.backup(tmp_path / "stranger-keys.tar.gz", include_keys=True)
    with pytest.raises(BackupError, match="MAC does not match"):
        station.restore(keyed)
    assert station.audit_rows() == 2

    keyless = stranger.backup(tmp_path / "stranger.tar.gz", include_keys=False)
    for trust in (False, True):
        with pytest.raises(BackupError, match="made by another station and holds no keys"):
            station.restore(keyless, trust_archive=trust)
    assert station.verify().startswith("ok 2 rows")

    station.restore(keyed, trust_archive=True)  # the operator knows where it came from
    assert station.audit_rows() == 4
    assert station.verify().startswith("ok 4 rows")
    assert (station.data_dir / BACKUP_KEY_FILE).read_bytes() == (
        stranger.data_dir / BACKUP_KEY_FILE
    ).read_bytes()


def test_a_kill_at_every_step_leaves_the_old_or_the_new_station(
    site: Site, stranger: Site, backend: str, tmp_path: Path
) -> None:
    # The hardest switch: another station's archive with its keys, so the database, all three
    # keys, the checkpoint log and the checkpoints set aside must all change together.
    station = site
    stranger.record(3)
    archive = stranger.backup(tmp_path / "archive.tar.gz", include_keys=True)
    key = (stranger.data_dir / BACKUP_KEY_FILE).read_bytes()
    (station.data_dir / BACKUP_KEY_FILE).write_bytes(key)  # given to the new machine first
    steps = [*STEPS[:2], "replayed", *STEPS[2:]] if backend == "postgresql" else list(STEPS)
    for step in steps:
        station.record(1)  # the old station differs from the archive each round
        old_rows = station.audit_rows()

        def kill(at: str, step: str = step) -> None:
            if at == step:
                raise Killed(at)

        with pytest.raises(Killed):
            station.restore(archive, fault=kill)
        # Verifies with the ledger key and checkpoint log on disk: the database and the files
        # must belong to the same station (the first switch brings in another ledger key).
        summary = station.verify()  # finishes (or drops) the interrupted switch first
        switched = step in ("switched", "moved")
        assert station.audit_rows() == (3 if switched else old_rows), step
        assert summary.startswith(f"ok {3 if switched else old_rows} rows"), step
        assert not (station.data_dir / PLAN_FILE).exists()
    report = station.restore(archive)
    assert "row counts match the backup" in report.lines()[0]
    assert station.verify().startswith("ok 3 rows")


def test_restore_refuses_while_the_worker_beats_unless_forced(site: Site, tmp_path: Path) -> None:
    station = site
    station.record(1)
    archive = station.backup(tmp_path / "a.tar.gz", include_keys=False)
    station.record(1)
    now = utcnow()
    with begin_write(station.engine) as conn:
        conn.execute(
            worker_heartbeat.insert().values(id=1, host="h", pid=1, leader_since=now, beat_at=now)
        )
    with pytest.raises(BackupError, match="the station is running .* pass --force"):
        station.restore(archive)
    assert station.audit_rows() == 2
    station.restore(archive, force=True)
    assert station.audit_rows() == 1


def _secrets(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        return {
            "hashes": dict(conn.execute(select(users.c.username, users.c.password_hash)).all()),
            "sessions": conn.execute(text("SELECT COUNT(*) FROM admin_sessions")).scalar_one(),
            "source": conn.execute(
                text("SELECT url, auth_password FROM audio_sources ORDER BY id")
            ).all(),
            "feed": json.loads(
                conn.execute(
                    text("SELECT data FROM operations_settings WHERE section = 'decoder_feed'")
                ).scalar_one()
            ),
        }


def test_an_operators_backup_leaves_secrets_out_and_a_restore_keeps_the_stations_own(
    site: Site, tmp_path: Path
) -> None:
    station = site
    now = utcnow()
    with begin_write(station.engine) as conn:
        boss = create_user(conn, username="boss", role="admin", password="correct horse battery")
        conn.execute(
            text(
                "INSERT INTO admin_sessions (token_hash, user_id, source_ip, created_at, "
                "last_seen_at) VALUES (:t, :u, '127.0.0.1', :n, :n)"
            ),
            {"t": "a" * 64, "u": boss.id, "n": now},
        )
        for n, url in enumerate(("http://radio.example/one", "http://radio.example/two"), 1):
            conn.execute(
                text(
                    "INSERT INTO audio_sources (id, name, kind, url, auth_password, created_at, "
                    "updated_at) VALUES (:id, :name, 'stream', :url, :pw, :n, :n)"
                ),
                {"id": n, "name": f"s{n}", "url": url, "pw": f"stream-secret-{n}", "n": now},
            )
        feed = {"monitor_url": "https://feed.example/", "monitor_token": "feed-token-1"}
        conn.execute(
            text(
                "INSERT INTO operations_settings (section, data, updated_at) "
                "VALUES ('decoder_feed', :d, :n)"
            ),
            {"d": json.dumps(feed), "n": now},
        )
    station.record(2)
    archive = station.backup(tmp_path / "ops.tar.gz", include_keys=False, include_secrets=False)
    raw = b""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            raw += tar.extractfile(member).read()  # type: ignore[union-attr]
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert manifest["includes_secrets"] is False
    assert "password hashes" in manifest["left_out"] and "session tokens" in manifest["left_out"]
    for secret in (_secrets(station.engine)["hashes"]["boss"], "stream-secret-1", "feed-token"):
        assert secret.encode() not in raw  # in no member, not even in a freed page
    assert b"a" * 64 not in raw

    # The station moves on: a new password, a source re-pointed, a new feed token.
    with begin_write(station.engine) as conn:
        conn.execute(users.update().values(password_hash="$argon2id$new-hash"))
        conn.execute(
            text(
                "UPDATE audio_sources SET url = 'http://elsewhere.example/x', "
                "auth_password = 'moved-secret' WHERE id = 2"
            )
        )
        conn.execute(
            text("UPDATE audio_sources SET auth_password = 'stream-secret-1b' WHERE id = 1")
        )
    before = _secrets(station.engine)
    report = station.restore(archive)
    assert any("station's own accounts and secrets were kept" in line for line in report.lines())
    after = _secrets(station.engine)
    assert after["hashes"] == before["hashes"] == {"boss": "$argon2id$new-hash"}
    assert after["sessions"] == 1
    # Source 1 still points where it did: its current secret stays. Source 2 is back at the
    # backup's URL, which the station's secret was never for: it stays empty.
    assert after["source"] == [
        ("http://radio.example/one", "stream-secret-1b"),
        ("http://radio.example/two", None),
    ]
    assert after["feed"]["monitor_token"] == "feed-token-1"
    assert station.verify().startswith("ok 2 rows")

    admin = station.backup(tmp_path / "admin.tar.gz", include_keys=False)
    with tarfile.open(admin) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert manifest["includes_secrets"] is True and manifest["left_out"] == []


def test_a_pending_switch_waits_while_the_database_cannot_be_read(tmp_path: Path) -> None:
    staging = tmp_path / ".restore-x"
    staging.mkdir()
    (staging / "audit_ledger_key").write_text("k" * 64)
    plan = {"staging": staging.name, "files": [["audit_ledger_key", "audit_ledger_key"]]}
    (tmp_path / PLAN_FILE).write_text(json.dumps({**plan, "audit_head": [1, 1, "h"]}))
    unreachable = "postgresql+psycopg://station@127.0.0.1:1/alertstation?connect_timeout=5"
    # Deciding now could drop the keys of a database that did switch: nothing is touched.
    assert finish_pending_restore(tmp_path, unreachable) == "pending"
    assert (tmp_path / PLAN_FILE).exists() and (staging / "audit_ledger_key").exists()
    # No database at all (SQLite file absent): the switch never happened; the plan goes.
    assert finish_pending_restore(tmp_path, f"sqlite:///{tmp_path / 'none.db'}") == "discarded"
    assert not (tmp_path / PLAN_FILE).exists() and not staging.exists()
    assert not (tmp_path / "audit_ledger_key").exists()
