"""ua-parser's compiled resolver: installed where it has a wheel, and reading agents alike.

The station depends on ``ua-parser-rs`` on x86_64 and aarch64 Linux, so ua-parser picks it over
its pure-Python resolver (about thirty times slower on a new agent). These tests hold the two to
the same parts on a seeded set of agents in the shapes access logs are full of
(``tests/traffic/test_import.py`` checks that an import says so when only the slow one is there).
"""

from __future__ import annotations

import importlib.util
import platform
import sys

import pytest
import ua_parser
from ua_parser import BasicResolver, Parser, load_builtins

from alertstation.traffic import agents
from tests.traffic import accesslog

HAS_WHEEL = sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64")
COMPILED = importlib.util.find_spec("ua_parser_rs") is not None
SEED = 20261127
#: Agents as real logs hold them: browsers, apps, libraries, monitors and crawlers.
KNOWN = [
    *accesslog.AGENTS,
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.1 Safari/605.1.15",
    "Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/16.6 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36",
    "Opera/9.80 (Windows NT 6.1; U; en) Presto/2.10.289 Version/12.00",
    "Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
    "python-requests/2.31.0",
    "Go-http-client/1.1",
    "Wget/1.21.3",
    "okhttp/4.12.0",
    "Dalvik/2.1.0 (Linux; U; Android 12; Pixel 6 Build/SQ3A.220705.004)",
    "Mozilla/5.0 zgrab/0.x",
    "-",
    "",
]


@pytest.mark.skipif(not HAS_WHEEL, reason="ua-parser-rs has no wheel for this platform")
def test_the_compiled_resolver_parses_agents_where_it_has_a_wheel() -> None:
    assert COMPILED, "ua-parser-rs is a dependency on this platform: reinstall the project"
    assert agents.resolver_name() == "ua-parser-rs"


@pytest.mark.skipif(not COMPILED, reason="ua-parser-rs is not installed")
def test_the_compiled_and_pure_python_resolvers_give_the_same_parts() -> None:
    slow = Parser(BasicResolver(load_builtins())).parse
    fast = ua_parser.parse
    for agent in [*KNOWN, *accesslog.varied_agents(1_500, SEED)]:
        assert agents.describe(agent, fast) == agents.describe(agent, slow), agent
