"""Time the compiled CAP reader against the path it replaces for plain messages.

Group ``alerts.cap_read``: reading the raw fields of 1,000 seeded CAP 1.2 messages (each about
1 KB, with P-VTEC, an event code and three SAME codes: the batch benchmark's messages).

- ours: ``alertstation._native.capread.read``, one expat pass over the bytes;
- peer: lxml, as the full path uses it: the expat screen (``split_documents``), the hardened
  lxml parse (``parse_xml_document``) and the tree walk (``cap.read_fields``).

Both must return the same fields for every message before anything is timed. CI runs this file
with ``--benchmark-disable`` so the comparison still executes once.
"""

from __future__ import annotations

from typing import Any

import pytest

from alertstation.alerts.cap import read_fields
from alertstation.alerts.parsing import parse_xml_document, split_documents
from benchmarks.bench_alerts_ingest import make_messages

capread = pytest.importorskip("alertstation._native.capread")

GROUP = "alerts.cap_read"
PEER = "lxml (expat screen, hardened lxml parse, tree walk)"
MESSAGES = 1000


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = GROUP
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER
    benchmark.extra_info["messages"] = MESSAGES


def ours(messages: list[bytes]) -> list[dict[str, Any] | None]:
    read = capread.read
    return [read(message) for message in messages]


def peer(messages: list[bytes]) -> list[dict[str, Any]]:
    fields = []
    for message in messages:
        split_documents(message)
        fields.append(read_fields(parse_xml_document(message)))
    return fields


@pytest.fixture(scope="module")
def messages() -> list[bytes]:
    """The messages, after checking both sides read the same fields from every one."""
    batch = make_messages(MESSAGES)
    expected = peer(batch)
    assert ours(batch) == expected
    assert all(fields["info"][0]["area"][0]["geocode"] for fields in expected)
    return batch


def test_cap_read_ours(benchmark: Any, messages: list[bytes]) -> None:
    _label(benchmark, "ours")
    assert len(benchmark(ours, messages)) == MESSAGES


def test_cap_read_peer(benchmark: Any, messages: list[bytes]) -> None:
    _label(benchmark, "peer")
    assert len(benchmark(peer, messages)) == MESSAGES
