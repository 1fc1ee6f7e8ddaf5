"""Tallies of request rows: every dashboard list, visits, errors, timings and sign-ins.

Pure functions over rows already read (no database): ``accumulate`` turns one or more days' rows
into ``DayTotals``, which ``traffic.daily`` stores per day and adds up over a period. Visits end
at a gap of over ``VISIT_GAP`` and at midnight UTC (``docs/traffic.md``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from heapq import nlargest
from itertools import chain, compress, repeat
from operator import eq, ge, is_not
from typing import Any, Final

from pyroaring import BitMap

from alertstation.db.columns import transpose
from alertstation.kernel_loader import load_kernel

DAY_SECONDS: Final[int] = 86_400
VISIT_GAP: Final[int] = 30 * 60
LOGIN_PATH: Final[str] = "/auth/login"
COLUMNS: Final[tuple[str, ...]] = (
    "visitor_key",
    "ts",
    "id",
    "path",
    "status",
    "method",
    "content_length",
    "page_view",
    "client_ip",
    "response_ms",
    "is_bot",
    "country_code",
    "country",
    "city",
    "region",
    "region_code",
    "asn_org",
    "browser",
    "os",
    "device_type",
    "authenticated",
    "language",
    "referrer_domain",
    "search_engine",
    "search_phrase",
    "file_type",
    "ip_version",
)

# Every grouped list: its key columns and which rows it counts (None: every row). A row whose
# first key column is empty is left out of that list.
GROUPS: Final[dict[str, tuple[tuple[str, ...], str | None]]] = {
    "top_pages": (("path",), "page_view"),
    "top_visitors": (("visitor_key",), None),
    "countries": (("country_code", "country"), None),
    "cities": (("city", "region", "country_code"), None),
    "organizations": (("asn_org",), None),
    "browsers": (("browser",), None),
    "operating_systems": (("os",), None),
    "device_types": (("device_type",), None),
    "methods": (("method",), None),
    "authenticated": (("authenticated",), None),
    "languages": (("language",), None),
    "referrers": (("referrer_domain",), None),
    "search_engines": (("search_engine",), None),
    "keyphrases": (("search_phrase", "search_engine"), None),
    "file_types": (("file_type",), None),
    "robots": (("browser",), "is_bot"),
    "status_codes": (("status",), None),
    "top_error_urls": (("path", "status"), "error"),
    "ip_version_breakdown": (("ip_version",), None),
    "region_breakdown": (("country_code", "region_code", "region"), "region"),
}
# The other lists kept per day: visits' entry and exit pages, (method, path) of timed requests,
# and sign-in attempts by status and failures by address.
ENTRY, EXIT, TIMINGS, LOGINS, LOGIN_FAILURES = (
    "entry_pages",
    "exit_pages",
    "timings",
    "logins",
    "login_failures",
)
# The dimension the error answers (``DayTotals.errors``, not a list) are stored under
# (``traffic.daily``).
ERRORS: Final[str] = "error_answers"


@dataclass(slots=True)
class Tally:
    """What one value of one list adds up to."""

    hits: int = 0
    bytes: int = 0
    total_ms: float = 0.0
    max_ms: float | None = None
    visitors: BitMap = field(default_factory=BitMap)

    def __reduce__(self) -> tuple[type[Tally], tuple[Any, ...]]:
        # Pickled as its values (an import's tally crosses a pipe with tens of thousands of
        # these): far quicker both ways than a dataclass's state, and an empty bitmap as none.
        values = (self.hits, self.bytes, self.total_ms, self.max_ms)
        return Tally, (*values, self.visitors) if self.visitors else values


@dataclass
class DayTotals:
    """The visits of some days, every list's tallies by key (a tuple of the key columns), and
    the error answers: per address, how many of each (path, status)."""

    visits: int = 0
    bounces: int = 0
    visit_seconds: float = 0.0
    lists: dict[str, dict[tuple[Any, ...], Tally]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    errors: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)
    #: The rolled-up days whose visitor bitmaps are not in ``lists`` yet
    #: (``daily.fill_visitors``), or None.
    unread_visitors: list[int] | None = None

    def add(self, other: DayTotals) -> None:
        """Add another set of days' totals to these."""
        self.visits += other.visits
        self.bounces += other.bounces
        self.visit_seconds += other.visit_seconds
        for name, tallies in other.lists.items():
            own = self.lists[name]
            for key, tally in tallies.items():
                merge(own, key, tally)
        for address, answers in other.errors.items():
            add_answers(self.errors, address, answers.items())


