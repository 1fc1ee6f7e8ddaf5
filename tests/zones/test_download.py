"""The zone shapefile downloader, run against a local stand-in for the agency's site."""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from alertstation.cli import CommandError, Parser, build_parser, main
from alertstation.version import __version__
from alertstation.zones import download
from alertstation.zones.download import (
    DEFAULT_BASE,
    FAMILIES,
    AgencyClient,
    DownloadError,
    ProgressBar,
    RefusedUrl,
    add_download_command,
    download_family,
    resolve_urls,
    run_download,
    scrape_zip_url,
)
from tests.support import SHARED_DATA

ZONES = SHARED_DATA / "zones"
WSOM = "/source/gis/Shapefiles/WSOM"
COUNTY = "/source/gis/Shapefiles/County"
SHARED = {"public": "z_18mr25", "marine": "mz20fe25", "partial": "cs16ap26"}
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@dataclass
class Reply:
    """What the fake site answers on one path."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    truncate_to: int | None = None


class FakeAgency:
    """Serve landing pages and ZIPs on 127.0.0.1 and remember every request."""

    def __init__(self) -> None:
        self.routes: dict[str, Reply] = {}
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.port = 0

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base(self) -> str:
        return f"{self.origin}/gis"

    def paths(self) -> list[str]:
        with self.lock:
            return [path for path, _ in self.requests]

    def page(self, path: str, *links: str) -> None:
        items = "\n".join(
            f'<li><a href="{link}">{link.rsplit("/", 1)[-1]}</a></li>' for link in links
        )
        html = f"<html><body><h1>Shapefiles</h1><ul>\n{items}\n</ul></body></html>"
        self.routes[path] = Reply(body=html.encode(), headers={"Content-Type": "text/html"})


def _handler(agency: FakeAgency) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            with agency.lock:
                agency.requests.append((self.path, self.headers.get("User-Agent", "")))
            reply = agency.routes.get(self.path, Reply(404, b"not here"))
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            cut = len(reply.body) if reply.truncate_to is None else reply.truncate_to
            self.wfile.write(reply.body[:cut])

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.fixture
def agency() -> Iterator[FakeAgency]:
    fake = FakeAgency()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def make_zip(path: Path, members: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path.read_bytes()


def shapefile_zip(folder: Path, stem: str) -> bytes:
    """Build a ZIP laid out like the agency's: .shp, .shx, .prj and the real shared .dbf."""
    members = {f"{stem}.{ext}": f"{ext} of {stem}".encode() for ext in ("shp", "shx", "prj")}
    members[f"{stem}.dbf"] = (ZONES / f"{stem}.dbf").read_bytes()
    return make_zip(folder / f"{stem}.zip", members)


@pytest.fixture
def site(agency: FakeAgency, tmp_path: Path) -> FakeAgency:
    """Landing pages listing several vintages, and the current ZIP of each family."""
    folder = tmp_path / "zips"
    folder.mkdir()
    agency.page(
        "/gis/PublicZones",
        f"{WSOM}/z_28de24.zip",
        f"{agency.origin}{WSOM}/z_18mr25.zip",
        f"{WSOM}/z_03ja25.zip",
        f"{WSOM}/fz_05ap25.zip",
    )
    agency.page(
        "/gis/MarineZones", f"{WSOM}/mz09de24.zip", "../source/gis/Shapefiles/WSOM/mz20fe25.zip"
    )
    agency.page("/gis/NWRPartialCounties", f"{COUNTY}/cs16ap26.zip", f"{COUNTY}/cs30no25.zip")
    agency.routes[f"{WSOM}/z_18mr25.zip"] = Reply(body=shapefile_zip(folder, "z_18mr25"))
    agency.routes[f"{WSOM}/mz20fe25.zip"] = Reply(body=shapefile_zip(folder, "mz20fe25"))
    agency.routes[f"{COUNTY}/cs16ap26.zip"] = Reply(body=shapefile_zip(folder, "cs16ap26"))
    return agency


