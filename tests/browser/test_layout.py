"""The base layout in a real browser: navigation, styles, skip link, shortcuts, errors and CSP."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, PageLog

# Listens for the Navigation API's "navigate" event, which fires synchronously when a script
# calls location.assign(), so "no navigation happened" is an observation, not a wait.
_RECORD_NAVIGATIONS = """
window.__navigations = [];
navigation.addEventListener("navigate", (event) => {
  window.__navigations.push(new URL(event.destination.url).pathname);
});
"""

_BODY_STYLE = """() => {
  const style = getComputedStyle(document.body);
  return {
    background: style.backgroundColor, font: style.fontFamily, margin: style.marginTop,
  };
}"""


def _path(url: str) -> str:
    return urlsplit(url).path


def test_docs_page_renders_in_the_base_layout(page: Page, page_log: PageLog) -> None:
    response = page.goto("/docs", wait_until="networkidle")
    assert response is not None and response.status == 200
    expect(page).to_have_title("Documentation · Alert Station")
    expect(page.get_by_role("heading", level=1)).to_have_text("Documentation")

    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Docs")).to_have_attribute("aria-current", "page")
    expect(nav.get_by_role("link", name="Overview")).not_to_have_attribute("aria-current", "page")
    expect(page.locator("footer")).to_contain_text("Alert Station")

    styled = page.evaluate(_BODY_STYLE)
    blank = page.context.new_page()
    default = blank.evaluate(_BODY_STYLE)
    blank.close()
    assert styled["background"] != default["background"]
    assert styled["font"] != default["font"]
    assert styled["margin"] == "0px" != default["margin"]

    static = {_path(r.url): r.status for r in page_log.responses_under("/static/")}
    assert {"/static/css/app.css", "/static/js/app.js"} <= static.keys()
    assert set(static.values()) == {200}, static
    assert not [r.url for r in page_log.failed_requests if "/static/" in r.url]
    assert page_log.console_errors() == []
    assert page_log.page_errors == []


def test_skip_link_shows_on_first_tab_and_moves_focus_to_main(page: Page) -> None:
    page.goto("/docs")
    skip = page.get_by_role("link", name="Skip to content")
    hidden = skip.bounding_box()
    assert hidden is not None and hidden["x"] + hidden["width"] <= 0

    page.keyboard.press("Tab")
    expect(skip).to_be_focused()
    shown = skip.bounding_box()
    viewport = page.viewport_size
    assert shown is not None and viewport is not None
    assert 0 <= shown["x"] and shown["x"] + shown["width"] <= viewport["width"]
    assert 0 <= shown["y"] < viewport["height"]

    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()
    assert urlsplit(page.url).fragment == "main"


def test_g_then_h_asks_for_the_overview_and_g_then_d_goes_to_docs(
    page: Page, live_server: LiveServer
) -> None:
    page.goto("/docs")
    page.keyboard.press("g")
    with page.expect_navigation() as navigation:
        page.keyboard.press("h")
    # The overview needs an account: an anonymous browser is sent to sign in, then back to "/".
    response = navigation.value
    assert response is not None and response.status == 200
    asked = response.request.redirected_from
    assert asked is not None and asked.url == live_server.url_for("/")
    redirect = asked.response()
    assert redirect is not None and redirect.status == 303
    assert page.url == live_server.url_for("/login?next=%2F")
    expect(page.get_by_role("banner").get_by_role("link", name="Sign in")).to_be_visible()
    expect(page.get_by_role("heading", name="Station overview")).to_have_count(0)

    # The sign-in page focuses its first field; shortcuts only work outside form fields.
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("g")
    with page.expect_navigation(url=live_server.url_for("/docs")) as navigation:
        page.keyboard.press("d")
    assert navigation.value is not None and navigation.value.status == 200
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Docs")).to_have_attribute("aria-current", "page")


def test_shortcut_keys_typed_into_an_input_do_not_navigate(page: Page) -> None:
    page.add_init_script(_RECORD_NAVIGATIONS)
    page.goto("/docs")
    page.evaluate(
        """() => {
          const input = document.createElement("input");
          input.id = "typed";
          document.querySelector("main").append(input);
        }"""
    )
    page.locator("#typed").focus()
    page.keyboard.press("g")
    page.keyboard.press("h")
    page.keyboard.press("g")
    page.keyboard.press("d")
    expect(page.locator("#typed")).to_have_value("ghgd")
    assert page.evaluate("window.__navigations") == []
    assert _path(page.url) == "/docs"

    # The same keys outside the input do navigate, so the recorder above would have seen it.
    page.locator("#typed").blur()
    page.keyboard.press("g")
    with page.expect_navigation():
        page.keyboard.press("d")
    assert _path(page.url) == "/docs"
    expect(page.locator("#typed")).to_have_count(0)


def test_unknown_url_shows_the_html_not_found_page(page: Page, page_log: PageLog) -> None:
    response = page.goto("/no/such/page")
    assert response is not None and response.status == 404
    assert response.headers["content-type"].startswith("text/html")
    error = page.locator("section.error-page")
    expect(error).to_have_attribute("data-code", "not_found")
    expect(error.get_by_role("heading", level=1)).to_contain_text("404")
    expect(error).to_contain_text("/no/such/page")
    expect(error.get_by_role("link", name="Back to the overview")).to_have_attribute("href", "/")
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    static = {_path(r.url): r.status for r in page_log.responses_under("/static/")}
    assert static.get("/static/css/app.css") == 200
    assert page_log.page_errors == []


def test_pages_carry_a_csp_the_browser_enforces_without_violations(
    page: Page, page_log: PageLog
) -> None:
    response = page.goto("/docs")
    assert response is not None
    policy = response.headers.get("content-security-policy", "")
    assert "default-src 'self'" in policy
    assert page_log.csp_violations() == []
    assert not [m for m in page_log.console_errors() if "Content Security Policy" in m]

    # An inline script is refused and reported: the checks above would see a violation.
    page.evaluate(
        """() => {
          const script = document.createElement("script");
          script.textContent = "window.__inlineRan = true";
          document.body.append(script);
        }"""
    )
    page.wait_for_function("window.__cspViolations.length > 0")
    assert page.evaluate("window.__inlineRan === undefined")
    violations = page_log.csp_violations()
    assert [v["directive"] for v in violations] == ["script-src-elem"]
