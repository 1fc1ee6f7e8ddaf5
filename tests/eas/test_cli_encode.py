"""``alertstation eas encode``: a WAV file out, a one-line error for bad input."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from alertstation.cli import main
from alertstation.eas import voice
from alertstation.eas.audio import read_wav, render_message, write_wav
from tests.support import pg_required

HEADER = "ZCZC-WXR-SVR-018097-018057+0045-1241720-KIND/NWS-"


def encode(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``alertstation eas encode`` in-process; return (status, stdout, stderr)."""
    try:
        status = main(["eas", "encode", *args])
    except SystemExit as ex:  # argparse errors
        status = int(ex.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def pcm_of(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path)) as handle:
        assert handle.getnchannels() == 1 and handle.getsampwidth() == 2
        frames = handle.readframes(handle.getnframes())
        return np.frombuffer(frames, dtype="<i2"), handle.getframerate()


def test_encode_writes_the_rendered_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "alert.wav"
    status, stdout, stderr = encode(["--header", HEADER, "--out", str(out)], capsys)
    assert status == 0, stderr
    line = rf"wrote {re.escape(str(out))}: \d+\.\d\d s at 44100 Hz, {re.escape(HEADER)}\n"
    assert re.fullmatch(line, stdout), stdout
    pcm, rate = pcm_of(out)
    assert rate == 44100
    np.testing.assert_array_equal(pcm, render_message(HEADER))


def test_encode_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nwr.wav"
    args = ["--header", HEADER, "--out", str(out), "--sample-rate", "16000"]
    args += ["--attention-seconds", "10", "--nwr", "--no-eom"]
    status, _, stderr = encode(args, capsys)
    assert status == 0, stderr
    pcm, rate = pcm_of(out)
    assert rate == 16000
    expected = render_message(
        HEADER, sample_rate=16000, attention_seconds=10, attention="nwr", include_eom=False
    )
    np.testing.assert_array_equal(pcm, expected)


def test_encode_with_a_voice_wav(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    speech = (0.3 * np.sin(2 * np.pi * 300 * np.arange(8000) / 8000) * 32767).astype(np.int16)
    voice_path = tmp_path / "voice.wav"
    write_wav(voice_path, speech, 8000)
    out = tmp_path / "alert.wav"
    args = ["--header", HEADER, "--voice-wav", str(voice_path), "--out", str(out)]
    status, _, stderr = encode(args + ["--sample-rate", "8000", "--attention-seconds", "0"], capsys)
    assert status == 0, stderr
    pcm, _ = pcm_of(out)
    expected = render_message(
        HEADER, sample_rate=8000, attention_seconds=0, voice=read_wav(voice_path).samples
    )
    np.testing.assert_array_equal(pcm, expected)


def test_encode_with_spoken_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("espeak-ng") is None:
        if pg_required():
            pytest.fail("espeak-ng is required: run scripts/install-test-deps.sh")
        pytest.skip("espeak-ng is not installed")
    out = tmp_path / "spoken.wav"
    args = ["--header", HEADER, "--voice-text", "A severe thunderstorm warning is in effect."]
    status, _, stderr = encode(args + ["--sample-rate", "22050", "--out", str(out)], capsys)
    assert status == 0, stderr
    pcm, _ = pcm_of(out)
    silent = render_message(HEADER, sample_rate=22050)
    assert pcm.size > silent.size + 22050  # a second of pause and the speech were added


@pytest.mark.parametrize(
    ("header", "field"),
    [
        ("ZCZC-WXR-SVR-018097-01805+0045-1241720-KIND/NWS-", "location code 2:"),
        ("ZCZC-WXR-XXX-018097+0045-1241720-KIND/NWS-", "event:"),
        ("ZCZC-WXR-SVR-018097+0050-1241720-KIND/NWS-", "purge time:"),
        ("ZCZC-WXR-SVR-018097+0045-3671720-KIND/NWS-", "issue time:"),
        ("ZCZC-WXR-SVR-018097+0045-1241720-KIND-NWS-", "station id:"),
        ("ZCZC-ABC-SVR-018097+0045-1241720-KIND/NWS-", "originator:"),
    ],
)
def test_bad_header_is_one_line_naming_the_field(
    header: str, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.wav"
    status, stdout, stderr = encode(["--header", header, "--out", str(out)], capsys)
    assert status == 2 and stdout == ""
    assert stderr.count("\n") == 1
    assert stderr.startswith(f"alertstation: error: bad header: {field}")
    assert not out.exists()


def test_bad_voice_wav(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bogus = tmp_path / "voice.wav"
    bogus.write_bytes(b"not a wav at all")
    out = tmp_path / "never.wav"
    args = ["--header", HEADER, "--voice-wav", str(bogus), "--out", str(out)]
    status, _, stderr = encode(args, capsys)
    assert status == 2 and stderr.count("\n") == 1
    assert "voice.wav: not a WAV file" in stderr
    status, _, stderr = encode(
        ["--header", HEADER, "--voice-wav", str(tmp_path / "missing.wav"), "--out", str(out)],
        capsys,
    )
    assert status == 1 and "cannot read" in stderr and stderr.count("\n") == 1
    assert not out.exists()


def test_missing_espeak_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(voice, "espeak_path", lambda: None)
    args = ["--header", HEADER, "--voice-text", "hello", "--out", str(tmp_path / "x.wav")]
    status, _, stderr = encode(args, capsys)
    assert status == 1
    assert stderr.startswith("alertstation: error: espeak-ng is not installed")


def test_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "no-such-dir" / "x.wav"
    status, _, stderr = encode(["--header", HEADER, "--out", str(out)], capsys)
    assert status == 1 and "cannot write" in stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sample-rate", "96000"], "96000 is outside 8000..48000 Hz"),
        (["--sample-rate", "fast"], "'fast' is not a whole number of Hz"),
        (["--attention-seconds", "5"], "must be 0 (none) or within 8-25 seconds"),
        (["--attention-seconds", "x"], "'x' is not a number of seconds"),
        (["--voice-text", "a", "--voice-wav", "b.wav"], "not allowed with argument"),
    ],
)
def test_argument_errors(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--header", HEADER, "--out", str(tmp_path / "x.wav"), *extra]
    status, _, stderr = encode(args, capsys)
    assert status == 2 and message in stderr and stderr.count("\n") == 1


def test_eas_needs_an_action(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        main(["eas"])
    assert excinfo.value.code == 2
    assert "ACTION" in capsys.readouterr().err


def test_the_installed_command(tmp_path: Path) -> None:
    out = tmp_path / "rwt.wav"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALERTSTATION_")}
    result = subprocess.run(
        [sys.executable, "-m", "alertstation", "eas", "encode", "--header", HEADER]
        + ["--attention-seconds", "0", "--sample-rate", "8000", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}: ")
    assert read_wav(out).sample_rate == 8000
