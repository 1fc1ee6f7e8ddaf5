"""The alert poller: fetch each due source, store what matches, keep each source's health.

One poll of a source:

1. GET its URL (``poll_sources.fetch_url``) with the validators of the last complete answer
   (conditional GET). 304 means nothing new: a success that stores nothing.
2. A 200 body goes through ``import_messages(..., explicit=False, trust=...)``: matching
   decides what is stored, signatures are checked against the configured anchors, a
   malformed message is logged with its source and skipped, the rest is stored. An
   ATOM feed is read here instead, entry by entry: an entry that embeds ``<alert>`` is imported
   as that alert; an entry that only links to its CAP document has the document fetched (same
   origin as the feed only, no redirects, the same timeouts, the single-message size limit),
   once: the SHA-256 of every link fetched is remembered per source.
3. The outcome is written to the source's row: last attempt, last success, HTTP status, error,
   consecutive failures, the counts, and the next attempt — the interval after a success, an
   exponential backoff with full jitter after a failure (:func:`backoff_delay`).

A body that cannot be read as a whole is a failure (and its validators are not kept, so the
next poll fetches it in full again); so is an ATOM feed whose linked documents could not all be
fetched this time, except that it counts as a success with a note in ``last_error``.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from sqlalchemy import Connection, Engine, Row, delete, insert, or_, select, update

from alertstation.alerts.ingest import import_bodies, import_messages
from alertstation.alerts.parsing import MAX_FEED_BYTES, MAX_MESSAGE_BYTES, AlertParseError
from alertstation.alerts.poll.atom import AtomEntry, atom_entries
from alertstation.alerts.poll.fetch import Fetched, FetchError, HttpClient, Limits, user_agent_for
from alertstation.alerts.poll.sources import display_url, fetch_url, list_sources
from alertstation.alerts.poll.tables import ERROR_WIDTH, poll_source_links, poll_sources
from alertstation.alerts.service import ImportProblem
from alertstation.alerts.store import IngestResult
from alertstation.alerts.tables import cap_alerts
from alertstation.alerts.trust import Trust, trust_for
from alertstation.db.engine import begin_write
from alertstation.db.types import utcnow
from alertstation.rounds import RoundRunner
from alertstation.settings import Settings

if TYPE_CHECKING:
    from alertstation.context import Station

log = logging.getLogger("alertstation.alerts.poll.poller")

#: The tests a monitored CAP feed must deliver (weekly and monthly; 47 CFR 11.61).
TEST_EVENTS = ("RWT", "RMT")
#: Longest wait after failures, whatever the interval and the failure count.
MAX_BACKOFF_SECONDS = 1800.0
#: Shortest wait after a failure (the worker looks for due sources every 5 s anyway).
MIN_RETRY_SECONDS = 5.0
#: Linked CAP documents fetched per ATOM poll at most; the rest wait for the next poll.
MAX_LINKS_PER_POLL = 50
#: Time one ATOM poll may spend on linked documents; the rest wait for the next poll.
LINK_BUDGET_SECONDS = 30.0
#: Skipped messages listed per outcome (all are counted and logged).
MAX_PROBLEMS = 20
#: Sources polled at the same time.
MAX_PARALLEL = 4

_C = poll_sources.c
_shared_clients: dict[str, HttpClient] = {}
_shared_lock = threading.Lock()


def shared_client(contact: str = "") -> HttpClient:
    """Return the process's HTTP client for this contact (one connection pool for every poll)."""
    with _shared_lock:
        client = _shared_clients.get(contact)
        if client is None:
            client = _shared_clients[contact] = HttpClient(user_agent_for(contact))
        return client


def backoff_delay(
    failures: int,
    interval: float,
    rng: Callable[[], float],
    *,
    cap: float = MAX_BACKOFF_SECONDS,
    retry_after: float | None = None,
) -> float:
    """Return seconds to wait after the ``failures``-th failure in a row (full jitter).

    The ceiling doubles with each failure from twice the interval, up to ``cap``; the wait is
    drawn uniformly below it (``rng()`` in [0, 1)), never under ``MIN_RETRY_SECONDS``, and
    never before a server's ``Retry-After`` (itself capped).
    """
    ceiling = min(cap, interval * 2 ** min(max(failures, 1), 30))
    delay = max(MIN_RETRY_SECONDS, rng() * ceiling)
    if retry_after is not None:
        delay = max(delay, min(retry_after, cap))
    return delay


