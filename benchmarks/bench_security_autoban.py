"""Time the automatic-ban middleware on a request, and the flood counter against a deque window.

``security.autoban_request``: ``GET /api/broadcast/state`` with a browser User-Agent, from
10,000 rotating client addresses, through a small Falcon app (a context middleware that sets
the client address, then a resource that answers a fixed document) with the automatic-ban
middleware, against the same app without it. Every detector is on with thresholds above what
the run reaches, so this is the usual request: probe check, flood count, stream and API path
checks, and no database query. Before timing, both apps answer the same 200 document; after it,
no security event names a timed client, so none was refused.

``security.autoban_calls`` (no peer): the middleware's ``process_request`` and
``process_response`` on prepared requests, without the framework: its own cost per request.

``security.flood_counter``: 100,000 seeded requests (about 200 a second of simulated time from
2,000 addresses, 70% of them from 20 busy ones) counted over a 10-second
window by ``RateCounter.hit`` (the compiled counter: ten slices, bounded addresses, a lock per
call), against the naive
exact sliding window behind the same kind of call: a ``collections.deque`` of timestamps per
address, unbounded and without a lock. Before timing, every count
of ours is checked to lie between the exact count over the window and over the window less
one slice. The memory each holds afterwards is measured with tracemalloc and put in
``extra_info["bytes"]``.
"""

from __future__ import annotations

import random
import tracemalloc
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest
from sqlalchemy import Engine, func, select

from alertstation.app import build_station
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from alertstation.security.autoban.counter import RateCounter
from alertstation.security.autoban.detectors import AutoBanMiddleware
from alertstation.security.autoban.settings import save_settings
from alertstation.security.autoban.tables import security_events
from tests.support import Clock, make_settings

SEED = 20261123
ADDRESSES = 10_000
EVENTS = 100_000
WINDOW = 10.0
PROBER = "203.0.113.9"
AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0"


def _label(benchmark: Any, group: str, role: str, peer: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = peer


# --- the middleware on a request ------------------------------------------------------------


class ClientAddress:
    """Set ``req.context.client_ip`` from the peer, as the station's request context does."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.client_ip = req.remote_addr


class State:
    """A fixed answer, like the broadcast state the station's pages poll."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"active": False, "alerts": 0}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Path]]:
    """Return a migrated SQLite database whose detectors all run but never trip."""
    folder = tmp_path_factory.mktemp("bench-autoban")
    eng = make_engine(f"sqlite:///{folder / 'station.db'}")
    upgrade_to_head(eng)
    high = {"threshold": 100_000, "window_seconds": 10}
    with begin_write(eng) as conn:
        save_settings(
            conn,
            {"detectors": {name: high for name in ("flood", "api_abuse", "stream_abuse")}},
            Clock()(),
        )
    yield eng, folder
    eng.dispose()


@pytest.fixture(scope="module")
def clients(engine: tuple[Engine, Path]) -> dict[str, falcon.testing.TestClient]:
    """Return clients of the small app with and without the middleware."""
    eng, folder = engine
    settings = make_settings(folder, eng.url.render_as_string(hide_password=False))
    station = build_station(settings, eng)
    built = {}
    for name, extra in (("autoban", [AutoBanMiddleware(station)]), ("plain", [])):
        app = falcon.App(middleware=[ClientAddress(), *extra])
        app.add_route("/api/broadcast/state", State())
        built[name] = falcon.testing.TestClient(app)
    probe = built["autoban"].simulate_get("/.env", remote_addr=PROBER)
    assert probe.status_code == 404  # recorded (not banned at one probe): the middleware is live
    answers = [_requests(client)() for client in built.values()]
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].content == answers[1].content
    assert events_except_prober(eng) == 0
    return built


def events_except_prober(engine: Engine) -> int:
    """Return the security events (flood reports, bans) naming any address but the prober."""
    with engine.connect() as conn:
        query = select(func.count()).where(security_events.c.address != PROBER)
        return int(conn.execute(query).scalar_one())


def _requests(client: falcon.testing.TestClient) -> Any:
    addresses = [f"10.{n // 65536}.{n // 256 % 256}.{n % 256}" for n in range(ADDRESSES)]
    position = [0]
    headers = {"User-Agent": AGENT}

    def request() -> falcon.testing.Result:
        position[0] = (position[0] + 1) % ADDRESSES
        return client.simulate_get(
            "/api/broadcast/state", remote_addr=addresses[position[0]], headers=headers
        )

    return request


def test_autoban_request_ours(
    benchmark: Any, clients: dict[str, falcon.testing.TestClient], engine: tuple[Engine, Path]
) -> None:
    _label(benchmark, "security.autoban_request", "ours", "app without the middleware")
    result = benchmark(_requests(clients["autoban"]))
    assert result.status_code == 200
    assert events_except_prober(engine[0]) == 0, "a timed client was reported or banned"


