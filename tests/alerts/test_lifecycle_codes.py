"""The per-event, per-code lifecycle on NWS-like multi-segment products (pure rules).

Every ordering of each chain of up to 6 messages, and 200 seeded random orderings of longer
chains, fed one message at a time into the reference model of ingest, must end in the states
the whole set decides at once (all in one batch).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest

from alertstation.alerts import lifecycle
from alertstation.alerts.ingest.reference import AlertView, ReferenceStore, decide_view
from alertstation.alerts.lifecycle import CodeState, Member
from alertstation.alerts.model import Alert
from tests.alerts.nws_chains import CHAINS, at, cap_chain, county_chain, marine_chain, zone_chain

NOW = at(200)


def name(product: str, number: int = 1) -> str:
    return f"urn:oid:2.49.0.1.840.0.{product}.{number:03d}.1"


def replay(alerts: Sequence[Alert], now=NOW) -> dict[str, AlertView]:  # type: ignore[no-untyped-def]
    store = ReferenceStore(now=now)
    store.ingest_all(alerts, explicit=True)
    return store.view()


def remaining(view: dict[str, AlertView]) -> dict[str, list[str]]:
    """The codes in force of each active message."""
    return {
        ident: [code for code, (state, _at, _by) in codes.items() if state == "active"]
        for ident, (state, _c, codes) in view.items()
        if state == "active"
    }


def in_force(view: dict[str, AlertView]) -> set[str]:
    return {code for codes in remaining(view).values() for code in codes}


# -- the rules one by one --------------------------------------------------------------------


def test_siblings_of_one_product_never_act_on_each_other() -> None:
    members = [
        Member(1, "a.001", at(0), "EXA", ("OHC009",)),
        Member(2, "a.002", at(0), "CON", ("OHC001", "OHC002")),
        Member(3, "a.003", at(0), "CAN", ("OHC003",)),
    ]
    states = lifecycle.event_code_states(members)
    assert states[1] == {"OHC009": lifecycle.LIVE}
    assert states[2] == {"OHC001": lifecycle.LIVE, "OHC002": lifecycle.LIVE}
    assert states[3] == {"OHC003": CodeState("cancelled", at(0), 3)}


def test_an_ending_ends_only_its_own_codes_at_its_sent() -> None:
    members = [
        Member(1, "n", at(0), "NEW", ("OHC001", "OHC002", "OHC003")),
        Member(2, "c", at(30), "CAN", ("OHC001",)),
        Member(3, "e", at(40), "EXP", ("OHC002",)),
    ]
    states = lifecycle.event_code_states(members)[1]
    assert states == {
        "OHC001": CodeState("cancelled", at(30), 2),
        "OHC002": CodeState("expired", at(40), 3),
        "OHC003": lifecycle.LIVE,
    }


def test_a_continuation_after_the_end_revives_nothing_but_an_extension_adds() -> None:
    members = [
        Member(1, "n", at(0), "NEW", ("OHC001",)),
        Member(2, "c", at(30), "CAN", ("OHC001",)),
        Member(3, "late", at(40), "CON", ("OHC001",)),
        Member(4, "exa", at(50), "EXA", ("OHC001",)),
    ]
    states = lifecycle.event_code_states(members)
    assert states[3] == {"OHC001": CodeState("cancelled", at(30), 2)}
    assert states[4] == {"OHC001": lifecycle.LIVE}


def test_rou_starts_continues_and_ends_nothing() -> None:
    members = [
        Member(1, "n", at(0), "NEW", ("OHC001",)),
        Member(2, "r", at(30), "ROU", ("OHC001",)),
    ]
    assert lifecycle.event_code_states(members) == {1: {"OHC001": lifecycle.LIVE}}


def test_same_codes_follow_counties_and_marine_zones_one_to_one() -> None:
    assert lifecycle.same_twin("039137") == ("OHC137",)
    assert lifecycle.same_twin("073355") == ("ANZ355",)
    assert lifecycle.same_twin("139137") == ()
    ended = CodeState("cancelled", at(5), 9)
    ugc = {"OHC001": ended, "OHC002": lifecycle.LIVE}
    states = lifecycle.same_code_states(["039001", "039002", "039999"], ugc, lifecycle.LIVE)
    assert states == {"039001": ended, "039002": lifecycle.LIVE, "039999": lifecycle.LIVE}


# -- whole products ---------------------------------------------------------------------------


def test_county_chain_exa_beside_con_then_partial_can_then_early_exp() -> None:
    chain = county_chain()
    after_p2 = replay(chain[:3])
    # NWS lists the 7 counties (CON) and the 2 added (EXA) under the watch.
    assert remaining(after_p2) == {
        name("p2", 1): ["039009", "039011", "OHC009", "OHC011"],
        name("p2", 2): [f"0390{n:02d}" for n in range(1, 8)]
        + [f"OHC0{n:02d}" for n in range(1, 8)],
    }
    after_p3 = replay(chain[:5])
    assert in_force(after_p3) == {
        *(f"OHC0{n:02d}" for n in (3, 4, 5, 6, 7, 9, 11)),
        *(f"0390{n:02d}" for n in (3, 4, 5, 6, 7, 9, 11)),
    }
    con = after_p3[name("p2", 2)]
    assert con[0] == "superseded"
    assert con[2]["OHC001"] == ("cancelled", at(120), name("p3", 1))
    assert con[2]["039001"] == ("cancelled", at(120), name("p3", 1))
    assert con[2]["OHC003"] == ("superseded", at(120), name("p3", 2))
    final = replay(chain)
    assert in_force(final) == set()
    assert {k: v[:2] for k, v in final.items()} == {
        name("p1"): ("superseded", None),
        name("p2", 1): ("superseded", None),
        name("p2", 2): ("superseded", None),
        name("p3", 1): ("cancelled", at(120)),
        name("p3", 2): ("expired", None),
        name("p4", 1): ("expired", None),
    }
    # EXP ends at its product's sent, before the event's end
    assert final[name("p3", 2)][2]["OHC009"] == ("expired", at(180), name("p4", 1))


def test_partial_can_leaves_the_rest_of_one_message_active() -> None:
    chain = county_chain()
    view = replay([chain[0], chain[3]])  # the NEW, then a CAN for two of its counties
    state, _cancelled_at, codes = view[name("p1")]
    assert state == "active"
    assert codes["OHC001"] == ("cancelled", at(120), name("p3", 1))
    assert remaining(view)[name("p1")] == [f"0390{n:02d}" for n in range(3, 8)] + [
        f"OHC0{n:02d}" for n in range(3, 8)
    ]


def test_zone_chain_upgrade_for_some_zones_watch_continues_in_others() -> None:
    chain = zone_chain()
    after_w2 = replay(chain[:3])
    assert remaining(after_w2) == {
        name("w2", 1): ["018057", "018095", "INZ028", "INZ029"],
        name("w2", 2): ["018097", "018011", "018159", "018067",
                        "INZ030", "INZ031", "INZ035", "INZ036"],
    }  # fmt: skip
    watch = after_w2[name("w1")]
    assert watch[0] == "superseded"
    assert watch[2]["INZ028"] == ("superseded", at(60), name("w2", 1))
    after_w3 = replay(chain[:6])
    assert in_force(after_w3) == {"INZ028", "INZ029", "INZ035", "INZ036",
                                  "018057", "018095", "018159", "018067"}  # fmt: skip
    con = after_w3[name("w2", 2)]
    assert con[2]["INZ030"] == ("cancelled", at(120), name("w3", 2))
    # zone-based: the SAME counties stay while a zone remains, then end with the message
    assert con[2]["018097"][0] == "superseded"
    final = replay(chain)
    assert in_force(final) == set()
    assert final[name("w3", 3)][:2] == ("expired", None)
    assert final[name("w3", 2)][:2] == ("cancelled", at(120))


def test_zone_partial_can_keeps_every_same_code_while_a_zone_remains() -> None:
    chain = zone_chain()
    view = replay([chain[0], chain[4]])  # the NEW, then a CAN of two of its six zones
    assert remaining(view)[name("w1")] == [
        *(chain[0].same_codes),
        "INZ028",
        "INZ029",
        "INZ035",
        "INZ036",
    ]


def test_marine_zones_and_their_same_codes_end_one_to_one() -> None:
    chain = marine_chain()
    view = replay(chain[:2])
    assert remaining(view) == {name("m1"): ["073356", "ANZ356"]}
    assert view[name("m1")][2]["073355"] == ("cancelled", at(30), name("m2", 1))
    assert remaining(replay(chain)) == {name("m2", 2): ["073356", "ANZ356"]}


def test_cap_update_and_cancel_without_vtec_keep_the_reference_rules() -> None:
    final = replay(cap_chain())
    assert {k: v[:2] for k, v in final.items()} == {
        "cem-1": ("superseded", None),
        "cem-2": ("cancelled", at(40)),
        "cem-3": ("cancelled", at(40)),
    }


def test_references_of_a_vtec_message_decide_nothing() -> None:
    chain = county_chain()
    cancel = chain[3]
    from alertstation.alerts.model import Reference

    # A CAN segment naming the whole earlier product in its references still ends only its
    # own two counties.
    refs = tuple(Reference(a.sender, a.identifier, a.sent) for a in chain[:3])
    import dataclasses

    view = replay([chain[0], dataclasses.replace(cancel, references=refs, msg_type="Cancel")])
    assert view[name("p1")][0] == "active"


# -- every ordering ---------------------------------------------------------------------------


def orderings(chain: list[Alert]) -> list[Sequence[Alert]]:
    if len(chain) <= 6:
        return list(itertools.permutations(chain))
    rng = random.Random(37)
    found = []
    for _ in range(200):
        order = list(chain)
        rng.shuffle(order)
        found.append(order)
    return found


@pytest.mark.parametrize("chain_name", sorted(CHAINS))
def test_every_ordering_ends_in_the_same_states(chain_name: str) -> None:
    chain = CHAINS[chain_name]()
    whole = decide_view(chain, now=NOW)  # all in one batch
    assert replay(chain) == whole
    for order in orderings(chain):
        assert replay(order) == whole, [a.identifier for a in order]
