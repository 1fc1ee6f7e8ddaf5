"""`alertstation worker` runs the airing loop: it recovers an interrupted item, then airs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from alertstation.app import create_app
from alertstation.db import make_engine
from alertstation.eas.airing import queue as airing
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.archive import AiredMessage
from tests.eas.airing_support import queue_message
from tests.support import make_settings

HEADER = "ZCZC-EAS-RWT-051059+0030-3251200-WXYZ/FM -"


@pytest.mark.slow
def test_the_worker_recovers_then_airs_the_queue(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(data_dir),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "assets"),
    }
    env.pop("DATABASE_URL", None)
    python = [sys.executable, "-m", "alertstation"]
    subprocess.run([*python, "migrate"], env=env, check=True, capture_output=True, timeout=120)

    url = f"sqlite:///{data_dir / 'alertstation.db'}"
    engine = make_engine(url)
    station = create_app(make_settings(tmp_path, url), engine=engine).station
    silence = AiredMessage(HEADER, np.zeros(4000, dtype=np.int16), 8000)
    interrupted = queue_message(station, silence, aired_by="ops")
    assert airing.claim_next(engine, station.clock()) is not None  # a worker died mid-air
    waiting = queue_message(station, silence, aired_by="ops")

    def states() -> dict[int, tuple[str, str | None]]:
        with engine.connect() as conn:
            rows = conn.execute(select(eas_airing_queue)).all()
        return {row.id: (row.state, row.error) for row in rows}

    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            [*python, "worker"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while (
            states()[waiting["queue"]["id"]][0] != "archived_only" and time.monotonic() < deadline
        ):
            assert worker.poll() is None, log_path.read_text()
            time.sleep(0.1)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
        engine.dispose()
    final = states()
    assert final[waiting["queue"]["id"]] == ("archived_only", None), log_path.read_text()
    assert final[interrupted["queue"]["id"]] == ("interrupted", airing.INTERRUPTED_ERROR)
    assert worker.returncode == 0
