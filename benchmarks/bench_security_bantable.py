"""Time the ban table against pytricia, the batch call against a loop, and the gate's cost.

``security.bantable_lookup`` / ``security.bantable_contains``: 10,000 seeded queries, one call
each, against a :class:`BanTable` of 100,000 mixed IPv4/IPv6 addresses and prefixes, and against
pytricia (a C Patricia trie) holding the same entries: one ``PyTricia(32)`` for IPv4 and one
``PyTricia(128)`` for IPv6, the query sent to one by a ``":" in address`` test. (In a single
128-bit pytricia an IPv6 address matches an IPv4 prefix that equals its leading bits, so
``4ae5::1`` is "in" ``74.224.0.0/13``; two tries is how pytricia serves both families.)

``security.contains_many``: the same queries in one ``contains_many`` call (each str parsed in
place into a key buffer, then the keys searched, all compiled) against a Python loop of
``contains``, which runs the same compiled parser and search one address at a time; both
answers are compared before timing.

``security.gate_request``: ``GET /login`` (a public page that needs no database) from a clean
address through the whole app, with the gate (and the 100,000-entry table) against the same app
whose gate is a pass-through. Both apps keep the automatic-ban middleware, every detector on; the
flood detector's threshold is its maximum (100,000 requests within its 10 s window), far above
what a run sends, so it counts every timed request but never reports or bans the benchmark's own
client. The default (300) banned it while timing, and the benchmark measured a 403.

Outputs are compared before timing: both apps answer the clean address 200 with the same page.
After timing, no security event names the clean address and it is not banned, so no timed request
was refused. IPv6 entries and queries stay inside 2000::/3.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import numpy as np
import pytest
from sqlalchemy import Connection, Engine, func, select

import alertstation.app as app_module
from alertstation.app import create_app
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.db.migrate import upgrade_to_head
from alertstation.security.autoban.settings import FLOOD, MAX_THRESHOLD, save_settings
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.tables import BANS_GENERATION, ip_filters
from alertstation.security.bantable import BanTable
from tests.support import Clock, make_settings

pytricia = pytest.importorskip("pytricia")

SEED = 20261122
ENTRIES = 100_000
QUERIES = 10_000
CLEAN = "192.0.2.200"  # TEST-NET-1: never among the generated entries
PROBER = "192.0.2.201"  # sends one probe before timing, to show the automatic bans are live


def _label(benchmark: Any, group: str, role: str, peer: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = peer


def make_entries(rng: random.Random, count: int) -> list[str]:
    """Return distinct entries: 60% IPv4, 40% IPv6 (in 2000::/3), half single addresses."""
    seen: set[ipaddress.IPv4Network | ipaddress.IPv6Network] = set()
    while len(seen) < count:
        if rng.random() < 0.6:
            number = rng.getrandbits(32)
            if number >> 24 == 192:
                continue  # keep 192.0.0.0/8 (and so CLEAN) out of the table
            length = 32 if rng.random() < 0.5 else rng.randint(12, 31)
            network: Any = ipaddress.ip_network(
                f"{ipaddress.IPv4Address(number)}/{length}", strict=False
            )
        else:
            number = (1 << 125) | rng.getrandbits(125)  # 2000::/3
            length = 128 if rng.random() < 0.5 else rng.randint(16, 64)
            network = ipaddress.ip_network(
                f"{ipaddress.IPv6Address(number)}/{length}", strict=False
            )
        seen.add(network)
    values = [str(n.network_address) if n.prefixlen == n.max_prefixlen else str(n) for n in seen]
    rng.shuffle(values)
    return values


def make_queries(rng: random.Random, entries: list[str], count: int) -> list[str]:
    """Return addresses: half inside random entries, half anywhere in either family."""
    queries = []
    for _ in range(count):
        if rng.random() < 0.5:
            network = ipaddress.ip_network(rng.choice(entries))
            offset = rng.getrandbits(network.max_prefixlen - network.prefixlen)
            queries.append(str(network.network_address + offset))
        elif rng.random() < 0.6:
            queries.append(str(ipaddress.IPv4Address(rng.getrandbits(32))))
        else:
            queries.append(str(ipaddress.IPv6Address((1 << 125) | rng.getrandbits(125))))
    return queries


@pytest.fixture(scope="module")
def data() -> tuple[list[str], list[str]]:
    """Return the seeded entries and queries."""
    rng = random.Random(SEED)
    entries = make_entries(rng, ENTRIES)
    return entries, make_queries(rng, entries, QUERIES)


@pytest.fixture(scope="module")
def tables(data: tuple[list[str], list[str]]) -> tuple[BanTable[str], Any, list[str]]:
    """Build both tables and check they answer every query alike before anything is timed."""
    entries, queries = data
    ours: BanTable[str] = BanTable(entries)
    peer = Tries()
    for index, value in enumerate(entries):
        peer[value] = index
    expected = [peer.get(query, -1) for query in queries]
    assert [ours.index_of(query) for query in queries] == expected
    assert ours.indexes(queries).tolist() == expected
    assert ours.contains_many(queries).tolist() == [query in peer for query in queries]
    hits = sum(1 for index in expected if index >= 0)
    assert QUERIES * 0.3 < hits < QUERIES * 0.9
    return ours, peer, queries


class Tries:
    """pytricia for both families: one trie per family, chosen by the address text."""

    def __init__(self) -> None:
        self.v4 = pytricia.PyTricia(32)
        self.v6 = pytricia.PyTricia(128)

    def __setitem__(self, prefix: str, value: int) -> None:
        (self.v6 if ":" in prefix else self.v4)[prefix] = value

    def get(self, address: str, default: Any = None) -> Any:
        return (self.v6 if ":" in address else self.v4).get(address, default)

    def __contains__(self, address: str) -> bool:
        return address in (self.v6 if ":" in address else self.v4)


def ours_lookup(table: BanTable[str], queries: list[str]) -> int:
    lookup = table.lookup
    return sum(1 for query in queries if lookup(query) is not None)


def peer_lookup(tries: Tries, queries: list[str]) -> int:
    v4, v6 = tries.v4.get, tries.v6.get
    return sum(1 for query in queries if (v6 if ":" in query else v4)(query) is not None)


def test_lookup_ours(benchmark: Any, tables: tuple[BanTable[str], Any, list[str]]) -> None:
    table, trie, queries = tables
    _label(benchmark, "security.bantable_lookup", "ours", "pytricia")
    assert benchmark(ours_lookup, table, queries) == peer_lookup(trie, queries)


def test_lookup_peer(benchmark: Any, tables: tuple[BanTable[str], Any, list[str]]) -> None:
    table, trie, queries = tables
    _label(benchmark, "security.bantable_lookup", "peer", "pytricia")
    assert benchmark(peer_lookup, trie, queries) == ours_lookup(table, queries)


def test_contains_ours(benchmark: Any, tables: tuple[BanTable[str], Any, list[str]]) -> None:
    table, _, queries = tables
    _label(benchmark, "security.bantable_contains", "ours", "pytricia")
    contains = table.contains
    benchmark(lambda: [contains(query) for query in queries])


def test_contains_peer(benchmark: Any, tables: tuple[BanTable[str], Any, list[str]]) -> None:
    _, tries, queries = tables
    _label(benchmark, "security.bantable_contains", "peer", "pytricia")
    v4, v6 = tries.v4, tries.v6
    benchmark(lambda: [query in (v6 if ":" in query else v4) for query in queries])


def test_contains_many_ours(benchmark: Any, tables: tuple[BanTable[str], Any, list[str]]) -> None:
    table, _, queries = tables
    _label(benchmark, "security.contains_many", "ours", "per-call loop")
    result = benchmark(table.contains_many, queries)
    assert result.dtype == np.bool_ and result.shape == (QUERIES,)


def test_contains_many_peer(benchmark: Any, tables: tuple[BanTable[str], Any, list[str]]) -> None:
    table, _, queries = tables
    _label(benchmark, "security.contains_many", "peer", "per-call loop")
    contains = table.contains
    result = benchmark(lambda: np.array([contains(query) for query in queries], dtype=bool))
    assert result.tolist() == table.contains_many(queries).tolist()


# --- the gate's cost on a whole request ----------------------------------------------------


class PassThrough:
    """Stands in for the gate: a middleware that lets everything through."""

    def __init__(self, bans: Any) -> None:
        self._bans = bans

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        return None


@pytest.fixture(scope="module")
def banned_db(
    tmp_path_factory: pytest.TempPathFactory, data: tuple[list[str], list[str]]
) -> Iterator[tuple[Engine, Path]]:
    """Return a migrated SQLite database whose blocklist holds the 100,000 entries.

    The flood detector stays on with its threshold at the maximum, which no run reaches.
    """
    folder = tmp_path_factory.mktemp("bench-security")
    engine = make_engine(f"sqlite:///{folder / 'station.db'}")
    upgrade_to_head(engine)
    now = Clock()()
    rows = [
        {"value": value, "kind": "blocklist", "active": True, "created_at": now, "source": "manual"}
        for value in data[0]
    ]
    with begin_write(engine) as conn:
        conn.execute(ip_filters.insert(), rows)
        bump_generation(conn, BANS_GENERATION)
        quiet_flood_rule(conn, now)
    yield engine, folder
    engine.dispose()


@pytest.fixture(scope="module")
def clients(banned_db: tuple[Engine, Path]) -> dict[str, falcon.testing.TestClient]:
    """Return clients of the app with the gate and without it, both alive for both timings.

    Both stay alive so the two runs share one heap: the gate app's 100,000 cached entries make
    every garbage collection a little slower, and that would otherwise bill the peer's run less.
    """
    engine, folder = banned_db
    settings = make_settings(folder, engine.url.render_as_string(hide_password=False))
    built = {}
    for name, gate in (("gate", True), ("plain", False)):
        with pytest.MonkeyPatch.context() as patch:
            if not gate:
                patch.setattr(app_module, "BanGate", PassThrough)
            built[name] = falcon.testing.TestClient(create_app(settings, engine=engine))
    banned = first_address(engine)
    pages = []
    for name, client in built.items():
        page = client.simulate_get("/login", remote_addr=CLEAN)
        assert page.status_code == 200
        pages.append(page.content)
        blocked = client.simulate_get("/login", remote_addr=banned).status_code
        assert blocked == (403 if name == "gate" else 200)
        # One probe is recorded, not banned: the automatic-ban middleware runs in both apps.
        assert client.simulate_get("/.env", remote_addr=PROBER).status_code == 404
    assert pages[0] == pages[1] and b"<form" in pages[0]
    assert events_from(engine, PROBER) == 2 and events_from(engine, CLEAN) == 0
    return built


def quiet_flood_rule(conn: Connection, now: datetime) -> None:
    """Keep the flood detector on, counting, with its threshold at the maximum no run reaches."""
    settings, _ = save_settings(conn, {"detectors": {FLOOD: {"threshold": MAX_THRESHOLD}}}, now)
    assert settings.rule(FLOOD).enabled


def events_from(engine: Engine, address: str) -> int:
    """Return how many security events (probes, flood reports, bans) name ``address``."""
    with engine.connect() as conn:
        query = select(func.count()).where(security_events.c.address == address)
        return int(conn.execute(query).scalar_one())


def check_never_refused(engine: Engine, result: falcon.testing.Result, page: bytes) -> None:
    """Fail unless the timed requests were all served: no event or ban names the client."""
    assert result.status_code == 200 and result.content == page
    assert events_from(engine, CLEAN) == 0, "the automatic bans saw the benchmark's client"
    with engine.connect() as conn:
        bans = select(func.count()).where(ip_filters.c.value == CLEAN)
        assert conn.execute(bans).scalar_one() == 0


def first_address(engine: Engine) -> str:
    """Return an address covered by the first stored entry."""
    with engine.connect() as conn:
        value = conn.execute(ip_filters.select().limit(1)).first().value  # type: ignore[union-attr]
    return str(ipaddress.ip_network(value).network_address)


def test_gate_request_ours(
    benchmark: Any, clients: dict[str, falcon.testing.TestClient], banned_db: tuple[Engine, Path]
) -> None:
    _label(benchmark, "security.gate_request", "ours", "app without the gate")
    page = clients["plain"].simulate_get("/login", remote_addr=CLEAN).content
    result = benchmark(clients["gate"].simulate_get, "/login", remote_addr=CLEAN)
    check_never_refused(banned_db[0], result, page)


def test_gate_request_peer(
    benchmark: Any, clients: dict[str, falcon.testing.TestClient], banned_db: tuple[Engine, Path]
) -> None:
    _label(benchmark, "security.gate_request", "peer", "app without the gate")
    page = clients["gate"].simulate_get("/login", remote_addr=CLEAN).content
    result = benchmark(clients["plain"].simulate_get, "/login", remote_addr=CLEAN)
    check_never_refused(banned_db[0], result, page)
