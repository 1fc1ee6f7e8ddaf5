"""The deployment files pass their tools' own checks: systemd-analyze verify and nginx -t."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from alertstation.db.types import utcnow

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
INSTALLED_BINARY = "/opt/alertstation/venv/bin/alertstation"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze") or "/usr/bin/systemd-analyze"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
UNITS = ("alertstation-web.service", "alertstation-worker.service")


def _units_here(folder: Path) -> list[Path]:
    """Copy the units with ExecStart pointing at this environment's alertstation script."""
    here = str(Path(sys.prefix) / "bin" / "alertstation")
    assert Path(here).is_file(), here
    copies = []
    for name in UNITS:
        text = (DEPLOY / "systemd" / name).read_text()
        assert INSTALLED_BINARY in text
        copy = folder / name
        copy.write_text(text.replace(INSTALLED_BINARY, here))
        copies.append(copy)
    return copies


def _verify(paths: list[Path], unit_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if unit_path is not None:
        env["SYSTEMD_UNIT_PATH"] = f"{unit_path}:"  # trailing colon: the default path too
    return subprocess.run(
        [SYSTEMD_ANALYZE, "verify", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_units_pass_systemd_analyze_verify_without_a_warning(tmp_path: Path) -> None:
    result = _verify(_units_here(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr


def test_a_bad_unit_is_caught(tmp_path: Path) -> None:
    """The check above can fail: an unknown key is reported."""
    (unit,) = [u for u in _units_here(tmp_path) if u.name == UNITS[0]]
    unit.write_text(unit.read_text().replace("PrivateTmp=yes", "PrivateTmp=yes\nPrivateTmpx=yes"))
    assert "Unknown key" in _verify([unit]).stderr


def test_units_are_hardened(tmp_path: Path) -> None:
    for name in UNITS:
        text = (DEPLOY / "systemd" / name).read_text()
        for option in (
            "NoNewPrivileges=yes",
            "ProtectSystem=strict",
            "ProtectHome=yes",
            "PrivateTmp=yes",
            "CapabilityBoundingSet=\n",
            "UMask=0077",
            "User=alertstation",
        ):
            assert option in text, f"{name} lacks {option.strip()}"
    assert "--bind 127.0.0.1:8080" in (DEPLOY / "systemd" / UNITS[0]).read_text()


def test_the_hostban_drop_in_verifies_with_the_units(tmp_path: Path) -> None:
    units = _units_here(tmp_path)
    for unit in units:
        drop_ins = tmp_path / f"{unit.name}.d"
        drop_ins.mkdir()
        shutil.copy(DEPLOY / "systemd" / "alertstation-hostban.conf", drop_ins / "hostban.conf")
    result = _verify(units, unit_path=tmp_path)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "station.example.org")])
    now = utcnow()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "fullchain.pem", folder / "privkey.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _nginx_test(tmp_path: Path, site_text: str) -> subprocess.CompletedProcess[str]:
    cert, key = _self_signed(tmp_path)
    site = tmp_path / "alertstation.conf"
    site.write_text(
        site_text.replace("/var/lib/alertstation/tls/fullchain.pem", str(cert)).replace(
            "/var/lib/alertstation/tls/privkey.pem", str(key)
        )
    )
    main = tmp_path / "nginx.conf"
    main.write_text(
        f"pid {tmp_path}/nginx.pid;\n"
        f"error_log {tmp_path}/error.log;\n"
        "events {}\n"
        "http {\n"
        f"    access_log {tmp_path}/access.log;\n"
        f"    client_body_temp_path {tmp_path}/body;\n"
        f"    proxy_temp_path {tmp_path}/proxy;\n"
        f"    include {site};\n"
        "}\n"
    )
    return subprocess.run(
        [NGINX, "-t", "-p", str(tmp_path), "-c", str(main)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_nginx_site_passes_nginx_t(tmp_path: Path) -> None:
    text = (DEPLOY / "nginx" / "alertstation.conf").read_text()
    for header in (
        "X-Forwarded-For $proxy_add_x_forwarded_for",
        "X-Request-ID $request_id",
        "X-Forwarded-Proto $scheme",
    ):
        assert header in text
    assert "proxy_pass http://127.0.0.1:8080;" in text
    result = _nginx_test(tmp_path, text)
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


def test_nginx_t_catches_a_broken_site(tmp_path: Path) -> None:
    text = (DEPLOY / "nginx" / "alertstation.conf").read_text()
    result = _nginx_test(tmp_path, text.replace("proxy_pass", "proxy_passs"))
    assert result.returncode != 0 and "unknown directive" in result.stderr
