"""Generated request rows and a plain-Python computation of every report over them.

The oracle shares nothing with ``alertstation.traffic.reports`` but the row dictionaries: it
filters, groups and counts in Python, so the SQL of both backends is checked against it.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from alertstation.traffic.period import Filters, Period
from alertstation.traffic.rows import Observed, build_row

Row = dict[str, Any]
CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0.0.0 Safari/537.36"
)
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
AGENTS = [CHROME, CHROME, FIREFOX, IPHONE, GOOGLEBOT, None]
PAGES = ["/", "/alerts", "/alerts/42", "/about.html", "/status"]
FILES = ["/static/app.css", "/static/app.js", "/logo.png"]
REFERRERS = [
    None,
    None,
    "https://www.google.com/search?q=eas+alerts",
    "https://duckduckgo.com/?q=weather+radio",
    "https://news.example.org/story",
    "https://station.test/alerts",
]
LANGUAGES = ["en-US,en;q=0.9", "fr-CA", "de", None]
COUNTRIES = [
    ("US", "United States", "CA", "California", "Sacramento"),
    ("GB", "United Kingdom", "ENG", "England", "London"),
    (None, None, None, None, None),
]


def _addresses(rng: random.Random) -> list[str]:
    v4 = [f"198.51.100.{n}" for n in rng.sample(range(1, 250), 18)]
    v6 = [f"2001:db8:{net}:{sub}::{host:x}" for net in (1, 2) for sub in (0, 1) for host in (1, 2)]
    return v4 + v6


def _request(rng: random.Random, when: float, ip: str) -> Observed:
    kind = rng.random()
    method, status = "GET", rng.choice([200, 200, 200, 304, 404, 500])
    if kind < 0.55:
        path = rng.choice(PAGES)
    elif kind < 0.75:
        path = rng.choice(FILES)
    elif kind < 0.85:
        path, method, status = "/auth/login", "POST", rng.choice([200, 401, 401])
    elif kind < 0.92:
        path, status = rng.choice(["/wp-login.php", "/.env"]), 404
    else:
        path = "/api/alerts"
    return Observed(
        ts=when,
        method=method,
        path=path,
        status=status,
        response_ms=float(rng.randint(1, 400)),
        content_length=rng.choice([None, rng.randint(0, 50_000)]),
        client_ip=ip,
        user_agent=rng.choice(AGENTS),
        referrer=rng.choice(REFERRERS),
        accept_language=rng.choice(LANGUAGES),
        authenticated=rng.random() < 0.2,
        host="station.test",
    )


def generate(now: datetime, seed: int = 7, sessions: int = 90) -> list[Row]:
    """Return rows over the 20 days before ``now``: bursts of requests per visitor, with gaps
    both under and over the visit timeout, some rows geolocated."""
    rng = random.Random(seed)
    addresses = _addresses(rng)
    origin = now.timestamp()
    rows: list[Row] = []
    for _ in range(sessions):
        ip = rng.choice(addresses)
        when = float(int(origin - rng.uniform(0, 20 * 86_400)))
        place = rng.choice(COUNTRIES)
        for _ in range(rng.randint(1, 6)):
            if when >= origin:
                break
            row = build_row(_request(rng, when, ip), None)
            code, country, region_code, region, city = place
            row.update(
                country_code=code,
                country=country,
                region_code=region_code,
                region=region,
                city=city,
                asn_org="Example Net" if code else None,
            )
            rows.append(row)
            when += rng.choice([5.0, 60.0, 600.0, 1_700.0, 1_900.0, 7_200.0])
    return rows


def select_rows(rows: Iterable[Row], period: Period, filters: Filters) -> list[Row]:
    """Return the rows inside the period that pass the filters."""
    chosen = []
    for row in rows:
        if not period.start_ts <= row["ts"] < period.end_ts:
            continue
        if filters.country is not None and row["country_code"] != filters.country:
            continue
        if filters.path is not None and row["path"] != filters.path:
            continue
        if filters.status is not None and row["status"] // 100 != filters.status:
            continue
        if filters.status_code is not None and row["status"] != filters.status_code:
            continue
        if filters.browser is not None and row["browser"] != filters.browser:
            continue
        if filters.os is not None and row["os"] != filters.os:
            continue
        if filters.method is not None and row["method"] != filters.method:
            continue
        if filters.ip is not None and row["client_ip"] != filters.ip:
            continue
        chosen.append(row)
    return chosen


def visits(rows: list[Row]) -> list[list[Row]]:
    """Split each visitor's rows into visits at gaps over 30 minutes and at midnight UTC."""
    by_visitor: dict[str, list[Row]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: (r["ts"], r["id"])):
        by_visitor[row["visitor_key"]].append(row)
    found = []
    for own in by_visitor.values():
        current = [own[0]]
        for row in own[1:]:
            gap = row["ts"] - current[-1]["ts"]
            if gap > 1800 or row["ts"] // 86_400 != current[-1]["ts"] // 86_400:
                found.append(current)
                current = []
            current.append(row)
        found.append(current)
    return found


