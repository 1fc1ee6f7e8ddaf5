"""Alert location and filtering settings: pages and saves (JSON or form) with audit rows.

``/admin/location_settings`` edits the broadcast area (``zone_codes``); ``/admin/alert_filtering``
edits the storage area (``storage_zone_codes``) and the SAME events that auto-forward
(``forward_events``). A code list takes UGC zone codes, UGC county codes and SAME ``PSSCCC``
codes (the rule of ``alertstation.alerts.area``). An invalid token is a 422 naming it and
nothing is written; a well-formed UGC code the catalog does not know is saved and reported as a
warning. Every save goes through ``set_alert_settings`` (which re-matches the store when codes
change) and records ``config.updated`` with the changed field names in the same transaction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlencode

import falcon
from sqlalchemy import Connection, select

from alertstation.alerts.area import (
    FORMS,
    SAME,
    check_area,
    describe_area_code,
    read_area_codes,
)
from alertstation.alerts.service import (
    FORWARD_EVENTS,
    STORAGE_ZONE_CODES,
    ZONE_CODES,
    AlertSettings,
    get_alert_settings,
    set_alert_settings,
)
from alertstation.alerts.tables import cap_alerts
from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.bodies import form_or_json
from alertstation.http.form_errors import field_messages
from alertstation.same import EVENTS

LOCATION_SECTION = "location_settings"
FILTERING_SECTION = "alert_filtering"
LOCATION_PATH = "/admin/location_settings"
FILTERING_PATH = "/admin/alert_filtering"
MAX_CODES = 5000
MAX_TEXT = 60_000
_SEPARATORS = re.compile(r"[\s,]+")
_EVENT_ORDER = {code: index for index, code in enumerate(EVENTS)}
# Groups of the forward-event checkboxes: (key, heading).
EVENT_GROUPS: tuple[tuple[str, str], ...] = (
    ("warnings", "Warnings"),
    ("watches", "Watches"),
    ("tests", "Tests"),
    ("other", "Statements, emergencies and other messages"),
)


@dataclass(frozen=True)
class CodeCheck:
    """Hold the outcome of checking a code list: the normalised codes and unknown UGC codes."""

    codes: list[str]
    unknown: list[str] = field(default_factory=list)


def _tokens(value: Any, name: str) -> list[str]:
    """Split a code list sent as text or as a list of strings into stripped tokens."""
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise Invalid(f"{name} is too long ({MAX_TEXT:,} characters at most)", field=name)
        tokens = _SEPARATORS.split(value)
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        tokens = [part for item in value for part in _SEPARATORS.split(item)]
    else:
        raise Invalid(f"{name} must be a list of codes or a text of codes", field=name)
    found = [token.strip() for token in tokens if token.strip()]
    if len(found) > MAX_CODES:
        raise Invalid(f"{name} holds more than {MAX_CODES:,} codes", field=name)
    return found


def check_codes(station: Station, value: Any, name: str) -> CodeCheck:
    """Normalise a code list; 422 naming every invalid token, unknown UGC codes as warnings.

    The rule is ``alertstation.alerts.area``: UGC zone codes (``VA057`` is read as ``VAZ057``),
    UGC county codes and SAME codes. Order is kept and duplicates dropped.
    """
    codes = read_area_codes(_tokens(value, name))
    if codes.invalid:
        listed = ", ".join(codes.invalid)
        raise Invalid(
            f"{name}: not zone or county codes: {listed}. Use {FORMS}.",
            field=name,
            invalid=codes.invalid,
        )
    unknown = [
        code
        for code in codes.valid
        if not SAME.match(code) and describe_area_code(station.zones, code) is None
    ]
    return CodeCheck(codes.valid, unknown)


def check_events(value: Any, name: str = FORWARD_EVENTS) -> list[str]:
    """Return the SAME event codes of a list (or text), in the table's order; 422 for others."""
    tokens = [token.upper() for token in _tokens(value, name)]
    invalid = [token for token in dict.fromkeys(tokens) if token not in EVENTS]
    if invalid:
        raise Invalid(
            f"{name}: not SAME event codes: {', '.join(invalid)}", field=name, invalid=invalid
        )
    return sorted(dict.fromkeys(tokens), key=_EVENT_ORDER.__getitem__)


