"""The ``alertstation eas`` sub-commands: ``encode``, ``rwt-test``, ``forward`` and ``decode``.

The decoder (and numpy with it) is imported when ``decode`` runs, not when the command line
is built, so no other command loads it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from alertstation.commands import CommandError, Parser

if TYPE_CHECKING:
    from alertstation.context import Station

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
            f"{summary} Prints one header per line, in order of appearance, after the file's name "
            f"when there are several files. {rule} A header "
            "read exactly but refused under 47 CFR 11.31 (a purge of +0000, an impossible issue "
            "time) is printed on standard error with the rule it broke. Exit status: 0 when a "
            "valid header was found, 1 when none was, 2 when a file could not be read."
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
        "--text",
        action="store_true",
        help="print each header's plain-language text on the line after it "
        '(with --json: a "plain" field)',
    )
    parser.add_argument(
        "--time-zone",
        metavar="ZONE",
        help="IANA time zone of the plain-language text (default: the station's, else UTC)",
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


def _as_json(name: str, sample_rate: int, item: Any, plain: str | None = None) -> str:
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
        if item.refused_header is not None:
            row |= {"refused_header": item.refused_header, "rule": item.rule}
    else:
        row |= {"kind": item.kind, "validated": True, "text": item.text}
        if plain is not None:
            row["plain"] = plain
    row |= {
        "start_sample": item.start_sample,
        "end_sample": item.end_sample,
        "sample_rate": sample_rate,
        "start_seconds": round(item.start_sample / sample_rate, 4),
        "end_seconds": round(item.end_sample / sample_rate, 4),
        "bursts": len(item.texts) if row["kind"] == "rejected" else item.bursts,
    }
    return json.dumps(row)


def _refused_line(name: str, sample_rate: int, item: Any) -> str:
    """Return the stderr line of a header read exactly but refused under 11.31."""
    start, end = item.start_sample / sample_rate, item.end_sample / sample_rate
    return (
        f"{name}: refused header at {start:.2f}-{end:.2f} s: {item.refused_header} "
        f"breaks 47 CFR 11.31: {item.rule}"
    )


def _plain_language(args: argparse.Namespace) -> Any:
    """Return the PlainLanguage the command's --text uses: the station's when it can be read.

    The station's database gives the zone catalog's names and the time zone; without one (no
    settings, a database out of reach or behind its migrations) counties come from the bundled
    snapshot and times are in UTC. ``--time-zone`` overrides the zone either way.
    """
    from datetime import UTC
    from zoneinfo import ZoneInfo

    from sqlalchemy.exc import SQLAlchemyError

    from alertstation.commands import CommandError, open_database
    from alertstation.eas.plain import PlainLanguage
    from alertstation.errors import Invalid
    from alertstation.settings import SettingsError
    from alertstation.settings_admin.sections import check_time_zone, station_time_zone
    from alertstation.zones.catalog import ZoneCatalog
    from alertstation.zones.places import PlaceNames

    chosen = None
    if args.time_zone:
        try:
            chosen = ZoneInfo(check_time_zone(args.time_zone, "--time-zone"))
        except Invalid as ex:
            raise CommandError(str(ex)) from ex
    fallback = "" if chosen else "; times in UTC"
    try:
        _, engine = open_database()
    except (CommandError, SettingsError, SQLAlchemyError, OSError) as ex:
        print(f"alertstation: note: no station database ({_short(ex)}){fallback}", file=sys.stderr)
        return PlainLanguage(PlaceNames(), chosen or UTC)
    try:
        with engine.connect() as conn:
            return PlainLanguage(PlaceNames(ZoneCatalog(engine)), chosen or station_time_zone(conn))
    except SQLAlchemyError as ex:
        print(
            f"alertstation: note: station database unreadable ({_short(ex)}){fallback}",
            file=sys.stderr,
        )
        return PlainLanguage(PlaceNames(), chosen or UTC)
    finally:
        engine.dispose()


def _short(ex: Exception) -> str:
    return " ".join(str(ex).split())[:120] or type(ex).__name__


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
    language = _plain_language(args) if getattr(args, "text", False) else None
    several = len(args.files) > 1
    for name in args.files:
        prefix = f"{os.fspath(name)}: " if several else ""  # as grep does with several files
        rejected: list[Rejected] = []
        try:
            samples, rate = read_audio(name)
            items = decode_pcm(samples, rate, on_rejected=rejected.append)
        except (OSError, ValueError) as ex:
            print(f"alertstation: error: {_one_line(os.fspath(name), ex)}", file=sys.stderr)
            failed = True
            continue
        if not (args.json or verbose):
            rejected = [item for item in rejected if item.refused_header is not None]
        everything: list[Any] = sorted([*items, *rejected], key=lambda i: i.start_sample)
        for item in everything:
            if isinstance(item, Rejected):
                if args.json:
                    print(_as_json(name, rate, item), flush=True)
                elif verbose:
                    print(_as_text(name, rate, item), file=sys.stderr, flush=True)
                else:  # only a header read exactly but refused under 11.31
                    print(_refused_line(name, rate, item), file=sys.stderr, flush=True)
                continue
            if item.kind == "eom" and not args.eom:
                continue
            found = found or item.kind == "header"
            plain = language.text(item.text) if language and item.kind == "header" else None
            if args.json:
                print(_as_json(name, rate, item, plain), flush=True)
            else:
                print(f"{prefix}{item.text}", flush=True)
                if plain:
                    print(f"  {plain}", flush=True)
    if failed:
        return EXIT_UNREADABLE
    return EXIT_OK if found else EXIT_NOTHING_FOUND


def _sample_rate(text: str) -> int:
    from alertstation.eas.audio import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE

    try:
        rate = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of Hz") from None
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise argparse.ArgumentTypeError(
            f"{rate} is outside {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz"
        )
    return rate


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value != 0 and not 8.0 <= value <= 25.0:
        raise argparse.ArgumentTypeError(f"{text} must be 0 (none) or within 8-25 seconds")
    return value


def cmd_eas_encode(args: argparse.Namespace) -> int:
    """Render a SAME message to a 16-bit mono WAV file."""
    from alertstation.eas import voice
    from alertstation.eas.audio import MAX_WAV_BYTES, render_message, write_wav
    from alertstation.same import SameHeader

    try:
        header = SameHeader.parse(args.header)
    except ValueError as ex:
        raise ValueError(f"bad header: {ex}") from None
    speech = None
    if args.voice_text is not None:
        try:
            speech = voice.synthesize(args.voice_text, args.sample_rate)
        except voice.SpeechUnavailable as ex:
            raise CommandError(str(ex)) from ex
    elif args.voice_wav is not None:
        path = Path(args.voice_wav)
        try:
            size = path.stat().st_size
            if size > MAX_WAV_BYTES:
                raise ValueError(f"{path}: {size} bytes; the limit is {MAX_WAV_BYTES} bytes")
            data = path.read_bytes()
        except OSError as ex:
            raise CommandError(f"cannot read {path}: {ex.strerror or ex}") from ex
        try:
            speech = voice.from_wav(data, args.sample_rate)
        except ValueError as ex:
            raise ValueError(f"{path}: {ex}") from None
    pcm = render_message(
        header,
        sample_rate=args.sample_rate,
        attention_seconds=args.attention_seconds,
        voice=speech,
        include_eom=not args.no_eom,
        attention="nwr" if args.nwr else "eas",
    )
    try:
        write_wav(args.out, pcm, args.sample_rate)
    except OSError as ex:
        raise CommandError(f"cannot write {args.out}: {ex.strerror or ex}") from ex
    seconds = pcm.size / args.sample_rate
    print(f"wrote {args.out}: {seconds:.2f} s at {args.sample_rate} Hz, {header.encode()}")
    return 0


def cmd_eas_rwt_test(args: argparse.Namespace) -> int:
    """Air a Required Weekly Test now with the schedule's codes, station id and voice text."""
    from alertstation.audit.actor import Actor
    from alertstation.eas.forward import rwt

    station = args.open_station()
    try:
        with station.engine.connect() as conn:
            schedule, _ = rwt.get_schedule(conn)
        actor = Actor.system("cli")
        result = rwt.air_rwt(station, schedule, aired_by="cli", actor=actor, target="eas_rwt:test")
    finally:
        station.engine.dispose()
    message = result["message"]
    print(f"queued for air: {message['header']} (message {message['id']}, voice {result['voice']})")
    return 0


