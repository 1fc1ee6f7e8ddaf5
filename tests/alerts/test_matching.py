"""Check geocode matching: the compiled kernel, its reference twin and a string-set oracle."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alertstation._native import geomatch as native_geomatch
from alertstation.alerts import matching
from alertstation.alerts.matching import GeocodeMatcher
from tests.support import run_without_kernel

# --- a plain-Python oracle: the rule written directly on strings ------------------------------

# Typed independently of matching.STATE_FIPS, so each checks the other.
ORACLE_STATES = dict(
    (entry[:2], int(entry[2:]))
    for entry in (
        "AL01 AK02 AZ04 AR05 CA06 CO08 CT09 DE10 DC11 FL12 GA13 HI15 ID16 IL17 IN18 IA19 KS20 "
        "KY21 LA22 ME23 MD24 MA25 MI26 MN27 MS28 MO29 MT30 NE31 NV32 NH33 NJ34 NM35 NY36 NC37 "
        "ND38 OH39 OK40 OR41 PA42 RI44 SC45 SD46 TN47 TX48 UT49 VT50 VA51 WA53 WV54 WI55 WY56 "
        "AS60 GU66 MP69 PR72 VI78"
    ).split()
)
ORACLE_WHITESPACE = " \t\n\r\x0b\x0c"


def oracle_normalise(code: object) -> str | None:
    """Return the upper-case code, or None when it is neither SAME nor UGC."""
    if not isinstance(code, str):
        return None
    text = code.strip(ORACLE_WHITESPACE)
    if not text.isascii():
        return None
    text = text.upper()
    if re.fullmatch(r"[0-9]{6}|[A-Z]{2}[ZC][0-9]{3}", text):
        return text
    return None


def oracle_state(code: str) -> int | None:
    """Return the state FIPS number of a normalised code, None when it has none."""
    if code.isdigit():
        return int(code[1:3]) or None
    return ORACLE_STATES.get(code[:2])


def oracle_related(a: str, c: str) -> bool:
    """Return whether two normalised codes match under the alert matching rule."""
    if a == c or "000000" in (a, c):
        return True
    for whole, other in ((a, c), (c, a)):
        is_whole_state = whole.isdigit() and whole[0] == "0" and whole[3:] == "000"
        state = oracle_state(whole)
        if is_whole_state and state is not None and oracle_state(other) == state:
            return True
    if a.isdigit() and c.isdigit() and a[1:] == c[1:] and "0" in (a[0], c[0]):
        return True
    return any(
        county is not None and ((other.isdigit() and other[1:] == county) or other == ugc)
        for ugc, other in ((a, c), (c, a))
        for county in [oracle_county(ugc)]
    )


def oracle_county(code: str) -> str | None:
    """Return the SAME county SSCCC a UGC county code names, None for any other code."""
    state = oracle_state(code)
    if code.isdigit() or code[2] != "C" or code[3:] == "000" or state is None:
        return None
    return f"{state:02d}{code[3:]}"


def oracle_matches(configured: list[str], alert: list[object]) -> bool:
    """Return whether an alert's geocodes match the configured codes."""
    wanted = {oracle_normalise(code) for code in configured}
    codes = {oracle_normalise(code) for code in alert} - {None}
    return any(oracle_related(a, c) for a in codes for c in wanted if a and c)


# --- strategies: a small universe so that codes collide and wildcards fire -------------------

