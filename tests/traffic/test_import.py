"""``alertstation traffic import``: formats, gzip, idempotence, and agreement with GoAccess."""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import subprocess
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import ua_parser
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select
from ua_parser import BasicResolver, Parser, load_builtins

from alertstation.cli import main
from alertstation.traffic import agents, importer, reports
from alertstation.traffic.importer import import_lines, parse_combined
from alertstation.traffic.json_line import parse_json
from alertstation.traffic.period import Filters, Period
from alertstation.traffic.rows import MAX_BYTES, Observed, build_row
from alertstation.traffic.settings import save_settings
from alertstation.traffic.tables import web_request_logs
from alertstation.traffic.timestamps import END_TIME, FIRST_TIME
from tests.fuzz.fuzzing import fuzz
from tests.support import StationHarness as Station
from tests.traffic import accesslog
from tests.traffic.conftest import empty

pytestmark = pytest.mark.usefixtures("clean_log")
NGINX = (
    '203.0.113.9 - alice [10/Oct/2026:13:55:36 -0700] "GET /alerts/7?x=1 HTTP/2.0" 200 2326 '
    '"https://www.bing.com/search?q=nws+alert" "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) '
    'Gecko/20100101 Firefox/121.0"'
)


@pytest.fixture
def station_env(station: Station, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the command line at the test station's database, keys and data directory."""
    settings = station.app.station.settings
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("SECRET_KEY", settings.secret_key)
    monkeypatch.setenv("AUDIT_LEDGER_KEY", settings.audit_ledger_key)


def test_combined_and_json_lines_parse() -> None:
    seen = parse_combined(NGINX)
    assert seen is not None
    assert (seen.method, seen.path, seen.status, seen.content_length) == (
        "GET",
        "/alerts/7",
        200,
        2326,
    )
    assert seen.ts == datetime(2026, 10, 10, 20, 55, 36, tzinfo=UTC).timestamp()
    assert seen.client_ip == "203.0.113.9" and seen.source == "import"
    assert seen.referrer == "https://www.bing.com/search?q=nws+alert"
    common = parse_combined('192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "HEAD / HTTP/1.0" 304 -')
    assert common is not None and common.content_length is None and common.user_agent is None
    assert parse_combined("garbage") is None
    assert parse_combined(NGINX.replace("203.0.113.9", "example.com")) is None
    record = {
        "time_iso8601": "2026-10-10T20:55:36+00:00",
        "remote_addr": "2001:db8::1",
        "request": "POST /auth/login HTTP/1.1",
        "status": "401",
        "body_bytes_sent": "52",
        "request_time": "0.012",
        "http_user_agent": "curl/8.4.0",
    }
    seen = parse_json(json.dumps(record))
    assert seen is not None
    assert (seen.method, seen.path, seen.status, seen.content_length) == (
        "POST",
        "/auth/login",
        401,
        52,
    )
    assert seen.response_ms == pytest.approx(12.0)
    scanner = parse_json(json.dumps({**record, "request": "\\x16\\x03\\x01", "status": 400}))
    assert scanner is not None and (scanner.method, scanner.path) == ("-", "\\x16\\x03\\x01")
    encoded = parse_json(json.dumps({**record, "request": "GET /a%20b?c HTTP/2.0"}))
    assert encoded is not None and (encoded.method, encoded.path) == ("GET", "/a b")
    assert parse_json(json.dumps({**record, "time_iso8601": "yesterday"})) is None
    spelled = {  # other names nginx configurations give the same fields
        "time_local": "10/Oct/2026:13:55:36 -0700",
        "remote_addr": "203.0.113.9",
        "request_method": "GET",
        "request_uri": "/alerts?page=2",
        "status": 200,
        "http_referrer": "https://example.org/",
    }
    seen = parse_json(json.dumps(spelled))
    assert seen is not None and (seen.method, seen.path) == ("GET", "/alerts")
    assert seen.referrer == "https://example.org/"
    assert parse_json("[1, 2]") is None


@pytest.mark.usefixtures("station_env", "reading")
def test_import_is_idempotent_reads_gzip_and_reports_bad_lines(
    tmp_path: Path, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = accesslog.write(tmp_path / "access.log", 400)
    zipped = tmp_path / "access.log.1.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    first = plain.read_text().splitlines()[0]
    with plain.open("a") as handle:
        handle.write(first + "\n")  # the same line again: a second request, kept
        handle.write("this is not a log line\n")
    assert main(["traffic", "import", str(plain)]) == 0
    out = capsys.readouterr().out
    assert (
        "402 lines: 401 imported" in out
        and f"1 unreadable (first unreadable: line 402 of {plain})" in out
    )
    assert main(["traffic", "import", str(plain), str(zipped)]) == 0
    out = capsys.readouterr().out
    assert "802 lines: 0 imported, 801 already present" in out
    with engine.connect() as conn:
        count = conn.execute(select(func.count()).select_from(web_request_logs)).scalar_one()
        sources = set(conn.execute(select(web_request_logs.c.source).distinct()).scalars())
    assert count == 401 and sources == {"import"}


@pytest.mark.usefixtures("station_env", "reading")
def test_each_imported_row_stores_the_moment_of_its_time(tmp_path: Path, engine: Engine) -> None:
    # The batches leave their moments out (``importer.batch_columns``); the writer makes them.
    log = accesslog.write(tmp_path / "access.log", 900)
    assert main(["traffic", "import", str(log)]) == 0
    query = select(web_request_logs.c.occurred_at, web_request_logs.c.ts)
    with engine.connect() as conn:
        stored = conn.execute(query).all()
    assert len(stored) == 900
    assert [moment for moment, _ts in stored] == [
        datetime.fromtimestamp(ts, UTC) for _moment, ts in stored
    ]
    assert len({moment.minute for moment, _ts in stored}) > 1


@pytest.mark.usefixtures("station_env", "reading")
def test_a_damaged_gzip_file_keeps_the_lines_before_the_damage_and_fails_the_command(
    tmp_path: Path, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = accesslog.write(tmp_path / "access.log", 3_000)
    packed = gzip.compress(plain.read_bytes())
    cut = tmp_path / "access.log.2.gz"
    cut.write_bytes(packed[: len(packed) // 2])  # a rotation cut short
    wrong = tmp_path / "access.log.3.gz"
    wrong.write_bytes(plain.read_bytes()[:500])  # not gzipped at all
    assert main(["traffic", "import", str(cut), str(wrong)]) == 1
    out, err = capsys.readouterr()
    read = int(re.search(r"ends early after line (\d+) \(the lines before", err)[1])  # type: ignore[index]
    assert 0 < read < 3_000 and f"{read} lines: {read} imported" in out
    assert f"{wrong}: Not a gzipped file" in err
    assert main(["traffic", "import", str(plain)]) == 0  # the rest of the lines, nothing twice
    assert f"3000 lines: {3_000 - read} imported, {read} already present" in capsys.readouterr().out


@pytest.mark.usefixtures("station_env")
def test_rotated_logs_are_imported_oldest_first_whatever_order_they_are_given_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    lines = accesslog.lines(1_200, end, days=12)  # in time order
    # As logrotate leaves them: access.log the newest, then access.log.1, then .2.gz, ...
    names = ["access.log", "access.log.1", *(f"access.log.{n}.gz" for n in range(2, 12))]
    for number, name in enumerate(names):
        start = (11 - number) * 100
        text = "\n".join(lines[start : start + 100]).encode() + b"\n"
        (logs / name).write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    notes = logs / "access.log.notes"
    notes.write_text("no request here\n")
    given = sorted(logs.iterdir())  # as a shell glob lists them: .10.gz before .2.gz
    assert given[:3] == [
        logs / "access.log",
        logs / "access.log.1",
        logs / "access.log.10.gz",
    ]
    assert main(["traffic", "import", *map(str, given)]) == 1  # the notes: not one request
    out, err = capsys.readouterr()
    assert f"error: {notes}: no line was imported or already present" in err
    order = re.findall(r"^(.+): \d+ rows imported$", out, re.MULTILINE)
    assert order == [str(logs / name) for name in reversed(names)] + [str(notes)]
    assert f"1 unreadable (first unreadable: line 1 of {notes})" in out


def test_a_file_is_placed_by_its_first_readable_line(tmp_path: Path) -> None:
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    early, late = accesslog.lines(2, end, days=2)
    newer = tmp_path / "newer.log"
    newer.write_text("garbage\n" * 999 + late + "\n")
    older = tmp_path / "older.log"
    older.write_text("garbage\n" * 10 + early + "\n")
    hidden = tmp_path / "hidden.log"  # its first readable line is past the lines peeked at
    hidden.write_text("garbage\n" * importer.PEEK_LINES + early + "\n")
    missing = tmp_path / "missing.log"
    given = [hidden, missing, newer, older]
    assert importer.oldest_first(given, "combined") == [older, newer, hidden, missing]
    record = {"remote_addr": "192.0.2.1", "request": "GET / HTTP/1.1", "status": 200}
    stamped = []
    for name, moment in (("b.json", "2026-01-02T00:00:00Z"), ("a.json", "2026-01-01T00:00:00Z")):
        stamped.append(tmp_path / name)
        stamped[-1].write_text(json.dumps({**record, "time": moment}) + "\n")
    assert importer.oldest_first(stamped, "json") == stamped[::-1]


@pytest.mark.usefixtures("station_env")
def test_an_import_on_the_pure_python_agent_resolver_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = accesslog.write(tmp_path / "access.log", 20)
    if agents.resolver_name() != agents.SLOW_RESOLVER:
        assert main(["traffic", "import", str(log)]) == 0
        assert "ua-parser-rs" not in capsys.readouterr().err
    monkeypatch.setattr(ua_parser, "parser", Parser(BasicResolver(load_builtins())))
    assert main(["traffic", "import", str(log)]) == 0
    assert "pure-Python resolver" in capsys.readouterr().err
    assert main(["traffic", "import", str(tmp_path / "missing.log")]) != 0


def test_json_fields_are_cut_at_a_nul_where_they_are_read() -> None:
    # A JSON log may escape a NUL into any field, or give a number where text belongs; the
    # parser hands on text only, each cut at its first NUL as the live recorder's rows are.
    record = {
        "time_iso8601": "2026-10-10T20:55:36+00:00",
        "remote_addr": "192.0.2.1",
        "method": "GE\u0000T",
        "uri": "/a%00b",
        "status": 200,
        "http_user_agent": "curl\u0000/8",
        "http_referer": 7,
        "http_accept_language": "fr\u0000-CA",
    }
    seen = parse_json(json.dumps(record))
    assert seen is not None
    assert (seen.method, seen.path, seen.user_agent, seen.referrer, seen.accept_language) == (
        "GE",
        "/a",
        "curl",
        "7",
        "fr",
    )


def goaccess_report(log: Path, out: Path, *, query_strings: bool = False) -> dict:
    """Return GoAccess's JSON report on ``log``; with ``query_strings``, as GoAccess runs by
    default (each query string its own request), else with ``--no-query-string``."""
    command = [shutil.which("goaccess") or "goaccess", str(log), "--log-format=COMBINED"]
    if not query_strings:
        command.append("--no-query-string")
    subprocess.run(
        [*command, "--no-progress", "-o", str(out)], check=True, timeout=300, capture_output=True
    )
    return json.loads(out.read_bytes().decode("utf-8", "replace"))  # raw bytes of %FF-style paths


def their_paths(report: dict) -> dict[str, int]:
    """Return the hits of each request GoAccess reports, a query string cut off as the station
    cuts it from a path (at the first ``?``, unless the ``?`` comes first)."""
    found: Counter[str] = Counter()
    for panel in ("requests", "static_requests", "not_found"):
        for item in report[panel]["data"]:
            text = item["data"]
            mark = text.find("?", 1)
            found[text[:mark] if mark > 0 else text] += item["hits"]["count"]
    return dict(found)


@pytest.mark.skipif(shutil.which("goaccess") is None, reason="needs goaccess (install-test-deps)")
@pytest.mark.usefixtures("station_env")
def test_hits_status_codes_paths_and_bandwidth_agree_with_goaccess(
    tmp_path: Path, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a log with what an internet-facing proxy also logs (bad request lines, scanners,
    encoded targets, API calls, loopback checks), imported with ``--all``."""
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    log = accesslog.write(tmp_path / "access.log", 3000, end, odd=True)
    theirs = goaccess_report(log, tmp_path / "goaccess.json")
    assert main(["traffic", "import", str(log)]) == 0
    left_out = capsys.readouterr().out
    assert "left out by the settings" in left_out and "--all imports" in left_out  # API, loopback
    assert main(["traffic", "import", "--all", str(log)]) == 0
    unreadable = int(re.search(r"(\d+) unreadable", capsys.readouterr().out)[1])  # type: ignore[index]
    general = theirs["general"]
    period = Period((end - timedelta(days=31)).date(), end.date())
    with engine.connect() as conn:
        summary = reports.summary(conn, period, Filters())
        where = reports.conditions(period, Filters())
        statuses = reports.top(conn, where, [web_request_logs.c.status], ["status"], 1000)
        paths = reports.top(conn, where, [web_request_logs.c.path], ["path"], 1000)
    # GoAccess's total counts the lines it could not read (a client logged by name) as failed.
    assert unreadable == general["failed_requests"] > 0
    assert summary["hits"] == general["valid_requests"] == 3000 - unreadable
    assert general["total_requests"] == 3000
    assert summary["bandwidth_bytes"] == general["bandwidth"]
    odd = {path for path, _hits in their_paths(theirs).items() if path not in accesslog.PATHS}
    assert {"-", "PRI * HTTP/2.0", "/a b/~user", "/api/alerts", "/index.php", "ER /x"} <= odd
    accesslog.assert_statuses_agree({row["status"]: row["hits"] for row in statuses}, theirs)
    assert accesslog.goaccess_statuses(theirs)[1] > 0  # a code GoAccess has no name for was there
    assert {row["path"]: row["hits"] for row in paths} == their_paths(theirs)
    # GoAccess run as it is by default lists each query string apart; cut off, the same paths.
    with_queries = goaccess_report(log, tmp_path / "queries.json", query_strings=True)
    assert any("?" in item["data"][1:] for item in with_queries["requests"]["data"])
    assert with_queries["general"]["valid_requests"] == general["valid_requests"]
    assert with_queries["general"]["bandwidth"] == general["bandwidth"]
    assert their_paths(with_queries) == their_paths(theirs)


MONTHS = ["Jan", "Feb", "Jun", "Dec", "Foo"]
#: Numbers a JSON log may carry where a time, a size or a duration goes.
NUMBERS = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -1, 2**40, 2**40 + 1, 2**63, 1.7e12, 253_402_300_800, 1e400]),
    st.sampled_from(["1e400", "-1e400", "nan", "0x10", "", "1" * 40]),
)


@st.composite
def combined_lines(draw: st.DrawFn) -> str:
    """A combined line with any year, day, offset and size (digits of any length)."""
    when = (
        f"{draw(st.integers(0, 39)):02d}/{draw(st.sampled_from(MONTHS))}/"
        f"{draw(st.integers(0, 9999)):04d}:{draw(st.integers(0, 24)):02d}:00:00 "
        f"{draw(st.sampled_from('+-'))}{draw(st.integers(0, 2359)):04d}"
    )
    size = draw(st.one_of(st.just("-"), st.text("0123456789", min_size=1, max_size=30)))
    return f'198.51.100.7 - - [{when}] "GET /x HTTP/1.1" 200 {size} "-" "curl/8.4.0"'


@st.composite
def json_lines(draw: st.DrawFn) -> str:
    """A JSON line as nginx, Caddy or Traefik write it, whose time, size and duration are any
    number (or numeric text)."""
    time, size, duration = draw(NUMBERS), draw(NUMBERS), draw(NUMBERS)
    record = draw(
        st.sampled_from(
            [
                {"remote_addr": "2001:db8::7", "request": "GET /x HTTP/1.1", "status": 200,
                 "time": time, "body_bytes_sent": size, "request_time": duration},
                {"request": {"client_ip": "2001:db8::7", "method": "GET", "uri": "/x"},
                 "status": 200, "ts": time, "size": size, "duration": duration},
                {"ClientHost": "2001:db8::7", "RequestMethod": "GET", "RequestPath": "/x",
                 "DownstreamStatus": 200, "StartUTC": time, "DownstreamContentSize": size,
                 "Duration": duration},
            ]
        )
    )  # fmt: skip
    text = json.dumps(record)  # Python writes the integers past 64 bits and 1e400 as Infinity
    return text.replace("Infinity", "1e400")


@fuzz(60)
@given(lines=st.lists(st.one_of(combined_lines(), json_lines()), min_size=1, max_size=8))
def test_values_a_row_cannot_hold_are_refused_or_unknown_and_never_stop_an_import(
    engine: Engine, lines: list[str]
) -> None:
    empty(engine)
    for log_format in ("combined", "json"):
        chosen = [line for line in lines if line.startswith("{") == (log_format == "json")]
        result = import_lines(  # no clock: nothing is rolled up (the times span millennia)
            engine, iter(line.encode() for line in chosen), log_format, None, every_line=True
        )
        counted = (
            result.imported + result.duplicates + result.filtered + result.unparsable
            + result.too_old + result.recorded_live
        )  # fmt: skip
        assert result.lines == len(chosen) == counted
    query = select(
        web_request_logs.c.ts,
        web_request_logs.c.content_length,
        web_request_logs.c.response_ms,
        web_request_logs.c.occurred_at,
    )
    with engine.connect() as conn:
        for ts, size, ms, moment in conn.execute(query):
            assert FIRST_TIME <= ts < END_TIME
            assert moment == datetime.fromtimestamp(ts, UTC)  # made again by the writer
            assert size is None or 0 <= size <= MAX_BYTES
            assert ms is None or 0 <= ms < float("inf")


def test_lines_from_the_time_the_station_recorded_its_own_requests_are_left_out(
    engine: Engine,
) -> None:
    now = datetime.now(UTC)
    base = int((now - timedelta(days=2)).timestamp())
    with engine.begin() as conn:  # two requests the station recorded itself, an hour apart
        for ts in (base + 0.6, base + 3600.6):
            seen = Observed(ts, "GET", "/", 200, 4.0, 10, "192.0.2.7", None, None, None, False)
            conn.execute(web_request_logs.insert().values(build_row(seen, None)))
    line = '198.51.100.1 - - [{}] "GET /x HTTP/1.1" 200 10 "-" "curl/8"'
    # Before, the second before, the same second as, and after the first recorded request.
    moments = (base - 3600, base - 1, base, base + 1800, base + 7200)
    lines = [
        line.format(datetime.fromtimestamp(ts, UTC).strftime(accesslog.TIME)) for ts in moments
    ]

    result = import_lines(engine, iter(x.encode() for x in lines), "combined", None, now=now)
    assert (result.imported, result.recorded_live) == (2, 3)  # recording on: on without end
    assert "3 from the time the station recorded its own requests" in result.as_text()
    with engine.begin() as conn:
        save_settings(conn, {"enabled": False}, now)
    result = import_lines(engine, iter(x.encode() for x in lines), "combined", None, now=now)
    assert (result.imported, result.duplicates, result.recorded_live) == (1, 2, 2)
    with engine.connect() as conn:
        stored = conn.execute(select(web_request_logs.c.ts).order_by("ts")).scalars().all()
    assert stored == [base - 3600, base - 1, base + 0.6, base + 3600.6, base + 7200]


def test_an_oversized_byte_count_is_unknown_and_an_unstorable_time_unreadable(
    engine: Engine,
) -> None:
    now = datetime.now(UTC)  # one clock for every line and the import that rolls up
    line = '198.51.100.1 - - [{}] "GET /x HTTP/1.1" 200 {} "-" "curl/8"'
    first, second = ((now - timedelta(days=3, seconds=s)).strftime(accesslog.TIME) for s in (2, 1))
    lines = [
        line.format(first, 2**63),  # over 1 TiB: stored as unknown
        line.format(second, MAX_BYTES),
        line.format("31/Dec/9999:23:59:59 -2359", 10),  # in year 10000
        line.format("01/Jan/0001:00:00:00 +2359", 10),  # in year 0
        json.dumps({"remote_addr": "192.0.2.1", "request": "GET /ms HTTP/1.1", "status": 200,
                    "time": 1.7e12, "body_bytes_sent": -5}),  # milliseconds, not seconds
    ]  # fmt: skip
    result = import_lines(engine, iter(x.encode() for x in lines[:4]), "combined", None)
    assert (result.imported, result.unparsable, result.first_bad_line) == (2, 2, 3)
    assert import_lines(engine, iter([lines[4].encode()]), "json", None).unparsable == 1
    with engine.connect() as conn:
        sizes = conn.execute(select(web_request_logs.c.content_length).order_by("ts")).scalars()
        assert list(sizes) == [None, MAX_BYTES]
    old = line.format("01/Jan/1970:00:00:01 +0000", 10)
    recent = line.format((now - timedelta(days=2)).strftime(accesslog.TIME), 10)
    result = import_lines(engine, iter([old.encode(), recent.encode()]), "combined", None, now=now)
    assert (result.too_old, result.imported) == (1, 1)
    assert "1 older than the retention (90 days) left out" in result.as_text()


def test_impossible_times_are_unreadable_not_rolled_over(engine: Engine) -> None:
    line = '198.51.100.1 - - [{}] "GET /x HTTP/1.1" 200 10 "-" "curl/8"'
    times = [
        "10/Oct/2026:13:55:36 +0000",  # readable, and its minute is remembered
        "10/Oct/2026:13:55:99 +0000",  # second 99 of that same minute
        "31/Feb/2026:10:00:00 +0000",
        "31/Apr/2026:10:00:00 +0000",
        "29/Feb/2025:10:00:00 +0000",
        "00/Oct/2026:10:00:00 +0000",
        "10/Oct/2026:24:00:00 +0000",
        "10/Oct/2026:13:60:00 +0000",
        "10/Oct/2026:13:55:36 +0075",
        "29/Feb/2024:10:00:00 +0000",  # a leap day: readable
    ]
    lines = [line.format(moment).encode() for moment in times]
    result = import_lines(engine, iter(lines), "combined", None)
    assert (result.imported, result.unparsable, result.first_bad_line) == (2, 8, 2)
    with engine.connect() as conn:
        stored = conn.execute(select(web_request_logs.c.ts).order_by("ts")).scalars().all()
    assert stored == [
        datetime(2024, 2, 29, 10, tzinfo=UTC).timestamp(),
        datetime(2026, 10, 10, 13, 55, 36, tzinfo=UTC).timestamp(),
    ]


class _Reads:
    """A binary stream that notes the longest piece it handed out."""

    def __init__(self, data: bytes) -> None:
        self.stream = io.BytesIO(data)
        self.longest = 0

    def readline(self, size: int = -1) -> bytes:
        piece = self.stream.readline(size)
        self.longest = max(self.longest, len(piece))
        return piece


def test_a_line_over_64_kib_is_unreadable_and_never_held_whole(
    engine: Engine, tmp_path: Path
) -> None:
    good = accesslog.write(tmp_path / "access.log", 2).read_bytes().splitlines(keepends=True)
    huge = b"198.51.100.1 - - " + b"x" * (4 * importer.MAX_LINE_BYTES) + b"\n"
    edge = b"y" * importer.MAX_LINE_BYTES + b"\n"  # at the limit: read as a line (unreadable)
    reader = _Reads(good[0] + huge + edge + good[1])
    lines = list(importer.bounded_lines(reader))  # type: ignore[arg-type]
    assert lines == [good[0], importer.OVERLONG_LINE, edge, good[1]]
    assert reader.longest <= importer.MAX_LINE_BYTES + 1
    result = import_lines(engine, iter(lines), "combined", None)
    assert (result.imported, result.unparsable, result.first_bad_line) == (2, 2, 2)
