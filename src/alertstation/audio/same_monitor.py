"""The SAME monitor: every source's PCM through the streaming decoder; store, record and relay.

A listener of the audio monitor (:class:`SameMonitor` is called with each PCM chunk of each
source). Each source has its own :class:`~alertstation.eas.decode.SameStreamDecoder`, which
applies the validity rule (two identical bursts, a parseable header; nothing repaired). For each
valid header:

* a ``received_eas_messages`` row is stored at once (source, header, received_at, bursts);
* ``duplicate`` is set when the same message (the header without its station id) was heard,
  from any source, within its purge time;
* the audio after the header bursts is recorded until the EOM (at most two minutes) into
  ``<data dir>/received/<id>.wav``;
* then, when the source relays (its master switch), the message is not a duplicate, not an
  excluded test, and its location codes fall in the station's area, the forwarding rules decide
  (:mod:`alertstation.eas.forward.rules`): ``auto`` airs it as an EAS station relays (the
  station's own header with the same event, codes, purge and issue time, the attention signal,
  the received audio, EOM, through the airing queue; audited ``eas.broadcast`` by ``relay``);
  ``manual`` and ``hold`` put it on the approval queue (:mod:`alertstation.eas.forward.pending`).

A national message (EAN, NPT) that relays is not recorded first: as soon as its header is
decoded, the station's relay is queued with a :class:`~alertstation.eas.airing.live.LiveAudio`
that this monitor feeds with the source's audio as it arrives, :data:`HOLD_BACK_SECONDS` behind
it (so the source's own EOM bursts, recognised only once heard, never reach the air), until the
source's EOM, a new header, or the end of the source's session; no two-minute limit (11.54).

A received EOM alone never airs; it ends the recording. A header read exactly (two identical
bursts) but refused under 47 CFR 11.31 is kept in ``received_eas_refused`` with the reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

import numpy as np
from sqlalchemy import Connection, insert, select, update

from alertstation.alerts.matching import GeocodeMatcher
from alertstation.alerts.service import get_alert_settings
from alertstation.audio.received import store_refused
from alertstation.audio.settings import get_audio_settings
from alertstation.audio.tables import audio_sources, received_eas_messages
from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.airing.live import LiveAudio
from alertstation.eas.audio import write_wav
from alertstation.eas.decode import Decoded, Rejected, RejectedHandler, SameStreamDecoder
from alertstation.eas.forward import pending
from alertstation.eas.forward.config import get_forward_settings
from alertstation.eas.forward.relay import RELAY_ACTOR, air_received, own_header
from alertstation.eas.forward.rulebook import get_rule_book
from alertstation.eas.forward.rules import AUTO, Subject, decide
from alertstation.eas.log import received_kind, record_entry
from alertstation.notifications import feeds
from alertstation.same import NATIONAL_EVENTS, SameHeader, message_key

log = logging.getLogger("alertstation.audio.same")

RECEIVED_DIR: Final[str] = "received"
MAX_AUDIO_SECONDS: Final[float] = 120.0
#: How far a live relay stays behind its source: longer than an EOM takes to be recognised.
HOLD_BACK_SECONDS: Final[float] = 6.0
#: The preamble before a burst's first character, left out of a live relay with the EOM.
PREAMBLE_SECONDS: Final[float] = 0.3
#: Samples kept per source so a recording can start where the header ended (decoding lags).
LOOKBACK_SECONDS: Final[float] = 30.0
#: Events never relayed automatically: the weekly test airs on the station's own schedule.
DEFAULT_EXCLUDED_EVENTS: Final[frozenset[str]] = frozenset({"RWT"})
#: How long the EAS-monitor settings are cached between reads.
SETTINGS_SECONDS: Final[float] = 5.0
#: What the decoder's refusal says of a header whose bursts agreed but which 11.31 refuses.
EXACT_BUT_REFUSED: Final[str] = " identical bursts, but "
_R = received_eas_messages.c


def _source_name(conn: Connection, source_id: int) -> str:
    name = conn.execute(select(audio_sources.c.name).where(audio_sources.c.id == source_id))
    return str(name.scalar() or f"source {source_id}")


@dataclass
class _Recording:
    message_id: int
    header: SameHeader
    start: int  # first sample to keep
    sample_rate: int
    pieces: list[np.ndarray] = field(default_factory=list)
    kept: int = 0
    live: bool = False  # relayed live as it arrived: not relayed again when it ends

    @property
    def limit(self) -> int:
        return round(MAX_AUDIO_SECONDS * self.sample_rate)

    def add(self, samples: np.ndarray, first: int) -> None:
        skip = max(0, self.start - first)
        piece = samples[skip : skip + self.limit - self.kept]
        if piece.size:
            self.pieces.append(piece.copy())
            self.kept += int(piece.size)

    def cut(self, end_sample: int) -> None:
        """Drop what was kept from ``end_sample`` on (the EOM and after)."""
        self.kept = max(0, min(self.kept, end_sample - self.start))
        audio = self.audio()[: self.kept]
        self.pieces = [audio]

    def audio(self) -> np.ndarray:
        if not self.pieces:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(self.pieces)

    @property
    def full(self) -> bool:
        return self.kept >= self.limit


@dataclass
class _LiveRelay:
    message_id: int
    audio: LiveAudio
    released: int  # the source's samples before this one went to the relay


class _SourceState:
    def __init__(self, sample_rate: int, on_rejected: RejectedHandler | None = None) -> None:
        self.decoder = SameStreamDecoder(sample_rate, on_rejected=on_rejected)
        self.recent: deque[tuple[int, np.ndarray]] = deque()
        self.recording: _Recording | None = None
        self.live: _LiveRelay | None = None
        self.offset = 0  # the session's sample at which the decoder started


class SameMonitor:
    """Decode SAME from every source's PCM (an audio-monitor listener)."""

    def __init__(
        self,
        station: Station,
        sample_rate: int,
        *,
        excluded_events: frozenset[str] = DEFAULT_EXCLUDED_EVENTS,
        use_saved_settings: bool = True,
    ) -> None:
        self.station = station
        self.sample_rate = sample_rate
        self.excluded_events = excluded_events
        self._sources: dict[int, _SourceState] = {}
        self._lock = threading.Lock()
        self._enabled = True
        self._settings_until = 0.0 if use_saved_settings else float("inf")

    def enabled(self) -> bool:
        """Tell whether the EAS monitor is on (the saved setting, read every few seconds)."""
        now = time.monotonic()
        if now >= self._settings_until:
            with self.station.engine.connect() as conn:
                saved = get_audio_settings(conn)
            self._enabled = saved.eas_monitor_enabled
            self.excluded_events = frozenset(saved.relay_excluded_events)
            self._settings_until = now + SETTINGS_SECONDS
        return self._enabled

    def __call__(self, source_id: int, samples: np.ndarray, first: int) -> None:
        if not self.enabled():
            stopped = self._sources.pop(source_id, None)
            self._end_live(stopped, None, "the EAS monitor was turned off")
            return
        state = self._sources.get(source_id)
        if state is None or first == 0:
            self._end_live(state, None, "the source restarted")
            if state is not None and state.recording is not None:
                self._finish(source_id, state.recording)
            state = self._sources[source_id] = _SourceState(
                self.sample_rate, lambda rejected: self.refused(source_id, rejected)
            )
            state.offset = first  # the decoder counts from here; the monitor from the session
        self._remember(state, samples, first)
        if state.recording is not None:
            state.recording.add(samples, first)
        for item in state.decoder.feed(samples):
            self._decoded(source_id, state, item)
        if state.live is not None:
            self._release(state, first + samples.size - round(HOLD_BACK_SECONDS * self.sample_rate))
        if state.recording is not None and state.recording.full:
            recording, state.recording = state.recording, None
            self._finish(source_id, recording)

    def _remember(self, state: _SourceState, samples: np.ndarray, first: int) -> None:
        state.recent.append((first, samples.copy()))
        keep_from = first + samples.size - round(LOOKBACK_SECONDS * self.sample_rate)
        while state.recent and state.recent[0][0] + state.recent[0][1].size < keep_from:
            state.recent.popleft()

    def end_session(self, source_id: int) -> None:
        """A source's session ended: its live relay (if any) ends with the audio heard."""
        self._end_live(self._sources.get(source_id), None, "the source ended")

    def close(self) -> None:
        """The monitor stops: every live relay ends with the audio heard."""
        for state in list(self._sources.values()):
            self._end_live(state, None, "the monitor stopped")

    # --- live relay of a national message -------------------------------------------------------

    def _release(self, state: _SourceState, upto: int) -> None:
        """Give the live relay the source's audio from where it stopped up to sample ``upto``."""
        relay = state.live
        if relay is None:
            return
        for first, samples in state.recent:
            end = first + samples.size
            if end <= relay.released:
                continue
            if first >= upto:
                break
            piece = samples[max(relay.released, first) - first : min(upto, end) - first]
            relay.audio.put(piece)
            relay.released = first + (min(upto, end) - first)

    def _end_live(self, state: _SourceState | None, upto: int | None, reason: str) -> None:
        """End a source's live relay: the audio up to ``upto`` (None: all heard) goes first."""
        if state is None or state.live is None:
            return
        last = state.recent[-1][0] + state.recent[-1][1].size if state.recent else 0
        self._release(state, last if upto is None else min(upto, last))
        relay, state.live = state.live, None
        relay.audio.end(reason)
        log.warning(
            "live relay of received message %s ended (%s) after %.1f s",
            relay.message_id,
            reason,
            relay.audio.received_seconds,
        )

    def _start_live(
        self, source_id: int, state: _SourceState, recording: _Recording, start: int
    ) -> None:
        """Relay a national message live from sample ``start`` (its header's end), if it relays."""
        if self.relay_refusal(source_id, recording.message_id, recording.header) is not None:
            return  # noted with the reason when the recording ends
        audio = LiveAudio(self.sample_rate)
        recording.live = True
        state.live = _LiveRelay(recording.message_id, audio, start)
        try:
            self.relay(source_id, recording.message_id, recording.header, None, live=audio)
        except Exception:  # noqa: BLE001 - a relay failure must not stop monitoring
            state.live = None
            log.exception("live relay of received message %s failed", recording.message_id)
            self._note(recording.message_id, "relay failed; see the log")

    def _decoded(self, source_id: int, state: _SourceState, item: Decoded) -> None:
        preamble = round(PREAMBLE_SECONDS * self.sample_rate)
        start, end = state.offset + item.start_sample, state.offset + item.end_sample
        if item.kind == "eom":
            self._end_live(state, start - preamble, "eom")
            if state.recording is not None:
                recording, state.recording = state.recording, None
                recording.cut(start)
                self._finish(source_id, recording)
            return
        self._end_live(state, start - preamble, "a new header")
        if state.recording is not None:  # a new header before the EOM: close the last one
            recording, state.recording = state.recording, None
            self._finish(source_id, recording)
        header = SameHeader.parse(item.text)
        message_id = self.store(source_id, header, item.bursts)
        recording = _Recording(message_id, header, end, self.sample_rate)
        for first, samples in state.recent:
            recording.add(samples, first)
        state.recording = recording
        if header.event in NATIONAL_EVENTS:
            self._start_live(source_id, state, recording, end)

    # --- storage ------------------------------------------------------------------------------

    def refused(self, source_id: int, rejected: Rejected) -> None:
        """Keep a header read exactly (two identical bursts) but refused under 11.31."""
        if rejected.kind != "header" or EXACT_BUT_REFUSED not in rejected.reason:
            return  # bursts that disagree are noise, not a header the station refused
        text, _ = Counter(rejected.texts).most_common(1)[0]
        now = self.station.clock()
        with begin_write(self.station.engine) as conn:
            store_refused(conn, source_id, text, rejected.reason, now)
            feeds.queue_monitor(
                conn,
                source=_source_name(conn, source_id),
                header=text,
                status=feeds.REFUSED,
                reason=rejected.reason,
                received_at=now,
            )
        log.warning("SAME header from source %s refused: %s (%s)", source_id, text, rejected.reason)

    def store(self, source_id: int, header: SameHeader, bursts: int) -> int:
        """Store a received header; mark it duplicate when heard within its purge time."""
        now = self.station.clock()
        key = message_key(header)
        with self._lock, begin_write(self.station.engine) as conn:
            earlier = conn.execute(
                select(_R.id).where(
                    _R.message_key == key, _R.duplicate.is_(False), _R.expires_at > now
                )
            ).first()
            values = {
                "source_id": source_id,
                "header": header.encode(),
                "message_key": key,
                "event_code": header.event,
                "received_at": now,
                "expires_at": now + max(header.purge, timedelta(minutes=15)),
                "bursts": bursts,
                "duplicate": earlier is not None,
            }
            if earlier is not None:
                values["relay"] = f"not relayed: duplicate of received message {earlier.id}"
            row_id = conn.execute(insert(received_eas_messages).values(**values))
            message_id = int(row_id.inserted_primary_key[0])
            record_entry(
                conn,
                received_kind(values["header"]),
                at=now,
                source=f"audio:{source_id}",
                header=values["header"],
                result="duplicate" if earlier is not None else "new",
                details={
                    "bursts": bursts,
                    "received_id": message_id,
                    "duplicate_of": earlier.id if earlier is not None else None,
                },
            )
            feeds.queue_monitor(
                conn,
                source=_source_name(conn, source_id),
                header=header.encode(),
                status=feeds.DUPLICATE if earlier is not None else feeds.VALID,
                reason=values.get("relay"),
                received_at=now,
                bursts=bursts,
                message_id=message_id,
            )
        log.warning(
            "SAME header received from source %s (%s bursts%s): %s",
            source_id,
            bursts,
            ", duplicate" if earlier is not None else "",
            header.encode(),
        )
        return message_id

    def _finish(self, source_id: int, recording: _Recording) -> None:
        audio = recording.audio()
        folder = self.station.settings.data_dir / RECEIVED_DIR
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{recording.message_id}.wav"
        write_wav(folder / name, audio, self.sample_rate)
        with begin_write(self.station.engine) as conn:
            conn.execute(
                update(received_eas_messages)
                .where(_R.id == recording.message_id)
                .values(audio_path=name, audio_seconds=audio.size / self.sample_rate)
            )
        if recording.live:
            return  # relayed live as it arrived
        try:
            self.relay(source_id, recording.message_id, recording.header, audio)
        except Exception:  # noqa: BLE001 - a relay failure must not stop monitoring
            log.exception("relay of received message %s failed", recording.message_id)
            self._note(recording.message_id, "relay failed; see the log")

    # --- relay --------------------------------------------------------------------------------

    def relay_refusal(self, source_id: int, message_id: int, header: SameHeader) -> str | None:
        """Return why a received message must not air, or None when it relays."""
        with self.station.engine.connect() as conn:
            row = conn.execute(select(_R.duplicate).where(_R.id == message_id)).first()
            source = conn.execute(
                select(audio_sources.c.relay_enabled).where(audio_sources.c.id == source_id)
            ).first()
            zone_codes = get_alert_settings(conn).zone_codes
        if row is None or row.duplicate:
            return "duplicate"
        if source is None or not source.relay_enabled:
            return "relay is off for this source"
        if header.event in self.excluded_events and header.event not in NATIONAL_EVENTS:
            return f"event {header.event} is excluded from relay"
        try:
            in_area = GeocodeMatcher(zone_codes).matches(header.locations)
        except ValueError:
            in_area = False
        if not in_area:
            return "no location code in the station's area"
        return None

    def relay(
        self,
        source_id: int,
        message_id: int,
        header: SameHeader,
        audio: Any,
        *,
        live: LiveAudio | None = None,
    ) -> None:
        """Air a received message with the station's own header, as the forwarding rules say.

        A rule of mode ``manual`` or ``hold`` puts it on the approval queue instead. ``live``
        (a national message) is its audio as it arrives, in place of ``audio``.
        """
        reason = self.relay_refusal(source_id, message_id, header)
        if reason is not None:
            self._note(message_id, f"not relayed: {reason}", only_if_empty=True)
            return
        station = self.station
        with station.engine.connect() as conn:
            forward = get_forward_settings(conn)
            book = get_rule_book(conn)
        own = own_header(header, forward)
        source = f"audio:{source_id}"
        decision = decide(book, Subject(header.event, header.org, source, header.locations))
        if decision.mode.mode != AUTO:
            with begin_write(station.engine) as conn:
                now = station.clock()
                item = pending.park(
                    conn,
                    origin="relay",
                    source=source,
                    header=own.encode(),
                    event_code=header.event,
                    decision=decision,
                    now=now,
                    expires_at=pending.valid_until(header, now),
                    received_id=message_id,
                    audio_path=f"{message_id}.wav",
                )
            self._note(
                message_id, f"awaiting approval: {decision.mode.mode} by {decision.rule} ({item})"
            )
            return
        aired_id = air_received(
            station,
            own,
            audio,
            self.sample_rate,
            forward,
            actor=Actor.system(RELAY_ACTOR),
            target=f"received_eas_message:{message_id}",
            details={
                "received_header": header.encode(),
                "source_id": source_id,
                "rule": decision.rule,
                **({"live": True} if live is not None else {}),
            },
            live=live,
        )
        note = f"relayed {'live ' if live is not None else ''}as {own.encode()}"
        with begin_write(station.engine) as conn:
            conn.execute(
                update(received_eas_messages)
                .where(_R.id == message_id)
                .values(relay=note, relay_message_id=aired_id)
            )

    def _note(self, message_id: int, note: str, *, only_if_empty: bool = False) -> None:
        query = update(received_eas_messages).where(_R.id == message_id)
        if only_if_empty:
            query = query.where(_R.relay.is_(None))
        with begin_write(self.station.engine) as conn:
            conn.execute(query.values(relay=note[:500]))


def received_audio(data_dir: Path, name: str) -> Path:
    """Return the path of a received message's WAV (a bare file name; no traversal)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError("bad received audio name")
    return data_dir / RECEIVED_DIR / name
