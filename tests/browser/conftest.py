"""Browser tests: the real app served on loopback, driven by Debian's headless Chromium.

``live_server`` serves a fresh app on a migrated SQLite file for each test (browser tests check
pages, not SQL, so they run on SQLite only). ``page`` is a new browser context and page per test,
opened on one Chromium per session, with ``base_url`` set so ``page.goto("/docs")`` works.
``page_log`` records what the page reported: console messages, uncaught errors, responses, failed
requests and Content-Security-Policy violations.

Chromium comes from ``scripts/install-test-deps.sh`` (Debian's ``chromium`` package); Playwright
never downloads a browser of its own here. Without Chromium the tests skip, except under
``make test`` or CI, where they fail.

Helpers for tests that need an account: ``create_user(live_server, ...)`` and
``sign_in(page, live_server, ...)``.
"""

from __future__ import annotations

import logging
import socketserver
import sys
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Playwright,
    Request,
    Response,
    sync_playwright,
)
from sqlalchemy import Engine

from alertstation.app import StationApp, create_app
from alertstation.auth import service as auth_service
from alertstation.db.engine import begin_write, make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.settings import Settings
from tests.support import create_database, make_settings, pg_required

CHROMIUM = Path("/usr/bin/chromium")
# Flags that keep Chromium quiet on a machine with no network beyond loopback.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# Playwright's timeouts are upper bounds for waiting on the page, not measurements.
PAGE_TIMEOUT_MS = 10_000
SCREENSHOT_KEY = pytest.StashKey[Path]()

log = logging.getLogger("tests.browser")


# --- the live server --------------------------------------------------------------------------


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    """A WSGI server answering each connection on its own thread; close joins those threads."""

    daemon_threads = False
    block_on_close = True
    # A failure inside a handler thread; the fixture turns any into a test error.
    errors: list[BaseException]

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name; loopback needs no lookup.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.server_address[1]
        self.setup_environ()

    def handle_error(self, request: Any, client_address: Any) -> None:
        ex = sys.exc_info()[1]
        # A browser may open a spare connection and drop it unused; that is not a server fault.
        if isinstance(ex, TimeoutError | ConnectionError):
            return
        if ex is not None:
            self.errors.append(ex)


class _QuietHandler(WSGIRequestHandler):
    """wsgiref's handler without the per-request line on stderr; idle sockets time out."""

    timeout = 5

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


@dataclass
class LiveServer:
    """A running app: its base URL (no trailing slash) and what it was built from."""

    url: str
    engine: Engine
    settings: Settings
    app: StationApp
    errors: list[BaseException] = field(default_factory=list)

    def url_for(self, path: str) -> str:
        """Return the absolute URL of ``path`` on this server."""
        return self.url + path


@contextmanager
def serve_in_thread(app: Any, errors: list[BaseException]) -> Iterator[str]:
    """Serve the WSGI ``app`` on a free loopback port until the block ends; yield the base URL.

    Exceptions the app lets escape are appended to ``errors`` (and still answered 500).
    """

    def guarded(environ: dict[str, Any], start_response: Any) -> Any:
        try:
            return app(environ, start_response)
        except BaseException as ex:
            errors.append(ex)
            raise

    server = _ThreadingWSGIServer(("127.0.0.1", 0), _QuietHandler)
    server.errors = errors
    server.set_app(guarded)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="live-server"
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def live_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """Serve a fresh app on its own migrated SQLite database for the length of one test.

    Indirect parametrisation passes keyword arguments to ``create_app``, for example
    ``@pytest.mark.parametrize("live_server", [{"identity_middleware": [...]}], indirect=True)``.
    """
    app_options: dict[str, Any] = getattr(request, "param", {})
    url = create_database("sqlite", tmp_path)
    engine = make_engine(url)
    try:
        upgrade_to_head(engine)
        settings = make_settings(tmp_path, url)
        app = create_app(settings, engine=engine, **app_options)
        errors: list[BaseException] = []
        with serve_in_thread(app, errors) as base_url:
            yield LiveServer(base_url, engine, settings, app, errors)
        if errors:
            pytest.fail(f"the live server raised: {errors!r}")
    finally:
        engine.dispose()