def add_answers(
    errors: dict[str, dict[tuple[str, int], int]],
    address: str,
    answers: Iterable[tuple[tuple[str, int], int]],
) -> None:
    """Add ``answers`` (each a (path, status) and how many) to ``address``'s in ``errors``."""
    own = errors.get(address)
    if own is None:
        own = errors[address] = {}
    for answer, count in answers:
        own[answer] = own.get(answer, 0) + count


def merge(own: dict[tuple[Any, ...], Tally], key: tuple[Any, ...], tally: Tally) -> None:
    """Add ``tally`` to the tally of ``key`` in ``own`` (taking it over when there is none)."""
    mine = own.get(key)
    if mine is None:
        own[key] = tally
        return
    mine.hits += tally.hits
    mine.bytes += tally.bytes
    mine.total_ms += tally.total_ms
    if tally.max_ms is not None:
        mine.max_ms = tally.max_ms if mine.max_ms is None else max(mine.max_ms, tally.max_ms)
    mine.visitors |= tally.visitors


# --- one pass over raw rows -----------------------------------------------------------------


# Lists drawn from the same part of a request are tallied together: one pass over the rows per
# profile (the request line and answer, the address, the agent, the referrer, the session), then
# each list is summed from the profile's distinct values, which are far fewer than the rows.
PROFILES: Final[tuple[tuple[str, ...], ...]] = (
    ("path", "status", "method", "page_view", "file_type"),
    (
        "visitor_key",
        "country_code",
        "country",
        "city",
        "region",
        "region_code",
        "asn_org",
        "ip_version",
    ),
    ("browser", "os", "device_type", "is_bot"),
    ("referrer_domain", "search_engine", "search_phrase"),
    ("authenticated", "language"),
)
_KIND_COLUMN = {"page_view": "page_view", "is_bot": "is_bot", "error": "status", "region": "region"}


def _kept(kind: str | None, value: Any) -> bool:
    """Tell whether a row whose kind column holds ``value`` counts in a list of ``kind``."""
    if kind is None:
        return True
    if kind == "error":
        return bool(value >= 400)
    if kind == "region":
        return value is not None
    return bool(value)


def _plan() -> list[tuple[str, int, tuple[int, ...], str | None, int]]:
    """For each list: its profile, its key's positions in it, and its condition's position."""
    plan = []
    for name, (names, kind) in GROUPS.items():
        needed = (*names, _KIND_COLUMN[kind]) if kind else names
        index = next(i for i, profile in enumerate(PROFILES) if set(needed) <= set(profile))
        profile = PROFILES[index]
        where = profile.index(_KIND_COLUMN[kind]) if kind else -1
        plan.append((name, index, tuple(profile.index(n) for n in names), kind, where))
    return plan


_PLAN: Final = _plan()


Grouped = list[tuple[tuple[Any, ...], int, int, list[int]]]


def py_profile_tallies(
    columns: Sequence[Sequence[Any]], visitors: list[int], sizes: list[int]
) -> Grouped:
    """Return ``(key, hits, bytes, visitors)`` for each distinct key, in order of first
    appearance: ``key`` the tuple of a row's values in ``columns``, ``visitors`` the sorted
    distinct ids of ``visitors`` among its rows, ``bytes`` the sum of ``sizes`` over them.

    The reference twin of the compiled ``tallygroups`` kernel (``profile_tallies``)."""
    if not columns:
        raise ValueError("no columns to key the rows by")
    keys = list(zip(*columns, strict=True))
    if len(keys) != len(visitors) or len(sizes) != len(visitors):
        raise ValueError(f"{len(keys)} rows, {len(visitors)} visitors and {len(sizes)} sizes")
    hits = Counter(keys)
    spent = dict.fromkeys(hits, 0)
    for key, size in zip(keys, sizes, strict=True):
        spent[key] += size
    seen: dict[tuple[Any, ...], set[int]] = {key: set() for key in hits}
    for key, visitor in set(zip(keys, visitors, strict=True)):
        seen[key].add(visitor)
    return [(key, count, spent[key], sorted(seen[key])) for key, count in hits.items()]