def test_autoban_request_peer(
    benchmark: Any, clients: dict[str, falcon.testing.TestClient]
) -> None:
    _label(benchmark, "security.autoban_request", "peer", "app without the middleware")
    result = benchmark(_requests(clients["plain"]))
    assert result.status_code == 200


def test_autoban_middleware_alone(benchmark: Any, engine: tuple[Engine, Path]) -> None:
    """The middleware's two calls on one request, without the framework around them."""
    eng, folder = engine
    settings = make_settings(folder, eng.url.render_as_string(hide_password=False))
    middleware = AutoBanMiddleware(build_station(settings, eng))
    benchmark.group = "security.autoban_calls"
    requests = []
    for n in range(ADDRESSES):
        req = falcon.testing.create_req(path="/api/broadcast/state", headers={"User-Agent": AGENT})
        req.context.client_ip = f"10.{n // 65536}.{n // 256 % 256}.{n % 256}"
        requests.append(req)
    resp = falcon.Response()
    position = [0]

    def both_calls() -> None:
        position[0] = (position[0] + 1) % ADDRESSES
        req = requests[position[0]]
        middleware.process_request(req, resp)
        middleware.process_response(req, resp, None, True)

    benchmark(both_calls)
    assert len(middleware.watch().sizes()) == 3


# --- the flood counter ----------------------------------------------------------------------


def make_arrivals(seed: int = SEED) -> list[tuple[str, float]]:
    """Return seeded (address, time) arrivals; 20 busy addresses send 70% of them."""
    rng = random.Random(seed)
    busy = [f"198.51.100.{n}" for n in range(20)]
    quiet = [f"2001:db8::{n:x}" for n in range(1_980)]
    arrivals, now = [], 1_000.0
    for _ in range(EVENTS):
        now += rng.expovariate(200.0)  # about 200 requests a second overall
        pool = busy if rng.random() < 0.7 else quiet
        arrivals.append((rng.choice(pool), now))
    return arrivals


def count_ours(arrivals: list[tuple[str, float]]) -> tuple[list[int], RateCounter]:
    """Count every arrival with a RateCounter; return the counts and the counter."""
    counter = RateCounter(WINDOW)
    hit = counter.hit
    return [hit(address, now)[0] for address, now in arrivals], counter


class DequeWindow:
    """The naive exact sliding window: a deque of timestamps per address, no bound, no lock."""

    def __init__(self, window: float = WINDOW) -> None:
        self.window = window
        self.windows: dict[str, deque[float]] = {}

    def hit(self, address: str, now: float) -> int:
        """Count one request; return the requests from the address within the window."""
        times = self.windows.get(address)
        if times is None:
            times = self.windows[address] = deque()
        times.append(now)
        limit = now - self.window
        while times[0] <= limit:
            times.popleft()
        return len(times)


def count_deques(
    arrivals: list[tuple[str, float]], window: float = WINDOW
) -> tuple[list[int], DequeWindow]:
    """Count every arrival with a DequeWindow; return the counts and the window."""
    counter = DequeWindow(window)
    hit = counter.hit
    return [hit(address, now) for address, now in arrivals], counter


def _held_bytes(build: Any) -> int:
    tracemalloc.start()
    try:
        kept = build()
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return size


@pytest.fixture(scope="module")
def arrivals() -> list[tuple[str, float]]:
    """Return the seeded arrivals, after checking ours against the exact window."""
    data = make_arrivals()
    ours, _ = count_ours(data)
    exact, _ = count_deques(data)
    least, _ = count_deques(data, WINDOW - WINDOW / 10 - 1e-6)
    assert all(low <= mine <= high for mine, low, high in zip(ours, least, exact, strict=True))
    assert max(exact) > 50  # the busy addresses build up real windows
    return data


def test_flood_counter_ours(benchmark: Any, arrivals: list[tuple[str, float]]) -> None:
    _label(benchmark, "security.flood_counter", "ours", "deque per address")
    benchmark.extra_info["bytes"] = _held_bytes(lambda: count_ours(arrivals)[1])
    counts, _ = benchmark(count_ours, arrivals)
    assert len(counts) == EVENTS


def test_flood_counter_peer(benchmark: Any, arrivals: list[tuple[str, float]]) -> None:
    _label(benchmark, "security.flood_counter", "peer", "deque per address")
    benchmark.extra_info["bytes"] = _held_bytes(lambda: count_deques(arrivals)[1])
    counts, _ = benchmark(count_deques, arrivals)
    assert len(counts) == EVENTS
