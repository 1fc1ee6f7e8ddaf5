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
    rule = (
        "A header or EOM is printed only when two of its bursts were received identically "
        "(47 CFR 11.33(a)(10)) and the header parses."
    )
    parser: argparse.ArgumentParser = eas_sub.add_parser(
        "decode",
        help=summary,
        description=(
            f"{summary} Prints one header per line, in order of appearance. {rule} Exit status: "
            "0 when a header was found, 1 when none was, 2 when a file could not be read."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio file to decode")
    parser.add_argument("--eom", action="store_true", help="also print NNNN for each valid EOM")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per line instead of the text, refused bursts included",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also list on standard error the bursts heard but refused, and why (unvalidated)",
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
    """Return one decoded or refused item as a JSON line."""
    from alertstation.eas.decode import Rejected

    row: dict[str, Any] = {"file": name}
    if isinstance(item, Rejected):
        row |= {
            "kind": "rejected",
            "validated": False,
            "candidate": item.kind,
            "texts": list(item.texts),
            "reason": item.reason,
        }
    else:
        row |= {"kind": item.kind, "validated": True, "text": item.text}
    row |= {
        "start_sample": item.start_sample,
        "end_sample": item.end_sample,
        "sample_rate": sample_rate,
        "start_seconds": round(item.start_sample / sample_rate, 4),
        "end_seconds": round(item.end_sample / sample_rate, 4),
        "bursts": len(item.texts) if row["kind"] == "rejected" else item.bursts,
    }
    return json.dumps(row)


def _as_text(name: str, sample_rate: int, item: Any) -> str:
    """Return a refused group as lines for standard error."""
    start, end = item.start_sample / sample_rate, item.end_sample / sample_rate
    lines = [f"{name}: refused {item.kind} at {start:.2f}-{end:.2f} s (unvalidated): {item.reason}"]
    lines += [f"  burst {i}: {text}" for i, text in enumerate(item.texts, start=1)]
    return "\n".join(lines)


def cmd_decode(args: argparse.Namespace) -> int:
    """Decode every file; print headers (and EOMs with --eom); return the exit status."""
    from alertstation.eas.decode import Rejected, decode_pcm, read_audio

    found = failed = False
    verbose = getattr(args, "verbose", False)
    for name in args.files:
        rejected: list[Rejected] = []
        try:
            samples, rate = read_audio(name)
            items = decode_pcm(samples, rate, on_rejected=rejected.append)
        except (OSError, ValueError) as ex:
            print(f"alertstation: error: {_one_line(os.fspath(name), ex)}", file=sys.stderr)
            failed = True
            continue
        if args.json or verbose:
            everything: list[Any] = sorted([*items, *rejected], key=lambda i: i.start_sample)
        else:
            everything = list(items)
        for item in everything:
            if isinstance(item, Rejected):
                if args.json:
                    print(_as_json(name, rate, item), flush=True)
                else:
                    print(_as_text(name, rate, item), file=sys.stderr, flush=True)
                continue
            if item.kind == "eom" and not args.eom:
                continue
            found = found or item.kind == "header"
            print(_as_json(name, rate, item) if args.json else item.text, flush=True)
    if failed:
        return EXIT_UNREADABLE
    return EXIT_OK if found else EXIT_NOTHING_FOUND
