"""The access-log import's cached enrichment gives, line by line, the row a live request gets.

``RowEnricher`` works out each distinct address, agent, referrer and request once per import;
``rows.build_row`` is the recorder's one-request path. Both must store the same values, and the
settings must leave out the same lines, for every line: generated logs, odd lines, and fuzzed
ones.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.security.geoip.lookup import ASN, LOCATION, GeoLocator, slot_path
from alertstation.traffic import addresses
from alertstation.traffic.agents import parse_agent
from alertstation.traffic.enrich import FILTERED, RowEnricher
from alertstation.traffic.importer import parse_combined
from alertstation.traffic.recorder import should_record
from alertstation.traffic.rows import ROW_COLUMNS, Locator, build_row
from alertstation.traffic.settings import TrafficSettings
from tests.fuzz.fuzzing import fuzz
from tests.security.test_geoip_files import ASN_NETWORKS, CITY_NETWORKS, write_mmdb
from tests.traffic import accesslog

STAMP = "10/Oct/2026:13:55:36 -0700"
ODD_LINES = [
    f'8.8.8.8 - - [{STAMP}] "GET /alerts HTTP/1.1" 200 512 "-" "curl/8.4.0"',
    f'2001:4860::8888 - - [{STAMP}] "GET /status HTTP/2.0" 200 99 "https://www.google.com/'
    'search?q=nws+warning" "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 '
    'Firefox/121.0"',
    f'::ffff:81.2.69.160 - - [{STAMP}] "GET http://station.example/alerts?x=1 HTTP/1.1" 301 0 '
    '"-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"',
    f'127.0.0.1 - - [{STAMP}] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.29"',
    f'192.0.2.1 - - [{STAMP}] "HEAD / HTTP/1.0" 304 -',
    f'192.0.2.1 - - [{STAMP}] "POST /api/alerts HTTP/1.1" 201 12 "-" "a \\"quoted\\" agent"',
    f'192.0.2.1 - - [{STAMP}] "GET /static/app.css HTTP/1.1" 200 9000 "-" "-"',
    f'192.0.2.1 - - [{STAMP}] "GET /feed.xml HTTP/1.1" 500 0 "not a url" "x"',
    f'300.1.1.1 - - [{STAMP}] "GET / HTTP/1.1" 200 1 "-" "-"',
    '192.0.2.1 - - [10/Foo/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "-" "-"',
    '192.0.2.1 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "unterminated',
    "not a log line",
]
SETTINGS = {
    "defaults": TrafficSettings(),
    "everything": TrafficSettings(exclude_internal=False),
    "anonymized": TrafficSettings(anonymize_ip=True),
    "no bots, no api": TrafficSettings(exclude_bots=True, log_api_requests=False),
    "skipped paths": TrafficSettings(skip_paths=("/static/", "/feed")),
}


def reference(line: str, settings: TrafficSettings, locator: Locator | None) -> Any:
    """The one-request path: parse, apply the settings as documented, then ``build_row``."""
    seen = parse_combined(line)
    if seen is None:
        return None
    rules = TrafficSettings(
        exclude_internal=settings.exclude_internal,
        log_api_requests=settings.log_api_requests,
        skip_paths=settings.skip_paths,
    )
    if not should_record(rules, seen.path, seen.client_ip, True):
        return FILTERED
    if settings.exclude_bots and parse_agent(seen.user_agent).is_bot:
        return FILTERED
    if settings.anonymize_ip:
        seen = replace(seen, client_ip=addresses.mask_address(seen.client_ip))
    row = build_row(seen, locator)
    return tuple(row[name] for name in ROW_COLUMNS)


@pytest.mark.parametrize(
    ("request_line", "method", "path"),
    [
        ("GET /alerts/7?x=1 HTTP/2.0", "GET", "/alerts/7"),
        ("get /alerts HTTP/1.1", "GET", "/alerts"),
        ("GET /a%20b/%7Euser?x=%3F HTTP/1.1", "GET", "/a b/~user"),
        ("GET /a%3Fb HTTP/1.1", "GET", "/a"),  # decoded, then cut at "?", as GoAccess does
        ("GET /caf%C3%A9 HTTP/3", "GET", "/café"),
        ("GET /bad%zz%FF HTTP/1.1", "GET", "/bad%zz\ufffd"),
        ("GET /sp ace HTTP/1.1", "GET", "/sp ace"),
        ("GET http://example.com/x?y HTTP/1.1", "GET", "http://example.com/x"),
        ("CONNECT example.com:443 HTTP/1.1", "CONNECT", "example.com:443"),
        ("PROPFIND /dav HTTP/1.1", "PROPFIND", "/dav"),
        ("-", "-", "-"),
        ("", "-", ""),
        (" ", "-", ""),
        ("\\x16\\x03\\x01", "-", "\\x16\\x03\\x01"),
        ("PRI * HTTP/2.0", "-", "PRI * HTTP/2.0"),
        ("SSH-2.0-Go", "-", "SSH-2.0-Go"),
        ("GET /", "-", "-"),
        ("GET /x HTTP/9.9", "-", "-"),
        ("GET /x HTTP/1.1 extra", "-", "-"),
        # What scanners send, read as GoAccess 1.7 reads it (checked against its JSON report):
        (" GET /lead HTTP/1.1 ", "GET", "/lead"),  # the line is trimmed
        ("get\t/tab HTTP/1.1", "GET", "/tab"),  # one character after the method is skipped
        ("DELETE\t\t/dt HTTP/1.1", "DELETE", "/dt"),  # and the decoded path trimmed
        ("GET   /spaced%20 HTTP/1.1", "GET", "/spaced"),
        ("GET  HTTP/1.1", "GET", " "),  # nothing left once trimmed: the target as logged
        ("GET %20 HTTP/1.1", "GET", "%20 "),
        ("GET HTTP/1.1", "-", "-"),
        ("GET /x\tHTTP/1.1", "-", "-"),
        ("GET /w HTTP/1.1x", "GET", "/w"),  # the protocol is a case-blind prefix
        ("GET /v http/1.1", "GET", "/v"),
        ("GETTER /x HTTP/1.1", "GET", "ER /x"),  # so is the method
        ("GET ? HTTP/1.1", "GET", "?"),  # a "?" first is kept
        ("FOO /x?y=1", "-", "FOO /x"),  # a line with no method is decoded and cut as well
        ("%41BC", "-", "ABC"),
        ("GET /index.php%00.jpg HTTP/1.1", "GET", "/index.php"),  # cut at a decoded NUL
    ],
)
def test_every_request_line_is_a_hit_read_as_goaccess_reads_it(
    request_line: str, method: str, path: str
) -> None:
    line = f'192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "{request_line}" 400 157 "-" "-"'
    seen = parse_combined(line)
    assert seen is not None
    assert (seen.method, seen.path, seen.status, seen.content_length) == (method, path, 400, 157)


@pytest.mark.parametrize(
    ("status", "read"),
    [("100", True), ("599", True), ("299", True), ("000", False), ("099", False), ("600", False)],
)
def test_a_status_outside_100_to_599_makes_the_line_unreadable(status: str, read: bool) -> None:
    # GoAccess counts such a line as failed; it was stored before, status 0 and all.
    line = f'192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" {status} 1 "-" "-"'
    enricher = RowEnricher(SETTINGS["everything"], None)
    assert (parse_combined(line) is not None) is read
    assert (enricher.combined_row(line) is not None) is read


@pytest.mark.parametrize(
    ("spaced", "path"),
    [
        ('192.0.2.1  - - [{t}] "GET /a HTTP/1.1" 200 1 "-" "-"', "/a"),
        ('192.0.2.1 -  - [{t}] "GET /a HTTP/1.1" 200 1 "-" "-"', "/a"),
        ('192.0.2.1 - -  [{t}] "GET /a HTTP/1.1" 200 1 "-" "-"', "/a"),
        ('192.0.2.1 - - [{t}] "GET /a HTTP/1.1" 200 1  "-"  "-"', "/a"),
        ('192.0.2.1 - - [{t}]  "GET /a HTTP/1.1" 200 1 "-" "-"', None),
        ('192.0.2.1 - - [{t}] "GET /a HTTP/1.1"  200 1 "-" "-"', None),
        ('192.0.2.1\t- - [{t}] "GET /a HTTP/1.1" 200 1 "-" "-"', None),
    ],
)
def test_fields_apart_by_more_than_one_space_are_read_where_goaccess_reads_them(
    spaced: str, path: str | None
) -> None:
    line = spaced.format(t="10/Oct/2026:13:55:36 +0000")
    seen = parse_combined(line)
    assert (seen.path if seen else None) == path
    row = RowEnricher(SETTINGS["everything"], None).combined_row(line)
    assert (row[ROW_COLUMNS.index("path")] if row else None) == path


def test_a_line_holding_a_nul_is_unreadable() -> None:
    # A damaged log (a crash leaves runs of NUL bytes); GoAccess cannot read such a line either.
    line = '192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /a\x00b HTTP/1.1" 200 1 "-" "-"'
    assert parse_combined(line) is None
    assert RowEnricher(SETTINGS["everything"], None).combined_row(line) is None


@pytest.fixture(scope="module")
def locator(tmp_path_factory: pytest.TempPathFactory) -> GeoLocator:
    """A locator over small real GeoIP databases."""
    data_dir = tmp_path_factory.mktemp("geoip")
    write_mmdb(slot_path(data_dir, LOCATION), "GeoIP2-City", CITY_NETWORKS)
    write_mmdb(slot_path(data_dir, ASN), "GeoLite2-ASN", ASN_NETWORKS)
    return GeoLocator(data_dir)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_every_line_gets_the_row_and_the_verdict_of_the_one_request_path(
    name: str, locator: GeoLocator
) -> None:
    settings = SETTINGS[name]
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    lines = ODD_LINES + accesslog.lines(1500, end, seed=3)
    enricher = RowEnricher(settings, locator)
    verdicts = set()
    for line in lines * 2:  # the second pass reads every part from the caches
        expected = reference(line, settings, locator)
        assert enricher.combined_row(line) == expected, line
        verdicts.add("row" if expected else repr(expected))
    assert "row" in verdicts and "None" in verdicts
    if name != "everything":
        assert "()" in verdicts  # this setting left some lines out


def test_stored_values_are_clipped_like_a_live_request(locator: GeoLocator) -> None:
    long = f'8.8.8.8 - - [{STAMP}] "GET /{"p" * 2000} HTTP/1.1" 200 1 "{"r" * 1500}" "{"a" * 700}"'
    row = RowEnricher(TrafficSettings(), locator).combined_row(long)
    assert row == reference(long, TrafficSettings(), locator)
    values = dict(zip(ROW_COLUMNS, row, strict=True))
    assert (len(values["path"]), len(values["referrer"]), len(values["user_agent"])) == (
        1024,
        1024,
        512,
    )
    assert values["country_code"] == "US" and values["asn"] == 15169


FIELD = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n"), max_size=40)


@fuzz(300)
@given(
    address=st.sampled_from(["192.0.2.1", "2001:db8::1", "8.8.8.8", "x", "::ffff:1.2.3.4"]),
    stamp=st.sampled_from([STAMP, "31/Dec/2026:23:59:59 +1400", "1/Oct/2026:1:2:3 +0000"]),
    method=st.sampled_from(["GET", "POST", "get", "HEAD"]),
    target=FIELD,
    status=st.integers(min_value=0, max_value=1200),
    referrer=FIELD,
    agent=FIELD,
    tail=FIELD,
)
def test_fuzzed_lines_agree_with_the_one_request_path(
    address: str,
    stamp: str,
    method: str,
    target: str,
    status: int,
    referrer: str,
    agent: str,
    tail: str,
) -> None:
    line = (
        f'{address} - - [{stamp}] "{method} {target} HTTP/1.1" {status} 10 "{referrer}" '
        f'"{agent}"{tail}'
    )
    settings = SETTINGS["everything"]
    assert RowEnricher(settings, None).combined_row(line) == reference(line, settings, None)
