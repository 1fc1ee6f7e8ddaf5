"""P-VTEC strings: every action, "not given" times, the event key, malformed input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.alerts.vtec import (
    ACTIONS,
    EventKey,
    Vtec,
    parse_vtec,
    parse_vtec_strings,
)


def test_new_warning_parses_every_part() -> None:
    vtec = parse_vtec("/O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/")
    assert vtec == Vtec(
        product_class="O",
        action="NEW",
        office="KOUN",
        phenomenon="SV",
        significance="W",
        etn=45,
        begin=datetime(2025, 5, 14, 22, 15, tzinfo=UTC),
        end=datetime(2025, 5, 14, 23, 0, tzinfo=UTC),
    )
    assert vtec.is_operational and not vtec.is_terminal
    assert vtec.event_key() == EventKey("KOUN", "SV", "W", 45, 2025)


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_every_action_is_accepted(action: str) -> None:
    vtec = parse_vtec(f"/O.{action}.KBOX.WS.W.0003.000000T0000Z-250213T1800Z/")
    assert vtec.action == action
    assert vtec.is_terminal is (action in {"CAN", "EXP"})


def test_all_ten_actions_are_known() -> None:
    assert ACTIONS == {"NEW", "CON", "EXT", "EXA", "EXB", "UPG", "CAN", "EXP", "COR", "ROU"}


@pytest.mark.parametrize("product_class", ["O", "T", "E", "X"])
def test_every_product_class_is_accepted(product_class: str) -> None:
    vtec = parse_vtec(f"/{product_class}.NEW.PAFC.BZ.W.0001.250101T0000Z-250101T1200Z/")
    assert vtec.product_class == product_class
    assert vtec.is_operational is (product_class == "O")


def test_zero_begin_means_event_in_progress() -> None:
    vtec = parse_vtec("/O.CON.KOUN.SV.W.0045.000000T0000Z-250514T2300Z/")
    assert vtec.begin is None
    assert vtec.end == datetime(2025, 5, 14, 23, 0, tzinfo=UTC)
    assert vtec.event_key() == EventKey("KOUN", "SV", "W", 45, 2025)


def test_zero_end_means_until_further_notice() -> None:
    vtec = parse_vtec("/O.NEW.KHGX.HU.W.1009.250825T1800Z-000000T0000Z/")
    assert vtec.begin == datetime(2025, 8, 25, 18, 0, tzinfo=UTC)
    assert vtec.end is None
    assert vtec.etn == 1009


def test_both_zero_times_take_the_year_from_the_sent_time() -> None:
    vtec = parse_vtec("/O.ROU.KOUN.FW.A.0001.000000T0000Z-000000T0000Z/")
    assert vtec.begin is None and vtec.end is None
    sent = datetime(2026, 1, 1, 5, 30, tzinfo=UTC)
    assert vtec.event_key(sent) == EventKey("KOUN", "FW", "A", 1, 2026)
    with pytest.raises(ValueError, match="neither begin nor end"):
        vtec.event_key()


def test_event_key_year_prefers_begin_over_end_and_sent() -> None:
    vtec = parse_vtec("/O.EXT.KBOX.WS.W.0003.241231T2300Z-250101T0600Z/")
    assert vtec.event_key(datetime(2025, 1, 1, 1, 0, tzinfo=UTC)).year == 2024


def test_event_key_year_uses_utc_of_the_sent_time() -> None:
    vtec = parse_vtec("/O.CAN.KOUN.SV.W.0045.000000T0000Z-000000T0000Z/")
    local_new_year = datetime(2025, 12, 31, 19, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert vtec.event_key(local_new_year).year == 2026


def test_chain_of_one_event_shares_one_key() -> None:
    chain = [
        "/O.NEW.KBOX.WS.A.0002.250212T1200Z-250213T1200Z/",
        "/O.UPG.KBOX.WS.A.0002.250212T1200Z-250213T1200Z/",
        "/O.NEW.KBOX.WS.W.0003.250212T1200Z-250213T1200Z/",
        "/O.EXT.KBOX.WS.W.0003.250212T1200Z-250213T1800Z/",
        "/O.CON.KBOX.WS.W.0003.000000T0000Z-250213T1800Z/",
        "/O.EXP.KBOX.WS.W.0003.000000T0000Z-250213T1800Z/",
    ]
    keys = [parse_vtec(text).event_key() for text in chain]
    assert keys[0] == keys[1] == EventKey("KBOX", "WS", "A", 2, 2025)
    assert len(set(keys[2:])) == 1 and keys[2] == EventKey("KBOX", "WS", "W", 3, 2025)


@pytest.mark.parametrize(
    "text",
    [
        "/O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/",
        "/T.EXA.KLWX.FF.A.0012.000000T0000Z-250601T0300Z/",
        "/X.EXB.PHFO.HI.S.1003.250825T1800Z-000000T0000Z/",
        "/E.COR.KOUN.TO.W.0001.000000T0000Z-000000T0000Z/",
    ],
)
def test_str_gives_back_the_original(text: str) -> None:
    assert str(parse_vtec(text)) == text


def test_surrounding_whitespace_is_ignored() -> None:
    assert parse_vtec("  /O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/\n").etn == 45


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "malformed P-VTEC"),
        ("O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z", "malformed P-VTEC"),
        ("/O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z", "malformed P-VTEC"),
        ("/o.new.koun.sv.w.0045.250514T2215Z-250514T2300Z/", "malformed P-VTEC"),
        ("/O.NEW.KOUN.SV.W.45.250514T2215Z-250514T2300Z/", "malformed P-VTEC"),
        ("/O.NEW.OUN.SV.W.0045.250514T2215Z-250514T2300Z/", "malformed P-VTEC"),
        ("/O.NEW.KOUN.SV.W.0045.250514T2215-250514T2300Z/", "malformed P-VTEC"),
        ("/O.NEW.KOUN.SV.W.0045.250514T2215Z/", "malformed P-VTEC"),
        ("/O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/ extra", "malformed P-VTEC"),
        ("/Q.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/", "unknown product class 'Q'"),
        ("/O.ADD.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/", "unknown action 'ADD'"),
        ("/O.NEW.KOUN.SV.W.0045.251314T2215Z-251314T2300Z/", "impossible time"),
        ("/O.NEW.KOUN.SV.W.0045.250514T2515Z-250514T2300Z/", "impossible time"),
        ("/O.NEW.KOUN.SV.W.0045.250514T2300Z-250514T2215Z/", "end time is before begin"),
        ("/O.NEW.KOUN.SV.W.0045.000000T0000Z-250230T0000Z/", "impossible time"),
    ],
)
def test_malformed_strings_raise_value_error(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_vtec(text)


def test_non_string_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        parse_vtec(None)  # type: ignore[arg-type]


def test_parse_vtec_strings_takes_lists_and_whitespace_separated_text() -> None:
    upgrade = (
        "/O.UPG.KBOX.WS.A.0002.250212T1200Z-250213T1200Z/\n"
        "/O.NEW.KBOX.WS.W.0003.250212T1200Z-250213T1200Z/"
    )
    from_text = parse_vtec_strings(upgrade)
    from_list = parse_vtec_strings(upgrade.split() + ["", "  "])
    assert [v.action for v in from_text] == ["UPG", "NEW"]
    assert from_text == from_list
    assert parse_vtec_strings([]) == ()


def test_parse_vtec_strings_names_the_bad_one() -> None:
    with pytest.raises(ValueError, match="'/O.NEW.BAD/'"):
        parse_vtec_strings(["/O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/", "/O.NEW.BAD/"])


@given(st.text(max_size=80))
def test_arbitrary_text_gives_a_vtec_or_value_error(text: str) -> None:
    try:
        vtec = parse_vtec(text)
    except ValueError:
        return
    assert str(vtec) == text.strip()


@given(
    st.sampled_from(sorted(ACTIONS)),
    st.integers(1, 9999),
    st.datetimes(datetime(2000, 1, 1), datetime(2099, 12, 31), timezones=st.just(UTC)),
)
def test_round_trip_of_generated_strings(action: str, etn: int, begin: datetime) -> None:
    begin = begin.replace(second=0, microsecond=0)
    end = begin + timedelta(hours=3)
    text = f"/O.{action}.KOUN.SV.W.{etn:04d}.{begin:%y%m%dT%H%MZ}-{end:%y%m%dT%H%MZ}/"
    if end.year > 2099:
        return
    vtec = parse_vtec(text)
    assert (vtec.etn, vtec.begin, vtec.end) == (etn, begin, end)
    assert vtec.event_key().year == begin.year


def test_only_ascii_digits_count() -> None:
    with pytest.raises(ValueError, match="malformed P-VTEC"):
        parse_vtec("/O.NEW.KOUN.SV.W.\u0660\u0660\u0664\u0665.250514T2215Z-250514T2300Z/")
