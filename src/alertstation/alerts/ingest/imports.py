"""Parse bodies and ingest their alerts in chunks, one write transaction per chunk.

``import_bodies`` parses bodies (CAP XML, XML feeds, the JSON feed) and ingests their alerts in
chunks of ``CHUNK`` messages through ``ingest_batch``: a chunk is stored whole or not at all.
The poller, the upload route and ``alertstation alerts import`` all go through it (the first two
by way of ``import_messages``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from sqlalchemy import Engine

from alertstation import collector
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.ingest.batch import _chunks, ingest_batch
from alertstation.alerts.model import Alert, ParseProblem
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.service import ImportProblem
from alertstation.alerts.store import IngestResult, _check_keys
from alertstation.alerts.trust import Trust, anchors_at, explain_unavailable
from alertstation.db.engine import begin_write

log = logging.getLogger(__name__)

#: Messages per write transaction. A chunk is all-or-nothing; a huge archive is several chunks.
CHUNK = 1000

Item = IngestResult | ImportProblem


def parse_body(
    data: bytes, source: str, *, now: datetime | None = None, trust: Trust = None
) -> list[Alert | ImportProblem]:
    """Parse one body into alerts and the problems of the entries that could not be used."""
    try:
        parsed = parse_any(data, trust=anchors_at(trust, now))
    except AlertParseError as ex:
        log.warning("alert import: skipped %s: %s", source, ex)
        return [ImportProblem(source, str(ex))]
    items: list[Alert | ImportProblem] = []
    for item in parsed:
        if isinstance(item, ParseProblem):
            where = f"{source} entry {item.position}"
            if item.identifier:
                where += f" ({item.identifier})"
            log.warning("alert import: skipped %s: %s", where, item.reason)
            items.append(ImportProblem(where, item.reason, link=item.link))
            continue
        alert = explain_unavailable(item, trust)
        try:
            _check_keys(alert)
        except ValueError as ex:
            where = f"{source} ({alert.identifier[:80]})"
            log.warning("alert import: skipped %s: %s", where, ex)
            items.append(ImportProblem(where, str(ex)))
            continue
        items.append(alert)
    return items


def ingest_items(
    engine: Engine,
    items: Sequence[Alert | ImportProblem],
    *,
    explicit: bool,
    now: datetime | None = None,
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
    poll_source_id: int | None = None,
) -> list[Item]:
    """Ingest the alerts among ``items`` in chunks, one write transaction per chunk.

    Problems pass through in place. ``progress`` is called with the number of messages done
    after each chunk. ``poll_source_id`` is the poll source that fetched them (None: imported).
    """
    results: list[Item | None] = [
        item if isinstance(item, ImportProblem) else None for item in items
    ]
    positions = [i for i, item in enumerate(items) if not isinstance(item, ImportProblem)]
    for part in _chunks(positions, max(1, chunk)):
        alerts = [items[i] for i in part]
        with collector.paused(), begin_write(engine) as conn:
            done = ingest_batch(
                conn,
                alerts,  # type: ignore[arg-type]
                None,
                explicit=explicit,
                now=now,
                poll_source_id=poll_source_id,
            )
        for i, result in zip(part, done, strict=True):
            results[i] = result
        if progress is not None:
            progress(len(part))
    return [r for r in results if r is not None]


def import_bodies(
    engine: Engine,
    bodies: Iterable[tuple[bytes, str]],
    *,
    explicit: bool = True,
    now: datetime | None = None,
    trust: Trust = None,
    chunk: int = CHUNK,
    poll_source_id: int | None = None,
) -> list[Item]:
    """Parse every (body, source) and ingest all their alerts in chunks of ``chunk``.

    The cyclic collector is paused for the whole call (``alertstation.collector``): every parsed
    alert stays alive until its chunk is written, so its passes would find nothing to free.
    """
    items: list[Alert | ImportProblem] = []
    with collector.paused():
        for data, source in bodies:
            items += parse_body(data, source, now=now, trust=trust)
        return ingest_items(
            engine, items, explicit=explicit, now=now, chunk=chunk, poll_source_id=poll_source_id
        )


def import_messages(
    engine: Engine,
    data: bytes,
    source: str,
    *,
    explicit: bool = True,
    now: datetime | None = None,
    trust: Trust = None,
    poll_source_id: int | None = None,
) -> list[IngestResult | ImportProblem]:
    """Parse one file or body (CAP XML, XML feed or JSON feed) and ingest every alert in it.

    The alerts go through the batch path (``import_bodies``): one write transaction per chunk of
    ``CHUNK`` messages, all-or-nothing per chunk. A body that cannot be parsed, one entry
    of a feed that cannot, or an alert whose sender or identifier is too long to store, is
    logged with its source and reported as an ImportProblem; the rest is stored.

    ``trust`` is what signatures are checked against (``alerts.trust.trust_for(settings)``):
    anchors, checked at ``now`` when given (the time of receipt) unless they carry their own
    time; ``None`` (no anchors configured: a signed message is recorded failed, never
    verified); or a ``TrustUnavailable``, whose reason then replaces that failure's reason.
    """
    return import_bodies(
        engine,
        [(data, source)],
        explicit=explicit,
        now=now,
        trust=trust,
        poll_source_id=poll_source_id,
    )


class ChunkedImport:
    """Collect parsed bodies and ingest their alerts a chunk at a time (``alerts import``).

    ``add`` takes one source's parsed items and returns the sources whose results are now
    known, in the order they were added, each with its results; ``flush`` ingests the rest.
    Each chunk of ``chunk`` alerts (default ``CHUNK``) is one write transaction; a source's
    alerts share a chunk unless they overflow it. ``progress(count)`` is called with the
    alerts done per chunk.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        explicit: bool = True,
        chunk: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self._engine = engine
        self._explicit = explicit
        self._chunk = max(1, chunk or CHUNK)
        self._progress = progress
        self._pending: list[tuple[str, list[Alert | ImportProblem]]] = []
        self._alerts = 0

    def add(self, source: str, items: list[Alert | ImportProblem]) -> list[tuple[str, list[Item]]]:
        """Queue one source's items; ingest and return what is due once a chunk is full."""
        self._pending.append((source, items))
        self._alerts += sum(1 for item in items if not isinstance(item, ImportProblem))
        return self.flush() if self._alerts >= self._chunk else []

    def flush(self) -> list[tuple[str, list[Item]]]:
        """Ingest everything queued; return each source with its results."""
        pending, self._pending, self._alerts = self._pending, [], 0
        if not pending:
            return []
        flat = [item for _source, items in pending for item in items]
        results = ingest_items(
            self._engine,
            flat,
            explicit=self._explicit,
            chunk=self._chunk,
            progress=self._progress,
        )
        done, start = [], 0
        for source, items in pending:
            done.append((source, results[start : start + len(items)]))
            start += len(items)
        return done