# --- the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """Start Playwright's driver once per session."""
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Debian Chromium for the whole session."""
    if not CHROMIUM.is_file():
        message = f"{CHROMIUM} is missing: run scripts/install-test-deps.sh (make test-deps)"
        if pg_required():
            pytest.fail(message)
        pytest.skip(message)
    chromium = playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS)
    )
    yield chromium
    chromium.close()


@pytest.fixture
def page(
    request: pytest.FixtureRequest, browser: Browser, live_server: LiveServer, tmp_path: Path
) -> Iterator[Page]:
    """A fresh context and page aimed at ``live_server``; a failing test leaves a screenshot."""
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    new_page = context.new_page()
    request.node.stash[SCREENSHOT_KEY] = tmp_path / "failure.png"
    yield new_page
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Screenshot the page of a failed browser test and name the file in the report."""
    report = yield
    page_fixture = getattr(item, "funcargs", {}).get("page")
    if report.when == "call" and report.failed and isinstance(page_fixture, Page):
        target = item.stash[SCREENSHOT_KEY]
        try:
            page_fixture.screenshot(path=str(target), full_page=True)
        except Exception as ex:  # the page may be what broke; the failure matters more
            report.sections.append(("browser screenshot", f"could not be taken: {ex}"))
        else:
            print(f"\nscreenshot of the failed page: {target}")
            report.sections.append(("browser screenshot", str(target)))
    return report


# --- what the page reported -------------------------------------------------------------------

# Installed before any page script; a CSP violation also reaches the console, this keeps details.
_RECORD_CSP_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push({
    directive: event.violatedDirective, blocked: event.blockedURI, sample: event.sample,
  });
});
"""


@dataclass
class PageLog:
    """Everything a page reported while a test ran."""

    page: Page
    console: list[ConsoleMessage] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    failed_requests: list[Request] = field(default_factory=list)

    def _on_console(self, message: ConsoleMessage) -> None:
        self.console.append(message)

    def _on_page_error(self, error: Exception) -> None:
        self.page_errors.append(str(error))

    def _on_response(self, response: Response) -> None:
        self.responses.append(response)

    def _on_request_failed(self, request: Request) -> None:
        self.failed_requests.append(request)

    def console_errors(self) -> list[str]:
        """Return the text of console messages at error level."""
        return [message.text for message in self.console if message.type == "error"]

    def responses_under(self, prefix: str) -> list[Response]:
        """Return responses whose URL path starts with ``prefix``."""
        return [r for r in self.responses if urlsplit(r.url).path.startswith(prefix)]

    def csp_violations(self) -> list[dict[str, Any]]:
        """Return the CSP violations the current document reported."""
        return self.page.evaluate("window.__cspViolations || []")


@pytest.fixture
def page_log(page: Page) -> PageLog:
    """Record console messages, page errors, responses and failed requests of ``page``."""
    record = PageLog(page)
    page.on("console", record._on_console)
    page.on("pageerror", record._on_page_error)
    page.on("response", record._on_response)
    page.on("requestfailed", record._on_request_failed)
    page.add_init_script(_RECORD_CSP_VIOLATIONS)
    return record


# --- helpers for tests that need accounts ----------------------------------------------------


def create_user(
    live_server: LiveServer, username: str, role: str, password: str
) -> auth_service.User:
    """Create an account in the live server's database and return it."""
    with begin_write(live_server.engine) as conn:
        return auth_service.create_user(conn, username=username, role=role, password=password)


# Where a browser still is after the sign-in form was refused: the form, or the form's target.
_SIGN_IN_PATHS = frozenset({"/login", "/auth/login"})


def sign_in(
    page: Page,
    live_server: LiveServer,
    username: str,
    password: str,
    *,
    expect_success: bool = True,
) -> Response | None:
    """Sign in through the form at ``/login`` and return the response the form led to.

    With ``expect_success`` (the default) the helper fails the test when the answer is an error
    or the browser is still on the sign-in form afterwards, quoting what the page said.
    """
    page.goto(live_server.url_for("/login"))
    form = page.locator("form", has=page.locator('input[name="username"]'))
    form.locator('input[name="username"]').fill(username)
    form.locator('input[name="password"]').fill(password)
    with page.expect_navigation() as navigation:
        form.locator('button[type="submit"], input[type="submit"], button:not([type])').click()
    response = navigation.value
    refused = response is None or not response.ok or urlsplit(page.url).path in _SIGN_IN_PATHS
    if expect_success and refused:
        pytest.fail(f"signing in as {username!r} failed: {page.locator('main').inner_text()}")
    return response