SAME_CODES = st.builds(
    lambda p, s, c: p + s + c,
    st.sampled_from("0000125"),
    st.sampled_from(["00", "39", "72", "48", "57", "03"]),
    st.sampled_from(["000", "049", "173"]),
)
UGC_CODES = st.builds(
    lambda prefix, kind, number: prefix + kind + number,
    st.sampled_from(["OH", "PR", "TX", "GM", "PZ", "LE", "AA"]),
    st.sampled_from("ZC"),
    st.sampled_from(["049", "550", "000", "173"]),
)
VALID_CODES = st.one_of(SAME_CODES, UGC_CODES)
DRESSED_CODES = st.builds(
    lambda code, lower, before, after: before + (code.lower() if lower else code) + after,
    VALID_CODES,
    st.booleans(),
    st.sampled_from(["", "", " ", "\t", "\n "]),
    st.sampled_from(["", "", " ", "\r\n"]),
)
INVALID_CODES = st.one_of(
    st.sampled_from(
        [
            "", "OHX049", "03904", "0390490", "OH 049", "O1Z049", "ÖHZ049", "０３９０４９",
            "\xa0039049", "039049\x1c", "ohz-49", "OHZ04a", "OHZ٠٤٩", None, 39049, b"039049",
        ]
    ),
    st.text(max_size=8),
)  # fmt: skip
ALERT_CODES = st.one_of(VALID_CODES, DRESSED_CODES, INVALID_CODES)


# --- the compiled module is the one in use -----------------------------------------------------


def test_wrapper_uses_compiled_module() -> None:
    assert matching.HAS_NATIVE is True
    assert native_geomatch.__file__ is not None and native_geomatch.__file__.endswith(".so")
    assert matching._encode_impl is native_geomatch.encode
    assert matching._encode_many_impl is native_geomatch.encode_many
    assert matching._encode_lists_impl is native_geomatch.encode_lists
    assert matching._build_table_impl is native_geomatch.build_table
    assert matching._match_one_impl is native_geomatch.match_one
    assert matching._match_lists_impl is native_geomatch.match_lists
    assert matching._match_encoded_impl is native_geomatch.match_encoded


def test_constants_agree_with_the_kernel() -> None:
    assert matching.ID_SPACE == native_geomatch.ID_SPACE == 2_352_000
    assert matching.UGC_BASE == native_geomatch.UGC_BASE == 1_000_000
    assert matching.SAME_SPACE == native_geomatch.SAME_SPACE
    assert matching.TABLE_BYTES == native_geomatch.TABLE_BYTES == 294_000
    assert matching.INVALID_ID == native_geomatch.INVALID_ID == -1


def _import_without_native(require: bool) -> subprocess.CompletedProcess[str]:
    """Import the wrapper where the compiled module cannot load."""
    code = (
        "from alertstation.alerts import matching\n"
        "m = matching.GeocodeMatcher(['039000'])\n"
        "print(matching.HAS_NATIVE, matching._match_lists_impl.__name__)\n"
        "print(m.match_many([['OHZ049'], ['INZ049']]).tolist())\n"
    )
    return run_without_kernel("geomatch", code, require=require)


def test_fallback_is_the_reference_when_native_is_missing() -> None:
    result = _import_without_native(require=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "reference_match_lists", "[True,", "False]"]


def test_require_native_turns_a_missing_module_into_import_error() -> None:
    result = _import_without_native(require=True)
    assert result.returncode != 0
    assert "ImportError" in result.stderr and "ALERTSTATION_REQUIRE_NATIVE=1" in result.stderr


# --- kernel = reference twin = string oracle -----------------------------------------------------


@settings(max_examples=300, deadline=None, database=None)
@given(
    configured=st.lists(VALID_CODES, max_size=6),
    alerts=st.lists(st.lists(ALERT_CODES, max_size=6), max_size=8),
)
def test_matching_agrees_with_reference_and_oracle(
    configured: list[str], alerts: list[list[object]]
) -> None:
    matcher = GeocodeMatcher(configured)
    expected = [oracle_matches(configured, alert) for alert in alerts]
    ours = matcher.match_many(alerts)
    assert ours.dtype == np.bool_ and ours.tolist() == expected
    table = matching.reference_build_table(matcher.ids, matching.PAIR_STATE, matching.STATE_PAIR)
    assert matching.reference_match_lists(table, alerts).tolist() == expected
    assert [matcher.matches(alert) for alert in alerts] == expected
    flat, offsets = matching.encode_geocode_lists(alerts)
    assert matcher.match_encoded(flat, offsets).tolist() == expected
    assert matching.reference_match_encoded(table, flat, offsets).tolist() == expected


