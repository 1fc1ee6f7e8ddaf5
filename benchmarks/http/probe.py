"""Measure one server's cost per request on the HTTP benchmark's seeded database, quickly.

``python -m benchmarks.http.probe inprocess [station|falcon]`` calls the WSGI app directly with
the environ gunicorn would build for ``GET /api/broadcast/state`` behind the proxy, and prints
the process CPU time per request over rounds (min, first quartile, median). Eight client
addresses take turns, so the flood detector (threshold at its maximum) never trips.

``python -m benchmarks.http.probe served [station|falcon|flask]`` serves the app under gunicorn
as the benchmark does, loads it with one 5 s wrk round, and prints req/s, the workers' CPU time
per request, their system time per request, their context switches per request (read from
/proc for every thread of every worker) and each worker's share of that CPU time (a worker
near 0 % got none of wrk's connections: the benchmark runs such a round again).

Both are for comparing two versions of the request path on one machine, alternately; the
benchmark itself (``bench_http_end_to_end.py``) gives the figures ``make bench`` reports.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import falcon.testing

from alertstation.server import StationServer
from benchmarks.http import cpu, wrk
from benchmarks.http.answers import BROADCAST
from benchmarks.http.peer_server import peer_application
from benchmarks.http.seed import CLIENT, seed_station, utc_now
from benchmarks.http.servers import STATION, serving

CLIENTS = [f"192.0.2.{200 + n}" for n in range(8)]  # TEST-NET-1: never among the bans
ROUNDS = int(os.environ.get("PROBE_ROUNDS", "21"))
REQUESTS = int(os.environ.get("PROBE_REQUESTS", "4000"))


def wsgi_app(name: str, data_dir: Path, database_url: str) -> Any:
    """Return the app ``name`` as its gunicorn worker loads it (the same ``load``)."""
    os.environ["ALERTSTATION_DATA_DIR"] = str(data_dir)
    os.environ["ALERTSTATION_ASSETS_DIR"] = str(data_dir / "assets")
    os.environ["BENCH_DATABASE_URL"] = database_url
    server = StationServer if name == STATION else peer_application(name)
    return server({}).load()


def in_process(name: str, data_dir: Path, database_url: str) -> str:
    """Return the CPU time per request of ``name`` called directly, over ``ROUNDS`` rounds."""
    app = wsgi_app(name, data_dir, database_url)
    environs = [
        falcon.testing.create_environ(
            path=BROADCAST, remote_addr="127.0.0.1", headers={"X-Forwarded-For": client}
        )
        for client in CLIENTS
    ]
    turn = itertools.cycle(environs)
    statuses: list[str] = []

    def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        statuses.append(status)

    def one() -> None:
        body = app(dict(next(turn)), start)
        b"".join(body)
        if hasattr(body, "close"):
            body.close()

    for _ in range(2_000):
        one()
    times = []
    for _ in range(ROUNDS):
        started = time.process_time()
        for _ in range(REQUESTS):
            one()
        times.append((time.process_time() - started) / REQUESTS * 1e6)
    if not all(status.startswith("200") for status in statuses):
        raise AssertionError(f"{name} answered {sorted(set(statuses))}")
    times.sort()
    return (
        f"{name} in process, µs of CPU a request: min {times[0]:.1f}, "
        f"q1 {times[len(times) // 4]:.1f}, median {times[len(times) // 2]:.1f}"
    )


def served(name: str, data_dir: Path, database_url: str) -> str:
    """Serve ``name`` under gunicorn, load it for 5 s with wrk and return its figures."""
    headers = {"X-Forwarded-For": CLIENT}
    with serving(name, data_dir, database_url, BROADCAST) as running:
        url = running.base_url + BROADCAST
        wrk.warm_up(url, headers)
        workers = cpu.children(running.pid)
        before, by_worker = cpu.thread_figures(workers), cpu.seconds_by_process(workers)
        result = wrk.run(url, "5s", headers)
        after, shares = (
            cpu.thread_figures(workers),
            cpu.worker_shares(by_worker, cpu.seconds_by_process(workers)),
        )
    count = result.requests
    used, system, switches = (b - a for a, b in zip(before, after, strict=True))
    return (
        f"{name} served: {count / 5:.0f} req/s, workers' CPU {used / count * 1e6:.1f} µs a "
        f"request (system {system / count * 1e6:.1f} µs), "
        f"{switches / count:.2f} context switches a request, "
        f"workers' shares {'/'.join(f'{share:.0%}' for share in shares)}"
    )


def main(argv: list[str]) -> None:
    mode, name = argv if len(argv) == 2 else (argv[0], STATION)
    data_dir = Path(tempfile.mkdtemp(prefix="http-probe-"))
    (data_dir / "assets").mkdir()
    seed = seed_station(data_dir, utc_now())
    measure = {"inprocess": in_process, "served": served}[mode]
    print(measure(name, data_dir, seed.database_url))


if __name__ == "__main__":
    main(sys.argv[1:])