@dataclass
class PollOutcome:
    """Tell what one poll of one source did."""

    source_id: int
    name: str
    kind: str
    ok: bool = False
    status: int | None = None
    error: str | None = None
    note: str | None = None
    received: int = 0
    stored: int = 0
    duplicates: int = 0
    ignored: int = 0
    skipped: int = 0
    linked: int = 0
    next_attempt: datetime | None = None
    problems: list[str] = field(default_factory=list)
    #: The stored alerts this poll delivered (stored now or already stored).
    alert_ids: list[int] = field(default_factory=list)

    @property
    def not_modified(self) -> bool:
        """Tell whether the server answered 304."""
        return self.status == 304

    @property
    def outcome(self) -> str:
        """Return ``ok``, ``not-modified`` or ``failed``."""
        if not self.ok:
            return "failed"
        return "not-modified" if self.not_modified else "ok"

    def count(self, results: Iterable[IngestResult | ImportProblem]) -> None:
        """Add import results to the counts."""
        for result in results:
            if isinstance(result, ImportProblem):
                self.skipped += 1
                if len(self.problems) < MAX_PROBLEMS:
                    self.problems.append(f"{result.source}: {result.reason}")
                continue
            self.received += 1
            if result.alert_id is not None and result.outcome != "ignored":
                self.alert_ids.append(result.alert_id)
            if result.outcome == "stored":
                self.stored += 1
            elif result.outcome == "duplicate":
                self.duplicates += 1
            else:
                self.ignored += 1

    def line(self) -> str:
        """Return the one-line summary the CLI prints."""
        head = f"{self.name}: {self.outcome}"
        if self.status is not None:
            head += f" (HTTP {self.status})"
        if not self.ok:
            return f"{head}: {self.error}"
        counts = (
            f"received={self.received + self.skipped} stored={self.stored} "
            f"duplicate={self.duplicates} ignored={self.ignored} skipped={self.skipped}"
        )
        if self.linked:
            counts += f" linked={self.linked}"
        return f"{head} {counts}" + (f"; note: {self.note}" if self.note else "")

    def as_dict(self) -> dict[str, Any]:
        """Return the outcome as JSON-ready data."""
        return {
            "id": self.source_id,
            "name": self.name,
            "kind": self.kind,
            "outcome": self.outcome,
            "status": self.status,
            "error": self.error,
            "note": self.note,
            "received": self.received + self.skipped,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "ignored": self.ignored,
            "skipped": self.skipped,
            "linked_documents": self.linked,
            "next_attempt": self.next_attempt.isoformat() if self.next_attempt else None,
        }