def cmd_eas_forward(args: argparse.Namespace) -> int:
    """Process the forward queue now; print one line per entry; exit 1 when one failed."""
    from alertstation.eas.forward.service import FAILED, process_queue

    if not args.once:
        raise ValueError("the worker forwards the queue continuously; use --once to do it now")
    station = args.open_station()
    try:
        outcomes = process_queue(station, limit=args.limit)
    finally:
        station.engine.dispose()
    for outcome in outcomes:
        print(outcome.line())
    if not outcomes:
        print("nothing pending")
    return 1 if any(outcome.outcome == FAILED for outcome in outcomes) else 0


def cmd_eas_check_outputs(args: argparse.Namespace) -> int:
    """Check each enabled output once (as the worker does every minute) and store the results.

    Prints one line per output; exit 1 when one is unreachable.
    """
    from alertstation.eas.airing.outputs.health import UNREACHABLE, check_outputs
    from alertstation.http.outbound import OutboundClient

    station = args.open_station()
    client = OutboundClient()
    try:
        checks = check_outputs(station.engine, client=client, clock=station.clock)
    finally:
        client.close()
        station.engine.dispose()
    for check in checks:
        print(f"{check.name} ({check.target}): {check.result}: {check.detail}")
    if not checks:
        print("no audio output is enabled")
    return 1 if any(check.result == UNREACHABLE for check in checks) else 0


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"{value} is outside 1..10000")
    return value


