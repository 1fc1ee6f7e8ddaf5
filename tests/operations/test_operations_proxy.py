"""The shipped nginx site in front of a real station: one hop, the client address and request id.

nginx listens on 127.0.0.2 and the test connects from 127.0.0.3, so the address nginx appends to
X-Forwarded-For differs from the station's peer (nginx on 127.0.0.1): the station must log the
client as 127.0.0.3, never the address the client put in X-Forwarded-For itself, and must keep
the X-Request-ID nginx generated (nginx's own log shows it).
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.operations.test_operations_deploy import DEPLOY, NGINX, _self_signed

CLIENT = "127.0.0.3"
PROXY = "127.0.0.2"
SPOOFED = "203.0.113.66"


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _wait_for(check, what: str, seconds: float = 90) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _connects(host: str, port: int) -> bool:
    with socket.create_connection((host, port), 2):
        return True


def _site(tmp_path: Path, station_port: int, https_port: int, http_port: int) -> Path:
    cert, key = _self_signed(tmp_path)
    text = (DEPLOY / "nginx" / "alertstation.conf").read_text()
    text = text.replace("/var/lib/alertstation/tls/fullchain.pem", str(cert))
    text = text.replace("/var/lib/alertstation/tls/privkey.pem", str(key))
    text = text.replace("127.0.0.1:8080", f"127.0.0.1:{station_port}")
    text = text.replace("    listen [::]:80;\n", "").replace("    listen [::]:443 ssl http2;\n", "")
    text = text.replace("listen 80;", f"listen {PROXY}:{http_port};")
    text = text.replace("listen 443 ssl http2;", f"listen {PROXY}:{https_port} ssl http2;")
    assert f"{PROXY}:{https_port}" in text and f"127.0.0.1:{station_port}" in text
    main = tmp_path / "nginx.conf"
    user = "user root root;\n" if os.geteuid() == 0 else ""
    main.write_text(
        f"{user}pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        "daemon off;\nevents {}\nhttp {\n"
        "    log_format ids '$remote_addr $request_id';\n"
        f"    access_log {tmp_path}/access.log ids;\n"
        f"    client_body_temp_path {tmp_path}/body;\n    proxy_temp_path {tmp_path}/proxy;\n"
        f"    include {tmp_path / 'site.conf'};\n}}\n"
    )
    (tmp_path / "site.conf").write_text(text)
    return main


@pytest.mark.slow
def test_nginx_site_passes_one_hop_to_the_station(tmp_path: Path) -> None:
    station_port, https_port, http_port = _free_port(), _free_port(PROXY), _free_port(PROXY)
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "assets"),
        "ALERTSTATION_LOG_FORMAT": "json",
    }
    env.pop("DATABASE_URL", None)
    python = [sys.executable, "-m", "alertstation"]
    subprocess.run([*python, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    station_log = tmp_path / "station.log"
    with station_log.open("wb") as log:
        station = subprocess.Popen(
            [*python, "serve", "--bind", f"127.0.0.1:{station_port}", "--workers", "1"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    nginx = None
    try:
        main = _site(tmp_path, station_port, https_port, http_port)
        nginx = subprocess.Popen(
            [NGINX, "-p", str(tmp_path), "-c", str(main)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

        def station_up() -> bool:
            connection = http.client.HTTPConnection("127.0.0.1", station_port, timeout=5)
            try:
                connection.request("GET", "/healthz")
                return connection.getresponse().status == 200
            finally:
                connection.close()

        _wait_for(station_up, "the station")
        _wait_for(lambda: _connects(PROXY, https_port), "nginx")

        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        connection = http.client.HTTPSConnection(
            PROXY, https_port, timeout=30, context=context, source_address=(CLIENT, 0)
        )
        connection.request(
            "GET",
            "/healthz",
            headers={"X-Forwarded-For": SPOOFED, "X-Request-ID": "client-made-id"},
        )
        response = connection.getresponse()
        status, headers = response.status, response.headers
        response.read()
        connection.close()
        assert status == 200
        ids = headers.get_all("X-Request-ID") or []
        assert len(ids) == 1, ids
        request_id = ids[0]

        def logged(path: Path, needle: str) -> bool:
            return path.is_file() and needle in path.read_text()

        _wait_for(lambda: logged(tmp_path / "access.log", request_id), "nginx's access line", 30)
        assert f"{CLIENT} {request_id}" in (tmp_path / "access.log").read_text()
        _wait_for(lambda: logged(station_log, f'"request_id":"{request_id}"'), "the station", 60)
        lines = [
            orjson.loads(line)
            for line in station_log.read_text().splitlines()
            if line.startswith("{") and request_id in line
        ]
        access = [line for line in lines if line.get("path") == "/healthz"]
        assert access and access[0]["client_ip"] == CLIENT, lines
        assert SPOOFED not in station_log.read_text()

        plain = http.client.HTTPConnection(PROXY, http_port, timeout=30)
        plain.request("GET", "/healthz")
        redirect = plain.getresponse()
        redirect.read()
        plain.close()
        assert redirect.status == 301
        assert redirect.headers["Location"].startswith("https://")
    finally:
        for process in (nginx, station):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=60)
        shutil.rmtree(tmp_path / "proxy", ignore_errors=True)
