"""Concurrent appends from threads and from separate processes never fork the chain."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from sqlalchemy import Engine, func, select

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import AuditLedger
from alertstation.audit.tables import audit_logs
from alertstation.db import begin_write

THREADS = 6
PER_THREAD = 25
PROCESSES = 3
PER_PROCESS = 60

# Each child process appends with its own engine, alternating the two ways of recording.
CHILD = """
import sys
import time
from pathlib import Path

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import AuditLedger
from alertstation.db import begin_write, make_engine

url, key, name, count, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
engine = make_engine(url)
ledger = AuditLedger(key)
actor = Actor.system(name)
with engine.connect():
    pass
deadline = time.monotonic() + 60
while not Path(go).exists() and time.monotonic() < deadline:
    time.sleep(0.005)
for i in range(count):
    if i % 2:
        ledger.record_now(engine, actor, "login success", target=str(i), propagate=True)
    else:
        with begin_write(engine) as conn:
            ledger.record(conn, actor, "config.updated", target=str(i), propagate=True)
engine.dispose()
"""


def assert_valid_chain(engine: Engine, ledger: AuditLedger, expected: int) -> None:
    result = ledger.verify_now(engine)
    assert result.summary() == f"ok {expected} rows", result
    with engine.connect() as conn:
        count, last = conn.execute(select(func.count(), func.max(audit_logs.c.id))).one()
    assert (count, last) == (expected, expected)


def test_threads_appending_at_once_leave_one_chain(db: Engine, ledger: AuditLedger) -> None:
    start = threading.Barrier(THREADS)
    failures: list[BaseException] = []

    def append(worker: int) -> None:
        actor = Actor.system(f"thread-{worker}")
        try:
            start.wait()
            for i in range(PER_THREAD):
                if (i + worker) % 2:
                    ledger.record_now(db, actor, "login failure", target=str(i), propagate=True)
                else:
                    with begin_write(db) as conn:
                        ledger.record(conn, actor, "config.updated", propagate=True)
        except BaseException as ex:  # reported below, in the test's own thread
            failures.append(ex)

    threads = [threading.Thread(target=append, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert_valid_chain(db, ledger, THREADS * PER_THREAD)


def test_processes_appending_at_once_leave_one_chain(
    db: Engine, ledger: AuditLedger, ledger_key: str, tmp_path: Path
) -> None:
    url = db.url.render_as_string(hide_password=False)
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, url, ledger_key, f"proc-{n}", str(PER_PROCESS), str(go)],
            env={**os.environ, "PYTHONWARNINGS": "error"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    time.sleep(1.0)  # let every child connect, so they all start appending at the same moment
    go.touch()
    for child in children:
        out, err = child.communicate(timeout=180)
        assert child.returncode == 0, err
    assert_valid_chain(db, ledger, PROCESSES * PER_PROCESS)
    with db.connect() as conn:
        names = set(conn.execute(select(audit_logs.c.username).distinct()).scalars())
    assert names == {f"proc-{n}" for n in range(PROCESSES)}
