"""The request of one JSON access-log line, as nginx, Caddy or Traefik write it.

* nginx (and any flat log with nginx-style names): ``time_iso8601`` / ``time_local``,
  ``remote_addr``, ``request`` or ``method`` with ``uri``, ``status``, ``body_bytes_sent``,
  ``request_time`` in seconds, ``http_user_agent``... (``docs/traffic.md`` lists every name).
  A ``log_format`` without ``escape=json`` writes nginx's own ``\\xHH`` escapes, which are not
  JSON; such a line is read with them kept as written, as the combined reading keeps them.
* Caddy: its access logger's object, whose ``request`` is an object of its own (``client_ip``
  or ``remote_ip``, ``method``, ``uri``, ``headers`` of lists), with ``ts`` in epoch seconds or
  ISO 8601, ``status``, ``size`` and ``duration`` in seconds (or a Go duration text such as
  ``1.5ms`` under ``duration_format string``).
* Traefik: its access log's ``ClientHost``, ``RequestMethod``, ``RequestPath``,
  ``DownstreamStatus``, ``DownstreamContentSize``, ``Duration`` in nanoseconds, ``StartUTC``,
  and the ``request_User-Agent`` / ``request_Referer`` / ``request_Accept-Language`` headers when
  Traefik keeps them.

Caddy's and Traefik's objects are first given nginx's names (``caddy_fields``,
``traefik_fields``), so every shape is read, checked and cut the same way (``observed``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

import orjson

from alertstation.traffic import addresses, classify
from alertstation.traffic.enrich import MAX_STATUS, MIN_STATUS, request_parts, request_path
from alertstation.traffic.rows import IMPORT_SOURCE, Observed, stored_bytes, stored_ms
from alertstation.traffic.timestamps import parse_log_time, storable_time

# nginx's default escaping of a log variable (``\x22`` for a quote, ``\xC3`` for a byte outside
# ASCII), which is not JSON: a ``log_format`` without ``escape=json`` writes it.
NGINX_ESCAPE: Final[str] = "\\x"
TIME_NAMES: Final[tuple[str, ...]] = ("time_iso8601", "time", "timestamp", "@timestamp")
# Names only Traefik's access log has.
TRAEFIK_MARKS: Final[frozenset[str]] = frozenset({"ClientHost", "RequestMethod", "RequestPath"})
_GO_DURATION: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNITS: Final[dict[str, float]] = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_json(line: str) -> Observed | None:
    """Return the request of one JSON log line, or None when it is not one."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        if NGINX_ESCAPE not in line:
            return None
        try:  # nginx without ``escape=json``: its escapes kept as written, as in combined format
            record = orjson.loads(line.replace(NGINX_ESCAPE, "\\" + NGINX_ESCAPE))
        except orjson.JSONDecodeError:
            return None
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("request"), dict):
        return observed(caddy_fields(record))
    if not TRAEFIK_MARKS.isdisjoint(record):
        return observed(traefik_fields(record))
    return observed(record)


def caddy_fields(record: dict[str, Any]) -> dict[str, Any]:
    """Return a Caddy access-log object with nginx's names."""
    request = record["request"]
    headers = request.get("headers")
    headers = headers if isinstance(headers, dict) else {}
    return {
        "time": record.get("ts"),
        "time_local": record.get("ts"),  # under ``time_format common_log``
        "remote_addr": _first(request, "client_ip", "remote_ip"),
        "method": request.get("method"),
        "uri": request.get("uri"),
        "status": record.get("status"),
        "body_bytes_sent": record.get("size"),
        "request_time": go_seconds(record.get("duration")),
        "http_user_agent": _header(headers, "User-Agent"),
        "http_referer": _header(headers, "Referer"),
        "http_accept_language": _header(headers, "Accept-Language"),
    }


def traefik_fields(record: dict[str, Any]) -> dict[str, Any]:
    """Return a Traefik access-log object with nginx's names."""
    nanoseconds = record.get("Duration")
    return {  # the request's start (Traefik's own ``time`` is when it wrote the line)
        "time": _first(record, "StartUTC", "StartLocal", "time"),
        "remote_addr": record.get("ClientHost"),
        "method": record.get("RequestMethod"),
        "uri": record.get("RequestPath"),
        "status": record.get("DownstreamStatus"),
        "body_bytes_sent": record.get("DownstreamContentSize"),
        "request_time": nanoseconds / 1e9 if _is_number(nanoseconds) else None,
        "http_user_agent": record.get("request_User-Agent"),
        "http_referer": record.get("request_Referer"),
        "http_accept_language": record.get("request_Accept-Language"),
    }


def go_seconds(value: Any) -> Any:
    """Return a Go duration text (``1m2.5s``, ``850µs``) as seconds, or None when it is not
    one; any other value as it is."""
    if not isinstance(value, str):
        return value
    parts = _GO_DURATION.findall(value)
    if not parts or "".join(number + unit for number, unit in parts) != value:
        return None
    return sum(float(number) * _GO_UNITS[unit] for number, unit in parts)


def observed(record: dict[str, Any]) -> Observed | None:
    """Return the request of a record with nginx's names, or None when it lacks an address, a
    storable time, a request or a status of 100-599, or holds a size or time that is not a
    number."""
    ip = addresses.parse(str(_first(record, "remote_addr", "ip", "client_ip") or ""))
    ts = json_time(record)
    method = _first(record, "method", "request_method")
    target = _first(record, "path", "uri", "request_uri")
    path = request_path(str(target)) if target is not None else None
    if (method is None or target is None) and isinstance(record.get("request"), str):
        method, path = request_parts(record["request"])
    try:
        status = int(_first(record, "status") or 0)
        size = _first(record, "body_bytes_sent", "bytes", "bytes_sent")
        seconds = _first(record, "request_time", "duration")
        length = stored_bytes(int(size)) if size is not None else None
        response_ms = stored_ms(float(seconds) * 1000) if seconds is not None else None
    except (TypeError, ValueError):
        return None
    if ip is None or ts is None or not method or not path or not MIN_STATUS <= status <= MAX_STATUS:
        return None
    return Observed(
        ts=ts,
        method=classify.before_nul(str(method))[:16],
        path=path,
        status=status,
        response_ms=response_ms,
        content_length=length,
        client_ip=str(ip),
        user_agent=_text(record, "http_user_agent", "user_agent"),
        referrer=_text(record, "http_referer", "http_referrer", "referrer", "referer"),
        accept_language=_text(record, "http_accept_language", "accept_language"),
        authenticated=False,
        source=IMPORT_SOURCE,
    )


def json_time(record: dict[str, Any]) -> float | None:
    """Return the storable time of a record (``storable_time``), or None."""
    found = _moment(record)
    try:
        return None if found is None else storable_time(found)
    except ValueError:
        return None


def _moment(record: dict[str, Any]) -> float | None:
    for name in TIME_NAMES:
        value = record.get(name)
        if _is_number(value):
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
            return parse_log_time(value)
        except ValueError:
            return None
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _header(headers: dict[str, Any], name: str) -> Any:
    """Return the first value of a Caddy header (a list of texts), or None."""
    values = headers.get(name)
    if isinstance(values, list):
        return values[0] if values else None
    return values


def _first(record: dict[str, Any], *names: str) -> Any:
    for name in names:
        if record.get(name) not in (None, "", "-"):
            return record[name]
    return None


def _text(record: dict[str, Any], *names: str) -> str | None:
    """Return the first of the named fields as text cut at any NUL (``classify.before_nul``),
    or None."""
    value = _first(record, *names)
    return None if value is None else classify.before_nul(str(value))