@pytest.fixture
def assets(tmp_path: Path) -> Path:
    """An assets directory holding older vintages, a fire-weather file and an operator's file."""
    folder = tmp_path / "assets"
    folder.mkdir()
    for name in ("z_28de24.dbf", "mz01ja25.dbf", "fz_18mr25.dbf", "z_custom.dbf"):
        (folder / name).write_bytes(f"old {name}".encode())
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def run(families: tuple[str, ...], assets: Path, **kwargs: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_download(families, assets, out=out, err=err, **kwargs)  # type: ignore[arg-type]
    return code, out.getvalue(), err.getvalue()


# --- scraping and resolving -------------------------------------------------------------------


def test_scrape_picks_newest_by_date_not_by_name() -> None:
    page = """<a href="z_28de24.zip">Dec</a> <A HREF='z_18mr25.zip'>Mar</A>
    <a href=z_03ja25.zip>Jan</a> <a href="fz_05ap25.zip">fire, newer</a>
    <a href="z_31fe25.zip">no such day</a> <a href="mz30ap25.zip">marine</a>"""
    base = "https://www.weather.gov/gis/PublicZones"
    assert scrape_zip_url(page, "public", base) == "https://www.weather.gov/gis/z_18mr25.zip"
    assert scrape_zip_url(page, "fire", base) == "https://www.weather.gov/gis/fz_05ap25.zip"
    assert scrape_zip_url(page, "marine", base) == "https://www.weather.gov/gis/mz30ap25.zip"
    assert scrape_zip_url(page, "partial", base) is None


def test_scrape_ignores_names_in_text_and_prefers_own_host_on_a_tie() -> None:
    base = "https://www.weather.gov/gis/PublicZones"
    assert scrape_zip_url("<p>download z_18mr25.zip soon</p>", "public", base) is None
    page = '<a href="https://mirror.example/z_18mr25.zip">x</a><a href="/s/z_18mr25.zip">y</a>'
    assert scrape_zip_url(page, "public", base) == "https://www.weather.gov/s/z_18mr25.zip"


def test_resolve_scrapes_or_falls_back_to_the_built_in_url() -> None:
    pages = {f"{DEFAULT_BASE}/MarineZones": '<a href="/source/x/mz11jn25.zip">new</a>'}

    def fetch_text(url: str) -> str:
        if url not in pages:
            raise DownloadError(f"{url}: HTTP 503 Service Unavailable")
        return pages[url]

    resolved = resolve_urls(["public", "marine", "partial"], fetch_text=fetch_text)
    assert resolved["marine"].scraped
    assert resolved["marine"].url == "https://www.weather.gov/source/x/mz11jn25.zip"
    assert resolved["public"].source == "fallback"
    assert resolved["public"].url == FAMILIES["public"].fallback_url
    assert (
        resolved["public"].url == "https://www.weather.gov/source/gis/Shapefiles/WSOM/z_18mr25.zip"
    )
    assert "HTTP 503" in resolved["public"].reason
    assert resolved["partial"].url.endswith("/Shapefiles/County/cs16ap26.zip")


def test_agency_client_allows_only_the_agency_https_host() -> None:
    origin = AgencyClient().origin
    assert str(origin) == "https://www.weather.gov"
    assert origin.allows("https://www.weather.gov/source/gis/Shapefiles/WSOM/z_18mr25.zip")
    assert origin.allows("https://WWW.weather.gov:443/x.zip")
    for url in (
        "http://www.weather.gov/x.zip",
        "https://weather.gov/x.zip",
        "https://www.weather.gov.example.com/x.zip",
        "https://www.weather.gov:8443/x.zip",
        "https://user@www.weather.gov/x.zip",
        "ftp://www.weather.gov/x.zip",
        "https://127.0.0.1/x.zip",
    ):
        assert not origin.allows(url), url
        with pytest.raises(RefusedUrl):
            origin.check(url)


# --- downloading ------------------------------------------------------------------------------


def test_default_families_download_and_replace_stale_files(site: FakeAgency, assets: Path) -> None:
    code, out, err = run(download.DEFAULT_FAMILIES, assets, source=site.base)

    assert code == 0, err
    for stem in SHARED.values():
        assert (assets / f"{stem}.dbf").read_bytes() == (ZONES / f"{stem}.dbf").read_bytes()
    names = sorted(path.name for path in assets.iterdir())
    assert names == [
        "cs16ap26.dbf",
        "fz_18mr25.dbf",
        "mz20fe25.dbf",
        "z_18mr25.dbf",
        "z_custom.dbf",
    ]
    assert (assets / "fz_18mr25.dbf").read_bytes() == b"old fz_18mr25.dbf"
    assert "public: installed z_18mr25.dbf" in out and "removed z_28de24.dbf" in out
    assert "marine: installed mz20fe25.dbf" in out and "removed mz01ja25.dbf" in out
    assert "z_18mr25.zip 100%" in err
    assert "/gis/FireZones" not in site.paths()
    assert all(f"AlertStation/{__version__}" in agent for _, agent in site.requests)


def test_fire_family_only_with_its_flag_leaves_public_file(site: FakeAgency, assets: Path) -> None:
    folder = assets.parent / "fire"
    folder.mkdir()
    site.page("/gis/FireZones", f"{WSOM}/fz_18mr25.zip", f"{WSOM}/z_19mr25.zip")
    members = {"fz_18mr25.dbf": (ZONES / "z_18mr25.dbf").read_bytes()}
    site.routes[f"{WSOM}/fz_18mr25.zip"] = Reply(body=make_zip(folder / "fz.zip", members))

    code, out, err = run(("fire",), assets, source=site.base)

    assert code == 0, err
    assert (assets / "z_28de24.dbf").exists() and (assets / "z_custom.dbf").exists()
    assert (assets / "fz_18mr25.dbf").read_bytes() == (ZONES / "z_18mr25.dbf").read_bytes()
    assert site.paths() == ["/gis/FireZones", f"{WSOM}/fz_18mr25.zip"]


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (None, "(HTTP 404 Not Found)"),
        (Reply(body=b"<html>maintenance</html>"), "(no z_DDmmYY.zip link on the page)"),
    ],
    ids=["missing-page", "no-link"],
)
def test_scraping_failure_uses_the_fallback(
    site: FakeAgency, assets: Path, page: Reply | None, reason: str
) -> None:
    del site.routes["/gis/PublicZones"]
    if page is not None:
        site.routes["/gis/PublicZones"] = page

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 0, err
    assert err.splitlines()[0] == (
        f"alertstation: public: no current ZIP name from {site.base}/PublicZones {reason}; "
        f"using the built-in {site.origin}{WSOM}/z_18mr25.zip"
    )
    assert (assets / "z_18mr25.dbf").read_bytes() == (ZONES / "z_18mr25.dbf").read_bytes()
    assert not (assets / "z_28de24.dbf").exists()


