"""The pure lifecycle rules: chain verdicts, merging, deciding, the forward guard."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alertstation.alerts import lifecycle
from alertstation.alerts.lifecycle import ChainRow, Verdict
from alertstation.alerts.model import Alert
from alertstation.alerts.vtec import parse_vtec_strings

T0 = datetime(2026, 5, 14, 22, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_latest_live_member_is_the_head() -> None:
    rows = [ChainRow(2, at(10), "CON"), ChainRow(1, at(0), "NEW"), ChainRow(3, at(20), "EXT")]
    verdicts = lifecycle.chain_verdicts(rows)
    assert verdicts == {
        1: Verdict("superseded"),
        2: Verdict("superseded"),
        3: Verdict("active"),
    }
    assert not lifecycle.chain_is_terminal(rows)


def test_each_ending_action_acts_on_the_head() -> None:
    for action, state in (("CAN", "cancelled"), ("EXP", "expired"), ("UPG", "superseded")):
        rows = [ChainRow(1, at(0), "NEW"), ChainRow(2, at(30), action)]
        verdicts = lifecycle.chain_verdicts(rows)
        cancelled_at = at(30) if action == "CAN" else None
        assert verdicts[1] == verdicts[2] == Verdict(state, cancelled_at)
        assert lifecycle.chain_is_terminal(rows)


def test_active_in_any_chain_wins_then_cancelled_expired_superseded() -> None:
    assert lifecycle.combine_roles([]) is None
    assert lifecycle.combine_roles([Verdict("superseded"), Verdict("active")]) == Verdict("active")
    merged = lifecycle.combine_roles(
        [Verdict("superseded"), Verdict("cancelled", at(5)), Verdict("expired")]
    )
    assert merged == Verdict("cancelled", at(5))


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
