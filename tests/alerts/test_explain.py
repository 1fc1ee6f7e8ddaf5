"""Check the reason and the matched pairs of an alert (``alertstation.alerts.explain``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alertstation.alerts.explain import explain_match, relation, same_county_ugc
from alertstation.alerts.matching import GeocodeMatcher

CODES = st.one_of(
    st.builds(
        lambda p, s, c: p + s + c,
        st.sampled_from("0015"),
        st.sampled_from(["00", "39", "72", "57"]),
        st.sampled_from(["000", "137", "049"]),
    ),
    st.builds(
        lambda prefix, kind, number: prefix + kind + number,
        st.sampled_from(["OH", "PR", "LE"]),
        st.sampled_from("ZC"),
        st.sampled_from(["000", "137", "049"]),
    ),
)


@settings(max_examples=400, deadline=None, database=None)
@given(configured=CODES, alert=CODES)
def test_relation_agrees_with_the_kernel(configured: str, alert: str) -> None:
    matched = GeocodeMatcher([configured]).matches([alert])
    assert (relation(configured, alert) is not None) is matched
    assert relation(configured, alert) == relation(alert, configured)  # symmetric


@settings(max_examples=200, deadline=None, database=None)
@given(configured=st.lists(CODES, max_size=6), alert=st.lists(CODES, max_size=6))
def test_pairs_are_every_matching_pair_in_order(configured: list[str], alert: list[str]) -> None:
    match = explain_match(configured, alert, alert, polygon_hit=False)
    expected = [
        (mine, code)
        for code in dict.fromkeys(alert)
        for mine in dict.fromkeys(configured)
        if relation(mine, code) is not None
    ]
    assert list(match.pairs) == expected
    assert match.in_area is GeocodeMatcher(configured).matches(alert)


@pytest.mark.parametrize(
    ("configured", "alert", "expected"),
    [
        ("OHZ016", "OHZ016", "code"),
        ("ohc137", "OHC137", "code"),
        ("OHC137", "039137", "county"),
        ("039137", "OHC137", "county"),
        ("OHC137", "139137", "county part"),
        ("139137", "OHC137", "county part"),
        ("039137", "139137", "county part"),
        ("039000", "OHZ016", "state"),
        ("OHC137", "039000", "state"),
        ("000000", "OHZ016", "nation"),
        ("039137", "000000", "nation"),
        ("OHZ016", "039137", None),
        ("OHZ016", "OHC137", None),
        ("139137", "239137", None),
        ("OHC137", "bad", None),
    ],
)
def test_relation(configured: str, alert: str, expected: str | None) -> None:
    assert relation(configured, alert) == expected


def test_reason_is_the_first_that_applies() -> None:
    codes = ["039000", "139137", "OHC137", "OHZ016"]
    match = explain_match(["000000", "039000", "OHC137"], codes, codes, polygon_hit=True)
    assert match.in_area and match.reason == "code"
    assert match.pairs == (
        ("000000", "039000"),
        ("039000", "039000"),
        ("OHC137", "039000"),
        ("000000", "139137"),
        ("039000", "139137"),
        ("OHC137", "139137"),
        ("000000", "OHC137"),
        ("039000", "OHC137"),
        ("OHC137", "OHC137"),
        ("000000", "OHZ016"),
        ("039000", "OHZ016"),
    )
    assert explain_match(["039137"], ["OHC137", "139137"], ["OHC137", "139137"], False).reason == (
        "county"
    )
    assert explain_match(["139137"], ["039000", "039137"], ["039000", "039137"], False).reason == (
        "county part"
    )
    assert explain_match(["OHZ016"], ["039000", "000000"], ["039000", "000000"], False).reason == (
        "state"
    )
    assert explain_match(["OHZ016"], ["000000"], ["000000"], False).reason == "nation"
    assert explain_match(["OHZ016"], ["039137"], ["039137"], True).reason == "polygon"


def test_not_in_area() -> None:
    match = explain_match(["OHZ016"], ["039137", "OHC137"], ["039137", "OHC137"], False)
    assert match.as_dict() == {
        "in_area": False,
        "reason": None,
        "pairs": [],
        "remaining_codes": ["039137", "OHC137"],
    }
    assert explain_match([], ["000000"], ["000000"], False).reason is None


def test_only_codes_still_in_force_match() -> None:
    match = explain_match(["OHC137", "OHC139"], ["039137", "039139"], ["039139"], False)
    assert match.pairs == (("OHC139", "039139"),)
    assert match.remaining_codes == ("039139",)
    ended = explain_match(["OHC137"], ["039137"], [], polygon_hit=False)
    assert not ended.in_area and ended.pairs == ()


def test_same_county_ugc() -> None:
    assert same_county_ugc("039137") == "OHC137"
    assert same_county_ugc("139137") == "OHC137"
    assert same_county_ugc("039000") is None
    assert same_county_ugc("057137") is None  # a marine SAME area has no postal code
    assert same_county_ugc("OHZ016") is None