_kernel = load_kernel("tallygroups")
profile_tallies: Callable[[Sequence[Sequence[Any]], list[int], list[int]], Grouped] = (
    _kernel.profile_tallies if _kernel is not None else py_profile_tallies
)


def accumulate(rows: Sequence[Sequence[Any]], ids: Mapping[str, int]) -> DayTotals:
    """Return the totals of ``rows`` (``COLUMNS`` order, sorted by visitor, time and id).

    Visits are split at gaps over ``VISIT_GAP`` and at midnight UTC.
    """
    if not rows:
        return DayTotals()
    return accumulate_columns(dict(zip(COLUMNS, transpose(rows, len(COLUMNS)), strict=True)), ids)


def accumulate_columns(columns: Mapping[str, Sequence[Any]], ids: Mapping[str, int]) -> DayTotals:
    """Return the totals of the rows given as ``columns`` (every name of ``COLUMNS`` but ``id``
    to the values of the rows, sorted by visitor, time and id): ``accumulate`` for rows
    already split into columns."""
    totals = DayTotals()
    keys = columns["visitor_key"]
    if not keys:
        return totals
    visitors = list(map(ids.__getitem__, keys))
    sizes = [size or 0 for size in columns["content_length"]]
    profiles = [
        profile_tallies([columns[name] for name in profile], visitors, sizes)
        for profile in PROFILES
    ]
    for name, index, positions, kind, where in _PLAN:
        own = totals.lists[name]
        for value, hits, spent, seen in profiles[index]:
            key = tuple(value[i] for i in positions)
            if key[0] is not None and _kept(kind, value[where] if kind else None):
                merge(own, key, Tally(hits, spent, visitors=BitMap(seen)))
    _visits(totals, columns)
    _errors_timings_logins(totals, columns, visitors)
    return totals


def py_visit_counts(
    keys: list[Any], times: list[float], paths: list[Any], views: list[Any], gap: float, day: float
) -> tuple[int, int, float, dict[Any, int], dict[Any, int]]:
    """Return ``(visits, bounces, seconds, entries, exits)`` of rows sorted by visitor and
    time, given as columns: a visit is a visitor's run of rows ending at a gap over ``gap``
    seconds or where ``time // day`` changes; a bounce is a visit of one row; ``seconds`` adds
    up each visit's last time less its first; ``entries`` and ``exits`` count the visits by the
    path of their first and last page view (a visit without one counts in neither).

    The reference twin of the compiled ``visitruns`` kernel (``visit_counts``)."""
    if not len(keys) == len(times) == len(paths) == len(views):
        raise ValueError(
            f"{len(keys)} visitors, {len(times)} times, {len(paths)} paths and {len(views)} views"
        )
    visits = bounces = requests = 0
    seconds = 0.0
    entries: dict[Any, int] = {}
    exits: dict[Any, int] = {}
    visitor: Any = None
    start = last = 0.0
    entry = exit_page = None
    rows = zip(keys, times, paths, views, strict=True)
    for key, ts, path, page_view in chain(rows, [(_END, 0.0, None, False)]):
        if key is _END or key != visitor or ts - last > gap or ts // day != last // day:
            if requests:  # the visit before ends
                visits += 1
                bounces += requests == 1
                seconds += last - start
                if entry is not None:
                    entries[entry] = entries.get(entry, 0) + 1
                    exits[exit_page] = exits.get(exit_page, 0) + 1
            if key is _END:
                break
            visitor, start, requests, entry, exit_page = key, ts, 0, None, None
        requests += 1
        last = ts
        if page_view:
            exit_page = path
            if entry is None:
                entry = exit_page
    return visits, bounces, seconds, entries, exits