def test_landing_page_link_to_another_host_is_refused(site: FakeAgency, assets: Path) -> None:
    other = f"http://localhost:{site.port}"
    site.page("/gis/PublicZones", f"{WSOM}/z_18mr25.zip", f"{other}{WSOM}/z_01ap25.zip")
    site.routes[f"{WSOM}/z_01ap25.zip"] = site.routes[f"{WSOM}/z_18mr25.zip"]
    before = snapshot(assets)

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 1
    assert f"error: public: refusing {other}{WSOM}/z_01ap25.zip" in err
    assert site.paths() == ["/gis/PublicZones"]
    assert snapshot(assets) == before


def test_redirect_to_another_host_is_refused_before_following(
    site: FakeAgency, assets: Path
) -> None:
    target = f"http://localhost:{site.port}/elsewhere/z_18mr25.zip"
    site.routes[f"{WSOM}/z_18mr25.zip"] = Reply(302, headers={"Location": target})
    before = snapshot(assets)

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 1
    assert f"refusing the redirect from {site.origin}{WSOM}/z_18mr25.zip to {target}" in err
    assert "/elsewhere/z_18mr25.zip" not in site.paths()
    assert snapshot(assets) == before


def test_a_permanent_redirect_to_another_host_is_refused_before_it_is_followed(
    site: FakeAgency, assets: Path
) -> None:
    site.routes["/elsewhere/z_18mr25.zip"] = site.routes[f"{WSOM}/z_18mr25.zip"]
    target = f"http://localhost:{site.port}/elsewhere/z_18mr25.zip"
    site.routes[f"{WSOM}/z_18mr25.zip"] = Reply(301, headers={"Location": target})
    before = snapshot(assets)

    with pytest.raises(RefusedUrl, match="refusing the redirect .* to http://localhost"):
        download_family(
            "public", f"{site.origin}{WSOM}/z_18mr25.zip", assets, client=AgencyClient(site.base)
        )
    assert "/elsewhere/z_18mr25.zip" not in site.paths()
    assert snapshot(assets) == before


