"""Public reads during a sign-in flood against their quiet rate, on a really served station.

The station runs as it does in production: ``alertstation.server.serve`` (gunicorn, two gthread
workers of four threads) in a child process, on a migrated SQLite database, on loopback. The
reader fetches ``GET /api/broadcast/state`` (public, polled by every page) over fresh loopback
connections, 40 per round.

``security.reads_during_sign_in_flood`` (ours): the same reads while four threads post correct
sign-ins to ``/auth/login`` back to back, each from a new address (forwarded by the trusted
loopback proxy), so neither the per-address limit nor the brute-force detector stops them and
every attempt costs a full argon2id verification (several cores for tens of milliseconds): the
contention of finding 5. The session cap ends the oldest sessions as they pile up. What keeps
the reads fast is the verifier: one password check at a time per process, on a thread of
lowered CPU priority. The peer is the same reads with no flood, in the same run. The ratio (peer
time / our time) is the reads' rate under the flood as a share of their quiet rate; the test
asserts it is at least ``MIN_RATIO`` (0.25) from its own timings: both sides measured in the
same test, each rate taken over all its rounds (reads ÷ their total time), each side after one
untimed round (under the flood, that round meets the flood's threads making their first
sign-ins). Rounds under the flood are bimodal on two cores (a round that meets a password check
runs about twice as long as one that does not), so a median of a few rounds lands on either
mode, where the rate over all of them does not.
Under ``make test`` (``--benchmark-disable``) the flood and the reads still run and every answer
is checked, but the ratio is asserted only by ``make bench``: a test suite sharing a loaded
machine must not fail on a rate.
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from alertstation.auth.service import create_user
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head

GROUP = "security.reads_during_sign_in_flood"
PEER = "the same reads, no flood"
READS_PER_ROUND = 40
ROUNDS = 8
FLOOD_THREADS = 4
PASSWORD = "correct horse battery staple"
# Finding 5 was reads at about 0.001 of their quiet rate (2 ms to 1.8 s). With the verifier the
# reads keep 0.39-0.77 of it on a 2-core machine: each check is argon2id, memory-hard (64 MiB,
# four lanes), and the caches and memory bandwidth it takes beside the reads are not something
# a lower CPU priority gives back. 0.25 holds the fix with a wide margin and does not fail on
# how busy the machine's memory is.
MIN_RATIO = 0.25
START_DEADLINE = 90.0  # a loaded 2-core machine


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = GROUP
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """Serve a station with one operator account; yield its port."""
    folder = tmp_path_factory.mktemp("bench-signin-flood")
    url = f"sqlite:///{folder / 'station.db'}"
    engine = make_engine(url)
    upgrade_to_head(engine)
    with begin_write(engine) as conn:
        create_user(conn, username="ops", role="operator", password=PASSWORD)
    engine.dispose()
    data_dir = folder / "data"
    data_dir.mkdir()
    port = _free_port()
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(data_dir),
        "ALERTSTATION_ASSETS_DIR": str(folder / "assets"),
        "DATABASE_URL": url,
        "SECRET_KEY": secrets.token_urlsafe(48),
        "AUDIT_LEDGER_KEY": secrets.token_urlsafe(48),
        "ALERTSTATION_TRUSTED_PROXIES": "127.0.0.1/32",
        "ALERTSTATION_LOG_LEVEL": "WARNING",
    }
    code = (
        "import sys; from pathlib import Path; from alertstation.server import serve; "
        "serve(sys.argv[1], 2, 4, Path(sys.argv[2]))"
    )
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-c", code, f"127.0.0.1:{port}", str(data_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + START_DEADLINE
        while True:
            try:
                if _request(port, "GET", "/api/broadcast/state")[0] == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                problem = (folder / "server.log").read_text()
                raise RuntimeError(f"the station did not start: {problem}")
            time.sleep(0.2)
        yield port
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _reader(port: int) -> Callable[[], int]:
    def read_round() -> int:
        for _ in range(READS_PER_ROUND):
            status, body = _request(port, "GET", "/api/broadcast/state")
            assert status == 200, body[:200]
        return READS_PER_ROUND

    return read_round


class Flood:
    """Threads posting correct sign-ins back to back, each from a new forwarded address."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._stop = threading.Event()
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self.statuses: Counter[int] = Counter()
        self._threads = [
            threading.Thread(target=self._run, daemon=True) for _ in range(FLOOD_THREADS)
        ]

    def _run(self) -> None:
        body = json.dumps({"username": "ops", "password": PASSWORD}).encode()
        while not self._stop.is_set():
            with self._lock:
                n = next(self._numbers)
            address = f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"
            headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
            try:
                status, _ = _request(self._port, "POST", "/auth/login", body, headers)
            except OSError:
                status = 0
            with self._lock:
                self.statuses[status] += 1

    def __enter__(self) -> Flood:
        for thread in self._threads:
            thread.start()
        deadline = time.monotonic() + START_DEADLINE
        while not self.statuses[200] and time.monotonic() < deadline:
            time.sleep(0.05)  # under way: the first sign-ins went through
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)


def _timed(read_round: Callable[[], int], rounds: int) -> list[float]:
    """Time ``rounds`` read rounds after one untimed round (the flood's threads are still
    making their first sign-ins when it starts, and a quiet round may follow other work)."""
    read_round()
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        read_round()
        times.append(time.perf_counter() - started)
    return times


def test_public_reads_quiet(benchmark: Any, station: int) -> None:
    _label(benchmark, "peer")
    assert benchmark.pedantic(_reader(station), rounds=ROUNDS, iterations=1) == READS_PER_ROUND


def test_public_reads_during_sign_in_flood(benchmark: Any, station: int) -> None:
    _label(benchmark, "ours")
    read_round = _reader(station)
    quiet = _timed(read_round, ROUNDS)
    with Flood(station) as flood:
        done_before = flood.statuses[200]
        busy = _timed(read_round, ROUNDS)
        signed_in_while_reading = flood.statuses[200] - done_before
        assert benchmark.pedantic(read_round, rounds=ROUNDS, iterations=1) == READS_PER_ROUND
    ratio = sum(quiet) / sum(busy)  # the rates over all rounds (same reads on both sides)
    benchmark.extra_info["sign_ins_while_reading"] = signed_in_while_reading
    benchmark.extra_info["statuses"] = dict(flood.statuses)
    benchmark.extra_info["rate_ratio"] = round(ratio, 3)
    assert flood.statuses[200] >= 1, "the flood really verified passwords"
    # Beyond the bounded password checks a sign-in is refused at once: 429 with Retry-After.
    assert set(flood.statuses) <= {200, 429}, f"a flooded sign-in failed: {flood.statuses}"
    if benchmark.disabled:
        return
    assert ratio >= MIN_RATIO, (
        f"reads under the flood ran at {ratio:.2f} of their quiet rate "
        f"(quiet {quiet}, flood {busy}, sign-ins {dict(flood.statuses)})"
    )
