"""Time our SAME decoder against multimon-ng on one minute of 22.05 kHz audio.

The signal holds three complete messages (three header bursts, an attention tone, three EOMs)
in low-level noise, as signed 16-bit mono PCM. The peer is ``multimon-ng -a EAS -t raw -`` fed
the same bytes on standard input (process start included: that is how it is used). Both must
report the same headers (and the EOMs: one per message for ours, one per burst for the peer)
before anything is timed; each benchmark records its
speed as ``extra_info["x_real_time"]`` (seconds of audio per second of work).
"""

from __future__ import annotations

import random
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from alertstation.eas import kernels
from alertstation.eas.decode import SameStreamDecoder, decode_pcm

MULTIMON = shutil.which("multimon-ng")
if MULTIMON is None:
    pytest.skip("multimon-ng is not installed", allow_module_level=True)

SAMPLE_RATE = 22050
SECONDS = 60
PEER = "multimon-ng -a EAS"
SEED = 20261121
MESSAGES = 3
STREAM_CHUNK = 1024

Int16Array = npt.NDArray[np.int16]


def random_header(rng: random.Random) -> str:
    """Return a realistic header (station ids of 4-8 characters, which multimon-ng reads)."""
    locations = "-".join(
        f"0{rng.randint(1, 56):02d}{rng.randint(1, 199):03d}" for _ in range(rng.randint(1, 8))
    )
    event = rng.choice(["TOR", "SVR", "FFW", "RWT", "RMT", "CEM"])
    station = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4))
    station += rng.choice(["/NWS", "/FM", "/TV", ""])
    return (
        f"ZCZC-{rng.choice(['WXR', 'EAS', 'CIV'])}-{event}-{locations}+0100-"
        f"{rng.randint(1, 366):03d}{rng.randint(0, 23):02d}{rng.randint(0, 59):02d}-"
        f"{station.ljust(8)}-"
    )


def build_signal(seed: int = SEED) -> tuple[Int16Array, list[str]]:
    """Return one minute of int16 PCM with three messages, and the headers it carries."""
    rng = random.Random(seed)
    out = np.random.default_rng(seed).normal(0, 0.02, SECONDS * SAMPLE_RATE).astype(np.float32)
    headers = []
    position = SAMPLE_RATE
    second = np.zeros(SAMPLE_RATE, np.float32)
    for _ in range(MESSAGES):
        header = random_header(rng)
        headers.append(header)
        parts: list[npt.NDArray[np.float32]] = []
        for text in [header] * 3:
            burst, _ = kernels.afsk_modulate(
                kernels.encode_burst(text), sample_rate=SAMPLE_RATE, amplitude=0.5
            )
            parts += [burst, second]
        parts.append(kernels.attention_tone(4.0, sample_rate=SAMPLE_RATE, amplitude=0.5))
        parts.append(second)
        for _ in range(3):
            burst, _ = kernels.afsk_modulate(
                kernels.encode_burst("NNNN"), sample_rate=SAMPLE_RATE, amplitude=0.5
            )
            parts += [burst, second]
        message = np.concatenate(parts)
        out[position : position + message.size] += message
        position += message.size + SAMPLE_RATE
    assert position <= out.size, "the messages must fit in the minute"
    return kernels.to_int16(out), headers


def ours(pcm: Int16Array) -> list[str]:
    """Decode with our decoder; return the reported texts (headers and NNNN)."""
    return [item.text for item in decode_pcm(pcm, SAMPLE_RATE)]


def ours_streaming(pcm: Int16Array) -> list[str]:
    """Decode with our streaming decoder fed small chunks, as a live monitor would."""
    decoder = SameStreamDecoder(SAMPLE_RATE)
    found = []
    for start in range(0, pcm.size, STREAM_CHUNK):
        found += decoder.feed(pcm[start : start + STREAM_CHUNK])
    return [item.text for item in found + decoder.flush()]


def peer(pcm: Int16Array) -> list[str]:
    """Decode with multimon-ng reading raw s16le from standard input; return its texts."""
    assert MULTIMON is not None
    result = subprocess.run(
        [MULTIMON, "-q", "-a", "EAS", "-t", "raw", "-"],
        input=pcm.astype("<i2").tobytes(),
        capture_output=True,
        check=True,
    )
    lines = result.stdout.decode("ascii", "replace").splitlines()
    return [line.removeprefix("EAS: ") for line in lines if line.startswith("EAS: ")]


@pytest.fixture(scope="module")
def pcm() -> Int16Array:
    """Return the seeded minute of audio, checking ours and the peer read the same from it."""
    samples, headers = build_signal()
    mine, theirs = ours(samples), peer(samples)
    assert [text for text in mine if text != "NNNN"] == headers
    assert [text for text in theirs if text != "NNNN"] == headers
    # Ours reports one EOM per message (two identical bursts), multimon-ng one per burst.
    assert mine.count("NNNN") == len(headers)
    assert theirs.count("NNNN") == 3 * len(headers)
    assert ours_streaming(samples) == mine
    return samples


def _run(
    benchmark: Any, group: str, role: str, func: Callable[[Int16Array], list[str]], pcm: Int16Array
) -> None:
    """Time ``func`` on the minute of audio, tag the benchmark, record × real time."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER
    benchmark.extra_info["audio_seconds"] = SECONDS
    found = benchmark(func, pcm)
    assert len(found) == (2 if role == "ours" else 4) * MESSAGES
    if benchmark.stats is not None:
        benchmark.extra_info["x_real_time"] = round(SECONDS / benchmark.stats.stats.median, 1)


def test_decode_ours(benchmark: Any, pcm: Int16Array) -> None:
    _run(benchmark, "eas.decode (60 s, 22.05 kHz)", "ours", ours, pcm)


def test_decode_peer(benchmark: Any, pcm: Int16Array) -> None:
    _run(benchmark, "eas.decode (60 s, 22.05 kHz)", "peer", peer, pcm)


def test_decode_stream_ours(benchmark: Any, pcm: Int16Array) -> None:
    _run(
        benchmark, f"eas.decode stream ({STREAM_CHUNK}-sample chunks)", "ours", ours_streaming, pcm
    )


def test_decode_stream_peer(benchmark: Any, pcm: Int16Array) -> None:
    _run(benchmark, f"eas.decode stream ({STREAM_CHUNK}-sample chunks)", "peer", peer, pcm)
