"""Translation of a stored alert to SAME: locations in the area, purge time, voice text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alertstation.alerts.matching import GeocodeMatcher
from alertstation.eas.forward.translate import (
    area_locations,
    covers,
    purge_for,
    ugc_county_as_same,
    voice_text,
)
from alertstation.same import SameHeader

ISSUED = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("alert", "area", "expected"),
    [
        (["040017", "040109", "OKC017", "OKC109"], ["040109"], ("040109",)),
        (["039000"], ["039049", "039051", "048001"], ("039049", "039051")),  # state → area
        (["039049"], ["539049", "639049"], ("539049", "639049")),  # county → its parts
        (["539049"], ["039049"], ("539049",)),  # a part of a configured county
        (["539049"], ["139049"], ()),  # another part of the county
        (["000000"], ["039049", "048001"], ("039049", "048001")),  # nation → area
        (["039049", "539049"], ["039000"], ("039049",)),  # the part adds nothing
        (["039049"], ["000000"], ("039049",)),
        (["OKC109"], ["040109"], ("040109",)),  # UGC county read as SAME
        (["040017", "040109", "OKC017", "OKC109"], ["OKC109"], ("040109",)),  # area UGC county
        (["139137", "039003"], ["OHC137"], ("139137",)),  # a part of a configured UGC county
        (["040109", "048485", "OKZ025", "TXZ086"], ["OKZ025"], ("040109",)),  # zone → state
        (["000000"], ["VAZ053"], ("051000",)),  # nation with a zone area → the zone's state
        (["039043", "LEZ142"], ["LEZ142"], ()),  # marine zones name no state
        (["051059", "051013", "VAZ053"], ["051013", "VAZ053"], ("051013", "051059")),
    ],
)
def test_locations_are_limited_to_the_area(
    alert: list[str], area: list[str], expected: tuple[str, ...]
) -> None:
    assert area_locations(alert, area).codes == expected


def test_codes_from_configured_same_codes_come_before_those_from_zones() -> None:
    chosen = area_locations(["040001", "040109", "OKZ001"], ["040109", "OKZ001"])
    assert chosen.codes == ("040109", "040001")
    assert chosen.from_zones == ("040001",)


def test_more_than_31_codes_keeps_the_first_31_in_order() -> None:
    alert = [f"040{n:03d}" for n in range(1, 80, 2)]  # 40 counties
    chosen = area_locations(alert, ["040000"])
    assert chosen.codes == tuple(alert[:31])
    assert chosen.dropped == tuple(alert[31:])
    assert chosen.note == "31 of 40 location codes sent (31 at most)"
    SameHeader.build("WXR", "TOR", chosen.codes, (1, 0), "X", issued=ISSUED)  # a valid header


def test_ugc_county_codes_translate() -> None:
    assert ugc_county_as_same("OHC049") == "039049"
    assert ugc_county_as_same("OHZ049") is None
    assert ugc_county_as_same("LEC001") is None  # no state FIPS for Lake Erie


_same = st.builds(
    lambda p, s, c: f"{p}{s:02d}{c:03d}",
    st.sampled_from([0, 0, 1, 5]),
    st.sampled_from([0, 39, 40]),
    st.sampled_from([0, 49, 109]),
)


@settings(max_examples=300, deadline=None)
@given(_same, _same)
def test_covering_either_way_is_the_matchers_relation(a: str, b: str) -> None:
    assert GeocodeMatcher([b]).matches([a]) == (covers(a, b) or covers(b, a))


@settings(max_examples=200, deadline=None)
@given(st.lists(_same, min_size=1, max_size=8), st.lists(_same, min_size=1, max_size=8))
def test_every_chosen_code_lies_in_the_alert_and_in_the_area(
    alert: list[str], area: list[str]
) -> None:
    chosen = area_locations(alert, area).codes
    assert all(any(covers(a, code) for a in alert) for code in chosen)
    assert all(any(covers(c, code) for c in area) for code in chosen)
    assert bool(chosen) == GeocodeMatcher(area).matches(alert)
    assert not any(x != y and covers(x, y) for x in chosen for y in chosen)


@pytest.mark.parametrize(
    ("minutes", "code"),
    [
        (0.5, "0015"),
        (15, "0015"),
        (15.1, "0030"),
        (59.5, "0100"),
        (60, "0100"),
        (61, "0130"),
        (90, "0130"),
        (91, "0200"),
        (24 * 60 + 1, "2430"),
        (99 * 60 + 30, "9930"),
        (200 * 60, "9930"),
    ],
)
def test_purge_time_rounds_up_to_a_legal_step(minutes: float, code: str) -> None:
    expiry = ISSUED + timedelta(minutes=minutes)
    header = SameHeader.build(
        "WXR", "TOR", ["040109"], purge_for(expiry, ISSUED), "X", issued=ISSUED
    )
    assert header.purge_code == code
    if minutes <= 99 * 60 + 30:  # the header never ends before the alert does
        assert timedelta(0) <= header.expires_at(2026) - expiry < timedelta(minutes=30)


def test_purge_time_without_or_past_expiry() -> None:
    assert purge_for(None, ISSUED) == timedelta(hours=1)
    with pytest.raises(ValueError, match="purge time: the alert expired"):
        purge_for(ISSUED, ISSUED)


def test_voice_text_reads_headline_then_description() -> None:
    text = voice_text(
        "Tornado Warning issued by NWS Norman OK",
        "At 514 PM CDT, a tornado was near Yukon...moving east.\n\n* HAZARD...Tornado.",
    )
    assert text == (
        "Tornado Warning issued by NWS Norman OK. At 514 PM CDT, a tornado was near Yukon, "
        "moving east. HAZARD, Tornado."
    )
    assert voice_text("Same words.", "Same words.") == "Same words."
    assert voice_text("", "") == ""


def test_voice_text_is_trimmed_at_a_sentence_or_word() -> None:
    sentence = "The storm moves east at forty miles an hour. "
    text = voice_text("Warning", sentence * 60, limit=300)
    assert len(text) <= 300 and text.endswith("hour.")
    words = voice_text("Warning", "word " * 200, limit=101)
    assert len(words) <= 101 and words.endswith("word.")
