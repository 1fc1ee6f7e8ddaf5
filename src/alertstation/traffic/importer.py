"""Import a reverse proxy's access log into the request log, with the recorder's enrichment.

Formats: ``combined`` (nginx and Apache combined, and common format without referrer and user
agent) and ``json`` (one object a line, as nginx, Caddy or Traefik write it:
``traffic.json_line``). Files ending in ``.gz`` are read gzipped. Each line is keyed by the
digest of its text and its occurrence number within the file (two identical lines are two
requests), stored in ``import_key``: importing the same file twice adds nothing.

Values a row cannot hold are checked at the edge: a time outside 1970 .. 9999 makes a line
unreadable (``timestamps.storable_time``); a response size over 1 TiB or below zero, or a
response time that is negative or not finite, is stored as unknown (``rows.stored_bytes``,
``rows.stored_ms``). With the clock's ``now``, a line older than the retention
(``retention_days``, from the hour the hourly prune keeps) is counted and left out: the next
prune would delete it. With ``keep_history`` such rows are stored all the same, and counted: the
summary says the next prune deletes them.

A referrer on one of the site's own hosts (``site_hosts``, the setting of that name unless
given) is a self-referral, as a live request's referrer on its own Host is: stored without a
referrer domain, search engine or phrase.

The collection settings apply as for live requests, except ``enabled`` and
``authenticated_only`` (an access log does not say who was signed in): internal addresses,
skipped paths, API calls and bots are left out as configured, and ``anonymize_ip`` masks
addresses before they are stored. Lines from the time the station recorded its own requests
are counted and left out (``live_span``): the proxy logged those requests too.

Several files are one import (``LogImport``), best taken oldest first (``oldest_first``): the
rollups are stored once, after the last.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from itertools import islice
from math import floor, inf
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Connection, Engine, and_, func, select

from alertstation import collector
from alertstation.db.bulk import BulkInsert
from alertstation.db.columns import transpose
from alertstation.db.engine import begin_write
from alertstation.db.moments import EpochSeconds
from alertstation.traffic import addresses, child_reader, rollups
from alertstation.traffic.combined_line import split_combined
from alertstation.traffic.enrich import (
    FILTERED,
    HOUR_INDEX,
    MAX_STATUS,
    MIN_STATUS,
    RowEnricher,
    request_parts,
    unescape,
)
from alertstation.traffic.import_rollups import ImportRollups, RowTally
from alertstation.traffic.json_line import parse_json
from alertstation.traffic.line_batch import LineBatch
from alertstation.traffic.maintenance import prune_cutoff_hour, rows_changed
from alertstation.traffic.rows import (
    IMPORT_SOURCE,
    ROW_COLUMNS,
    Locator,
    Observed,
    stored_bytes,
)
from alertstation.traffic.settings import (
    MAX_RETENTION_DAYS,
    TrafficSettings,
    load_settings,
    site_host_names,
)
from alertstation.traffic.tables import HOUR_SECONDS, web_request_logs
from alertstation.traffic.timestamps import FIRST_TIME, parse_log_time

FORMATS = ("combined", "json")
# A line longer than this is counted unreadable; it is skipped in pieces, never held whole.
MAX_LINE_BYTES = 64 * 1024
# What an over-long line is read as: a NUL makes every format's reader refuse it.
OVERLONG_LINE = b"\x00 line over the length limit\n"
_SKIP_PIECE = 64 * 1024
# Lines whose rows are written in one transaction: large enough that commits cost little, small
# enough that the live recorder's flusher (which waits for the write lock on SQLite) is held up
# only briefly.
BATCH = 20_000
SQLITE_CACHE_KIB = 32_768
# Files from this size on are read in a process of their own (``LogImport``): below it, starting
# the process costs about what it saves.
PARALLEL_BYTES = 4 * 1024 * 1024
# Lines read from the start of a file for its first time (``first_time``).
PEEK_LINES = 1_000
_TS = ROW_COLUMNS.index("ts")
_OCCURRED = ROW_COLUMNS.index("occurred_at")
t = web_request_logs


@dataclass
class ImportResult:
    """What an import did."""

    lines: int = 0
    imported: int = 0
    duplicates: int = 0
    filtered: int = 0
    unparsable: int = 0
    #: Lines older than the retention (``retention_cutoff``), left out.
    too_old: int = 0
    #: The retention (days) ``too_old`` and ``kept_old`` are counted against.
    retention_days: int | None = None
    #: Rows stored older than the retention (``keep_history``): the next prune deletes them.
    kept_old: int = 0
    #: Lines from the time the station recorded its own requests (``live_span``), left out.
    recorded_live: int = 0
    first_bad_line: int | None = None
    #: The file ``first_bad_line`` is a line of, when the lines came from a file.
    first_bad_file: str | None = None
    #: Files that could not be read to their end, each with why (the lines before were imported).
    damaged: list[str] = field(default_factory=list)
    oldest_hour: int | None = field(default=None, repr=False)

    def add_reading(self, other: ImportResult) -> None:
        """Add the counts of reading lines (not of writing rows) from ``other``, taken after
        these."""
        self.lines += other.lines
        self.filtered += other.filtered
        self.unparsable += other.unparsable
        self.too_old += other.too_old
        self.recorded_live += other.recorded_live
        if self.first_bad_line is None:
            self.first_bad_line, self.first_bad_file = other.first_bad_line, other.first_bad_file
        self.damaged += other.damaged

    def as_text(self) -> str:
        """Return a one-line summary."""
        text = (
            f"{self.lines} lines: {self.imported} imported, {self.duplicates} already present, "
            f"{self.filtered} left out by the settings, {self.unparsable} unreadable"
        )
        if self.first_bad_line is not None:
            where = f" of {self.first_bad_file}" if self.first_bad_file else ""
            text += f" (first unreadable: line {self.first_bad_line}{where})"
        days = self.retention_days or MAX_RETENTION_DAYS
        if self.too_old:
            text += (
                f", {self.too_old} older than the retention ({days} days) left out "
                "(--keep-history keeps them until the next prune)"
            )
        if self.kept_old:
            text += (
                f"; {self.kept_old} of the rows imported are older than the retention ({days} "
                "days), kept until the next hourly prune"
            )
        if self.recorded_live:
            text += (
                f", {self.recorded_live} from the time the station recorded its own requests "
                "(already counted)"
            )
        return text


def parse_combined(line: str) -> Observed | None:
    """Return the request of one combined/common log line, or None when it is not one (or
    holds a NUL character: see ``RowEnricher.combined_row``)."""
    fields = split_combined(line) if "\x00" not in line else None
    if fields is None:
        return None
    ip_text, time_text, logged, status, size, referrer, agent = fields
    ip = addresses.parse(ip_text)
    if ip is None or not MIN_STATUS <= int(status) <= MAX_STATUS:
        return None
    try:
        ts = parse_log_time(time_text)
    except ValueError:
        return None
    method, path = request_parts(logged)
    return Observed(
        ts=ts,
        method=method,
        path=path,
        status=int(status),
        response_ms=None,
        content_length=None if size == "-" else stored_bytes(int(size)),
        client_ip=str(ip),
        user_agent=unescape(agent),
        referrer=unescape(referrer),
        accept_language=None,
        authenticated=False,
        source=IMPORT_SOURCE,
    )


PARSERS: dict[str, Callable[[str], Observed | None]] = {
    "combined": parse_combined,
    "json": parse_json,
}


def import_lines(
    engine: Engine,
    lines: Iterator[bytes],
    log_format: str,
    locator: Locator | None,
    result: ImportResult | None = None,
    progress: Callable[[], None] | None = None,
    now: datetime | None = None,
    every_line: bool = False,
    *,
    keep_history: bool = False,
    site_hosts: Sequence[str] | None = None,
) -> ImportResult:
    """Import the lines of one file; return (or add to) the counts.

    With ``now`` the import then stores the rollups of every complete hour and day before it,
    tallying the days that had no rows before from the rows as they stream by
    (``traffic.import_rollups``); without, the rollups are left to the next read or hourly job.
    ``every_line`` imports the lines the collection settings would leave out (``import_settings``).
    """
    run = LogImport(
        engine, log_format, locator, result, now, every_line,
        keep_history=keep_history, site_hosts=site_hosts,
    )  # fmt: skip
    run.add_lines(lines, progress)
    return run.finish()


def import_settings(settings: TrafficSettings, every_line: bool) -> TrafficSettings:
    """Return the settings an import applies: the collection settings, or with ``every_line``
    none that leave a line out (internal addresses, API calls, skipped paths and bots are kept;
    ``anonymize_ip`` still masks every address)."""
    if not every_line:
        return settings
    return replace(
        settings, exclude_internal=False, log_api_requests=True, skip_paths=(), exclude_bots=False
    )


class LogImport:
    """One import of any number of files, with one set of settings and one rollup tally.

    ``add_lines`` and ``add_file`` write each file's rows as they go; ``finish`` then stores the
    rollups once for them all (with ``now``; see ``import_lines``), so a day whose rows run on
    from one file into the next (a log rotated at 06:25) is tallied once, from memory, instead
    of being read back from raw rows after each file. Files are best added oldest first
    (``oldest_first``).

    A file of ``PARALLEL_BYTES`` or more is read, parsed, enriched and tallied in a process of
    its own (``child_reader``) while this one writes its rows; the child's rows arrive in the
    order of the file, as they would here, and its tally comes back at the end of the file, to
    go on with the next.
    """

    def __init__(
        self,
        engine: Engine,
        log_format: str,
        locator: Locator | None,
        result: ImportResult | None = None,
        now: datetime | None = None,
        every_line: bool = False,
        *,
        keep_history: bool = False,
        site_hosts: Sequence[str] | None = None,
    ) -> None:
        if log_format not in FORMATS:
            raise ValueError(f"unknown format {log_format!r}; choose one of {', '.join(FORMATS)}")
        self.engine = engine
        self.result = result if result is not None else ImportResult()
        self.now = now
        hosts = site_host_names(site_hosts) if site_hosts is not None else None
        with engine.connect() as conn:
            collection = load_settings(conn)
            live_from, live_until = live_span(conn, collection.enabled) or (inf, -inf)
        # The rows the next prune deletes: left out, or with ``keep_history`` counted.
        self.cutoff = retention_cutoff(now, collection.retention_days) if now is not None else None
        if self.cutoff is not None:
            self.result.retention_days = collection.retention_days
        self.keep_history = keep_history
        oldest = self.cutoff if self.cutoff is not None and not keep_history else FIRST_TIME
        self.reader = LineRows(
            RowEnricher(import_settings(collection, every_line), locator, hosts),
            log_format,
            oldest,
            live_from,
            live_until,
            BATCH,
            RowTally() if now is not None else None,
        )
        self.tallies = ImportRollups() if now is not None else None
        self.writer = BatchWriter(engine, self.tallies, self.cutoff if keep_history else None)

    def add_lines(
        self,
        lines: Iterator[bytes],
        progress: Callable[[], None] | None = None,
        name: str | None = None,
    ) -> None:
        """Import the lines of one file (``name``d in the summary's first unreadable line); its
        rows are written when this returns."""
        with collector.paused():  # the rows and tallies held stay alive: see alertstation.collector
            for rows, keys, days in self.reader.batches(lines, self.result, progress, name):
                self.writer.write(batch_columns(rows), keys, days, self.result)

    def add_file(self, path: Path, on_bytes: Callable[[int], None] = lambda done: None) -> None:
        """Import one access-log file (gzipped when it ends in ``.gz``), calling ``on_bytes``
        with the bytes read so far every ``BATCH`` lines and at the end.

        A file that cannot be read to its end (a gzip file cut short or damaged, a read error)
        has the lines before the damage imported, and the damage named in ``result.damaged``.
        """
        payload = None
        if path.stat().st_size >= PARALLEL_BYTES and child_reader.can_start():
            payload = child_reader.picklable(self.reader)
        with collector.paused():
            if payload is None:
                self._take(self.reader.file_messages(path, self.result), on_bytes)
            else:
                path.open("rb").close()  # not readable at all: the OSError is raised here
                self._take(child_reader.messages(payload, path), on_bytes)

    def finish(self) -> ImportResult:
        """Store the rollups of the complete hours and days before ``now`` (when given); return
        the counts."""
        tally = self.reader.tally
        if self.tallies is not None and tally is not None and self.now is not None:
            with collector.paused():
                self.tallies.finish(self.engine, self.now, tally)
        return self.result

    def _take(self, messages: Iterator[tuple[Any, ...]], on_bytes: Callable[[int], None]) -> None:
        """Act on the messages of ``LineRows.file_messages``."""
        for message in messages:
            kind = message[0]
            if kind == ROWS:
                self.writer.write(message[1], message[2], message[3], self.result)
            elif kind == AT:
                on_bytes(message[1])
            elif kind == COUNTS:
                self.result.add_reading(message[1])
                self.reader.tally = message[2]  # the tally, carried on by the child


# The messages of ``LineRows.file_messages``.
# (ROWS, columns, keys, days): a batch to write (``batch_columns``), the days of its tallied rows
ROWS = "rows"
AT = "at"  # (AT, bytes read so far)
# (COUNTS, ImportResult, RowTally or None): a child's counts of the lines it read, and its tally
COUNTS = "counts"


@dataclass
class LineRows:
    """Turn the lines of log files into batches of rows and their import keys.

    It holds no connection, so a child process can run it (``child_reader``); the enricher's
    caches fill as it goes, and so does the tally of the rows (when the import stores rollups).
    """

    enricher: RowEnricher
    log_format: str
    #: Lines before this time are older than the retention (left out unless kept).
    oldest: float
    #: The span the station recorded its own requests in (``live_span``).
    live_from: float
    live_until: float
    #: The lines whose rows are yielded together.
    batch: int = BATCH
    #: Tallies the rows for the rollups (``traffic.import_rollups``), or None.
    tally: RowTally | None = None

    def batches(
        self,
        lines: Iterator[bytes],
        result: ImportResult,
        progress: Callable[[], None] | None = None,
        name: str | None = None,
    ) -> Iterator[tuple[list[tuple[Any, ...]], list[str], set[int]]]:
        """Yield the rows of ``lines``, their keys and the days of the rows tallied
        (``RowTally.end_batch``), those of each ``batch`` lines together (maybe none), counting
        the lines in ``result``."""
        tally = self.tally
        if self.log_format == "combined":
            row_of = self.enricher.combined_rows()
        else:
            parse, observed_row = PARSERS[self.log_format], self.enricher.observed_row

            def row_of(text: str) -> Any:
                observed = parse(text)
                return observed_row(observed) if observed is not None else None

        reading = LineBatch(
            row_of,
            FILTERED,
            _TS,
            self.oldest,
            self.live_from,
            self.live_until,
            progress,
        )
        more = True
        while more:
            rows, keys, more = reading.read(lines, self.batch)
            if tally is not None:
                tally.add_all(rows)
            result.add_reading(read_counts(reading.take_counts(), name))
            yield rows, keys, tally.end_batch() if tally is not None else set()

    def file_messages(
        self, path: Path, result: ImportResult | None = None
    ) -> Iterator[tuple[Any, ...]]:
        """Yield the messages of reading one file: ``(AT, bytes read)`` and ``(ROWS, columns,
        keys, days)`` for each ``batch`` lines (``batch_columns``); without a ``result`` to
        count in (in a child process), then ``(COUNTS, the counts, the tally)``."""
        counts = result if result is not None else ImportResult()
        with collector.paused(), path.open("rb") as raw:
            lines = _until_damaged(_log_reader(raw, path), path, counts)
            for rows, keys, days in self.batches(lines, counts, name=str(path)):
                yield AT, raw.tell()
                if rows:
                    yield ROWS, batch_columns(rows), keys, days
        if result is None:
            yield COUNTS, counts, self.tally


def read_counts(
    counts: tuple[int, int, int, int, int, int | None], name: str | None
) -> ImportResult:
    """Return the counts of ``LineBatch.take_counts`` as an ``ImportResult`` of reading the file
    ``name``."""
    lines, unparsable, filtered, too_old, recorded_live, first_bad = counts
    return ImportResult(
        lines=lines,
        unparsable=unparsable,
        filtered=filtered,
        too_old=too_old,
        recorded_live=recorded_live,
        first_bad_line=first_bad,
        first_bad_file=name if first_bad is not None else None,
    )


def batch_columns(rows: list[tuple[Any, ...]]) -> list[list[Any] | None]:
    """Return a batch's rows as columns (``ROW_COLUMNS`` order) for ``BatchWriter.write``,
    ``occurred_at`` one None for the column: the enricher's rows leave it None
    (``traffic.enrich``), and the writer stores it from ``ts`` (``db.moments.EpochSeconds``).

    A batch read in a child process crosses a pipe pickled: columns cost less than the rows' own
    tuples to pickle and unpickle.
    """
    columns: list[list[Any] | None] = transpose(rows, len(ROW_COLUMNS))  # type: ignore[assignment]
    columns[_OCCURRED] = None  # a new list of columns, the caller's own
    return columns


class BatchWriter:
    """Write batches of imported rows, one transaction each, skipping lines already imported."""

    INSERT = BulkInsert(web_request_logs, (*ROW_COLUMNS, "import_key"), "import_key")

    def __init__(
        self,
        engine: Engine,
        tallies: ImportRollups | None = None,
        old_before: float | None = None,
    ) -> None:
        self.engine = engine
        self.tallies = tallies
        #: Rows stored before this time are counted in ``ImportResult.kept_old``.
        self.old_before = old_before

    def write(
        self,
        columns: Sequence[list[Any] | None],
        keys: list[str],
        days: set[int],
        result: ImportResult,
    ) -> None:
        """Write the rows of ``columns`` (``ROW_COLUMNS`` order, as ``batch_columns`` gives
        them) with their import ``keys`` in one transaction; ``days`` are the days of the rows
        tallied for the rollups. Each row's ``occurred_at`` is stored from its ``ts`` (rows never
        carry one: ``batch_columns`` leaves that column out)."""
        if not keys:
            return
        stored = list(columns)
        stored[_OCCURRED] = EpochSeconds(stored[_TS])
        oldest = min(stored[HOUR_INDEX])
        with begin_write(self.engine) as conn:
            if conn.dialect.name == "sqlite":
                # Room for the index pages a large import touches (the default is 2 MiB).
                conn.exec_driver_sql(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
            if self.tallies is not None:
                self.tallies.before_write(conn, days)
            old = self._old_in(stored[_TS])
            before = self._old_rows(conn, old[1]) if old[0] else 0
            added = self.INSERT.run_columns(conn, [*stored, keys])
            if old[0] and added == len(keys):  # every row stored
                result.kept_old += old[0]
            elif old[0] and added:  # some were already present: count what was stored
                result.kept_old += self._old_rows(conn, old[1]) - before
            if self.tallies is not None:
                self.tallies.after_write(days, len(keys), added)
            if added:
                rollups.invalidate_from(conn, oldest)
                rows_changed(conn)
                result.oldest_hour = min(oldest, result.oldest_hour or oldest)
        result.imported += added
        result.duplicates += len(keys) - added

    def _old_in(self, times: list[float]) -> tuple[int, float]:
        """Return how many of ``times`` are before ``old_before``, and the first of them."""
        if self.old_before is None:
            return 0, 0.0
        cutoff = self.old_before
        old = [ts for ts in times if ts < cutoff]
        return len(old), min(old, default=0.0)

    def _old_rows(self, conn: Connection, first: float) -> int:
        """Return how many stored rows lie from ``first`` to before ``old_before``."""
        span = and_(t.c.ts >= first, t.c.ts < self.old_before)
        return int(conn.execute(select(func.count()).select_from(t).where(span)).scalar_one())


def import_file(
    engine: Engine,
    path: Path,
    log_format: str,
    locator: Locator | None,
    result: ImportResult | None = None,
    on_bytes: Callable[[int], None] = lambda done: None,
    now: datetime | None = None,
    every_line: bool = False,
    *,
    keep_history: bool = False,
    site_hosts: Sequence[str] | None = None,
) -> ImportResult:
    """Import one access-log file (``LogImport.add_file``); with ``now``, then store the rollups
    of the complete hours and days (``import_lines``)."""
    run = LogImport(
        engine, log_format, locator, result, now, every_line,
        keep_history=keep_history, site_hosts=site_hosts,
    )  # fmt: skip
    run.add_file(path, on_bytes)
    return run.finish()


def retention_cutoff(now: datetime, retention_days: int) -> float:
    """Return the time before which the next prune deletes rows (``maintenance.prune``)."""
    return float(prune_cutoff_hour(now, retention_days) * HOUR_SECONDS)


def live_span(conn: Connection, recording: bool) -> tuple[float, float] | None:
    """Return the span of time the station recorded its own requests, or None when it holds no
    such row: from the second of the first one it holds to the last one, or on without end while
    ``recording`` (the collection setting ``enabled``).

    The proxy in front of the station logged those requests too; importing them would count each
    twice. The first is the oldest row by id (the recorder writes in the order requests come),
    so the read stops at the first recorded row instead of scanning the table.
    """
    recorded = t.c.source != IMPORT_SOURCE
    first = conn.execute(select(t.c.ts).where(recorded).order_by(t.c.id).limit(1)).scalar()
    if first is None:
        return None
    if recording:
        return floor(first), inf
    last = conn.execute(select(t.c.ts).where(recorded).order_by(t.c.ts.desc()).limit(1)).scalar()
    return floor(first), last


def oldest_first(paths: Sequence[Path], log_format: str) -> list[Path]:
    """Return ``paths`` in the order of the time of each file's first readable line; files with
    none in their first ``PEEK_LINES`` lines, or that cannot be read, come last, in the order
    given.

    Imported oldest first, each day's rows arrive together and its rollups are tallied once. A
    shell glob such as ``access.log*`` lists the newest file first and ``access.log.10.gz``
    before ``access.log.2.gz``: imported in that order, each older file invalidated the rollups
    of every day after it, to be counted again from raw rows (``docs/traffic.md``).
    """
    times = {path: first_time(path, log_format) for path in paths}
    return sorted(paths, key=lambda path: (times[path] is None, times[path] or 0.0))


def first_time(path: Path, log_format: str) -> float | None:
    """Return the time of the first readable line among the first ``PEEK_LINES`` of a log, or
    None when there is none or the file cannot be read."""
    parse = PARSERS[log_format]
    try:
        with path.open("rb") as raw:
            for line in islice(bounded_lines(_log_reader(raw, path)), PEEK_LINES):
                seen = parse(line.rstrip(b"\r\n").decode("utf-8", "replace"))
                if seen is not None:
                    return seen.ts
    except (OSError, EOFError, zlib.error):
        return None
    return None


def _log_reader(raw: IO[bytes], path: Path) -> IO[bytes]:
    """Return the lines of an opened log file: gunzipped when its name ends in ``.gz``."""
    return gzip.GzipFile(fileobj=raw) if path.suffix == ".gz" else raw


def bounded_lines(reader: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """Yield the lines of ``reader``; one longer than ``limit`` bytes (its line end apart) is
    read in pieces, dropped, and yielded as ``OVERLONG_LINE`` (counted unreadable)."""
    for line in iter(partial(reader.readline, limit + 1), b""):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while (piece := reader.readline(_SKIP_PIECE)) and not piece.endswith(b"\n"):
            pass
        yield OVERLONG_LINE


def _until_damaged(reader: IO[bytes], path: Path, result: ImportResult) -> Iterator[bytes]:
    """Yield the lines of ``reader`` up to the end, or up to damage, which is noted in
    ``result.damaged``; over-long lines are cut short (``bounded_lines``)."""
    read = 0
    try:
        for line in bounded_lines(reader):
            read += 1
            yield line
    except EOFError:
        reason = "the compressed data ends early"
    except (OSError, zlib.error) as error:  # gzip.BadGzipFile is an OSError
        reason = getattr(error, "strerror", None) or str(error)
    else:
        return
    if read:
        reason += f" after line {read} (the lines before it were imported)"
    result.damaged.append(f"{path}: {reason}")