def add_eas_commands(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    open_station: Callable[[], Station],
) -> None:
    """Register the ``eas`` commands on the top-level sub-parsers.

    ``open_station`` returns a Station on the configured database (refused while migrations are
    pending); the application layer builds it, so this package never imports ``alertstation.app``.
    """
    text = "Encode and decode SAME (EAS) messages."
    eas = sub.add_parser("eas", help=text, description=text)
    eas_sub = eas.add_subparsers(dest="eas_command", metavar="ACTION", parser_class=Parser)
    eas_sub.required = True

    text = "Render a SAME message (headers, attention signal, voice, EOMs) to a WAV file."
    encode = eas_sub.add_parser("encode", help=text, description=text)
    encode.set_defaults(func=cmd_eas_encode)
    encode.add_argument(
        "--header",
        required=True,
        help="the header, e.g. 'ZCZC-WXR-TOR-039173+0030-1241720-KCLE/NWS-'",
    )
    spoken = encode.add_mutually_exclusive_group()
    spoken.add_argument("--voice-text", metavar="TEXT", help="speak TEXT with espeak-ng")
    spoken.add_argument("--voice-wav", metavar="FILE", help="a WAV file to use as the voice")
    encode.add_argument(
        "--sample-rate", type=_sample_rate, default=44100, help="8000-48000 Hz (default 44100)"
    )
    encode.add_argument(
        "--attention-seconds",
        type=_seconds,
        default=8.0,
        metavar="S",
        help="attention signal length, 8-25 s, or 0 for none (default 8)",
    )
    encode.add_argument(
        "--nwr", action="store_true", help="send the 1050 Hz weather-radio attention tone"
    )
    encode.add_argument("--no-eom", action="store_true", help="leave out the three EOM bursts")
    encode.add_argument("--out", required=True, metavar="FILE", help="the WAV file to write")

    text = "Air a Required Weekly Test now (the schedule's codes, station id and voice text)."
    rwt_test = eas_sub.add_parser("rwt-test", help=text, description=text)
    rwt_test.set_defaults(func=cmd_eas_rwt_test, open_station=open_station)

    text = "Process the CAP forward queue now: air or skip each pending entry."
    forward = eas_sub.add_parser("forward", help=text, description=text)
    forward.set_defaults(func=cmd_eas_forward, open_station=open_station)
    forward.add_argument(
        "--once", action="store_true", help="process what is pending now, then exit"
    )
    forward.add_argument(
        "--limit", type=_limit, default=100, metavar="N", help="at most N entries (default 100)"
    )

    text = "Check each enabled audio output (Icecast, ALSA) now and store the results."
    check = eas_sub.add_parser("check-outputs", help=text, description=text)
    check.set_defaults(func=cmd_eas_check_outputs, open_station=open_station)

    add_decode_command(eas_sub)
