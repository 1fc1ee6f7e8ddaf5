"""Check the enveloped XML signature of a CAP message (IPAWS) against configured trust anchors.

"verified" needs all three of: the reference digest recomputed over the alert (enveloped-
signature transform, then the canonicalisation the message names) matches; the signature value
checks out with the signing certificate's public key; and that certificate chains to one of the
trust anchors (or is one), each certificate valid at the check time. The XML-signature work is
done by ``signxml``; certificate paths are built by ``cryptography``'s verifier over a store of
the anchors only (never the system store).

Extra rules on top, against signature wrapping: exactly one ``Signature`` element, a direct
child of ``<alert>``, with exactly one ``Reference`` whose URI is "" (the whole alert).
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alertstation import lazy
from alertstation.alerts.model import UNSIGNED, SignatureCheck
from alertstation.alerts.parsing import hardened_parser

etree = lazy.module("lxml.etree")

x509 = lazy.module("cryptography.x509")
signxml = lazy.module("signxml")
signxml_errors = lazy.module("signxml.exceptions")
signxml_util = lazy.module("signxml.util")

DSIG_NS = "http://www.w3.org/2000/09/xmldsig#"
_SIGNATURE = f"{{{DSIG_NS}}}Signature"
_NS = {"ds": DSIG_NS}


@dataclass(frozen=True)
class TrustAnchors:
    """Hold the certificates a signing certificate must chain to, and the time to check at.

    ``at`` None means "now"; pass a fixed time to re-check archived messages (or in tests).
    """

    certificates: tuple[x509.Certificate, ...]
    at: datetime | None = None

    def __post_init__(self) -> None:
        if not self.certificates:
            raise ValueError("a trust anchor bundle needs at least one certificate")

    @classmethod
    def from_pem(cls, data: bytes | str, *, at: datetime | None = None) -> TrustAnchors:
        """Load every certificate of a PEM bundle; ValueError when there is none."""
        raw = data.encode("ascii") if isinstance(data, str) else data
        try:
            certificates = x509.load_pem_x509_certificates(raw)
        except ValueError as ex:
            raise ValueError(
                f"trust anchor bundle holds no readable PEM certificate: {ex}"
            ) from None
        return cls(tuple(certificates), at)

    @classmethod
    def from_file(cls, path: str | Path, *, at: datetime | None = None) -> TrustAnchors:
        """Load a PEM bundle from ``path``."""
        return cls.from_pem(Path(path).read_bytes(), at=at)

    def checked_at(self, when: datetime | None) -> TrustAnchors:
        """Return the same anchors checked at ``when`` instead."""
        return replace(self, at=when)

    def contains(self, certificate: x509.Certificate) -> bool:
        """Tell whether ``certificate`` is itself one of the anchors."""
        return any(certificate == anchor for anchor in self.certificates)


@functools.cache
def _verifier_class() -> type:
    """Return the verifier class (defined on first use: signxml is imported then)."""

    class _AnchorStoreChainVerifier(signxml_util.X509CertChainVerifier):
        """signxml's chain verifier with a store of our anchors instead of a PEM file."""

        def __init__(self, anchors: Sequence[x509.Certificate], **kwargs: Any) -> None:
            self._anchors = list(anchors)
            super().__init__(ca_pem_file="<configured trust anchors>", **kwargs)

        @property
        def store(self) -> x509.verification.Store:
            return x509.verification.Store(self._anchors)

    class _AnchoredVerifier(signxml.XMLVerifier):
        """signxml's verifier building certificate paths to our anchors at our check time."""

        def __init__(self, trust: TrustAnchors) -> None:
            super().__init__()
            self._trust = trust

        def get_cert_chain_verifier(self, ca_pem_file: Any, ee_policy: Any, ca_policy: Any) -> Any:
            return _AnchorStoreChainVerifier(
                self._trust.certificates,
                verification_time=(self._trust.at or datetime.now(UTC)).astimezone(UTC),
                ee_policy=ee_policy,
                ca_policy=ca_policy,
            )

    return _AnchoredVerifier


