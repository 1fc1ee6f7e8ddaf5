"""Audio source and radio receiver routes: CRUD, restart, the stream test and diagnostics.

Every change writes ``config.updated`` (target ``audio``) with the changed field names (and an
edit's old → new values, never a secret's: ``audit.changes``), in the same
write transaction as the change, with ``propagate=True``: when the audit write fails nothing
changes. No answer carries a password or raw authorization header. Routes are declared in
``alertstation.audio.routes``.
"""

from __future__ import annotations

import os
from typing import Any

import falcon
from sqlalchemy import func, select

from alertstation.audio import alerts, archive, cards, received
from alertstation.audio.preflight import PreflightGate, PreflightResult
from alertstation.audio.same_monitor import received_audio
from alertstation.audio.settings import (
    AudioSettingsError,
    get_audio_settings,
    save_audio_settings,
)
from alertstation.audio.sources import (
    SourceConfig,
    SourceError,
    allowlisted_programs,
    audit_change,
    changed_fields,
    check_command,
    create_source,
    delete_source,
    get_source,
    list_sources,
    read_config,
    receiver_format,
    request_restart,
    source_as_dict,
    update_source,
)
from alertstation.audio.tables import received_eas_messages
from alertstation.audit.actor import Actor
from alertstation.audit.ledger import CONFIG_UPDATED
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import AppError, Invalid, NotFound
from alertstation.http.bodies import json_object
from alertstation.http.outbound import OutboundClient, same_host
from alertstation.settings_admin.sections import hardware_settings


def _invalid(ex: SourceError) -> AppError:
    return ex.as_app_error()


class PreflightsBusy(AppError):
    """As many stream preflights as this process allows are running; try again shortly."""

    status = 429
    code = "too_many_preflights"
    retry_after = 5  # seconds, sent as Retry-After


def _checked(gate: PreflightGate, client: OutboundClient, config: SourceConfig) -> PreflightResult:
    result = gate.run(client, config)
    if result is None:
        raise PreflightsBusy(
            f"{gate.limit} stream checks are running already; try again in a few seconds"
        )
    return result


def _get(conn: Any, source_id: int, kind: str | None) -> Any:
    try:
        row = get_source(conn, source_id)
    except LookupError:
        row = None
    if row is None or (kind is not None and row.kind != kind):
        noun = "receiver" if kind == "receiver" else "audio source"
        raise NotFound(f"No {noun} {source_id}.")
    return row


class SourceCollection:
    """GET (list under ``items``) and POST (create, with the preflight) of sources.

    ``kind`` set to ``receiver`` makes it the ``/api/radio/receivers`` collection.
    """

    def __init__(
        self,
        station: Station,
        client: OutboundClient,
        gate: PreflightGate,
        kind: str | None = None,
    ) -> None:
        self._station = station
        self._client = client
        self._gate = gate
        self._kind = kind

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            items = cards.source_views(conn, list_sources(conn, self._kind))
        resp.media = {"items": items}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        body = json_object(req)
        skip = body.get("skip_url_check", False)
        if not isinstance(skip, bool):
            raise Invalid("skip_url_check must be true or false", field="skip_url_check")
        with station.engine.connect() as conn:
            devices = hardware_settings(conn)["capture_devices"]
        try:
            config = read_config(
                body,
                allowlist=station.settings.receiver_allowlist,
                kind=self._kind,
                capture_devices=devices,
            )
        except SourceError as ex:
            raise _invalid(ex) from None
        checked = None
        if config.kind == "stream" and not skip:
            checked = _checked(self._gate, self._client, config)
            if not checked.ok:
                raise Invalid(
                    f"stream check failed: {checked.message}; fix the URL or credentials, or "
                    "send skip_url_check: true to add it anyway",
                    code="preflight_failed",
                    field="url",
                    status=checked.status,
                    upstream_message=checked.message,
                )
        actor = Actor.from_request(req)
        now = station.clock()
        with begin_write(station.engine) as conn:
            try:
                source_id = create_source(conn, config, now)
            except SourceError as ex:
                raise _invalid(ex) from None
            changed = changed_fields(None, config)
            audit_change(
                station.ledger,
                conn,
                actor,
                "created",
                source_id,
                config.name,
                changed,
                command=config.command if config.kind == "receiver" else None,
            )
            row = get_source(conn, source_id)
        resp.status = falcon.HTTP_201
        base = "/api/radio/receivers" if self._kind == "receiver" else "/api/audio/sources"
        resp.location = f"{base}/{source_id}"
        answer = source_as_dict(row)
        if checked is not None:
            answer["preflight"] = checked.as_dict()
        resp.media = answer


