"""The pure lifecycle rules: deciding a message, the forward guard (per-code rules:
test_lifecycle_codes.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alertstation.alerts import lifecycle
from alertstation.alerts.lifecycle import Verdict
from alertstation.alerts.model import Alert
from alertstation.alerts.vtec import parse_vtec_strings

T0 = datetime(2026, 5, 14, 22, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def decide(**kwargs: object) -> Verdict:
    values: dict[str, object] = {
        "msg_type": "Alert",
        "sent": at(0),
        "expires": at(60),
        "vtec": None,
        "updated": False,
        "cancelled_by": None,
        "now": at(1),
    }
    values.update(kwargs)
    return lifecycle.decide(**values)  # type: ignore[arg-type]


def test_decide() -> None:
    assert decide() == Verdict("active")
    assert decide(now=at(60)) == Verdict("expired")
    assert decide(expires=None, now=at(10_000)) == Verdict("active")
    assert decide(msg_type="Cancel", now=at(100)) == Verdict("cancelled", at(0))
    assert decide(updated=True) == Verdict("superseded")
    assert decide(cancelled_by=at(5)) == Verdict("cancelled", at(5))
    assert decide(updated=True, cancelled_by=at(5)) == Verdict("superseded")
    assert decide(cancelled_by=at(60)) == Verdict("expired")  # no early lift
    assert decide(vtec=Verdict("cancelled", at(70))) == Verdict("expired")
    assert decide(vtec=Verdict("active"), cancelled_by=at(5)) == Verdict("cancelled", at(5))


def alert(**kwargs: object) -> Alert:
    values: dict[str, object] = {"identifier": "x", "sender": "s", "sent": T0, "event_code": "TOR"}
    values.update(kwargs)
    return Alert(**values)  # type: ignore[arg-type]


def refusal(item: Alert, state: str = "active", in_area: bool = True) -> str:
    return lifecycle.forward_refusal(item, state=state, in_area=in_area, events=["TOR"])


def test_forward_guard() -> None:
    vtec = "/O.{}.KOUN.TO.W.0001.260514T2200Z-260514T2300Z/"
    assert refusal(alert()) == ""
    assert refusal(alert(vtec=parse_vtec_strings(vtec.format("NEW")))) == ""
    assert refusal(alert(vtec=parse_vtec_strings(vtec.format("EXA")))) == ""
    assert refusal(alert(msg_type="Cancel")) == "cancellation"
    for action in ("CAN", "EXP"):
        item = alert(vtec=parse_vtec_strings(vtec.format(action)))
        assert refusal(item) == "terminal VTEC action"
    for action in ("UPG", "CON", "EXT", "COR"):
        item = alert(vtec=parse_vtec_strings(vtec.format(action)))
        assert refusal(item) == "no new event or area in the VTEC"
    assert refusal(alert(msg_type="Update")) == "msgType Update"
    assert refusal(alert(), state="cancelled") == "alert is cancelled"
    assert refusal(alert(), in_area=False) == "outside the broadcast area"
    assert refusal(alert(status="Test")) == "status Test"
    assert refusal(alert(event_code="SVS")) == "event not in the forward list"
