"""Read typed settings from the environment: the one module that looks at ``os.environ``."""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import secrets
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alertstation import lazy

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_TRUSTED_PROXIES = "127.0.0.0/8,::1/128"
SECRET_KEY_FILE = "secret_key"
LEDGER_KEY_FILE = "audit_ledger_key"
ENV_FILE = "station.env"
MIN_SECRET_KEY_LENGTH = 32
MAX_VARIABLE_LENGTH = 4096
# The smallest ALERTSTATION_MAX_REQUEST_BYTES: a sign-in form (username, a password of up to
# 1024 characters, the page to return to) and every small JSON body fit well within it.
MIN_REQUEST_BYTES = 16_384
# Saved variables the station never starts without: no sensible default stands in for them.
_REQUIRED_WHEN_SAVED = frozenset({"DATABASE_URL"})
# Saved variables a start does not check here: the alert trust anchors are read (and a missing
# bundle reported, naming the file) whenever a signed message is verified.
_CHECKED_WHEN_USED = frozenset({"ALERTSTATION_IPAWS_TRUST_ANCHORS"})

log = logging.getLogger("alertstation.settings")

x509 = lazy.module("cryptography.x509")


class SettingsError(ValueError):
    """A setting in the environment has a value the station cannot use."""


@dataclass(frozen=True)
class Settings:
    """Hold every setting the station reads at start-up."""

    data_dir: Path
    database_url: str
    secret_key: str
    assets_dir: Path
    audit_ledger_key: str = ""
    session_lifetime_hours: float = 12.0
    wx_zone_dbf_path: Path | None = None
    trusted_proxies: tuple[IPNetwork, ...] = field(
        default_factory=lambda: parse_networks(DEFAULT_TRUSTED_PROXIES)
    )
    log_level: str = "INFO"
    log_format: str = "json"
    max_request_bytes: int = 1_048_576
    contact: str = ""
    ipaws_trust_anchors: Path | None = None
    receiver_allowlist: tuple[str, ...] = ()
    # Why saved variables were left out at start (``usable_saved_variables``); logged by
    # ``warn_skipped_variables`` once logging is configured.
    skipped_variables: tuple[str, ...] = ()
    #: How many stream preflights one process runs at once (the next is answered 429).
    preflight_concurrency: int = 4
    #: The deadline of one stream preflight, playlist fetch included, in seconds.
    preflight_seconds: float = 20.0

    @property
    def is_sqlite(self) -> bool:
        """Tell whether the database is the embedded SQLite file."""
        return self.database_url.startswith("sqlite")

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, create_data_dir: bool = True
    ) -> Settings:
        """Build settings from the environment and the station's saved variables.

        The data directory comes from the process environment only; the other variables may
        also be saved in ``<data dir>/station.env`` (the settings page writes it), and a value in
        the process environment wins over a saved one. Without ``create_data_dir`` a data
        directory that does not exist is refused (SettingsError naming it) rather than created
        empty, with new keys, as a new station.
        """
        process_env = os.environ if environ is None else environ
        wanted = Path(process_env.get("ALERTSTATION_DATA_DIR") or "./data")
        if not create_data_dir and not wanted.is_dir():
            raise SettingsError(
                f"the data directory {wanted.resolve()} does not exist (ALERTSTATION_DATA_DIR); "
                "`alertstation migrate` creates a new station there"
            )
        data_dir = private_data_dir(wanted)
        saved, skipped = usable_saved_variables(read_env_file(data_dir / ENV_FILE), process_env)
        env = {**saved, **process_env}
        database_url = env.get("DATABASE_URL") or f"sqlite:///{data_dir / 'alertstation.db'}"
        dbf_path = env.get("WX_ZONE_DBF_PATH")
        anchors_path = (env.get("ALERTSTATION_IPAWS_TRUST_ANCHORS") or "").strip()
        return cls(
            data_dir=data_dir,
            database_url=normalise_database_url(database_url),
            secret_key=env.get("SECRET_KEY") or load_or_create_key(data_dir, SECRET_KEY_FILE),
            audit_ledger_key=(
                env.get("AUDIT_LEDGER_KEY") or load_or_create_key(data_dir, LEDGER_KEY_FILE)
            ),
            assets_dir=assets_dir_from(env),
            session_lifetime_hours=_positive_float(env, "SESSION_LIFETIME_HOURS", 12.0),
            wx_zone_dbf_path=Path(dbf_path).resolve() if dbf_path else None,
            trusted_proxies=parse_networks(
                env.get("ALERTSTATION_TRUSTED_PROXIES", DEFAULT_TRUSTED_PROXIES)
            ),
            log_level=_choice(
                env, "ALERTSTATION_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR")
            ),
            log_format=_choice(env, "ALERTSTATION_LOG_FORMAT", "json", ("json", "text")),
            max_request_bytes=_request_bytes(env),
            contact=check_contact(env.get("ALERTSTATION_CONTACT", "")),
            ipaws_trust_anchors=Path(anchors_path).resolve() if anchors_path else None,
            receiver_allowlist=parse_receiver_allowlist(
                env.get("ALERTSTATION_RECEIVER_ALLOWLIST", "")
            ),
            skipped_variables=skipped,
            preflight_concurrency=_small_count(env, "ALERTSTATION_PREFLIGHT_CONCURRENCY", 4),
        )


