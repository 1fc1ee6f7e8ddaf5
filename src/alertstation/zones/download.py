"""Download the agency's zone shapefiles and install their DBF tables in the assets directory.

Each family is listed on a landing page of the agency's site; the page names the current ZIP
(``z_18mr25.zip``: day, two-letter month, two-digit year). The newest name by date wins, a
built-in URL is used when the page cannot be read, and every request stays on one origin: the
agency's https host, or the mirror an operator names with ``--source``. Only the ``.dbf`` member
is extracted; it is written atomically and only then are older files of the same family removed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import email.message
import io
import os
import re
import struct
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, TextIO
from urllib.parse import urljoin, urlsplit, urlunsplit

from alertstation import lazy
from alertstation.commands import CommandError
from alertstation.settings import assets_dir_from
from alertstation.version import __version__

if TYPE_CHECKING:
    from tqdm import tqdm

    from alertstation.http.outbound import OutboundClient

# urllib3 (behind the outbound client) and tqdm load when a download starts, not when the
# command line is built.
outbound = lazy.module("alertstation.http.outbound")
tqdm_module = lazy.module("tqdm")

DEFAULT_BASE = "https://www.weather.gov/gis"
USER_AGENT = f"AlertStation/{__version__} (zone shapefile downloader)"
TIMEOUT_SECONDS = 60.0
#: Longest one download may take in all (a 200 MB ZIP on a slow line).
TRANSFER_DEADLINE_SECONDS = 3600.0
MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_ZIP_BYTES = 200 * 1024 * 1024
MAX_DBF_BYTES = 500 * 1024 * 1024
CHUNK_BYTES = 64 * 1024
MONTHS = {
    **{"ja": 1, "fe": 2, "mr": 3, "ap": 4, "my": 5, "jn": 6},
    **{"jl": 7, "au": 8, "se": 9, "oc": 10, "no": 11, "de": 12},
}
DEFAULT_FAMILIES = ("public", "marine", "partial")
_STAMP = rf"(?P<day>\d{{2}})(?P<month>{'|'.join(MONTHS)})(?P<year>\d{{2}})"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SAFE_DBF_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\.dbf", re.IGNORECASE)


class DownloadError(Exception):
    """A family could not be fetched or installed; the message is one line for the operator."""


class RefusedUrl(DownloadError):
    """A URL points outside the one origin the downloader may contact."""


@dataclass(frozen=True)
class Family:
    """Describe one shapefile family: where it is listed, its file names and its fallback."""

    name: str
    title: str
    flag: str
    page: str
    zip_pattern: re.Pattern[str]
    fallback_url: str
    prefix: str

    def zip_date(self, file_name: str) -> dt.date | None:
        """Return the date stamped in a ZIP name of this family, or None for any other name."""
        return _stamp_date(self.zip_pattern.fullmatch(file_name))

    def dbf_date(self, file_name: str) -> dt.date | None:
        """Return the date stamped in a DBF name of this family, or None for any other name."""
        pattern = rf"{re.escape(self.prefix)}{_STAMP}\.dbf"
        return _stamp_date(re.fullmatch(pattern, file_name, re.IGNORECASE))


def _stamp_date(match: re.Match[str] | None) -> dt.date | None:
    if match is None:
        return None
    month = MONTHS[match["month"].lower()]
    try:
        return dt.date(2000 + int(match["year"]), month, int(match["day"]))
    except ValueError:
        return None


def _family(name: str, title: str, page: str, prefix: str, fallback: str) -> Family:
    pattern = re.compile(rf"{re.escape(prefix)}{_STAMP}\.zip", re.IGNORECASE)
    flag = "--zones" if name == "public" else f"--{name}"
    return Family(name, title, flag, page, pattern, fallback, prefix)


_WSOM = "https://www.weather.gov/source/gis/Shapefiles/WSOM"
FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        _family("public", "public forecast zones", "/PublicZones", "z_", f"{_WSOM}/z_18mr25.zip"),
        _family("marine", "marine zones", "/MarineZones", "mz", f"{_WSOM}/mz20fe25.zip"),
        _family("fire", "fire-weather zones", "/FireZones", "fz_", f"{_WSOM}/fz_18mr25.zip"),
        _family(
            "partial",
            "partial counties for weather radio",
            "/NWRPartialCounties",
            "cs",
            "https://www.weather.gov/source/gis/Shapefiles/County/cs16ap26.zip",
        ),
    )
}


def get_family(family: Family | str) -> Family:
    """Return the family named ``family`` (or the family itself)."""
    if isinstance(family, Family):
        return family
    try:
        return FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown zone family {family!r}; use {', '.join(FAMILIES)}") from None


@dataclass(frozen=True)
class AllowedOrigin:
    """Name the one scheme, host and port that requests may go to."""

    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> AllowedOrigin:
        """Return the origin of an http(s) base URL."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise DownloadError(f"{url!r} is not an http(s) URL")
        return cls(scheme, parts.hostname, parts.port or _DEFAULT_PORTS[scheme])

    def allows(self, url: str) -> bool:
        """Tell whether ``url`` is on this origin (no user info, same scheme, host and port)."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        try:
            port = parts.port or _DEFAULT_PORTS.get(scheme)
        except ValueError:
            return False
        return (
            (scheme, parts.hostname, port) == (self.scheme, self.host, self.port)
            and parts.username is None
            and parts.password is None
        )

    def check(self, url: str, what: str = "") -> str:
        """Return ``url`` when it is on this origin; raise RefusedUrl otherwise."""
        if not self.allows(url):
            raise RefusedUrl(f"refusing {what or url}: only {self} may be contacted")
        return url

    def __str__(self) -> str:
        port = "" if _DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}"


class ProgressBar:
    """Show bytes done out of the total while a file downloads (tqdm on a terminal).

    On a terminal a tqdm bar is redrawn as data arrives; elsewhere (logs, pipes) only the final
    state is written, so a log gets one line per download instead of hundreds.
    """

    def __init__(
        self, label: str, stream: TextIO, *, interactive: bool | None = None, width: int = 80
    ) -> None:
        self.label = label
        self.stream = stream
        self.interactive = _isatty(stream) if interactive is None else interactive
        self.width = width
        self.total: int | None = None
        self.done = 0
        self._bar: tqdm[Any] | None = None

    def start(self, total: int | None) -> None:
        """Begin a download of ``total`` bytes (None when the server did not say)."""
        self.total, self.done = total, 0
        if self.interactive:
            self._bar = tqdm_module.tqdm(
                total=total,
                desc=self.label,
                file=self.stream,
                ncols=self.width,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                mininterval=0.1,
                leave=True,
            )

    def update(self, done: int) -> None:
        """Record ``done`` bytes; the bar redraws itself on a terminal."""
        if self._bar is not None and done > self.done:
            self._bar.update(done - self.done)
        self.done = done

    def finish(self) -> None:
        """End the line with the final state."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        else:
            self.stream.write(self.render() + "\n")
            self.stream.flush()

    def percent(self) -> int:
        """Return the whole percentage done, 0 when the total is unknown."""
        if not self.total:
            return 0
        return min(100, self.done * 100 // self.total)

    def render(self) -> str:
        """Return the final state as text, e.g. ``z_18mr25.zip 100% 2.4 MB/2.4 MB``."""
        if not self.total:
            return f"{self.label} {format_bytes(self.done)}"
        sizes = f"{format_bytes(self.done)}/{format_bytes(self.total)}"
        return f"{self.label} {self.percent():3d}% {sizes}"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def format_bytes(count: float) -> str:
    """Format a byte count for people: ``512 B``, ``1.5 KB``, ``2.3 MB``."""
    if count < 1024:
        return f"{int(count)} B"
    for unit in ("KB", "MB", "GB"):
        count /= 1024
        if count < 1024 or unit == "GB":
            break
    return f"{count:.1f} {unit}"


class AgencyClient:
    """Fetch pages and files over HTTP(S) from one origin, refusing every other host.

    The origin is checked before each request and on every redirect hop.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE,
        *,
        timeout: float = TIMEOUT_SECONDS,
        client: OutboundClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.origin = AllowedOrigin.of(self.base_url)
        self.timeout = timeout
        self.client = client or outbound.OutboundClient(USER_AGENT)

    def _limits(self, limit: int) -> outbound.Limits:
        return outbound.Limits(
            connect_timeout=self.timeout,
            read_timeout=self.timeout,
            max_bytes=limit,
            deadline=TRANSFER_DEADLINE_SECONDS,
        )

    def _check_redirect(self, source: str, target: str) -> None:
        if not self.origin.allows(target):
            raise RefusedUrl(
                f"refusing the redirect from {source} to {target}: "
                f"only {self.origin} may be contacted"
            )

    @contextmanager
    def open(self, url: str, limit: int) -> Iterator[Any]:
        """Open ``url`` and yield the streaming response, closing it afterwards."""
        self.origin.check(url)
        try:
            with self.client.open(
                url, self._limits(limit), on_redirect=self._check_redirect
            ) as response:
                yield response
        except outbound.FetchError as ex:
            raise DownloadError(f"{url}: {ex.reason}") from None

    def fetch_text(self, url: str) -> str:
        """Return the page at ``url`` as text (at most MAX_PAGE_BYTES)."""
        sink = io.BytesIO()
        with self.open(url, MAX_PAGE_BYTES) as response:
            self._copy(response, sink, MAX_PAGE_BYTES, url)
            charset = _charset(response.headers.get("Content-Type"))
        try:
            return sink.getvalue().decode(charset, errors="replace")
        except LookupError:
            return sink.getvalue().decode("utf-8", errors="replace")

    def fetch_to(
        self, url: str, sink: IO[bytes], *, limit: int, progress: ProgressBar | None = None
    ) -> int:
        """Copy the body at ``url`` into ``sink``; return the byte count."""
        with self.open(url, limit) as response:
            return self._copy(response, sink, limit, url, progress)

    def _copy(
        self,
        response: Any,
        sink: IO[bytes],
        limit: int,
        url: str,
        progress: ProgressBar | None = None,
    ) -> int:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        if total is not None and total > limit:
            raise DownloadError(
                f"{url}: {format_bytes(total)} exceeds the {format_bytes(limit)} limit"
            )
        if progress is not None:
            progress.start(total)
        try:
            return outbound.copy_limited(
                response,
                sink,
                self._limits(limit),
                progress=None if progress is None else lambda done, _total: progress.update(done),
            )
        except outbound.FetchError as ex:
            if ex.reason.startswith("answer larger than"):
                raise DownloadError(
                    f"{url}: body exceeds the {format_bytes(limit)} limit"
                ) from None
            raise DownloadError(f"{url}: {ex.reason}") from None
        finally:
            if progress is not None:
                progress.finish()


def _charset(content_type: str | None) -> str:
    message = email.message.Message()
    message["Content-Type"] = content_type or "text/html"
    return message.get_content_charset() or "utf-8"


class _LinkCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links.extend(value.strip() for name, value in attrs if name == "href" and value)


def scrape_zip_url(html: str, family: Family | str, base_url: str) -> str | None:
    """Return the absolute URL of the newest dated ZIP of ``family`` linked from ``html``.

    ``base_url`` is the page's own URL, used to resolve relative links. Newest means the latest
    date stamped in the name, not the greatest name. Links to other hosts are returned like any
    other (the caller refuses them); on a tie a link on the page's own origin is preferred.
    """
    fam = get_family(family)
    collector = _LinkCollector()
    collector.feed(html)
    collector.close()
    page_origin = AllowedOrigin.of(base_url)
    best: tuple[tuple[dt.date, bool], str] | None = None
    for link in collector.links:
        url = urljoin(base_url, link)
        stamp = fam.zip_date(urlsplit(url).path.rsplit("/", 1)[-1])
        if stamp is None:
            continue
        key = (stamp, page_origin.allows(url))
        if best is None or key > best[0]:
            best = (key, url)
    return None if best is None else best[1]


@dataclass(frozen=True)
class ResolvedUrl:
    """Say which ZIP URL a family will be fetched from, and how it was found."""

    family: str
    url: str
    source: Literal["scraped", "fallback"]
    page_url: str
    reason: str = ""

    @property
    def scraped(self) -> bool:
        """Tell whether the URL came from the landing page (not the built-in fallback)."""
        return self.source == "scraped"


def rebase(url: str, base_url: str) -> str:
    """Return ``url`` with the scheme and host of ``base_url`` (so mirrors get the fallbacks)."""
    base, parts = urlsplit(base_url), urlsplit(url)
    return urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))


def resolve_urls(
    families: Iterable[Family | str],
    *,
    fetch_text: Callable[[str], str],
    base_url: str = DEFAULT_BASE,
) -> dict[str, ResolvedUrl]:
    """Scrape each family's landing page for its ZIP URL, falling back to the built-in one."""
    base = base_url.rstrip("/")
    resolved: dict[str, ResolvedUrl] = {}
    for fam in map(get_family, families):
        page_url = base + fam.page
        try:
            url = scrape_zip_url(fetch_text(page_url), fam, page_url)
            reason = "" if url else f"no {fam.prefix}DDmmYY.zip link on the page"
        except (DownloadError, OSError, ValueError) as ex:
            url, reason = None, str(ex).removeprefix(f"{page_url}: ")
        if url:
            resolved[fam.name] = ResolvedUrl(fam.name, url, "scraped", page_url)
        else:
            fallback = rebase(fam.fallback_url, base)
            resolved[fam.name] = ResolvedUrl(fam.name, fallback, "fallback", page_url, reason)
    return resolved


@dataclass(frozen=True)
class InstallResult:
    """Describe a DBF installed in the assets directory."""

    family: str
    path: Path
    size: int
    source: str
    removed: tuple[Path, ...] = ()

    def summary(self) -> str:
        """Return the one line printed for the operator."""
        line = f"{self.family}: installed {self.path.name} ({format_bytes(self.size)}) from "
        line += self.source
        if self.removed:
            line += f"; removed {', '.join(path.name for path in self.removed)}"
        return line


@contextmanager
def _scratch(directory: Path, suffix: str) -> Iterator[Path]:
    """Yield a fresh hidden file name in ``directory`` and remove whatever is left there."""
    fd, name = tempfile.mkstemp(prefix=".alertstation-", suffix=suffix, dir=directory)
    os.close(fd)
    path = Path(name)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _safe_member_name(name: str) -> bool:
    norm = name.replace("\\", "/")
    if not norm or "\x00" in norm or norm.startswith("/") or re.match(r"[A-Za-z]:", norm):
        return False
    return ".." not in norm.split("/")


def _base_name(name: str) -> str:
    return name.replace("\\", "/").rsplit("/", 1)[-1]


def _dbf_member(archive: zipfile.ZipFile, fam: Family, label: str) -> zipfile.ZipInfo:
    """Return the ZIP's one .dbf member after checking every member name and the size."""
    infos = archive.infolist()
    for info in infos:
        if not _safe_member_name(info.filename):
            raise DownloadError(f"{label}: unsafe member name {info.filename!r}; nothing installed")
    dbfs = [info for info in infos if info.filename.lower().endswith(".dbf")]
    if len(dbfs) != 1:
        names = ", ".join(info.filename for info in dbfs) or "none"
        raise DownloadError(f"{label}: expected exactly one .dbf member, found {names}")
    member = dbfs[0]
    base = _base_name(member.filename)
    if not base.lower().startswith(fam.prefix) or not _SAFE_DBF_NAME.fullmatch(base):
        raise DownloadError(
            f"{label}: member {member.filename!r} is not a {fam.name} DBF ({fam.prefix}*.dbf)"
        )
    if member.file_size > MAX_DBF_BYTES:
        raise DownloadError(
            f"{label}: {base} is {format_bytes(member.file_size)}, over the "
            f"{format_bytes(MAX_DBF_BYTES)} limit"
        )
    return member


def check_dbf_header(path: Path, label: str) -> None:
    """Raise DownloadError unless ``path`` starts like a dBASE table and holds all its records."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(32)
    if len(head) == 32:
        count, header_len, record_len = struct.unpack("<IHH", head[4:12])
        if header_len >= 33 and record_len >= 1 and size >= header_len + count * record_len:
            return
    raise DownloadError(f"{label}: not a complete dBASE table")


def _install_stream(source: IO[bytes], name: str, assets_dir: Path, label: str) -> Path:
    """Write ``source`` to ``assets_dir/name`` through a temporary file and a rename."""
    final = assets_dir / name
    with _scratch(assets_dir, ".dbf.part") as tmp:
        done = 0
        with tmp.open("wb") as sink:
            while chunk := source.read(CHUNK_BYTES):
                done += len(chunk)
                if done > MAX_DBF_BYTES:
                    raise DownloadError(
                        f"{label}: {name} exceeds the {format_bytes(MAX_DBF_BYTES)} limit"
                    )
                sink.write(chunk)
            sink.flush()
            os.fsync(sink.fileno())
        check_dbf_header(tmp, f"{label}: {name}")
        tmp.chmod(0o644)
        os.replace(tmp, final)
    _fsync_directory(assets_dir)
    return final


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def install_dbf_from_zip(
    zip_path: Path, family: Family | str, assets_dir: Path, label: str = ""
) -> Path:
    """Extract the family's one DBF from ``zip_path`` into ``assets_dir``; return its path."""
    fam, label = get_family(family), label or zip_path.name
    try:
        with zipfile.ZipFile(zip_path) as archive:
            member = _dbf_member(archive, fam, label)
            with archive.open(member) as source:
                return _install_stream(source, _base_name(member.filename), assets_dir, label)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as ex:
        raise DownloadError(f"{label}: not a valid ZIP archive ({ex})") from None
    except (RuntimeError, NotImplementedError) as ex:  # encrypted or unknown compression
        raise DownloadError(f"{label}: cannot extract ({ex})") from None


def remove_stale(assets_dir: Path, family: Family | str, keep: str) -> list[Path]:
    """Remove the family's other dated DBFs from ``assets_dir``; return what was removed.

    Only names of the form ``<prefix>DDmmYY.dbf`` match, so ``fz_18mr25.dbf`` is never taken
    for a public-zone (``z_``) file, and DBFs an operator named otherwise are left alone.
    """
    fam = get_family(family)
    removed: list[Path] = []
    for path in sorted(assets_dir.iterdir()):
        if path.name == keep or fam.dbf_date(path.name) is None or not path.is_file():
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as ex:
            raise DownloadError(
                f"installed {keep} but could not remove the stale {path.name}: {ex.strerror}"
            ) from None
        removed.append(path)
    return removed


def download_family(
    family: Family | str,
    url: str,
    assets_dir: Path,
    *,
    client: AgencyClient,
    progress: TextIO | None = None,
) -> InstallResult:
    """Fetch a family's ZIP from ``url``, install its DBF, then remove the stale ones.

    ``progress`` is the stream for the progress bar (None for none). Nothing in ``assets_dir``
    changes unless the new DBF was fully written and checked.
    """
    fam = get_family(family)
    client.origin.check(url)
    zip_name = urlsplit(url).path.rsplit("/", 1)[-1] or f"{fam.name}.zip"
    assets_dir.mkdir(parents=True, exist_ok=True)
    with _scratch(assets_dir, ".zip.part") as zip_path:
        bar = ProgressBar(zip_name, progress) if progress is not None else None
        with zip_path.open("wb") as sink:
            client.fetch_to(url, sink, limit=MAX_ZIP_BYTES, progress=bar)
        path = install_dbf_from_zip(zip_path, fam, assets_dir, label=zip_name)
    removed = remove_stale(assets_dir, fam, keep=path.name)
    return InstallResult(fam.name, path, path.stat().st_size, url, tuple(removed))


def find_in_directory(family: Family | str, directory: Path) -> Path | None:
    """Return the newest dated ZIP or DBF of the family in ``directory`` (a DBF wins a tie)."""
    fam = get_family(family)
    best: tuple[tuple[dt.date, bool], Path] | None = None
    for path in directory.iterdir():
        stamp = fam.zip_date(path.name) or fam.dbf_date(path.name)
        if stamp is None or not path.is_file():
            continue
        key = (stamp, path.suffix.lower() == ".dbf")
        if best is None or key > best[0]:
            best = (key, path)
    return None if best is None else best[1]


def install_from_directory(
    family: Family | str, directory: Path, assets_dir: Path
) -> InstallResult:
    """Install the family's newest DBF from a local mirror directory (no network)."""
    fam = get_family(family)
    source = find_in_directory(fam, directory)
    if source is None:
        raise DownloadError(f"no {fam.prefix}DDmmYY.zip or .dbf in {directory}")
    assets_dir.mkdir(parents=True, exist_ok=True)
    if source.suffix.lower() == ".zip":
        if source.stat().st_size > MAX_ZIP_BYTES:
            raise DownloadError(f"{source.name}: over the {format_bytes(MAX_ZIP_BYTES)} limit")
        path = install_dbf_from_zip(source, fam, assets_dir)
    else:
        with source.open("rb") as handle:
            path = _install_stream(handle, source.name, assets_dir, source.name)
    removed = remove_stale(assets_dir, fam, keep=path.name)
    return InstallResult(fam.name, path, path.stat().st_size, str(source), tuple(removed))


def _fail(err: TextIO, family: str, ex: BaseException) -> None:
    print(f"alertstation: error: {family}: {ex}", file=err)


def _run_directory(
    families: Iterable[str],
    directory: Path,
    assets_dir: Path,
    dry_run: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    failures = 0
    for name in families:
        try:
            if dry_run:
                found = find_in_directory(name, directory)
                if found is None:
                    raise DownloadError(f"no {get_family(name).prefix}DDmmYY.zip or .dbf")
                print(f"{name}: {found} (local mirror)", file=out)
            else:
                print(install_from_directory(name, directory, assets_dir).summary(), file=out)
        except (DownloadError, OSError) as ex:
            failures += 1
            _fail(err, name, ex)
    return 1 if failures else 0


def _run_http(
    families: Iterable[str],
    client: AgencyClient,
    assets_dir: Path,
    dry_run: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    failures = 0
    resolved = resolve_urls(families, fetch_text=client.fetch_text, base_url=client.base_url)
    for name, item in resolved.items():
        if not item.scraped:
            print(
                f"alertstation: {name}: no current ZIP name from {item.page_url} "
                f"({item.reason}); using the built-in {item.url}",
                file=err,
            )
        try:
            if dry_run:
                client.origin.check(item.url)
                print(f"{name}: {item.url} ({item.source})", file=out)
                continue
            out.flush()
            result = download_family(name, item.url, assets_dir, client=client, progress=err)
            print(result.summary(), file=out)
        except (DownloadError, OSError) as ex:
            failures += 1
            _fail(err, name, ex)
    return 1 if failures else 0


def run_download(
    families: Iterable[str],
    assets_dir: Path,
    *,
    source: str | None = None,
    dry_run: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Download (or, with ``dry_run``, only resolve) the families; return the exit status.

    ``source`` is None for the agency, an http(s) URL of a mirror laid out like the agency's
    site, or a directory holding the ZIPs or DBFs. Each family is tried even when another fails.
    """
    out, err = out or sys.stdout, err or sys.stderr
    names = [get_family(name).name for name in families]
    if source is None or "://" in source:
        if source is not None and urlsplit(source).scheme.lower() not in _DEFAULT_PORTS:
            raise CommandError(f"--source {source}: use a directory or an http(s) URL")
        try:
            client = AgencyClient(source or DEFAULT_BASE)
        except DownloadError as ex:
            raise CommandError(f"--source: {ex}") from None
        return _run_http(names, client, assets_dir, dry_run, out, err)
    directory = Path(source)
    if not directory.is_dir():
        raise CommandError(f"--source {source}: not a directory")
    return _run_directory(names, directory, assets_dir, dry_run, out, err)


def selected_families(args: argparse.Namespace) -> tuple[str, ...]:
    """Return the families chosen by flags, or the default set when none was given."""
    chosen = tuple(name for name in FAMILIES if getattr(args, f"family_{name}", False))
    return chosen or DEFAULT_FAMILIES


def cmd_zones_download(args: argparse.Namespace) -> int:
    """Download the zone DBFs into the assets directory (exit 1 when a family failed)."""
    assets = assets_dir_from(os.environ)  # the data directory is not needed, nor read
    return run_download(selected_families(args), assets, source=args.source, dry_run=args.dry_run)


def add_download_command(
    zones_sub: argparse._SubParsersAction,  # type: ignore[type-arg]
) -> argparse.ArgumentParser:
    """Register ``zones download`` on the ``zones`` sub-parsers."""
    description = (
        "Download the agency's zone shapefile ZIPs and install their DBFs in the assets "
        "directory. Without family flags: public, marine and partial counties."
    )
    parser: argparse.ArgumentParser = zones_sub.add_parser(
        "download", help="Download zone DBFs into the assets directory.", description=description
    )
    group = parser.add_argument_group("families")
    for fam in FAMILIES.values():
        group.add_argument(
            fam.flag,
            dest=f"family_{fam.name}",
            action="store_true",
            help=f"{fam.title} ({fam.prefix}DDmmYY.zip)",
        )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="read the landing pages and print the ZIP URLs; download nothing",
    )
    parser.add_argument(
        "--source",
        metavar="DIR_OR_URL",
        help="a local mirror: a directory of ZIPs or DBFs, or an http(s) URL laid out like the "
        "agency's site (default: the agency)",
    )
    parser.set_defaults(func=cmd_zones_download)
    return parser
