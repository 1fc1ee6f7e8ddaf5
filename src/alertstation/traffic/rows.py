"""Turn one observed request into a ``web_request_logs`` row, enriched at capture.

The recorder and the access-log import both build rows here, so a live request and an imported
line get the same visitor key, user-agent parts, language, referrer parts and GeoIP fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final, Protocol

from alertstation.traffic import addresses, agents, classify
from alertstation.traffic.tables import hour_of_ts


class Locator(Protocol):
    """The GeoIP lookups a row needs (``alertstation.security.geoip.lookup.GeoLocator``)."""

    def locate(self, address: str) -> dict[str, Any] | None: ...

    def asn(self, address: str) -> dict[str, Any] | None: ...


#: The largest response size stored (1 TiB): a logged size above it is taken as unknown, so no
#: sum of a period's sizes can overflow a 64-bit integer in the database.
MAX_BYTES: Final[int] = 2**40
#: The ``source`` of a row read from an access log (the recorder's rows are ``live``).
IMPORT_SOURCE: Final[str] = "import"


def stored_bytes(value: int | None) -> int | None:
    """Return a logged response size as stored: None when unknown, negative or over
    ``MAX_BYTES``."""
    return value if value is not None and 0 <= value <= MAX_BYTES else None


def stored_ms(value: float | None) -> float | None:
    """Return a logged response time (ms) as stored: None when unknown, negative or not finite."""
    return value if value is not None and 0.0 <= value < math.inf else None


# The columns of a row in the order of its tuples (the import's rows and the recorder's batches);
# ``import_key`` follows them.
ROW_COLUMNS: Final[tuple[str, ...]] = (
    "occurred_at",
    "ts",
    "hour",
    "method",
    "path",
    "status",
    "response_ms",
    "content_length",
    "client_ip",
    "ip_version",
    "visitor_key",
    "hostname",
    "user_agent",
    "referrer",
    "referrer_domain",
    "search_engine",
    "search_phrase",
    "language",
    "authenticated",
    "page_view",
    "file_type",
    "browser",
    "browser_version",
    "os",
    "device_type",
    "is_bot",
    "screen_resolution",
    "source",
    "country",
    "country_code",
    "city",
    "region",
    "region_code",
    "asn",
    "asn_org",
)


@dataclass(frozen=True, slots=True)
class Observed:
    """What was seen of one request; ``client_ip`` is already masked when anonymizing."""

    ts: float
    method: str
    path: str
    status: int
    response_ms: float | None
    content_length: int | None
    client_ip: str
    user_agent: str | None
    referrer: str | None
    accept_language: str | None
    authenticated: bool
    host: str | None = None
    source: str = "live"
    import_key: str | None = None


def _clip(value: str | None, length: int) -> str | None:
    return value[:length] if value else None


def _text_before_nul(seen: Observed) -> Observed:
    """Return ``seen`` with each text field cut at its first NUL (itself when none has one)."""
    cut = classify.before_nul
    texts = (seen.path, seen.user_agent, seen.referrer, seen.accept_language, seen.host)
    if "\x00" not in seen.method and not any(value and "\x00" in value for value in texts):
        return seen
    return replace(
        seen,
        method=cut(seen.method),
        path=cut(seen.path),
        user_agent=cut(seen.user_agent),
        referrer=cut(seen.referrer),
        accept_language=cut(seen.accept_language),
        host=cut(seen.host),
    )


def build_row(seen: Observed, locator: Locator | None) -> dict[str, Any]:
    """Return the column values of the row for ``seen`` (text cut at any NUL: ``before_nul``)."""
    seen = _text_before_nul(seen)
    agent = agents.parse_agent(seen.user_agent)
    domain, engine, phrase = classify.referrer_parts(seen.referrer, seen.host)
    row: dict[str, Any] = {
        "occurred_at": datetime.fromtimestamp(seen.ts, UTC),
        "ts": seen.ts,
        "hour": hour_of_ts(seen.ts),
        "method": seen.method[:16],
        "path": seen.path[:1024],
        "status": seen.status,
        "response_ms": seen.response_ms,
        "content_length": seen.content_length,
        "client_ip": seen.client_ip,
        "ip_version": addresses.ip_version(seen.client_ip),
        "visitor_key": addresses.visitor_key(seen.client_ip),
        "hostname": None,
        "user_agent": _clip(seen.user_agent, 512),
        "referrer": _clip(seen.referrer, 1024),
        "referrer_domain": domain,
        "search_engine": engine,
        "search_phrase": phrase,
        "language": agents.primary_language(seen.accept_language),
        "authenticated": seen.authenticated,
        "page_view": classify.is_page_view(seen.method, seen.path, seen.status),
        "file_type": classify.file_type(seen.path),
        "browser": _clip(agent.browser, 64),
        "browser_version": agent.browser_version,
        "os": _clip(agent.os, 64),
        "device_type": agent.device_type,
        "is_bot": agent.is_bot,
        "screen_resolution": None,
        "source": seen.source,
        "import_key": seen.import_key,
    }
    row.update(zip(GEO_COLUMNS, geo_values(seen.client_ip, locator), strict=True))
    return row


GEO_COLUMNS = ("country", "country_code", "city", "region", "region_code", "asn", "asn_org")
_NO_GEO = (None,) * len(GEO_COLUMNS)


def geo_values(address: str, locator: Locator | None) -> tuple[Any, ...]:
    """Return the GeoIP columns of an address, in ``GEO_COLUMNS`` order."""
    if locator is None:
        return _NO_GEO
    place = locator.locate(address) or {}
    network = locator.asn(address) or {}
    if not place and not network:
        return _NO_GEO
    return (
        _clip(place.get("country"), 128),
        _clip(place.get("flag"), 2),
        _clip(place.get("city"), 128),
        _clip(place.get("region"), 128),
        _clip(place.get("region_code"), 8),
        network.get("asn"),
        _clip(network.get("org"), 255),
    )
