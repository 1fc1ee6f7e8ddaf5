"""A station on three network namespaces: two hosts and a database host, joined by a bridge.

``db`` runs PostgreSQL (with ``deploy/postgresql/alertstation.conf``), icecast2 and nginx (the
``deploy/nginx`` site with the ``deploy/nginx/alertstation-upstream.conf`` upstream of both
hosts). Hosts ``a`` and ``b`` each run one ``alertstation serve`` and one ``alertstation worker``
as real processes. Every namespace has a veth pair whose other end is a port of a bridge in the
test's own namespace, so the test reaches every address and can cut one host's link
(``ip link set ... down`` on its bridge port). The message archive folder is shared by both
hosts (a network filesystem in a real site); each host has its own data directory otherwise.

Everything is torn down in reverse order, also on failure: processes killed by namespace,
namespaces and the bridge deleted.
"""

from __future__ import annotations

import http.client
import os
import pwd
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.icecast import CONFIG as ICECAST_CONFIG
from tests.icecast import SERVER_ACCOUNT as ICECAST_ACCOUNT
from tests.operations.test_operations_deploy import _self_signed

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PYTHON = [sys.executable, "-m", "alertstation"]
PG_PORT = 5432
ICECAST_PORT = 8000
WEB_PORT = 8080
#: Waits on real daemons (a loaded 2-core CI machine): generous, never a pass/fail timing.
DEADLINE = 120.0
PASSWORD = "multi-host test password 1"


def run(
    *command: str, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), check=check, capture_output=True, text=True, timeout=timeout
    )


def namespaces_available() -> str | None:
    """Return why network namespaces cannot be used here, or None when they can."""
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    probe = f"asprobe{os.getpid()}"
    made = run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()} (needs root or CAP_SYS_ADMIN)"
    run("ip", "netns", "del", probe, check=False)
    return None


def require_namespaces() -> None:
    """Skip without network namespaces, with the reason; under ``CI=true`` fail instead."""
    why = namespaces_available()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the multi-host test needs network namespaces under CI: {why}")
    pytest.skip(f"network namespaces are not available: {why}")


def wait_until(check: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            value = check()
        except (OSError, http.client.HTTPException):
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what} within {deadline:.0f} s")


