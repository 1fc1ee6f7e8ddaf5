"""HTTP resources of the operations settings page and its API.

Every save records ``config.updated`` in the same transaction with the changed field names and
the old → new values of those that are not secrets, so secrets (the ENDEC password, the monitor
token, the private key) appear as names at most.
Responses carry ``<name>_set`` flags in place of secret values.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final
from zoneinfo import available_timezones

import falcon

from alertstation.audit.actor import Actor
from alertstation.auth.policy import PasswordPolicy, check_min_length, load_policy, save_policy
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.airing import relays
from alertstation.eas.forward import rwt
from alertstation.errors import BadRequest, Invalid, ServiceUnavailable
from alertstation.http.bodies import check_bool, json_object
from alertstation.http.uploads import UploadTooLarge, read_limited, require_multipart
from alertstation.operations import certificate as tls
from alertstation.operations.pages import NoStorePage
from alertstation.operations.speech import PREVIEW_TEXT, SpeechUnavailable, render_preview
from alertstation.operations.speech import list_voices as espeak_voices
from alertstation.settings import process_environment
from alertstation.settings_admin import sections as store
from alertstation.settings_admin.service import describe_variables
from alertstation.traffic.settings import load_settings as load_traffic_settings
from alertstation.traffic.settings import save_settings as save_traffic_settings

log = logging.getLogger(__name__)

POLICY_FIELDS: Final[tuple[str, ...]] = ("password_min_length", "password_refuse_username")
#: The application section shows and saves the traffic package's own retention under this name.
TRAFFIC_RETENTION: Final[str] = "traffic_retention_days"
APPLICATION_EXTRA: Final[tuple[str, ...]] = (*POLICY_FIELDS, TRAFFIC_RETENTION)
CERT_PARTS: Final[tuple[str, ...]] = ("certificate", "private_key")
ALSA_PCM: Final[Path] = Path("/proc/asound/pcm")


def _is_admin(req: falcon.Request) -> bool:
    """Tell whether the caller has the admin role (admin-only fields need it)."""
    return str(getattr(getattr(req.context, "user", None), "role", "")) == "admin"


def audit_section(name: str) -> str:
    """Return the audit target of a settings section."""
    return f"settings.{name}"


def capture_devices_found(pcm: Path = ALSA_PCM) -> list[str]:
    """Return the ALSA capture devices this machine has, as ``hw:CARD,DEV`` names."""
    try:
        lines = pcm.read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        ids, _, rest = line.partition(":")
        if "capture" in rest and "-" in ids:
            card, _, device = ids.strip().partition("-")
            found.append(f"hw:{int(card)},{int(device)}")
    return found


def _policy_dict(policy: PasswordPolicy) -> dict[str, Any]:
    return {
        "password_min_length": policy.min_length,
        "password_refuse_username": policy.refuse_username,
    }


def _snapshot(conn: Any, spec: store.Section, *, with_extra: bool) -> dict[str, Any]:
    """Return one section's values as shown (secrets as ``*_set``), for the audit's diff."""
    shown = store.load(conn, spec).public()
    if with_extra:
        shown.update(_policy_dict(load_policy(conn)))
        shown[TRAFFIC_RETENTION] = load_traffic_settings(conn).retention_days
    return shown


def settings_snapshot(station: Station) -> dict[str, Any]:
    """Return every section as the page and the API show it (secrets as ``*_set`` flags)."""
    with station.engine.connect() as conn:
        sections = {name: store.load(conn, s).public() for name, s in store.SECTIONS.items()}
        sections["application"].update(_policy_dict(load_policy(conn)))
        sections["application"][TRAFFIC_RETENTION] = load_traffic_settings(conn).retention_days
    info = tls.installed_info(station.settings.data_dir)
    status = tls.certificate_status(station.settings.data_dir, station.clock())
    sections["certificate"] = {
        "installed": info.as_dict() if info else None,
        "status": status.as_dict() if status else None,
    }
    return sections


#: The regions of the IANA names the time-zone picker lists (legacy aliases are left out).
TIME_ZONE_REGIONS = (
    "America",
    "Pacific",
    "Atlantic",
    "Europe",
    "Africa",
    "Asia",
    "Australia",
    "Indian",
    "Antarctica",
    "Arctic",
)


def time_zone_groups(names: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Return the time-zone picker's groups: (region, its zone names), then ``UTC`` alone."""
    by_region: dict[str, list[str]] = {region: [] for region in TIME_ZONE_REGIONS}
    for name in sorted(names):
        region = name.split("/", 1)[0]
        if region in by_region and "/" in name:
            by_region[region].append(name)
    groups = [(region, zones) for region, zones in by_region.items() if zones]
    return [*groups, ("Universal", ["UTC"])]


