"""``alertstation audit verify`` and ``audit head`` as an operator runs them."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import AuditLedger
from alertstation.audit.service import CHECKPOINT_FILE, append_checkpoint_line
from alertstation.audit.tables import audit_logs
from alertstation.db import begin_write
from alertstation.db.engine import make_engine
from alertstation.db.migrate import upgrade_to_head


def station_dir(tmp_path: Path) -> Path:
    """Return an existing data directory (commands refuse one that does not exist)."""
    path = tmp_path / "data"
    path.mkdir(exist_ok=True)
    return path


def run_audit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "alertstation", "audit", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def cli_env(db: Engine, ledger_key: str, tmp_path: Path) -> dict[str, str]:
    return {
        "DATABASE_URL": db.url.render_as_string(hide_password=False),
        "ALERTSTATION_DATA_DIR": str(station_dir(tmp_path)),
        "AUDIT_LEDGER_KEY": ledger_key,
        "ALERTSTATION_LOG_FORMAT": "text",
    }


def fill(engine: Engine, ledger: AuditLedger, count: int) -> None:
    with begin_write(engine) as conn:
        for n in range(count):
            ledger.record(conn, Actor.system(), "config.updated", target=f"s{n}", propagate=True)


def test_verify_and_head_on_an_intact_ledger(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str], tmp_path: Path
) -> None:
    fill(db, ledger, 5)
    head = run_audit(["head"], cli_env)
    assert head.returncode == 0, head.stderr
    checkpoint = head.stdout.strip()
    assert checkpoint.startswith("asckpt1.5.5.") and "\n" not in checkpoint
    assert ledger.parse_checkpoint(checkpoint).last_id == 5

    plain = run_audit(["verify"], cli_env)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("ok 5 rows; no checkpoint log")
    with_string = run_audit(["verify", "--checkpoint", checkpoint], cli_env)
    assert with_string.returncode == 0 and with_string.stdout.startswith("ok 5 rows")

    log_file = tmp_path / CHECKPOINT_FILE
    log_file.write_text(f"2026-01-01T00:00:00Z {ledger.checkpoint_now(db)}\n")
    with_file = run_audit(["verify", "--checkpoint", str(log_file)], cli_env)
    assert with_file.returncode == 0 and with_file.stdout.startswith("ok 5 rows")


def test_truncation_is_found_only_with_a_checkpoint(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str]
) -> None:
    fill(db, ledger, 6)
    checkpoint = ledger.checkpoint_now(db)
    with db.begin() as conn:
        conn.execute(audit_logs.delete().where(audit_logs.c.id > 4))
    assert run_audit(["verify"], cli_env).returncode == 0
    cut = run_audit(["verify", "--checkpoint", checkpoint], cli_env)
    assert cut.returncode == 1
    assert "cut off" in cut.stdout and "4 of the 6 rows" in cut.stdout


def test_a_modified_row_fails_verification(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str]
) -> None:
    fill(db, ledger, 4)
    with db.begin() as conn:
        conn.execute(audit_logs.update().where(audit_logs.c.id == 2).values(target="hidden"))
    result = run_audit(["verify"], cli_env)
    assert result.returncode == 1
    assert "row 2 was modified" in result.stdout


def test_a_forged_checkpoint_is_a_one_line_error(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str]
) -> None:
    fill(db, ledger, 2)
    prefix, _, last_id, head, mac = ledger.checkpoint_now(db).split(".")
    forged = ".".join([prefix, "9", last_id, head, mac])
    result = run_audit(["verify", "--checkpoint", forged], cli_env)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "checkpoint" in result.stderr and "signature" in result.stderr
    missing = run_audit(["verify", "--checkpoint", "/no/such/file"], cli_env)
    assert missing.returncode == 2 and "neither a checkpoint" in missing.stderr


def test_audit_commands_refuse_an_unmigrated_database(
    empty_database: str, ledger_key: str, tmp_path: Path
) -> None:
    env = {
        "DATABASE_URL": empty_database,
        "ALERTSTATION_DATA_DIR": str(station_dir(tmp_path)),
        "AUDIT_LEDGER_KEY": ledger_key,
    }
    for command in (["verify"], ["head"]):
        result = run_audit(command, env)
        assert result.returncode == 1 and "alertstation migrate" in result.stderr


def test_checkpoint_log_gets_a_line_only_when_the_head_moves(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str], tmp_path: Path
) -> None:
    log_file = tmp_path / "data" / CHECKPOINT_FILE
    assert append_checkpoint_line(db, ledger, log_file)
    assert not append_checkpoint_line(db, ledger, log_file)
    fill(db, ledger, 3)
    assert append_checkpoint_line(db, ledger, log_file)
    assert not append_checkpoint_line(db, ledger, log_file)
    lines = log_file.read_text().splitlines()
    assert len(lines) == 2 and lines[-1].split()[1] == ledger.checkpoint_now(db)
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600  # readable by the station only
    with db.begin() as conn:
        conn.execute(audit_logs.delete().where(audit_logs.c.id == 3))
    result = run_audit(["verify", "--checkpoint", str(log_file)], cli_env)
    assert result.returncode == 1 and "cut off" in result.stdout


def test_deleting_every_row_is_found_against_the_workers_checkpoint_log(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str], tmp_path: Path
) -> None:
    fill(db, ledger, 5)
    log_file = tmp_path / "data" / CHECKPOINT_FILE  # where the worker's job writes it
    assert append_checkpoint_line(db, ledger, log_file)
    intact = run_audit(["verify"], cli_env)
    assert intact.returncode == 0, intact.stderr
    held = f"(checkpoint of 5 rows at id 5 from {log_file} holds)"
    assert intact.stdout.strip() == f"ok 5 rows {held}"
    with db.begin() as conn:
        conn.execute(audit_logs.delete())
    emptied = run_audit(["verify"], cli_env)
    assert emptied.returncode == 1
    assert emptied.stdout.startswith("FAILED: the newest rows were cut off: 0 of the 5 rows")
    # Opting out of the log says plainly what that costs.
    bare = run_audit(["verify", "--no-checkpoint-log"], cli_env)
    assert bare.returncode == 0 and "cannot detect deleted rows" in bare.stdout


def test_without_a_checkpoint_log_verify_says_deleted_rows_cannot_be_detected(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str]
) -> None:
    fill(db, ledger, 3)
    with db.begin() as conn:
        conn.execute(audit_logs.delete())
    result = run_audit(["verify"], cli_env)
    assert result.returncode == 0, result.stderr
    log_file = Path(cli_env["ALERTSTATION_DATA_DIR"]) / CHECKPOINT_FILE
    assert result.stdout.strip() == (
        f"ok 0 rows; no checkpoint log ({log_file}): cannot detect deleted rows"
    )


def test_a_forged_line_in_the_checkpoint_log_fails_verification(
    db: Engine, ledger: AuditLedger, cli_env: dict[str, str], tmp_path: Path
) -> None:
    fill(db, ledger, 2)
    prefix, _, last_id, head, mac = ledger.checkpoint_now(db).split(".")
    log_file = tmp_path / "data" / CHECKPOINT_FILE
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text(f"2026-01-01T00:00:00Z {'.'.join([prefix, '1', last_id, head, mac])}\n")
    result = run_audit(["verify"], cli_env)
    assert result.returncode == 1
    assert result.stdout.startswith(f"FAILED: the newest line of the checkpoint log {log_file}")
    assert "signature" in result.stdout


def test_a_dropped_audit_table_is_a_failed_line_not_a_traceback(
    empty_database: str, ledger_key: str, tmp_path: Path
) -> None:
    engine = make_engine(empty_database)
    try:
        upgrade_to_head(engine)
        with engine.begin() as conn:
            conn.execute(text("DROP TABLE audit_logs"))
    finally:
        engine.dispose()
    env = {
        "DATABASE_URL": empty_database,
        "ALERTSTATION_DATA_DIR": str(station_dir(tmp_path)),
        "AUDIT_LEDGER_KEY": ledger_key,
        "ALERTSTATION_LOG_FORMAT": "text",
    }
    for command in (["verify"], ["head"]):
        result = run_audit(command, env)
        assert result.returncode == 1, result.stderr
        assert result.stdout.startswith("FAILED: audit_logs table is missing")
        assert "Traceback" not in result.stderr


def test_a_database_that_cannot_be_read_is_a_failed_line(ledger_key: str, tmp_path: Path) -> None:
    garbage = tmp_path / "not-a-database.db"
    garbage.write_bytes(b"this is not an SQLite file" * 200)
    env = {
        "DATABASE_URL": f"sqlite:///{garbage}",
        "ALERTSTATION_DATA_DIR": str(station_dir(tmp_path)),
        "AUDIT_LEDGER_KEY": ledger_key,
        "ALERTSTATION_LOG_FORMAT": "text",
    }
    result = run_audit(["verify"], env)
    assert result.returncode == 1
    assert result.stdout.startswith("FAILED: the database could not be opened: ")
    assert "not a database" in result.stdout
    assert "Traceback" not in result.stderr