def event_groups(chosen: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Group the SAME event table for the checkboxes: warnings, watches, tests, other."""
    picked = set(chosen)
    groups: dict[str, list[dict[str, Any]]] = {key: [] for key, _ in EVENT_GROUPS}
    for code, event in EVENTS.items():
        if event.category == "test":
            key = "tests"
        elif event.name.endswith("Warning"):
            key = "warnings"
        elif event.name.endswith("Watch"):
            key = "watches"
        else:
            key = "other"
        groups[key].append({"code": code, "name": event.name, "checked": code in picked})
    return [
        {"key": key, "heading": heading, "events": groups[key]} for key, heading in EVENT_GROUPS
    ]


def _flags(conn: Connection) -> dict[int, tuple[bool, bool]]:
    a = cap_alerts.c
    rows = conn.execute(select(a.id, a.in_area, a.stored_area))
    return {row.id: (bool(row.in_area), bool(row.stored_area)) for row in rows}


@dataclass(frozen=True)
class SaveResult:
    """Hold what a save did: the settings now stored, the changed fields and re-matched alerts."""

    settings: AlertSettings
    changed: list[str]
    rematched: int


def save_settings(
    station: Station, req: falcon.Request, section: str, values: dict[str, Sequence[str]]
) -> SaveResult:
    """Write ``values`` through ``set_alert_settings`` and audit the changed names, atomically."""
    with begin_write(station.engine) as conn:
        current = get_alert_settings(conn)
        codes_sent = any(
            key in values and tuple(values[key]) != getattr(current, key)
            for key in (ZONE_CODES, STORAGE_ZONE_CODES)
        )
        before = _flags(conn) if codes_sent else {}
        try:
            new = set_alert_settings(
                conn,
                zone_codes=values.get(ZONE_CODES),
                storage_zone_codes=values.get(STORAGE_ZONE_CODES),
                forward_events=values.get(FORWARD_EVENTS),
            )
        except ValueError as ex:
            raise Invalid(str(ex)) from ex
        changed = [key for key in values if getattr(new, key) != getattr(current, key)]
        rematched = 0
        if codes_sent:
            after = _flags(conn)
            rematched = sum(1 for key, flags in after.items() if before.get(key) != flags)
        station.ledger.record_config_update(
            conn,
            Actor.from_request(req),
            section,
            changed,
            before={key: getattr(current, key) for key in values},
            after={key: getattr(new, key) for key in values},
        )
    return SaveResult(new, sorted(changed), rematched)


def _status_query(result: SaveResult, unknown: list[str]) -> str:
    query: dict[str, str] = {"saved": ",".join(result.changed) or "-"}
    if unknown:
        query["unknown"] = ",".join(unknown)
    return urlencode(query)


def _query_status(req: falcon.Request) -> dict[str, Any]:
    """Read the status a form save left in the query string (after its redirect)."""
    saved = req.get_param("saved")
    if saved is None:
        return {}
    unknown = read_area_codes(req.get_param("unknown") or "").valid
    names = (ZONE_CODES, STORAGE_ZONE_CODES, FORWARD_EVENTS)
    changed = [name for name in saved.split(",") if name in names]
    return {"saved": changed, "unknown": unknown}


class _SettingsPage:
    """Serve one settings page: GET renders it, POST saves (JSON answer or form redirect)."""

    section = ""
    path = ""
    template = ""
    #: The form's fields and their labels, for errors in words beside them.
    labels: ClassVar[dict[str, str]] = {}

    def __init__(self, station: Station) -> None:
        self._station = station

    def read(self, body: dict[str, Any], as_json: bool) -> tuple[dict[str, Any], list[str]]:
        """Return the values to save and the unknown codes; raise Invalid for a bad body."""
        raise NotImplementedError

    def context(self, settings: AlertSettings, **overrides: Any) -> dict[str, Any]:
        """Return the template values for ``settings``, with submitted text when re-rendering."""
        raise NotImplementedError

    def _render(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        *,
        status: dict[str, Any] | None = None,
        error: Invalid | None = None,
        submitted: dict[str, Any] | None = None,
    ) -> None:
        station = self._station
        with station.engine.connect() as conn:
            settings = get_alert_settings(conn)
        station.templates.page(
            req,
            resp,
            self.template,
            status=status or {},
            error=error,
            errors=field_messages(error, self.labels) if error is not None else {},
            **self.context(settings, **(submitted or {})),
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._render(req, resp, status=_query_status(req))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body, as_json = form_or_json(req)
        try:
            values, unknown = self.read(body, as_json)
        except Invalid as ex:
            if as_json:
                raise
            resp.status = falcon.HTTP_422
            self._render(req, resp, error=ex, submitted=self.submitted(body))
            return
        result = save_settings(self._station, req, self.section, values)
        if not as_json:
            resp.status = falcon.HTTP_303
            resp.location = f"{self.path}?{_status_query(result, unknown)}"
            return
        saved = {key: list(getattr(result.settings, key)) for key in values}
        resp.media = {
            "saved": saved,
            "changed": result.changed,
            "warnings": {"unknown": unknown},
            "rematched": result.rematched,
        }

    def submitted(self, body: dict[str, Any]) -> dict[str, Any]:
        """Return what a refused form sent, to show it again."""
        raise NotImplementedError


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return value if isinstance(value, str) else ""


class LocationSettingsPage(_SettingsPage):
    """GET/POST /admin/location_settings: the broadcast area (``zone_codes``)."""

    section = LOCATION_SECTION
    path = LOCATION_PATH
    template = "alert_location.html"
    labels: ClassVar[dict[str, str]] = {ZONE_CODES: "Zone codes"}

    def read(self, body: dict[str, Any], as_json: bool) -> tuple[dict[str, Any], list[str]]:
        if ZONE_CODES not in body:
            raise Invalid(f"send {ZONE_CODES}: the broadcast area's codes", field=ZONE_CODES)
        check = check_codes(self._station, body[ZONE_CODES], ZONE_CODES)
        return {ZONE_CODES: check.codes}, check.unknown

    def context(self, settings: AlertSettings, **overrides: Any) -> dict[str, Any]:
        return {"zone_codes": overrides.get(ZONE_CODES, ", ".join(settings.zone_codes))}

    def submitted(self, body: dict[str, Any]) -> dict[str, Any]:
        return {ZONE_CODES: _text(body.get(ZONE_CODES))}


class AlertFilteringPage(_SettingsPage):
    """GET/POST /admin/alert_filtering: the storage area and the forwarded SAME events."""

    section = FILTERING_SECTION
    path = FILTERING_PATH
    template = "alert_filtering.html"
    labels: ClassVar[dict[str, str]] = {
        STORAGE_ZONE_CODES: "Storage zone codes",
        FORWARD_EVENTS: "Forwarded events",
    }

    def read(self, body: dict[str, Any], as_json: bool) -> tuple[dict[str, Any], list[str]]:
        values: dict[str, Any] = {}
        unknown: list[str] = []
        if STORAGE_ZONE_CODES in body:
            check = check_codes(self._station, body[STORAGE_ZONE_CODES], STORAGE_ZONE_CODES)
            values[STORAGE_ZONE_CODES] = check.codes
            unknown = check.unknown
        if FORWARD_EVENTS in body:
            values[FORWARD_EVENTS] = check_events(body[FORWARD_EVENTS])
        elif not as_json:
            values[FORWARD_EVENTS] = []  # a form sends no field when no box is ticked
        if not values:
            raise Invalid(
                f"send {STORAGE_ZONE_CODES} and/or {FORWARD_EVENTS}", field=STORAGE_ZONE_CODES
            )
        return values, unknown

    def context(self, settings: AlertSettings, **overrides: Any) -> dict[str, Any]:
        events = overrides.get(FORWARD_EVENTS, settings.forward_events)
        return {
            "storage_zone_codes": overrides.get(
                STORAGE_ZONE_CODES, ", ".join(settings.storage_zone_codes)
            ),
            "event_groups": event_groups(events),
        }

    def submitted(self, body: dict[str, Any]) -> dict[str, Any]:
        events = body.get(FORWARD_EVENTS, [])
        chosen = [events] if isinstance(events, str) else events
        return {
            STORAGE_ZONE_CODES: _text(body.get(STORAGE_ZONE_CODES)),
            FORWARD_EVENTS: [e.upper() for e in chosen if isinstance(e, str)],
        }


class AreaCheck:
    """GET /api/alerts/area/check?codes=...: check an area input by the rule the saves use."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        text = req.get_param("codes") or ""
        resp.media = check_area(self._station.zones, _tokens(text, "codes"))
