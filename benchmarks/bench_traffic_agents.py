"""Time reading new user agents: the resolver the station runs against ua-parser's pure-Python one.

``traffic.agents``: 400 distinct agents in the shapes real access logs are full of
(``tests.traffic.accesslog.varied_agents``: browser builds, phones, crawlers, libraries), each
read into the parts the reports group by (``agents.describe``) with no cache in front, as for
the first sight of an agent in a live request or an import. Ours is ua-parser's resolver as the
station installs it (``ua-parser-rs``); the peer is ua-parser's pure-Python resolver, which is
what runs without it. Before timing, every agent's parts are checked equal between the two.
"""

from __future__ import annotations

from typing import Any

import pytest
from ua_parser import BasicResolver, Parser, load_builtins

from alertstation.traffic import agents
from tests.traffic import accesslog

try:
    from ua_parser.regex import Resolver as CompiledResolver
except ImportError:  # ua-parser-rs has no wheel for this platform
    CompiledResolver = None

pytestmark = pytest.mark.skipif(CompiledResolver is None, reason="ua-parser-rs is not installed")

AGENTS = 400
SEED = 20261127


@pytest.fixture(scope="module")
def parsers() -> dict[str, Any]:
    """Return both resolvers' parse functions (no cache), after checking they agree."""
    matchers = load_builtins()
    found = {
        "ours": Parser(CompiledResolver(matchers)).parse,  # type: ignore[misc]
        "peer": Parser(BasicResolver(matchers)).parse,
    }
    sample = accesslog.varied_agents(AGENTS, SEED)
    assert read_all(found["ours"], sample) == read_all(found["peer"], sample)
    return found


def read_all(parse: Any, sample: list[str]) -> list[agents.Agent]:
    return [agents.describe(agent, parse) for agent in sample]


def _run(benchmark: Any, parsers: dict[str, Any], role: str) -> None:
    benchmark.group = "traffic.agents"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "ua-parser pure-Python resolver"
    sample = accesslog.varied_agents(AGENTS, SEED)
    read = benchmark.pedantic(read_all, args=(parsers[role], sample), rounds=5, iterations=1)
    assert len(read) == AGENTS


def test_agents_ours(benchmark: Any, parsers: dict[str, Any]) -> None:
    _run(benchmark, parsers, "ours")


def test_agents_peer(benchmark: Any, parsers: dict[str, Any]) -> None:
    _run(benchmark, parsers, "peer")
