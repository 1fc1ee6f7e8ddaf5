"""Import a reverse proxy's access log into the request log, with the recorder's enrichment.

Formats: ``combined`` (nginx and Apache combined, and common format without referrer and user
agent) and ``json`` (one object a line, nginx-style field names). Files ending in ``.gz`` are
read gzipped. Each line is keyed by the digest of its text and its occurrence number within the
file (two identical lines are two requests), stored in ``import_key``: importing the same file
twice adds nothing.

The collection settings apply as for live requests, except ``enabled`` and
``authenticated_only`` (an access log does not say who was signed in): internal addresses,
skipped paths, API calls and bots are left out as configured, and ``anonymize_ip`` masks
addresses before they are stored.
"""

from __future__ import annotations

import calendar
import gzip
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

import orjson
from sqlalchemy import Engine
from sqlalchemy.dialects import postgresql, sqlite

from alertstation.db.engine import begin_write
from alertstation.traffic import addresses, rollups
from alertstation.traffic.agents import parse_agent
from alertstation.traffic.maintenance import rows_changed
from alertstation.traffic.recorder import should_record
from alertstation.traffic.rows import Locator, Observed, build_row
from alertstation.traffic.settings import TrafficSettings, load_settings
from alertstation.traffic.tables import web_request_logs

FORMATS = ("combined", "json")
BATCH = 500
_COMBINED = re.compile(
    r'^(?P<ip>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<method>[A-Z]{1,16}) (?P<target>\S+)'
    r'(?: [^"]*)?" (?P<status>\d{3}) (?P<bytes>\d+|-)'
    r'(?: "(?P<referrer>(?:[^"\\]|\\.)*)" "(?P<agent>(?:[^"\\]|\\.)*)")?'
)


@dataclass
class ImportResult:
    """What an import did."""

    lines: int = 0
    imported: int = 0
    duplicates: int = 0
    filtered: int = 0
    unparsable: int = 0
    first_bad_line: int | None = None
    oldest_hour: int | None = field(default=None, repr=False)

    def as_text(self) -> str:
        """Return a one-line summary."""
        text = (
            f"{self.lines} lines: {self.imported} imported, {self.duplicates} already present, "
            f"{self.filtered} left out by the settings, {self.unparsable} unreadable"
        )
        if self.first_bad_line is not None:
            text += f" (first unreadable: line {self.first_bad_line})"
        return text


_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


@lru_cache(maxsize=1024)
def _day_start(year: int, month: int, day: int) -> int:
    return calendar.timegm((year, month, day, 0, 0, 0))


def _timestamp(text: str) -> float:
    """Return the epoch time of ``10/Oct/2026:13:55:36 -0700``; ValueError when malformed."""
    if len(text) != 26 or text[2] != "/" or text[6] != "/" or text[11] != ":":
        return datetime.strptime(text, "%d/%b/%Y:%H:%M:%S %z").timestamp()
    month = _MONTHS.get(text[3:6])
    if month is None:
        raise ValueError(f"bad month in {text!r}")
    try:
        start = _day_start(int(text[7:11]), month, int(text[0:2]))
        clock = int(text[12:14]) * 3600 + int(text[15:17]) * 60 + int(text[18:20])
        offset = int(text[22:24]) * 3600 + int(text[24:26]) * 60
    except ValueError:
        raise ValueError(f"bad time {text!r}") from None
    sign = {"+": 1, "-": -1}.get(text[21])
    if sign is None or text[20] != " " or not 0 <= clock < 86_400:
        raise ValueError(f"bad time {text!r}")
    return float(start + clock - sign * offset)


def _unescape(value: str | None) -> str | None:
    if not value or value == "-":
        return None
    return value.replace('\\"', '"').replace("\\\\", "\\")


def _split_target(target: str) -> str:
    path = target.split("?", 1)[0].split("#", 1)[0]
    if path.startswith(("http://", "https://")):  # an absolute-form request target
        path = "/" + path.split("://", 1)[1].partition("/")[2]
    return path or "/"


def parse_combined(line: str) -> Observed | None:
    """Return the request of one combined/common log line, or None when it is not one."""
    match = _COMBINED.match(line)
    if match is None:
        return None
    ip = addresses.parse(match["ip"])
    if ip is None:
        return None
    try:
        ts = _timestamp(match["time"])
    except ValueError:
        return None
    size = match["bytes"]
    return Observed(
        ts=ts,
        method=match["method"],
        path=_split_target(match["target"]),
        status=int(match["status"]),
        response_ms=None,
        content_length=None if size == "-" else int(size),
        client_ip=str(ip),
        user_agent=_unescape(match["agent"]),
        referrer=_unescape(match["referrer"]),
        accept_language=None,
        authenticated=False,
        source="import",
    )


def _json_time(record: dict[str, Any]) -> float | None:
    for name in ("time_iso8601", "time", "timestamp", "@timestamp"):
        value = record.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            return moment.timestamp() if moment.tzinfo else None
    value = record.get("time_local")
    if isinstance(value, str):
        try:
            return _timestamp(value)
        except ValueError:
            return None
    return None


def _first(record: dict[str, Any], *names: str) -> Any:
    for name in names:
        if record.get(name) not in (None, "", "-"):
            return record[name]
    return None


