"""Structured logging: one JSON object per line, tagged with the current request id."""

from __future__ import annotations

import contextvars
import logging
import sys
from datetime import UTC, datetime
from typing import Any

import orjson

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "alertstation_request_id", default=None
)

_STANDARD_ATTRS = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """Format records as JSON lines with time, level, logger, message, request id and extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    """Format records as readable lines for a terminal, extras as key=value."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = [
            f"{key}={value}"
            for key, value in vars(record).items()
            if key not in _STANDARD_ATTRS and not key.startswith("_")
        ]
        request_id = request_id_var.get()
        if request_id:
            extras.insert(0, f"request_id={request_id}")
        return f"{line} {' '.join(extras)}".rstrip()


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    """Send the station's logs to stderr in the chosen format (idempotent)."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("alertstation")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
