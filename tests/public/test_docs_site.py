"""The documentation site: every guide served from docs/*.md, links between guides, search."""

from __future__ import annotations

from pathlib import Path

import falcon.testing
import pytest
from markupsafe import escape

from alertstation.errors import Invalid, NotFound
from alertstation.operations.public.guides import (
    MAX_QUERY_CHARS,
    THEORY,
    GuideLibrary,
    guides_dir,
    parse_guide,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDE_FILES = sorted(p.stem for p in DOCS.glob("*.md"))


def test_the_source_tree_serves_its_own_docs_folder() -> None:
    assert guides_dir() == DOCS
    assert GuideLibrary().names() == GUIDE_FILES
    assert {"eas-manual", "matching", *THEORY} <= set(GUIDE_FILES)


def test_every_guide_is_served_with_its_title_and_text(client: falcon.testing.TestClient) -> None:
    index = client.simulate_get("/docs")
    assert index.status_code == 200
    for name in GUIDE_FILES:
        assert f'href="/docs/{name}"' in index.text, name
        result = client.simulate_get(f"/docs/{name}")
        assert result.status_code == 200, name
        title = (DOCS / f"{name}.md").read_text().splitlines()[0].removeprefix("# ")
        assert f"<title>{escape(title)} · Alert Station</title>" in result.text, name
        assert "<h1>" in result.text and 'class="guide"' in result.text, name


def test_manual_eas_guide_renders_tables_code_and_guide_links(
    client: falcon.testing.TestClient,
) -> None:
    html = client.simulate_get("/docs/alerts-poller").text
    assert '<a href="/docs/matching">docs/matching.md</a>' in html
    assert "<code>alertstation poll --once</code>" in html
    table = client.simulate_get("/docs/matching").text
    assert "<table>" in table and "<th>name</th>" in table
    assert "# Alert geocode matching" not in table  # Markdown became HTML


def test_theory_pages_are_listed_first_and_link_to_each_other(
    client: falcon.testing.TestClient,
) -> None:
    index = client.simulate_get("/docs").text
    theory = index.index('id="theory-heading"')
    guides = index.index('id="guides-heading"')
    for name in THEORY:
        assert theory < index.index(f'href="/docs/{name}"') < guides
    same = client.simulate_get("/docs/theory-same").text
    assert '<a href="/docs/theory-matching">docs/theory-matching.md</a>' in same
    assert "two of its three bursts" in same


@pytest.mark.parametrize(
    "path", ["/docs/no-such-guide", "/docs/EAS-MANUAL", "/docs/eas-manual.md", "/docs/..%2Fsetup"]
)
def test_unknown_guides_are_404(client: falcon.testing.TestClient, path: str) -> None:
    result = client.simulate_get(path, headers={"Accept": "application/json"})
    assert result.status_code == 404
    assert result.json["error"]["code"] == "not_found"


def test_search_for_purge_finds_the_manual_eas_guide(client: falcon.testing.TestClient) -> None:
    page = client.simulate_get("/docs/search", params={"q": "purge"})
    assert page.status_code == 200
    assert 'href="/docs/eas-manual"' in page.text
    assert 'value="purge"' in page.text
    found = client.simulate_get(
        "/docs/search", params={"q": "Purge"}, headers={"Accept": "application/json"}
    )
    names = [hit["name"] for hit in found.json["results"]]
    assert "eas-manual" in names
    assert "accounts" not in names
    hit = found.json["results"][names.index("eas-manual")]
    assert hit["url"] == "/docs/eas-manual" and "purge" in hit["snippet"].lower()


def test_search_needs_every_word_and_escapes_the_query(client: falcon.testing.TestClient) -> None:
    both = client.simulate_get(
        "/docs/search", params={"q": "purge fail2ban"}, headers={"Accept": "application/json"}
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


def test_docs_need_no_sign_in_and_are_public_in_the_registry(
    client: falcon.testing.TestClient,
) -> None:
    for path in ("/docs", "/docs/eas-manual", "/docs/search?q=purge"):
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
