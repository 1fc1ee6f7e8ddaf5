"""Forwarding rules: first match wins, the default, national messages, area cover, checks."""

from __future__ import annotations

import pytest

from alertstation.eas.forward.rules import Mode, RuleBook, Subject, decide, read_book
from alertstation.errors import Invalid


def subject(event: str = "TOR", source: str = "audio:2", areas: tuple[str, ...] = ("039137",)):
    return Subject(event, "WXR", source, areas)


BOOK = read_book(
    {
        "rules": [
            {"events": ["RWT"], "mode": "manual"},
            {"sources": ["audio:2"], "areas": ["039000"], "mode": "hold", "hold_minutes": 2},
            {"originators": ["WXR"], "areas": ["039137"], "mode": "auto"},
        ],
        "default": {"mode": "manual"},
    }
)


def test_the_first_matching_rule_decides() -> None:
    assert decide(BOOK, subject("RWT")).rule == "rule 1"
    held = decide(BOOK, subject(areas=("039000",)))  # a statewide message covers any county rule
    assert (held.mode, held.rule) == (Mode("hold", 2), "rule 2")
    assert decide(BOOK, subject(source="poll")).mode == Mode("auto")
    assert decide(BOOK, subject(source="poll", areas=("040109",))).rule == "default"


def test_a_new_station_waits_for_approval_and_national_messages_bypass_every_rule() -> None:
    assert decide(RuleBook(), subject()).mode == Mode("manual")
    for event in ("EAN", "NPT"):
        decision = decide(read_book({"rules": [{"mode": "manual"}]}), subject(event))
        assert (decision.mode, decision.rule) == (Mode("auto"), "national")


def test_poll_matches_every_poll_source_and_poll_id_only_its_own() -> None:
    book = read_book(
        {
            "rules": [
                {"sources": ["poll:3"], "mode": "auto"},
                {"sources": ["poll"], "mode": "hold", "hold_minutes": 5},
            ]
        }
    )
    assert decide(book, subject(source="poll:3")).rule == "rule 1"
    assert decide(book, subject(source="poll:4")).rule == "rule 2"
    assert decide(book, subject(source="poll")).rule == "rule 2"  # stored before it was known
    assert decide(book, subject(source="imported")).rule == "default"
    assert decide(book, subject(source="audio:3")).rule == "default"


def test_a_part_of_a_county_and_the_whole_country() -> None:
    book = read_book({"rules": [{"areas": ["039137"], "mode": "auto"}]})
    assert decide(book, subject(areas=("939137",))).rule == "rule 1"
    assert decide(book, subject(areas=("000000",))).rule == "rule 1"
    assert decide(book, subject(areas=("039139",))).rule == "default"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rules": [{"mode": "hold"}]}, "rules[0].hold_minutes"),
        ({"rules": [{"mode": "hold", "hold_minutes": 121}]}, "rules[0].hold_minutes"),
        ({"rules": [{"mode": "auto", "hold_minutes": 2}]}, "rules[0].mode"),
        ({"rules": [{"mode": "auto", "sources": ["audio:x"]}]}, "rules[0].sources"),
        ({"rules": [{"mode": "auto", "events": ["TORN"]}]}, "rules[0].events"),
        ({"rules": [{"mode": "auto", "areas": ["39137"]}]}, "rules[0].areas"),
        ({"rules": [], "default": {"mode": "never"}}, "default.mode"),
        ({"rules": {}}, "rules"),
    ],
)
def test_a_bad_rule_names_its_field(body: dict, field: str) -> None:
    with pytest.raises(Invalid) as caught:
        read_book(body)
    assert caught.value.details["field"] == field


def test_an_rmt_no_rule_matches_is_held_within_its_relay_deadline() -> None:
    manual = decide(RuleBook(), subject("RMT"))
    assert (manual.mode, manual.rule) == (Mode("hold", 15), "default (RMT deadline)")
    long_hold = read_book({"rules": [], "default": {"mode": "hold", "hold_minutes": 90}})
    assert decide(long_hold, subject("RMT")).mode == Mode("hold", 15)
    short_hold = read_book({"rules": [], "default": {"mode": "hold", "hold_minutes": 5}})
    assert decide(short_hold, subject("RMT")).mode == Mode("hold", 5)
    assert decide(read_book({"rules": [], "default": {"mode": "auto"}}), subject("RMT")).mode == (
        Mode("auto")
    )
    assert decide(BOOK, subject("RMT", areas=("039137",))).rule == "rule 3"  # a rule still wins
    assert decide(RuleBook(), subject("RWT")).mode == Mode("manual")
