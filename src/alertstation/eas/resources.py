"""HTTP resources of manual EAS and the message archive (routes in ``alertstation.eas.routes``)."""

from __future__ import annotations

from typing import Any

import falcon
import numpy as np

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.eas import archive, manual
from alertstation.eas.airing import broadcast
from alertstation.eas.airing import queue as airing
from alertstation.errors import BadRequest, Invalid, NotFound
from alertstation.http.bodies import json_object, optional_bool
from alertstation.http.uploads import UploadTooLarge, is_multipart, read_limited
from alertstation.same import EVENTS, ORIGINATORS

_TEXT_FIELDS = ("org", "event", "locations", "purge", "station_id", "voice_text", "archive_only")
QUEUE_PAGE_HISTORY = 10  # finished queue items shown on the manual page
PURGE_CHOICES = ("0015", "0030", "0045", "0100", "0130", "0200", "0300", "0400", "0600")


def read_composition(
    req: falcon.Request, station: Station, fields: dict[str, Any] | None = None
) -> tuple[manual.Composition, np.ndarray | None]:
    """Read an activation from JSON or from a multipart form with an optional ``audio`` WAV.

    ``fields``, when given, receives the body's fields (for ``archive_only``).
    """
    if not is_multipart(req):
        body = json_object(req)
        if fields is not None:
            fields.update(body)
        return manual.compose(body, station.clock()), None
    body: dict[str, Any] = {}
    audio: bytes | None = None
    for part in req.get_media():
        if part.name == "audio":
            if audio is not None:
                raise BadRequest("Send at most one audio file.")
            try:
                data = read_limited(part.stream, manual.MAX_UPLOAD_BYTES)
            except UploadTooLarge:
                raise Invalid("audio: the WAV file is too large", field="audio") from None
            audio = data or None  # an empty file input sends an empty part
        elif part.name in _TEXT_FIELDS:
            body[part.name] = part.get_text()
    if fields is not None:
        fields.update(body)
    composition = manual.compose(body, station.clock())
    return composition, None if audio is None else manual.read_upload(audio)


def optional_body(req: falcon.Request) -> dict[str, Any]:
    """Return the JSON object of an optional body (``{}`` when there is none)."""
    if not req.content_length:
        return {}
    return json_object(req)


def archive_only(body: dict[str, Any]) -> bool:
    """Read ``archive_only`` (JSON boolean, or ``true``/``false`` from a form); default false."""
    value = body.get("archive_only")
    if isinstance(value, str):
        if value not in ("true", "false", ""):
            raise Invalid("archive_only must be true or false", field="archive_only")
        return value == "true"
    return bool(optional_bool(body, "archive_only"))


def read_ids(req: falcon.Request) -> list[int] | None:
    """Read ``{"ids": [..]}`` or ``{"all": true}``; None means all."""
    body = json_object(req)
    if body.get("all") is True:
        return None
    ids = body.get("ids")
    if (
        not isinstance(ids, list)
        or not ids
        or len(ids) > 1000
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)
    ):
        raise Invalid('Send {"ids": [1, 2]} or {"all": true}.', field="ids")
    return ids


def send_wav(resp: falcon.Response, data: bytes, filename: str) -> None:
    """Answer with WAV bytes, not cached (a preview is rendered anew each time)."""
    resp.content_type = "audio/wav"
    resp.data = data
    resp.set_header("Cache-Control", "no-store")
    resp.set_header("Content-Disposition", f'inline; filename="{filename}"')


class ManualPage:
    """GET /eas/manual: compose, preview, send and purge activations; the archive."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        now = self._station.clock()
        with self._station.engine.connect() as conn:
            activations = manual.list_activations(conn)
            messages = archive.list_rows(conn)
            queue = airing.list_items(conn, limit=QUEUE_PAGE_HISTORY)
        for item in activations:  # what a draft would air as, sent now
            item["header_now"] = (
                manual.preview_header(item, now) if item["state"] == "draft" else None
            )
        self._station.templates.page(
            req,
            resp,
            "eas_manual.html",
            now=now,
            activations=activations,
            messages=messages,
            queue=queue,
            originators=ORIGINATORS,
            events=sorted(EVENTS.items()),
            purge_choices=PURGE_CHOICES,
            default_station_id=manual.DEFAULT_STATION_ID,
            default_org=manual.DEFAULT_ORG,
            default_purge=manual.DEFAULT_PURGE,
        )


class Activations:
    """GET /eas/manual/events lists activations; POST creates a draft."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = {"activations": manual.list_activations(conn)}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        composition, audio = read_composition(req, self._station)
        activation = manual.create_activation(
            self._station, composition, audio, Actor.from_request(req)
        )
        resp.status = falcon.HTTP_201
        resp.media = {"activation": activation}


