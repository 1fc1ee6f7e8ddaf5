"""The argument rules of the capture programs a receiver may run: arecord, rtl_fm, ffmpeg, sox.

Each program's arguments are read with its own option rules (GNU getopt for arecord and rtl_fm,
sox's getopt with its files and effects, ffmpeg's single-dash options), then held to a list of
allowed options per program. Whatever the options, the program writes to its standard output
only: no output file, no log, report, PID or statistics file. A device the program captures from
(arecord ``-D``, ffmpeg ``-f alsa -i``, sox ``-t alsa``) must be one of the hardware settings'
capture devices when the caller passes that list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import PurePath

from alertstation.audio.capture.getopt import (
    NONE,
    OPTIONAL,
    REQUIRED,
    OptionError,
    is_option,
    parse,
    table,
    take_option,
)


class CommandError(ValueError):
    """A receiver's arguments are not acceptable; the message says which and why."""


#: A value that is a plain word or number (no path, no URL).
_WORD = re.compile(r"^[A-Za-z0-9_.,:=+-]{1,128}$")
#: A device name of an audio server (PulseAudio source names), never a path.
_SOURCE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:=,@-]{0,254}$")
STDOUT = ("-",)

# --- arecord (alsa-utils aplay.c) -----------------------------------------------------------

ARECORD = table(
    "hnlLD:qt:c:f:r:d:s:MNF:A:R:T:B:vV:IPCim:",
    {
        "help": ("h", NONE),
        "version": ("version", NONE),
        "list-devnames": ("n", NONE),
        "list-devices": ("l", NONE),
        "list-pcms": ("L", NONE),
        "device": ("D", REQUIRED),
        "quiet": ("q", NONE),
        "file-type": ("t", REQUIRED),
        "channels": ("c", REQUIRED),
        "format": ("f", REQUIRED),
        "rate": ("r", REQUIRED),
        "duration": ("d", REQUIRED),
        "samples": ("s", REQUIRED),
        "mmap": ("M", NONE),
        "nonblock": ("N", NONE),
        "period-time": ("F", REQUIRED),
        "period-size": ("period-size", REQUIRED),
        "avail-min": ("A", REQUIRED),
        "start-delay": ("R", REQUIRED),
        "stop-delay": ("T", REQUIRED),
        "buffer-time": ("B", REQUIRED),
        "buffer-size": ("buffer-size", REQUIRED),
        "verbose": ("v", NONE),
        "vumeter": ("V", REQUIRED),
        "separate-channels": ("I", NONE),
        "playback": ("P", NONE),
        "capture": ("C", NONE),
        "disable-resample": ("disable-resample", NONE),
        "disable-channels": ("disable-channels", NONE),
        "disable-format": ("disable-format", NONE),
        "disable-softvol": ("disable-softvol", NONE),
        "test-position": ("test-position", NONE),
        "test-coef": ("test-coef", REQUIRED),
        "test-nowait": ("test-nowait", NONE),
        "max-file-time": ("max-file-time", REQUIRED),
        "process-id-file": ("process-id-file", REQUIRED),
        "use-strftime": ("use-strftime", NONE),
        "interactive": ("i", NONE),
        "dump-hw-params": ("dump-hw-params", NONE),
        "fatal-errors": ("fatal-errors", NONE),
        "chmap": ("m", REQUIRED),
    },
)
ARECORD_ALLOWED = frozenset(
    "D q t c f r d s M N F A R T B C".split()
    + [
        "period-size",
        "buffer-size",
        "disable-resample",
        "disable-channels",
        "disable-format",
        "disable-softvol",
        "fatal-errors",
    ]
)


def arecord_device(args: Sequence[str]) -> str | None:
    """Return the ALSA device arecord's arguments name (the last ``-D``), else None."""
    device = None
    for key, value in parse(args, ARECORD).options:
        if key == "D":
            device = value or ""
    return device