def test_redirect_on_the_same_host_is_followed(site: FakeAgency, assets: Path) -> None:
    site.routes["/moved/z_18mr25.zip"] = site.routes[f"{WSOM}/z_18mr25.zip"]
    site.routes[f"{WSOM}/z_18mr25.zip"] = Reply(302, headers={"Location": "/moved/z_18mr25.zip"})

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 0, err
    assert (assets / "z_18mr25.dbf").read_bytes() == (ZONES / "z_18mr25.dbf").read_bytes()


DBF = (ZONES / "z_18mr25.dbf").read_bytes()
BAD_ZIPS = {
    "traversal": ({"../z_18mr25.dbf": DBF}, "unsafe member name '../z_18mr25.dbf'"),
    "absolute": ({"/tmp/z_18mr25.dbf": DBF}, "unsafe member name '/tmp/z_18mr25.dbf'"),
    "traversal-elsewhere": (
        {"z_18mr25.dbf": DBF, "x/../../evil.shp": b"x"},
        "unsafe member name 'x/../../evil.shp'",
    ),
    "two-dbfs": (
        {"z_18mr25.dbf": DBF, "z_17mr25.dbf": DBF},
        "expected exactly one .dbf member, found z_18mr25.dbf, z_17mr25.dbf",
    ),
    "no-dbf": ({"z_18mr25.shp": b"shape"}, "expected exactly one .dbf member, found none"),
    "other-family": (
        {"fz_18mr25.dbf": DBF},
        "member 'fz_18mr25.dbf' is not a public DBF (z_*.dbf)",
    ),
    "cut-dbf": ({"z_18mr25.dbf": DBF[:5000]}, "z_18mr25.dbf: not a complete dBASE table"),
}


@pytest.mark.parametrize("case", BAD_ZIPS)
def test_bad_zip_is_rejected_and_assets_untouched(
    site: FakeAgency, assets: Path, tmp_path: Path, case: str
) -> None:
    members, message = BAD_ZIPS[case]
    body = make_zip(tmp_path / "bad.zip", members)
    site.routes[f"{WSOM}/z_18mr25.zip"] = Reply(body=body)
    before = snapshot(assets)

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 1
    assert f"alertstation: error: public: z_18mr25.zip: {message}" in err.splitlines()[-1]
    assert snapshot(assets) == before


def test_nested_dbf_is_extracted_by_its_base_name(
    site: FakeAgency, assets: Path, tmp_path: Path
) -> None:
    body = make_zip(tmp_path / "nested.zip", {"z_18mr25/z_18mr25.dbf": DBF})
    site.routes[f"{WSOM}/z_18mr25.zip"] = Reply(body=body)

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 0, err
    assert (assets / "z_18mr25.dbf").read_bytes() == DBF
    assert not (assets / "z_18mr25").exists()


def test_not_a_zip_is_rejected(site: FakeAgency, assets: Path) -> None:
    site.routes[f"{WSOM}/z_18mr25.zip"] = Reply(body=b"<html>Service Unavailable</html>")
    before = snapshot(assets)

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 1
    assert "z_18mr25.zip: not a valid ZIP archive" in err
    assert snapshot(assets) == before


def test_truncated_download_leaves_no_partial_file(site: FakeAgency, assets: Path) -> None:
    reply = site.routes[f"{WSOM}/z_18mr25.zip"]
    reply.truncate_to = len(reply.body) // 2
    before = snapshot(assets)

    code, out, err = run(("public", "marine"), assets, source=site.base)

    assert code == 1
    assert f"received {len(reply.body) // 2} of {len(reply.body)} bytes" in err
    assert "marine: installed mz20fe25.dbf" in out
    after = snapshot(assets)
    assert after.pop("mz20fe25.dbf") == (ZONES / "mz20fe25.dbf").read_bytes()
    assert after == {name: data for name, data in before.items() if name != "mz01ja25.dbf"}


