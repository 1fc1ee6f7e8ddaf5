"""A log read in a process of its own: the same rows and counts as read here, and failures
that name themselves."""

from __future__ import annotations

import os
import pickle
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from alertstation.security.geoip.lookup import locator_for
from alertstation.traffic import child_reader, importer, reports
from alertstation.traffic.child_reader import ChildFailed, messages, picklable
from alertstation.traffic.period import Filters, parse_period
from alertstation.traffic.rows import ROW_COLUMNS
from alertstation.traffic.tables import web_request_logs
from tests.traffic import accesslog
from tests.traffic.child_readers import Counting, Endless, Exiting, Noisy, Raising
from tests.traffic.conftest import empty

pytestmark = pytest.mark.usefixtures("clean_log")
# The process's exit is seen within this (a loaded machine is slow to reap a child).
EXIT_SECONDS = 30.0


def stored_rows(engine: Engine) -> list[tuple[Any, ...]]:
    t = web_request_logs
    query = select(*(t.c[name] for name in (*ROW_COLUMNS, "import_key"))).order_by(t.c.import_key)
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query)]


def import_reading(
    engine: Engine, log: Path, now: datetime, threshold: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[tuple[Any, ...]], dict[str, Any], list[int]]:
    """Import ``log`` with files from ``threshold`` bytes read in a child; return the summary,
    the stored rows, the dashboard and the progress reported."""
    monkeypatch.setattr(importer, "PARALLEL_BYTES", threshold)
    monkeypatch.setattr(importer, "BATCH", 700)  # several batches, days across them
    done: list[int] = []
    run = importer.LogImport(engine, "combined", None, now=now)
    run.add_file(log, done.append)
    result = run.finish()
    with engine.connect() as conn:
        dashboard = reports.dashboard(conn, parse_period({"days": "31"}, now.date()), Filters())
    return result.as_text(), stored_rows(engine), dashboard, done


def test_a_log_read_in_a_child_process_stores_what_reading_it_here_stores(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    log = accesslog.write(tmp_path / "access.log", 5_000, now, odd=True)
    with log.open("a") as handle:
        handle.write(log.read_text().splitlines()[-1] + "\n")  # a second request, kept
        handle.write("not a request\n")
    here = import_reading(engine, log, now, 2**62, monkeypatch)
    empty(engine)
    child = import_reading(engine, log, now, 0, monkeypatch)
    assert child[0] == here[0] and f" of {log})" in child[0] and "left out by" in child[0]
    assert child[1] == here[1] and len(here[1]) > 4_000
    assert child[2] == here[2] and child[2]["summary"]["hits"] == len(here[1])
    size = log.stat().st_size
    for done in (here[3], child[3]):
        assert done == sorted(done) and len(done) >= 5_000 // 700 and done[-1] == size


def test_what_the_child_reader_cannot_take_is_left_to_this_process(tmp_path: Path) -> None:
    class Local:  # not importable by name in another process
        def file_messages(self, path: Path) -> Any:
            yield ("never",)

    assert picklable(Local()) is None
    assert picklable(Raising()) is not None


def test_a_locator_reaches_the_child_as_that_process_s_locator_of_the_same_folder(
    tmp_path: Path,
) -> None:
    locator = locator_for(tmp_path)
    assert pickle.loads(pickle.dumps(locator)) is locator


def test_a_reader_that_raises_fails_with_its_traceback_after_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "access.log"
    path.write_text("first line\nsecond\n")
    got = []
    with pytest.raises(ChildFailed, match="ValueError: a byte the reader cannot take") as failed:
        for message in messages(picklable(Raising()) or b"", path):
            got.append(message)
    assert got == [("line", "first line")] and str(path) in str(failed.value)


def test_a_reader_that_cannot_be_unpickled_fails_with_why(tmp_path: Path) -> None:
    path = tmp_path / "access.log"
    path.write_text("x\n")
    with pytest.raises(ChildFailed, match="UnpicklingError"):
        list(messages(b"not a pickle", path))


def test_a_child_that_ends_without_finishing_fails_with_its_exit_code(tmp_path: Path) -> None:
    path = tmp_path / "access.log"
    path.write_text("x\n")
    got = []
    with pytest.raises(ChildFailed, match=r"stopped without finishing \(exit code 3\)"):
        for message in messages(picklable(Exiting(3)) or b"", path):
            got.append(message)
    assert got in ([], [("started",)])  # a message made but not yet sent dies with the child


def test_the_child_reads_on_while_this_process_is_busy_with_a_message_before(
    tmp_path: Path,
) -> None:
    path = tmp_path / "access.log"
    path.write_text("x\n")
    made = path.with_suffix(".made")

    def made_so_far() -> int:
        return int(made.read_text()) if made.exists() else 0

    stream = messages(picklable(Counting()) or b"", path)
    try:
        assert next(stream)[:2] == ("big", 1)
        # Not reading on: the child goes on making messages (each far more than the pipe holds).
        deadline = time.monotonic() + EXIT_SECONDS
        while time.monotonic() < deadline and made_so_far() < child_reader.AHEAD:
            time.sleep(0.05)
        assert made_so_far() >= child_reader.AHEAD
        assert [next(stream)[1] for _ in range(3)] == [2, 3, 4]  # in order, none lost
    finally:
        stream.close()


def test_modules_in_the_working_folder_are_not_imported_by_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("pickle", "traceback", "subprocess"):  # as anyone could leave in /var/log/x
        (tmp_path / f"{name}.py").write_text("raise SystemExit(9)\n")
    path = tmp_path / "access.log"
    path.write_text("text\n")
    monkeypatch.chdir(tmp_path)
    assert list(messages(picklable(Noisy()) or b"", Path("access.log"))) == [("text", "text\n")]


def test_what_the_reader_prints_does_not_reach_its_messages(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "access.log"
    path.write_text("text of the file\n")
    assert list(messages(picklable(Noisy()) or b"", path)) == [("text", "text of the file\n")]
    assert "a stray line on stdout" in capfd.readouterr().err


def test_ctrl_c_is_left_to_the_parent_and_leaving_the_messages_early_stops_the_child(
    tmp_path: Path,
) -> None:
    path = tmp_path / "access.log"
    path.write_text("x\n")
    stream = messages(picklable(Endless()) or b"", path)
    assert [next(stream)[:2] for _ in range(3)] == [("tick", 1), ("tick", 2), ("tick", 3)]
    pid = int(path.with_suffix(".pid").read_text())
    os.kill(pid, signal.SIGINT)  # as Ctrl-C on the terminal reaches the child too
    for _ in range(200):  # far more than the pipe holds: the child went on after the signal
        assert next(stream)[0] == "tick"
    stream.close()  # as an error in the writer, or Ctrl-C in the parent, leaves the loop
    deadline = time.monotonic() + EXIT_SECONDS
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