class SettingsPage(NoStorePage):
    """GET /admin/settings: every operations settings section on one page."""

    template = "operations_settings.html"

    def context(self, req: falcon.Request) -> dict[str, Any]:
        return {
            "sections": settings_snapshot(self._station),
            "voices": espeak_voices(),
            "capture_found": capture_devices_found(),
            "time_zone_groups": time_zone_groups(available_timezones()),
            "is_admin": _is_admin(req),
        }


class SettingsCollection:
    """GET /api/settings: every section as JSON (secrets as ``*_set`` flags)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.set_header("Cache-Control", "no-store")
        resp.media = {"sections": settings_snapshot(self._station)}


def _policy_from(body: dict[str, Any], current: PasswordPolicy) -> PasswordPolicy:
    min_length = body.get("password_min_length", current.min_length)
    try:
        min_length = check_min_length(min_length)
    except ValueError as ex:
        raise Invalid(str(ex), field="password_min_length") from ex
    refuse = body.get("password_refuse_username", current.refuse_username)
    return PasswordPolicy(min_length, check_bool(refuse, "password_refuse_username"))


class SettingsSection:
    """PUT /api/settings/{section}: save one section, audited with names and non-secret values."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_put(self, req: falcon.Request, resp: falcon.Response, section: str) -> None:
        spec = store.section_named(section)
        body = json_object(req)
        station = self._station
        actor = Actor.from_request(req)
        extra = APPLICATION_EXTRA if spec is store.APPLICATION else ()
        now = station.clock()
        with begin_write(station.engine) as conn:
            before = _snapshot(conn, spec, with_extra=bool(extra))
            changed: list[str] = []
            policy = None
            traffic_days = None
            if extra:
                store.check_body(spec, body, extra=extra)
                policy = _policy_from(body, load_policy(conn))
                if TRAFFIC_RETENTION in body:
                    traffic_days = store.RETENTION_DAYS(body[TRAFFIC_RETENTION], TRAFFIC_RETENTION)
            values, section_changed = store.save(
                conn,
                spec,
                {k: v for k, v in body.items() if k not in extra},
                updated_by=actor.username,
                now=now,
                is_admin=_is_admin(req),
            )
            changed += section_changed
            if store.TIME_ZONE_FIELD in section_changed and spec is store.APPLICATION:
                rwt.rebase_slots(conn, now)  # a new zone never airs a weekly test already past
            if policy is not None:
                changed += save_policy(conn, policy, now)
            if traffic_days is not None:
                # One value: the traffic package's own retention, saved through its service.
                _, traffic_changed = save_traffic_settings(
                    conn, {"retention_days": traffic_days}, now
                )
                changed += [TRAFFIC_RETENTION] if traffic_changed else []
            changed.sort()
            station.ledger.record_config_update(
                conn,
                actor,
                audit_section(spec.name),
                changed,
                before=before,
                after=_snapshot(conn, spec, with_extra=bool(extra)),
            )
            traffic = load_traffic_settings(conn) if extra else None
        shown = values.public()
        if policy is not None:
            shown.update(_policy_dict(policy))
        if traffic is not None:
            shown[TRAFFIC_RETENTION] = traffic.retention_days
        resp.set_header("Cache-Control", "no-store")
        resp.media = {"section": spec.name, "settings": shown, "changed": changed}


