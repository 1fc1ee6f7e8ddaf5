"""IPAWS-style XML signatures: verified only when digest, value and certificate all check out."""

from __future__ import annotations

import base64
import re
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from alertstation.alerts.cap import parse_cap_feed, parse_cap_xml
from alertstation.alerts.model import Alert
from alertstation.alerts.signature import TrustAnchors
from tests.fixtures.alerts.signing import (
    CHECK_TIME,
    FIXTURES,
    INCLUSIVE_C14N,
    Pki,
    Signer,
    issue,
    issue_intermediate,
    make_ca,
    make_pki,
    sign_alert,
    signed_sample,
)

DS = "{http://www.w3.org/2000/09/xmldsig#}"


@pytest.fixture(scope="module")
def pki() -> Pki:
    return make_pki()


@pytest.fixture(scope="module")
def signed(pki: Pki) -> bytes:
    return signed_sample(pki)


def check(document: bytes, trust: TrustAnchors | None) -> tuple[str, str]:
    signature = parse_cap_xml(document, trust=trust).signature
    return signature.status, signature.reason


def test_signed_alert_verifies_with_its_anchor(pki: Pki, signed: bytes) -> None:
    alert = parse_cap_xml(signed, trust=pki.anchors)
    assert alert.signature.status == "verified" and alert.signature.verified
    assert alert.msg_type == "Update" and alert.same_codes == ("040109",)
    assert b'<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">' in signed
    assert alert.raw == signed.decode()


def test_inclusive_canonicalisation_verifies_too(pki: Pki) -> None:
    document = (FIXTURES / "cap12_svr_new.xml").read_bytes()
    signed = sign_alert(document, pki.signer, c14n=INCLUSIVE_C14N, prefix="ds")
    assert INCLUSIVE_C14N.encode() in signed
    assert check(signed, pki.anchors)[0] == "verified"


def test_chain_through_an_intermediate_verifies(pki: Pki) -> None:
    issuing_key, issuing = issue_intermediate(pki.ca_key, pki.ca)
    leaf = issue(issuing_key, issuing)
    signer = Signer(leaf.key, (leaf.chain[0], issuing))
    signed = sign_alert((FIXTURES / "cap12_svr_con.xml").read_bytes(), signer)
    assert check(signed, pki.anchors)[0] == "verified"
    # Without the intermediate in the message there is no path to the anchor.
    alone = sign_alert((FIXTURES / "cap12_svr_con.xml").read_bytes(), leaf)
    status, reason = check(alone, pki.anchors)
    assert status == "failed" and "certificate" in reason


def test_a_signing_certificate_that_is_the_anchor_verifies(pki: Pki, signed: bytes) -> None:
    anchors = TrustAnchors(pki.signer.chain, at=CHECK_TIME)
    assert check(signed, anchors)[0] == "verified"


def test_another_anchor_fails_naming_the_certificate(signed: bytes) -> None:
    stranger = make_pki()
    status, reason = check(signed, stranger.anchors)
    assert status == "failed"
    assert reason.startswith("signing certificate not trusted")
    assert "certificate" in reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"Bethany", b"Bethanx"),
        (b"<value>040109</value>", b"<value>040110</value>"),
        (b"/O.CON.KOUN", b"/O.CAN.KOUN"),
        (b"<msgType>Update</msgType>", b"<msgType>Cancel</msgType>"),
        (b"<severity>Severe</severity>", b"<severity>Minor</severity>"),
        (b"</instruction>", b" </instruction>"),
        (b"<scope>Public</scope>", b"<scope>Public</scope><note>extra</note>"),
    ],
)
def test_changed_content_fails_the_digest(pki: Pki, signed: bytes, old: bytes, new: bytes) -> None:
    assert signed.count(old) == 1
    status, reason = check(signed.replace(old, new), pki.anchors)
    assert status == "failed"
    assert reason.startswith("digest mismatch")


