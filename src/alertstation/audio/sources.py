"""Audio sources: checked configuration, storage, redaction and the status the monitor writes.

Two kinds of source:

``stream``
    An HTTP or HTTPS URL: an Icecast or Shoutcast mount, a direct MP3/AAC/Ogg file, or an M3U/PLS
    playlist (resolved to its first reachable entry). ``device_params`` may hold
    ``auth_username``, ``auth_password`` and ``auth_header`` (a raw ``Authorization`` value).
``receiver``
    A program that writes raw signed 16-bit little-endian PCM to its standard output (for example
    ``rtl_fm``), stored as an argv list and never run through a shell. Its program must be on the
    allowlist only an admin sets (``ALERTSTATION_RECEIVER_ALLOWLIST``), and its arguments must pass
    that program's rules (:func:`check_command`): output to standard output only, and only a
    capture device listed in the hardware settings. ``device_params`` holds ``sample_rate`` and
    ``channels`` of what it writes.

The password and the raw header are secrets: they live in their own columns, never in
``device_params`` as stored or answered, never in an audit row. Answers carry
``auth_password_set`` and ``auth_header_set`` instead. On an edit a blank or absent password (or
header) keeps the stored one; ``null`` clears it. An edit that moves the URL to another origin
(scheme, host or port) drops both stored secrets unless the same request enters them again, so a
stored credential never follows the URL to a host of the editor's choosing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, Row, delete, insert, select, update

from alertstation.audio.capture.getopt import OptionError
from alertstation.audio.capture.programs import (
    CommandError,
    arecord_device,
    check_arguments,
    known_program,
)
from alertstation.audio.tables import NAME_WIDTH, SECRET_WIDTH, URL_WIDTH, audio_sources
from alertstation.audit.actor import Actor
from alertstation.audit.changes import config_changes
from alertstation.audit.ledger import CONFIG_UPDATED, AuditLedger
from alertstation.errors import FieldError, NameTaken
from alertstation.http.outbound import same_host
from alertstation.settings import receiver_entry

KINDS = ("stream", "receiver")
STATES = ("starting", "running", "reconnecting", "fatal", "stopped")
AUDIT_TARGET = "audio"
MAX_ARGS = 64
MAX_ARG_LENGTH = 512
SECRET_KEYS = ("auth_password", "auth_header")
STREAM_PARAMS = ("auth_username", "auth_password", "auth_header")
RECEIVER_PARAMS = ("sample_rate", "channels")
DEFAULT_RECEIVER_RATE = 24_000
_C = audio_sources.c


#: A source setting is not acceptable; ``field`` names it (the shared field error).
SourceError = FieldError
#: Another source already has this name.
SourceNameTaken = NameTaken


@dataclass(frozen=True)
class SourceConfig:
    """Hold what an operator configures for one source (secrets included, status excluded)."""

    name: str
    kind: str
    url: str = ""
    command: tuple[str, ...] = ()
    device_params: Mapping[str, Any] = field(default_factory=dict)
    auth_password: str | None = None
    auth_header: str | None = None
    enabled: bool = True
    relay_enabled: bool = False

    @classmethod
    def from_row(cls, row: Row[Any]) -> SourceConfig:
        """Read the configuration part of an ``audio_sources`` row."""
        return cls(
            name=row.name,
            kind=row.kind,
            url=row.url,
            command=tuple(json.loads(row.command or "[]")),
            device_params=json.loads(row.device_params or "{}"),
            auth_password=row.auth_password,
            auth_header=row.auth_header,
            enabled=bool(row.enabled),
            relay_enabled=bool(row.relay_enabled),
        )

    def columns(self) -> dict[str, Any]:
        """Return the column values of this configuration."""
        return {
            "name": self.name,
            "kind": self.kind,
            "url": self.url,
            "command": json.dumps(list(self.command)),
            "device_params": json.dumps(dict(self.device_params), sort_keys=True),
            "auth_password": self.auth_password,
            "auth_header": self.auth_header,
            "enabled": self.enabled,
            "relay_enabled": self.relay_enabled,
        }

    @property
    def auth_username(self) -> str:
        """Return the Basic user name, "" when none."""
        return str(self.device_params.get("auth_username") or "")


# --- validation -------------------------------------------------------------------------------

BODY_FIELDS = ("name", "kind", "url", "command", "device_params", "enabled", "relay_enabled")


def read_config(
    body: Mapping[str, Any],
    current: SourceConfig | None = None,
    *,
    allowlist: Sequence[str] = (),
    kind: str | None = None,
    capture_devices: Sequence[str] | None = None,
) -> SourceConfig:
    """Check a source body (all fields for a new source, any subset for an edit).

    ``allowlist`` holds the allowlist's entries (:func:`check_command`); ``kind`` forces the kind
    (the receiver routes). ``capture_devices`` (the hardware settings' list; None skips the
    check) are the ALSA devices a receiver's command may capture from. An edit that moves the
    URL to another origin drops the stored secrets unless ``device_params`` enters them again.
    Raises SourceError naming the first bad field; an unknown field is an error too.
    ``skip_url_check`` is the caller's business and ignored here.
    """
    unknown = sorted(set(body) - set(BODY_FIELDS) - {"skip_url_check"})
    if unknown:
        raise SourceError(unknown[0], f"unknown field {unknown[0]}")
    if current is None:
        current = _blank(body, kind)
    elif "kind" in body and body["kind"] != current.kind:
        raise SourceError("kind", "kind cannot change; add a new source instead")
    changes: dict[str, Any] = {}
    if "name" in body:
        changes["name"] = check_name(body["name"])
    for flag in ("enabled", "relay_enabled"):
        if flag in body:
            changes[flag] = _boolean(body[flag], flag)
    if current.kind == "stream":
        changes.update(_stream_changes(body, current))
    else:
        changes.update(_receiver_changes(body, allowlist, capture_devices))
    return replace(current, **changes)


def _blank(body: Mapping[str, Any], kind: str | None) -> SourceConfig:
    if "name" not in body:
        raise SourceError("name", "name is required")
    chosen = check_kind(body.get("kind", kind))
    if kind is not None and chosen != kind:
        raise SourceError("kind", f"kind must be {kind} here")
    if chosen == "stream" and "url" not in body:
        raise SourceError("url", "url is required")
    if chosen == "receiver" and "command" not in body:
        raise SourceError("command", "command is required")
    return SourceConfig(name="", kind=chosen)


def _stream_changes(body: Mapping[str, Any], current: SourceConfig) -> dict[str, Any]:
    if "command" in body:
        raise SourceError("command", "command applies to receiver sources only")
    changes: dict[str, Any] = {}
    if "url" in body:
        changes["url"] = check_url(body["url"])
        if current.url and not same_host(current.url, changes["url"]):
            # Another origin: the stored secrets stay behind unless entered again below.
            changes.update(auth_password=None, auth_header=None)
            current = replace(current, auth_password=None, auth_header=None)
    if "device_params" in body:
        changes.update(_stream_params(body["device_params"], current))
    return changes


def _receiver_changes(
    body: Mapping[str, Any], allowlist: Sequence[str], capture_devices: Sequence[str] | None
) -> dict[str, Any]:
    if "url" in body and body["url"] not in ("", None):
        raise SourceError("url", "url applies to stream sources only")
    changes: dict[str, Any] = {}
    if "command" in body:
        changes["command"] = check_command(body["command"], allowlist, capture_devices)
    if "device_params" in body:
        changes["device_params"] = _receiver_params(body["device_params"])
    return changes


def check_name(value: Any) -> str:
    """Return a trimmed source name of 1..100 printable characters."""
    if not isinstance(value, str) or not value.strip():
        raise SourceError("name", "name must be a non-empty string")
    name = " ".join(value.split())
    if len(name) > NAME_WIDTH or not name.isprintable():
        raise SourceError("name", f"name must be at most {NAME_WIDTH} printable characters")
    return name


def check_kind(value: Any) -> str:
    """Return a known source kind."""
    if value not in KINDS:
        raise SourceError("kind", f"kind must be one of {', '.join(KINDS)}")
    return str(value)


def check_url(value: Any) -> str:
    """Return an http(s) URL without credentials in it (they go in device_params)."""
    if not isinstance(value, str) or not value.strip():
        raise SourceError("url", "url must be a non-empty string")
    url = value.strip()
    if len(url) > URL_WIDTH or not url.isprintable() or " " in url:
        raise SourceError("url", f"url must be at most {URL_WIDTH} characters, without spaces")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise SourceError("url", "url is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourceError("url", "url must be an http or https URL with a host")
    if parts.username is not None or parts.password is not None:
        raise SourceError(
            "url", "put credentials in device_params (auth_username, auth_password), not the URL"
        )
    return url


def check_command(
    value: Any, allowlist: Sequence[str], capture_devices: Sequence[str] | None = None
) -> tuple[str, ...]:
    """Return a receiver argv that the admin's allowlist allows, arguments included.

    The program (``command[0]``) must be on the allowlist. An entry written with arguments
    allows exactly that command. An entry of a known capture program (arecord, rtl_fm, ffmpeg,
    sox) written alone allows the arguments that program's rules accept
    (:mod:`alertstation.audio.capture.programs`: allowed options only, standard output only, a
    configured capture device only when ``capture_devices`` is given). Any other program written
    alone takes no arguments.
    """
    if not isinstance(value, list | tuple) or not value:
        raise SourceError("command", "command must be a non-empty list of strings (an argv)")
    if len(value) > MAX_ARGS:
        raise SourceError("command", f"command may have at most {MAX_ARGS} arguments")
    for arg in value:
        if not isinstance(arg, str) or len(arg) > MAX_ARG_LENGTH or "\x00" in arg:
            raise SourceError(
                "command", f"each argument must be a string of at most {MAX_ARG_LENGTH} characters"
            )
    program, args = value[0], tuple(value[1:])
    written = [fixed for path, fixed in map(receiver_entry, allowlist) if path == program]
    if not written:
        programs = [receiver_entry(entry)[0] for entry in allowlist]
        allowed = ", ".join(dict.fromkeys(programs)) if programs else "none (an admin sets "
        if not programs:
            allowed += "ALERTSTATION_RECEIVER_ALLOWLIST)"
        raise SourceError(
            "command", f"program {program!r} is not on the receiver allowlist; allowed: {allowed}"
        )
    if args in written:
        return tuple(value)
    known = known_program(program)
    if () in written and known is not None:
        try:
            check_arguments(known, args, capture_devices)
        except CommandError as ex:
            raise SourceError("command", str(ex)) from None
        return tuple(value)
    raise SourceError(
        "command",
        f"program {program!r} takes only the arguments an admin wrote beside it on the receiver "
        "allowlist",
    )


def allowlisted_programs(allowlist: Sequence[str]) -> list[str]:
    """Return the programs of the allowlist's entries, in order, each once."""
    return list(dict.fromkeys(receiver_entry(entry)[0] for entry in allowlist))


