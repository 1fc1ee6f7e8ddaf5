"""``alertstation eas decode``: headers on stdout, exit 0/1/2, JSON lines, EOMs on request."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from alertstation.cli import build_parser
from alertstation.commands import CommandError
from alertstation.eas.cli import add_decode_command
from tests.support import SHARED_DATA

SAME_DIR = SHARED_DATA / "same"
VALID = sorted((SAME_DIR / "valid").glob("*.wav"))
INVALID = sorted((SAME_DIR / "invalid-8n1").glob("*.wav"))


@pytest.fixture(scope="module")
def expected() -> dict[str, str]:
    """Return {file name: header} for the valid recordings (trailing spaces kept)."""
    if not VALID:
        pytest.skip(f"shared recordings missing: {SAME_DIR}")
    rows = (SAME_DIR / "headers.tsv").read_text().splitlines()[1:]
    pairs = [row.split("\t", 1) for row in rows]
    return {Path(name).name: header for name, header in pairs if name.startswith("valid/")}


def run(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture
def parser() -> argparse.ArgumentParser:
    """Return a bare parser with only ``eas decode`` registered."""
    top = argparse.ArgumentParser(prog="test")
    eas = top.add_subparsers(dest="command").add_parser("eas").add_subparsers(dest="action")
    add_decode_command(eas)
    return top


def test_prints_exactly_the_headers(
    parser: argparse.ArgumentParser, expected: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(parser, ["eas", "decode", *map(str, VALID)]) == 0
    out, err = capsys.readouterr()
    assert len(VALID) > 1  # several files: each line names its file
    assert out == "".join(f"{path}: {expected[path.name]}\n" for path in VALID)
    assert err == ""
    assert run(parser, ["eas", "decode", str(VALID[0])]) == 0
    assert capsys.readouterr().out == f"{expected[VALID[0].name]}\n"  # one file: no name


def test_eom_and_json(
    parser: argparse.ArgumentParser, expected: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = VALID[0]
    assert run(parser, ["eas", "decode", "--eom", str(path)]) == 0
    assert capsys.readouterr().out == f"{expected[path.name]}\nNNNN\n"
    assert run(parser, ["eas", "decode", "--json", "--eom", str(path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["kind"], row["text"], row["validated"]) for row in rows] == [
        ("header", expected[path.name], True),
        ("eom", "NNNN", True),
    ]
    first = rows[0]
    assert first["file"] == str(path) and first["bursts"] == 3
    assert first["start_seconds"] == round(first["start_sample"] / first["sample_rate"], 4)
    assert 0 < first["start_sample"] < first["end_sample"] < rows[1]["start_sample"]


def test_exit_1_when_no_header(
    parser: argparse.ArgumentParser, expected: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(parser, ["eas", "decode", "--eom", *map(str, INVALID)]) == 1
    assert capsys.readouterr() == ("", "")


def test_exit_2_for_unreadable_files_after_decoding_the_others(
    parser: argparse.ArgumentParser,
    expected: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF\0\0\0\0WAVEjunk")
    missing = tmp_path / "missing.wav"
    assert run(parser, ["eas", "decode", str(missing), str(VALID[0]), str(broken)]) == 2
    out, err = capsys.readouterr()
    assert out == f"{VALID[0]}: {expected[VALID[0].name]}\n"
    lines = err.splitlines()
    assert lines == [
        f"alertstation: error: {missing}: No such file or directory",
        f"alertstation: error: {broken}: WAV file has no fmt chunk",
    ]


def test_wired_into_the_alertstation_command() -> None:
    parser = build_parser()
    args = parser.parse_args(["eas", "decode", "--eom", "x.wav"])
    assert args.func.__module__ == "alertstation.eas.cli"
    assert args.files == ["x.wav"] and args.eom and not args.json
    args = parser.parse_args(["eas", "decode", "--text", "--time-zone", "UTC", "x.wav"])
    assert args.text and args.time_zone == "UTC"


def test_end_to_end_python_m_alertstation(expected: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "alertstation", "eas", "decode", *map(str, VALID)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "".join(f"{path}: {expected[path.name]}\n" for path in VALID)
    result = subprocess.run(
        [sys.executable, "-m", "alertstation", "eas", "decode", *map(str, INVALID)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (result.returncode, result.stdout) == (1, "")


@pytest.fixture
def disagreeing(tmp_path: Path) -> Path:
    """Return a WAV whose two header bursts differ in the county code: nothing is valid."""
    from tests.eas.test_decode_files import wav_bytes
    from tests.eas.test_decode_stream import message_of

    first = "ZCZC-WXR-TOR-042133+0300-1241720-KCLE/NWS-"
    signal = message_of(first, first.replace("042133", "002133"), "NNNN", "NNNN")
    path = tmp_path / "weak.wav"
    path.write_bytes(wav_bytes(signal))
    return path


def test_verbose_lists_refused_bursts_with_the_reason(
    parser: argparse.ArgumentParser, disagreeing: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(parser, ["eas", "decode", "--eom", str(disagreeing)]) == 1
    assert capsys.readouterr() == ("NNNN\n", "")
    assert run(parser, ["eas", "decode", "--verbose", str(disagreeing)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"{disagreeing}: refused header at ")
    assert lines[0].endswith(
        "(unvalidated): no two bursts identical: bursts 1 and 2 differ at positions 15"
    )
    assert lines[1:] == [
        "  burst 1: ZCZC-WXR-TOR-042133+0300-1241720-KCLE/NWS-",
        "  burst 2: ZCZC-WXR-TOR-002133+0300-1241720-KCLE/NWS-",
    ]


def test_json_lists_refused_bursts(
    parser: argparse.ArgumentParser, disagreeing: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(parser, ["eas", "decode", "--json", "--eom", str(disagreeing)]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["kind"], row["validated"]) for row in rows] == [
        ("rejected", False),
        ("eom", True),
    ]
    refused = rows[0]
    assert refused["candidate"] == "header" and refused["bursts"] == 2
    assert refused["texts"][1] == "ZCZC-WXR-TOR-002133+0300-1241720-KCLE/NWS-"
    assert refused["reason"].endswith("differ at positions 15")
    assert "text" not in refused


ZERO_PURGE = "ZCZC-WXR-TOR-039137+0000-3330321-WUXT/FM-"
NO_SUCH_DAY = "ZCZC-WXR-TOR-039137+0030-3670321-WUXT/FM-"
TORNADO = "ZCZC-WXR-TOR-039137-039003+0030-3330321-WUXT/FM-"


def _wav(tmp_path: Path, name: str, *texts: str) -> Path:
    from tests.eas.test_decode_files import wav_bytes
    from tests.eas.test_decode_stream import message_of

    path = tmp_path / name
    path.write_bytes(wav_bytes(message_of(*texts)))
    return path


def test_a_header_refused_under_11_31_is_on_stderr_without_verbose(
    parser: argparse.ArgumentParser,
    disagreeing: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    zero = _wav(tmp_path, "zero.wav", ZERO_PURGE, ZERO_PURGE, ZERO_PURGE, "NNNN", "NNNN")
    day = _wav(tmp_path, "day.wav", NO_SUCH_DAY, NO_SUCH_DAY, "NNNN", "NNNN")
    assert run(parser, ["eas", "decode", str(zero), str(day), str(disagreeing)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2, err  # the disagreeing bursts stay behind --verbose
    assert lines[0].startswith(f"{zero}: refused header at ")
    assert lines[0].endswith(
        f"s: {ZERO_PURGE} breaks 47 CFR 11.31: purge time: must be a positive whole number of "
        "minutes, got 0:00:00"
    )
    assert lines[1].startswith(f"{day}: refused header at ")
    assert lines[1].endswith(
        f"s: {NO_SUCH_DAY} breaks 47 CFR 11.31: issue time: Julian day must be 001-366, got 367"
    )
    # A valid header elsewhere: exit 0, and the refusal is still reported.
    valid = _wav(tmp_path, "valid.wav", TORNADO, TORNADO, "NNNN", "NNNN")
    assert run(parser, ["eas", "decode", str(zero), str(valid)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{valid}: {TORNADO}\n"
    assert "breaks 47 CFR 11.31" in err
    assert run(parser, ["eas", "decode", "--json", str(zero)]) == 1
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["kind"], row["refused_header"]) == ("rejected", ZERO_PURGE)
    assert row["rule"].startswith("purge time:")


def test_text_prints_the_plain_language_text(
    parser: argparse.ArgumentParser,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)  # no station: the bundled names
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "no-station"))
    valid = _wav(tmp_path, "valid.wav", TORNADO, TORNADO, "NNNN", "NNNN")
    argv = ["eas", "decode", "--text", "--time-zone", "America/New_York", str(valid)]
    assert run(parser, argv) == 0
    out, _ = capsys.readouterr()
    header, text = out.splitlines()
    assert header == TORNADO
    # Day 333 at 03:21 UTC is 10:21 PM EST the evening before, in any year.
    assert text == (
        "  The National Weather Service has issued a Tornado Warning for Putnam, OH and "
        "Allen, OH beginning at 10:21 PM and ending at 10:51 PM EST. Message from WUXT/FM."
    )
    assert run(parser, ["eas", "decode", "--text", "--json", str(valid)]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["plain"].endswith(
        "beginning at 3:21 AM and ending at 3:51 AM UTC. Message from WUXT/FM."
    )
    with pytest.raises(CommandError, match="time zone"):
        run(parser, ["eas", "decode", "--text", "--time-zone", "Mars/Olympus", str(valid)])