def _content_positions(signed: bytes) -> list[int]:
    """Byte offsets of letters and digits in the alert's text, outside the Signature."""
    body = signed[: signed.index(b"<Signature")]
    positions = []
    for match in re.finditer(rb">([^<]+)<", body):
        positions.extend(
            match.start(1) + i for i, byte in enumerate(match.group(1)) if chr(byte).isalnum()
        )
    return positions


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_changed_byte_of_the_alert_fails(pki: Pki, signed: bytes, data: st.DataObject) -> None:
    position = data.draw(st.sampled_from(_content_positions(signed)))
    original = signed[position : position + 1]
    replacement = data.draw(
        st.sampled_from([b"0", b"7", b"Q", b"z"]).filter(lambda b: b != original)
    )
    changed = signed[:position] + replacement + signed[position + 1 :]
    try:
        alert = parse_cap_xml(changed, trust=pki.anchors)
    except ValueError:
        return  # the change broke the alert itself (a time, a status): never "verified" either
    assert alert.signature.status == "failed"
    assert alert.signature.reason.startswith("digest mismatch")


def test_altered_signature_value_fails(pki: Pki, signed: bytes) -> None:
    root = etree.fromstring(signed)
    value = root.find(f"{DS}Signature/{DS}SignatureValue")
    assert value is not None and value.text
    raw = bytearray(base64.b64decode(value.text))
    raw[10] ^= 0x01
    altered = signed.replace(value.text.encode(), base64.b64encode(bytes(raw)))
    status, reason = check(altered, pki.anchors)
    assert status == "failed"
    assert reason.startswith("signature value does not verify")


def test_altered_signed_info_fails(pki: Pki, signed: bytes) -> None:
    altered = re.sub(
        rb"<DigestValue>[^<]+</DigestValue>",
        b"<DigestValue>" + base64.b64encode(b"\0" * 32) + b"</DigestValue>",
        signed,
    )
    assert check(altered, pki.anchors)[0] == "failed"


def test_expired_certificate_fails(pki: Pki) -> None:
    expired = issue(
        pki.ca_key,
        pki.ca,
        not_before=CHECK_TIME - timedelta(days=400),
        not_after=CHECK_TIME - timedelta(days=1),
    )
    signed = sign_alert((FIXTURES / "cap12_svr_con.xml").read_bytes(), expired)
    status, reason = check(signed, pki.anchors)
    assert status == "failed"
    assert "certificate has expired" in reason
    # The same message checked at a time inside the validity period verifies.
    earlier = pki.anchors.checked_at(CHECK_TIME - timedelta(days=30))
    assert check(signed, earlier)[0] == "verified"


def test_not_yet_valid_certificate_fails(pki: Pki) -> None:
    future = issue(
        pki.ca_key,
        pki.ca,
        not_before=CHECK_TIME + timedelta(days=1),
        not_after=CHECK_TIME + timedelta(days=400),
    )
    signed = sign_alert((FIXTURES / "cap12_svr_con.xml").read_bytes(), future)
    status, reason = check(signed, pki.anchors)
    assert status == "failed" and "not yet valid" in reason


def test_expired_anchor_fails_even_with_a_valid_signing_certificate() -> None:
    old_key, old_ca = make_ca(
        "Expired Root",
        not_before=CHECK_TIME - timedelta(days=900),
        not_after=CHECK_TIME - timedelta(days=1),
    )
    signer = issue(old_key, old_ca)
    signed = sign_alert((FIXTURES / "cap12_svr_con.xml").read_bytes(), signer)
    status, reason = check(signed, TrustAnchors((old_ca,), at=CHECK_TIME))
    assert status == "failed"
    assert reason.startswith("signing certificate not trusted") and "not valid" in reason


def test_unsigned_alert(pki: Pki) -> None:
    alert = parse_cap_xml((FIXTURES / "cap12_svr_con.xml").read_bytes(), trust=pki.anchors)
    assert alert.signature.status == "unsigned"
    assert not alert.signature.verified


def test_signed_without_anchors_is_never_verified(signed: bytes) -> None:
    status, reason = check(signed, None)
    assert status == "failed" and "no trust anchor is configured" in reason