def _arecord(args: Sequence[str], devices: Sequence[str] | None) -> None:
    parsed = parse(args, ARECORD)
    _allowed("arecord", parsed.options, ARECORD_ALLOWED)
    _stdout_only("arecord", parsed.operands)
    for key, value in parsed.options:
        if key == "D":
            _device("arecord", value or "", devices)


# --- rtl_fm (rtl-sdr) -------------------------------------------------------------------------

RTL_FM = table("d:f:g:s:b:l:o:t:r:p:E:F:A:M:D:hT", {})
RTL_FM_ALLOWED = frozenset("d f g s l o t r p E F A M T".split())


def _rtl_fm(args: Sequence[str], devices: Sequence[str] | None) -> None:
    parsed = parse(args, RTL_FM)
    _allowed("rtl_fm", parsed.options, RTL_FM_ALLOWED)
    _stdout_only("rtl_fm", parsed.operands)


# --- ffmpeg -----------------------------------------------------------------------------------

#: Options without a value.
FFMPEG_FLAGS = frozenset({"hide_banner", "nostdin", "nostats", "vn", "sn", "dn", "re"})
#: Options with a value (a plain word or number), by name without a stream specifier.
FFMPEG_VALUES = frozenset(
    {
        "loglevel",
        "v",
        "f",
        "ar",
        "ac",
        "acodec",
        "c",
        "codec",
        "sample_fmt",
        "sample_rate",
        "channels",
        "channel_layout",
        "ch_layout",
        "thread_queue_size",
        "t",
        "ss",
    }
)
FFMPEG_INPUT_FORMATS = frozenset({"alsa", "pulse"})
FFMPEG_OUTPUTS = frozenset({"-", "pipe:", "pipe:1"})
_SPECIFIER = re.compile(r"^[a0-9:]*$")


def _ffmpeg(args: Sequence[str], devices: Sequence[str] | None) -> None:
    """ffmpeg: single-dash options (``-c:a`` carries a stream specifier), ``-i`` inputs."""
    outputs: list[str] = []
    fmt: list[str | None] = [None]  # the last -f not yet taken by an -i
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            outputs.extend(args[index + 1 :])
            break
        if is_option(arg):
            index = _ffmpeg_option(args, index, fmt, devices)
        else:
            outputs.append(arg)
            index += 1
    if len(outputs) != 1 or outputs[0] not in FFMPEG_OUTPUTS:
        raise CommandError(
            "ffmpeg: the output must be standard output (one '-' or 'pipe:1'), not a file"
        )
    if fmt[0] is not None and fmt[0] != "s16le":
        raise CommandError("ffmpeg: the output format must be s16le (raw PCM)")


def _ffmpeg_option(
    args: Sequence[str], index: int, fmt: list[str | None], devices: Sequence[str] | None
) -> int:
    """Check the option at ``args[index]`` (with its value); return the next index."""
    arg = args[index]
    name, _, specifier = arg[1:].partition(":")
    if not _SPECIFIER.match(specifier):
        raise CommandError(f"ffmpeg: stream specifier of {arg!r} is not an audio one")
    if name in FFMPEG_FLAGS:
        return index + 1
    if name != "i" and name not in FFMPEG_VALUES:
        raise CommandError(f"ffmpeg: option {arg!r} is not allowed for a receiver")
    if index + 1 >= len(args):
        raise CommandError(f"ffmpeg: option {arg!r} needs a value")
    value = args[index + 1]
    if name == "i":
        _ffmpeg_input(value, fmt[0], devices)
        fmt[0] = None
    elif not _WORD.match(value):
        raise CommandError(f"ffmpeg: the value of {arg!r} must be a plain word or number")
    elif name == "f":
        fmt[0] = value
    return index + 2


