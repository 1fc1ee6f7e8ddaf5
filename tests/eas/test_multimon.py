"""An independent decoder, multimon-ng, reads every header the encoder sends.

multimon-ng's EAS demodulator takes signed 16-bit mono PCM at 22050 Hz on standard input
(``-t raw -``; other input types need sox). Messages rendered at other rates are resampled to
22050 Hz first, each message on its own, and many messages are concatenated into one process
call per sample rate. multimon-ng prints ``EAS: <header>`` once per message (it reports a
header after two matching bursts) and ``EAS: NNNN`` for each EOM burst.

multimon-ng 1.2.0 restarts its bit clock slightly late at every bit, and corrects it only at
mark/space transitions, so it loses the bit timing in a run of six or more ASCII spaces (one
mark bit in eight): for station ids of one or two characters it prints the header cut before
the station id, whichever encoder sent it. The random headers here use station ids of three to
eight characters; ``test_audio`` checks the short ones with an exact bit-window demodulator.
"""

from __future__ import annotations

import csv
import random
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest

from alertstation.eas import kernels
from alertstation.eas.audio import read_wav, render_message, resample
from alertstation.same import EVENTS, ORIGINATORS, SameHeader
from tests.support import SHARED_DATA, pg_required

MULTIMON_RATE = 22050
RATES = [8000, 16000, 22050, 44100, 48000]
HEADERS_PER_RATE = 40  # 200 random headers in all
STATION_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/"
PURGE_MINUTES = [15, 30, 45, 60, *range(90, 99 * 60 + 31, 30)]
SAME_DIR = SHARED_DATA / "same"


def require_tool(name: str) -> str:
    """Return the program's path; skip without it, or fail where test dependencies must exist."""
    path = shutil.which(name)
    if path is None:
        if pg_required():
            pytest.fail(f"{name} is required: run scripts/install-test-deps.sh")
        pytest.skip(f"{name} is not installed")
    return path


def to_multimon_rate(pcm: npt.NDArray[np.int16], rate: int) -> npt.NDArray[np.int16]:
    """Return int16 PCM at 22050 Hz."""
    if rate == MULTIMON_RATE:
        return pcm
    return kernels.to_int16(resample(pcm, rate, MULTIMON_RATE) / 32767.0)


def multimon(pcm: npt.NDArray[np.int16]) -> list[str]:
    """Decode 22050 Hz int16 PCM with multimon-ng and return the lines it prints."""
    program = require_tool("multimon-ng")
    result = subprocess.run(
        [program, "-q", "-a", "EAS", "-t", "raw", "-"],
        input=pcm.astype("<i2").tobytes(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result.stdout.decode("ascii").splitlines()


def random_header(rng: random.Random) -> SameHeader:
    """Return a random valid header: 1-31 locations, a station id of 3-8 characters."""
    locations = tuple(
        f"{rng.randint(0, 9)}{rng.randint(0, 78):02d}{rng.randint(0, 999):03d}"
        for _ in range(rng.choice([1, 1, 2, 3, 5, 10, rng.randint(1, 31), 31]))
    )
    middle = "".join(rng.choice(STATION_CHARS + " ") for _ in range(rng.randint(1, 6)))
    station = rng.choice(STATION_CHARS) + middle + rng.choice(STATION_CHARS)
    minutes = rng.choice(PURGE_MINUTES)
    return SameHeader(
        org=rng.choice(sorted(ORIGINATORS)),
        event=rng.choice(sorted(EVENTS)),
        locations=locations,
        purge=(minutes // 60, minutes % 60),  # type: ignore[arg-type]
        issued=(rng.randint(1, 366), rng.randint(0, 23), rng.randint(0, 59)),  # type: ignore[arg-type]
        station=station,
    )


@dataclass(frozen=True)
class Message:
    """One rendered message and the lines multimon-ng must print for it."""

    pcm: npt.NDArray[np.int16]
    expected: list[str]


def render_case(header: SameHeader, rate: int, index: int) -> Message:
    """Render ``header`` with options that vary with ``index`` (tone, voice, EOM, level)."""
    attention_seconds = 8.0 if index % 5 == 0 else 0.0
    speech = None
    if index % 4 == 1:
        t = np.arange(rate // 2) / rate
        speech = 0.7 * np.sin(2 * np.pi * 440 * t) * np.sin(np.pi * t * 2)
    include_eom = index % 7 != 3
    pcm = render_message(
        header,
        sample_rate=rate,
        attention_seconds=attention_seconds,
        attention="nwr" if index % 10 == 5 else "eas",
        voice=speech,
        include_eom=include_eom,
        level=(0.3, 0.8, 1.0)[index % 3],
    )
    expected = [f"EAS: {header.encode()}"] + ["EAS: NNNN"] * (3 if include_eom else 0)
    return Message(to_multimon_rate(pcm, rate), expected)


@pytest.mark.parametrize("rate", RATES)
def test_random_headers_decode_exactly(rate: int) -> None:
    require_tool("multimon-ng")
    rng = random.Random(f"multimon-{rate}")
    messages = [render_case(random_header(rng), rate, index) for index in range(HEADERS_PER_RATE)]
    lines = multimon(np.concatenate([message.pcm for message in messages]))
    expected = [line for message in messages for line in message.expected]
    assert lines == expected


def shared_headers() -> list[tuple[str, str]]:
    """Return (file, expected header) rows of the shared recordings' index."""
    with (SAME_DIR / "headers.tsv").open(newline="") as handle:
        return [
            (row["file"], row["expected_header"]) for row in csv.DictReader(handle, delimiter="\t")
        ]


REAL_HEADERS = [header for _, header in shared_headers() if header]


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("header", REAL_HEADERS)
def test_real_headers_round_trip(header: str, rate: int) -> None:
    require_tool("multimon-ng")
    assert SameHeader.parse(header).encode() == header  # padding (or its absence) kept
    pcm = render_message(header, sample_rate=rate, attention_seconds=8.0)
    assert multimon(to_multimon_rate(pcm, rate)) == [f"EAS: {header}"] + ["EAS: NNNN"] * 3


@pytest.mark.parametrize(("name", "header"), shared_headers())
def test_the_pipeline_reads_the_real_recordings(name: str, header: str) -> None:
    """Check the resampling and decoding used above against off-air recordings."""
    require_tool("multimon-ng")
    recording = read_wav(SAME_DIR / name)
    pcm = kernels.to_int16(resample(recording.samples, recording.sample_rate, MULTIMON_RATE))
    headers = [line for line in multimon(pcm) if line.startswith("EAS: ZCZC")]
    assert headers == ([f"EAS: {header}"] if header else [])


def test_spoken_voice_does_not_disturb_decoding() -> None:
    require_tool("multimon-ng")
    require_tool("espeak-ng")
    from alertstation.eas.voice import synthesize

    header = "ZCZC-CIV-EVI-036061-036047+0200-0011200-NYCOEM  -"
    rate = 16000
    speech = synthesize("Evacuate immediately. This is not a test.", rate)
    pcm = render_message(header, sample_rate=rate, attention_seconds=8.0, voice=speech)
    assert multimon(to_multimon_rate(pcm, rate)) == [f"EAS: {header}"] + ["EAS: NNNN"] * 3
