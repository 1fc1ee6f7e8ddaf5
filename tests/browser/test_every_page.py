"""Every page of the station, walked in Chromium at a phone's and a desktop's size, by each role.

The pages come from the route registry: every GET route outside ``/api/`` that answers an
administrator with an HTML page (a route with a field in its path is reached through a link one
of those pages shows), so a new page is walked without being named here. An administrator sees
every page at 390x844 and 1366x900; each other role sees the pages its navigation menu offers,
at both sizes too.
Each page must:

- not scroll sideways (``document.documentElement.scrollWidth`` within the viewport), with every
  control inside the viewport and every table too wide for it inside its own scroll container;
- have every navigation link and Sign out inside the viewport, visible and not covered once the
  menu is open: on the phone the menu is one button in the header (``aria-expanded``,
  ``aria-controls``) and each group opens in turn;
- have no serious or critical axe-core violation (the menus' colours are checked with every
  group open, once per role and size).

The administrator's walk saves each page as ``build/screenshots/<page>-<width>.png`` for review.
One server and one browser context per role and size keep the walk inside the CI budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import APIResponse, Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from alertstation.app import create_app
from alertstation.db.engine import make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.http.permissions import ROLES, role_permissions
from alertstation.http.templates import navigation_menu
from tests.browser.accessibility import serious_violations
from tests.browser.conftest import PAGE_TIMEOUT_MS, LiveServer, create_user, serve_in_thread
from tests.browser.conftest import sign_in as sign_in_form
from tests.browser.test_eas_pages_layout import seed
from tests.browser.test_location_page import load_catalog
from tests.support import create_database, make_settings

PHONE, DESKTOP = 390, 1366
SIZES = {PHONE: {"width": 390, "height": 844}, DESKTOP: {"width": 1366, "height": 900}}
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PASSWORD = "a long password for the page walk"
# Files and data, not pages: never asked for while finding the pages.
NOT_A_PAGE = re.compile(r"^/api/|\.(csv|pdf|wav|svg|json|mp3|png)$")
# GET routes with a field in the path that no page links to: JSON or audio for the page scripts.
NOT_LINKED = {
    "/eas/manual/events/{activation_id:int}/confirmation": "JSON for the send dialog",
    "/messages/{message_id:int}/confirmation": "JSON for the resend dialog",
}
# Where a page may be slow to settle (polling scripts): how long to wait for a quiet network.
SETTLE_MS = 2_000


@dataclass
class Walk:
    """The server walked, the pages an administrator can open, and the accounts."""

    server: LiveServer
    pages: list[str]
    unreached: set[str] = field(default_factory=set)
    anonymous: list[str] = field(default_factory=list)  # pages only a signed-out browser sees


# --- finding the pages ------------------------------------------------------------------------


def _template_pattern(template: str) -> re.Pattern[str]:
    """``/alerts/{alert_id:int}`` → a pattern matching ``/alerts/12``."""
    parts = re.split(r"(\{\w+(?::int)?\})", template)
    return re.compile(
        "^"
        + "".join(
            ("[0-9]+" if part.endswith(":int}") else "[^/?#]+")
            if part.startswith("{")
            else re.escape(part)
            for part in parts
        )
        + "$"
    )


def _is_page(response: APIResponse) -> bool:
    return response.status == 200 and response.headers["content-type"].startswith("text/html")


def find_pages(browser: Browser, server: LiveServer) -> Walk:
    """Return the paths that answer an administrator with HTML, and the unreached templates."""
    context = browser.new_context(base_url=server.url)
    public = [
        r.path
        for r in server.app.registry
        if r.method == "GET" and r.access.kind == "public" and "{" not in r.path
    ]
    anonymous = [
        path
        for path in public
        if not NOT_A_PAGE.search(path)
        and _is_page(context.request.get(path, headers={"Accept": "text/html"}, max_redirects=0))
    ]
    page = context.new_page()
    sign_in_form(page, server, "walk-admin", PASSWORD)
    routes = [r.path for r in server.app.registry if r.method == "GET"]
    fixed = [path for path in routes if "{" not in path and not NOT_A_PAGE.search(path)]
    templated = [path for path in routes if "{" in path and not NOT_A_PAGE.search(path)]
    pages: list[str] = []
    links: set[str] = set()
    for path in fixed:
        response = context.request.get(path, headers={"Accept": "text/html"}, max_redirects=0)
        if _is_page(response):
            pages.append(path)
            links |= {
                urlsplit(href).path for href in re.findall(r'href="(/[^"#?]*)', response.text())
            }
    unreached = set()
    for template in templated:
        pattern = _template_pattern(template)
        found = sorted(link for link in links if pattern.match(link))
        if found:
            pages.append(found[0])
        else:
            unreached.add(template)
    context.close()
    return Walk(server, pages, unreached, [path for path in anonymous if path not in pages])


@pytest.fixture(scope="module")
def walk(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walk]:
    """One server for the whole walk, with an account per role and something on every page."""
    tmp_path = tmp_path_factory.mktemp("walk")
    url = create_database("sqlite", tmp_path)
    engine = make_engine(url)
    try:
        upgrade_to_head(engine)
        settings = make_settings(tmp_path, url)
        app = create_app(settings, engine=engine)
        errors: list[BaseException] = []
        with serve_in_thread(app, errors) as base_url:
            server = LiveServer(base_url, engine, settings, app, errors)
            load_catalog(server)
            seed(server)
            for role in ROLES:
                create_user(server, f"walk-{role}", role, PASSWORD)
            yield find_pages(browser, server)
        if errors:
            pytest.fail(f"the live server raised: {errors!r}")
    finally:
        engine.dispose()


# --- what is checked on each page -------------------------------------------------------------

# Sideways: the page's own overflow, controls outside the viewport, tables too wide for it that
# do not scroll inside their own container.
_FITS = """() => {
  const width = window.innerWidth;
  const scrolls = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
      if (p === document.body) return false;
      const x = getComputedStyle(p).overflowX;
      if ((x === 'auto' || x === 'scroll') && p.getBoundingClientRect().right <= width + 1)
        return true; }
    return false; };
  const shown = (e) => e.offsetParent !== null && !e.closest('details:not([open])')
    && !e.closest('.site-menu:not(.open)') && !e.classList.contains('skip-link');
  const controls = 'main a, main button, main input, main select, main textarea';
  const outside = [...document.querySelectorAll(controls)]
    .filter(shown)
    .filter(e => { const r = e.getBoundingClientRect();
                   return r.width > 0 && (r.left < -1 || r.right > width + 1); })
    .filter(e => !scrolls(e))
    .map(e => e.outerHTML.slice(0, 100));
  const tables = [...document.querySelectorAll('main table')]
    .filter(e => { const r = e.getBoundingClientRect();
                   return r.right > width + 1 || r.left < -1; })
    .filter(e => !scrolls(e))
    .map(e => 'table#' + e.id + '.' + e.className);
  return {overflow: document.documentElement.scrollWidth - width, outside, tables};
}"""

# Every navigation link and the account's controls, each group opened in turn: inside the
# viewport (after scrolling to it), visible and the element found at its centre.
_MENU_REACH = """() => {
  const menu = document.getElementById('site-menu');
  const problems = [];
  const check = (e) => {
    e.scrollIntoView({block: 'nearest', inline: 'nearest'});
    const r = e.getBoundingClientRect();
    const style = getComputedStyle(e);
    const name = (e.textContent || '').trim().replace(/\\s+/g, ' ') || e.outerHTML.slice(0, 60);
    if (r.width === 0 || r.height === 0 || style.visibility !== 'visible'
        || style.opacity === '0') {
      problems.push(name + ': not visible'); return; }
    if (r.left < -1 || r.top < -1 || r.right > window.innerWidth + 1
        || r.bottom > window.innerHeight + 1) {
      problems.push(name + ': outside the viewport ' + JSON.stringify(r)); return; }
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(hit === e || e.contains(hit))) {
      problems.push(name + ': covered by ' + (hit ? hit.outerHTML.slice(0, 60) : 'nothing'));
    }
  };
  const groups = [...menu.querySelectorAll('.nav-group details')];
  menu.querySelectorAll('.nav > li > a, .nav-group summary, .account a, .account button')
    .forEach(check);
  groups.forEach(group => {
    group.open = true;
    group.querySelectorAll('a').forEach(check);
    group.open = false;
  });
  window.scrollTo(0, 0);
  return problems;
}"""


def settle(page: Page) -> None:
    """Wait for the page's own requests to end (a page that keeps polling is taken as it is)."""
    try:
        page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
    except PlaywrightTimeout:
        pass


