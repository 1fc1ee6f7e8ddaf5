"""The one ingest path of the alert store: parse, decide the lifecycle, store, queue.

``batch`` applies the rules of ``alerts.lifecycle`` to a batch of parsed alerts in one
transaction; ``imports`` parses bodies and feeds them through it a chunk at a time; ``sql`` and
``rows`` hold its prebuilt reads and writes; ``replay`` decides the per-code states of stored
messages again from scratch (the migration that added them uses it); ``reference`` is the
in-memory model the tests compare the database path against.
"""

from alertstation.alerts.ingest.batch import SKIP_REASON, ingest_alert, ingest_batch
from alertstation.alerts.ingest.imports import (
    CHUNK,
    ChunkedImport,
    Item,
    import_bodies,
    import_messages,
    ingest_items,
    parse_body,
)
from alertstation.alerts.ingest.matchers import current_matchers

__all__ = [
    "CHUNK",
    "SKIP_REASON",
    "ChunkedImport",
    "Item",
    "current_matchers",
    "import_bodies",
    "import_messages",
    "ingest_alert",
    "ingest_batch",
    "ingest_items",
    "parse_body",
]