@settings(max_examples=150, deadline=None, database=None)
@given(configured=st.lists(st.one_of(VALID_CODES, DRESSED_CODES), max_size=10))
def test_table_equals_reference_table(configured: list[str]) -> None:
    ids = matching.encode_codes(configured)
    ours = native_geomatch.build_table(ids, matching.PAIR_STATE, matching.STATE_PAIR)
    reference = matching.reference_build_table(ids, matching.PAIR_STATE, matching.STATE_PAIR)
    assert ours.dtype == np.uint8 and ours.shape == (matching.TABLE_BYTES,)
    np.testing.assert_array_equal(ours, reference)


@settings(max_examples=400, deadline=None, database=None)
@given(code=st.one_of(ALERT_CODES, st.text(alphabet="09AZaz \t\x0b\n.-", max_size=9)))
def test_encode_equals_reference(code: object) -> None:
    assert native_geomatch.encode(code) == matching.reference_encode(code)
    normalised = oracle_normalise(code)
    if normalised is None:
        assert native_geomatch.encode(code) == -1
    else:
        assert matching.decode_id(matching.encode_code(code)) == normalised  # type: ignore[arg-type]


@pytest.mark.parametrize("code", ["039049", "OHZ049", "pzc530"])
def test_encode_every_character_at_every_position(code: str) -> None:
    for position in range(6):
        for char in map(chr, range(256)):
            variant = code[:position] + char + code[position + 1 :]
            assert native_geomatch.encode(variant) == matching.reference_encode(variant), variant


@settings(max_examples=100, deadline=None, database=None)
@given(alerts=st.lists(st.lists(ALERT_CODES, max_size=5), max_size=10))
def test_encode_lists_equals_reference(alerts: list[list[object]]) -> None:
    flat, offsets = matching.encode_geocode_lists(alerts)
    ref_flat, ref_offsets = matching.reference_encode_lists(alerts)
    assert flat.dtype == np.int32 and offsets.dtype == np.int64
    np.testing.assert_array_equal(flat, ref_flat)
    np.testing.assert_array_equal(offsets, ref_offsets)


@settings(max_examples=300, deadline=None, database=None)
@given(code_id=st.integers(min_value=0, max_value=matching.ID_SPACE - 1))
def test_every_id_is_exactly_one_code(code_id: int) -> None:
    code = matching.decode_id(code_id)
    assert len(code) == 6 and oracle_normalise(code) == code
    assert matching.encode_code(code) == code_id