def _ffmpeg_input(value: str, fmt: str | None, devices: Sequence[str] | None) -> None:
    if fmt not in FFMPEG_INPUT_FORMATS:
        raise CommandError(
            "ffmpeg: an input must be a capture device: put -f alsa or -f pulse before -i"
        )
    if fmt == "alsa":
        _device("ffmpeg", value, devices)
    elif not _SOURCE_NAME.match(value) or "//" in value:
        raise CommandError("ffmpeg: a PulseAudio input must be a source name, not a path or URL")


# --- sox --------------------------------------------------------------------------------------

SOX = table(
    "+ab:c:de:fghimnopqr:st:uv:xABC:DGLMNRSTUV::X12348",
    {
        "add-comment": ("add-comment", REQUIRED),
        "buffer": ("buffer", REQUIRED),
        "clobber": ("clobber", NONE),
        "combine": ("combine", REQUIRED),
        "comment-file": ("comment-file", REQUIRED),
        "comment": ("comment", REQUIRED),
        "endian": ("endian", REQUIRED),
        "input-buffer": ("input-buffer", REQUIRED),
        "interactive": ("interactive", NONE),
        "help-effect": ("help-effect", REQUIRED),
        "help-format": ("help-format", REQUIRED),
        "no-glob": ("no-glob", NONE),
        "plot": ("plot", REQUIRED),
        "replay-gain": ("replay-gain", REQUIRED),
        "version": ("version", NONE),
        "output": ("output", REQUIRED),
        "effects-file": ("effects-file", REQUIRED),
        "temp": ("temp", REQUIRED),
        "single-threaded": ("single-threaded", NONE),
        "ignore-length": ("ignore-length", NONE),
        "norm": ("norm", OPTIONAL),
        "magic": ("magic", NONE),
        "play-rate-arg": ("play-rate-arg", REQUIRED),
        "multi-threaded": ("multi-threaded", NONE),
        "no-clobber": ("no-clobber", NONE),
        "guard": ("G", NONE),
        "no-show-progress": ("q", NONE),
        "show-progress": ("S", NONE),
        "type": ("t", REQUIRED),
        "rate": ("r", REQUIRED),
        "reverse-nibbles": ("N", NONE),
        "reverse-bits": ("X", NONE),
        "encoding": ("e", REQUIRED),
        "bits": ("b", REQUIRED),
        "channels": ("c", REQUIRED),
        "compression": ("C", REQUIRED),
        "null": ("n", NONE),
        "no-dither": ("D", NONE),
        "default-device": ("d", NONE),
        "sox-pipe": ("p", NONE),
        "pipe": ("p", NONE),
        "volume": ("v", REQUIRED),
        "help": ("h", NONE),
    },
)
SOX_ALLOWED = frozenset("q S G D V t r e b c L B x d n p v".split() + ["no-glob"])
#: Effects that change sample rate, channels or level: none reads or writes a file.
SOX_EFFECTS = frozenset(
    {
        "rate",
        "channels",
        "remix",
        "gain",
        "vol",
        "highpass",
        "lowpass",
        "bandpass",
        "sinc",
        "dither",
    }
)
#: An effect's argument: a number (``16k``, ``-3``, ``1,2``) or a one-letter flag (``-v``). No
#: effect name has this shape, so an argument can never start another effect.
_EFFECT_ARG = re.compile(r"^(?:[-+]?[0-9.][0-9.,:vdpik%-]*|-[A-Za-z])$")
#: File types that are sound devices, never standard output.
SOX_INPUT_TYPES = frozenset({"alsa", "pulseaudio", "oss", "coreaudio", "waveaudio"})


def _sox(args: Sequence[str], devices: Sequence[str] | None) -> None:
    """sox [options] input... [options] output [effect [argument]...]...; files then effects."""
    files: list[tuple[str | None, str]] = []  # (file type, name) of each file in order
    index = 0
    pending: list[str | None] = [None]  # the file type (-t) the next file takes
    loose = False  # options read since the last file (sox makes a device file of them at the end)
    while index < len(args):
        arg = args[index]
        if is_option(arg):
            before = len(files)
            index = _sox_option(args, index, pending, files)
            loose = len(files) == before
            continue
        if arg in SOX_EFFECTS:
            break  # the effects begin (any other token is read as a file, and held to files)
        files.append((pending[0], arg))
        pending[0], loose = None, False
        index += 1
    if loose:
        raise CommandError("sox: options after the output would name another file; put them first")
    _sox_files(files, devices)
    _sox_effects(args[index:])


