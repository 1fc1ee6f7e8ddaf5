"""Streaming equals whole-signal decoding; bursts are grouped and voted character by character."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alertstation.eas.decode import (
    Decoded,
    SameStreamDecoder,
    complete_header,
    decode_pcm,
    vote,
)
from tests.eas.test_decode_roundtrip import add_noise, build_message, burst

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
    assert [item.text for item in whole] == [HEADER] + ["NNNN"] * 3 + [OTHER] + ["NNNN"] * 3
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


def test_a_corrupted_burst_is_outvoted() -> None:
    wrong = HEADER.replace("039051", "039951").replace("TOR", "TOX")
    for order in [(wrong, HEADER, HEADER), (HEADER, wrong, HEADER), (HEADER, HEADER, wrong)]:
        decoded = decode_pcm(message_of(*order), RATE)
        assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 3)]


def test_each_burst_damaged_in_a_different_place_still_votes_right() -> None:
    damaged = [
        HEADER[:5] + "Q" + HEADER[6:],
        HEADER[:20] + "7" + HEADER[21:],
        HEADER[:-3] + "Z" + HEADER[-2:],
    ]
    decoded = decode_pcm(message_of(*damaged), RATE)
    assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 3)]


def test_a_lost_middle_burst_is_bridged() -> None:
    lost = burst(HEADER, RATE).size / RATE + 1.0
    signal = np.concatenate([message_of(HEADER, gap=1.0 + lost), message_of(HEADER)])
    decoded = decode_pcm(signal, RATE)
    assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 2)]


def test_single_clean_burst_is_reported() -> None:
    decoded = decode_pcm(message_of(HEADER), RATE)
    assert [(item.kind, item.text, item.bursts) for item in decoded] == [("header", HEADER, 1)]


def test_a_tie_falls_back_to_the_one_well_formed_burst() -> None:
    broken = HEADER.replace("039173", "03917X")  # a letter where a digit must be
    for order in [(HEADER, broken), (broken, HEADER)]:
        decoded = decode_pcm(message_of(*order), RATE)
        assert [(item.text, item.bursts) for item in decoded] == [(HEADER, 1)]


def test_two_disagreeing_bursts_report_nothing() -> None:
    assert decode_pcm(message_of(HEADER, HEADER.replace("TOR", "SVR")), RATE) == []


def test_separate_messages_are_not_merged() -> None:
    signal = np.concatenate([message_of(HEADER), silence(8.0), message_of(OTHER)])
    assert [item.text for item in decode_pcm(signal, RATE)] == [HEADER, OTHER]


def test_a_burst_cut_off_by_the_end_of_the_stream_still_votes() -> None:
    signal = message_of(HEADER, HEADER, HEADER)
    cut = signal.size - round(1.0 * RATE) - burst(HEADER, RATE).size // 2
    assert [(item.text, item.bursts) for item in decode_pcm(signal[:cut], RATE)] == [(HEADER, 3)]


def test_vote_and_structure_helpers() -> None:
    assert vote([b"ABC", b"AXC", b"ABD"]) == b"ABC"
    assert vote([b"AB", b"AC"]) == b"A\x00"
    assert vote([b"A\x00C", b"\x00\x00C", b"ABCD"]) == b"ABCD"
    assert vote([]) == b""
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