class SourceItem:
    """GET, PUT (any fields; a blank password keeps the stored one) and DELETE of one source."""

    def __init__(self, station: Station, kind: str | None = None) -> None:
        self._station = station
        self._kind = kind

    def on_get(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        with self._station.engine.connect() as conn:
            resp.media = source_as_dict(_get(conn, source_id, self._kind))

    def on_put(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        station = self._station
        body = json_object(req)
        actor = Actor.from_request(req)
        now = station.clock()
        with begin_write(station.engine) as conn:
            row = _get(conn, source_id, self._kind)
            before = SourceConfig.from_row(row)
            try:
                config = read_config(
                    body,
                    before,
                    allowlist=station.settings.receiver_allowlist,
                    capture_devices=hardware_settings(conn)["capture_devices"],
                )
                changed = update_source(conn, source_id, config, now)
            except SourceError as ex:
                raise _invalid(ex) from None
            if changed:
                audit_change(
                    station.ledger,
                    conn,
                    actor,
                    "updated",
                    source_id,
                    config.name,
                    changed,
                    command=config.command if "command" in changed else None,
                    before=before,
                    after=config,
                )
            row = get_source(conn, source_id)
        resp.media = {**source_as_dict(row), "changed": changed}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            row = _get(conn, source_id, self._kind)
            audit_change(station.ledger, conn, actor, "deleted", source_id, row.name, ["source"])
            delete_source(conn, source_id)
        resp.media = {"deleted": source_id, "name": row.name}


class SourceRestart:
    """POST .../{id}/restart: ask the monitor to restart a source; clears ``fatal``."""

    def __init__(self, station: Station, kind: str | None = None) -> None:
        self._station = station
        self._kind = kind

    def on_post(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            row = _get(conn, source_id, self._kind)
            audit_change(station.ledger, conn, actor, "restarted", source_id, row.name, ["state"])
            request_restart(conn, source_id, station.clock())
            row = get_source(conn, source_id)
        resp.status = falcon.HTTP_202
        resp.media = source_as_dict(row)


class TestStream:
    """POST /api/audio/sources/test-stream: connect to a stream and report the real status.

    The body is a stream source's ``url`` and ``device_params``; with ``id`` the stored
    credentials of that source fill in what the body leaves blank, and a ``url`` on another
    origin (scheme, host, port) than the stored one is refused: the stored credentials go
    nowhere else.
    """

    def __init__(self, station: Station, client: OutboundClient, gate: PreflightGate) -> None:
        self._station = station
        self._client = client
        self._gate = gate

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        source_id = body.pop("id", None)
        current = None
        if source_id is not None:
            if isinstance(source_id, bool) or not isinstance(source_id, int):
                raise Invalid("id must be a source id", field="id")
            with self._station.engine.connect() as conn:
                current = SourceConfig.from_row(_get(conn, source_id, "stream"))
        extra = sorted(set(body) - {"url", "device_params"})
        if extra:
            raise Invalid(f"unknown field {extra[0]}", field=extra[0])
        if current is None and "url" not in body:
            raise Invalid("url is required", field="url")
        if current is not None and isinstance(body.get("url"), str):
            if not same_host(current.url, body["url"].strip()):
                raise Invalid(
                    "url is on another origin (scheme, host or port) than the stored source's; "
                    "to test another host, send url and its credentials without id",
                    field="url",
                )
        try:
            config = read_config(
                {**body, "name": current.name if current else "test", "kind": "stream"}, current
            )
        except SourceError as ex:
            raise _invalid(ex) from None
        resp.media = _checked(self._gate, self._client, config).as_dict()


def _command_allowed(command: tuple[str, ...], allowlist: tuple[str, ...]) -> bool:
    try:
        check_command(list(command), allowlist)
    except SourceError:
        return False
    return True


class ReceiverDiagnostics:
    """GET /api/radio/receivers/{id}/diagnostics: why a receiver runs or does not."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        with self._station.engine.connect() as conn:
            row = _get(conn, source_id, "receiver")
        config = SourceConfig.from_row(row)
        program = config.command[0] if config.command else ""
        rate, channels = receiver_format(config)
        allowlist = self._station.settings.receiver_allowlist
        resp.media = {
            "id": row.id,
            "name": row.name,
            "state": row.state,
            "error_message": row.error_message,
            "program": program,
            "on_allowlist": program in allowlisted_programs(allowlist),
            "command_allowed": _command_allowed(config.command, allowlist),
            "allowlist": list(allowlist),
            "program_executable": bool(program) and os.access(program, os.X_OK),
            "sample_rate": rate,
            "channels": channels,
            "level_dbfs": row.level_dbfs,
            "last_audio_at": row.last_audio_at.isoformat() if row.last_audio_at else None,
        }


# --- audio alerts -----------------------------------------------------------------------------


class AlertCollection:
    """GET /api/audio/alerts?state=open|resolved|all&limit=&offset=: a page under ``items``."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        state = req.get_param("state") or "open"
        if state not in alerts.STATES:
            raise Invalid(f"state must be one of {', '.join(alerts.STATES)}", field="state")
        limit = req.get_param_as_int("limit", min_value=1, max_value=alerts.MAX_LIMIT)
        offset = req.get_param_as_int("offset", min_value=0) or 0
        limit = limit or alerts.DEFAULT_LIMIT
        with self._station.engine.connect() as conn:
            page = alerts.list_alerts(conn, state, limit, offset)
        resp.media = {
            "items": [alerts.alert_as_dict(row) for row in page.rows],
            "total": page.total,
            "limit": limit,
            "offset": offset,
            "state": state,
        }


class AlertAction:
    """POST /api/audio/alerts/{id}/acknowledge and /resolve (suffixes ``ack`` and ``resolve``)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def _act(self, req: falcon.Request, resp: falcon.Response, alert_id: int, act: str) -> None:
        station = self._station
        actor = Actor.from_request(req)
        now = station.clock()
        with begin_write(station.engine) as conn:
            try:
                alerts.get_alert(conn, alert_id)
            except LookupError:
                raise NotFound(f"No audio alert {alert_id}.") from None
            action = alerts.acknowledge if act == "acknowledged" else alerts.resolve
            changed = action(conn, alert_id, actor.username or "", now)
            if changed:
                station.ledger.record_or_refuse(
                    conn,
                    actor,
                    CONFIG_UPDATED,
                    target="audio_alerts",
                    details={"fields": [f"{act}_at"], "change": act, "alert_id": alert_id},
                )
            row = alerts.get_alert(conn, alert_id)
        resp.media = {**alerts.alert_as_dict(row), "changed": changed}

    def on_post_ack(self, req: falcon.Request, resp: falcon.Response, alert_id: int) -> None:
        self._act(req, resp, alert_id, "acknowledged")

    def on_post_resolve(self, req: falcon.Request, resp: falcon.Response, alert_id: int) -> None:
        self._act(req, resp, alert_id, "resolved")


class ResolveAll:
    """POST /api/audio/alerts/resolve-all: resolve every open alert in one UPDATE."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            count = alerts.resolve_all(conn, actor.username or "", station.clock())
            station.ledger.record_or_refuse(
                conn,
                actor,
                CONFIG_UPDATED,
                target="audio_alerts",
                details={"fields": ["resolved_at"], "change": "resolved_all", "count": count},
            )
        resp.media = {"resolved": count}


# --- received EAS messages --------------------------------------------------------------------


class ReceivedCollection:
    """GET /api/eas/received?limit=&offset=: received SAME messages, newest first."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        limit = req.get_param_as_int("limit", min_value=1, max_value=500) or 50
        offset = req.get_param_as_int("offset", min_value=0) or 0
        c = received_eas_messages.c
        with self._station.engine.connect() as conn:
            total = conn.execute(select(func.count()).select_from(received_eas_messages))
            rows = conn.execute(
                select(received_eas_messages)
                .order_by(c.received_at.desc(), c.id.desc())
                .limit(limit)
                .offset(offset)
            ).all()
            count = int(total.scalar_one())
            items = received.received_view(conn, list(rows))
        resp.media = {
            "items": items,
            "total": count,
            "limit": limit,
            "offset": offset,
        }


class ReceivedAudio:
    """GET /api/eas/received/{id}/audio: the recorded message audio (WAV)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, message_id: int) -> None:
        c = received_eas_messages.c
        with self._station.engine.connect() as conn:
            row = conn.execute(select(c.audio_path).where(c.id == message_id)).first()
        if row is None or not row.audio_path:
            raise NotFound(f"No recorded audio for received message {message_id}.")
        try:
            path = received_audio(self._station.settings.data_dir, row.audio_path)
            data = path.read_bytes()
        except (OSError, ValueError):
            raise NotFound(f"The audio of received message {message_id} is missing.") from None
        resp.content_type = "audio/wav"
        resp.data = data


# --- the rolling archive ----------------------------------------------------------------------


class ArchiveCollection:
    """GET /api/audio/sources/{id}/archive: a source's finished segments, newest first."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        station = self._station
        with station.engine.connect() as conn:
            row = _get(conn, source_id, None)
            settings = get_audio_settings(conn)
        segments = archive.list_segments(station.settings.data_dir, source_id)
        resp.media = {
            "source_id": source_id,
            "archive_enabled": settings.archive_enabled,
            "archive_profile": settings.archive_stream_profile.as_dict(),
            "archive_error": row.archive_error,
            "archive_failures": row.archive_failures,
            "items": [segment.as_dict() for segment in segments],
        }


def _byte_range(wanted: tuple[int, int], size: int, stream: Any) -> tuple[int, int]:
    """Return the inclusive byte range a Range header asks of ``size`` bytes (416 if none)."""
    first, last = wanted
    if first < 0:  # the last -first bytes
        first, last = max(0, size + first), size - 1
    elif last < 0 or last >= size:
        last = size - 1
    if first >= size or first > last:
        stream.close()
        raise falcon.HTTPRangeNotSatisfiable(size)
    return first, last


class _Slice:
    """Read at most ``length`` bytes of an open file (a ranged answer); close closes the file."""

    def __init__(self, stream: Any, length: int) -> None:
        self._stream = stream
        self._left = length

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        size = self._left if size is None or size < 0 else min(size, self._left)
        data = self._stream.read(size)
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._stream.close()


class ArchiveSegment:
    """GET (download) and DELETE of one segment; the name must be one the listing shows.

    GET answers a single byte range (``Range: bytes=...``) with 206, so a player can seek.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def _find(self, source_id: int, name: str) -> tuple[Any, archive.Segment, Any]:
        with self._station.engine.connect() as conn:
            row = _get(conn, source_id, None)
        found = archive.find_segment(self._station.settings.data_dir, source_id, name)
        if found is None:
            raise NotFound(f"No archive segment {name!r} for audio source {source_id}.")
        return row, found[0], found[1]

    def on_get(self, req: falcon.Request, resp: falcon.Response, source_id: int, name: str) -> None:
        _, segment, path = self._find(source_id, name)
        wanted = req.range  # a bad Range header is answered 400 here, before the file opens
        try:
            stream = open(path, "rb")  # noqa: SIM115 - falcon closes the stream
        except OSError:
            raise NotFound(f"Archive segment {name!r} is gone.") from None
        size = os.fstat(stream.fileno()).st_size
        resp.content_type = segment.content_type
        resp.downloadable_as = segment.name
        resp.accept_ranges = "bytes"
        if wanted is None:
            resp.set_stream(stream, size)
            return
        first, last = _byte_range(wanted, size, stream)
        stream.seek(first)
        resp.status = falcon.HTTP_206
        resp.content_range = (first, last, size)
        resp.set_stream(_Slice(stream, last - first + 1), last - first + 1)

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, source_id: int, name: str
    ) -> None:
        station = self._station
        row, segment, path = self._find(source_id, name)
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            station.ledger.record_or_refuse(
                conn,
                actor,
                CONFIG_UPDATED,
                target="audio_archive",
                details={
                    "fields": ["segment"],
                    "change": "deleted",
                    "source_id": source_id,
                    "segment": segment.name,
                },
            )
            try:
                path.unlink()
            except FileNotFoundError:
                raise NotFound(f"Archive segment {name!r} is gone.") from None
        resp.media = {"deleted": segment.name, "source_id": row.id}


# --- settings ---------------------------------------------------------------------------------


class SettingsResource:
    """GET /api/audio/settings; PUT changes any fields (``config.updated``, with values)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = get_audio_settings(conn).as_dict()

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        body = json_object(req)
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            before = get_audio_settings(conn)
            try:
                saved, changed = save_audio_settings(
                    conn, body, by=actor.username, now=station.clock()
                )
            except AudioSettingsError as ex:
                raise ex.as_app_error() from None
            if changed:
                station.ledger.record_config_update(
                    conn,
                    actor,
                    "audio_settings",
                    changed,
                    refuse=True,
                    before=before.as_dict(),
                    after=saved.as_dict(),
                )
        resp.media = {**saved.as_dict(), "changed": changed}


class ReceivedAction:
    """POST /api/eas/received/{id}/forward and /acknowledge (eas.broadcast, audited)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post_forward(self, req: falcon.Request, resp: falcon.Response, message_id: int) -> None:
        resp.media = received.forward(self._station, message_id, Actor.from_request(req))

    def on_post_ack(self, req: falcon.Request, resp: falcon.Response, message_id: int) -> None:
        resp.media = received.acknowledge(self._station, message_id, Actor.from_request(req))


class ReceivedRefused:
    """GET /api/eas/received/refused: headers read exactly but refused under 11.31."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = {"items": received.list_refused(conn)}
