"""The compiled combined-line splitter gives the ``COMBINED`` pattern's groups on any text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import combined_line
from alertstation.traffic.combined_line import py_split_combined
from tests.fuzz.fuzzing import fuzz
from tests.traffic import accesslog

kernel = load_kernel("combinedline")
pytestmark = pytest.mark.skipif(kernel is None, reason="the combinedline kernel is not built")

LINE = (
    '203.0.113.9 - alice [10/Oct/2026:13:55:36 -0700] "GET /alerts/7?x=1 HTTP/2.0" 200 2326 '
    '"https://www.bing.com/search?q=nws+alert" "Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0"'
)
#: The characters the pattern turns on, and ones that are spaces or digits only to Unicode.
PARTS = [
    " ", "  ", "\t", "\n", "\r", "\x0b", "\x1c", "\x85", "\xa0", "\u2003", "\u3000",
    '"', '\\"', "\\", "\\\\", "\\\n", "[", "]", "-", "+", "/", ":",
    "0", "200", "404 ", "9999", "\u0661\u0662\u0663", "\uff11", "\u00b2",
    "GET", "HTTP/1.1", "caf\u00e9", "\U0001f600", "\x00", "x",
]  # fmt: skip
FIELDS = st.lists(st.sampled_from(PARTS), max_size=6).map("".join)


def both(line: str) -> None:
    assert kernel is not None
    assert kernel.split_combined(line) == py_split_combined(line), repr(line)


def test_the_wrapper_runs_the_kernel() -> None:
    assert kernel is not None
    assert combined_line.split_combined is kernel.split_combined
    assert combined_line.split_combined(LINE) == (
        "203.0.113.9",
        "10/Oct/2026:13:55:36 -0700",
        "GET /alerts/7?x=1 HTTP/2.0",
        "200",
        "2326",
        "https://www.bing.com/search?q=nws+alert",
        "Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0",
    )


def test_generated_and_odd_logs_split_alike() -> None:
    end = datetime.now(UTC)
    for line in accesslog.lines(3_000, end, odd=True) + accesslog.lines(500, end, seed=5):
        both(line)


@pytest.mark.parametrize(
    "line",
    [
        "",
        " ",
        LINE[:40],
        LINE.replace("] ", "]  "),  # two spaces after the time: not a line GoAccess reads
        LINE.replace(" 200 ", " 2000 "),
        LINE.replace(" 200 ", " 200\t"),
        LINE.replace(" 2326 ", " - "),
        LINE.replace(" 2326 ", " -1 "),
        LINE.replace(" 2326 ", " \u0661\u0662 "),  # Arabic-Indic digits are digits to ``re``
        LINE.replace(" - alice ", " \u2003 alice "),  # an em space is a space to ``re``
        LINE.replace("/x=1", '/x=1\\"q\\"'),
        LINE.replace("/x=1", "/x=1\\"),  # a backslash before the closing quote escapes it
        LINE.replace("Firefox/121.0", "Firefox/121.0\\\n"),
        LINE.replace('" "Mozilla', '"  "Mozilla'),
        LINE + ' "extra"',
        LINE[: LINE.rindex('"')],  # the agent's closing quote cut off: common format remains
        LINE.replace("[10/Oct", "[]10/Oct"),
        '192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "HEAD / HTTP/1.0" 304 -',
    ],
)
def test_edge_lines_split_alike(line: str) -> None:
    both(line)


def near(valid: str) -> st.SearchStrategy[str]:
    """A field as logged, or with odd characters around or in place of it."""
    return st.one_of(
        st.just(valid),
        st.tuples(FIELDS, FIELDS).map(lambda ends: ends[0] + valid + ends[1]),
        FIELDS,
    )


@fuzz(600)
@given(
    fields=st.tuples(
        near("203.0.113.9"),
        near(" - - "),
        near("10/Oct/2026:13:55:36 -0700"),
        near('] "'),
        near("GET /a HTTP/1.1"),
        near('" '),
        near("200"),
        near(" "),
        near("2326"),
        near(' "'),
        near("https://example.org/"),
        near('" "'),
        near("curl/8.4.0"),
        near('"'),
    )
)
def test_fuzzed_lines_split_alike(fields: tuple[str, ...]) -> None:
    address, gap, time, *rest = fields
    both(f"{address}{gap}[{time}{''.join(rest)}")


@fuzz(300)
@given(st.text(max_size=300))
def test_any_text_splits_alike(text: str) -> None:
    both(text)
    both(LINE[: len(text) % len(LINE)] + text)
