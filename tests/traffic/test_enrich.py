"""The access-log import's cached enrichment gives, line by line, the row a live request gets.

``RowEnricher`` works out each distinct address, agent, referrer and request once per import;
``rows.build_row`` is the recorder's one-request path. Both must store the same values, and the
settings must leave out the same lines, for every line: generated logs, odd lines, and fuzzed
ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.kernel_loader import load_kernel
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


Reader = Callable[[RowEnricher], Callable[[str], Any]]
KERNEL = load_kernel("combinedrow")


@pytest.fixture(
    params=[
        "combined_row",
        pytest.param(
            "kernel",
            marks=pytest.mark.skipif(KERNEL is None, reason="the combinedrow kernel is not built"),
        ),
    ]
)
def reader(request: pytest.FixtureRequest) -> Reader:
    """What reads an enricher's lines: ``combined_row``, or the compiled reader
    (``combined_rows``) over the same caches."""
    if request.param == "kernel":
        return lambda enricher: enricher.combined_rows()
    return lambda enricher: enricher.combined_row


def reference(line: str, settings: TrafficSettings, locator: Locator | None) -> Any:
    """The one-request path: parse, apply the settings as documented, then ``build_row``; the
    moment is left to the writer (``occurred_at`` None)."""
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
    row = build_row(seen, locator) | {"occurred_at": None}
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
def test_a_status_outside_100_to_599_makes_the_line_unreadable(
    status: str, read: bool, reader: Reader
) -> None:
    # GoAccess counts such a line as failed; it was stored before, status 0 and all.
    line = f'192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" {status} 1 "-" "-"'
    enricher = RowEnricher(SETTINGS["everything"], None)
    assert (parse_combined(line) is not None) is read
    assert (reader(enricher)(line) is not None) is read


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
    spaced: str, path: str | None, reader: Reader
) -> None:
    line = spaced.format(t="10/Oct/2026:13:55:36 +0000")
    seen = parse_combined(line)
    assert (seen.path if seen else None) == path
    row = reader(RowEnricher(SETTINGS["everything"], None))(line)
    assert (row[ROW_COLUMNS.index("path")] if row else None) == path


def test_a_line_holding_a_nul_is_unreadable(reader: Reader) -> None:
    # A damaged log (a crash leaves runs of NUL bytes); GoAccess cannot read such a line either.
    line = '192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /a\x00b HTTP/1.1" 200 1 "-" "-"'
    assert parse_combined(line) is None
    assert reader(RowEnricher(SETTINGS["everything"], None))(line) is None


@pytest.fixture(scope="module")
def locator(tmp_path_factory: pytest.TempPathFactory) -> GeoLocator:
    """A locator over small real GeoIP databases."""
    data_dir = tmp_path_factory.mktemp("geoip")
    write_mmdb(slot_path(data_dir, LOCATION), "GeoIP2-City", CITY_NETWORKS)
    write_mmdb(slot_path(data_dir, ASN), "GeoLite2-ASN", ASN_NETWORKS)
    return GeoLocator(data_dir)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_every_line_gets_the_row_and_the_verdict_of_the_one_request_path(
    name: str, locator: GeoLocator, reader: Reader
) -> None:
    settings = SETTINGS[name]
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    lines = ODD_LINES + accesslog.lines(1500, end, seed=3)
    read = reader(RowEnricher(settings, locator))
    verdicts = set()
    for line in lines * 2:  # the second pass reads every part from the caches
        expected = reference(line, settings, locator)
        assert read(line) == expected, line
        verdicts.add("row" if expected else repr(expected))
    assert "row" in verdicts and "None" in verdicts
    if name != "everything":
        assert "()" in verdicts  # this setting left some lines out


def test_stored_values_are_clipped_like_a_live_request(locator: GeoLocator, reader: Reader) -> None:
    long = f'8.8.8.8 - - [{STAMP}] "GET /{"p" * 2000} HTTP/1.1" 200 1 "{"r" * 1500}" "{"a" * 700}"'
    row = reader(RowEnricher(TrafficSettings(), locator))(long)
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
    enricher = RowEnricher(settings, None)
    expected = reference(line, settings, None)
    assert enricher.combined_row(line) == expected
    if KERNEL is not None:
        read = enricher.combined_rows()
        assert read(line) == expected
        assert read(line) == expected  # from the caches, and in the minute of the line before


TWO_DIGITS = st.integers(0, 99).map(lambda n: f"{n:02d}")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
# Mostly well formed (read by the kernel itself), else odd (left to ``parse_log_time``).
STAMPS = st.builds(
    "{}/{}/{}:{}:{}:{} {}{}{}".format,
    st.one_of(st.integers(1, 31).map(lambda n: f"{n:02d}"), TWO_DIGITS, st.just(" 1")),
    st.one_of(st.sampled_from(MONTHS), st.sampled_from(["jan", "Foo", "Ja"])),
    st.one_of(
        st.integers(1970, 2200).map(lambda n: f"{n:04d}"),
        st.integers(0, 9999).map(lambda n: f"{n:04d}"),
        st.sampled_from(["197", "+999", "19_0", "٢٠٢٦"]),
    ),
    st.one_of(st.integers(0, 23).map(lambda n: f"{n:02d}"), TWO_DIGITS),
    TWO_DIGITS,
    st.one_of(TWO_DIGITS, st.sampled_from(["6", "٣"])),
    st.one_of(st.sampled_from("+-"), st.sampled_from([" ", "x"])),
    st.one_of(st.integers(0, 14).map(lambda n: f"{n:02d}"), TWO_DIGITS),
    TWO_DIGITS,
)


def assert_kernel_reads_as_twin_and_reference(stamps: list[str]) -> None:
    """Each time, then again with other seconds (in the minute of the line before), read by the
    kernel as by ``combined_row`` and the one-request path."""
    settings = SETTINGS["everything"]
    enricher = RowEnricher(settings, None)
    read = enricher.combined_rows()
    for stamp in stamps:
        for seconds in ("", "07", "59", "٣٣"):
            moment = stamp[:18] + seconds + stamp[20:] if seconds else stamp
            line = f'192.0.2.1 - - [{moment}] "GET /a HTTP/1.1" 200 1 "-" "-"'
            expected = reference(line, settings, None)
            assert enricher.combined_row(line) == expected, line
            assert read(line) == expected, line


@pytest.mark.skipif(KERNEL is None, reason="the combinedrow kernel is not built")
def test_every_month_of_common_leap_and_edge_years_is_read_by_the_kernel_as_by_its_twin() -> None:
    stamps = [
        f"{day:02d}/{month}/{year:04d}:{clock} {zone}"
        for year in (1969, 1970, 2000, 2023, 2024, 2100, 9999)
        for month in MONTHS
        for day in (0, 1, 28, 29, 30, 31, 99)
        for clock, zone in (
            ("00:00:00", "+0000"),
            ("23:59:59", "-1400"),
            ("12:30:15", "+0530"),
            ("10:00:00", "-1400"),  # on 31 Dec 9999: the first time past the stored ones
        )
    ]
    assert_kernel_reads_as_twin_and_reference(stamps)


@pytest.mark.skipif(KERNEL is None, reason="the combinedrow kernel is not built")
def test_a_time_with_any_one_character_changed_is_read_by_the_kernel_as_by_its_twin() -> None:
    stamp = "29/Feb/2024:13:55:36 -0700"
    changed = [
        stamp[:place] + other + stamp[place + 1 :]
        for place in range(len(stamp))
        for other in ("x", " ", "/", ":", "0", "9", "+", "٣")
    ]
    assert_kernel_reads_as_twin_and_reference(changed)


@pytest.mark.skipif(KERNEL is None, reason="the combinedrow kernel is not built")
@fuzz(400)
@given(stamps=st.lists(STAMPS, min_size=1, max_size=6))
def test_fuzzed_times_are_read_by_the_kernel_as_by_its_twin_and_the_one_request_path(
    stamps: list[str],
) -> None:
    # Times of any day, month, year, clock and offset, well formed or not.
    assert_kernel_reads_as_twin_and_reference(stamps)


@pytest.mark.skipif(KERNEL is None, reason="the combinedrow kernel is not built")
@pytest.mark.parametrize(
    "size", ["0", "1099511627776", "1099511627777", "999999999999999999", "9" * 19, "٣", "-"]
)
def test_sizes_are_stored_by_the_kernel_as_by_its_twin(size: str) -> None:
    line = f'192.0.2.1 - - [{STAMP}] "GET /a HTTP/1.1" 200 {size} "-" "-"'
    enricher = RowEnricher(SETTINGS["everything"], None)
    expected = reference(line, SETTINGS["everything"], None)
    assert enricher.combined_rows()(line) == enricher.combined_row(line) == expected
