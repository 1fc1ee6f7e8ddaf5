"""Streaming equals whole-signal decoding; a message is valid only when two bursts are identical."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alertstation.eas.decode import (
    Decoded,
    Rejected,
    SameStreamDecoder,
    complete_header,
    decode_pcm,
    differing_positions,
    header_problem,
    judge,
)
from tests.eas.test_decode_roundtrip import add_noise, build_message, burst, preamble_samples

RATE = 16000
HEADER = "ZCZC-WXR-TOR-039173-039051-039095+0030-1241720-KCLE/NWS-"
OTHER = "ZCZC-CIV-EVI-012057+0100-0011200-WOLF/IP -"


def silence(seconds: float, rate: int = RATE) -> np.ndarray:
    return np.zeros(round(seconds * rate), np.float32)


def message_of(*texts: str, gap: float = 1.0, rate: int = RATE) -> np.ndarray:
    """Return bursts of ``texts`` (None-free), each followed by ``gap`` seconds of silence."""
    parts = [silence(0.2, rate)]
    for text in texts:
        parts += [burst(text, rate), silence(gap, rate)]
    return np.concatenate(parts)


@pytest.fixture(scope="module")
def two_messages() -> np.ndarray:
    """Return two noisy messages back to back (16 kHz), about 25 s."""
    first, _ = build_message(HEADER, RATE)
    second, _ = build_message(OTHER, RATE)
    return add_noise(np.concatenate([first, silence(2.0), second]), 12.0, seed=3)


def stream(signal: np.ndarray, cuts: list[int]) -> list[Decoded]:
    decoder = SameStreamDecoder(RATE)
    out: list[Decoded] = []
    start = 0
    for cut in sorted(cuts) + [signal.size]:
        out += decoder.feed(signal[start:cut])
        start = max(start, cut)
    return out + decoder.flush()


@settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(cuts=st.lists(st.integers(min_value=0, max_value=420_000), max_size=30))
def test_stream_in_any_chunks_equals_whole(two_messages: np.ndarray, cuts: list[int]) -> None:
    whole = decode_pcm(two_messages, RATE)
    assert [(item.text, item.bursts) for item in whole] == [
        (HEADER, 3),
        ("NNNN", 3),
        (OTHER, 3),
        ("NNNN", 3),
    ]
    assert stream(two_messages, [c for c in cuts if c < two_messages.size]) == whole


def test_stream_reports_a_header_before_the_end_of_the_stream() -> None:
    signal = message_of(HEADER, HEADER, HEADER)
    decoder = SameStreamDecoder(RATE)
    got = decoder.feed(signal)
    assert [item.text for item in got] == [HEADER]
    assert decoder.flush() == []
    with pytest.raises(ValueError, match="flushed"):
        decoder.feed(signal)


def test_two_bursts_are_reported_once_after_the_gap() -> None:
    signal = message_of(HEADER, HEADER)
    decoder = SameStreamDecoder(RATE)
    assert decoder.feed(signal[: RATE * 2]) == []
    assert decoder.feed(signal[RATE * 2 :]) == []  # the third burst could still come
    got = decoder.feed(silence(6.0))
    assert [(item.text, item.bursts) for item in got] == [(HEADER, 2)]
    assert decoder.samples_seen == signal.size + 6 * RATE


def decode_with_refusals(signal: np.ndarray) -> tuple[list[Decoded], list[Rejected]]:
    refused: list[Rejected] = []
    return decode_pcm(signal, RATE, on_rejected=refused.append), refused


def test_an_odd_burst_is_outnumbered_and_listed() -> None:
    wrong = HEADER.replace("039051", "039951").replace("TOR", "TOX")
    for index, order in enumerate(
        [(wrong, HEADER, HEADER), (HEADER, wrong, HEADER), (HEADER, HEADER, wrong)]
    ):
        decoded, refused = decode_with_refusals(message_of(*order))
        assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 2)]
        (odd,) = refused
        assert odd.texts == (wrong,)
        assert odd.reason == "burst differs from the valid header at positions 12, 24"
        assert (
            odd.start_sample > decoded[0].start_sample
            if index
            else odd.end_sample < decoded[0].start_sample
        )


def test_bursts_damaged_in_different_places_are_never_voted_together() -> None:
    """Three bursts, each wrong somewhere else: a vote would rebuild the header; 11.33 refuses."""
    damaged = [
        HEADER[:5] + "Q" + HEADER[6:],
        HEADER[:20] + "7" + HEADER[21:],
        HEADER[:-3] + "Z" + HEADER[-2:],
    ]
    decoded, refused = decode_with_refusals(message_of(*damaged))
    assert decoded == []
    (group,) = refused
    assert group.kind == "header" and group.texts == tuple(damaged)
    assert group.reason == (
        "no two bursts identical: bursts 1 and 2 differ at positions 6, 21; "
        f"bursts 1 and 3 differ at positions 6, {len(HEADER) - 2}; "
        f"bursts 2 and 3 differ at positions 21, {len(HEADER) - 2}"
    )


def test_a_lost_middle_burst_is_bridged() -> None:
    lost = burst(HEADER, RATE).size / RATE + 1.0
    signal = np.concatenate([message_of(HEADER, gap=1.0 + lost), message_of(HEADER)])
    decoded = decode_pcm(signal, RATE)
    assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 2)]


def test_a_single_clean_burst_is_not_enough() -> None:
    decoded, refused = decode_with_refusals(message_of(HEADER))
    assert decoded == []
    assert [(r.texts, r.reason) for r in refused] == [
        ((HEADER,), "only one burst received; 11.33(a)(10) needs two identical bursts")
    ]


def test_one_well_formed_burst_beside_a_broken_one_is_not_enough() -> None:
    broken = HEADER.replace("039173", "03917X")  # a letter where a digit must be
    for order in [(HEADER, broken), (broken, HEADER)]:
        decoded, refused = decode_with_refusals(message_of(*order))
        assert decoded == []
        assert [r.reason for r in refused] == [
            "no two bursts identical: bursts 1 and 2 differ at positions 19"
        ]


def test_two_disagreeing_bursts_report_nothing() -> None:
    assert decode_pcm(message_of(HEADER, HEADER.replace("TOR", "SVR")), RATE) == []


def test_a_spliced_burst_of_another_valid_header_is_outnumbered() -> None:
    spliced = "ZCZC-WXR-SVR-039173-039051-039095+0030-1241720-KCLE/NWS-"
    decoded, refused = decode_with_refusals(message_of(HEADER, spliced, HEADER))
    assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 2)]
    assert [r.texts for r in refused] == [(spliced,)]
    decoded, refused = decode_with_refusals(message_of(HEADER, spliced))
    assert decoded == [] and refused[0].reason.startswith("no two bursts identical")


def test_identical_bursts_that_do_not_parse_are_refused_with_the_field() -> None:
    cases = {
        HEADER.replace("WXR", "WXB"): "originator: expected one of",
        HEADER.replace("TOR", "TOX"): "event: unknown event code 'TOX'",
        HEADER.replace(
            "039173", "099173"
        ): "location code 1: state FIPS code must be 00-78 or a marine area",
        HEADER.replace("+0030", "+0020"): "purge time: must be in 15-minute steps",
        HEADER.replace("1241720", "3671720"): "issue time: Julian day must be 001-366",
    }
    for text, field in cases.items():
        decoded, refused = decode_with_refusals(message_of(text, text, text))
        assert decoded == [], text
        (group,) = refused
        assert group.texts == (text,) * 3
        assert group.reason.startswith(f"3 identical bursts, but {field}"), group.reason


def test_eoms_need_two_identical_bursts_too() -> None:
    decoded, refused = decode_with_refusals(message_of("NNNN"))
    assert decoded == [] and refused[0].kind == "eom"
    decoded, refused = decode_with_refusals(message_of("NNNN", "NNNN"))
    assert [(d.kind, d.text, d.bursts) for d in decoded] == [("eom", "NNNN", 2)] and refused == []
    decoded, refused = decode_with_refusals(message_of("NNNN", "NXNN", "NNNN"))
    assert [(d.kind, d.bursts) for d in decoded] == [("eom", 2)]
    assert [(r.kind, r.texts) for r in refused] == [("eom", ("NXNN",))]
    decoded, refused = decode_with_refusals(message_of("NXNN", "NXNN", "NNXN"))
    assert decoded == []
    assert refused[0].reason == "2 identical bursts, but not an EOM: expected NNNN, got 'NXNN'"


def test_separate_messages_are_not_merged() -> None:
    signal = np.concatenate([message_of(HEADER, HEADER), silence(8.0), message_of(OTHER, OTHER)])
    assert [item.text for item in decode_pcm(signal, RATE)] == [HEADER, OTHER]


def test_a_message_right_after_a_two_burst_one_is_not_swallowed() -> None:
    """A third burst unlike the valid pair starts the next message instead of filling the group."""
    for texts in [(HEADER, HEADER, OTHER, OTHER), (HEADER, HEADER, OTHER, OTHER, OTHER)]:
        decoded, refused = decode_with_refusals(message_of(*texts))
        assert [(item.text, item.bursts) for item in decoded] == [
            (HEADER, 2),
            (OTHER, texts.count(OTHER)),
        ]
        assert refused == []


def test_three_unpaired_bursts_make_room_for_the_next_message() -> None:
    """A splice left over from one message and another before the next one's first burst."""
    spliced = "ZCZC-PEP-EAN-000000+0600-0010000-WHITE/HS-"
    stray = "ZCZC-EAS-DMO-078999+9930-3660000-TEST    -"
    decoded, refused = decode_with_refusals(
        message_of(HEADER, HEADER, spliced, stray, OTHER, OTHER)
    )
    assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 2), (OTHER, 2)]
    assert [r.texts for r in refused] == [(spliced,), (stray,)]
    assert refused[0].reason.startswith(
        "no later burst read it identically; it differs from the next burst at positions 6, 7,"
    )
    assert refused[1].reason.startswith("burst differs from the valid header at positions 6, 7,")