def parse_json(line: str) -> Observed | None:
    """Return the request of one JSON log line, or None when it is not one."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    ip = addresses.parse(str(_first(record, "remote_addr", "ip", "client_ip") or ""))
    ts = _json_time(record)
    method, target = _first(record, "method", "request_method"), _first(record, "path", "uri")
    if (method is None or target is None) and isinstance(record.get("request"), str):
        parts = record["request"].split(" ")
        if len(parts) >= 2:
            method, target = parts[0], parts[1]
    try:
        status = int(_first(record, "status") or 0)
        size = _first(record, "body_bytes_sent", "bytes", "bytes_sent")
        seconds = _first(record, "request_time", "duration")
        length = int(size) if size is not None else None
        response_ms = float(seconds) * 1000 if seconds is not None else None
    except (TypeError, ValueError):
        return None
    if ip is None or ts is None or not method or not target or not 100 <= status <= 599:
        return None
    return Observed(
        ts=ts,
        method=str(method)[:16],
        path=_split_target(str(target)),
        status=status,
        response_ms=response_ms,
        content_length=length,
        client_ip=str(ip),
        user_agent=_first(record, "http_user_agent", "user_agent"),
        referrer=_first(record, "http_referer", "referrer", "referer"),
        accept_language=_first(record, "http_accept_language", "accept_language"),
        authenticated=False,
        source="import",
    )


PARSERS: dict[str, Callable[[str], Observed | None]] = {
    "combined": parse_combined,
    "json": parse_json,
}


def _kept(seen: Observed, settings: TrafficSettings) -> Observed | None:
    live_rules = TrafficSettings(
        exclude_internal=settings.exclude_internal,
        log_api_requests=settings.log_api_requests,
        skip_paths=settings.skip_paths,
    )
    if not should_record(live_rules, seen.path, seen.client_ip, True):
        return None
    if settings.exclude_bots and seen.user_agent and parse_agent(seen.user_agent).is_bot:
        return None
    if settings.anonymize_ip:
        return replace(seen, client_ip=addresses.mask_address(seen.client_ip))
    return seen


class _CachedLocator:
    """Remember each address's GeoIP answers for the length of one import."""

    def __init__(self, locator: Locator | None) -> None:
        self._locator = locator
        self._places: dict[str, Any] = {}
        self._networks: dict[str, Any] = {}

    def locate(self, address: str) -> dict[str, Any] | None:
        if address not in self._places:
            self._places[address] = self._locator.locate(address) if self._locator else None
        return self._places[address]

    def asn(self, address: str) -> dict[str, Any] | None:
        if address not in self._networks:
            self._networks[address] = self._locator.asn(address) if self._locator else None
        return self._networks[address]


def import_lines(
    engine: Engine,
    lines: Iterator[bytes],
    log_format: str,
    locator: Locator | None,
    result: ImportResult | None = None,
    progress: Callable[[], None] = lambda: None,
) -> ImportResult:
    """Import the lines of one file; return (or add to) the counts."""
    parse = PARSERS[log_format]
    result = result if result is not None else ImportResult()
    with engine.connect() as conn:
        settings = load_settings(conn)
    cached = _CachedLocator(locator)
    seen_lines: Counter[bytes] = Counter()
    batch: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        progress()
        line = raw.rstrip(b"\r\n")
        if not line.strip():
            continue
        result.lines += 1
        digest = hashlib.sha256(line).digest()
        seen_lines[digest] += 1
        observed = parse(line.decode("utf-8", "replace"))
        if observed is None:
            result.unparsable += 1
            result.first_bad_line = result.first_bad_line or number
            continue
        kept = _kept(observed, settings)
        if kept is None:
            result.filtered += 1
            continue
        key = f"{digest[:24].hex()}:{seen_lines[digest]}"
        batch.append(build_row(replace(kept, import_key=key), cached))
        if len(batch) >= BATCH:
            _write(engine, batch, result)
            batch = []
    if batch:
        _write(engine, batch, result)
    return result


def _write(engine: Engine, rows: list[dict[str, Any]], result: ImportResult) -> None:
    with begin_write(engine) as conn:
        insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        statement = insert(web_request_logs).on_conflict_do_nothing(index_elements=["import_key"])
        # With RETURNING, SQLAlchemy sends the batch as multi-row INSERTs from one cached
        # compiled statement ("insertmanyvalues"); the rows returned are the ones inserted.
        returned = conn.execute(statement.returning(web_request_logs.c.id), rows)
        added = len(returned.all())
        oldest = min(row["hour"] for row in rows)
        if added:
            rollups.invalidate_from(conn, oldest)
            rows_changed(conn)
            result.oldest_hour = min(oldest, result.oldest_hour or oldest)
    result.imported += added
    result.duplicates += len(rows) - added


def import_file(
    engine: Engine,
    path: Path,
    log_format: str,
    locator: Locator | None,
    result: ImportResult | None = None,
    on_bytes: Callable[[int], None] = lambda done: None,
) -> ImportResult:
    """Import one access-log file (gzipped when it ends in ``.gz``)."""
    if log_format not in FORMATS:
        raise ValueError(f"unknown format {log_format!r}; choose one of {', '.join(FORMATS)}")
    with path.open("rb") as raw:
        reader: IO[bytes] = gzip.GzipFile(fileobj=raw) if path.suffix == ".gz" else raw
        counter = [0]

        def progress() -> None:
            counter[0] += 1
            if counter[0] % 10_000 == 0:
                on_bytes(raw.tell())

        result = import_lines(engine, iter(reader), log_format, locator, result, progress)
        on_bytes(raw.tell())
    return result
