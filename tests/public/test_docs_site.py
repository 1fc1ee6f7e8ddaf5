"""The documentation site: the operator guides of web/guides served as HTML, in task order, free
of module names and repository paths; moved guide names; search; the developer docs not served."""

from __future__ import annotations

import re
from pathlib import Path

import falcon.testing
import pytest
from markupsafe import escape

from alertstation.errors import Invalid, NotFound
from alertstation.operations.public.guides import (
    MAX_QUERY_CHARS,
    MOVED,
    TASKS,
    THEORY,
    GuideLibrary,
    guides_dir,
    parse_guide,
)

ROOT = Path(__file__).resolve().parents[2]
GUIDES = ROOT / "web" / "guides"
GUIDE_FILES = sorted(p.stem for p in GUIDES.glob("*.md"))
TEMPLATES = ROOT / "web" / "templates"

# What an operator guide never names: a Python module, a source or repository path, a file of
# the source tree. (A link to /docs/<name> is preceded by "/" and is fine.)
DEVELOPER_WORDS = re.compile(
    r"\balertstation\.(?!tar\.gz)[a-z_]"
    r"|(?<![/\w])(?:src|docs|web|tests|migrations|scripts|deploy|benchmarks|templates)/"
    r"|\b\w+\.(?:py|pyx|md|html|js|css)\b"
    r"|\bCHANGELOG\b|\bpytest\b"
)
_ARTICLE = re.compile(r'<article class="guide"[^>]*>(.*)</article>', re.DOTALL)


def test_the_station_serves_the_operator_guides_folder() -> None:
    assert guides_dir() == GUIDES
    assert GuideLibrary().names() == GUIDE_FILES
    assert {*TASKS, *THEORY} == set(GUIDE_FILES)


def test_every_guide_is_rendered_with_its_title_and_names_no_module_or_path(
    client: falcon.testing.TestClient,
) -> None:
    index = client.simulate_get("/docs")
    assert index.status_code == 200
    for name in GUIDE_FILES:
        assert f'href="/docs/{name}"' in index.text, name
        source = (GUIDES / f"{name}.md").read_text()
        # Links between guides name their files (they become /docs/<name>); nothing else may.
        assert DEVELOPER_WORDS.findall(re.sub(r"\]\([a-z0-9-]+\.md\)", "]()", source)) == [], name
        result = client.simulate_get(f"/docs/{name}")
        assert result.status_code == 200, name
        title = source.splitlines()[0].removeprefix("# ")
        assert f"<title>{escape(title)} · Alert Station</title>" in result.text, name
        article = _ARTICLE.search(result.text)
        assert article, name
        body = article.group(1)
        assert "<h1>" in body and "\n# " not in body, name  # Markdown became HTML
        assert DEVELOPER_WORDS.findall(body) == [], name
        for link in re.findall(r'href="(/docs/[^"#]*)', body):
            assert client.simulate_get(link).status_code == 200, (name, link)
    assert DEVELOPER_WORDS.findall(_main(index.text)) == []


def _main(page: str) -> str:
    return page[page.index("<main") : page.index("</main>")]


def test_index_lists_the_quick_start_and_the_tasks_in_order_then_theory(
    client: falcon.testing.TestClient,
) -> None:
    index = client.simulate_get("/docs").text
    places = [index.index(f'<li><a href="/docs/{name}">') for name in TASKS]
    assert places == sorted(places)
    theory = index.index('id="theory-heading"')
    assert places[-1] < theory
    for name in THEORY:
        assert theory < index.index(f'href="/docs/{name}"')
    for title in ("Quick start", "Set the broadcast area", "Add a receiver or stream",
                  "Send a weekly test", "Approve a forward", "Stop a message",
                  "Read and export the station log", "Back up and restore", "Upgrade"):  # fmt: skip
        assert f">{title}</a>" in index, title


def test_guides_render_tables_code_and_links_between_guides(
    client: falcon.testing.TestClient,
) -> None:
    quick = client.simulate_get("/docs/quick-start").text
    assert "<table>" in quick and "<th>role</th>" in quick
    assert '<a href="/docs/set-the-broadcast-area">Set the broadcast area</a>' in quick
    upgrade = client.simulate_get("/docs/upgrade").text
    assert "<pre><code>alertstation backup --out /var/backups/alertstation.tar.gz\n" in upgrade
    same = client.simulate_get("/docs/theory-same").text
    assert '<a href="/docs/theory-matching">How matching works</a>' in same
    assert "two of its three bursts" in same


def test_developer_docs_are_not_served(client: falcon.testing.TestClient) -> None:
    for name in ("architecture", "decisions", "public-pages", "benchmarks"):
        result = client.simulate_get(f"/docs/{name}", headers={"Accept": "application/json"})
        assert result.status_code == 404, name


