"""Start an idle one-box station as an operator does, for the ``footprint`` readings.

``idle_station`` migrates a fresh SQLite data directory, adds one stream source (a private
icecast2 mount fed by ffmpeg, from ``tests.icecast``), starts ``alertstation run --workers 1``,
waits until the port answers and the source is running, and yields the ``run`` process.
Run as a script it prints the PSS of the whole tree with the archive off and on.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.footprint import MIB, describe, total_pss, tree_memory
from tests.eas.test_multimon import require_tool
from tests.icecast import IcecastServer, icecast_server, stop
from tests.processes import PYTHON, Served, station_env, station_process, wait_until

MOUNT = "/probe.mp3"


@contextmanager
def fed_icecast() -> Iterator[IcecastServer]:
    """Run a private icecast2 with one mount fed by ffmpeg (a looping tone)."""
    ffmpeg = require_tool("ffmpeg")
    with icecast_server("alertstation-footprint-") as server:
        source = subprocess.Popen(
            [ffmpeg, "-hide_banner", "-loglevel", "error", "-re"]
            + ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050"]
            + ["-c:a", "libmp3lame", "-b:a", "64k", "-content_type", "audio/mpeg", "-f", "mp3"]
            + [f"icecast://source:{server.password}@127.0.0.1:{server.port}{MOUNT}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield server
        finally:
            stop(source)


def _prepare(root: Path, url: str, archive: bool) -> dict[str, str]:
    env = station_env(root)
    subprocess.run([*PYTHON, "migrate"], env=env, check=True, capture_output=True, timeout=300)
    script = (
        "import sys\n"
        "from alertstation.commands import open_database\n"
        "from alertstation.db.engine import begin_write\n"
        "from alertstation.audio.sources import SourceConfig, create_source\n"
        "from alertstation.audio.settings import save_audio_settings\n"
        "from datetime import UTC, datetime\n"
        "settings, engine = open_database()\n"
        "now = datetime.now(UTC)\n"
        "with begin_write(engine) as conn:\n"
        "    create_source(conn, SourceConfig(name='Probe', kind='stream', url=sys.argv[1]), now)\n"
        "    save_audio_settings(conn, {'archive_enabled': sys.argv[2] == '1'}, by=None, now=now)\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, url, "1" if archive else "0"],
        env=env,
        check=True,
        timeout=300,
    )
    return env


def _source_running(root: Path) -> bool:
    import sqlite3

    db = sqlite3.connect(root / "data" / "alertstation.db")
    try:
        row = db.execute("SELECT state FROM audio_sources").fetchone()
    finally:
        db.close()
    return row is not None and row[0] == "running"


@contextmanager
def idle_station(url: str, *, archive: bool, settle: float = 15.0) -> Iterator[Served]:
    """Run an idle station with one stream source; yield it once the source runs."""
    with tempfile.TemporaryDirectory(prefix="alertstation-footprint-") as folder:
        root = Path(folder)
        env = _prepare(root, url, archive)
        with station_process(root, env=env, migrate=False) as served:
            served.wait_healthy()
            wait_until(lambda: _source_running(root), "the source did not run", served.log, 120)
            time.sleep(settle)  # let start-up garbage be collected and the decoder settle
            yield served


def main() -> int:
    with fed_icecast() as server:
        for archive in (False, True):
            with idle_station(server.url(MOUNT), archive=archive) as served:
                rows = tree_memory(served.process.pid)
                print(f"archive {'on' if archive else 'off'}:")
                print(describe(rows))
                print(f"TOTAL {total_pss(rows) / MIB:.1f} MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
