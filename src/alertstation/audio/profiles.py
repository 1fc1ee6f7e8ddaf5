"""Stream profiles: named encodings (codec, bitrate, sample rate, channels) the archive uses.

A profile is stored in the audio settings (``stream_profiles``); ``archive_profile`` names the
one the rolling archive encodes with. Only encodings this station's ffmpeg can write, at bitrates
the codec really produces, are accepted, so what ffprobe reports of a recording is what the
profile says:

* ``mp3`` (libmp3lame): the MPEG layer III bitrates of the sample rate's MPEG version;
* ``opus`` (libopus, in Ogg): 6..256 kbps, at an Opus input rate (the file always decodes at
  48 kHz, as every Opus stream does).

The decoded PCM the monitor works on keeps the settings' ``sample_rate``; a profile only shapes
what is written to disk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from alertstation.errors import FieldError

MAX_PROFILES: Final[int] = 20
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
_KEYS: Final[tuple[str, ...]] = ("name", "codec", "bitrate_kbps", "sample_rate", "channels")

_MPEG1 = (32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_MPEG2 = (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
_MPEG25 = (8, 16, 24, 32, 40, 48, 56, 64)
_MP3_BITRATES: Final[dict[int, tuple[int, ...]]] = {
    8000: _MPEG25,
    11025: _MPEG25,
    12000: _MPEG25,
    16000: _MPEG2,
    22050: _MPEG2,
    24000: _MPEG2,
    32000: _MPEG1,
    44100: _MPEG1,
    48000: _MPEG1,
}
_OPUS_RATES: Final[tuple[int, ...]] = (8000, 12000, 16000, 24000, 48000)


@dataclass(frozen=True)
class Codec:
    """How ffmpeg writes one codec: encoder, container format, file extension, MIME type."""

    encoder: str
    format: str
    extension: str
    content_type: str


CODECS: Final[dict[str, Codec]] = {
    "mp3": Codec("libmp3lame", "mp3", "mp3", "audio/mpeg"),
    "opus": Codec("libopus", "ogg", "opus", "audio/ogg"),
}
#: Every extension an archive segment can have, with its MIME type.
EXTENSIONS: Final[dict[str, str]] = {c.extension: c.content_type for c in CODECS.values()}


#: A profile is not acceptable; ``field`` names the bad key (``stream_profiles[i].key``).
ProfileError = FieldError


@dataclass(frozen=True)
class StreamProfile:
    """One named encoding."""

    name: str
    codec: str
    bitrate_kbps: int
    sample_rate: int
    channels: int

    @property
    def spec(self) -> Codec:
        """Return how ffmpeg writes this profile's codec."""
        return CODECS[self.codec]

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {key: getattr(self, key) for key in _KEYS}

    def encoder_args(self) -> list[str]:
        """Return the ffmpeg output options of this profile (before the output file)."""
        spec = self.spec
        return [
            "-c:a",
            spec.encoder,
            "-b:a",
            f"{self.bitrate_kbps}k",
            "-ar",
            str(self.sample_rate),
            "-ac",
            str(self.channels),
            "-f",
            spec.format,
        ]


DEFAULT_PROFILES: Final[tuple[StreamProfile, ...]] = (
    StreamProfile("archive-mp3", "mp3", 32, 22050, 1),
)
DEFAULT_ARCHIVE_PROFILE: Final[str] = "archive-mp3"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_profile(body: Any, index: int) -> StreamProfile:
    """Check one profile object; raise :class:`ProfileError` naming the bad key."""
    where = f"stream_profiles[{index}]"
    if not isinstance(body, Mapping):
        raise ProfileError(where, f"{where} must be an object with {', '.join(_KEYS)}")
    unknown = sorted(set(body) - set(_KEYS))
    if unknown:
        raise ProfileError(f"{where}.{unknown[0]}", f"{where}: unknown key {unknown[0]}")
    for key in _KEYS:
        if key not in body:
            raise ProfileError(f"{where}.{key}", f"{where}.{key} is required")
    name = body["name"]
    if not isinstance(name, str) or not _NAME.match(name):
        raise ProfileError(
            f"{where}.name",
            f"{where}.name must be 1 to 40 letters, digits, '.', '_' or '-' (starting with a "
            "letter or digit)",
        )
    codec = body["codec"]
    if codec not in CODECS:
        raise ProfileError(f"{where}.codec", f"{where}.codec must be one of {', '.join(CODECS)}")
    rate = body["sample_rate"]
    rates = tuple(_MP3_BITRATES) if codec == "mp3" else _OPUS_RATES
    if not _whole(rate) or rate not in rates:
        raise ProfileError(
            f"{where}.sample_rate",
            f"{where}.sample_rate for {codec} must be one of {', '.join(map(str, rates))}",
        )
    bitrate = body["bitrate_kbps"]
    if codec == "mp3":
        allowed = _MP3_BITRATES[rate]
        ok = _whole(bitrate) and bitrate in allowed
        what = "one of " + ", ".join(map(str, allowed)) + f" at {rate} Hz"
    else:
        ok = _whole(bitrate) and 6 <= bitrate <= 256
        what = "a whole number from 6 to 256"
    if not ok:
        raise ProfileError(f"{where}.bitrate_kbps", f"{where}.bitrate_kbps must be {what}")
    channels = body["channels"]
    if not _whole(channels) or channels not in (1, 2):
        raise ProfileError(f"{where}.channels", f"{where}.channels must be 1 or 2")
    return StreamProfile(name, codec, bitrate, rate, channels)


def read_profiles(value: Any) -> tuple[StreamProfile, ...]:
    """Check a list of profiles (unique names, at least one); raise naming the bad field."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_PROFILES:
        raise ProfileError(
            "stream_profiles", f"stream_profiles must be a list of 1 to {MAX_PROFILES} profiles"
        )
    profiles = tuple(read_profile(item, index) for index, item in enumerate(value))
    seen: set[str] = set()
    for index, profile in enumerate(profiles):
        key = profile.name.lower()
        if key in seen:
            raise ProfileError(
                f"stream_profiles[{index}].name", f"profile name {profile.name!r} is used twice"
            )
        seen.add(key)
    return profiles
