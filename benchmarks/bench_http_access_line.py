"""Time the access line the station writes for every request: the kernel against orjson.

``http.access_line``: 20,000 access lines of the kinds a station logs (API and page paths, a few
with quotes, spaces, control characters or accents; signed-in users and anonymous callers; a
time a few milliseconds apart) written by the compiled kernel (``src/_native/accessline.pyx``)
against its Python twin, ``py_access_line``, which builds the same JSON with orjson from a dict
(what ``JsonFormatter`` does for a log record). Before timing, every line of ours is checked
equal to the twin's.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from alertstation.http.access_line import py_access_line
from alertstation.kernel_loader import load_kernel

kernel = load_kernel("accessline")
pytestmark = pytest.mark.skipif(kernel is None, reason="the accessline kernel is not built")

SEED = 20261127
LINES = 20_000
PATHS = [
    "/api/broadcast/state",
    "/api/alerts",
    "/alerts",
    "/traffic/dashboard",
    "/static/app.css",
    '/search/"quoted"',
    "/a b/caf\u00e9",
    "/tab\there",
    "/wp-login.php",
]
USERS = [None, None, "ops", "m\u00fcller"]
Values = tuple[float, str, str, str, int, int, str, str | None]


def make_values() -> list[Values]:
    """Return the seeded argument tuples of ``LINES`` access lines."""
    rng = random.Random(SEED)
    start = time.time()
    return [
        (
            start + n * 0.003,
            f"{rng.getrandbits(128):032x}",
            "POST" if rng.random() < 0.05 else "GET",
            rng.choice(PATHS),
            rng.choice((200, 200, 200, 304, 404)),
            rng.randint(1, 50_000),
            f"198.51.100.{rng.randint(1, 254)}",
            rng.choice(USERS),
        )
        for n in range(LINES)
    ]


def write_all(write: Any, values: list[Values]) -> list[str]:
    return [write(*args) for args in values]


@pytest.fixture(scope="module")
def values() -> list[Values]:
    """Return the lines' arguments, after checking the kernel's lines equal the twin's."""
    data = make_values()
    assert write_all(kernel.access_line, data) == write_all(py_access_line, data)
    return data


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = "http.access_line"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "orjson from a dict"


def test_access_line_ours(benchmark: Any, values: list[Values]) -> None:
    _label(benchmark, "ours")
    assert len(benchmark(write_all, kernel.access_line, values)) == LINES


def test_access_line_peer(benchmark: Any, values: list[Values]) -> None:
    _label(benchmark, "peer")
    assert len(benchmark(write_all, py_access_line, values)) == LINES