class Poller:
    """Poll sources of one database; the clock, the random source and HTTP client are given.

    ``trust`` is what message signatures are checked against for this poller's life
    (``alerts.trust.trust_for(settings)``; None: no anchors configured). The worker makes a new
    poller each round, so a replaced anchor bundle applies from the next round.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], datetime] = utcnow,
        rng: Callable[[], float] = random.random,
        http: HttpClient | None = None,
        parallel: int = MAX_PARALLEL,
        trust: Trust = None,
    ) -> None:
        self.engine = engine
        self.trust = trust
        self.clock = clock
        self.rng = rng
        self.http = http or shared_client()
        self.parallel = max(1, parallel)

    # --- which sources ------------------------------------------------------------------------

    def due_sources(self) -> list[Row[Any]]:
        """Return the enabled sources whose next attempt has come."""
        now = self.clock()
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(poll_sources)
                .where(
                    _C.enabled.is_(True),
                    or_(_C.next_attempt_at.is_(None), _C.next_attempt_at <= now),
                )
                .order_by(_C.next_attempt_at, _C.id)
            ).all()
        return list(rows)

    def poll_due(self) -> list[PollOutcome]:
        """Poll every source that is due (the worker's job)."""
        return self.poll_rows(self.due_sources())

    def poll_all(
        self, *, on_done: Callable[[PollOutcome], None] | None = None
    ) -> list[PollOutcome]:
        """Poll every enabled source now, whatever its schedule."""
        with self.engine.connect() as conn:
            rows = list_sources(conn, enabled_only=True)
        return self.poll_rows(rows, on_done=on_done)

    def poll_rows(
        self,
        rows: list[Row[Any]],
        *,
        on_done: Callable[[PollOutcome], None] | None = None,
    ) -> list[PollOutcome]:
        """Poll the given sources, a few at a time; return outcomes in the given order."""
        if not rows:
            return []

        def run(row: Row[Any]) -> PollOutcome:
            outcome = self.poll_source(row)
            if on_done is not None:
                on_done(outcome)
            return outcome

        if len(rows) == 1 or self.parallel == 1:
            return [run(row) for row in rows]
        with ThreadPoolExecutor(min(self.parallel, len(rows)), "alert-poll") as pool:
            return list(pool.map(run, rows))

    # --- one source ---------------------------------------------------------------------------

    def poll_source(self, row: Row[Any]) -> PollOutcome:
        """Poll one source and record its health; never raises for the source's own faults."""
        outcome = PollOutcome(row.id, row.name, row.kind)
        started = time.monotonic()
        now = self.clock()
        validators: tuple[str | None, str | None] | None = None
        retry_after: float | None = None
        try:
            url = fetch_url(row, now, row.last_success_at)
            fetched = self.http.fetch(
                url, _limits(row), etag=row.etag, last_modified=row.last_modified
            )
            outcome.status = fetched.status
            if fetched.not_modified:
                outcome.ok = True
            else:
                complete = self._ingest(row, url, fetched, outcome, now)
                outcome.ok = outcome.error is None
                if outcome.ok and complete:
                    validators = (fetched.etag, fetched.last_modified)
        except FetchError as ex:
            outcome.status, outcome.error, retry_after = ex.status, ex.reason, ex.retry_after
        except Exception as ex:  # a database fault must not stop the other sources
            log.exception("alert poll: %s failed unexpectedly", row.name)
            outcome.error = f"internal error ({type(ex).__name__})"
        elapsed_ms = round((time.monotonic() - started) * 1000)
        try:
            self._record(row, outcome, now, validators, retry_after, elapsed_ms)
        except Exception:  # the outcome is still reported; the next round tries again
            log.exception("alert poll: the health of %s could not be recorded", row.name)
        _log_outcome(row, outcome)
        return outcome

    def _import(
        self, body: bytes, where: str, now: datetime, source_id: int
    ) -> list[IngestResult | ImportProblem]:
        """Import one fetched body: stored only where it matches, signatures checked, each new
        alert with the poll source that fetched it."""
        return import_messages(
            self.engine,
            body,
            where,
            explicit=False,
            now=now,
            trust=self.trust,
            poll_source_id=source_id,
        )

    def _import_all(
        self, bodies: list[tuple[bytes, str]], now: datetime, source_id: int
    ) -> list[IngestResult | ImportProblem]:
        """Import several bodies (a feed's entries, its linked documents) as one batch."""
        return import_bodies(
            self.engine,
            bodies,
            explicit=False,
            now=now,
            trust=self.trust,
            poll_source_id=source_id,
        )

    def _ingest(
        self, row: Row[Any], url: str, fetched: Fetched, outcome: PollOutcome, now: datetime
    ) -> bool:
        """Store a 200 body; return False when linked documents are left for the next poll."""
        label = f"poll source {row.name!r}"
        entries = atom_entries(fetched.body)
        if entries is None:
            results = self._import(fetched.body, label, now, row.id)
            if _whole_body_failed(results, label):
                outcome.error = f"unreadable answer: {results[0].reason}"  # type: ignore[union-attr]
                return False
            outcome.count(results)
            return True
        return self._ingest_atom(row, url, entries, outcome, now, label)

    def _ingest_atom(
        self,
        row: Row[Any],
        url: str,
        entries: list[AtomEntry] | AlertParseError,
        outcome: PollOutcome,
        now: datetime,
        label: str,
    ) -> bool:
        if isinstance(entries, AlertParseError):
            outcome.error = f"unreadable answer: {entries}"
            return False
        links: dict[str, str] = {}
        embedded: list[tuple[bytes, str]] = []
        for entry in entries:
            where = f"{label} entry {entry.position}"
            if entry.alert is not None:
                embedded.append((entry.alert, where))
            elif entry.link:
                target = urljoin(url, entry.link)
                links.setdefault(_link_hash(target), target)
            else:
                log.warning("alert import: skipped %s: ATOM entry embeds no CAP <alert>", where)
                outcome.count([ImportProblem(where, "ATOM entry embeds no CAP <alert>")])
        outcome.count(self._import_all(embedded, now, row.id))
        return self._follow_links(row, url, links, outcome, now, label)

    def _follow_links(
        self,
        row: Row[Any],
        feed_url: str,
        links: dict[str, str],
        outcome: PollOutcome,
        now: datetime,
        label: str,
    ) -> bool:
        """Fetch the linked CAP documents not fetched before; remember the ones done."""
        with self.engine.connect() as conn:
            seen = set(
                conn.execute(
                    select(poll_source_links.c.link_hash).where(
                        poll_source_links.c.source_id == row.id
                    )
                ).scalars()
            )
        origin = _origin(feed_url)
        limits = replace_limits(_limits(row), MAX_MESSAGE_BYTES)
        started = time.monotonic()
        done: list[str] = []
        failures: list[str] = []
        fetched: list[tuple[bytes, str]] = []
        for digest, link in links.items():
            if digest in seen:
                continue
            if _origin(link) != origin:
                where = f"{label} link {display_url(link)}"
                log.warning("alert poll: skipped %s: not on the feed's host", where)
                outcome.count([ImportProblem(where, "link is not on the feed's host")])
                done.append(digest)
                continue
            if outcome.linked >= MAX_LINKS_PER_POLL or (
                time.monotonic() - started > LINK_BUDGET_SECONDS
            ):
                failures.append("left for the next poll")
                continue
            try:
                document = self.http.fetch(link, limits, follow_redirects=False)
            except FetchError as ex:
                failures.append(ex.reason)
                log.warning("alert poll: %s: linked %s: %s", label, display_url(link), ex.reason)
                continue
            outcome.linked += 1
            where = f"{label} link {display_url(link)}"
            fetched.append((document.body, where))
            done.append(digest)
        outcome.count(self._import_all(fetched, now, row.id))
        self._remember_links(row.id, set(links), done, now)
        if failures:
            outcome.note = (
                f"{len(failures)} linked document(s) not fetched this time: {failures[0]}"
            )
        return not failures

    def _remember_links(
        self, source_id: int, current: set[str], done: list[str], now: datetime
    ) -> None:
        """Keep the hashes still in the feed plus the ones fetched now; forget the rest."""
        t = poll_source_links.c
        with begin_write(self.engine) as conn:
            stored = set(
                conn.execute(select(t.link_hash).where(t.source_id == source_id)).scalars()
            )
            gone = stored - current
            if gone:
                conn.execute(
                    delete(poll_source_links).where(t.source_id == source_id, t.link_hash.in_(gone))
                )
            new = [d for d in dict.fromkeys(done) if d not in stored]
            if new:
                conn.execute(
                    insert(poll_source_links),
                    [{"source_id": source_id, "link_hash": d, "seen_at": now} for d in new],
                )

    # --- health -------------------------------------------------------------------------------

    def _record(
        self,
        row: Row[Any],
        outcome: PollOutcome,
        now: datetime,
        validators: tuple[str | None, str | None] | None,
        retry_after: float | None,
        elapsed_ms: int,
    ) -> None:
        """Write the outcome to the source's row (skipped when the source changed meanwhile)."""
        values: dict[str, Any] = {
            "last_attempt_at": now,
            "last_status": outcome.status,
            "last_received": outcome.received + outcome.skipped,
            "last_stored": outcome.stored,
            "last_skipped": outcome.skipped,
            "last_duration_ms": elapsed_ms,
        }
        # Validators change only with a complete 200: after a 304, a failure or an incomplete
        # ATOM poll the old ones stay, so the next poll gets the full answer again if it moved.
        if validators is not None:
            values.update(etag=_fit(validators[0], 512), last_modified=_fit(validators[1], 64))
        if outcome.ok:
            delay = float(row.interval_seconds)
            note = outcome.note[:ERROR_WIDTH] if outcome.note else None
            values.update(last_success_at=now, last_error=note, consecutive_failures=0)
        else:
            failures = row.consecutive_failures + 1
            delay = backoff_delay(failures, row.interval_seconds, self.rng, retry_after=retry_after)
            values.update(
                last_error=(outcome.error or "failed")[:ERROR_WIDTH],
                consecutive_failures=failures,
            )
        outcome.next_attempt = now + timedelta(seconds=delay)
        values["next_attempt_at"] = outcome.next_attempt
        with begin_write(self.engine) as conn:
            values.update(_tests_delivered(conn, outcome.alert_ids, now))
            conn.execute(
                update(poll_sources)
                .where(_C.id == row.id, _C.updated_at == row.updated_at)
                .values(**values)
            )


def _tests_delivered(conn: Connection, alert_ids: list[int], now: datetime) -> dict[str, Any]:
    """Return ``last_rwt_at`` / ``last_rmt_at`` = now for the tests among delivered alerts."""
    if not alert_ids:
        return {}
    codes = set(
        conn.execute(
            select(cap_alerts.c.event_code).where(
                cap_alerts.c.id.in_(alert_ids[:1000]), cap_alerts.c.event_code.in_(TEST_EVENTS)
            )
        ).scalars()
    )
    return {f"last_{code.lower()}_at": now for code in codes}


def replace_limits(limits: Limits, max_bytes: int) -> Limits:
    """Return ``limits`` with another body size limit."""
    return Limits(limits.connect_timeout, limits.read_timeout, max_bytes, limits.deadline)


def _limits(row: Row[Any]) -> Limits:
    return Limits(row.connect_timeout_ms / 1000, row.read_timeout_ms / 1000, MAX_FEED_BYTES)


def _fit(value: str | None, width: int) -> str | None:
    """Drop a validator too long to store (the next poll is then a full GET)."""
    return value if value is not None and len(value) <= width else None


def _whole_body_failed(results: list[IngestResult | ImportProblem], label: str) -> bool:
    """Tell whether import_messages refused the body as a whole (not one entry of it)."""
    return (
        len(results) == 1 and isinstance(results[0], ImportProblem) and results[0].source == label
    )


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or default


def _link_hash(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()


def _log_outcome(row: Row[Any], outcome: PollOutcome) -> None:
    if not outcome.ok:
        log.warning(
            "alert poll: %s failed: %s (next attempt %s)",
            row.name,
            outcome.error,
            outcome.next_attempt.isoformat() if outcome.next_attempt else "-",
        )
    elif outcome.stored:
        log.info("alert poll: %s", outcome.line())
    else:
        log.debug("alert poll: %s", outcome.line())


_rounds = RoundRunner("alert-poll", log, "alert poll: the round failed")


def poller_for(
    engine: Engine, settings: Settings, *, clock: Callable[[], datetime] = utcnow
) -> Poller:
    """Return a poller with the station's trust anchors and its contact in User-Agent."""
    return Poller(
        engine, clock=clock, trust=trust_for(settings), http=shared_client(settings.contact)
    )


def poll_job(station: Station) -> None:
    """Start polling the due sources in the background, unless the last round still runs.

    The worker runs this every 5 seconds. The round runs in a thread of its own so that the
    worker's other jobs (EAS forwarding every 5 s among them) never wait for a slow feed.
    """
    _rounds.start(
        lambda: poller_for(station.engine, station.settings, clock=station.clock).poll_due()
    )


def wait_for_poll_job(timeout: float | None = None) -> None:
    """Wait until the background round started by ``poll_job`` has finished."""
    _rounds.wait(timeout)
