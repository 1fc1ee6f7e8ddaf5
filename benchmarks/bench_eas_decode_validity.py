"""Never a wrong header: our SAME decoder and multimon-ng on the degraded-audio corpus.

The corpus (``tests/eas/test_decode_validity.py``) is generated in memory from our encoder's
output and the shared off-air recordings: white noise at 20-0 dB SNR with several seeds, MP3
at 16/24/32 kbit/s through ffmpeg, the sender's clock off by ±2 and ±6 %, resampling to 8,
11.025, 16 and 48 kHz, and one header burst of three muted or spliced with another valid
header. Each condition is six reels of 40 trials (encoder messages carry no EOMs here, to
keep the audio short; the recordings keep theirs). Ours decodes each reel at its own rate;
multimon-ng (``-a EAS -t raw``) reads the same int16 samples at 22.05 kHz, the only rate it
reads raw (resampled back by ffmpeg where the condition changed the rate).

Printed: per condition, both decoders' detection rate and wrong-header count. Asserted: we
report no wrong header in at least 5,000 trials, and wherever multimon-ng detects at least
half the messages our detection is not lower.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest

from tests.eas.test_decode_validity import (
    BASE_RATE,
    CONDITIONS,
    Reel,
    Score,
    build_reel,
    resample,
    score_ours,
)

MULTIMON = shutil.which("multimon-ng")
if MULTIMON is None or shutil.which("ffmpeg") is None:
    pytest.skip("multimon-ng and ffmpeg are needed", allow_module_level=True)

PEER = "multimon-ng -a EAS"
TRIALS_PER_REEL = 40
REELS = 6  # per condition, each with its own seed (its own headers, noise and edits)
MIN_TRIALS = 5000
#: Under ``make test`` (benchmarks disabled) one short reel per condition checks the harness;
#: the bounded corpus subset itself runs in tests/eas/test_decode_validity.py.
SMOKE_TRIALS = 4


def score_peer(reel: Reel) -> Score:
    """Run multimon-ng on a reel (at 22.05 kHz); count headers by text (unique in a reel)."""
    assert MULTIMON is not None
    pcm = reel.pcm if reel.rate == BASE_RATE else resample(reel.pcm, reel.rate, BASE_RATE)
    result = subprocess.run(
        [MULTIMON, "-q", "-a", "EAS", "-t", "raw", "-"],
        input=pcm.astype("<i2").tobytes(),
        capture_output=True,
        check=True,
    )
    lines = result.stdout.decode("ascii", "replace").splitlines()
    texts = [line.removeprefix("EAS: ").strip("\r") for line in lines if line.startswith("EAS: ")]
    headers = [text for text in texts if text != "NNNN"]
    sent = set(reel.headers)
    score = Score(trials=len(reel.headers))
    score.detected = sum(header in headers for header in reel.headers)
    score.wrong = [text for text in headers if text not in sent]
    score.duplicates = sum(max(0, headers.count(header) - 1) for header in reel.headers)
    return score


def run_corpus(reels: int, trials: int) -> list[tuple[str, Score, Score]]:
    """Return (condition, ours, peer) for every condition of the corpus."""
    rows = []
    for condition in CONDITIONS:
        ours, peer = Score(), Score()
        for seed in range(reels):
            reel = build_reel(condition, trials, 1000 + seed, eoms=False)
            ours.add(score_ours(reel))
            peer.add(score_peer(reel))
        rows.append((condition.name, ours, peer))
    return rows


def table(rows: list[tuple[str, Score, Score]]) -> list[str]:
    """Return the per-condition comparison as printable lines."""
    head = (
        f"{'condition':22} {'trials':>6} {'ours':>7} {'multimon':>9} "
        f"{'wrong ours':>11} {'wrong peer':>11}"
    )
    lines = ["SAME decoding on the degraded corpus: detection rate and wrong headers", head]
    for name, ours, peer in rows:
        lines.append(
            f"{name:22} {ours.trials:6d} {ours.rate:7.1%} {peer.rate:9.1%} "
            f"{len(ours.wrong):11d} {len(peer.wrong):11d}"
        )
    trials = sum(ours.trials for _, ours, _ in rows)
    wrong = sum(len(ours.wrong) for _, ours, _ in rows)
    peer_wrong = sum(len(peer.wrong) for _, _, peer in rows)
    lines.append(f"{'all':22} {trials:6d} {'':7} {'':9} {wrong:11d} {peer_wrong:11d}")
    return lines


def test_no_wrong_header_against_multimon(
    benchmark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    benchmark.group = "eas.decode validity corpus"
    full = not benchmark.disabled
    size = (REELS, TRIALS_PER_REEL) if full else (1, SMOKE_TRIALS)
    rows = benchmark.pedantic(run_corpus, args=size, rounds=1, iterations=1)
    lines = table(rows)
    if full:
        with capsys.disabled():
            print("\n" + "\n".join(lines))
    benchmark.extra_info["table"] = lines
    assert [(name, ours.wrong) for name, ours, _ in rows if ours.wrong] == []
    assert [(name, ours.duplicates) for name, ours, _ in rows if ours.duplicates] == []
    if not full:
        return
    assert sum(ours.trials for _, ours, _ in rows) >= MIN_TRIALS
    behind = [
        (name, round(ours.rate, 3), round(peer.rate, 3))
        for name, ours, peer in rows
        if peer.rate >= 0.5 and ours.rate < peer.rate
    ]
    assert behind == []
