"""The live audio of a national relay: one writer, a reader per output, bounded memory."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from alertstation.eas.airing import live
from alertstation.eas.airing.live import LiveAudio

RATE = 100


def chunk(value: int, size: int = 10) -> np.ndarray:
    return np.full(size, value, dtype=np.int16)


def values(chunks: list[np.ndarray]) -> list[int]:
    return [int(c[0]) for c in chunks]


def never() -> bool:
    return False


def test_every_reader_gets_the_prefix_the_same_audio_and_the_eom() -> None:
    audio = LiveAudio(RATE)
    audio.prefix, audio.eom = chunk(-1), chunk(-2)
    audio.open(["icecast", "archive"])
    for value in range(3):
        audio.put(chunk(value))
    got: dict[str, list[np.ndarray]] = {}

    def read(name: str) -> None:
        got[name] = list(audio.read(name, never))

    readers = [threading.Thread(target=read, args=(name,)) for name in ("icecast", "archive")]
    for reader in readers:
        reader.start()
    audio.put(chunk(3))  # arrives while they read
    audio.end("eom")
    audio.put(chunk(4))  # after the end: dropped
    for reader in readers:
        reader.join(timeout=30)
    assert values(got["icecast"]) == values(got["archive"]) == [-1, 0, 1, 2, 3, -2]


def test_a_stop_ends_the_reading_without_the_eom() -> None:
    audio = LiveAudio(RATE)
    audio.eom = chunk(-2)
    audio.put(chunk(0))
    stopped = threading.Event()
    reader = audio.read("alsa", stopped.is_set)
    assert values([next(reader)]) == [0]
    stopped.set()
    assert list(reader) == []


def test_the_safety_cap_ends_it_and_keeps_no_more() -> None:
    audio = LiveAudio(RATE, max_seconds=0.25)
    for value in range(5):
        audio.put(chunk(value))
    assert audio.ended and audio.end_reason == "the safety cap"
    assert audio.received_seconds == pytest.approx(0.25)
    assert sum(c.size for c in audio.read("archive", never)) == 25


def test_a_lagging_reader_skips_ahead_and_memory_stays_bounded() -> None:
    audio = LiveAudio(RATE, buffer_seconds=0.3)
    audio.open(["icecast", "archive"])
    fast = audio.read("icecast", never)
    for value in range(10):
        audio.put(chunk(value))
        assert int(next(fast)[0]) == value
    audio.end("eom")
    assert list(fast) == []
    assert values(list(audio.read("archive", never))) == [7, 8, 9]  # the last 0.3 s


def test_the_registry_hands_a_message_s_audio_over_once() -> None:
    audio = LiveAudio(RATE)
    live.attach(991, audio)
    assert live.take(991) is audio
    assert live.take(991) is None
    live.attach(992, audio)
    live.detach(992)
    assert live.take(992) is None