# --- the rule, case by case ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("configured", "alert", "expected"),
    [
        # the nation
        (["000000"], ["GMZ550"], True),
        (["000000"], ["PRZ001"], True),
        (["OHZ049"], ["000000"], True),
        (["PZZ530"], ["000000"], True),
        (["000000"], ["not a code"], False),
        ([], ["000000"], False),
        # a whole state against its counties, parts and UGC zones (both ways)
        (["039049"], ["039000"], True),
        (["539049"], ["039000"], True),
        (["039000"], ["539049"], True),
        (["039000"], ["039173"], True),
        (["039000"], ["OHZ049"], True),
        (["OHZ049"], ["039000"], True),
        (["OHC049"], ["039000"], True),
        (["039000"], ["OHC049"], True),
        (["039000"], ["048000"], False),
        (["039000"], ["048049"], False),
        (["039000"], ["INZ049"], False),
        (["039000"], ["LEZ142"], False),  # Lake Erie: marine, no state
        (["072000"], ["PRZ001"], True),
        (["072000"], ["AMZ712"], False),  # Puerto Rico's coastal waters are marine
        (["078000"], ["VIZ001"], True),
        (["060000"], ["ASZ001"], True),
        (["066000"], ["GUZ001"], True),
        (["069000"], ["MPZ001"], True),
        (["011000"], ["DCZ001"], True),
        (["057000"], ["057123"], True),  # a SAME area without a postal code still has codes
        (["057000"], ["PZZ530"], False),
        (["OHZ049"], ["OHZ050"], False),  # two zones of one state are not related
        # whole county against its parts (both ways)
        (["039049"], ["539049"], True),
        (["539049"], ["039049"], True),
        (["539049"], ["539049"], True),
        (["539049"], ["139049"], False),
        (["039049"], ["039051"], False),
        (["000123"], ["500123"], True),
        # marine and fire-weather codes are ordinary codes
        (["GMZ550"], ["GMZ550"], True),
        (["PZZ530"], ["pzz530 "], True),
        (["PZZ530"], ["PZZ531"], False),
        (["CAZ211"], ["CAZ211"], True),
        (["CAZ211"], ["CAC211"], False),
        # a UGC county is its SAME county (both ways) and matches the county's parts
        (["OHC049"], ["039049"], True),
        (["039049"], ["OHC049"], True),
        (["OHC137"], ["139137"], True),
        (["139137"], ["OHC137"], True),
        (["OHC137"], ["039139"], False),
        (["OHC137"], ["INC137"], False),
        (["OHC049"], ["048049"], False),
        (["OHZ049"], ["039049"], False),  # a zone is not a county
        (["039049"], ["OHZ049"], False),
        (["PRC001"], ["072001"], True),
        (["OHC000"], ["139000"], False),  # NNN = 000 names no county
        # normalisation and invalid alert codes
        (["ohz049"], ["OHZ049"], True),
        ([" 039049\t"], ["\n039049"], True),
        (["039049"], ["\xa0039049"], False),
        (["039049"], ["39049", "0390490", "039 049", None, 39049, b"039049"], False),
        (["OHZ049"], ["OH049", "OHZ49", "OH-Z049"], False),
        (["OHZ049"], [], False),
    ],
)
def test_rule(configured: list[str], alert: list[object], expected: bool) -> None:
    matcher = GeocodeMatcher(configured)
    assert matcher.matches(alert) is expected
    assert matcher.match_many([alert]).tolist() == [expected]
    assert oracle_matches(configured, alert) is expected


def test_state_table() -> None:
    assert dict(matching.STATE_FIPS) == ORACLE_STATES
    assert len(matching.STATE_FIPS) == 56  # 50 states, DC and 5 territories
    assert len(set(matching.STATE_FIPS.values())) == 56
    assert {p: matching.STATE_FIPS[p] for p in ("AS", "GU", "MP", "PR", "VI")} == {
        "AS": 60, "GU": 66, "MP": 69, "PR": 72, "VI": 78,
    }  # fmt: skip
    for marine in ("AM", "AN", "GM", "LC", "LE", "LH", "LM", "LO", "LS", "PH", "PK", "PM", "PS"):
        assert marine not in matching.STATE_FIPS
    assert matching.FIPS_STATE[39] == "OH"


def test_id_layout() -> None:
    assert matching.encode_code("000000") == 0
    assert matching.encode_code("999999") == 999_999
    assert matching.encode_code("039049") == 39_049
    assert matching.encode_code("AAZ000") == 1_000_000
    assert matching.encode_code("AAC000") == 1_001_000
    assert matching.encode_code("ABZ000") == 1_002_000
    assert matching.encode_code("ZZC999") == matching.ID_SPACE - 1
    assert matching.encode_code(" ohz049\n") == matching.encode_code("OHZ049")


