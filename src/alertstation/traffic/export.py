"""The traffic dashboard as CSV: the report's title, period and filters first, then the summary,
the daily series and every table, one section each.

Every cell goes through :func:`alertstation.http.csv_cells.safe_cell`, the rule the audit CSV
follows too, since paths, referrers, user agents and search phrases come from the outside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from alertstation.http.csv_cells import write_rows
from alertstation.traffic.period import FILTER_NAMES

SUMMARY = (
    "hits",
    "page_views",
    "unique_visitors",
    "visits",
    "bounce_rate",
    "avg_visit_seconds",
    "bandwidth_bytes",
)
# (payload key, heading) of each table, in the dashboard's order.
SECTIONS = (
    ("top_pages", "Top pages"),
    ("entry_pages", "Entry pages"),
    ("exit_pages", "Exit pages"),
    ("top_visitors", "Top visitors"),
    ("countries", "Countries"),
    ("cities", "Cities"),
    ("region_breakdown", "Regions"),
    ("organizations", "Organizations"),
    ("browsers", "Browsers"),
    ("operating_systems", "Operating systems"),
    ("device_types", "Device types"),
    ("methods", "HTTP methods"),
    ("status_codes", "Status codes"),
    ("authenticated", "Signed in"),
    ("ip_version_breakdown", "IP version"),
    ("languages", "Languages"),
    ("referrers", "Referrers"),
    ("search_engines", "Search engines"),
    ("keyphrases", "Keyphrases"),
    ("file_types", "File types"),
    ("robots", "Robots"),
    ("top_error_urls", "Top error URLs"),
    ("top_error_sources", "Top error sources"),
    ("slowest_endpoints", "Slowest endpoints (at least 3 hits)"),
)


def dashboard_csv(payload: Mapping[str, Any]) -> str:
    """Return the dashboard payload as multi-section CSV text.

    The first section (``# Report``) names the title, the period and every active filter (one
    ``filter`` row each; ``filters,none`` when the report covers all traffic).
    """
    meta = payload["filter_meta"]
    period, chosen = meta["period"], meta["filters"]
    rows: list[Sequence[object]] = [
        ["# Report"],
        ["title", meta["title"]],
        ["from", period["start"]],
        ["to", period["end"]],
    ]
    active = [["filter", name, chosen[name]] for name in FILTER_NAMES if chosen.get(name)]
    rows += active or [["filters", "none"]]
    rows += [[], ["# Summary"], ["metric", "value", "previous"]]
    summary, previous = payload["summary"], payload["summary_prev"]
    rows += [[name, summary.get(name), previous.get(name)] for name in SUMMARY]
    rows += [[], ["# Daily"], ["date", "hits", "page_views", "visitors", "bytes"]]
    rows += [
        [day["date"], day["hits"], day["page_views"], day["visitors"], day["bytes"]]
        for day in payload["time_series"]
    ]
    for key, heading in SECTIONS:
        table = payload.get(key) or []
        if not table:
            continue
        keys = list(table[0])
        rows += [[], [f"# {heading}"], keys]
        rows += [[entry.get(name) for name in keys] for entry in table]
    return write_rows(rows)
