"""Enrichment at capture: GeoIP from the uploadable databases, user agents, language, referrers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from alertstation.security.geoip.lookup import ASN, LOCATION, slot_path
from alertstation.traffic.agents import parse_agent, primary_language
from alertstation.traffic.classify import is_page_view, referrer_parts
from tests.security.test_geoip_files import ASN_NETWORKS, CITY_NETWORKS, write_mmdb
from tests.support import StationHarness as Station

Rows = Callable[[], list[dict[str, Any]]]
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
)
IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1"
)
FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"


def test_geoip_country_city_region_and_asn_come_from_the_station_databases(
    station: Station, logged: Rows
) -> None:
    data_dir = station.app.station.settings.data_dir
    write_mmdb(slot_path(data_dir, LOCATION), "GeoIP2-City", CITY_NETWORKS)
    write_mmdb(slot_path(data_dir, ASN), "GeoLite2-ASN", ASN_NETWORKS)
    station.client.simulate_get("/healthz", remote_addr="8.8.8.8")
    station.client.simulate_get("/healthz", remote_addr="2001:4860::8888")
    station.client.simulate_get("/healthz", remote_addr="192.0.2.1")  # not in the databases
    first, second, unknown = logged()
    assert (first["country"], first["country_code"]) == ("United States", "US")
    assert (first["region"], first["region_code"], first["city"]) == (
        "California",
        "CA",
        "Mountain View",
    )
    assert (first["asn"], first["asn_org"]) == (15169, "Google")
    assert (second["city"], second["region_code"], second["asn"]) == ("Cleveland", "OH", 15169)
    assert unknown["country"] is None and unknown["asn"] is None


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        (IPHONE, ("Mobile Safari", "17", "iOS", "mobile", False)),
        (IPAD, ("Mobile Safari", "16", "iOS", "tablet", False)),
        (FIREFOX_LINUX, ("Firefox", "121", "Linux", "desktop", False)),
        (BINGBOT, ("bingbot", "2", None, "bot", True)),
        (None, (None, None, None, None, False)),
    ],
)
def test_user_agents_are_parsed_by_ua_parser(agent: str | None, expected: tuple[Any, ...]) -> None:
    parsed = parse_agent(agent)
    assert (
        parsed.browser,
        parsed.browser_version,
        parsed.os,
        parsed.device_type,
        parsed.is_bot,
    ) == expected


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("en-us,en;q=0.8", "en-US"),
        ("de;q=0.5, fr-ch;q=0.9, *;q=0.1", "fr-CH"),
        ("*", None),
        ("xx;q=0", None),
        (None, None),
    ],
)
def test_the_language_is_the_most_preferred_tag(header: str | None, language: str | None) -> None:
    assert primary_language(header) == language


def test_referrers_group_by_domain_without_self_referrals() -> None:
    assert referrer_parts("https://www.example.org/a?b=1", "station.test") == (
        "example.org",
        None,
        None,
    )
    assert referrer_parts("https://station.test/alerts", "station.test:8080") == (None, None, None)
    assert referrer_parts("https://duckduckgo.com/?q=eas++test", None) == (
        "duckduckgo.com",
        "DuckDuckGo",
        "eas test",
    )
    assert referrer_parts("not a url", None) == (None, None, None)


@pytest.mark.parametrize(
    ("method", "path", "status", "page"),
    [
        ("GET", "/alerts", 200, True),
        ("GET", "/alerts", 304, True),
        ("GET", "/about.html", 200, True),
        ("HEAD", "/alerts", 200, False),
        ("GET", "/alerts", 404, False),
        ("GET", "/static/app.css", 200, False),
        ("GET", "/logo.png", 200, False),
        ("GET", "/api/alerts", 200, False),
        ("POST", "/auth/login", 200, False),
    ],
)
def test_page_views(method: str, path: str, status: int, page: bool) -> None:
    assert is_page_view(method, path, status) is page