def test_zip_over_the_size_limit_is_refused(
    site: FakeAgency, assets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "MAX_ZIP_BYTES", 1000)
    before = snapshot(assets)

    code, out, err = run(("public",), assets, source=site.base)

    assert code == 1
    assert "exceeds the 1000 B limit" in err
    assert snapshot(assets) == before


def test_dry_run_prints_urls_and_downloads_nothing(site: FakeAgency, assets: Path) -> None:
    before = snapshot(assets)

    code, out, err = run(download.DEFAULT_FAMILIES, assets, source=site.base, dry_run=True)

    assert code == 0, err
    assert out.splitlines() == [
        f"public: {site.origin}{WSOM}/z_18mr25.zip (scraped)",
        f"marine: {site.origin}{WSOM}/mz20fe25.zip (scraped)",
        f"partial: {site.origin}{COUNTY}/cs16ap26.zip (scraped)",
    ]
    assert sorted(site.paths()) == [
        "/gis/MarineZones",
        "/gis/NWRPartialCounties",
        "/gis/PublicZones",
    ]
    assert snapshot(assets) == before


def test_dry_run_reports_a_refused_link(site: FakeAgency, assets: Path) -> None:
    site.page("/gis/PublicZones", "https://elsewhere.example/z_18mr25.zip")

    code, out, err = run(("public",), assets, source=site.base, dry_run=True)

    assert code == 1
    assert "refusing https://elsewhere.example/z_18mr25.zip" in err
    assert out == ""


# --- local mirror directory -------------------------------------------------------------------


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    folder = tmp_path / "mirror"
    folder.mkdir()
    shapefile_zip(folder, "z_18mr25")
    make_zip(folder / "z_28de24.zip", {"z_28de24.dbf": b"older and broken"})
    (folder / "mz20fe25.dbf").write_bytes((ZONES / "mz20fe25.dbf").read_bytes())
    shapefile_zip(folder, "cs16ap26")
    return folder


def test_directory_mirror_installs_offline(
    mirror: Path, assets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a directory mirror must not open connections")

    monkeypatch.setattr(download, "AgencyClient", no_network)

    code, out, err = run(download.DEFAULT_FAMILIES, assets, source=str(mirror))

    assert code == 0, err
    for stem in SHARED.values():
        assert (assets / f"{stem}.dbf").read_bytes() == (ZONES / f"{stem}.dbf").read_bytes()
    assert not (assets / "z_28de24.dbf").exists()
    assert (assets / "fz_18mr25.dbf").exists()
    assert f"from {mirror / 'z_18mr25.zip'}" in out


def test_directory_mirror_missing_family_fails_only_that_family(mirror: Path, assets: Path) -> None:
    (mirror / "cs16ap26.zip").unlink()

    code, out, err = run(download.DEFAULT_FAMILIES, assets, source=str(mirror))

    assert code == 1
    assert err.strip().splitlines() == [
        f"alertstation: error: partial: no csDDmmYY.zip or .dbf in {mirror}"
    ]
    assert (assets / "z_18mr25.dbf").exists() and (assets / "mz20fe25.dbf").exists()


def test_directory_mirror_dry_run(mirror: Path, assets: Path) -> None:
    before = snapshot(assets)

    code, out, err = run(("public", "marine"), assets, source=str(mirror), dry_run=True)

    assert code == 0, err
    assert out.splitlines() == [
        f"public: {mirror / 'z_18mr25.zip'} (local mirror)",
        f"marine: {mirror / 'mz20fe25.dbf'} (local mirror)",
    ]
    assert snapshot(assets) == before


@pytest.mark.parametrize("source", ["/no/such/mirror", "file:///srv/mirror", "ftp://host/gis"])
def test_unusable_source_is_a_command_error(source: str, assets: Path) -> None:
    with pytest.raises(CommandError, match="--source"):
        run(("public",), assets, source=source)


# --- progress bar -----------------------------------------------------------------------------


def test_progress_bar_redraws_on_a_terminal() -> None:
    stream = io.StringIO()
    bar = ProgressBar("z_18mr25.zip", stream, interactive=True)
    bar.start(2 * 1024 * 1024)
    bar.update(1024 * 1024)
    bar.update(2 * 1024 * 1024)
    bar.finish()

    shown = stream.getvalue()
    frames = [frame for frame in shown.split("\r") if frame.strip()]
    assert frames[0].startswith("z_18mr25.zip:   0%")
    assert frames[-1].startswith("z_18mr25.zip: 100%") and "2.00M/2.00M" in frames[-1]
    assert shown.endswith("\n") and shown.count("\n") == 1


def test_progress_bar_writes_one_line_when_not_a_terminal() -> None:
    stream = io.StringIO()
    bar = ProgressBar("mz20fe25.zip", stream)
    bar.start(None)
    bar.update(1536)
    bar.finish()
    assert stream.getvalue() == "mz20fe25.zip 1.5 KB\n"
    sized = io.StringIO()
    bar = ProgressBar("z_18mr25.zip", sized)
    bar.start(2 * 1024 * 1024)
    bar.update(2 * 1024 * 1024)
    bar.finish()
    assert sized.getvalue() == "z_18mr25.zip 100% 2.0 MB/2.0 MB\n"


# --- command line -----------------------------------------------------------------------------


def tiny_parser() -> Parser:
    parser = Parser(prog="alertstation")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    zones = sub.add_parser("zones")
    zones_sub = zones.add_subparsers(dest="zones_command", parser_class=Parser)
    add_download_command(zones_sub)
    return parser


@pytest.fixture
def station_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, assets: Path) -> Path:
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir(exist_ok=True)  # an existing station's
    monkeypatch.setenv("ALERTSTATION_ASSETS_DIR", str(assets))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    return assets