_END: Final = object()  # after the last row: the last visit ends


_visit_kernel = load_kernel("visitruns")
visit_counts: Callable[..., tuple[int, int, float, dict[Any, int], dict[Any, int]]] = (
    _visit_kernel.visit_counts if _visit_kernel is not None else py_visit_counts
)


def _visits(totals: DayTotals, columns: Mapping[str, Sequence[Any]]) -> None:
    visits, bounces, seconds, entries, exits = visit_counts(
        *(_listed(columns[name]) for name in ("visitor_key", "ts", "path", "page_view")),
        VISIT_GAP,
        DAY_SECONDS,
    )
    totals.visits += visits
    totals.bounces += bounces
    totals.visit_seconds += seconds
    totals.lists[ENTRY].update(((path,), Tally(count)) for path, count in entries.items())
    totals.lists[EXIT].update(((path,), Tally(count)) for path, count in exits.items())


def _listed(values: Sequence[Any]) -> list[Any]:
    return values if type(values) is list else list(values)


def _errors_timings_logins(
    totals: DayTotals, columns: Mapping[str, Sequence[Any]], visitors: list[int]
) -> None:
    errors, timings = totals.errors, totals.lists[TIMINGS]
    logins, failures = totals.lists[LOGINS], totals.lists[LOGIN_FAILURES]
    statuses, paths, methods = columns["status"], columns["path"], columns["method"]
    addresses, times = columns["client_ip"], columns["response_ms"]
    # Each list reads only its own rows, picked out without a Python step per row.
    for status, path, address in compress(
        zip(statuses, paths, addresses, strict=True), map(ge, statuses, repeat(400))
    ):
        answers = errors.get(address)
        if answers is None:
            answers = errors[address] = {}
        answers[(path, status)] = answers.get((path, status), 0) + 1
    for method, path, ms in compress(
        zip(methods, paths, times, strict=True), map(is_not, times, repeat(None))
    ):
        tally = timings.get((method, path))
        if tally is None:
            tally = timings[(method, path)] = Tally()
        tally.hits += 1
        tally.total_ms += ms
        tally.max_ms = ms if tally.max_ms is None else max(tally.max_ms, ms)
    sign_ins = zip(statuses, methods, addresses, columns["content_length"], visitors, strict=True)
    for status, method, address, size, visitor in compress(
        sign_ins, map(eq, paths, repeat(LOGIN_PATH))
    ):
        if method != "POST":
            continue
        logins.setdefault((status,), Tally()).hits += 1
        if status >= 400:
            tally = failures.setdefault((address,), Tally())
            tally.hits += 1
            tally.bytes += size or 0
            tally.visitors.add(visitor)


def ordered(
    tallies: dict[tuple[Any, ...], Tally], limit: int | None, by: Callable[..., Any] | None = None
) -> list[tuple[tuple[Any, ...], Tally]]:
    """Return the tallies most hits first (then by key, empty parts first), cut at ``limit``.

    With a ``limit`` and the usual order, only the values with at least the hits of the
    ``limit``-th most are sorted: a long period's list holds tens of thousands of values, and
    building each one's sort key was most of the dashboard's time."""
    key = by or _most_hits_first
    if limit is None or by is not None or len(tallies) <= limit:
        items = sorted(tallies.items(), key=key)
        return items if limit is None else items[:limit]
    floor = nlargest(limit, (tally.hits for tally in tallies.values()))[-1]
    items = [item for item in tallies.items() if item[1].hits >= floor]
    items.sort(key=key)
    return items[:limit]


def _most_hits_first(item: tuple[tuple[Any, ...], Tally]) -> tuple[int, list[tuple[bool, Any]]]:
    return -item[1].hits, [(value is not None, value) for value in item[0]]
