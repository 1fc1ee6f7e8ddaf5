"""Upload staging folders left by a killed web worker are swept; fresh ones are kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

from alertstation.db.restore_plan import PLAN_FILE
from alertstation.security.geoip.lookup import geoip_dir
from alertstation.worker import upload_sweep
from alertstation.worker.jobs import JOBS
from tests.support import StationHarness, make_settings


def _touch(path: Path, at: float) -> None:
    os.utime(path, (at, at), follow_symlinks=False)


def _staging(folder: Path, name: str, at: float) -> Path:
    staging = folder / name
    staging.mkdir(parents=True)
    (staging / "upload.bin").write_bytes(b"half an upload")
    _touch(staging / "upload.bin", at)
    _touch(staging, at)
    return staging


def test_the_job_sweeps_old_staging_folders_on_the_station_clock(
    station: StationHarness,
) -> None:
    assert "stale-upload-sweep" in {job.name for job in JOBS}
    settings = station.app.station.settings
    now = station.clock().timestamp()
    old_zone = _staging(settings.assets_dir, ".upload-old", now)
    old_geoip = _staging(geoip_dir(settings.data_dir), ".upload-old", now)
    station.clock.advance(minutes=30)
    fresh = _staging(settings.assets_dir, ".upload-fresh", station.clock().timestamp())
    kept = settings.assets_dir / "z_18mr25.dbf"  # an installed file, however old, stays
    kept.write_bytes(b"dbf")
    _touch(kept, now - 86400)
    upload_sweep.sweep_job(station.app.station)
    assert old_zone.exists() and old_geoip.exists()  # 30 minutes old: maybe still uploading
    station.clock.advance(minutes=31)
    upload_sweep.sweep_job(station.app.station)
    assert not old_zone.exists() and not old_geoip.exists()
    assert fresh.exists() and kept.exists()


def test_a_folder_whose_file_is_still_written_is_kept(tmp_path: Path) -> None:
    now = 1_800_000_000.0
    staging = _staging(tmp_path, ".upload-busy", now - 7200)
    _touch(staging / "upload.bin", now - 10)  # bytes still arriving
    stray = tmp_path / ".upload-file"
    stray.write_bytes(b"x")
    _touch(stray, now - 7200)
    removed = upload_sweep.sweep_stale_uploads([tmp_path, tmp_path / "missing"], now)
    assert removed == [stray]
    assert staging.exists() and not stray.exists()


def test_backup_download_and_restore_leftovers_are_swept_but_a_pending_restore_is_kept(
    tmp_path: Path,
) -> None:
    now = 1_800_000_000.0
    settings = make_settings(tmp_path, f"sqlite:///{tmp_path / 'db' / 'station.db'}")
    data = settings.data_dir
    (tmp_path / "db").mkdir()
    old = [
        _staging(data, ".backup-abc", now - 7200),
        _staging(data, ".download-abc", now - 7200),
        _staging(data, ".restore-old", now - 7200),
    ]
    for name in (".archive.tar.gz.partial", f".{PLAN_FILE}.partial"):
        (data / name).write_bytes(b"half")
        _touch(data / name, now - 7200)
        old.append(data / name)
    staged_db = tmp_path / "db" / ".restore-y.sqlite3"
    staged_db.write_bytes(b"copy")
    _touch(staged_db, now - 7200)
    old.append(staged_db)
    pending = _staging(data, ".restore-pending", now - 7200)
    pending_db = tmp_path / "db" / ".restore-p.sqlite3"
    pending_db.write_bytes(b"copy")
    _touch(pending_db, now - 7200)
    plan = {"staging": pending.name, "files": [], "leftovers": [str(pending_db)]}
    (data / PLAN_FILE).write_text(json.dumps(plan))
    kept = data / "secret_key"
    kept.write_text("k" * 64)
    _touch(kept, now - 86400)

    removed = upload_sweep.sweep_stale_uploads(upload_sweep.leftover_folders(settings), now)
    assert sorted(removed) == sorted(old)
    assert pending.exists() and pending_db.exists() and kept.exists()
    assert (data / PLAN_FILE).exists()
