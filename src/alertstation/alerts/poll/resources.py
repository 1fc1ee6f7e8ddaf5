"""Poller routes: poll now, import one alert file, manage poll sources, the status page.

Every state-changing action writes its audit row first, in its own write transaction, with
``propagate=True``: when the audit write fails the action does not happen (500
``audit_failed``). Source changes record ``config.updated`` with target ``poller``, the changed
field names, the source's id and name (never its URL, which may hold credentials).
Routes are declared in ``alertstation.alerts.routes``.
"""

from __future__ import annotations

import hashlib
import logging
import os
from typing import Any
from urllib.parse import urlencode

import falcon

from alertstation.alerts.broadcast import BroadcastState
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.ingest import import_messages
from alertstation.alerts.model import ParseProblem
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.poll.poller import poller_for
from alertstation.alerts.poll.sources import (
    SourceConfig,
    SourceError,
    audit_change,
    create_source,
    delete_source,
    get_source,
    list_sources,
    read_config,
    source_as_dict,
    update_source,
)
from alertstation.alerts.service import ImportProblem
from alertstation.alerts.trust import trust_for
from alertstation.audit.actor import Actor
from alertstation.audit.ledger import CONFIG_UPDATED
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import (
    AppError,
    BadRequest,
    NotFound,
    PayloadTooLarge,
    UnsupportedMediaType,
)
from alertstation.http.bodies import form_or_json, json_object
from alertstation.http.errors import wants_html
from alertstation.http.form_errors import field_messages
from alertstation.http.permissions import role_permissions
from alertstation.http.uploads import UploadTooLarge, one_file, read_limited

log = logging.getLogger("alertstation.alerts.poll.poller")

#: Largest alert file ``/admin/import_alert`` takes (a message, or a state's JSON feed).
IMPORT_MAX_BYTES = 4 * 1024 * 1024
#: The route's body limit: the file plus multipart framing.
IMPORT_MAX_BODY = IMPORT_MAX_BYTES + 65536
RAW_TYPES = (
    "application/xml",
    "text/xml",
    "application/cap+xml",
    "application/atom+xml",
    "application/json",
    "application/geo+json",
    "application/octet-stream",
)


class TriggerPoll:
    """POST /admin/trigger_poll: poll every enabled source now; answer per source."""

    def __init__(self, station: Station, broadcast: BroadcastState) -> None:
        self._station = station
        self._broadcast = broadcast

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            station.ledger.record_config_update(conn, actor, "alerts.trigger_poll", [], refuse=True)
        poller = poller_for(station.engine, station.settings, clock=station.clock)
        outcomes = poller.poll_all()
        if any(outcome.stored for outcome in outcomes):
            self._broadcast.clear()
        answer: dict[str, Any] = {
            "polled": len(outcomes),
            "failed": sum(1 for outcome in outcomes if not outcome.ok),
            "stored": sum(outcome.stored for outcome in outcomes),
            "sources": [outcome.as_dict() for outcome in outcomes],
        }
        if not outcomes:
            answer["note"] = "No enabled poll sources; add one under /admin/poller/sources."
        resp.media = answer


def _read_limited(stream: Any, limit: int) -> bytes:
    try:
        return read_limited(stream, limit)
    except UploadTooLarge:
        raise PayloadTooLarge(f"The file is larger than the {limit}-byte limit.") from None


def _upload_name(name: str | None) -> str:
    base = os.path.basename((name or "").replace("\\", "/"))
    clean = "".join(ch for ch in base if ch.isprintable())[:100]
    return clean or "upload"


def read_upload(req: falcon.Request, limit: int = IMPORT_MAX_BYTES) -> tuple[bytes, str]:
    """Return the uploaded file and its name: multipart field ``file`` or a raw XML/JSON body."""
    content_type = (req.content_type or "").split(";")[0].strip().lower()
    if content_type == falcon.MEDIA_MULTIPART:
        data, name = one_file(
            req, lambda part: (_read_limited(part.stream, limit), _upload_name(part.filename))
        )
    elif content_type in RAW_TYPES:
        data, name = _read_limited(req.bounded_stream, limit), "request body"
    else:
        raise UnsupportedMediaType(
            "Send a CAP XML or JSON file as multipart/form-data (field 'file'), or the XML or "
            "JSON itself as the body."
        )
    if not data.strip():
        raise BadRequest("The file is empty.")
    return data, name


def check_alert_file(data: bytes) -> None:
    """Raise BadRequest with the parser's message when no alert at all can be read."""
    try:
        items = parse_any(data)
    except AlertParseError as ex:
        raise BadRequest(f"Not a readable alert file: {ex}", code="malformed_alert") from None
    problems = [item for item in items if isinstance(item, ParseProblem)]
    if not items:
        raise BadRequest("The file holds no alert.", code="malformed_alert")
    if len(problems) == len(items):
        reasons = "; ".join(f"entry {p.position}: {p.reason}" for p in problems[:5])
        raise BadRequest(f"No alert in the file could be read: {reasons}", code="malformed_alert")