class ActivationAudio:
    """GET /eas/manual/events/{id}/audio.wav: the whole message rendered as of now."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, activation_id: int) -> None:
        with self._station.engine.connect() as conn:
            row = manual.get_activation(conn, activation_id)
        message = manual.render(self._station, row, self._station.clock())
        send_wav(resp, manual.wav_bytes(message), f"activation-{activation_id}.wav")


class ActivationSend:
    """POST /eas/manual/events/{id}/send: queue the activation for airing; audit never blocks."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response, activation_id: int) -> None:
        only = archive_only(optional_body(req))
        message = manual.send_activation(
            self._station, activation_id, Actor.from_request(req), archive_only=only
        )
        resp.media = {"sent": True, "message": message, "queue": message["queue"]}


class ActivationsPurge:
    """POST /eas/manual/events/purge: audit first (fail-closed), then remove activations."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        ids = read_ids(req)
        purged = manual.purge_activations(self._station, ids, Actor.from_request(req))
        resp.media = {"purged": purged}


class ManualGenerate:
    """POST /manual/generate: render a message from the body as WAV; nothing is stored or aired."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        broadcast.check_output(self._station, archive_only=archive_only(body))
        composition = manual.compose(body, self._station.clock())
        row = _Unsaved(composition)
        message = manual.render(self._station, row, self._station.clock())
        send_wav(resp, manual.wav_bytes(message), f"{composition.event}.wav")


class _Unsaved:
    """A composition dressed as an activation row, for rendering without storing."""

    def __init__(self, composition: manual.Composition) -> None:
        self.id = 0
        self.org = composition.org
        self.event = composition.event
        self.locations = composition.locations
        self.purge = composition.purge
        self.station_id = composition.station_id
        self.voice_text = composition.voice_text
        self.has_audio = False


class AdminManualGenerate:
    """POST /admin/eas/manual_generate: create an activation and queue it in one step."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        fields: dict[str, Any] = {}
        composition, audio = read_composition(req, self._station, fields)
        only = archive_only(fields)
        broadcast.check_output(self._station, archive_only=only)  # before a draft is stored
        actor = Actor.from_request(req)
        activation = manual.create_activation(self._station, composition, audio, actor)
        message = manual.send_activation(self._station, activation["id"], actor, archive_only=only)
        resp.status = falcon.HTTP_201
        resp.media = {
            "sent": True,
            "activation_id": activation["id"],
            "message": message,
            "queue": message["queue"],
        }


class AiringQueue:
    """GET /eas/queue: queued and airing messages and the latest finished ones, newest last."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            items = airing.list_items(conn)
        resp.media = {
            "items": items,
            "active": any(i["state"] in airing.ACTIVE_STATES for i in items),
        }
        resp.set_header("Cache-Control", "no-store")


class Messages:
    """GET /messages: the archive of aired messages, newest first."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = {"messages": archive.list_rows(conn)}


class MessageAudio:
    """GET /messages/{id}/audio.wav: the archived WAV exactly as aired."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, message_id: int) -> None:
        with self._station.engine.connect() as conn:
            row = archive.get_row(conn, message_id)
        if row is None:
            raise NotFound(f"No archived message {message_id}.")
        try:
            data = archive.wav_file(self._station.settings.data_dir, row.wav_path).read_bytes()
        except (OSError, ValueError) as ex:
            raise NotFound(f"The audio of message {message_id} is missing.") from ex
        send_wav(resp, data, row.wav_path)


class MessageResend:
    """POST /messages/{id}/resend: queue an archived message to air again."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response, message_id: int) -> None:
        only = archive_only(optional_body(req))
        message = broadcast.resend(
            self._station, message_id, Actor.from_request(req), archive_only=only
        )
        resp.media = {"sent": True, "message": message, "queue": message["queue"]}


class MessageDelete:
    """POST /messages/{id}/delete: audit first (fail-closed), then delete one message."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response, message_id: int) -> None:
        deleted = archive.delete_messages(self._station, [message_id], Actor.from_request(req))
        if not deleted:
            raise NotFound(f"No archived message {message_id}.")
        resp.media = {"deleted": deleted}


class MessagesPurge:
    """POST /messages/purge: audit first (fail-closed), then delete the chosen or all messages."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        deleted = archive.delete_messages(self._station, read_ids(req), Actor.from_request(req))
        resp.media = {"deleted": deleted}


class ActivationConfirmation:
    """GET /eas/manual/events/{id}/confirmation: what sending it would air, for the dialog."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, activation_id: int) -> None:
        resp.media = {"confirmation": manual.confirmation(self._station, activation_id)}
        resp.set_header("Cache-Control", "no-store")


class MessageConfirmation:
    """GET /messages/{id}/confirmation: what resending it would air, and when it first aired."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, message_id: int) -> None:
        resp.media = {"confirmation": broadcast.message_confirmation(self._station, message_id)}
        resp.set_header("Cache-Control", "no-store")
