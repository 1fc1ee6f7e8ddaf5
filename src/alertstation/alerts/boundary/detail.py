"""What an operator reads first on an alert's page: the texts, the drawn areas, the VTEC chain.

The stored raw message is parsed again for the description, instruction and area shapes (they
are not columns); the VTEC chain comes from ``cap_alert_vtec``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import Connection, and_, select

from alertstation.alerts.boundary.geometry import AlertShape, alert_shapes, svg_map
from alertstation.alerts.boundary.store import Boundary, load_boundary
from alertstation.alerts.cap import parse_cap_xml
from alertstation.alerts.jsonfeed import parse_feature
from alertstation.alerts.model import Alert
from alertstation.alerts.tables import cap_alert_vtec, cap_alerts

_V = cap_alert_vtec.c
_A = cap_alerts.c


@dataclass(frozen=True)
class ChainLink:
    """Another alert of the same VTEC event: its id, action, state and when it was sent."""

    alert_id: int
    action: str
    event: str
    state: str
    sent: Any
    current: bool


@dataclass(frozen=True)
class AlertDetail:
    """The parsed texts, areas, map and VTEC chains of one stored alert."""

    description: str = ""
    instruction: str = ""
    web: str = ""
    areas: list[dict[str, Any]] = field(default_factory=list)
    shapes: list[AlertShape] = field(default_factory=list)
    shape_problems: list[str] = field(default_factory=list)
    svg: str = ""
    boundary: Boundary | None = None
    chains: list[dict[str, Any]] = field(default_factory=list)
    parse_problem: str = ""


def parse_stored(raw: str, source: str) -> Alert:
    """Parse a stored raw message again (CAP XML, or a JSON feature for ``json-api``)."""
    if source == "json-api":
        return parse_feature(orjson.loads(raw))
    return parse_cap_xml(raw.encode("utf-8"), source=source)  # type: ignore[arg-type]


def vtec_chains(conn: Connection, alert_id: int) -> list[dict[str, Any]]:
    """Return, per VTEC string of the alert, every stored alert of that event in sent order."""
    own = conn.execute(select(cap_alert_vtec).where(_V.alert_id == alert_id).order_by(_V.position))
    chains = []
    for row in own.all():
        key = (row.office, row.phenomenon, row.significance, row.etn, row.year)
        members = conn.execute(
            select(_V.alert_id, _V.action, _A.event, _A.state, _A.sent)
            .join(cap_alerts, _A.id == _V.alert_id)
            .where(
                and_(
                    _V.office == key[0],
                    _V.phenomenon == key[1],
                    _V.significance == key[2],
                    _V.etn == key[3],
                    _V.year == key[4],
                )
            )
            .order_by(_A.sent, _A.id)
        ).all()
        chains.append(
            {
                "key": f"{row.office}.{row.phenomenon}.{row.significance}.{row.etn:04d}"
                f" ({row.year})",
                "action": row.action,
                "links": [
                    ChainLink(
                        m.alert_id, m.action, m.event, m.state, m.sent, m.alert_id == alert_id
                    )
                    for m in members
                ],
            }
        )
    return chains


def alert_detail(conn: Connection, row: Any) -> AlertDetail:
    """Return the detail of a stored alert row (``cap_alerts``)."""
    boundary = load_boundary(conn)
    chains = vtec_chains(conn, row.id)
    try:
        alert = parse_stored(row.raw, row.source)
    except (ValueError, orjson.JSONDecodeError) as ex:
        return AlertDetail(boundary=boundary, chains=chains, parse_problem=str(ex)[:300])
    shapes, problems = alert_shapes(alert)
    infos = alert.infos
    areas = [
        {"desc": area.desc, "polygons": len(area.polygons), "circles": len(area.circles)}
        for info in infos[:1]
        for area in info.areas
    ]
    title = f"{alert.event or 'Alert'} areas" + (f" over {boundary.name}" if boundary else "")
    svg = svg_map(boundary.area if boundary else None, shapes, title=title) if shapes else ""
    return AlertDetail(
        description=alert.description,
        instruction=alert.instruction,
        web=alert.infos[0].web if alert.infos else "",
        areas=areas,
        shapes=shapes,
        shape_problems=problems,
        svg=svg,
        boundary=boundary,
        chains=chains,
    )
