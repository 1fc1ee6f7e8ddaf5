"""The configured IPAWS trust anchors: read once per process, read again when the file changes.

``ALERTSTATION_IPAWS_TRUST_ANCHORS`` names a PEM bundle of the certificates a message's signing
certificate must chain to (``alertstation.alerts.signature``). :func:`trust_for` answers what
every ingest path passes to ``import_messages(..., trust=...)``:

* ``None`` when the variable is unset: a signed message is recorded ``failed`` ("no trust
  anchor is configured"), never ``verified``;
* the ``TrustAnchors`` of the bundle when it reads;
* a :class:`TrustUnavailable` when it is set but the file cannot be read or holds no
  certificate: the error is logged once per change of the file, and a signed message is
  recorded ``failed`` with a reason naming the bundle (see ``ingest.import_messages``).

The file is stat-ed on each call (cheap) and parsed again only when its modification time,
size or inode changed, so replacing the bundle (atomically or in place) takes effect at the
next poll or import without a restart.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from alertstation.alerts.model import Alert, SignatureCheck
from alertstation.alerts.signature import TrustAnchors
from alertstation.settings import Settings, read_anchor_bundle

log = logging.getLogger("alertstation.alerts.trust")


@dataclass(frozen=True, slots=True)
class TrustUnavailable:
    """Say that anchors are configured but cannot be used, and why."""

    path: Path
    problem: str

    @property
    def reason(self) -> str:
        """Return the signature reason recorded for a signed message checked meanwhile."""
        return (
            f"the message is signed, but the configured trust anchor bundle {self.path} "
            f"could not be read ({self.problem}), so the signature was not checked"
        )


#: What ingest is given: anchors, unusable anchors, or none configured.
Trust = TrustAnchors | TrustUnavailable | None


def anchors_at(trust: Trust, now: datetime | None) -> TrustAnchors | None:
    """Return the anchors to check with, at ``now`` (the time of receipt) unless they say."""
    if not isinstance(trust, TrustAnchors):
        return None
    return trust.checked_at(now) if trust.at is None and now is not None else trust


def explain_unavailable(alert: Alert, trust: Trust) -> Alert:
    """Name the unreadable bundle in a signed alert's "no trust anchor" failure."""
    check = alert.signature
    if not isinstance(trust, TrustUnavailable) or check.status != "failed":
        return alert
    if "no trust anchor is configured" not in check.reason:
        return alert  # failed for a reason of its own, before any anchor mattered
    return replace(alert, signature=SignatureCheck("failed", trust.reason))


def read_bundle(path: Path) -> TrustAnchors:
    """Read the PEM bundle at ``path``; ValueError saying why when it cannot be used."""
    return TrustAnchors(tuple(read_anchor_bundle(path)))


class AnchorFile:
    """One bundle file, parsed at first use and again whenever the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[object, ...] | None = None
        self._value: TrustAnchors | TrustUnavailable | None = None

    def current(self) -> TrustAnchors | TrustUnavailable:
        """Return the anchors, read again when the file changed; TrustUnavailable on a fault."""
        try:
            info = os.stat(self.path)
            stamp: tuple[object, ...] = (info.st_mtime_ns, info.st_size, info.st_ino)
        except OSError as ex:
            stamp = ("unreadable", ex.errno)
        with self._lock:
            if stamp != self._stamp or self._value is None:
                self._value = self._load()
                self._stamp = stamp
            return self._value

    def _load(self) -> TrustAnchors | TrustUnavailable:
        try:
            anchors = read_bundle(self.path)
        except ValueError as ex:
            log.error(
                "IPAWS trust anchors (ALERTSTATION_IPAWS_TRUST_ANCHORS) unusable: %s; "
                "signed messages are recorded as failed until the file is fixed",
                ex,
            )
            return TrustUnavailable(self.path, str(ex))
        now = datetime.now(UTC)
        expired = [c for c in anchors.certificates if c.not_valid_after_utc <= now]
        log.info(
            "IPAWS trust anchors: %d certificate(s) read from %s",
            len(anchors.certificates),
            self.path,
        )
        for certificate in expired:
            log.warning(
                "IPAWS trust anchor %s expired on %s; messages chaining to it fail",
                certificate.subject.rfc4514_string(),
                certificate.not_valid_after_utc.isoformat(),
            )
        return anchors


_files: dict[Path, AnchorFile] = {}
_files_lock = threading.Lock()


def anchor_file(path: Path) -> AnchorFile:
    """Return the process's one ``AnchorFile`` for ``path``."""
    with _files_lock:
        found = _files.get(path)
        if found is None:
            found = _files[path] = AnchorFile(path)
        return found


def trust_for(settings: Settings) -> Trust:
    """Return what ingest checks signatures against under ``settings`` (see the module doc)."""
    path = settings.ipaws_trust_anchors
    if path is None:
        return None
    return anchor_file(path).current()