def assets_dir_from(env: Mapping[str, str]) -> Path:
    """Return the folder of zone DBF snapshots (``ALERTSTATION_ASSETS_DIR``, else ./assets)."""
    return Path(env.get("ALERTSTATION_ASSETS_DIR") or "./assets").resolve()


def usable_saved_variables(
    saved: Mapping[str, str], process_env: Mapping[str, str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Return the saved variables the station can start with, and why any others were left out.

    A saved value that no longer passes ``validate_variable`` (a file since removed, a value
    saved by an older version) is left out, so the station starts on its default, and the
    reason names the variable. ``DATABASE_URL`` is never left out: its error stops the start.
    A variable the process environment sets is not checked here (the environment wins).
    """
    usable: dict[str, str] = {}
    skipped: list[str] = []
    for name, value in saved.items():
        if name in process_env:
            continue
        if name in _CHECKED_WHEN_USED:
            usable[name] = value
            continue
        try:
            usable[name] = validate_variable(name, value)
        except SettingsError as ex:
            if name in _REQUIRED_WHEN_SAVED:
                raise
            skipped.append(f"{name} saved in {ENV_FILE} cannot be used; starting without it: {ex}")
    return usable, tuple(skipped)


def warn_skipped_variables(settings: Settings) -> None:
    """Log, once logging is configured, each saved variable the station started without."""
    for reason in settings.skipped_variables:
        log.warning(reason)


@dataclass(frozen=True)
class Variable:
    """A variable operators may save from the settings page.

    ``boundary`` names the trust boundary the variable moves (the database, which proxies are
    believed, which certificates are trusted). Such a variable is admin-only, and saving it
    carries a warning; an empty ``boundary`` means any ``system.configure`` holder may save it.
    """

    name: str
    description: str
    secret: bool = False
    boundary: str = ""

    @property
    def admin_only(self) -> bool:
        """Tell whether only an admin may change this variable."""
        return bool(self.boundary)


# SECRET_KEY, AUDIT_LEDGER_KEY and ALERTSTATION_DATA_DIR are deliberately not editable here:
# changing a key from a web page would sign out everyone or orphan the audit ledger. The
# variables with a ``boundary`` are admin-only (docs/configuration.md).
VARIABLES: tuple[Variable, ...] = (
    Variable(
        "DATABASE_URL",
        "Database: sqlite:///... or postgresql+psycopg://...",
        secret=True,
        boundary="the database: where accounts, sessions, alerts and the audit ledger live",
    ),
    Variable("SESSION_LIFETIME_HOURS", "Session lifetime and idle limit, in hours"),
    Variable("WX_ZONE_DBF_PATH", "Explicit zone DBF file, overriding the assets directory"),
    Variable("ALERTSTATION_ASSETS_DIR", "Folder of zone DBF snapshots"),
    Variable(
        "ALERTSTATION_TRUSTED_PROXIES",
        "Addresses or CIDR ranges of the reverse proxy",
        boundary="which peers may name the client address (bans, sign-in limits, audit rows)",
    ),
    Variable("ALERTSTATION_LOG_LEVEL", "DEBUG, INFO, WARNING or ERROR"),
    Variable("ALERTSTATION_LOG_FORMAT", "json or text"),
    Variable("ALERTSTATION_MAX_REQUEST_BYTES", "Largest request body accepted, in bytes"),
    Variable("ALERTSTATION_CONTACT", "Contact (e-mail or URL) sent to alert feeds in User-Agent"),
    Variable(
        "ALERTSTATION_IPAWS_TRUST_ANCHORS",
        "PEM bundle of the certificates IPAWS message signatures must chain to",
        boundary="which certificates a signed alert must chain to before it counts as verified",
    ),
    Variable(
        "ALERTSTATION_RECEIVER_ALLOWLIST",
        "Comma-separated absolute paths of the programs radio receivers may run",
        boundary="which programs on the host an audio receiver may start",
    ),
)
EDITABLE_VARIABLES = {variable.name: variable for variable in VARIABLES}


def validate_variable(name: str, value: str) -> str:
    """Return ``value`` when ``name`` may be saved with it; raise SettingsError otherwise."""
    if name not in EDITABLE_VARIABLES:
        raise SettingsError(f"{name} cannot be set from the settings page")
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{name} must be a non-empty string")
    if len(value) > MAX_VARIABLE_LENGTH or any(c in value for c in "\r\n\x00"):
        raise SettingsError(f"{name} must be one line of at most {MAX_VARIABLE_LENGTH} characters")
    value = value.strip()
    env = {name: value}
    checks = {
        "DATABASE_URL": lambda: normalise_database_url(value),
        "SESSION_LIFETIME_HOURS": lambda: _positive_float(env, name, 12.0),
        "ALERTSTATION_MAX_REQUEST_BYTES": lambda: _request_bytes(env),
        "WX_ZONE_DBF_PATH": lambda: check_dbf_file(value),
        "ALERTSTATION_TRUSTED_PROXIES": lambda: parse_networks(value),
        "ALERTSTATION_LOG_LEVEL": lambda: _choice(
            env, name, "INFO", ("DEBUG", "INFO", "WARNING", "ERROR")
        ),
        "ALERTSTATION_LOG_FORMAT": lambda: _choice(env, name, "json", ("json", "text")),
        "ALERTSTATION_IPAWS_TRUST_ANCHORS": lambda: _check_anchor_bundle(value),
        "ALERTSTATION_RECEIVER_ALLOWLIST": lambda: parse_receiver_allowlist(value),
        "ALERTSTATION_CONTACT": lambda: check_contact(value),
    }
    if name in checks:
        checks[name]()
    return value


def _request_bytes(env: Mapping[str, str]) -> int:
    """Read ALERTSTATION_MAX_REQUEST_BYTES: at least ``MIN_REQUEST_BYTES``, so sign-in works."""
    name = "ALERTSTATION_MAX_REQUEST_BYTES"
    value = int(_positive_float(env, name, 1 << 20))
    if value < MIN_REQUEST_BYTES:
        raise SettingsError(
            f"{name} must be at least {MIN_REQUEST_BYTES} bytes (smaller refuses sign-in forms)"
        )
    return value


def check_dbf_file(value: str) -> Path:
    """Return the path when it names a readable file that starts like a DBF; SettingsError
    otherwise. (Which zone schema it holds is checked where the zone reader lives.)"""
    path = Path(value)
    try:
        with path.open("rb") as handle:
            head = handle.read(32)
    except OSError as ex:
        raise SettingsError(f"WX_ZONE_DBF_PATH: cannot read {path}: {ex.strerror or ex}") from None
    if len(head) < 32 or head[0] not in _DBF_VERSIONS:
        raise SettingsError(f"WX_ZONE_DBF_PATH: {path} is not a DBF file")
    return path


# The first byte of a dBASE table: its version (dBASE III/IV/5, FoxPro, Visual FoxPro).
_DBF_VERSIONS = frozenset(
    {0x02, 0x03, 0x04, 0x05, 0x30, 0x31, 0x32, 0x43, 0x83, 0x8B, 0xCB, 0xF5, 0xFB}
)


def parse_receiver_allowlist(value: str) -> tuple[str, ...]:
    """Read the receiver allowlist: comma-separated entries, in order, unique.

    An entry is an absolute program path, optionally followed by the arguments (shell-quoted) the
    program must run with: ``/usr/bin/arecord`` or ``/opt/rx/bin/rx --band noaa``. Entries are
    returned in one normal form (:func:`receiver_entry` reads them back).
    """
    entries: list[str] = []
    for part in value.split(","):
        if not part.strip():
            continue
        try:
            words = shlex.split(part)
        except ValueError:
            raise SettingsError(
                f"ALERTSTATION_RECEIVER_ALLOWLIST: {part.strip()!r} is not quoted properly"
            ) from None
        path = words[0]
        if not path.startswith("/") or any(c in part for c in "\x00\r\n"):
            raise SettingsError(
                f"ALERTSTATION_RECEIVER_ALLOWLIST: {path!r} is not an absolute program path"
            )
        entry = shlex.join(words)
        if entry not in entries:
            entries.append(entry)
    return tuple(entries)


def receiver_entry(entry: str) -> tuple[str, tuple[str, ...]]:
    """Return (program, the arguments the admin wrote beside it) of one allowlist entry."""
    words = shlex.split(entry)
    return words[0], tuple(words[1:])


def _check_anchor_bundle(value: str) -> None:
    """Raise SettingsError unless ``value`` names a readable PEM bundle of certificates."""
    path = Path(value)
    try:
        if not path.is_file():
            raise ValueError(f"{path} is not a file")
        read_anchor_bundle(path)
    except ValueError as ex:
        raise SettingsError(f"ALERTSTATION_IPAWS_TRUST_ANCHORS: {ex}") from None


#: Largest trust anchor bundle read; a bundle of a few dozen certificates is well under 100 KiB.
MAX_BUNDLE_BYTES = 1024 * 1024


def read_anchor_bundle(path: Path) -> list[Any]:
    """Read the PEM certificates at ``path``; ValueError saying why when it cannot be used.

    One reader for both the settings check and the alert trust anchors
    (``alertstation.alerts.trust``), so a saved bundle is exactly what the verifier loads.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BUNDLE_BYTES + 1)
    except OSError as ex:
        raise ValueError(f"cannot read {path}: {ex.strerror or ex}") from None
    if len(data) > MAX_BUNDLE_BYTES:
        raise ValueError(f"{path} is larger than {MAX_BUNDLE_BYTES} bytes; not a PEM bundle")
    try:
        return x509.load_pem_x509_certificates(data)  # cryptography is imported here
    except ValueError as ex:
        raise ValueError(
            f"{path}: trust anchor bundle holds no readable PEM certificate: {ex}"
        ) from None


MAX_CONTACT_LENGTH = 200
_CONTACT = re.compile(r"[A-Za-z0-9@.:/+_~%=?&#-]+( [A-Za-z0-9@.:/+_~%=?&#-]+)*")


def check_contact(value: str) -> str:
    """Return the station contact (e-mail or URL) for HTTP User-Agent headers, or "".

    Feeds such as the agency's alert API ask clients to name a contact; the value goes into a
    header, so only printable URL and address characters and single spaces are accepted.
    """
    value = value.strip()
    if value and (len(value) > MAX_CONTACT_LENGTH or not _CONTACT.fullmatch(value)):
        raise SettingsError(
            f"ALERTSTATION_CONTACT must be an e-mail address or URL of at most "
            f"{MAX_CONTACT_LENGTH} characters (letters, digits, @.:/+_~%=?&#- and single spaces)"
        )
    return value


def read_env_file(path: Path) -> dict[str, str]:
    """Read saved variables (``NAME=value`` lines); unknown names and comments are skipped."""
    if not path.is_file():
        return {}
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        name = name.strip()
        if sep and name in EDITABLE_VARIABLES and value.strip():
            values[name] = value.strip()
    return values


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    """Save variables atomically, readable by the station's account only."""
    lines = ["# Saved from the Alert Station settings page; the process environment wins."]
    lines += [f"{name}={values[name]}" for name in sorted(values)]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def native_required() -> bool:
    """Tell whether a missing compiled kernel must be an error (ALERTSTATION_REQUIRE_NATIVE=1)."""
    return os.environ.get("ALERTSTATION_REQUIRE_NATIVE") == "1"


def process_environment() -> Mapping[str, str]:
    """Return the process environment (for reporting where a value comes from)."""
    return os.environ


def normalise_database_url(url: str) -> str:
    """Point plain ``postgresql://`` URLs at the psycopg 3 driver; reject unknown schemes."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    if url.startswith(("sqlite://", "postgresql+psycopg://")):
        return url
    scheme = url.split(":", 1)[0]
    raise SettingsError(
        f"DATABASE_URL scheme {scheme!r} is not supported; use sqlite:/// or postgresql+psycopg://"
    )


def parse_networks(value: str) -> tuple[IPNetwork, ...]:
    """Parse a comma-separated list of addresses or CIDR ranges."""
    networks = []
    for token in (part.strip() for part in value.split(",")):
        if not token:
            continue
        try:
            networks.append(ipaddress.ip_network(token, strict=False))
        except ValueError as ex:
            raise SettingsError(f"ALERTSTATION_TRUSTED_PROXIES: {ex}") from ex
    return tuple(networks)


def private_data_dir(path: Path) -> Path:
    """Create the data directory 0700, or tighten an existing one to 0700; return it resolved.

    It holds the database, keys, saved variables, logs and uploads: nobody but the station's
    account has any business listing it. A directory the station does not own is left alone.
    """
    path = path.resolve()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        try:
            path.chmod(0o700)
        except PermissionError:
            pass  # not ours: the operator chose its mode
    return path


def load_or_create_key(data_dir: Path, name: str) -> str:
    """Return the key kept in ``data_dir/name``, generating it on first start.

    The key is written to a private temporary file and linked into place, so concurrent first
    starts agree on one key and nobody ever reads a half-written file.
    """
    path = data_dir / name
    if not path.exists():
        tmp = data_dir / f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    key = path.read_text().strip()
    if len(key) < MIN_SECRET_KEY_LENGTH:
        raise SettingsError(f"{path} holds a key shorter than {MIN_SECRET_KEY_LENGTH} characters")
    return key


def _positive_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise SettingsError(f"{name} must be greater than zero, got {raw!r}")
    return value


def _small_count(env: Mapping[str, str], name: str, default: int, most: int = 64) -> int:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= most:
        raise SettingsError(f"{name} must be a whole number from 1 to {most}, got {raw!r}")
    return int(raw)


def _choice(env: Mapping[str, str], name: str, default: str, allowed: tuple[str, ...]) -> str:
    raw = env.get(name) or default
    value = raw.upper() if default.isupper() else raw.lower()
    if value not in allowed:
        raise SettingsError(f"{name} must be one of {', '.join(allowed)}, got {raw!r}")
    return value