class RelayTest:
    """POST /api/settings/hardware/test-relay: close one configured relay briefly."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        pin = body.get("pin")
        seconds = body.get("seconds", 0.5)
        with self._station.engine.connect() as conn:
            hardware = store.hardware_settings(conn)
        if isinstance(pin, bool) or pin not in hardware["relay_pins"]:
            raise Invalid("pin: choose one of the saved relay pins", field="pin")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise Invalid("seconds must be a number", field="seconds")
        if not 0 < seconds <= relays.MAX_PULSE_SECONDS:
            raise Invalid(
                f"seconds must be more than 0 and at most {relays.MAX_PULSE_SECONDS}",
                field="seconds",
            )
        try:
            relays.pulse_relay(
                relays.open_gpio(),
                pin,
                active_high=hardware["relay_active_high"],
                seconds=float(seconds),
            )
        except relays.GpioUnavailable as ex:
            raise ServiceUnavailable(str(ex), code="gpio_unavailable") from ex
        log.info(
            "relay test pulse",
            extra={"pin": pin, "seconds": seconds, "user": Actor.from_request(req).username},
        )
        resp.media = {"pin": pin, "seconds": seconds, "pulsed": True}


class TtsPreview:
    """A short WAV in the given (or saved) voice settings.

    GET takes ``voice``, ``rate``, ``volume`` and ``text`` as query parameters, so the page's
    audio element can play it from the station itself; POST takes the same as a JSON body.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._render(dict(req.params), resp)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._render(json_object(req), resp)

    def _render(self, body: dict[str, Any], resp: falcon.Response) -> None:
        text = body.pop("text", PREVIEW_TEXT)
        if not isinstance(text, str):
            raise Invalid("text must be a string", field="text")
        store.check_body(store.TTS, body)
        with self._station.engine.connect() as conn:
            values = store.tts_settings(conn)
        for name, value in body.items():
            values[name] = store.TTS.fields[name].check(value, name)
        try:
            wav = render_preview(values, text)
        except ValueError as ex:
            raise Invalid(str(ex), field="text") from ex
        except SpeechUnavailable as ex:
            raise ServiceUnavailable(str(ex), code="speech_unavailable") from ex
        resp.content_type = "audio/wav"
        resp.set_header("Cache-Control", "no-store")
        resp.data = wav


def _read_pem_parts(req: falcon.Request) -> dict[str, bytes]:
    require_multipart(req, "certificate")
    parts: dict[str, bytes] = {}
    for part in req.get_media():
        if part.name not in CERT_PARTS:
            continue
        if part.name in parts:
            raise BadRequest(f"Send one {part.name} part.")
        try:
            parts[part.name] = read_limited(part.stream, tls.MAX_PEM_BYTES)
        except UploadTooLarge as ex:
            raise Invalid(f"{part.name}: larger than 256 KiB", field=part.name) from ex
    missing = [name for name in CERT_PARTS if not parts.get(name)]
    if missing:
        raise BadRequest(f"Send the parts {', '.join(CERT_PARTS)}; missing {', '.join(missing)}.")
    return parts


class Certificate:
    """GET /api/settings/certificate (details, expiry) and POST (upload a checked pair)."""

    def __init__(self, station: Station, trust_bundle: Path | None = tls.SYSTEM_TRUST_BUNDLE):
        self._station = station
        self._trust_bundle = trust_bundle

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = settings_snapshot(self._station)["certificate"]

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        parts = _read_pem_parts(req)
        station = self._station
        now = station.clock()
        info = tls.check_pair(
            parts["certificate"], parts["private_key"], now=now, trust_bundle=self._trust_bundle
        )
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            station.ledger.record_config_update(
                conn, actor, audit_section("certificate"), list(CERT_PARTS), refuse=True
            )
            tls.store_pair(station.settings.data_dir, parts["certificate"], parts["private_key"])
        status = tls.certificate_status(station.settings.data_dir, now)
        resp.media = {
            "installed": info.as_dict(),
            "status": status.as_dict() if status else None,
            "changed": list(CERT_PARTS),
        }


def env_config_lines(station: Station) -> list[str]:
    """Return the effective configuration as ``NAME=value`` lines, secrets redacted."""
    lines = []
    for state in describe_variables(station.settings.data_dir, process_environment()):
        if state.source == "default":
            lines.append(f"# {state.name} (default)")
        elif state.secret:
            lines.append(f"{state.name}=<redacted, set in {state.source}>")
        else:
            lines.append(f"{state.name}={state.value}")
    return lines


class EnvConfigPage(NoStorePage):
    """GET /admin/env_config: the effective configuration as an env file, secrets redacted."""

    template = "env_config.html"

    def context(self, req: falcon.Request) -> dict[str, Any]:
        return {"lines": env_config_lines(self._station)}