def check_signature(
    document: bytes, root: etree._Element, trust: TrustAnchors | None
) -> SignatureCheck:
    """Check the signature of one alert document (``root`` is its parsed ``<alert>``)."""
    signatures = list(root.iter(_SIGNATURE))
    if not signatures:
        return UNSIGNED
    problem = _shape_problem(root, signatures)
    if problem:
        return SignatureCheck("failed", problem)
    embedded = _embedded_certificates(signatures[0])
    if isinstance(embedded, str):
        return SignatureCheck("failed", embedded)
    if trust is None:
        # Without an anchor anybody's certificate would pass, so the check proves nothing.
        return SignatureCheck(
            "failed", "the message is signed, but no trust anchor is configured to check it"
        )
    config = signxml.SignatureConfiguration(
        require_x509=True, expect_references=1, location="./", verification_time=trust.at
    )
    try:
        _verify(document, trust, config, None)
    except signxml_errors.InvalidCertificate as ex:
        # A signing certificate that is itself an anchor needs no chain; retry with it pinned.
        pinned = next((cert for cert in embedded if trust.contains(cert)), None)
        if pinned is None:
            return SignatureCheck("failed", _reason(ex))
        try:
            _verify(document, trust, config, pinned)
        except Exception as again:  # any failure at all means "not verified"
            return SignatureCheck("failed", _reason(again))
    except Exception as ex:  # any failure at all means "not verified"
        return SignatureCheck("failed", _reason(ex))
    return SignatureCheck("verified", "digest, signature value and certificate chain check out")


def _verify(
    document: bytes,
    trust: TrustAnchors,
    config: signxml.SignatureConfiguration,
    pinned: x509.Certificate | None,
) -> None:
    verifier = _verifier_class()(trust)
    verifier.verify(document, x509_cert=pinned, parser=hardened_parser(), expect_config=config)


def _shape_problem(root: etree._Element, signatures: list[etree._Element]) -> str:
    if len(signatures) > 1:
        return f"the alert carries {len(signatures)} Signature elements; exactly one is accepted"
    signature = signatures[0]
    if signature.getparent() is not root:
        return "the Signature element is not a direct child of <alert> (enveloped signature)"
    references = signature.findall("ds:SignedInfo/ds:Reference", _NS)
    if len(references) != 1:
        return f"the signature has {len(references)} references; exactly one is accepted"
    uri = references[0].get("URI")
    if uri != "":
        return (
            f'the signature covers {uri!r}, not the whole alert; a Reference URI of "" is required'
        )
    return ""


def _embedded_certificates(signature: etree._Element) -> list[x509.Certificate] | str:
    texts = [
        "".join(el.itertext())
        for el in signature.iterfind("ds:KeyInfo/ds:X509Data/ds:X509Certificate", _NS)
    ]
    if not texts:
        return "the signature carries no X509Certificate, so the signer cannot be checked"
    certificates = []
    for index, text in enumerate(texts):
        try:
            der = base64.b64decode("".join(text.split()), validate=True)
            certificates.append(x509.load_der_x509_certificate(der))
        except ValueError as ex:
            return f"X509Certificate {index} in the signature is unreadable: {ex}"
    return certificates


def _reason(ex: BaseException) -> str:
    text = " ".join(str(ex).split())[:400]
    if isinstance(ex, signxml_errors.InvalidDigest):
        return f"digest mismatch: the signed alert was changed after signing ({text})"
    if isinstance(ex, signxml_errors.InvalidCertificate):
        return f"signing certificate not trusted: {text}"
    if isinstance(ex, signxml_errors.InvalidSignature):
        return f"signature value does not verify with the signing certificate's key ({text})"
    if isinstance(ex, signxml_errors.InvalidInput):
        return f"signature cannot be checked: {text}"
    return f"signature cannot be checked: {type(ex).__name__}: {text}"