def menu_problems(page: Page, phone: bool) -> list[str]:
    """Open the menu (the phone's button), check every link of it, and close it again."""
    problems: list[str] = []
    toggle = page.locator("#nav-toggle")
    if phone:
        if not toggle.is_visible():
            return ["no menu button in the header"]
        if toggle.get_attribute("aria-expanded") != "false":
            problems.append("the menu button does not say it is closed")
        if toggle.get_attribute("aria-controls") != "site-menu":
            problems.append("the menu button does not name what it opens")
        if page.locator("#site-menu").is_visible():
            problems.append("the menu is open before the button is pressed")
        toggle.click()
        if toggle.get_attribute("aria-expanded") != "true":
            problems.append("the menu button does not say it is open")
    elif toggle.is_visible():
        problems.append("a menu button on a desktop screen")
    problems += page.evaluate(_MENU_REACH)
    if phone:
        toggle.click()
    return problems


def menu_colours(page: Page, phone: bool, shot: Path | None = None) -> list[str]:
    """axe-core on the header with the menu open and each group open in turn.

    ``shot``: save the phone's open menu there, for review.
    """
    if phone:
        page.locator("#nav-toggle").click()
        if shot is not None:
            page.screenshot(path=str(shot))
    found = serious_violations(page, within="header")
    for summary in page.locator("#site-menu .nav-group summary").all():
        summary.click()
        found += serious_violations(page, within="header")
        summary.click()
    if phone:
        page.locator("#nav-toggle").click()
    return found


