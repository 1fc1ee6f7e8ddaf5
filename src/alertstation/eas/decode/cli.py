"""The ``alertstation eas decode`` command: print the SAME headers found in audio files."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

EXIT_OK = 0
EXIT_NOTHING_FOUND = 1
EXIT_UNREADABLE = 2


def add_decode_command(eas_sub: argparse._SubParsersAction[Any]) -> None:
    """Register ``decode FILE... [--eom] [--json]`` on the ``eas`` sub-parsers."""
    summary = "Decode SAME headers from audio files (WAV; other formats need ffmpeg)."
    parser: argparse.ArgumentParser = eas_sub.add_parser(
        "decode",
        help=summary,
        description=(
            f"{summary} Prints one header per line, in order of appearance. Exit status: 0 when "
            "a header was found, 1 when none was, 2 when a file could not be read."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio file to decode")
    parser.add_argument("--eom", action="store_true", help="also print NNNN for each EOM burst")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per line instead of the text"
    )
    parser.set_defaults(func=cmd_decode)


def _one_line(name: str, ex: Exception) -> str:
    """Return a single-line description of why ``name`` could not be decoded."""
    if isinstance(ex, OSError):
        message = f"{name}: {ex.strerror or ex}"
    else:
        message = str(ex)
        if not message.startswith(name):
            message = f"{name}: {message}"
    return " ".join(message.split())


def _as_json(name: str, sample_rate: int, item: Any) -> str:
    """Return one decoded item as a JSON line."""
    return json.dumps(
        {
            "file": name,
            "kind": item.kind,
            "text": item.text,
            "start_sample": item.start_sample,
            "end_sample": item.end_sample,
            "sample_rate": sample_rate,
            "start_seconds": round(item.start_sample / sample_rate, 4),
            "end_seconds": round(item.end_sample / sample_rate, 4),
            "bursts": item.bursts,
        }
    )


def cmd_decode(args: argparse.Namespace) -> int:
    """Decode every file; print headers (and EOMs with --eom); return the exit status."""
    from alertstation.eas.decode import decode_pcm, read_audio

    found = failed = False
    for name in args.files:
        try:
            samples, rate = read_audio(name)
            items = decode_pcm(samples, rate)
        except (OSError, ValueError) as ex:
            print(f"alertstation: error: {_one_line(os.fspath(name), ex)}", file=sys.stderr)
            failed = True
            continue
        for item in items:
            if item.kind == "eom" and not args.eom:
                continue
            found = found or item.kind == "header"
            print(_as_json(name, rate, item) if args.json else item.text, flush=True)
    if failed:
        return EXIT_UNREADABLE
    return EXIT_OK if found else EXIT_NOTHING_FOUND
