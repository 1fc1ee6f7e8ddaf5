"""Fuzz the ATOM reader the poller uses: entries, a parse error or None, never an exception.

``atom_entries`` answers a list of entries for an ATOM feed, an AlertParseError for an ATOM feed
it cannot read, and None for anything that is not ATOM. Every link it hands over must survive
what the poller does with it: ``urljoin`` against the feed's address and ``urlsplit(...).port``.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin, urlsplit

from hypothesis import example, given
from hypothesis import strategies as st

from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.poll.atom import AtomEntry, atom_entries, root_element
from tests.fuzz.fuzzing import fuzz, mutated

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
ATOM = (FIXTURES / "atom_feed.xml").read_bytes()
FEED_URL = "https://alerts.example.org/feeds/OK.atom"
HEAD = b'<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
CAP = (FIXTURES / "cap12_svr_new.xml").read_bytes().split(b"?>", 1)[1]
ATTRIBUTE_TEXT = st.text(
    alphabet=st.characters(exclude_categories=("Cs", "Cc"), exclude_characters='"<&'),
    max_size=40,
)
HREFS = ATTRIBUTE_TEXT | st.sampled_from(
    [
        "",
        "http://[::1",
        "http://[::1]:99999/x",
        "//[x",
        "https://alerts.example.org:notaport/cap/1",
        "https://alerts.example.org/cap/1",
        "/cap/relative",
        "javascript:alert(1)",
        "https://user:pw@alerts.example.org/cap/2",
    ]
)


def _check_links(answer: list[AtomEntry] | AlertParseError | None) -> None:
    if answer is None or isinstance(answer, AlertParseError):
        assert answer is None or str(answer)
        return
    for position, entry in enumerate(answer):
        assert entry.position == position
        assert (entry.alert is None) or entry.link == ""
        if entry.link:
            port = urlsplit(urljoin(FEED_URL, entry.link)).port  # what the poller does
            assert port is None or 0 <= port <= 65535


@st.composite
def feeds(draw: st.DrawFn) -> bytes:
    """An ATOM feed of entries with links of any kind and optionally an embedded alert."""
    entries = []
    for _ in range(draw(st.integers(0, 4))):
        links = b"".join(
            b'<link rel="'
            + draw(st.sampled_from([b"alternate", b"related", b"self", b""]))
            + b'" href="'
            + draw(HREFS).encode()
            + b'"/>'
            for _ in range(draw(st.integers(0, 3)))
        )
        body = draw(st.sampled_from([b"", CAP, b"<content><alert/></content>", b"<x>&amp;</x>"]))
        entries.append(b"<entry><id>e</id>" + links + body + b"</entry>")
    return HEAD + b"".join(entries) + b"</feed>"


@fuzz(80)
@given(body=feeds())
@example(body=HEAD + b'<entry><link href="http://[::1"/></entry></feed>')
@example(body=HEAD + b'<entry><link href="https://a.example.org:99999/x"/></entry></feed>')
def test_feeds_with_any_links_give_usable_entries(body: bytes) -> None:
    _check_links(atom_entries(body))


@fuzz(70)
@given(body=mutated(ATOM, most=3))
def test_mutated_feed_gives_entries_an_error_or_none(body: bytes) -> None:
    answer = atom_entries(body)
    _check_links(answer)
    root_element(body)
    try:
        parse_any(body)
    except AlertParseError as ex:
        assert str(ex)


@fuzz(70)
@given(body=st.binary(max_size=200) | st.text(max_size=100).map(str.encode))
def test_random_bodies_are_not_atom(body: bytes) -> None:
    answer = atom_entries(body)
    assert answer is None or isinstance(answer, AlertParseError | list)
    _check_links(answer)