def _sox_option(
    args: Sequence[str],
    index: int,
    pending: list[str | None],
    files: list[tuple[str | None, str]],
) -> int:
    options: list[tuple[str, str | None]] = []
    index = take_option(args, index, SOX, options)
    _allowed("sox", options, SOX_ALLOWED)
    for key, value in options:
        if value is not None and not _WORD.match(value):
            raise CommandError(f"sox: the value of -{key} must be a plain word")
        if key == "t":
            pending[0] = value
        elif key in ("d", "n", "p"):
            files.append((key, "-"))  # a file of its own: default device, null, pipe
            pending[0] = None
    return index


def _sox_files(files: list[tuple[str | None, str]], devices: Sequence[str] | None) -> None:
    if len(files) < 2:
        raise CommandError("sox: name an input (-d, or -t alsa DEVICE) and the output '-'")
    *inputs, output = files
    if output[1] != "-" or output[0] in ("d", "n") or output[0] in SOX_INPUT_TYPES:
        raise CommandError("sox: the output must be standard output ('-' or -p), not a file")
    for kind, name in inputs:
        if kind in ("d", "n"):
            continue
        if kind != "alsa":
            raise CommandError(
                "sox: an input must be a capture device (-d or -t alsa DEVICE), not a file"
            )
        _device("sox", name, devices)


def _sox_effects(effects: Sequence[str]) -> None:
    for arg in effects:
        if arg in SOX_EFFECTS or _EFFECT_ARG.match(arg):
            continue
        raise CommandError(
            f"sox: {arg!r} is not an allowed effect ({', '.join(sorted(SOX_EFFECTS))}) or a "
            "numeric effect argument"
        )


# --- shared rules -----------------------------------------------------------------------------


def _allowed(program: str, options: list[tuple[str, str | None]], allowed: frozenset[str]) -> None:
    for key, _ in options:
        if key not in allowed:
            shown = f"-{key}" if len(key) == 1 else f"--{key}"
            raise CommandError(f"{program}: option {shown} is not allowed for a receiver")


def _stdout_only(program: str, operands: Sequence[str]) -> None:
    if operands and list(operands) != list(STDOUT):
        raise CommandError(
            f"{program}: the output must be standard output (no file name, or '-'); "
            f"refused {operands[0]!r}"
        )


def _device(program: str, device: str, devices: Sequence[str] | None) -> None:
    if devices is None or device in devices:
        return
    configured = ", ".join(devices) if devices else "none yet"
    raise CommandError(
        f"{program}: capture device {device!r} is not one of the capture devices in the "
        f"hardware settings (configured: {configured}); an admin adds it there first"
    )


CHECKS: dict[str, Callable[[Sequence[str], Sequence[str] | None], None]] = {
    "arecord": _arecord,
    "rtl_fm": _rtl_fm,
    "ffmpeg": _ffmpeg,
    "sox": _sox,
}


def known_program(path: str) -> str | None:
    """Return the capture program a path runs (``arecord``, ``rtl_fm``, ...), else None."""
    name = PurePath(path).name
    return name if name in CHECKS else None


def check_arguments(
    program: str, args: Sequence[str], capture_devices: Sequence[str] | None = None
) -> None:
    """Raise CommandError unless ``args`` are acceptable for the capture program ``program``.

    ``capture_devices`` None skips the device check (the other rules still hold).
    """
    try:
        CHECKS[program](args, capture_devices)
    except OptionError as ex:
        raise CommandError(f"{program}: {ex}") from None