@dataclass
class Namespace:
    name: str
    address: str
    port: str  # the bridge-side end of its veth pair, in the test's namespace

    def command(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def pids(self) -> list[int]:
        listed = run("ip", "netns", "pids", self.name, check=False).stdout.split()
        return [int(pid) for pid in listed]

    def kill_all(self) -> list[int]:
        """kill -9 every process of the namespace; return their pids."""
        killed = self.pids()
        for pid in killed:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return killed


PREFIX = "asmh"  # namespaces asmh<pid>db, asmh<pid>a, asmh<pid>b; bridge asmh<pid>


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers() -> list[str]:
    """Delete the namespaces and bridges of runs whose test process is gone (killed before its
    teardown); return their names."""
    removed = []
    listed = run("ip", "netns", "list", check=False).stdout.split("\n")
    for line in listed:
        name = line.split(" ", 1)[0]
        tag = name[len(PREFIX) :].rstrip("abd")
        if not name.startswith(PREFIX) or not tag.isdigit() or _alive(int(tag)):
            continue
        Namespace(name, "", "").kill_all()
        run("ip", "netns", "del", name, check=False)
        run("ip", "link", "del", f"{PREFIX}{tag}", check=False)
        removed.append(name)
    return removed


class Network:
    """A bridge and three namespaces on a private /24."""

    def __init__(self) -> None:
        remove_leftovers()
        tag = f"{os.getpid()}"
        self.bridge = f"{PREFIX}{tag}"
        third = 100 + os.getpid() % 150
        self.prefix = f"10.231.{third}"
        self.gateway = f"{self.prefix}.1"
        self.spaces = {
            name: Namespace(
                f"{PREFIX}{tag}{name}", f"{self.prefix}.{10 + i}", f"{PREFIX}{tag}{name}"
            )
            for i, name in enumerate(("db", "a", "b"))
        }
        self._made: list[str] = []
        self._bridge_made = False

    def up(self) -> None:
        run("ip", "link", "add", self.bridge, "type", "bridge")
        self._bridge_made = True
        run("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        run("ip", "link", "set", self.bridge, "up")
        for space in self.spaces.values():
            run("ip", "netns", "add", space.name)
            self._made.append(space.name)
            run(
                "ip", "link", "add", space.port, "type", "veth",
                "peer", "name", "eth0", "netns", space.name,
            )  # fmt: skip
            run("ip", "link", "set", space.port, "master", self.bridge, "up")
            run("ip", "-n", space.name, "addr", "add", f"{space.address}/24", "dev", "eth0")
            run("ip", "-n", space.name, "link", "set", "eth0", "up")
            run("ip", "-n", space.name, "link", "set", "lo", "up")

    def cut(self, name: str) -> None:
        run("ip", "link", "set", self.spaces[name].port, "down")

    def restore(self, name: str) -> None:
        run("ip", "link", "set", self.spaces[name].port, "up")

    def down(self) -> None:
        for name in reversed(self._made):
            space = next(s for s in self.spaces.values() if s.name == name)
            space.kill_all()
        time.sleep(0.5)
        for name in reversed(self._made):
            run("ip", "netns", "del", name, check=False)
        if self._bridge_made:
            run("ip", "link", "del", self.bridge, check=False)


class Postgres:
    """A cluster in the ``db`` namespace, with the deploy/ settings included."""

    def __init__(self, space: Namespace, folder: Path) -> None:
        self.space = space
        self.folder = folder
        folder.mkdir()
        self.data = folder / "data"
        self.bin = Path(_pg_bin())
        account = pwd.getpwnam("postgres")
        os.chown(folder, account.pw_uid, account.pw_gid)
        self._as_postgres(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        deploy_conf = self.data / "alertstation.conf"
        shutil.copy(DEPLOY / "postgresql" / "alertstation.conf", deploy_conf)
        os.chown(deploy_conf, account.pw_uid, account.pw_gid)
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("include 'alertstation.conf'\n")
        with (self.data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {space.address.rsplit('.', 1)[0]}.0/24 trust\n")
        self.running = False
        self.url = f"postgresql+psycopg://postgres@{space.address}:{PG_PORT}/postgres"

    def _as_postgres(self, *argv: str, namespace: bool = False) -> None:
        command = ["runuser", "-u", "postgres", "--", *argv]
        if namespace:
            command = self.space.command(*command)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=180)

    def start(self) -> None:
        options = (
            f"-p {PG_PORT} -k {self.folder} -c listen_addresses={self.space.address} "
            "-c fsync=off -c synchronous_commit=off -c max_connections=200"
        )
        self._as_postgres(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "server.log"),
            "-w", "-t", "120", "-o", options, "start", namespace=True,
        )  # fmt: skip
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        self._as_postgres(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "120", "stop",
            namespace=True,
        )  # fmt: skip
        self.running = False

    def log(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""


def _pg_bin() -> str:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return str(found[-1].parent)
    initdb = shutil.which("initdb")
    if initdb is None:
        pytest.fail("PostgreSQL server binaries not found; run scripts/install-test-deps.sh")
    return str(Path(initdb).parent)


def start_icecast(space: Namespace, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start icecast2 in ``space`` on :data:`ICECAST_PORT`; return it and its source password."""
    folder.mkdir()
    (folder / "log").mkdir()
    password = secrets.token_urlsafe(12)
    config = folder / "icecast.xml"
    config.write_text(
        ICECAST_CONFIG.format(
            password=password,
            admin=secrets.token_urlsafe(12),
            port=ICECAST_PORT,
            mounts="",
            logdir=folder / "log",
        ).replace("127.0.0.1", space.address)
    )
    account = pwd.getpwnam(ICECAST_ACCOUNT)
    for path in (folder, folder / "log", config):
        os.chown(path, account.pw_uid, account.pw_gid)
    process = subprocess.Popen(
        space.command("runuser", "-u", ICECAST_ACCOUNT, "--", "icecast2", "-c", str(config)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process, password


def nginx_config(folder: Path, listen: str, upstreams: list[str]) -> Path:
    """Write nginx.conf from the deploy/ site and upstream files, for the hosts ``upstreams``."""
    folder.mkdir()
    cert, key = _self_signed(folder)
    upstream = (DEPLOY / "nginx" / "alertstation-upstream.conf").read_text()
    servers = "".join(f"    server {host} max_fails=1 fail_timeout=10s;\n" for host in upstreams)
    lines = [line for line in upstream.splitlines(keepends=True) if "server 10.0.0." not in line]
    upstream = "".join(lines).replace(
        "upstream alertstation {\n", "upstream alertstation {\n" + servers
    )
    site = (DEPLOY / "nginx" / "alertstation.conf").read_text()
    assert "proxy_pass http://127.0.0.1:8080;" in site
    site = (
        site.replace("proxy_pass http://127.0.0.1:8080;", "proxy_pass http://alertstation;")
        .replace("listen [::]:80;\n", "")
        .replace("listen [::]:443 ssl http2;\n", "")
        .replace("listen 80;", f"listen {listen}:80;")
        .replace("listen 443 ssl http2;", f"listen {listen}:443 ssl;")
        .replace("/var/lib/alertstation/tls/fullchain.pem", str(cert))
        .replace("/var/lib/alertstation/tls/privkey.pem", str(key))
    )
    (folder / "upstream.conf").write_text(upstream)
    (folder / "site.conf").write_text(site)
    main = folder / "nginx.conf"
    main.write_text(
        "daemon off;\n"
        f"pid {folder}/nginx.pid;\n"
        f"error_log {folder}/error.log;\n"
        "worker_processes 1;\n"
        "events {}\n"
        "http {\n"
        f"    access_log {folder}/access.log;\n"
        f"    client_body_temp_path {folder}/body;\n"
        f"    proxy_temp_path {folder}/proxy;\n"
        f"    include {folder}/upstream.conf;\n"
        f"    include {folder}/site.conf;\n"
        "}\n"
    )
    return main


APLAY = """#!{python}
# A sound card stand-in: logs when it starts, ticks every 0.2 s while the WAV would play, and is
# killed early on Stop or a lost lease (then no "end" line).
import io, sys, time, wave
data = sys.stdin.buffer.read()
seconds = 0.0
try:
    w = wave.open(io.BytesIO(data))
    seconds = w.getnframes() / w.getframerate()
except Exception:
    pass
def line(text):
    with open({log!r}, "a") as out:
        out.write(text + "\\n")
line(f"start {{time.time()}} {{seconds:.2f}}")
end = time.monotonic() + seconds
while time.monotonic() < end:
    line(f"tick {{time.time()}}")
    time.sleep(0.2)
line(f"end {{time.time()}}")
"""


@dataclass
class Host:
    """One host: its namespace, environment and its two station processes."""

    name: str
    space: Namespace
    root: Path
    env: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def aplay_log(self) -> Path:
        return self.root / "aplay.log"

    def start(self, what: str) -> None:
        args = [what]
        if what == "serve":
            args += ["--bind", f"{self.space.address}:{WEB_PORT}", "--workers", "1"]
            args += ["--threads", "4"]
        log = (self.root / f"{what}.log").open("ab")
        self.processes[what] = subprocess.Popen(
            self.space.command(*PYTHON, *args),
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def log(self, what: str) -> str:
        path = self.root / f"{what}.log"
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    def plays(self) -> list[tuple[str, float]]:
        """Return the aplay stand-in's lines as (kind, wall time)."""
        if not self.aplay_log.exists():
            return []
        found = []
        for line in self.aplay_log.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 2:
                found.append((parts[0], float(parts[1])))
        return found


def make_host(name: str, space: Namespace, base: Path, env: dict[str, str], archive: Path) -> Host:
    root = base / f"host-{name}"
    (root / "data").mkdir(parents=True)
    (root / "assets").mkdir()
    (root / "data" / "eas-archive").symlink_to(archive)
    tools = root / "bin"
    tools.mkdir()
    host = Host(name, space, root, {})
    aplay = tools / "aplay"
    aplay.write_text(APLAY.format(python=sys.executable, log=str(host.aplay_log)))
    aplay.chmod(0o755)
    host.env = {
        **env,
        "ALERTSTATION_DATA_DIR": str(root / "data"),
        "ALERTSTATION_ASSETS_DIR": str(root / "assets"),
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
    }
    return host


class Web:
    """An HTTPS client of the site's nginx, signed in as the admin."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.context = ssl._create_unverified_context()  # noqa: S323 - the test's own certificate
        self.auth: dict[str, str] = {}

    def call(
        self, method: str, path: str, body: Any = None, timeout: float = 30
    ) -> tuple[int, Any]:
        conn = http.client.HTTPSConnection(self.address, 443, timeout=timeout, context=self.context)
        try:
            headers = {"Accept": "application/json", **self.auth}
            data = None
            if body is not None:
                data = orjson.dumps(body)
                headers["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            self.last_headers = {k.lower(): v for k, v in response.getheaders()}
            try:
                parsed = orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                parsed = raw.decode(errors="replace")
            return response.status, parsed
        finally:
            conn.close()

    def sign_in(self) -> None:
        status, body = self.call("POST", "/auth/login", {"username": "admin", "password": PASSWORD})
        assert status == 200, body
        cookie = self.last_headers["set-cookie"].split(";", 1)[0]
        self.auth = {"Cookie": cookie, "X-CSRF-Token": body["csrf_token"]}


CAP_NS = "urn:oasis:names:tc:emergency:cap:1.2"


def cap_alert(identifier: str, sent: str) -> str:
    """Return a minimal CAP 1.2 alert (a severe thunderstorm warning for one county)."""
    return f"""<alert xmlns="{CAP_NS}">
  <identifier>{identifier}</identifier>
  <sender>multihost@example.org</sender>
  <sent>{sent}</sent>
  <status>Actual</status>
  <msgType>Alert</msgType>
  <scope>Public</scope>
  <info>
    <category>Met</category>
    <event>Severe Thunderstorm Warning</event>
    <urgency>Immediate</urgency>
    <severity>Severe</severity>
    <certainty>Observed</certainty>
    <eventCode><valueName>SAME</valueName><value>SVR</value></eventCode>
    <expires>2099-01-01T00:00:00+00:00</expires>
    <area>
      <areaDesc>Somewhere</areaDesc>
      <geocode><valueName>SAME</valueName><value>048439</value></geocode>
    </area>
  </info>
</alert>
"""


class Agency(ThreadingHTTPServer):
    """The outside world on the test's side of the bridge: a CAP feed that grows as alerts are
    published, and a JSON webhook (an apprise ``json://`` channel) that keeps every delivery."""

    daemon_threads = True

    def __init__(self, address: str) -> None:
        super().__init__((address, 0), _AgencyHandler)
        self.alerts: list[str] = []
        self.identifiers: list[str] = []
        self.deliveries: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def publish(self, identifier: str) -> None:
        sent = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        with self.lock:
            self.alerts.append(cap_alert(identifier, sent))
            self.identifiers.append(identifier)

    def feed(self) -> bytes:
        with self.lock:
            body = "".join(self.alerts)
        return f'<?xml version="1.0" encoding="UTF-8"?><alerts>{body}</alerts>'.encode()


class _AgencyHandler(BaseHTTPRequestHandler):
    server: Agency

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - the base's name
        body = self.server.feed()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - the base's name
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            delivery = orjson.loads(raw)
        except orjson.JSONDecodeError:
            delivery = {"raw": raw.decode(errors="replace")}
        with self.server.lock:
            self.server.deliveries.append(delivery)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
