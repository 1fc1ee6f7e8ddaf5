"""Poll source settings: validation, the URL a poll fetches, credentials hidden, health badges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from alertstation.alerts.poll.fetch import parse_retry_after, split_credentials
from alertstation.alerts.poll.sources import (
    DEFAULT_API_BASE,
    SourceConfig,
    SourceError,
    display_url,
    fetch_url,
    health_of,
    read_config,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def test_a_json_api_source_needs_no_url_and_builds_the_area_or_zone_query() -> None:
    by_area = read_config({"name": " NWS  VA ", "kind": "json-api", "area": "va, md"})
    assert (by_area.name, by_area.url, by_area.area) == ("NWS VA", DEFAULT_API_BASE, ("VA", "MD"))
    assert fetch_url(by_area, NOW, None) == "https://api.weather.gov/alerts/active?area=VA,MD"
    by_zone = read_config(
        {
            "name": "z",
            "kind": "json-api",
            "url": "http://127.0.0.1:8/api/",
            "zones": ["va057", "VAC059"],
        }
    )
    assert by_zone.zones == ("VAZ057", "VAC059")
    assert (
        fetch_url(by_zone, NOW, None) == "http://127.0.0.1:8/api/alerts/active?zone=VAZ057,VAC059"
    )
    nation = read_config({"name": "all", "kind": "json-api"})
    assert fetch_url(nation, NOW, None) == "https://api.weather.gov/alerts/active"


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"kind": "cap-xml", "url": "http://x/"}, "name", "name is required"),
        ({"name": "a", "kind": "rss", "url": "http://x/"}, "kind", "kind must be one of"),
        ({"name": "a", "kind": "cap-xml"}, "url", "url is required"),
        ({"name": "a", "kind": "cap-xml", "url": "ftp://x/f"}, "url", "http:// or https://"),
        ({"name": "a", "kind": "cap-xml", "url": "file:///etc/passwd"}, "url", "http://"),
        ({"name": "a", "kind": "cap-xml", "url": "http:///nohost"}, "url", "no host"),
        ({"name": "a", "kind": "cap-xml", "url": "http://x/a b"}, "url", "one line"),
        ({"name": "a", "kind": "cap-xml", "url": "http://x:99999/"}, "url", "not a valid URL"),
        ({"name": "a", "kind": "json-api", "url": "http://x/?a=1"}, "url", "without a query"),
        ({"name": "a", "kind": "cap-xml", "url": "http://x/{since}"}, "url", "ipaws"),
        ({"name": "a", "kind": "ipaws", "url": "http://x/{until}"}, "url", "placeholder"),
        ({"name": "a", "kind": "json-api", "area": "VA", "zones": "VAZ001"}, "zones", "not both"),
        ({"name": "a", "kind": "json-api", "area": "Virginia"}, "area", "two-letter"),
        ({"name": "a", "kind": "json-api", "zones": "VAX001"}, "zones", "UGC"),
        ({"name": "a", "kind": "cap-xml", "url": "http://x/", "area": "VA"}, "area", "json-api"),
        ({"name": "a", "kind": "json-api", "interval_seconds": 5}, "interval_seconds", "10"),
        ({"name": "a", "kind": "json-api", "interval_seconds": True}, "interval_seconds", "whole"),
        ({"name": "a", "kind": "json-api", "read_timeout": 0}, "read_timeout", "0.05"),
        ({"name": "a", "kind": "json-api", "enabled": "yes"}, "enabled", "true or false"),
        ({"name": "a", "kind": "json-api", "colour": "red"}, "colour", "unknown field"),
        ({"name": "x" * 101, "kind": "json-api"}, "name", "at most 100"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(
    body: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(SourceError, match=message) as caught:
        read_config(body)
    assert caught.value.field == field


def test_an_edit_changes_only_the_fields_sent() -> None:
    current = read_config({"name": "a", "kind": "cap-xml", "url": "https://x.example/feed"})
    edited = read_config({"interval_seconds": 120, "enabled": False}, current)
    assert edited == SourceConfig(
        name="a", kind="cap-xml", url="https://x.example/feed", interval_seconds=120, enabled=False
    )
    assert not current.target_differs(edited)
    assert current.target_differs(read_config({"url": "https://y.example/feed"}, current))


def test_ipaws_since_is_the_last_success_less_a_minute_or_an_hour_ago() -> None:
    config = read_config({"name": "i", "kind": "ipaws", "url": "https://f.example/recent/{since}"})
    assert fetch_url(config, NOW, None) == "https://f.example/recent/2026-11-21T11:00:00Z"
    last = NOW - timedelta(minutes=5)
    assert fetch_url(config, NOW, last) == "https://f.example/recent/2026-11-21T11:54:00Z"


def test_credentials_become_basic_auth_and_are_never_shown() -> None:
    url = "https://user:p%40ss@feeds.example:8443/cap?x=1"
    plain, header = split_credentials(url)
    assert plain == "https://feeds.example:8443/cap?x=1"
    assert header == "Basic dXNlcjpwQHNz"  # user:p@ss
    assert display_url(url) == plain
    assert split_credentials("https://feeds.example/cap") == ("https://feeds.example/cap", None)


def test_retry_after_as_seconds_or_a_date() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Sat, 21 Nov 2026 12:02:00 GMT", NOW) == 120.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def _row(**values: Any) -> Any:
    base = {
        "enabled": True,
        "consecutive_failures": 0,
        "last_success_at": NOW,
        "last_attempt_at": NOW,
        "last_error": None,
        "interval_seconds": 60,
        "next_attempt_at": NOW + timedelta(seconds=60),
    }
    return SimpleNamespace(**{**base, **values})


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, "healthy"),
        ({"enabled": False}, "disabled"),
        ({"last_attempt_at": None, "last_success_at": None}, "pending"),
        ({"consecutive_failures": 1}, "degraded"),
        ({"consecutive_failures": 2}, "degraded"),
        ({"consecutive_failures": 3}, "failing"),
        ({"last_error": "1 linked document(s) not fetched"}, "degraded"),
        ({"next_attempt_at": NOW - timedelta(seconds=121)}, "degraded"),  # worker not polling
        ({"next_attempt_at": NOW - timedelta(seconds=100)}, "healthy"),
    ],
)
def test_health_badge(values: dict[str, Any], expected: str) -> None:
    assert health_of(_row(**values), NOW) == expected