def _edit_signature(signed: bytes, edit: object) -> bytes:
    root = etree.fromstring(signed)
    edit(root)  # type: ignore[operator]
    return etree.tostring(root)


def test_two_signatures_fail(pki: Pki, signed: bytes) -> None:
    def duplicate(root: etree._Element) -> None:
        root.append(etree.fromstring(etree.tostring(root.find(f"{DS}Signature"))))

    status, reason = check(_edit_signature(signed, duplicate), pki.anchors)
    assert status == "failed" and "2 Signature elements" in reason


def test_signature_elsewhere_than_under_alert_fails(pki: Pki, signed: bytes) -> None:
    def move(root: etree._Element) -> None:
        signature = root.find(f"{DS}Signature")
        root.find("{urn:oasis:names:tc:emergency:cap:1.2}info").append(signature)

    status, reason = check(_edit_signature(signed, move), pki.anchors)
    assert status == "failed" and "not a direct child of <alert>" in reason


def test_signature_over_part_of_the_alert_fails(pki: Pki, signed: bytes) -> None:
    altered = signed.replace(b'<Reference URI="">', b'<Reference URI="#info">')
    status, reason = check(altered, pki.anchors)
    assert status == "failed" and "not the whole alert" in reason


def test_signature_without_certificate_fails(pki: Pki, signed: bytes) -> None:
    def strip(root: etree._Element) -> None:
        key_info = root.find(f"{DS}Signature/{DS}KeyInfo")
        key_info.getparent().remove(key_info)

    status, reason = check(_edit_signature(signed, strip), pki.anchors)
    assert status == "failed" and "no X509Certificate" in reason


def test_unreadable_certificate_fails(pki: Pki, signed: bytes) -> None:
    altered = re.sub(
        rb"<X509Certificate>[^<]+</X509Certificate>",
        b"<X509Certificate>bm90IGEgY2VydGlmaWNhdGU=</X509Certificate>",
        signed,
    )
    status, reason = check(altered, pki.anchors)
    assert status == "failed" and "X509Certificate 0 in the signature is unreadable" in reason


def test_signed_alerts_verify_inside_feeds(pki: Pki) -> None:
    con = signed_sample(pki, "cap12_svr_con.xml")
    can = signed_sample(pki, "cap12_svr_can.xml")
    strip = re.compile(rb"^<\?xml[^>]*\?>")
    wrapper = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<ns1:alerts xmlns:ns1="http://gov.fema.ipaws.services/feed" '
        b'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        + strip.sub(b"", con)
        + b"\n"
        + strip.sub(b"", can)
        + b"\n</ns1:alerts>"
    )
    back_to_back = con + b"\n" + can
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>x</id>'
        b'<content type="application/cap+xml">' + strip.sub(b"", can) + b"</content></entry></feed>"
    )
    for body, count in ((wrapper, 2), (back_to_back, 2), (atom, 1)):
        entries = parse_cap_feed(body, trust=pki.anchors)
        assert len(entries) == count
        assert all(isinstance(e, Alert) and e.signature.verified for e in entries), entries


def test_trust_anchors_load_from_pem(pki: Pki, tmp_path: Path) -> None:
    other_key, other = make_ca("Second Root")
    bundle = pki.anchor_pem() + other.public_bytes(serialization.Encoding.PEM)
    path = tmp_path / "anchors.pem"
    path.write_bytes(bundle)
    anchors = TrustAnchors.from_file(path, at=CHECK_TIME)
    assert anchors.certificates == (pki.ca, other)
    assert TrustAnchors.from_pem(bundle.decode()).certificates == anchors.certificates
    assert anchors.contains(other) and not anchors.contains(pki.signer.chain[0])
    assert isinstance(anchors.certificates[0], x509.Certificate)


@pytest.mark.parametrize("bundle", [b"", b"not a certificate"])
def test_empty_or_broken_bundle_is_refused(bundle: bytes) -> None:
    with pytest.raises(ValueError, match="trust anchor"):
        TrustAnchors.from_pem(bundle)