def test_matcher_reports_its_codes() -> None:
    matcher = GeocodeMatcher(["ohz049", "039049", "OHZ049 ", "GMZ550"])
    assert matcher.codes == ("039049", "GMZ550", "OHZ049")
    assert len(matcher) == 3 and repr(matcher) == "GeocodeMatcher(3 codes)"
    assert matcher.ids.dtype == np.int32 and not matcher.ids.flags.writeable
    assert len(GeocodeMatcher([])) == 0


def test_stored_ids_rematch_after_a_settings_change() -> None:
    alerts = [["OHZ049", "OHC049"], ["539049"], ["GMZ550"], ["048000"], ["bad"]]
    flat, offsets = matching.encode_geocode_lists(alerts)
    for codes in (["OHZ049"], ["039049"], ["GMZ550", "048201"], ["000000"], []):
        matcher = GeocodeMatcher(codes)
        assert matcher.match_encoded(flat, offsets).tolist() == matcher.match_many(alerts).tolist()
        assert matcher.match_encoded(flat, offsets).tolist() == [
            oracle_matches(codes, alert) for alert in alerts
        ]


# --- input shapes and bad input --------------------------------------------------------------


def test_match_many_accepts_any_iterables() -> None:
    matcher = GeocodeMatcher(["OHZ049"])

    def codes() -> Iterator[str]:
        yield "GMZ550"
        yield "OHZ049"

    alerts = [("OHZ049",), codes(), np.array(["ohz049"]), {"OHZ049"}, iter([]), ["GMZ550"]]
    assert matcher.match_many(alerts).tolist() == [True, True, True, True, False, False]
    assert matcher.match_many(iter([["OHZ049"]])).tolist() == [True]
    assert matcher.match_many([]).shape == (0,)
    assert matcher.matches(codes())


def test_match_many_refuses_a_bare_string_as_an_alert() -> None:
    matcher = GeocodeMatcher(["OHZ049"])
    with pytest.raises(TypeError, match="single str"):
        matcher.match_many([["OHZ049"], "OHZ049"])
    with pytest.raises(TypeError, match="single str"):
        matcher.matches("OHZ049")
    with pytest.raises(TypeError):
        matcher.match_many([5])
    with pytest.raises(TypeError, match="single str"):
        matching.encode_geocode_lists(["OHZ049"])


class CodeText(str):
    """A str subclass, as some parsers return; it is read like any str."""


def test_str_subclasses_and_wide_strings_read_like_plain_str() -> None:
    codes = [CodeText("OHZ049"), CodeText(" 539049\n"), CodeText("03904"), "OHZ04\u0660"]
    codes += ["\u00d6HZ049", "ohz049", np.str_("539049"), "x539049"[1:]]
    assert native_geomatch.encode_many(codes).tolist() == [
        matching.reference_encode(code) for code in codes
    ]
    matcher = GeocodeMatcher(["039049"])
    alerts = [[code] for code in codes]
    assert matcher.match_many(alerts).tolist() == [
        oracle_matches(["039049"], alert) for alert in alerts
    ]


def _batch(seed: int) -> list[list[object] | tuple[object, ...] | Iterator[object]]:
    """Return seeded alerts of 0..300 codes in lists, tuples and generators, mixed codes."""
    rng = np.random.default_rng(seed)
    pool: list[object] = ["039049", "539049", "039000", "OHZ049", "ohc049", "GMZ550", "PRZ001"]
    pool += ["048000", "INZ049", " 072000\t", CodeText("539049"), "OHZ04", None, 7, "\xa0OHZ049"]
    sizes = rng.choice([0, 1, 2, 7, 40, 127, 128, 129, 300], size=400)
    alerts: list[list[object] | tuple[object, ...] | Iterator[object]] = []
    for index, size in enumerate(sizes.tolist()):
        codes = [pool[i] for i in rng.integers(0, len(pool), size=size).tolist()]
        form = index % 5
        alerts.append(tuple(codes) if form == 3 else iter(codes) if form == 4 else codes)
    return alerts


