"""Facts about this build of the station: version, changelog excerpt, schema, compiled kernels."""

from __future__ import annotations

import hashlib
import importlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import alertstation
import alertstation._native

EXCERPT_LINES = 60
_SECTION = re.compile(r"^## ", re.MULTILINE)


@dataclass(frozen=True)
class KernelBuild:
    """One compiled kernel: whether it loaded, its file and when and what it was built."""

    name: str
    loaded: bool
    file: str | None
    built_at: datetime | None
    size_bytes: int | None
    sha256: str | None
    error: str | None = None


def changelog_path() -> Path | None:
    """Return CHANGELOG.md in the package (installed) or at the source root, None if absent."""
    package = Path(alertstation.__file__).resolve().parent
    for folder in (package, package.parents[1]):
        candidate = folder / "CHANGELOG.md"
        if candidate.is_file():
            return candidate
    return None


def changelog_excerpt(text: str, running: str, lines: int = EXCERPT_LINES) -> str:
    """Return the Unreleased section when it has entries, then the running version's section.

    Falls back to the newest release section when the running version has none; at most
    ``lines`` lines, cut on a line boundary.
    """
    sections = [part for part in _SECTION.split(text)[1:] if part.strip()]
    chosen = []
    for part in sections:
        heading, _, body = part.partition("\n")
        if heading.strip().lower() == "unreleased" and body.strip():
            chosen.append(part)
        elif heading.split(" ")[0] == running:
            chosen.append(part)
    if not any(part.split(" ")[0] == running for part in chosen):
        releases = [p for p in sections if p.partition("\n")[0].strip().lower() != "unreleased"]
        chosen.extend(releases[:1])
    excerpt = "\n".join(f"## {part.rstrip()}\n" for part in chosen).splitlines()
    return "\n".join(excerpt[:lines]).rstrip() + ("\n…" if len(excerpt) > lines else "")


def kernel_names(folder: Path | None = None) -> list[str]:
    """Return the kernels this package ships (one ``.pyi`` stub per kernel)."""
    folder = folder or Path(alertstation._native.__file__).parent
    return sorted(stub.stem for stub in folder.glob("*.pyi"))


def kernel_builds() -> list[KernelBuild]:
    """Describe every shipped kernel's compiled module."""
    builds = []
    for name in kernel_names():
        try:
            module = importlib.import_module(f"alertstation._native.{name}")
        except ImportError as ex:
            builds.append(KernelBuild(name, False, None, None, None, None, str(ex)[:200]))
            continue
        path = Path(module.__file__ or "")
        if not path.is_file() or path.suffix == ".py":
            builds.append(KernelBuild(name, False, path.name, None, None, None, "not compiled"))
            continue
        stat = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        built = datetime.fromtimestamp(stat.st_mtime, UTC).replace(microsecond=0)
        builds.append(KernelBuild(name, True, path.name, built, stat.st_size, digest))
    return builds