def test_download_command_flags_choose_families(
    site: FakeAgency, station_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = tiny_parser().parse_args(
        ["zones", "download", "--marine", "--partial", "--source", site.base]
    )
    assert download.selected_families(args) == ("marine", "partial")

    assert args.func(args) == 0

    assert (station_env / "mz20fe25.dbf").exists() and (station_env / "cs16ap26.dbf").exists()
    assert (station_env / "z_28de24.dbf").exists()
    assert "/gis/PublicZones" not in site.paths()
    assert "marine: installed mz20fe25.dbf" in capsys.readouterr().out


def test_download_command_defaults(station_env: Path) -> None:
    args = tiny_parser().parse_args(["zones", "download"])
    assert download.selected_families(args) == ("public", "marine", "partial")
    assert args.source is None and not args.dry_run
    flags = tiny_parser().parse_args(["zones", "download", "--zones", "--fire", "--dry-run"])
    assert download.selected_families(flags) == ("public", "fire") and flags.dry_run


def test_download_command_rejects_unknown_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        tiny_parser().parse_args(["zones", "download", "--base-url", "http://x"])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def _zones_download_wired() -> bool:
    try:
        build_parser().parse_args(["zones", "download", "--dry-run"])
    except SystemExit:
        return False
    return True


@pytest.fixture
def wired() -> None:
    if not _zones_download_wired():
        pytest.skip("`zones download` is not registered by alertstation.zones.cli yet")


@pytest.mark.usefixtures("wired")
def test_main_runs_zones_download(
    site: FakeAgency, station_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["zones", "download", "--zones", "--source", site.base]) == 0
    assert (station_env / "z_18mr25.dbf").read_bytes() == DBF
    assert "public: installed z_18mr25.dbf" in capsys.readouterr().out


@pytest.mark.usefixtures("wired")
def test_main_reports_failures_on_one_line_each(
    site: FakeAgency, station_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.routes[f"{WSOM}/mz20fe25.zip"] = Reply(404, b"gone")
    del site.routes["/gis/NWRPartialCounties"]
    site.routes[f"{COUNTY}/cs16ap26.zip"] = Reply(500, b"boom")

    assert main(["zones", "download", "--source", site.base]) == 1

    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert errors == [
        f"alertstation: error: marine: {site.origin}{WSOM}/mz20fe25.zip: HTTP 404 Not Found",
        f"alertstation: error: partial: {site.origin}{COUNTY}/cs16ap26.zip: "
        "HTTP 500 Internal Server Error",
    ]
    assert main(["zones", "download", "--source", str(station_env / "missing")]) == 1
    assert capsys.readouterr().err.strip().endswith("not a directory")
