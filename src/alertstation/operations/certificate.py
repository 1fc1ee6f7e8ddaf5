"""The TLS certificate and key the reverse proxy serves: check, store and report expiry.

An upload is a PEM certificate chain (leaf first) and a PEM private key without a passphrase.
:func:`check_pair` refuses a key that does not match the leaf, a chain whose links do not sign
each other, a chain that ends short of a trusted root (self-signed, or issued by a certificate
in the system trust bundle), and an expired leaf. :func:`store_pair` writes both files into
``<data_dir>/tls`` (the key 0600) with write-then-rename, so the proxy never reads half a pair.

:func:`certificate_status` is what ``/status`` shows: the expiry, the days left and a warning
from :data:`WARN_DAYS` days ahead. The private key never leaves the server: it is not returned,
logged or audited (the audit row names the fields ``certificate`` and ``private_key`` only).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection

from alertstation import lazy
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.uploads import staging_folder
from alertstation.notifications import notify
from alertstation.notifications.events import CERTIFICATE_EXPIRY

WARN_DAYS: Final[int] = 14
TLS_DIR: Final[str] = "tls"
CERT_FILE: Final[str] = "fullchain.pem"
KEY_FILE: Final[str] = "privkey.pem"
MAX_PEM_BYTES: Final[int] = 256 * 1024
SYSTEM_TRUST_BUNDLE: Final[Path] = Path("/etc/ssl/certs/ca-certificates.crt")

x509 = lazy.module("cryptography.x509")
serialization = lazy.module("cryptography.hazmat.primitives.serialization")
crypto_errors = lazy.module("cryptography.exceptions")


@dataclass(frozen=True)
class CertificateInfo:
    """What the settings page shows about a certificate chain."""

    subject: str
    issuer: str
    not_before: datetime
    not_after: datetime
    chain_length: int
    names: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """Return JSON-ready data."""
        return {
            "subject": self.subject,
            "issuer": self.issuer,
            "not_before": self.not_before.isoformat(),
            "not_after": self.not_after.isoformat(),
            "chain_length": self.chain_length,
            "names": list(self.names),
        }


@dataclass(frozen=True)
class CertificateStatus:
    """The installed certificate's expiry as ``/status`` shows it."""

    subject: str
    expires_at: datetime
    days_left: int
    warning: bool  # expires within WARN_DAYS days (or has expired)
    expired: bool

    def as_dict(self) -> dict[str, Any]:
        """Return JSON-ready data."""
        return {
            "subject": self.subject,
            "expires_at": self.expires_at.isoformat(),
            "days_left": self.days_left,
            "warning": self.warning,
            "expired": self.expired,
            "message": self.message,
        }

    @property
    def message(self) -> str:
        """Return the line the status page shows."""
        if self.expired:
            return f"The TLS certificate expired on {self.expires_at:%Y-%m-%d}."
        if self.warning:
            day = f"{self.expires_at:%Y-%m-%d}"
            return f"The TLS certificate expires in {self.days_left} days ({day})."
        return f"The TLS certificate is valid until {self.expires_at:%Y-%m-%d}."


def _load_chain(pem: bytes) -> list[x509.Certificate]:
    try:
        chain = x509.load_pem_x509_certificates(pem)
    except ValueError as ex:
        raise Invalid(
            "certificate: not a PEM certificate chain", field="certificate", code="bad_certificate"
        ) from ex
    if not chain:
        raise Invalid("certificate: no certificate found", field="certificate")
    return chain


def _load_key(pem: bytes) -> Any:
    try:
        return serialization.load_pem_private_key(pem, password=None)
    except TypeError as ex:
        raise Invalid(
            "private_key: remove the passphrase from the key first", field="private_key"
        ) from ex
    except (ValueError, Exception) as ex:  # noqa: BLE001 - any parse failure is a bad key
        raise Invalid(
            "private_key: not a PEM private key", field="private_key", code="bad_key"
        ) from ex


def _public_bytes(key: Any) -> bytes:
    return bytes(
        key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, crypto_errors.InvalidSignature):
        return False
    return True


def _trusted_roots(bundle: Path | None) -> list[x509.Certificate]:
    if bundle is None or not bundle.is_file():
        return []
    # The system bundle holds a few old roots that newer cryptography warns about; only the
    # ones that parse matter here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return x509.load_pem_x509_certificates(bundle.read_bytes())
        except ValueError:
            return []


