"""The dashboard's lists without drill-down filters, from the daily rollups (``traffic.daily``).

Each function turns the days' totals into the same payload part ``reports`` computes in SQL from
raw rows when a filter is set; ``tests/traffic/test_reports.py`` holds both to one plain-Python
computation.
"""

from __future__ import annotations

from typing import Any

from alertstation.traffic.period import Period
from alertstation.traffic.tally import (
    DAY_SECONDS,
    ENTRY,
    EXIT,
    GROUPS,
    LOGIN_FAILURES,
    LOGINS,
    TIMINGS,
    DayTotals,
    Tally,
    ordered,
)

SLOW_MIN_HITS = 3
CHOICES_LIMIT = 200


def day_range(period: Period) -> tuple[int, int]:
    """Return the first and last epoch day of the period."""
    return int(period.start_ts // DAY_SECONDS), int(period.end_ts // DAY_SECONDS) - 1


def visits(totals: DayTotals) -> dict[str, Any]:
    """Return the summary's visit numbers: visits, bounce rate and average visit length."""
    count = totals.visits
    return {
        "visits": count,
        "bounce_rate": round(100.0 * totals.bounces / count, 2) if count else 0.0,
        "avg_visit_seconds": round(totals.visit_seconds / count, 1) if count else 0.0,
    }


def _item(names: tuple[str, ...], key: tuple[Any, ...], tally: Tally) -> dict[str, Any]:
    return {
        **dict(zip(names, key, strict=True)),
        "hits": tally.hits,
        "visitors": len(tally.visitors),
        "bytes": tally.bytes,
    }


def shown(totals: DayTotals, limit: int) -> dict[str, list[tuple[Any, ...]]]:
    """Return the values of each list whose visitors the dashboard shows (``grouped`` and the
    failing sign-in sources): the first ``limit`` of each by hits."""
    wanted = {name: [key for key, _ in ordered(totals.lists[name], limit)] for name in GROUPS}
    wanted[LOGIN_FAILURES] = [key for key, _ in ordered(totals.lists[LOGIN_FAILURES], limit)]
    return wanted


def grouped(totals: DayTotals, limit: int) -> dict[str, list[dict[str, Any]]]:
    """Return every grouped list, most hits first."""
    return {
        name: [_item(names, key, tally) for key, tally in ordered(totals.lists[name], limit)]
        for name, (names, _) in GROUPS.items()
    }


def entry_exit(totals: DayTotals, limit: int) -> dict[str, list[dict[str, Any]]]:
    """Return the entry and exit pages of the visits, most visits first."""
    return {
        name: [
            {"path": key[0], "visits": tally.hits}
            for key, tally in ordered(totals.lists[dimension], limit)
        ]
        for name, dimension in (("entry_pages", ENTRY), ("exit_pages", EXIT))
    }


def error_sources(totals: DayTotals, limit: int) -> list[dict[str, Any]]:
    """Return the addresses with the most error answers, each with its most frequent error."""
    sources = []
    for address, answers in totals.errors.items():
        (path, status), count = min(answers.items(), key=lambda a: (-a[1], a[0]))
        sources.append((sum(answers.values()), address, path, status, count))
    sources.sort(key=lambda source: (-source[0], source[1]))
    return [
        {"ip": address, "errors": total, "top_path": path, "top_status": status, "top_count": n}
        for total, address, path, status, n in sources[:limit]
    ]


def slowest(totals: DayTotals, limit: int) -> list[dict[str, Any]]:
    """Return the endpoints of at least ``SLOW_MIN_HITS`` timed hits, slowest average first."""
    timed = [
        (tally.total_ms / tally.hits, method, path, tally)
        for (method, path), tally in totals.lists[TIMINGS].items()
        if tally.hits >= SLOW_MIN_HITS
    ]
    timed.sort(key=lambda entry: (-entry[0], entry[1], entry[2]))
    return [
        {
            "method": method,
            "path": path,
            "hits": tally.hits,
            "avg_ms": round(average, 2),
            "max_ms": round(float(tally.max_ms or 0.0), 2),
        }
        for average, method, path, tally in timed[:limit]
    ]


def login_security(totals: DayTotals, limit: int) -> dict[str, Any]:
    """Return sign-in attempts, failures, successes and the failing sources."""
    by_status = {key[0]: tally.hits for key, tally in totals.lists[LOGINS].items()}
    return {
        "attempts": sum(by_status.values()),
        "failures": sum(n for status, n in by_status.items() if status >= 400),
        "successes": sum(n for status, n in by_status.items() if 200 <= status <= 299),
        "failing_sources": [
            _item(("ip",), key, tally)
            for key, tally in ordered(totals.lists[LOGIN_FAILURES], limit)
        ],
    }


def choices(totals: DayTotals) -> dict[str, list[Any]]:
    """Return the values each drill-down filter can take in the period."""
    found: dict[str, list[Any]] = {}
    for name, dimension in (
        ("country", "countries"),
        ("browser", "browsers"),
        ("os", "operating_systems"),
        ("method", "methods"),
    ):
        values = {key[0] for key in totals.lists[dimension]}
        found[name] = sorted(values)[:CHOICES_LIMIT]
    families = {int(key[0]) // 100 for key in totals.lists["status_codes"]}
    found["status"] = [f"{family}xx" for family in sorted(families)]
    return found
