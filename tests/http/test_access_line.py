"""The access line: the compiled kernel writes exactly what its Python twin writes.

The twin (``py_access_line``) is the formatter's JSON (``access_json_line``, built with orjson);
``tests/http/test_access_log.py`` holds the middleware's direct line equal to the formatter's.
"""

from __future__ import annotations

import math
import sys
import time
from datetime import UTC, datetime

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from alertstation.http import access_line as module
from alertstation.http.access_line import access_line, duration_hundredths, py_access_line
from alertstation.kernel_loader import load_kernel

kernel = load_kernel("accessline")
needs_kernel = pytest.mark.skipif(kernel is None, reason="the accessline kernel is not built")

# Text of every kind: quotes, backslashes, control characters, DEL, accents, astral characters.
TEXT = st.text(
    st.characters(exclude_categories=("Cs",)) | st.sampled_from('"\\\x00\x1f\x7f\t\n/é😀'),
    max_size=300,
)
TIMES = st.floats(min_value=0, max_value=253402300799.0, allow_nan=False)
HUNDREDTHS = st.integers(min_value=-5, max_value=10**13 - 1)
Values = tuple[float, str | None, str, str, int, int, str | None, str | None]


def parts(
    created: float = 1_800_000_000.5,
    request_id: str | None = "3f8e83e8320eaed7000000000000b3ad",
    method: str = "GET",
    path: str = "/api/broadcast/state",
    status: int = 200,
    hundredths: int = 1234,
    client_ip: str | None = "192.0.2.7",
    user: str | None = None,
) -> Values:
    return (created, request_id, method, path, status, hundredths, client_ip, user)


@needs_kernel
def test_a_usual_line_is_the_twins() -> None:
    values = parts()
    line = kernel.access_line(*values)
    assert line == py_access_line(*values)
    assert orjson.loads(line) == {
        "time": datetime.fromtimestamp(values[0], UTC).isoformat(timespec="milliseconds"),
        "level": "info",
        "logger": "alertstation.access",
        "message": "GET /api/broadcast/state 200",
        "request_id": "3f8e83e8320eaed7000000000000b3ad",
        "method": "GET",
        "path": "/api/broadcast/state",
        "status": 200,
        "duration_ms": 12.34,
        "client_ip": "192.0.2.7",
        "user": None,
    }


@needs_kernel
@given(
    st.tuples(
        TIMES,
        st.none() | TEXT,
        TEXT,
        TEXT,
        st.integers(min_value=0, max_value=999_999),
        HUNDREDTHS,
        st.none() | TEXT,
        st.none() | TEXT,
    )
)
@example(parts(created=0.0, request_id="", hundredths=-1, client_ip=None, user="é\x00"))
@example(parts(created=1_700_000_000.9999995, hundredths=0))  # rounds into the next second
@example(parts(created=1_700_000_000.0005, hundredths=10))  # half a microsecond: to even
@example(parts(path='"' * 200 + "\x01" * 200, hundredths=10**13 - 1))  # past the stack buffer
def test_the_kernel_writes_what_the_twin_writes(values: Values) -> None:
    assert kernel.access_line(*values) == py_access_line(*values)


@needs_kernel
@pytest.mark.parametrize(
    "values",
    [
        parts(path="/\ud800"),  # a lone surrogate is not UTF-8
        parts(user=7),  # type: ignore[arg-type]
        parts(created=-1.0),
        parts(created=math.nan),
        parts(created=253402300800.0),
        parts(hundredths=10**13),
        parts(status=-1),
    ],
)
def test_the_kernel_refuses_what_it_does_not_write(values: Values) -> None:
    with pytest.raises((TypeError, ValueError)):
        kernel.access_line(*values)


def test_the_wrapper_asks_the_twin_for_what_the_kernel_refuses() -> None:
    long_run = parts(hundredths=10**15 + 7)
    assert access_line(*long_run) == py_access_line(*long_run)
    assert orjson.loads(access_line(*long_run))["duration_ms"] == (10**15 + 7) / 100
    late = parts(created=253402300800.0 + 5)  # past year 9999: no time text either way
    with pytest.raises((ValueError, OverflowError)):
        access_line(*late)


def test_the_wrapper_without_the_kernel_is_the_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "_kernel", None)
    values = parts(path="/a b", user="ops")
    assert access_line(*values) == py_access_line(*values)


@needs_kernel
def test_the_time_is_the_formatters_for_every_millisecond_of_a_second() -> None:
    second = math.floor(time.time())
    for millis in range(1000):
        created = second + millis / 1000
        line = orjson.loads(kernel.access_line(*parts(created=created)))
        expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
        assert line["time"] == expected


def test_duration_hundredths() -> None:
    assert duration_hundredths(None) == -1
    assert duration_hundredths(0.0123456) == 1235
    assert duration_hundredths(0.0) == 0


@needs_kernel
def test_the_kernel_keeps_no_reference_to_its_text() -> None:
    path = "/" + "x" * 2000  # past the stack buffer: the heap one is freed
    before = sys.getrefcount(path)
    for _ in range(100):
        kernel.access_line(*parts(path=path))
    assert sys.getrefcount(path) == before
