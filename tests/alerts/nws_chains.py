"""Multi-segment products built the way NWS issues them (Directive 10-1701, 10-1703).

Each product is several CAP messages with the same ``sent``, one per segment, identifiers
ending ``.001.1``, ``.002.1``; each segment lists its own UGC codes, SAME codes and VTEC.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from alertstation.alerts.model import Alert, Reference
from alertstation.alerts.vtec import parse_vtec_strings

SENDER = "w-nws.webmaster@noaa.gov"
T0 = datetime(2026, 4, 2, 18, 0, tzinfo=UTC)
END = "260403T0200Z"  # every event here runs to 02:00Z the next day


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def vtec(action: str, office: str, phen: str, sig: str, etn: int) -> str:
    return f"/O.{action}.{office}.{phen}.{sig}.{etn:04d}.260402T1800Z-{END}/"


def segment(
    product: str,
    number: int,
    minutes: int,
    vtecs: Sequence[str],
    ugc: Sequence[str],
    same: Sequence[str],
    *,
    event: str = "Tornado Watch",
    code: str = "TOA",
) -> Alert:
    """One segment of product ``product`` sent ``minutes`` after T0 (expires at the event end)."""
    sent = at(minutes)
    actions = {v.split(".")[1] for v in vtecs}
    msg_type = "Alert" if actions <= {"NEW"} else "Update"
    return Alert(
        identifier=f"urn:oid:2.49.0.1.840.0.{product}.{number:03d}.1",
        sender=SENDER,
        sent=sent,
        msg_type=msg_type,
        event=event,
        event_code=code,
        expires=at(480),
        same_codes=tuple(same),
        ugc_codes=tuple(ugc),
        vtec=parse_vtec_strings(list(vtecs)),
    )


def oh(*numbers: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Ohio counties: (UGC county codes, SAME codes)."""
    return (
        tuple(f"OHC{n:03d}" for n in numbers),
        tuple(f"039{n:03d}" for n in numbers),
    )


def county_chain() -> list[Alert]:
    """A county-based Tornado Watch: NEW; EXA beside CON; partial CAN beside CON; early EXP."""

    def to(action: str) -> str:
        return vtec(action, "KILN", "TO", "A", 201)

    first = oh(1, 2, 3, 4, 5, 6, 7)
    return [
        segment("p1", 1, 0, [to("NEW")], *first),
        segment("p2", 1, 60, [to("EXA")], *oh(9, 11)),
        segment("p2", 2, 60, [to("CON")], *first),
        segment("p3", 1, 120, [to("CAN")], *oh(1, 2)),
        segment("p3", 2, 120, [to("CON")], *oh(3, 4, 5, 6, 7, 9, 11)),
        segment("p4", 1, 180, [to("EXP")], *oh(3, 4, 5, 6, 7, 9, 11)),
    ]


#: Indiana forecast zones with the SAME county list NWS gives their segments.
ZONES = {"INZ028": "018057", "INZ029": "018095", "INZ030": "018097", "INZ031": "018011",
         "INZ035": "018159", "INZ036": "018067"}  # fmt: skip


def _zones(*names: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(names), tuple(ZONES[n] for n in names)


def zone_chain() -> list[Alert]:
    """A zone-based Winter Storm Watch, upgraded to a Warning for some zones (UPG + NEW in one
    segment) while it continues in the others; then a partial CAN; then EXP before the end."""

    def wa(action: str) -> str:
        return vtec(action, "KIND", "WS", "A", 3)

    def ww(action: str) -> str:
        return vtec(action, "KIND", "WS", "W", 5)

    kw = {"event": "Winter Storm Watch", "code": "WSA"}
    warn = {"event": "Winter Storm Warning", "code": "WSW"}
    return [
        segment("w1", 1, 0, [wa("NEW")], *_zones(*ZONES), **kw),
        segment("w2", 1, 60, [wa("UPG"), ww("NEW")], *_zones("INZ028", "INZ029"), **warn),
        segment("w2", 2, 60, [wa("CON")], *_zones("INZ030", "INZ031", "INZ035", "INZ036"), **kw),
        segment("w3", 1, 120, [ww("CON")], *_zones("INZ028", "INZ029"), **warn),
        segment("w3", 2, 120, [wa("CAN")], *_zones("INZ030", "INZ031"), **kw),
        segment("w3", 3, 120, [wa("CON")], *_zones("INZ035", "INZ036"), **kw),
        segment("w4", 1, 180, [ww("EXP")], *_zones("INZ028", "INZ029"), **warn),
        segment("w4", 2, 180, [wa("EXP")], *_zones("INZ035", "INZ036"), **kw),
    ]


def marine_chain() -> list[Alert]:
    """A Small Craft Advisory for two marine zones, cancelled for one, continued in the other."""

    def sc(action: str) -> str:
        return vtec(action, "KLWX", "SC", "Y", 77)

    kw = {"event": "Small Craft Advisory", "code": "SMW"}
    return [
        segment("m1", 1, 0, [sc("NEW")], ("ANZ355", "ANZ356"), ("073355", "073356"), **kw),
        segment("m2", 1, 30, [sc("CAN")], ("ANZ355",), ("073355",), **kw),
        segment("m2", 2, 30, [sc("CON")], ("ANZ356",), ("073356",), **kw),
    ]


def cap_chain() -> list[Alert]:
    """Messages without VTEC: an Alert, an Update of it, a Cancel of the Update."""

    def message(name: str, minutes: int, msg_type: str, ref: str = "") -> Alert:
        refs = (Reference(SENDER, ref, at(0)),) if ref else ()
        return Alert(
            identifier=name, sender=SENDER, sent=at(minutes), msg_type=msg_type,
            event="Civil Emergency Message", event_code="CEM", expires=at(480),
            same_codes=("039001",), references=refs,
        )  # fmt: skip

    return [
        message("cem-1", 0, "Alert"),
        message("cem-2", 20, "Update", "cem-1"),
        message("cem-3", 40, "Cancel", "cem-2"),
    ]


CHAINS = {
    "county": county_chain,
    "county-partial": lambda: county_chain()[:5],
    "zone": zone_chain,
    "marine": marine_chain,
    "cap": cap_chain,
}
