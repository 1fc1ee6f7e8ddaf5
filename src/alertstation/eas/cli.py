"""The ``alertstation eas`` sub-commands: ``encode``, ``rwt-test`` and ``forward`` here,
``decode`` from decode_cli."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from alertstation.commands import CommandError, Parser
from alertstation.eas.decode.cli import add_decode_command

if TYPE_CHECKING:
    from alertstation.context import Station


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