def named_capture_device(command: Sequence[str]) -> str | None:
    """Return the ALSA device an ``arecord`` receiver names (``-D``/``--device``), else None.

    Only ``arecord`` is read here, with its own option rules; arguments that do not parse name
    "" (no configured device). Other programs' devices are checked by their own rules.
    """
    if not command or known_program(command[0]) != "arecord":
        return None
    try:
        return arecord_device(command[1:])
    except OptionError:
        return ""


def _boolean(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise SourceError(name, f"{name} must be true or false")
    return value


def _secret(value: Any, key: str) -> str:
    if not isinstance(value, str) or len(value) > SECRET_WIDTH or not value.isprintable():
        raise SourceError(
            f"device_params.{key}", f"{key} must be a string of at most {SECRET_WIDTH} characters"
        )
    return value


def _stream_params(value: Any, current: SourceConfig) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SourceError("device_params", "device_params must be an object")
    unknown = sorted(set(value) - set(STREAM_PARAMS) - {"auth_password_set", "auth_header_set"})
    if unknown:
        raise SourceError(
            f"device_params.{unknown[0]}",
            f"unknown device_params key {unknown[0]} for a stream (known: "
            + ", ".join(STREAM_PARAMS)
            + ")",
        )
    params: dict[str, Any] = {}
    username = value.get("auth_username")
    if username not in (None, ""):
        params["auth_username"] = _secret(username, "auth_username")
    changes: dict[str, Any] = {"device_params": params}
    for key in SECRET_KEYS:
        if key not in value or value[key] == "":
            continue  # blank or absent on an edit: keep the stored secret
        changes[key] = None if value[key] is None else _secret(value[key], key)
    password = changes.get("auth_password", current.auth_password)
    if password and not params.get("auth_username"):
        raise SourceError("device_params.auth_username", "auth_password needs auth_username")
    return changes


def _receiver_params(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SourceError("device_params", "device_params must be an object")
    unknown = sorted(set(value) - set(RECEIVER_PARAMS))
    if unknown:
        raise SourceError(
            f"device_params.{unknown[0]}",
            f"unknown device_params key {unknown[0]} for a receiver (known: "
            + ", ".join(RECEIVER_PARAMS)
            + ")",
        )
    params: dict[str, Any] = {}
    rate = value.get("sample_rate", DEFAULT_RECEIVER_RATE)
    if isinstance(rate, bool) or not isinstance(rate, int) or not 8_000 <= rate <= 192_000:
        raise SourceError("device_params.sample_rate", "sample_rate must be 8000..192000 Hz")
    params["sample_rate"] = rate
    channels = value.get("channels", 1)
    if channels not in (1, 2) or isinstance(channels, bool):
        raise SourceError("device_params.channels", "channels must be 1 or 2")
    params["channels"] = channels
    return params


def receiver_format(config: SourceConfig) -> tuple[int, int]:
    """Return (sample rate, channels) of the PCM a receiver writes."""
    params = config.device_params
    return int(params.get("sample_rate", DEFAULT_RECEIVER_RATE)), int(params.get("channels", 1))


def changed_fields(before: SourceConfig | None, after: SourceConfig) -> list[str]:
    """Return the names of the configuration fields that differ (all set ones for a new one)."""
    names = []
    for f in fields(SourceConfig):
        new = getattr(after, f.name)
        if before is None:
            if new not in ("", None, (), {}, False) or f.name == "enabled":
                names.append(f.name)
        elif getattr(before, f.name) != new:
            names.append(f.name)
    return sorted(names)


# --- storage ----------------------------------------------------------------------------------


def _name_taken(conn: Connection, name: str, except_id: int | None = None) -> bool:
    query = select(_C.id).where(_C.name == name)
    if except_id is not None:
        query = query.where(_C.id != except_id)
    return conn.execute(query).first() is not None


def create_source(conn: Connection, config: SourceConfig, now: datetime) -> int:
    """Insert a source (state ``starting`` when enabled) and return its id."""
    if _name_taken(conn, config.name):
        raise SourceNameTaken("name", f"a source named {config.name!r} already exists")
    state = "starting" if config.enabled else "stopped"
    values = {**config.columns(), "created_at": now, "updated_at": now}
    values.update(state=state, state_changed_at=now)
    return int(conn.execute(insert(audio_sources).values(**values)).inserted_primary_key[0])


def update_source(
    conn: Connection, source_id: int, config: SourceConfig, now: datetime
) -> list[str]:
    """Store a changed configuration; return the changed field names.

    A change of what the monitor listens to (URL, command, credentials, enabled) asks the monitor
    to restart the source.
    """
    row = get_source(conn, source_id)
    before = SourceConfig.from_row(row)
    changed = changed_fields(before, config)
    if not changed:
        return []
    if "name" in changed and _name_taken(conn, config.name, source_id):
        raise SourceNameTaken("name", f"a source named {config.name!r} already exists")
    values: dict[str, Any] = {**config.columns(), "updated_at": now}
    if set(changed) - {"name", "relay_enabled"}:
        values.update(restart_values(now, config.enabled))
    conn.execute(update(audio_sources).where(_C.id == source_id).values(**values))
    return changed


def restart_values(now: datetime, enabled: bool = True) -> dict[str, Any]:
    """Return the column values that ask the monitor to restart a source (and clear fatal)."""
    return {
        "state": "starting" if enabled else "stopped",
        "error_message": None,
        "state_changed_at": now,
        "restart_generation": _C.restart_generation + 1,
    }


def request_restart(conn: Connection, source_id: int, now: datetime) -> None:
    """Ask the monitor to restart a source; a fatal source becomes ``starting`` again."""
    row = get_source(conn, source_id)
    values = restart_values(now, bool(row.enabled))
    conn.execute(update(audio_sources).where(_C.id == source_id).values(**values))


def delete_source(conn: Connection, source_id: int) -> None:
    """Delete a source."""
    conn.execute(delete(audio_sources).where(_C.id == source_id))


def get_source(conn: Connection, source_id: int) -> Row[Any]:
    """Return one source row or raise LookupError."""
    row = conn.execute(select(audio_sources).where(_C.id == source_id)).first()
    if row is None:
        raise LookupError(source_id)
    return row


def list_sources(conn: Connection, kind: str | None = None) -> list[Row[Any]]:
    """Return every source (of one kind when given), by name."""
    query = select(audio_sources).order_by(_C.name, _C.id)
    if kind is not None:
        query = query.where(_C.kind == kind)
    return list(conn.execute(query).all())


def set_status(conn: Connection, source_id: int, **values: Any) -> None:
    """Write the monitor's view of a source (state, error_message, level_dbfs, ...)."""
    conn.execute(update(audio_sources).where(_C.id == source_id).values(**values))


def source_as_dict(row: Row[Any]) -> dict[str, Any]:
    """Return the JSON form of a source: no secret, ``auth_password_set`` instead."""
    config = SourceConfig.from_row(row)
    return {
        "id": row.id,
        "name": row.name,
        "kind": row.kind,
        "url": row.url,
        "command": list(config.command),
        "device_params": {k: v for k, v in config.device_params.items() if k not in SECRET_KEYS},
        "auth_password_set": bool(row.auth_password),
        "auth_header_set": bool(row.auth_header),
        "enabled": bool(row.enabled),
        "relay_enabled": bool(row.relay_enabled),
        "state": row.state,
        "error_message": row.error_message,
        "level_dbfs": row.level_dbfs,
        "peak_dbfs": row.peak_dbfs,
        "icy_title": row.icy_title,
        "last_audio_at": _iso(row.last_audio_at),
        "state_changed_at": _iso(row.state_changed_at),
        "archive_error": row.archive_error,
        "archive_failures": row.archive_failures,
        "created_at": _iso(row.created_at),
        "updated_at": _iso(row.updated_at),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def audit_snapshot(config: SourceConfig) -> dict[str, Any]:
    """Return a source's configuration without its secrets, for the audit's diff."""
    return {
        f.name: getattr(config, f.name) for f in fields(SourceConfig) if f.name not in SECRET_KEYS
    }


def audit_change(
    ledger: AuditLedger,
    conn: Connection,
    actor: Actor,
    change: str,
    row_id: int,
    name: str,
    changed: list[str],
    command: Sequence[str] | None = None,
    before: SourceConfig | None = None,
    after: SourceConfig | None = None,
) -> None:
    """Record ``config.updated`` (target ``audio``) for a source change.

    A receiver's ``command`` (which holds no secret) is recorded in full when it is given: the
    caller passes it when the command was set or changed. Given the configuration ``before``
    and ``after`` an edit, ``changes`` holds old → new values of the changed fields, never the
    password or the raw authorization header.
    """
    details: dict[str, Any] = {
        "fields": sorted(changed),
        "change": change,
        "source_id": row_id,
        "name": name,
    }
    if command is not None:
        details["command"] = list(command)
    if before is not None and after is not None:
        changes = config_changes(
            audit_snapshot(before), audit_snapshot(after), names=changed, secrets=SECRET_KEYS
        )
        if changes:
            details["changes"] = changes
    ledger.record_or_refuse(conn, actor, CONFIG_UPDATED, target=AUDIT_TARGET, details=details)
