"""Every traffic report, computed in the database with SQLAlchemy Core (SQLite and PostgreSQL).

Definitions (``docs/traffic.md``): a hit is any recorded request; a page view is a row with
``page_view`` set; a visitor is a ``visitor_key`` (an IPv4 address or an IPv6 /64); a visit is a
visitor's run of requests with no gap over ``VISIT_GAP`` seconds, ended at midnight UTC, within
the period and filters; a bounce is a visit of one request. Lists are ordered by hits (then by
key) and cut at ``limit``. Without drill-down filters the dashboard reads its lists from the
daily rollups instead (``traffic.daily``, ``traffic.day_reports``), with the same definitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from pyroaring import BitMap
from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    case,
    distinct,
    func,
    or_,
    select,
)

from alertstation.traffic import daily, day_reports, rollups, tally
from alertstation.traffic.period import Filters, Period, report_title
from alertstation.traffic.tables import hour_of_ts
from alertstation.traffic.tables import web_request_logs as t
from alertstation.traffic.tally import DayTotals

Hours = dict[int, rollups.Hour]

VISIT_GAP = tally.VISIT_GAP
SLOW_MIN_HITS = day_reports.SLOW_MIN_HITS
LOGIN_PATH = tally.LOGIN_PATH
DEFAULT_LIMIT = 10


def conditions(period: Period, filters: Filters) -> ColumnElement[bool]:
    """Return the WHERE clause of the period and the drill-down filters."""
    parts: list[ColumnElement[bool]] = [t.c.ts >= period.start_ts, t.c.ts < period.end_ts]
    if filters.country is not None:
        parts.append(t.c.country_code == filters.country)
    if filters.path is not None:
        parts.append(t.c.path == filters.path)
    if filters.status is not None:
        parts.append(t.c.status.between(filters.status * 100, filters.status * 100 + 99))
    if filters.status_code is not None:
        parts.append(t.c.status == filters.status_code)
    if filters.browser is not None:
        parts.append(t.c.browser == filters.browser)
    if filters.os is not None:
        parts.append(t.c.os == filters.os)
    if filters.method is not None:
        parts.append(t.c.method == filters.method)
    if filters.ip is not None:
        parts.append(t.c.client_ip == filters.ip)
    return and_(*parts)


def _flag(condition: ColumnElement[bool]) -> Any:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def _bytes() -> Any:
    return func.coalesce(func.sum(func.coalesce(t.c.content_length, 0)), 0)


# --- summary and visits ---------------------------------------------------------------------


def _visit_rows(where: ColumnElement[bool]) -> Any:
    """Return a subquery of the matching rows numbered by visit within their visitor."""
    day = (t.c.hour // 24).label("day")
    base = select(t.c.visitor_key, day, t.c.ts, t.c.id, t.c.path, t.c.page_view)
    base = base.where(where).subquery()
    order = (base.c.ts, base.c.id)
    # Visits end at a gap over VISIT_GAP and at midnight UTC (each day's visits stand alone).
    within = (base.c.visitor_key, base.c.day)
    previous = func.lag(base.c.ts).over(partition_by=within, order_by=order)
    starts = case((or_(previous.is_(None), base.c.ts - previous > VISIT_GAP), 1), else_=0)
    flagged = select(base, starts.label("starts")).subquery()
    visit = func.sum(flagged.c.starts).over(
        partition_by=(flagged.c.visitor_key, flagged.c.day), order_by=(flagged.c.ts, flagged.c.id)
    )
    return select(
        flagged.c.visitor_key,
        flagged.c.day,
        flagged.c.ts,
        flagged.c.id,
        flagged.c.path,
        flagged.c.page_view,
        visit.label("visit"),
    ).subquery()


def _visits(where: ColumnElement[bool]) -> Any:
    rows = _visit_rows(where)
    return (
        select(
            rows.c.visitor_key,
            rows.c.day,
            rows.c.visit,
            func.count().label("requests"),
            (func.max(rows.c.ts) - func.min(rows.c.ts)).label("duration"),
        )
        .group_by(rows.c.visitor_key, rows.c.day, rows.c.visit)
        .subquery()
    )


def _hour_range(period: Period) -> tuple[int, int]:
    return hour_of_ts(period.start_ts), hour_of_ts(period.end_ts) - 1


def _counts(
    conn: Connection, period: Period, filters: Filters, hours: Hours | None = None
) -> tuple[int, int, int, int]:
    """Return hits, page views, unique visitors and bytes: from the hourly rollups (``hours``,
    read when not given) when there are no drill-down filters, else from the raw rows."""
    if filters == Filters():
        hours = hours if hours is not None else rollups.hours(conn, *_hour_range(period))
        visitors = BitMap.union(*(hour.visitors for hour in hours.values())) if hours else BitMap()
        return (
            sum(hour.hits for hour in hours.values()),
            sum(hour.page_views for hour in hours.values()),
            len(visitors),
            sum(hour.bytes for hour in hours.values()),
        )
    row = conn.execute(
        select(
            func.count(),
            _flag(t.c.page_view),
            func.count(distinct(t.c.visitor_key)),
            _bytes(),
        ).where(conditions(period, filters))
    ).one()
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])


def summary(
    conn: Connection,
    period: Period,
    filters: Filters,
    days: DayTotals | None = None,
    hours: Hours | None = None,
) -> dict[str, Any]:
    """Return hits, page views, unique visitors, visits, bounce rate, visit length, bandwidth.

    Without filters the visits come from the daily rollups (``days``, read when not given) and
    the counts from the hourly ones (``hours``, read when not given).
    """
    counts = _counts(conn, period, filters, hours)
    if filters == Filters():
        days = days if days is not None else daily.totals(conn, *day_reports.day_range(period))
        return {
            "hits": counts[0],
            "page_views": counts[1],
            "unique_visitors": counts[2],
            **day_reports.visits(days),
            "bandwidth_bytes": counts[3],
        }
    where = conditions(period, filters)
    visits = _visits(where)
    visit_count, bounces, average = conn.execute(
        select(
            func.count(),
            _flag(visits.c.requests == 1),
            func.avg(visits.c.duration),
        )
    ).one()
    visit_count = int(visit_count)
    return {
        "hits": counts[0],
        "page_views": counts[1],
        "unique_visitors": counts[2],
        "visits": visit_count,
        "bounce_rate": round(100.0 * int(bounces) / visit_count, 2) if visit_count else 0.0,
        "avg_visit_seconds": round(float(average), 1) if average is not None else 0.0,
        "bandwidth_bytes": counts[3],
    }


def entry_exit_pages(
    conn: Connection, period: Period, filters: Filters, limit: int = DEFAULT_LIMIT
) -> dict[str, list[dict[str, Any]]]:
    """Return the first and the last page viewed in each visit, counted by path."""
    rows = _visit_rows(conditions(period, filters))
    key = (rows.c.visitor_key, rows.c.day, rows.c.visit)
    ranked = (
        select(
            rows.c.path,
            func.row_number()
            .over(partition_by=key, order_by=(rows.c.ts, rows.c.id))
            .label("from_start"),
            func.row_number()
            .over(partition_by=key, order_by=(rows.c.ts.desc(), rows.c.id.desc()))
            .label("from_end"),
        )
        .where(rows.c.page_view)
        .subquery()
    )
    result = {}
    for name, column in (("entry_pages", ranked.c.from_start), ("exit_pages", ranked.c.from_end)):
        visits = func.count().label("visits")
        query = (
            select(ranked.c.path, visits)
            .where(column == 1)
            .group_by(ranked.c.path)
            .order_by(visits.desc(), ranked.c.path)
            .limit(limit)
        )
        found = conn.execute(query)
        result[name] = [{"path": row.path, "visits": int(row.visits)} for row in found]
    return result


# --- grouped lists --------------------------------------------------------------------------


def top(
    conn: Connection,
    where: ColumnElement[bool],
    columns: Sequence[Any],
    names: Sequence[str],
    limit: int,
    *,
    skip_null: bool = True,
) -> list[dict[str, Any]]:
    """Return rows grouped by ``columns``: hits, visitors and bytes, most hits first."""
    hits = func.count().label("hits")
    query = select(
        *columns, hits, func.count(distinct(t.c.visitor_key)).label("visitors"), _bytes()
    ).where(where)
    if skip_null:
        query = query.where(columns[0].is_not(None))
    query = query.group_by(*columns).order_by(hits.desc(), *columns).limit(limit)
    return [
        {
            **{name: value for name, value in zip(names, row[: len(names)], strict=True)},
            "hits": int(row[len(names)]),
            "visitors": int(row[len(names) + 1]),
            "bytes": int(row[len(names) + 2]),
        }
        for row in conn.execute(query)
    ]


_KINDS: dict[str, ColumnElement[bool]] = {
    "page_view": t.c.page_view,
    "is_bot": t.c.is_bot,
    "error": t.c.status >= 400,
    "region": t.c.region.is_not(None),
}
GROUPS: dict[str, tuple[tuple[str, ...], ColumnElement[bool] | None]] = {
    name: (keys, _KINDS[kind] if kind else None) for name, (keys, kind) in tally.GROUPS.items()
}


def grouped(
    conn: Connection, period: Period, filters: Filters, limit: int = DEFAULT_LIMIT
) -> dict[str, list[dict[str, Any]]]:
    """Return every grouped list of ``GROUPS``."""
    where = conditions(period, filters)
    result = {}
    for name, (keys, extra) in GROUPS.items():
        clause = where if extra is None else and_(where, extra)
        result[name] = top(conn, clause, [t.c[key] for key in keys], keys, limit)
    return result


def error_sources(
    conn: Connection, period: Period, filters: Filters, limit: int = DEFAULT_LIMIT
) -> list[dict[str, Any]]:
    """Return the addresses with the most error answers, each with its most frequent error."""
    errors = (
        select(t.c.client_ip, t.c.path, t.c.status, func.count().label("n"))
        .where(conditions(period, filters), t.c.status >= 400)
        .group_by(t.c.client_ip, t.c.path, t.c.status)
        .subquery()
    )
    ranked = select(
        errors,
        func.sum(errors.c.n).over(partition_by=errors.c.client_ip).label("total"),
        func.row_number()
        .over(
            partition_by=errors.c.client_ip,
            order_by=(errors.c.n.desc(), errors.c.path, errors.c.status),
        )
        .label("rank"),
    ).subquery()
    query = (
        select(ranked.c.client_ip, ranked.c.total, ranked.c.path, ranked.c.status, ranked.c.n)
        .where(ranked.c.rank == 1)
        .order_by(ranked.c.total.desc(), ranked.c.client_ip)
        .limit(limit)
    )
    return [
        {
            "ip": row.client_ip,
            "errors": int(row.total),
            "top_path": row.path,
            "top_status": int(row.status),
            "top_count": int(row.n),
        }
        for row in conn.execute(query)
    ]


def slowest_endpoints(
    conn: Connection, period: Period, filters: Filters, limit: int = DEFAULT_LIMIT
) -> list[dict[str, Any]]:
    """Return the endpoints (method and path) of at least ``SLOW_MIN_HITS`` timed hits, slowest
    average first."""
    average = func.avg(t.c.response_ms).label("avg_ms")
    query = (
        select(t.c.method, t.c.path, func.count().label("hits"), average, func.max(t.c.response_ms))
        .where(conditions(period, filters), t.c.response_ms.is_not(None))
        .group_by(t.c.method, t.c.path)
        .having(func.count() >= SLOW_MIN_HITS)
        .order_by(average.desc(), t.c.method, t.c.path)
        .limit(limit)
    )
    return [
        {
            "method": row[0],
            "path": row[1],
            "hits": int(row[2]),
            "avg_ms": round(float(row[3]), 2),
            "max_ms": round(float(row[4]), 2),
        }
        for row in conn.execute(query)
    ]


# --- time -----------------------------------------------------------------------------------


def time_series(
    conn: Connection, period: Period, filters: Filters, hours: Hours | None = None
) -> list[dict[str, Any]]:
    """Return one entry per day of the period: hits, page views, visitors, bytes (zeros kept);
    without filters from the hourly rollups (``hours``, read when not given)."""
    if filters == Filters():
        return _time_series_from_rollups(
            period, hours if hours is not None else rollups.hours(conn, *_hour_range(period))
        )
    day = (t.c.hour // 24).label("day")
    query = (
        select(
            day,
            func.count(),
            _flag(t.c.page_view),
            func.count(distinct(t.c.visitor_key)),
            _bytes(),
        )
        .where(conditions(period, filters))
        .group_by(day)
    )
    found = {int(row[0]): row for row in conn.execute(query)}
    first = int(period.start_ts // tally.DAY_SECONDS)
    series = []
    for offset in range(period.days):
        row = found.get(first + offset)
        series.append(
            {
                "date": (period.first + timedelta(days=offset)).isoformat(),
                "hits": int(row[1]) if row else 0,
                "page_views": int(row[2]) if row else 0,
                "visitors": int(row[3]) if row else 0,
                "bytes": int(row[4]) if row else 0,
            }
        )
    return series


def _time_series_from_rollups(period: Period, hours: Hours) -> list[dict[str, Any]]:
    first_hour = hour_of_ts(period.start_ts)
    series = []
    for offset in range(period.days):
        own = [
            hours[h]
            for h in range(first_hour + 24 * offset, first_hour + 24 * offset + 24)
            if h in hours
        ]
        visitors = BitMap.union(*(hour.visitors for hour in own)) if own else BitMap()
        series.append(
            {
                "date": (period.first + timedelta(days=offset)).isoformat(),
                "hits": sum(hour.hits for hour in own),
                "page_views": sum(hour.page_views for hour in own),
                "visitors": len(visitors),
                "bytes": sum(hour.bytes for hour in own),
            }
        )
    return series


def heatmaps(
    conn: Connection, period: Period, filters: Filters, hours: Hours | None = None
) -> dict[str, Any]:
    """Return hits by hour of day, by day of week (Monday 0), and the week-by-hour grid;
    without filters from the hourly rollups (``hours``, read when not given)."""
    grid = [[0] * 24 for _ in range(7)]
    if filters == Filters():
        if hours is None:
            hours = rollups.hours(conn, *_hour_range(period))
        for hour, value in hours.items():
            grid[(hour // 24 + 3) % 7][hour % 24] += value.hits
        return _heatmap_payload(grid)
    hour_of_day = (t.c.hour % 24).label("hour_of_day")
    # 1970-01-01 was a Thursday: day 0 of the epoch is weekday 3 counted from Monday.
    day_of_week = (((t.c.hour // 24) + 3) % 7).label("day_of_week")
    query = (
        select(day_of_week, hour_of_day, func.count())
        .where(conditions(period, filters))
        .group_by(day_of_week, hour_of_day)
    )
    for weekday, hour, hits in conn.execute(query):
        grid[int(weekday)][int(hour)] = int(hits)
    return _heatmap_payload(grid)


def _heatmap_payload(grid: list[list[int]]) -> dict[str, Any]:
    return {
        "hits_by_hour": [sum(grid[day][hour] for day in range(7)) for hour in range(24)],
        "hits_by_weekday": [sum(row) for row in grid],
        "weekday_hour": grid,
    }


# --- login security -------------------------------------------------------------------------


def login_security(
    conn: Connection, period: Period, filters: Filters, limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """Return sign-in attempts (POST /auth/login), failures, successes and the failing sources."""
    where = and_(conditions(period, filters), t.c.method == "POST", t.c.path == LOGIN_PATH)
    failed = t.c.status >= 400
    attempts, failures, successes = conn.execute(
        select(func.count(), _flag(failed), _flag(t.c.status.between(200, 299))).where(where)
    ).one()
    return {
        "attempts": int(attempts),
        "failures": int(failures),
        "successes": int(successes),
        "failing_sources": top(conn, and_(where, failed), [t.c.client_ip], ["ip"], limit),
    }


# --- filter choices -------------------------------------------------------------------------


def filter_meta(
    conn: Connection, period: Period, filters: Filters, days: DayTotals | None = None
) -> dict[str, Any]:
    """Return the report's title, the period, the filters applied, and the values each filter
    can take in the period (from its unfiltered daily totals ``days``, read when not given)."""
    days = days if days is not None else daily.totals(conn, *day_reports.day_range(period))
    return {
        "title": report_title(period, filters),
        "period": period.as_dict(),
        "previous_period": period.previous().as_dict(),
        "filters": filters.as_dict(),
        "choices": day_reports.choices(days),
    }


def dashboard(
    conn: Connection, period: Period, filters: Filters, limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """Return the whole dashboard payload (anomalies are added by the caller).

    Without drill-down filters every list comes from the rollups (``traffic.daily`` for the
    complete days, raw rows for the others); with filters, from the matching raw rows.
    """
    # The visitor bitmaps of the values shown only (``daily.fill_visitors``), below.
    days = daily.totals(conn, *day_reports.day_range(period), visitors=False)
    before = period.previous()
    # Without filters the summary, the time series and the heatmaps read the same hours: once.
    hours = rollups.hours(conn, *_hour_range(period)) if filters == Filters() else None
    payload: dict[str, Any] = {
        "filter_meta": filter_meta(conn, period, filters, days),
        "time_series": time_series(conn, period, filters, hours),
        **heatmaps(conn, period, filters, hours),
    }
    if filters == Filters():
        daily.fill_visitors(conn, days, day_reports.shown(days, limit))
        # The previous period's summary needs its visits only.
        previous_days = daily.totals(conn, *day_reports.day_range(before), lists=False)
        payload.update(
            summary=summary(conn, period, filters, days, hours),
            summary_prev=summary(conn, before, filters, previous_days),
            **day_reports.entry_exit(days, limit),
            **day_reports.grouped(days, limit),
            top_error_sources=day_reports.error_sources(days, limit),
            slowest_endpoints=day_reports.slowest(days, limit),
            login_security=day_reports.login_security(days, limit),
        )
    else:
        payload.update(
            summary=summary(conn, period, filters),
            summary_prev=summary(conn, before, filters),
            **entry_exit_pages(conn, period, filters, limit),
            **grouped(conn, period, filters, limit),
            top_error_sources=error_sources(conn, period, filters, limit),
            slowest_endpoints=slowest_endpoints(conn, period, filters, limit),
            login_security=login_security(conn, period, filters, limit),
        )
    payload["bandwidth"] = {
        "total_bytes": payload["summary"]["bandwidth_bytes"],
        "by_day": [{"date": day["date"], "bytes": day["bytes"]} for day in payload["time_series"]],
    }
    return payload