@pytest.mark.parametrize("configured", [["PRZ001"], ["039049"], ["048000", "GMZ550"]])
def test_large_batches_agree_with_reference(configured: list[str]) -> None:
    matcher = GeocodeMatcher(configured)
    table = matching.reference_build_table(matcher.ids, matching.PAIR_STATE, matching.STATE_PAIR)
    expected = matching.reference_match_lists(table, _batch(7))
    ours = matcher.match_many(_batch(7))
    assert ours.tolist() == expected.tolist()
    assert 0 < ours.sum() < len(ours)
    flat, offsets = matching.encode_geocode_lists(_batch(7))
    ref_flat, ref_offsets = matching.reference_encode_lists(_batch(7))
    np.testing.assert_array_equal(flat, ref_flat)
    np.testing.assert_array_equal(offsets, ref_offsets)
    assert matcher.match_encoded(flat, offsets).tolist() == expected.tolist()


def test_each_alert_is_read_when_its_turn_comes() -> None:
    matcher = GeocodeMatcher(["OHZ049"])
    emptied = ["OHZ049"] * 200
    grown = ["GMZ550"] * 200
    alerts: list[object] = [["GMZ550"] * 300, None, emptied, grown, ["INZ049"]]

    def change_later_alerts() -> Iterator[str]:
        emptied.clear()
        grown.append("ohz049")
        alerts[4] = ["OHZ049"]
        yield "GMZ550"

    alerts[1] = change_later_alerts()
    assert matcher.match_many(alerts).tolist() == [False, False, False, True, True]
    emptied.extend(["OHZ049"] * 200)
    grown.pop()
    alerts[1] = change_later_alerts()
    flat, offsets = matching.encode_geocode_lists(alerts)  # type: ignore[arg-type]
    assert offsets.tolist() == [0, 300, 301, 301, 502, 503]
    assert flat[-2:].tolist() == [matching.encode_code("OHZ049")] * 2


def test_alerts_that_shrink_while_read_are_refused() -> None:
    matcher = GeocodeMatcher(["OHZ049"])
    alerts: list[object] = [["OHZ049"] * 200, None, ["OHZ049"] * 200, ["OHZ049"]]

    def shrink() -> Iterator[str]:
        del alerts[2:]
        yield "OHZ049"

    for run in (matcher.match_many, matching.encode_geocode_lists):
        alerts[1:] = [shrink(), ["OHZ049"] * 200, ["OHZ049"]]
        with pytest.raises(RuntimeError, match="changed size"):
            run(alerts)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["OHX049", "03904", "", "  ", "OH049", None, 39049, b"039049"])
def test_invalid_configured_code_is_named(bad: object) -> None:
    with pytest.raises(ValueError, match=re.escape(f"invalid zone code {bad!r}")):
        GeocodeMatcher(["OHZ049", bad])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        matching.encode_codes(["039049", bad])  # type: ignore[list-item]


@pytest.mark.parametrize("bad", ["OHZ049", b"OHZ049"])
def test_configured_codes_must_not_be_a_single_string(bad: object) -> None:
    with pytest.raises(ValueError, match="not a single"):
        GeocodeMatcher(bad)  # type: ignore[arg-type]


def test_encode_code_and_codes() -> None:
    with pytest.raises(ValueError, match="invalid zone code 'OHZ04'"):
        matching.encode_code("OHZ04")
    ids = matching.encode_codes(["OHZ049", "bad", "039049"], skip_invalid=True)
    assert ids.dtype == np.int32 and ids.tolist() == [1_742_049, 39_049]
    assert matching.encode_codes(iter(["000000"])).tolist() == [0]
    assert matching.encode_codes([]).dtype == np.int32
    with pytest.raises(ValueError, match="outside the id space"):
        matching.decode_id(matching.ID_SPACE)
    with pytest.raises(ValueError, match="outside the id space"):
        matching.decode_id(-1)


