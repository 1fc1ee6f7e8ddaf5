"""TLS certificate upload: key match, chain completeness, expiry warning, the key kept secret."""

from __future__ import annotations

import json
import stat
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from alertstation.db.types import utcnow
from alertstation.errors import Invalid
from alertstation.operations import certificate as tls
from tests.support import StationHarness as Station


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _cert(
    subject: str,
    key: Any,
    issuer: str,
    issuer_key: Any,
    *,
    ca: bool,
    now: datetime,
    days: int = 90,
) -> x509.Certificate:
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(*certs: x509.Certificate) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _key_pem(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


class Pki:
    """A root, an intermediate and a leaf for station.example."""

    def __init__(self, now: datetime, leaf_days: int = 90) -> None:
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        self.mid_key = ec.generate_private_key(ec.SECP256R1())
        self.leaf_key = ec.generate_private_key(ec.SECP256R1())
        self.root = _cert("Test Root", self.root_key, "Test Root", self.root_key, ca=True, now=now)
        self.mid = _cert("Test Mid", self.mid_key, "Test Root", self.root_key, ca=True, now=now)
        self.leaf = _cert(
            "station.example",
            self.leaf_key,
            "Test Mid",
            self.mid_key,
            ca=False,
            now=now,
            days=leaf_days,
        )


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki(utcnow())


def test_check_pair_accepts_a_complete_chain(pki: Pki, tmp_path: Path) -> None:
    now = utcnow()
    info = tls.check_pair(
        _pem(pki.leaf, pki.mid, pki.root), _key_pem(pki.leaf_key), now=now, trust_bundle=None
    )
    assert info.subject == "CN=station.example" and info.chain_length == 3
    assert info.names == ("station.example",)
    # Without the root in the file, a trust bundle holding it completes the chain.
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(_pem(pki.root))
    tls.check_pair(_pem(pki.leaf, pki.mid), _key_pem(pki.leaf_key), now=now, trust_bundle=bundle)


@pytest.mark.parametrize(
    ("chain", "key", "code"),
    [
        ("leaf", "leaf", "chain_incomplete"),
        ("leaf,mid", "leaf", "chain_incomplete"),
        ("leaf,root", "leaf", "chain_out_of_order"),
        ("leaf,mid,root", "mid", "key_mismatch"),
        ("garbage", "leaf", "bad_certificate"),
        ("leaf,mid,root", "garbage", "bad_key"),
    ],
)
def test_check_pair_refuses(pki: Pki, chain: str, key: str, code: str) -> None:
    certs = {"leaf": pki.leaf, "mid": pki.mid, "root": pki.root}
    keys = {"leaf": pki.leaf_key, "mid": pki.mid_key}
    cert_pem = b"not pem" if chain == "garbage" else _pem(*(certs[n] for n in chain.split(",")))
    key_pem = b"not a key" if key == "garbage" else _key_pem(keys[key])
    with pytest.raises(Invalid) as caught:
        tls.check_pair(cert_pem, key_pem, now=utcnow(), trust_bundle=None)
    assert caught.value.code == code


def test_expiry_warns_fourteen_days_ahead(tmp_path: Path) -> None:
    now = utcnow()
    pki = Pki(now, leaf_days=30)
    tls.store_pair(tmp_path, _pem(pki.leaf, pki.mid, pki.root), _key_pem(pki.leaf_key))
    calm = tls.certificate_status(tmp_path, now)
    assert calm is not None and not calm.warning and calm.days_left in (29, 30)
    soon = tls.certificate_status(tmp_path, now + timedelta(days=17))
    assert soon is not None and soon.warning and not soon.expired
    assert "expires in" in soon.message
    gone = tls.certificate_status(tmp_path, now + timedelta(days=31))
    assert gone is not None and gone.expired and "expired" in gone.message
    assert tls.certificate_status(tmp_path / "elsewhere", now) is None


def test_upload_stores_the_pair_and_never_shows_the_key(
    station: Station, pki: Pki, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    station.add_user("ops", "admin")
    ops = station.sign_in("ops")
    key_pem = _key_pem(pki.leaf_key)
    files = {
        "certificate": (
            "fullchain.pem",
            _pem(pki.leaf, pki.mid, pki.root),
            "application/x-pem-file",
        ),
        "private_key": ("privkey.pem", key_pem, "application/x-pem-file"),
    }
    body, content_type = _multipart(files)
    result = ops.request(
        "POST", "/api/settings/certificate", body=body, headers={"Content-Type": content_type}
    )
    assert result.status_code == 200, result.text
    assert result.json["installed"]["subject"] == "CN=station.example"
    assert result.json["status"]["warning"] is False
    folder = station.app.station.settings.data_dir / "tls"
    assert (folder / "privkey.pem").read_bytes() == key_pem
    assert stat.S_IMODE((folder / "privkey.pem").stat().st_mode) == 0o600
    with station.engine.connect() as conn:
        (row,) = conn.execute(select(audit_logs).where(audit_logs.c.action == "config.updated"))
    assert row.target == "settings.certificate"
    assert json.loads(row.details) == {"fields": ["certificate", "private_key"]}
    marker = key_pem.decode().splitlines()[1]  # a line of the key's body
    shown = ops.request("GET", "/api/settings/certificate")
    page = ops.request("GET", "/admin/settings")
    assert "station.example" in page.text
    assert "POST /api/settings/certificate" in caplog.text  # the logs were captured
    for text in (result.text, shown.text, page.text, row.details, caplog.text):
        assert marker not in text


def test_a_refused_upload_keeps_the_old_pair(station: Station, pki: Pki) -> None:
    station.add_user("ops", "admin")
    ops = station.sign_in("ops")
    files = {
        "certificate": ("c.pem", _pem(pki.leaf), "application/x-pem-file"),
        "private_key": ("k.pem", _key_pem(pki.leaf_key), "application/x-pem-file"),
    }
    body, content_type = _multipart(files)
    result = ops.request(
        "POST", "/api/settings/certificate", body=body, headers={"Content-Type": content_type}
    )
    assert result.status_code == 422 and result.json["error"]["code"] == "chain_incomplete"
    assert not (station.app.station.settings.data_dir / "tls" / "privkey.pem").exists()
    with station.engine.connect() as conn:
        assert (
            conn.execute(select(audit_logs.c.action)).scalars().all().count("config.updated") == 0
        )


def _multipart(files: dict[str, tuple[str, bytes, str]]) -> tuple[bytes, str]:
    boundary = "alertstation-test-boundary"
    chunks = []
    for field, (filename, data, ctype) in files.items():
        chunks.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
            f'filename="{filename}"\r\nContent-Type: {ctype}\r\n\r\n'.encode()
            + data
            + b"\r\n"
        )
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


def test_status_warns_of_a_certificate_that_expires_within_fourteen_days(
    station: Station,
) -> None:
    station.add_user("ann", "viewer")
    viewer = station.sign_in("ann")
    page = viewer.request("GET", "/status", csrf=False)
    assert "none installed" in page.text
    assert station.client.simulate_get("/api/system_status").json["certificate"] is None
    soon = Pki(station.app.station.clock(), leaf_days=10)
    data_dir = station.app.station.settings.data_dir
    tls.store_pair(data_dir, _pem(soon.leaf, soon.mid, soon.root), _key_pem(soon.leaf_key))
    shown = station.client.simulate_get("/api/system_status").json["certificate"]
    assert shown["warning"] is True and shown["expired"] is False and shown["days_left"] in (9, 10)
    page = viewer.request("GET", "/status", csrf=False)
    assert "expires soon" in page.text and "CN=station.example" in page.text