def test_moved_guide_names_redirect_to_their_task(client: falcon.testing.TestClient) -> None:
    for old, new in MOVED.items():
        assert new in GUIDE_FILES, old
        result = client.simulate_get(f"/docs/{old}")
        assert result.status_code == 301, old
        assert result.headers["location"].endswith(f"/docs/{new}"), old


def test_every_docs_link_of_a_page_or_module_leads_to_a_guide(
    client: falcon.testing.TestClient,
) -> None:
    links = set()
    for template in TEMPLATES.glob("*.html"):
        links |= set(re.findall(r'href="/docs/([a-z0-9-]+)', template.read_text()))
    for module in (ROOT / "src" / "alertstation").rglob("*.py"):  # links a page is handed
        links |= set(re.findall(r'"/docs/([a-z0-9-]+)', module.read_text()))
    assert links, "no page links to a guide"
    for name in sorted(links):
        result = client.simulate_get(f"/docs/{name}")
        if result.status_code == 301:  # a page not yet pointed at its new guide
            assert result.headers["location"].endswith(f"/docs/{MOVED[name]}"), name
            result = client.simulate_get(f"/docs/{MOVED[name]}")
        assert result.status_code == 200, name


@pytest.mark.parametrize(
    "path",
    ["/docs/no-such-guide", "/docs/STOP-A-MESSAGE", "/docs/stop-a-message.md", "/docs/..%2Fsetup"],
)
def test_unknown_guides_are_404(client: falcon.testing.TestClient, path: str) -> None:
    result = client.simulate_get(path, headers={"Accept": "application/json"})
    assert result.status_code == 404
    assert result.json["error"]["code"] == "not_found"


def test_search_for_eom_finds_the_stop_guide(client: falcon.testing.TestClient) -> None:
    page = client.simulate_get("/docs/search", params={"q": "EOM"})
    assert page.status_code == 200
    assert 'href="/docs/stop-a-message"' in page.text
    assert 'value="EOM"' in page.text
    found = client.simulate_get(
        "/docs/search", params={"q": "eom"}, headers={"Accept": "application/json"}
    )
    names = [hit["name"] for hit in found.json["results"]]
    assert "stop-a-message" in names and "back-up-and-restore" not in names
    hit = found.json["results"][names.index("stop-a-message")]
    assert hit["url"] == "/docs/stop-a-message" and "eom" in hit["snippet"].lower()


def test_search_needs_every_word_and_escapes_the_query(client: falcon.testing.TestClient) -> None:
    both = client.simulate_get(
        "/docs/search", params={"q": "eom fail2ban"}, headers={"Accept": "application/json"}
    )
    assert both.json["results"] == []
    empty = client.simulate_get("/docs/search", params={"q": "<script>zqxjv</script>"})
    assert empty.status_code == 200
    assert "<script>zqxjv</script>" not in empty.text
    assert "Nothing found" in empty.text


def test_search_refuses_an_overlong_query(client: falcon.testing.TestClient) -> None:
    result = client.simulate_get(
        "/docs/search",
        params={"q": "a" * (MAX_QUERY_CHARS + 1)},
        headers={"Accept": "application/json"},
    )
    assert result.status_code == 422
    assert "longer than" in result.json["error"]["message"]


def test_docs_need_no_sign_in(client: falcon.testing.TestClient) -> None:
    for path in ("/docs", "/docs/stop-a-message", "/docs/search?q=stop"):
        assert client.simulate_get(path).status_code == 200, path


def test_raw_html_in_a_guide_is_escaped(tmp_path: Path) -> None:
    (tmp_path / "evil.md").write_text(
        "# Evil\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))\n"
    )
    (tmp_path / "Not_A_Guide.md").write_text("# skipped\n")
    library = GuideLibrary(tmp_path)
    assert library.names() == ["evil"]
    html = library.html("evil")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html
    with pytest.raises(NotFound):
        library.get("Not_A_Guide")


def test_guide_title_and_summary_come_from_the_first_heading() -> None:
    guide = parse_guide("x", "# The title\n\nFirst line\nsecond line.\n\nMore.\n")
    assert (guide.title, guide.summary) == ("The title", "First line second line.")
    untitled = parse_guide("no-heading", "just text\n")
    assert (untitled.title, untitled.summary) == ("No heading", "")


def test_search_query_limits(tmp_path: Path) -> None:
    library = GuideLibrary(tmp_path)
    assert library.search("   ") == []
    with pytest.raises(Invalid, match="more than 8 words"):
        library.search("a b c d e f g h i")