def test_a_burst_cut_off_by_the_end_of_the_stream_still_counts() -> None:
    signal = message_of(HEADER, HEADER, HEADER)
    cut = signal.size - round(1.0 * RATE) - burst(HEADER, RATE).size // 2
    assert [(item.text, item.bursts) for item in decode_pcm(signal[:cut], RATE)] == [(HEADER, 2)]


@pytest.mark.parametrize("rate", [8000, 11025])
def test_a_header_cut_at_any_offset_decodes_exactly_once(rate: int) -> None:
    """Cuts at every sample over the first character, then all through two bursts."""
    signal = message_of(HEADER, HEADER, HEADER, rate=rate)
    lead = round(0.2 * rate)
    span = burst(HEADER, rate).size
    whole = decode_pcm(signal, rate)
    assert [(item.text, item.bursts) for item in whole] == [(HEADER, 3)]
    first = lead + preamble_samples(rate)
    for cut in [*range(first - 5, first + 130), *range(lead, lead + 2 * span + rate, 97)]:
        for cuts in ([cut], [cut, cut + 1], [cut, cut + span // 3]):
            decoder = SameStreamDecoder(rate)
            got, start = [], 0
            for boundary in cuts + [signal.size]:
                got += decoder.feed(signal[start:boundary])
                start = boundary
            assert got + decoder.flush() == whole, cuts


def test_judging_helpers() -> None:
    raw = HEADER.encode()
    assert differing_positions(raw, raw) == []
    assert differing_positions(b"ZC\0C", b"ZC\0C") == [3]  # unreadable is never identical
    assert differing_positions(b"ZCZC-", b"ZCZC") == [5]
    decoded, refused = judge("header", [(0, raw, 0, 10), (0, raw[:-1] + b"\0", 20, 30)])
    assert decoded is None and refused[0].texts == (HEADER, HEADER[:-1] + "?")
    decoded, refused = judge("header", [(0, raw, 0, 10), (0, b"junk", 15, 18), (0, raw, 20, 30)])
    assert decoded == Decoded("header", HEADER, 0, 30, 2)
    assert [(r.texts, r.start_sample, r.end_sample) for r in refused] == [(("junk",), 15, 18)]
    # Two identical bursts with the same unreadable character are still refused.
    holed = raw[:7] + b"\0" + raw[8:]
    decoded, refused = judge("header", [(0, holed, 0, 10), (0, holed, 20, 30)])
    assert decoded is None and "positions 8" in refused[0].reason
    assert header_problem(HEADER) is None
    assert header_problem(OTHER) is None
    assert header_problem(HEADER[:-1]).startswith("not a header")


def test_structure_helper() -> None:
    assert complete_header(HEADER.encode() + b"\x00junk") == HEADER
    assert complete_header(b"ZCZC-EAS-RWT-012057+0030-2780415-WTSP/TV-") is not None
    for bad in [
        HEADER.replace("-0390", "-03X0"),
        HEADER.replace("+0030", "+030"),
        HEADER.replace("KCLE/NWS", "KCLE/NWSX"),
        "ZCZC-WXR-TOR-+0030-1241720-KCLE/NWS-",
        HEADER[:-1],
        "ZCZC-WX-TOR-039173+0030-1241720-KCLE/NWS-",
        "ZCZC-WXR-TOR-" + "-".join(["039173"] * 32) + "+0030-1241720-KCLE/NWS-",
    ]:
        assert complete_header(bad.encode()) is None, bad