def summary(rows: list[Row]) -> dict[str, Any]:
    """Return the summary's numbers."""
    runs = visits(rows) if rows else []
    durations = [run[-1]["ts"] - run[0]["ts"] for run in runs]
    return {
        "hits": len(rows),
        "page_views": sum(1 for row in rows if row["page_view"]),
        "unique_visitors": len({row["visitor_key"] for row in rows}),
        "visits": len(runs),
        "bounce_rate": round(100.0 * sum(len(run) == 1 for run in runs) / len(runs), 2)
        if runs
        else 0.0,
        "avg_visit_seconds": round(sum(durations) / len(durations), 1) if durations else 0.0,
        "bandwidth_bytes": sum(row["content_length"] or 0 for row in rows),
    }


def group(
    rows: list[Row], keys: tuple[str, ...], keep: Callable[[Row], bool] = lambda row: True
) -> list[tuple[Any, ...]]:
    """Return sorted (key..., hits, visitors, bytes) tuples; a None first key is left out."""
    hits: Counter[tuple[Any, ...]] = Counter()
    visitors: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    sizes: Counter[tuple[Any, ...]] = Counter()
    for row in rows:
        if row[keys[0]] is None or not keep(row):
            continue
        key = tuple(row[name] for name in keys)
        hits[key] += 1
        visitors[key].add(row["visitor_key"])
        sizes[key] += row["content_length"] or 0
    return sorted(key + (hits[key], len(visitors[key]), sizes[key]) for key in hits)


def entry_exit(rows: list[Row]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Return sorted (path, visits) of the first and the last page view of each visit."""
    entries: Counter[str] = Counter()
    exits: Counter[str] = Counter()
    for run in visits(rows) if rows else []:
        pages = [row["path"] for row in run if row["page_view"]]
        if pages:
            entries[pages[0]] += 1
            exits[pages[-1]] += 1
    return sorted(entries.items()), sorted(exits.items())


def error_sources(rows: list[Row]) -> dict[str, tuple[int, int, set[tuple[str, int]]]]:
    """Return per address: error count, the top error's count, and the (path, status) at it."""
    per: dict[str, Counter[tuple[str, int]]] = defaultdict(Counter)
    for row in rows:
        if row["status"] >= 400:
            per[row["client_ip"]][(row["path"], row["status"])] += 1
    result = {}
    for ip, counts in per.items():
        best = max(counts.values())
        result[ip] = (sum(counts.values()), best, {k for k, n in counts.items() if n == best})
    return result


def slowest(rows: list[Row]) -> list[tuple[str, str, int, float]]:
    """Return sorted (method, path, hits, average ms) of endpoints with at least 3 timed hits."""
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        if row["response_ms"] is not None:
            times[(row["method"], row["path"])].append(row["response_ms"])
    return sorted(
        (method, path, len(values), round(sum(values) / len(values), 2))
        for (method, path), values in times.items()
        if len(values) >= 3
    )


def by_day(rows: list[Row], period: Period) -> list[tuple[str, int, int, int, int]]:
    """Return (date, hits, page views, visitors, bytes) for each day of the period."""
    result = []
    for offset in range(period.days):
        day = period.first + timedelta(days=offset)
        own = [r for r in rows if r["occurred_at"].date() == day]
        result.append(
            (
                day.isoformat(),
                len(own),
                sum(1 for r in own if r["page_view"]),
                len({r["visitor_key"] for r in own}),
                sum(r["content_length"] or 0 for r in own),
            )
        )
    return result


def weekday_hour(rows: list[Row]) -> list[list[int]]:
    """Return hits by weekday (Monday 0) and hour of day."""
    grid = [[0] * 24 for _ in range(7)]
    for row in rows:
        grid[row["occurred_at"].weekday()][row["occurred_at"].hour] += 1
    return grid