def slug(path: str) -> str:
    """``/admin/zones`` → ``admin-zones``; ``/`` → ``overview``."""
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "overview"


def walk_pages(page: Page, paths: list[str], width: int, *, screenshots: bool) -> dict[str, object]:
    """Open each page in turn and return what is wrong with each (nothing: an empty dict)."""
    problems: dict[str, object] = {}
    phone = width < 600
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    for index, path in enumerate(paths):
        errors.clear()
        response = page.goto(path)
        found: dict[str, object] = {}
        if response is None or response.status != 200:
            problems[path] = {"status": None if response is None else response.status}
            continue
        settle(page)
        if screenshots:
            page.screenshot(path=str(SCREENSHOTS / f"{slug(path)}-{width}.png"), full_page=True)
        fits = page.evaluate(_FITS)
        if fits["overflow"] > 0 or fits["outside"] or fits["tables"]:
            found["fits"] = fits
        menu = menu_problems(page, phone)
        if menu:
            found["menu"] = menu
        axe = serious_violations(page)
        if index == 0:
            shot = SCREENSHOTS / f"menu-open-{width}.png" if screenshots else None
            axe += menu_colours(page, phone, shot)
        if axe:
            found["axe"] = axe
        if errors:
            found["script errors"] = list(errors)
        if found:
            problems[path] = found
    return problems


def report(problems: dict[str, object], name: str) -> None:
    """Keep what was found beside the screenshots, and fail when anything was."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"problems-{name}.json"
    if not problems:
        target.unlink(missing_ok=True)
        return
    target.write_text(json.dumps(problems, indent=1))
    pytest.fail(f"{len(problems)} pages with problems (all in {target}): {problems}")


# --- the walks --------------------------------------------------------------------------------


def test_the_pages_come_from_the_route_registry(walk: Walk) -> None:
    assert {"/", "/alerts", "/admin/users", "/eas/log", "/docs"} <= set(walk.pages)
    assert walk.anonymous == ["/login"]
    assert not [path for path in walk.pages if NOT_A_PAGE.search(path)]
    assert any(re.fullmatch(r"/alerts/[0-9]+", path) for path in walk.pages)
    # A templated page no page links to must be named, with why it is not walked.
    assert walk.unreached == set(NOT_LINKED)


@pytest.mark.parametrize("width", sorted(SIZES))
def test_every_page_as_an_administrator(walk: Walk, browser: Browser, width: int) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(base_url=walk.server.url, viewport=SIZES[width])
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        problems = walk_pages(page, walk.anonymous, width, screenshots=True)
        sign_in_form(page, walk.server, "walk-admin", PASSWORD)
        problems |= walk_pages(page, walk.pages, width, screenshots=True)
    finally:
        context.close()
    report(problems, f"admin-{width}")
    for path in walk.pages:
        assert (SCREENSHOTS / f"{slug(path)}-{width}.png").stat().st_size > 0


@pytest.mark.parametrize("width", sorted(SIZES))
@pytest.mark.parametrize("role", sorted(set(ROLES) - {"admin"}))
def test_each_role_on_the_pages_its_menu_offers(
    walk: Walk, browser: Browser, role: str, width: int
) -> None:
    offered: list[str] = []
    for item in navigation_menu(role_permissions(role), ""):
        offered += [link["href"] for link in item.get("links", [item])]
    assert offered and set(offered) <= set(walk.pages), set(offered) - set(walk.pages)
    context = browser.new_context(base_url=walk.server.url, viewport=SIZES[width])
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        sign_in_form(page, walk.server, f"walk-{role}", PASSWORD)
        problems = walk_pages(page, offered, width, screenshots=False)
    finally:
        context.close()
    report(problems, f"{role}-{width}")
