"""Many rows at once: the access-log import's enrichment, with each repeating part worked out once.

An access log repeats itself: a few hundred addresses, a few dozen user agents, referrers and
paths make up millions of lines. ``RowEnricher`` remembers, for the length of one import, what
each distinct address (masking, version, visitor key, GeoIP), user agent (browser, OS, device,
bot), referrer (domain, search engine and phrase) and request (page view, file type, whether the
settings keep it) came to, and builds each row as a tuple in ``ROW_COLUMNS`` order. The values
are the ones ``rows.build_row`` gives a live request, but for ``occurred_at``, which is left None:
it is ``ts`` as a moment, and the import's writer stores it from ``ts``
(``importer.BatchWriter``) rather than have a ``datetime`` made for every line and thrown away.
``tests/traffic/test_enrich.py`` holds the two to each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final
from urllib.parse import unquote

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import addresses, agents, classify
from alertstation.traffic.combined_line import split_combined
from alertstation.traffic.recorder import path_recorded
from alertstation.traffic.rows import (
    IMPORT_SOURCE,
    MAX_BYTES,
    ROW_COLUMNS,
    Locator,
    Observed,
    geo_values,
    stored_bytes,
)
from alertstation.traffic.settings import TrafficSettings
from alertstation.traffic.tables import HOUR_SECONDS
from alertstation.traffic.timestamps import parse_log_time

HOUR_INDEX: Final[int] = ROW_COLUMNS.index("hour")
# Each cache holds at most this many distinct values (a log of any size stays in bounded memory).
CACHE_ENTRIES: Final[int] = 50_000
# Returned instead of a row when the collection settings leave the line out.
FILTERED: Final[tuple[Any, ...]] = ()
_combined_rows = load_kernel("combinedrow")

#: The methods a request line is read by (as GoAccess reads them: a case-blind prefix), and the
#: protocols it must end with (also a case-blind prefix); a line with another method is kept
#: whole as its path, one with a bad protocol counts as "-", so an import's per-path counts
#: agree with GoAccess's report of the same log.
METHODS: Final[frozenset[str]] = frozenset(
    "OPTIONS GET HEAD POST PUT DELETE TRACE CONNECT PATCH PROPFIND PROPPATCH MKCOL COPY MOVE LOCK "
    "UNLOCK VERSION-CONTROL REPORT CHECKOUT CHECKIN UNCHECKOUT MKWORKSPACE UPDATE LABEL MERGE "
    "BASELINE-CONTROL MKACTIVITY ORDERPATCH".split()
)
PROTOCOLS: Final[tuple[str, ...]] = ("HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3")
#: The status codes a line may have (GoAccess counts a line with another as failed).
MIN_STATUS: Final[int] = 100
MAX_STATUS: Final[int] = 599
#: The method stored for a request line that is not read as one.
NO_METHOD: Final[str] = "-"
#: What is trimmed from a request line and from a decoded path (C's ``isspace``).
_SPACE: Final[str] = " \t\n\v\f\r"


def unescape(value: str | None) -> str | None:
    """Return a quoted log field without its escapes; None for an empty field or ``-``."""
    if not value or value == "-":
        return None
    return value.replace('\\"', '"').replace("\\\\", "\\")


def _method_of(line: str) -> str | None:
    """Return the method a request line starts with (a case-blind prefix), or None."""
    word = line.partition(" ")[0].upper()
    if word in METHODS:
        return word
    start = line[:16].upper()
    for method in METHODS:  # no method is a prefix of another: at most one matches
        if start.startswith(method):
            return method
    return None


def request_parts(request: str) -> tuple[str, str]:
    """Return (method, path) of a logged request line, ``METHOD TARGET PROTOCOL``, read as
    GoAccess reads it so that per-path counts agree with its report of the same log.

    The line is trimmed; the method is a case-blind prefix from ``METHODS`` (upper-cased); the
    target runs from the character after it to the last space, which must be followed by one of
    ``PROTOCOLS``; the path is ``request_path`` of the target. Every line is a request the
    server answered, so none is refused: a line with no method ("-", a TLS handshake sent to
    the plain port, "PRI * HTTP/2.0") has its own ``request_path`` as the path, and a method
    without a target and a protocol ("GET /" alone) has the path "-"; both under the method
    ``NO_METHOD``.
    """
    line = classify.before_nul(request).strip(_SPACE)
    method = _method_of(line)
    if method is None:
        return NO_METHOD, request_path(line)
    after = line[len(method) :]
    last = after.rfind(" ")
    if last <= 0 or not after[last + 1 :].upper().startswith(PROTOCOLS):
        return NO_METHOD, "-"
    return method, request_path(after[1 : last + 1])


def request_path(target: str) -> str:
    """Return the path of a request target as GoAccess reports it: percent-decoded (invalid
    UTF-8 replaced), cut at a NUL, trimmed (the target as logged when nothing is left), then
    cut at a ``?`` that is not its first character.

    An absolute-form target (``http://host/path``, a proxy probe) keeps its scheme and host, so
    a probe for another site is not counted as a visit to this one's page.
    """
    target = classify.before_nul(target)
    path = unquote(target, errors="replace") if "%" in target else target
    path = classify.before_nul(path).strip(_SPACE) or target
    query = path.find("?")
    return path[:query] if query > 0 else path


def _clip(value: str | None, length: int) -> str | None:
    return value[:length] if value else None


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> Any:
    """Store ``value`` under ``key`` (emptying the cache first when it is full); return it."""
    if len(cache) >= CACHE_ENTRIES:
        cache.clear()
    cache[key] = value
    return value


class RowEnricher:
    """Build row tuples for one import, applying the collection settings as the recorder does
    (except ``enabled`` and ``authenticated_only``: a log does not say who was signed in)."""

    def __init__(
        self,
        settings: TrafficSettings,
        locator: Locator | None,
        site_hosts: tuple[str, ...] | None = None,
    ) -> None:
        self.settings = settings
        self.locator = locator
        #: The site's own hosts (``TrafficSettings.site_hosts`` unless given): a referrer on one
        #: of them is a self-referral, stored without a domain, engine or phrase.
        self.site_hosts = frozenset(settings.site_hosts if site_hosts is None else site_hosts)
        self._addresses: dict[str, tuple[Any, ...] | None] = {}
        self._agents: dict[str | None, tuple[Any, ...]] = {}
        self._referrers: dict[str | None, tuple[Any, ...]] = {}
        self._requests: dict[tuple[str, str, int], tuple[bool, bool, str | None]] = {}
        # The combined format's parts as they appear in the line (still escaped).
        self._lines: dict[tuple[str, str], tuple[Any, ...]] = {}
        self._raw_agents: dict[str | None, tuple[Any, ...]] = {}
        self._raw_referrers: dict[str | None, tuple[Any, ...]] = {}
        self._no_language = agents.primary_language(None)
        self._minute_text: str | None = None
        self._zone_text: str | None = None
        self._minute_start = 0

    # --- the repeating parts ---------------------------------------------------------------

    def _address(self, text: str) -> tuple[Any, ...] | None:
        """(internal, stored address, version, visitor key, *GeoIP), None when not an address."""
        if text in self._addresses:
            return self._addresses[text]
        parsed = addresses.parse(text)
        if parsed is None:
            return _remember(self._addresses, text, None)
        seen = str(parsed)
        stored = addresses.mask_address(seen) if self.settings.anonymize_ip else seen
        return _remember(
            self._addresses,
            text,
            (
                addresses.is_internal(seen),
                stored,
                addresses.ip_version(stored),
                addresses.visitor_key(stored),
                *geo_values(stored, self.locator),
            ),
        )

    def _agent(self, user_agent: str | None) -> tuple[Any, ...]:
        """(user agent as stored, browser, version, OS, device type, bot)."""
        found = self._agents.get(user_agent)
        if found is None:
            agent = agents.parse_agent(user_agent)
            found = (
                _clip(user_agent, 512),
                _clip(agent.browser, 64),
                agent.browser_version,
                _clip(agent.os, 64),
                agent.device_type,
                agent.is_bot,
            )
            _remember(self._agents, user_agent, found)
        return found

    def _referrer(self, referrer: str | None) -> tuple[Any, ...]:
        """(referrer as stored, domain, search engine, search phrase)."""
        found = self._referrers.get(referrer)
        if found is None:
            parts = classify.referrer_parts(referrer, None)
            if parts[0] is not None and parts[0] in self.site_hosts:
                parts = (None, None, None)  # a self-referral, as a live request's own Host
            found = (_clip(referrer, 1024), *parts)
            _remember(self._referrers, referrer, found)
        return found

    def _request(self, method: str, path: str, status: int) -> tuple[bool, bool, str | None]:
        """(kept by the path rules, page view, file type)."""
        key = (method, path, status)
        found = self._requests.get(key)
        if found is None:
            found = (
                path_recorded(self.settings, path),
                classify.is_page_view(method, path, status),
                classify.file_type(path),
            )
            _remember(self._requests, key, found)
        return found

    # --- rows ------------------------------------------------------------------------------

    def row(
        self,
        ts: float,
        method: str,
        path: str,
        status: int,
        response_ms: float | None,
        content_length: int | None,
        address: tuple[Any, ...],
        user_agent: str | None,
        referrer: str | None,
        accept_language: str | None,
    ) -> tuple[Any, ...]:
        """Return the row of one request, or ``FILTERED`` when the settings leave it out."""
        if address[0] and self.settings.exclude_internal:
            return FILTERED
        kept, page_view, file_type = self._request(method, path[:1024], status)
        if not kept:
            return FILTERED
        agent = self._agent(user_agent)
        if agent[5] and self.settings.exclude_bots:
            return FILTERED
        return (
            None,  # occurred_at: the writer stores the moment of ts
            ts,
            int(ts // HOUR_SECONDS),  # hour_of_ts, inline
            method[:16],
            path[:1024],
            status,
            response_ms,
            content_length,
            address[1],
            address[2],
            address[3],
            None,
            agent[0],
            *self._referrer(referrer),
            agents.primary_language(accept_language),
            False,
            page_view,
            file_type,
            *agent[1:],
            None,
            IMPORT_SOURCE,
            *address[4:],
        )

    def observed_row(self, seen: Observed) -> tuple[Any, ...] | None:
        """Return the row of a parsed line (``FILTERED`` when left out, None when its address
        is not one)."""
        address = self._address(seen.client_ip)
        if address is None:
            return None
        return self.row(
            seen.ts,
            seen.method,
            seen.path,
            seen.status,
            seen.response_ms,
            seen.content_length,
            address,
            seen.user_agent,
            seen.referrer,
            seen.accept_language,
        )

    def _logged_request(self, logged: str, status: str) -> tuple[Any, ...] | None:
        """(method, path, status, kept, page view, file type) of a request line and status as
        logged, remembered; None when the status is outside 100-599 (GoAccess counts such a
        line as failed)."""
        code = int(status)
        if not MIN_STATUS <= code <= MAX_STATUS:
            return None
        method, path = request_parts(logged)
        path = path[:1024]
        return _remember(
            self._lines,
            (logged, status),
            (method[:16], path, code, *self._request(method, path, code)),
        )

    def combined_rows(self) -> Callable[[str], tuple[Any, ...] | None]:
        """Return what reads combined lines into rows as ``combined_row`` does: the compiled
        ``combinedrow`` kernel's reader over this enricher's caches when it is built (the same
        rows, with less Python around each line's lookups), else ``combined_row`` itself."""
        if _combined_rows is None:
            return self.combined_row
        return _combined_rows.CombinedRows(
            self,
            split_combined,
            parse_log_time,
            unescape,
            _remember,
            MAX_BYTES,
            FILTERED,
            IMPORT_SOURCE,
        )

    def combined_row(self, line: str) -> tuple[Any, ...] | None:
        """Return the row of one combined/common log line: None when it is not one (or holds a
        NUL character: a damaged log, which GoAccess cannot read either), ``FILTERED`` when the
        settings leave it out."""
        fields = split_combined(line) if "\x00" not in line else None
        if fields is None:
            return None
        ip_text, time_text, logged, status, size, referrer, user_agent = fields
        address = self._addresses.get(ip_text)
        if address is None:
            address = self._address(ip_text)
            if address is None:
                return None
        seconds = time_text[18:20]
        if (
            time_text[:17] == self._minute_text
            and time_text[20:] == self._zone_text
            and time_text[17:18] == ":"
            and seconds.isdigit()
            and seconds.isascii()
            and seconds < "60"
        ):  # the minute of the line before (``parse_log_time`` gives the same)
            ts = float(self._minute_start + int(seconds))
        else:
            try:
                ts = parse_log_time(time_text)
            except ValueError:
                return None
            self._minute_text, self._zone_text = time_text[:17], time_text[20:]
            self._minute_start = int(ts) - int(seconds)
        request = self._lines.get((logged, status)) or self._logged_request(logged, status)
        if request is None:
            return None
        if address[0] and self.settings.exclude_internal:
            return FILTERED
        if not request[3]:
            return FILTERED
        agent = self._raw_agents.get(user_agent)
        if agent is None:
            agent = _remember(self._raw_agents, user_agent, self._agent(unescape(user_agent)))
        if agent[5] and self.settings.exclude_bots:
            return FILTERED
        referred = self._raw_referrers.get(referrer)
        if referred is None:
            referred = _remember(self._raw_referrers, referrer, self._referrer(unescape(referrer)))
        return (
            None,  # occurred_at: the writer stores the moment of ts
            ts,
            int(ts // HOUR_SECONDS),  # hour_of_ts, inline
            request[0],
            request[1],
            request[2],
            None,
            None if size == "-" else stored_bytes(int(size)),
            address[1],
            address[2],
            address[3],
            None,
            agent[0],
            *referred,
            self._no_language,
            False,
            request[4],
            request[5],
            *agent[1:],
            None,
            IMPORT_SOURCE,
            *address[4:],
        )