class ImportAlert:
    """POST /admin/import_alert: store the alerts of one CAP XML or JSON file, even out of area."""

    def __init__(self, station: Station, broadcast: BroadcastState) -> None:
        self._station = station
        self._broadcast = broadcast

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        data, name = read_upload(req)
        check_alert_file(data)
        actor = Actor.from_request(req)
        details = {
            "fields": ["alerts"],
            "file": name,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        with begin_write(station.engine) as conn:
            station.ledger.record_or_refuse(
                conn,
                actor,
                CONFIG_UPDATED,
                target="alerts.import_alert",
                details=details,
            )
        results = import_messages(
            station.engine,
            data,
            f"upload {name}",
            explicit=True,
            now=station.clock(),
            trust=trust_for(station.settings),
        )
        self._broadcast.clear()
        alerts = [r for r in results if not isinstance(r, ImportProblem)]
        skipped = [r for r in results if isinstance(r, ImportProblem)]
        if wants_html(req):  # the feeds page's form, sent without its script
            stored = sum(1 for r in alerts if r.outcome == "stored")
            query = {"imported": name, "stored": stored, "skipped": len(skipped)}
            resp.status = falcon.HTTP_303
            resp.location = f"{FEEDS_PAGE}?{urlencode(query)}"
            return
        resp.media = {
            "file": name,
            "stored": sum(1 for r in alerts if r.outcome == "stored"),
            "alerts": [
                {
                    "identifier": r.identifier,
                    "outcome": r.outcome,
                    "alert_id": r.alert_id,
                    "state": r.state,
                    "in_area": bool(r.in_area),
                    "area": "in-area" if r.in_area else "out-of-area",
                }
                for r in alerts
            ],
            "skipped": [{"source": p.source, "reason": p.reason} for p in skipped],
        }


def _invalid(ex: SourceError) -> AppError:
    return ex.as_app_error()


class PollSourceCollection:
    """GET /admin/poller/sources (list with health), POST (add a source)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        now = self._station.clock()
        with self._station.engine.connect() as conn:
            rows = list_sources(conn)
        resp.media = {"sources": [source_as_dict(row, now) for row in rows]}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        try:
            config = read_config(json_object(req))
        except SourceError as ex:
            raise _invalid(ex) from None
        actor = Actor.from_request(req)
        now = station.clock()
        with begin_write(station.engine) as conn:
            try:
                source_id = create_source(conn, config, now)
            except SourceError as ex:
                raise _invalid(ex) from None
            changed = [name for name, value in config.columns().items() if value not in ("", None)]
            audit_change(station.ledger, conn, actor, "created", source_id, config.name, changed)
            row = get_source(conn, source_id)
        resp.status = falcon.HTTP_201
        resp.location = f"/admin/poller/sources/{source_id}"
        resp.media = source_as_dict(row, now)


class PollSourceItem:
    """PUT /admin/poller/sources/{id} (change any fields), DELETE (remove the source)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_put(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        resp.media = self._update(req, source_id, json_object(req))

    def on_post(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        """The feed form sent without script: save and go back to the page (303), or show the
        page again with each error beside its field (422)."""
        form, as_json = form_or_json(req)
        if as_json:
            raise UnsupportedMediaType("Send the feed form (urlencoded); the API takes PUT.")
        station = self._station
        with station.engine.connect() as conn:
            stored = source_as_dict(_get(conn, source_id), station.clock())
        try:
            saved = self._update(req, source_id, form_body(form, stored))
        except AppError as ex:
            if ex.status != 422:
                raise
            resp.status = falcon.HTTP_422
            render_feeds_page(station, req, resp, editing=stored, values=form, error=ex)
            return
        resp.status = falcon.HTTP_303
        resp.location = f"{FEEDS_PAGE}?{urlencode({'saved': saved['name']})}#feeds-heading"

    def _update(self, req: falcon.Request, source_id: int, body: dict[str, Any]) -> dict[str, Any]:
        station = self._station
        actor = Actor.from_request(req)
        now = station.clock()
        with begin_write(station.engine) as conn:
            row = _get(conn, source_id)
            try:
                before = SourceConfig.from_row(row)
                config = read_config(body, before)
                changed = update_source(conn, source_id, config, now)
            except SourceError as ex:
                raise _invalid(ex) from None
            audit_change(
                station.ledger,
                conn,
                actor,
                "updated",
                source_id,
                config.name,
                changed,
                before=before,
                after=config,
            )
            row = get_source(conn, source_id)
        return {**source_as_dict(row, now), "changed": changed}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, source_id: int) -> None:
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            row = _get(conn, source_id)
            audit_change(station.ledger, conn, actor, "deleted", source_id, row.name, ["source"])
            delete_source(conn, source_id)
        resp.media = {"deleted": source_id, "name": row.name}


FEEDS_PAGE = "/admin/poller"
#: How the page names each kind of feed.
KIND_LABELS = {
    "cap-xml": "CAP XML or ATOM feed",
    "json-api": "Weather service JSON API",
    "ipaws": "IPAWS feed",
}


#: The feed form's labels, for messages shown by the page itself (the form sent without script).
FEED_LABELS = {
    "name": "Feed name",
    "kind": "Kind of feed",
    "url": "Feed address",
    "area": "States or marine areas",
    "zones": "Zones",
    "interval_seconds": "Poll every (seconds)",
    "connect_timeout": "Connect time limit (seconds)",
    "read_timeout": "Read time limit (seconds)",
    "enabled": "Poll this feed",
}


def _form_number(text: Any) -> Any:
    """A number field of the form: an int or float when it reads as one, else the text as sent
    (the check then names the field)."""
    if not isinstance(text, str):
        return text
    for kind in (int, float):
        try:
            return kind(text.strip())
        except ValueError:
            continue
    return text


def form_body(form: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """The feed form as sent without script → the body the API takes, as the page's script
    builds it: an address left as shown keeps the stored one (and any sign-in in it); states and
    zones belong to the weather service API only; an unticked box is ``enabled: false``."""
    kind = str(form.get("kind", stored["kind"]))
    body: dict[str, Any] = {
        "name": str(form.get("name", "")),
        "kind": kind,
        "enabled": "enabled" in form,
    }
    url = str(form.get("url", "")).strip()
    if url != stored["url"]:
        body["url"] = url
    for name in ("interval_seconds", "connect_timeout", "read_timeout"):
        if str(form.get(name, "")).strip():
            body[name] = _form_number(form[name])
    json_api = kind == "json-api"
    body["area"] = str(form.get("area", "")) if json_api else ""
    body["zones"] = str(form.get("zones", "")) if json_api else ""
    return body


def render_feeds_page(
    station: Station,
    req: falcon.Request,
    resp: falcon.Response,
    *,
    editing: dict[str, Any] | None = None,
    values: dict[str, Any] | None = None,
    error: AppError | None = None,
) -> None:
    """Render the feeds page; ``editing`` fills the form with a feed (``values``: what a refused
    form sent, shown again with ``error``'s messages beside their fields)."""
    now = station.clock()
    with station.engine.connect() as conn:
        feeds = [source_as_dict(row, now) for row in list_sources(conn)]
    form = dict(values) if values is not None else {}
    if editing is not None and values is None:
        form = {
            **{name: editing[name] for name in FEED_LABELS if name not in ("area", "zones")},
            "area": ", ".join(editing["area"]),
            "zones": ", ".join(editing["zones"]),
        }
        if not editing["enabled"]:
            form.pop("enabled")
    station.templates.page(
        req,
        resp,
        "alert_feeds.html",
        feeds=feeds,
        kinds=KIND_LABELS,
        imported=_imported(req),
        saved=req.get_param("saved"),
        import_limit_mib=IMPORT_MAX_BYTES // (1024 * 1024),
        editing=editing,
        form=form,
        errors=field_messages(error, FEED_LABELS) if error is not None else {},
    )


class AlertFeedsPage:
    """GET /admin/poller: the alert feeds with their health, the feed form and CAP import.

    ``?edit=<id>`` opens the form on that feed, so a feed is edited without script too.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        editing = None
        edit_id = req.get_param_as_int("edit", min_value=1)
        user = getattr(req.context, "user", None)
        if edit_id is not None and user and "system.configure" in role_permissions(user.role):
            with station.engine.connect() as conn:
                editing = source_as_dict(_get(conn, edit_id), station.clock())
        render_feeds_page(station, req, resp, editing=editing)


def _imported(req: falcon.Request) -> dict[str, Any] | None:
    """Read what an import sent without script left in the query string (after its redirect)."""
    name = req.get_param("imported")
    if not name:
        return None
    return {
        "file": _upload_name(name),
        "stored": req.get_param_as_int("stored", min_value=0) or 0,
        "skipped": req.get_param_as_int("skipped", min_value=0) or 0,
    }


def _get(conn: Any, source_id: int) -> Any:
    try:
        return get_source(conn, source_id)
    except LookupError:
        raise NotFound(f"No poll source {source_id}.") from None