def check_pair(
    cert_pem: bytes,
    key_pem: bytes,
    *,
    now: datetime,
    trust_bundle: Path | None = SYSTEM_TRUST_BUNDLE,
) -> CertificateInfo:
    """Check a chain and key as described in the module; return the leaf's details."""
    chain = _load_chain(cert_pem)
    key = _load_key(key_pem)
    leaf = chain[0]
    if _public_bytes(key.public_key()) != _public_bytes(leaf.public_key()):
        raise Invalid(
            "private_key: the key does not match the certificate",
            field="private_key",
            code="key_mismatch",
        )
    for lower, upper in zip(chain, chain[1:], strict=False):
        if not _issued_by(lower, upper):
            raise Invalid(
                f"certificate: {lower.subject.rfc4514_string()} is not signed by the next "
                f"certificate in the file ({upper.subject.rfc4514_string()}); put the chain in "
                "order, leaf first",
                field="certificate",
                code="chain_out_of_order",
            )
    top = chain[-1]
    if not _issued_by(top, top) and not any(
        _issued_by(top, root) for root in _trusted_roots(trust_bundle)
    ):
        raise Invalid(
            "certificate: the chain is incomplete; add the intermediate certificate of "
            f"{top.issuer.rfc4514_string()} after the leaf",
            field="certificate",
            code="chain_incomplete",
        )
    if leaf.not_valid_after_utc <= now:
        raise Invalid(
            f"certificate: it expired on {leaf.not_valid_after_utc:%Y-%m-%d}",
            field="certificate",
            code="certificate_expired",
        )
    return _info(chain)


def _info(chain: list[x509.Certificate]) -> CertificateInfo:
    leaf = chain[0]
    try:
        names = tuple(
            leaf.extensions.get_extension_for_class(
                x509.SubjectAlternativeName
            ).value.get_values_for_type(x509.DNSName)
        )
    except x509.ExtensionNotFound:
        names = ()
    return CertificateInfo(
        subject=leaf.subject.rfc4514_string(),
        issuer=leaf.issuer.rfc4514_string(),
        not_before=leaf.not_valid_before_utc,
        not_after=leaf.not_valid_after_utc,
        chain_length=len(chain),
        names=names,
    )


def tls_dir(data_dir: Path) -> Path:
    """Return the folder the certificate and key live in."""
    return data_dir / TLS_DIR


def store_pair(data_dir: Path, cert_pem: bytes, key_pem: bytes) -> None:
    """Write the checked chain and key (the key 0600), replacing the old pair."""
    folder = tls_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    with staging_folder(folder) as staging:
        key_path = staging / KEY_FILE
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key_pem)
        (staging / CERT_FILE).write_bytes(cert_pem)
        os.chmod(staging / CERT_FILE, 0o644)
        os.replace(key_path, folder / KEY_FILE)
        os.replace(staging / CERT_FILE, folder / CERT_FILE)


def installed_info(data_dir: Path) -> CertificateInfo | None:
    """Return the installed chain's details, or None when there is none."""
    path = tls_dir(data_dir) / CERT_FILE
    if not path.is_file():
        return None
    try:
        return _info(x509.load_pem_x509_certificates(path.read_bytes()))
    except ValueError:
        return None


def certificate_status(data_dir: Path, now: datetime) -> CertificateStatus | None:
    """Return the installed certificate's expiry for ``/status``; None when none is installed."""
    info = installed_info(data_dir)
    if info is None:
        return None
    left = info.not_after - now
    return CertificateStatus(
        subject=info.subject,
        expires_at=info.not_after,
        days_left=left.days,
        warning=left <= timedelta(days=WARN_DAYS),
        expired=left <= timedelta(0),
    )


#: Days ahead of expiry at which the ``certificate_expiry`` channels are told, once each.
NOTIFY_DAYS: Final[tuple[int, ...]] = (14, 3)
#: How often the worker checks the installed certificate, in seconds.
EXPIRY_CHECK_INTERVAL: Final[float] = 3600.0


def notify_expiry(conn: Connection, data_dir: Path, now: datetime) -> int | None:
    """Write a ``certificate_expiry`` notification 14 and 3 days ahead (once each); return it.

    The tightest threshold reached speaks: a station started 2 days before expiry is told once,
    of the 3-day mark. Each threshold of one certificate notifies once (its dedupe key names
    the certificate's expiry).
    """
    status = certificate_status(data_dir, now)
    if status is None:
        return None
    reached = [days for days in NOTIFY_DAYS if status.expires_at - now <= timedelta(days=days)]
    if not reached:
        return None
    days = min(reached)
    return notify(
        conn,
        CERTIFICATE_EXPIRY,
        subject=f"TLS certificate: {status.message}",
        body=f"{status.message} Subject: {status.subject}. Upload a renewed certificate "
        "on the settings page before it expires.",
        now=now,
        dedupe_key=f"certificate:{status.expires_at.isoformat()}:{days}",
    )


def expiry_job(station: Station) -> None:
    """The worker's job: notify of the installed certificate's coming expiry."""
    with begin_write(station.engine) as conn:
        notify_expiry(conn, station.settings.data_dir, station.clock())