def test_match_encoded_ignores_ids_outside_the_id_space() -> None:
    matcher = GeocodeMatcher(["039049"])
    flat = np.array([-1, 2**32 + 39_049, matching.ID_SPACE, 39_049], dtype=np.int64)
    assert matcher.match_encoded(flat, [0, 3, 4]).tolist() == [False, True]
    as_int32 = np.array([-1, -7, 39_049], dtype=np.int32)
    assert matcher.match_encoded(as_int32, np.array([0, 2, 3], np.int32)).tolist() == [
        False,
        True,
    ]
    assert matcher.match_encoded([], [0, 0]).tolist() == [False]
    # int32 ids reach the kernel as given: those past the id space test nothing (id 0, the
    # nation, is set in every table, so an out-of-range id read as id 0 would match).
    beyond = np.array([matching.ID_SPACE, 2**31 - 1, -(2**31), 39_049], dtype=np.int32)
    assert matcher.match_encoded(beyond, [0, 3, 4]).tolist() == [False, True]
    assert matcher.match_encoded(np.array([39_049], np.uint32), [0]).shape == (0,)
    assert matcher.match_encoded([7, 39_049], [1, 2]).tolist() == [True]  # need not start at 0


@pytest.mark.parametrize(
    ("flat", "offsets", "message"),
    [
        ([1, 2, 3], [0, 3, 2], r"offsets\[2\] = 2 is out of order"),
        ([1, 2, 3], [0, 4], r"offsets\[1\] = 4 is out of order or outside 0..3"),
        ([1, 2, 3], [-1, 2], r"offsets\[0\] = -1"),
        ([1, 2, 3], [5], r"offsets\[0\] = 5"),
        ([1, 2, 3], [], "n \\+ 1 entries"),
        ([1, 2, 3], [[0, 1]], "n \\+ 1 entries"),
        ([1, 2, 3], [0.0, 1.0], "offsets must be an integer array"),
        ([1.0, 2.0], [0, 2], "flat_ids must be an integer array"),
        ([[1, 2]], [0, 2], "flat_ids must be a 1-D array"),
        ([True, False], [0, 2], "flat_ids must be an integer array"),
    ],
)
def test_match_encoded_rejects_bad_arrays(flat: object, offsets: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GeocodeMatcher(["039049"]).match_encoded(flat, offsets)  # type: ignore[arg-type]


def test_reference_rejects_bad_offsets_like_the_kernel() -> None:
    table = matching.reference_build_table(
        np.array([39_049], np.int32), matching.PAIR_STATE, matching.STATE_PAIR
    )
    flat = np.array([1, 2, 3], np.int32)
    for offsets, message in (([0, 3, 2], r"offsets\[2\] = 2"), ([5], r"offsets\[0\] = 5")):
        with pytest.raises(ValueError, match=message):
            matching.reference_match_encoded(table, flat, np.array(offsets, np.int64))
        with pytest.raises(ValueError, match=message):
            native_geomatch.match_encoded(table, flat, np.array(offsets, np.int64))


def test_kernel_rejects_bad_tables() -> None:
    ids = np.array([39_049], np.int32)
    with pytest.raises(ValueError, match="not a valid id"):
        native_geomatch.build_table(
            np.array([matching.ID_SPACE], np.int32), matching.PAIR_STATE, matching.STATE_PAIR
        )
    with pytest.raises(ValueError, match="676 entries"):
        native_geomatch.build_table(ids, matching.STATE_PAIR, matching.STATE_PAIR)
    bad_pairs = np.array(matching.PAIR_STATE)
    bad_pairs[3] = 100
    with pytest.raises(ValueError, match=r"pair_state\[3\]"):
        native_geomatch.build_table(ids, bad_pairs, matching.STATE_PAIR)
    with pytest.raises(ValueError, match="table must hold 294000 bytes"):
        native_geomatch.match_lists(np.zeros(8, np.uint8), [["039049"]])
