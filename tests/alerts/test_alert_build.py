"""``Alert.from_infos`` sets an alert's fields at once: the result is what ``__init__`` builds."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from alertstation.alerts.model import Alert, AlertInfo, Area, SignatureCheck

SENT = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
INFO = AlertInfo(
    language="en-US",
    categories=("Met",),
    event="Tornado Warning",
    event_codes=(("SAME", "TOR"),),
    parameters=(("EAS-ORG", "WXR"),),
    areas=(Area("A", ("1,2 3,4",), (), (("SAME", "040109"), ("UGC", "OKC109"))),),
)


def _fields(alert: Alert) -> list[tuple[str, object]]:
    return list(vars(alert).items())


@pytest.mark.parametrize(
    "header",
    [
        {"identifier": "a", "sender": "s", "sent": SENT},
        {
            "identifier": "b", "sender": "s", "sent": SENT, "status": "Test", "msg_type": "Update",
            "note": "n", "raw": "<alert/>", "source": "ipaws",
            "signature": SignatureCheck("failed", "bad digest"),
        },
    ],
)  # fmt: skip
def test_from_infos_builds_what_init_builds(header: dict) -> None:
    alert = Alert.from_infos(infos=[INFO], **header)
    through_init = dataclasses.replace(alert)
    assert alert == through_init
    assert hash(alert) == hash(through_init)
    assert _fields(alert) == _fields(through_init)  # every field, in field order
    assert (alert.event_code, alert.eas_org, alert.same_codes) == ("TOR", "WXR", ("040109",))
    assert alert.effective == SENT


def test_from_infos_refuses_what_init_refuses() -> None:
    with pytest.raises(TypeError):
        Alert.from_infos(infos=[INFO], identifier="a", sender="s")  # no sent
    with pytest.raises(TypeError):
        Alert.from_infos(infos=[INFO], identifier="a", sender="s", sent=SENT, bogus=1)
    with pytest.raises(TypeError):  # a flattened field given twice
        Alert.from_infos(infos=[INFO], identifier="a", sender="s", sent=SENT, event="x")
